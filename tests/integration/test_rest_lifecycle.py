"""The REST request lifecycle (issue 35): writes run on a handler pool of their own, their
connections suspended meanwhile (server/tb_http_handlers.h), so that no slow write keeps
/health, /metrics or a read waiting; a write that cannot finish within
rest.request.timeout.ms answers 503 with Retry-After.

A write is made slow by freezing (SIGSTOP) the cluster's leader, a worker of this test: a
follower forwards writes there and waits for an answer that does not come. Nothing of the
shared bed is stopped."""

from __future__ import annotations

import os
import signal
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
