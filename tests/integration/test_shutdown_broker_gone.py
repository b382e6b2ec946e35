"""A worker whose broker stops answering still stops (delivery issue item
16): every task's stop is bounded by task.shutdown.graceful.timeout.ms, and
what librdkafka (2.0.2, still 2.8) does not bound itself (its destroy of a
client whose broker is gone) is left behind, logged, rather than waited for.
The broker of the bed is frozen (SIGSTOP) and thawed at the end."""
import os
import signal

import pytest

from kafka_io import create_topic, produce
from worker import output_lines, wait_for

# freezes the bed's broker, which every other test uses
pytestmark = [pytest.mark.integration, pytest.mark.disrupts("kafka")]

GRACE_MS = 2000


def broker_pid(bed_dir):
    with open(os.path.join(bed_dir, "kafka.pid")) as f:
        return int(f.read())


@pytest.fixture
def broker():
    """freeze() stops the bed's broker answering, thaw() lets it go on; it is
    thawed after the test, whatever happened."""
    pid = broker_pid(os.environ["TRIBUTARY_BED_DIR"])
    frozen = []

    class Broker:
        def freeze(self):
            os.kill(pid, signal.SIGSTOP)
            frozen.append(pid)

        def thaw(self):
            os.kill(pid, signal.SIGCONT)
            frozen.clear()
    yield Broker()
    if frozen:
        os.kill(pid, signal.SIGCONT)


def test_tasks_and_the_worker_stop_within_their_bound_when_the_broker_is_gone(
        start_worker, bed, tmp_path, broker):
    w = start_worker({"task.shutdown.graceful.timeout.ms": str(GRACE_MS),
                      "offset.flush.interval.ms": "200"})
    topic, produced = bed.unique_topic("gone-in"), bed.unique_topic("gone-out")
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic, [(n % 2, None, f"r{n}".encode()) for n in range(20)])

    def sink(name):
        out = tmp_path / f"{name}.txt"
        config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
                  "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
        reply = w.post("/connectors", json={"name": name, "config": config})
        assert reply.status_code == 201, reply.text
        wait_for(lambda: len(output_lines(out)) == 20, timeout=60,
                 what=f"{name}'s records")
    sink("sink")
    config = {"connector.class": "datagen", "topic": produced, "records.per.second": "200"}
    assert w.post("/connectors", json={"name": "source", "config": config}).status_code == 201
    wait_for(lambda: w.get("/connectors/source/status").json()["tasks"][0]["state"]
             == "RUNNING", what="the source running")

    # a sink task stopped while its broker does not answer: the DELETE
    # returns (liveness, within the client's 10 s; the bound is 2 s)
    broker.freeze()
    assert w.delete("/connectors/sink").status_code == 204
    assert "destroying the consumer was cut short" in w.logs()
    # the destroy left behind finishes once the broker answers again, with
    # the worker running (a sanitizer would report what it touched)
    broker.thaw()
    sink("again")

    # the worker stopped while its broker does not answer exits 0: each of
    # its two tasks' stops is bounded, with room for a loaded machine
    broker.freeze()
    assert w.stop(timeout=3 * 2 * GRACE_MS / 1000 + 10) == 0, w.logs()
