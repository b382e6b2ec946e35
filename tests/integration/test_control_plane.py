"""The control plane that never waits (issue 35), what the request lifecycle
(test_rest_lifecycle.py) left: a write's waits on others (a claim of its connector, a forward
to the leader) end at its deadline, rest.request.timeout.ms, so that its handler thread is
free for the next write; a connector's tasks stop in parallel, each within
task.shutdown.graceful.timeout.ms, so that a DELETE takes one such bound, not one per task.

A stop is made slow without touching the shared bed: a datagen source whose producer is
pointed (producer.override.bootstrap.servers) at a loopback port where nothing listens keeps
its records queued, and its stop waits the whole graceful timeout for them. A forward is
made slow by freezing (SIGSTOP) the cluster's leader, a worker of this test."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest
import requests

from kafka_io import read_topic
from test_distributed import cluster_settings, leader_of
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

REQUEST_TIMEOUT_MS = 3000
READ_S = 1  # a read answers within this, whatever the writes wait on
# a write answers by its deadline; the margin is for a loaded machine, not a timing
WRITE_BOUND_S = REQUEST_TIMEOUT_MS / 1000 + 10
WRITES = 6  # more than the handler pool's threads (TB_HTTP_HANDLER_THREADS)


def validate(w):
    """A write the worker answers itself (never forwarded): it needs a free handler."""
    return requests.put(w.url + "/connector-plugins/datagen/config/validate",
                        timeout=WRITE_BOUND_S,
                        json={"connector.class": "datagen", "topic": "validated"})


def concurrently(calls):
    """Runs every call on a thread of its own; returns their results (or exceptions)."""
    results = [None] * len(calls)

    def run(i):
        try:
            results[i] = calls[i]()
        except requests.RequestException as e:
            results[i] = e
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    return threads, results


def assert_503_with_retry_after(reply, *, mentions):
    assert isinstance(reply, requests.Response), repr(reply)
    assert reply.status_code == 503, (reply.status_code, reply.text)
    assert reply.headers.get("Retry-After", "").isdigit(), reply.headers
    assert mentions in reply.json()["message"], reply.text


def test_writes_to_followers_of_a_frozen_leader_give_their_threads_back(start_worker, bed,
                                                                         tmp_path):
    group = bed.unique_topic("ctl-frozen-leader")
    settings = {**cluster_settings(bed, group),
                "rest.request.timeout.ms": str(REQUEST_TIMEOUT_MS)}
    workers = [start_worker(settings) for _ in range(3)]
    leader = wait_for(lambda: leader_of(workers), timeout=60, what="a leader")
    followers = [w for w in workers if w is not leader]
    for w in followers:
        wait_for(lambda: w.get("/connectors").ok, timeout=30, what="a follower answering")
    topic = bed.unique_topic("ctl-t")

    def create(w, name):
        config = {"connector.class": "FileStreamSource", "topic": topic,
                  "file": str(tmp_path / f"{name}.txt")}
        return lambda: requests.post(w.url + "/connectors", timeout=WRITE_BOUND_S,
                                     json={"name": name, "config": config})

    writes = [(w, f"frozen-{k}-{i}") for k, w in enumerate(followers) for i in range(WRITES)]
    os.kill(leader.proc.pid, signal.SIGSTOP)
    try:
        threads, replies = concurrently([create(w, name) for w, name in writes])
        # while the writes wait on the frozen leader, the followers answer every read
        rounds = 0
        while any(t.is_alive() for t in threads) and rounds < 200:
            rounds += 1
            for w in followers:
                for path in ("/connectors", "/metrics", "/health"):
                    got = requests.get(w.url + path, timeout=READ_S)
                    assert got.status_code in (200, 503), (path, got.status_code)
                    assert path == "/health" or got.status_code == 200, (path, got.text)
        for t in threads:
            t.join(timeout=WRITE_BOUND_S + 5)
        accepted = []
        for (w, name), reply in zip(writes, replies):
            if isinstance(reply, requests.Response) and reply.status_code == 201:
                accepted.append(name)
            else:
                assert_503_with_retry_after(reply, mentions="rest.request.timeout.ms")
        # the forwards gave up at their deadline: the followers' handlers are free again
        # for a write they answer themselves (before, each stayed in its forward for 60 s)
        for w in followers:
            reply = validate(w)
            assert reply.status_code == 200, (reply.status_code, reply.text)
    finally:
        os.kill(leader.proc.pid, signal.SIGCONT)

    # every write a follower accepted is in the config topic
    def stored():
        keys = {key.decode() for _, key, value in read_topic(bed, f"{group}-configs")
                if key is not None and value is not None}
        return all(f"connector-{name}" in keys for name in accepted)
    wait_for(stored, timeout=60, interval=1, what="the accepted writes in the config topic")


def unreachable_source(tasks):
    """A datagen source whose records never leave its producer: its stop waits the whole
    task.shutdown.graceful.timeout.ms for their delivery."""
    return {"connector.class": "datagen", "topic": "never-delivered",
            "tasks.max": str(tasks), "records.per.second": "50",
            "producer.override.bootstrap.servers": f"127.0.0.1:{free_port()}"}


def running(w, name, tasks):
    status = w.get(f"/connectors/{name}/status").json()
    return (len(status.get("tasks", [])) == tasks and
            all(t["state"] == "RUNNING" for t in status["tasks"]))


OVERRIDES = {"connector.client.config.override.policy": "All",
             "connector.client.config.override.allowlist": "bootstrap.servers"}
GRACE_MS = 3000
STOPPING_TASKS = 5


def test_a_delete_stops_the_tasks_in_parallel(start_worker):
    w = start_worker({"task.shutdown.graceful.timeout.ms": str(GRACE_MS),
                      **OVERRIDES,
                      "rest.request.timeout.ms": "120000"})
    reply = w.post("/connectors", json={"name": "slow-stops",
                                        "config": unreachable_source(STOPPING_TASKS)})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: running(w, "slow-stops", STOPPING_TASKS), timeout=60,
             what="every task RUNNING")
    # the tasks stop together: about one graceful timeout (one at a time, five)
    bound_s = 2 * GRACE_MS / 1000 + 2
    reply = requests.delete(w.url + "/connectors/slow-stops", timeout=bound_s)
    assert reply.status_code == 204, reply.text
    assert "slow-stops" not in w.get("/connectors").json()
    assert "are not recorded" in w.logs(), "no stop waited for undelivered records"


def test_writes_waiting_on_a_busy_connector_give_up_at_their_deadline(start_worker):
    w = start_worker({"task.shutdown.graceful.timeout.ms": str(4 * REQUEST_TIMEOUT_MS),
                      **OVERRIDES,
                      "rest.request.timeout.ms": str(REQUEST_TIMEOUT_MS)})
    config = unreachable_source(1)
    reply = w.post("/connectors", json={"name": "busy", "config": config})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: running(w, "busy", 1), timeout=60, what="the task RUNNING")

    deleting, deleted = concurrently(
        [lambda: requests.delete(w.url + "/connectors/busy", timeout=WRITE_BOUND_S)])
    # gone from reads at once; the delete holds the connector while its task stops
    wait_for(lambda: "busy" not in w.get("/connectors").json(), timeout=10,
             what="the connector gone from reads")
    threads, replies = concurrently(
        [lambda: requests.put(w.url + "/connectors/busy/config", timeout=WRITE_BOUND_S,
                              json=config)] * WRITES)
    for t in threads + deleting:
        t.join(timeout=WRITE_BOUND_S + 5)
    for reply in replies:
        assert_503_with_retry_after(reply, mentions="rest.request.timeout.ms")
    assert any("is busy with an earlier operation" in r.json()["message"] for r in replies), \
        [r.text for r in replies]
    # the waits ended: while the task still stops, the handlers take the next write
    reply = validate(w)
    assert reply.status_code == 200, (reply.status_code, reply.text)
    # once stopped, the connector can be created again
    def recreated():
        reply = requests.put(w.url + "/connectors/busy/config", timeout=WRITE_BOUND_S,
                             json=config)
        return reply.status_code == 201
    wait_for(recreated, timeout=60, interval=1, what="the connector created again")


def group_size(w):
    """How many workers w's latest view of its cluster group holds (0 before one)."""
    sizes = re.findall(r"tributary\.cluster group \S+: (\d+) worker\(s\)", w.logs())
    return int(sizes[-1]) if sizes else 0


# a member frozen mid-rebalance holds the rebalance until its session times out
FROZEN_SESSION_MS = 60000
# SIGTERM's bound: the tasks' graceful stop (5 s by default) and the group's leave
# (TB_WORKER_GROUP_LEAVE_MS, 5 s), with room for a loaded machine; far below the session
SIGTERM_BOUND_S = 25


def test_sigterm_while_the_group_rebalances_around_a_frozen_member(start_worker, bed,
                                                                    tmp_path):
    group = bed.unique_topic("ctl-sigterm")
    settings = {**cluster_settings(bed, group),
                "session.timeout.ms": str(FROZEN_SESSION_MS)}
    first, second, frozen = (start_worker(settings) for _ in range(3))
    for w in (first, second, frozen):
        wait_for(lambda: group_size(w) == 3, timeout=90, what="three workers in the group")
    reply = second.post("/connectors", json={"name": "steady", "config": {
        "connector.class": "FileStreamSource", "topic": bed.unique_topic("ctl-s"),
        "file": str(tmp_path / "steady.txt")}})
    assert reply.status_code == 201, reply.text

    os.kill(frozen.proc.pid, signal.SIGSTOP)
    try:
        # a fourth worker's join opens a rebalance that waits on the frozen member
        # until its session times out; the others rejoin at their next heartbeat (1 s)
        fourth = start_worker(settings)
        time.sleep(3)  # three heartbeats: the first worker is in its JoinGroup by now
        assert group_size(fourth) == 0, "the rebalance ended before the SIGTERM"
        code = first.stop(signal.SIGTERM, timeout=SIGTERM_BOUND_S)
        assert code == 0, first.logs()
        assert "Sanitizer" not in first.logs()
    finally:
        os.kill(frozen.proc.pid, signal.SIGCONT)

    # the cluster goes on without the worker that left
    for w in (second, frozen, fourth):
        wait_for(lambda: group_size(w) == 3, timeout=120, interval=1,
                 what="the three remaining workers in the group")
    wait_for(lambda: fourth.get("/connectors/steady/status").json()["connector"]["state"]
             == "RUNNING", timeout=60, what="the connector running")
