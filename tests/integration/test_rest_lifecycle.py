"""The REST request lifecycle (issue 35): writes run on a handler pool of their own, their
connections suspended meanwhile (server/tb_http_handlers.h), so that no slow write keeps
/health, /metrics or a read waiting; a write that cannot finish within
rest.request.timeout.ms answers 503 with Retry-After; and no lock a read needs (the herder's,
the Kafka store's) is held while the store waits on the broker.

A write is made slow by freezing (SIGSTOP) the cluster's leader, a worker of this test: a
follower forwards writes there and waits for an answer that does not come; or by the test
seam TB_STORE_WRITE_STALL (core/tb_seam.h), which holds the Kafka store's writes while a file
exists, as a broker slow to acknowledge. Nothing of the shared bed is stopped."""

from __future__ import annotations

import os
import signal
import socket
import threading

import pytest
import requests

from test_distributed import cluster_settings, leader_of
from worker import wait_for

pytestmark = pytest.mark.integration

REQUEST_TIMEOUT_MS = 3000
WRITES = 3  # more than rest.threads: before the pool, they took every listener thread
# generous bounds, not timings: a read answers at once, a write by its deadline
READ_BOUND_S = 5
WRITE_BOUND_S = REQUEST_TIMEOUT_MS / 1000 + 20


def test_reads_answer_while_writes_wait_on_a_frozen_leader_and_answer_503(start_worker, bed,
                                                                          tmp_path):
    group = bed.unique_topic("lifecycle")
    settings = {**cluster_settings(bed, group),
                "rest.request.timeout.ms": str(REQUEST_TIMEOUT_MS)}
    workers = [start_worker(settings) for _ in range(2)]
    leader = wait_for(lambda: leader_of(workers), timeout=60, what="a leader")
    follower = next(w for w in workers if w is not leader)
    wait_for(lambda: follower.get("/connectors").ok, timeout=30,
             what="the follower answering")

    replies = [None] * WRITES

    def write(i):
        config = {"connector.class": "FileStreamSource", "topic": bed.unique_topic("t"),
                  "file": str(tmp_path / f"in{i}.txt")}
        try:
            replies[i] = requests.post(follower.url + "/connectors", timeout=WRITE_BOUND_S,
                                       json={"name": f"slow-{i}", "config": config})
        except requests.RequestException as e:
            replies[i] = e

    os.kill(leader.proc.pid, signal.SIGSTOP)
    try:
        writers = [threading.Thread(target=write, args=(i,)) for i in range(WRITES)]
        for t in writers:
            t.start()
        # while the writes wait on the frozen leader, the follower answers the rest
        rounds = 0
        while any(t.is_alive() for t in writers) and rounds < 100:
            rounds += 1
            for path in ("/health", "/health/live", "/connectors", "/metrics"):
                reply = requests.get(follower.url + path, timeout=READ_BOUND_S)
                assert reply.status_code in (200, 503), (path, reply.status_code, reply.text)
        for t in writers:
            t.join(timeout=WRITE_BOUND_S + 5)
        for i, reply in enumerate(replies):
            assert isinstance(reply, requests.Response), f"write {i}: {reply!r}"
            assert reply.status_code == 503, (i, reply.status_code, reply.text)
            assert reply.headers.get("Retry-After", "").isdigit(), reply.headers
            assert "rest.request.timeout.ms" in reply.json()["message"], reply.text
    finally:
        os.kill(leader.proc.pid, signal.SIGCONT)

    # thawed, the cluster takes writes again
    config = {"connector.class": "FileStreamSource", "topic": bed.unique_topic("t"),
              "file": str(tmp_path / "after.txt")}

    def created():
        reply = requests.post(follower.url + "/connectors", timeout=WRITE_BOUND_S,
                              json={"name": "after", "config": config})
        return reply if reply.status_code in (201, 409) else None
    wait_for(created, timeout=90, interval=1, what="a write accepted after the thaw")
    wait_for(lambda: "after" in follower.get("/connectors").json(), timeout=60,
             what="the write in the follower's view")


def test_a_forward_that_gives_up_answers_503_with_retry_after(start_worker, bed, tmp_path):
    """The leader's advertised REST address refuses connections: a follower's forward tries
    until a little before its rest.request.timeout.ms and then answers 503 with Retry-After
    and why, its own answer rather than the handler pool's at the deadline."""
    group = bed.unique_topic("lifecycle-forward")
    settings = {**cluster_settings(bed, group),
                "rest.request.timeout.ms": str(REQUEST_TIMEOUT_MS)}
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        leader = start_worker({**settings, "rest.advertised.host.name": "127.0.0.1",
                               "rest.advertised.port": str(refusing.getsockname()[1]),
                               "rest.advertised.listener": "http"})
        wait_for(lambda: leader_of([leader]), timeout=60, what="the first worker leading")
        follower = start_worker(settings)
        wait_for(lambda: leader_of([leader, follower]) is leader, timeout=60,
                 what="the follower joined under the first worker")
        config = {"connector.class": "FileStreamSource", "topic": bed.unique_topic("t"),
                  "file": str(tmp_path / "in.txt")}
        reply = requests.post(follower.url + "/connectors", timeout=WRITE_BOUND_S,
                              json={"name": "unforwarded", "config": config})
    assert reply.status_code == 503, (reply.status_code, reply.text)
    assert "could not be reached" in reply.json()["message"], reply.text
    assert reply.headers.get("Retry-After", "").isdigit(), reply.headers


def test_reads_answer_while_a_config_write_waits_on_the_broker(start_worker, bed, tmp_path):
    stall = tmp_path / "store-stall"
    settings = {**cluster_settings(bed, bed.unique_topic("stall")),
                "rest.request.timeout.ms": str(REQUEST_TIMEOUT_MS)}
    worker = start_worker(settings, env={"TB_STORE_WRITE_STALL": str(stall)})
    wait_for(lambda: leader_of([worker]), timeout=60, what="the worker leading its cluster")

    def config(name):
        return {"connector.class": "FileStreamSource", "topic": bed.unique_topic("t"),
                "file": str(tmp_path / f"{name}.txt")}

    def created():
        reply = requests.put(worker.url + "/connectors/steady/config", timeout=WRITE_BOUND_S,
                             json=config("steady"))
        return reply if reply.status_code in (200, 201) else None
    wait_for(created, timeout=60, interval=1, what="the connector steady created")
    wait_for(lambda: worker.get("/connectors/steady/status").json()["connector"]["state"]
             == "RUNNING", timeout=60, what="steady RUNNING")

    reply = {}

    def write():
        try:
            reply["r"] = requests.put(worker.url + "/connectors/stalled/config",
                                      timeout=WRITE_BOUND_S, json=config("stalled"))
        except requests.RequestException as e:
            reply["r"] = e

    stall.write_text("")  # from here the store's writes wait
    writer = threading.Thread(target=write)
    try:
        writer.start()
        wait_for(lambda: "put connector stalled\n" in stall.read_text(), timeout=30,
                 what="the config write waiting on the broker")
        # the write holds its claim on "stalled", and neither the herder's lock nor
        # the store's: every read answers, a status read from the store included
        for path in ("/connectors", "/connectors?expand=status", "/connectors/steady/config",
                     "/connectors/steady/status", "/connectors/steady/tasks/0/status",
                     "/health"):
            got = requests.get(worker.url + path, timeout=READ_BOUND_S)
            assert got.status_code == 200, (path, got.status_code, got.text)
        writer.join(timeout=WRITE_BOUND_S + 5)
        answer = reply.get("r")
        assert isinstance(answer, requests.Response), f"the stalled write: {answer!r}"
        assert answer.status_code == 503, (answer.status_code, answer.text)
        assert answer.headers.get("Retry-After", "").isdigit(), answer.headers
    finally:
        stall.unlink()
        writer.join(timeout=WRITE_BOUND_S + 5)
    # once the broker acknowledges, the write answered 503 takes effect
    wait_for(lambda: "stalled" in worker.get("/connectors").json(), timeout=60,
             what="the stalled write landing")
