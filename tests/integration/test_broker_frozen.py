"""The broker frozen for 40 s under a distributed worker (issue 35): every read the REST
API serves from the worker's own view answers within 1 s throughout (the client's
timeout), and once the broker is thawed the tasks' states and offsets catch up: a datagen
source's recorded offset and a FileStreamSink's output go on past where they stood.
The bed's broker is frozen (SIGSTOP) and thawed at the end, whatever happened."""
import time

import pytest
import requests

from test_distributed import cluster_settings
from test_shutdown_broker_gone import broker  # noqa: F401 (the fixture)
from worker import output_lines, wait_for

# freezes the bed's broker, which every other test uses
pytestmark = [pytest.mark.integration, pytest.mark.disrupts("kafka")]

FROZEN_S = 40
READ_S = 1
READS = ("/connectors", "/connectors?expand=status&expand=info", "/connectors/src/status",
         "/connectors/snk/status", "/connectors/snk/tasks/0/status", "/connectors/src/config",
         "/connectors/snk/tasks", "/metrics")


def source_sequence(w):
    """The datagen task's recorded offset (its next record's number), or -1."""
    offsets = w.get("/connectors/src/offsets").json().get("offsets", [])
    return max((o["offset"].get("sequence", -1) for o in offsets), default=-1)


def all_running(w):
    for name in ("src", "snk"):
        status = w.get(f"/connectors/{name}/status").json()
        if status["connector"]["state"] != "RUNNING" or not status["tasks"] or any(
                t["state"] != "RUNNING" for t in status["tasks"]):
            return False
    return True


def test_reads_answer_while_the_broker_is_frozen_and_the_tasks_catch_up(
        start_worker, bed, tmp_path, broker):  # noqa: F811
    group = bed.unique_topic("ctl-frozen-broker")
    w = start_worker(cluster_settings(bed, group))
    wait_for(lambda: w.get("/connectors").ok, timeout=60, what="the worker answering")
    topic, out = bed.unique_topic("ctl-fb"), tmp_path / "out.txt"
    for name, config in (
            ("src", {"connector.class": "datagen", "topic": topic,
                     "records.per.second": "20"}),
            ("snk", {"connector.class": "FileStreamSink", "topics": topic,
                     "file": str(out)})):
        reply = requests.put(f"{w.url}/connectors/{name}/config", json=config, timeout=60)
        assert reply.status_code == 201, reply.text
    wait_for(lambda: all_running(w) and source_sequence(w) > 0 and output_lines(out),
             timeout=90, what="the pipeline running, its offsets recorded")
    sequence, written = source_sequence(w), len(output_lines(out))

    broker.freeze()
    try:
        until = time.monotonic() + FROZEN_S
        rounds = 0
        while time.monotonic() < until and rounds < 10000:
            rounds += 1
            for path in READS:
                reply = requests.get(w.url + path, timeout=READ_S)
                assert reply.status_code == 200, (path, reply.status_code, reply.text)
            health = requests.get(w.url + "/health", timeout=READ_S)
            assert health.status_code in (200, 503), health.status_code
            time.sleep(0.2)
    finally:
        broker.thaw()

    wait_for(lambda: all_running(w), timeout=120, interval=1, what="every task RUNNING")
    wait_for(lambda: source_sequence(w) > sequence, timeout=120, interval=1,
             what="the source's offsets recorded past the freeze")
    wait_for(lambda: len(output_lines(out)) > written, timeout=120, interval=1,
             what="the sink writing past the freeze")
