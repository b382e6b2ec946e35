"""Pool threads never wait long on the network (delivery issue item 17): a
task whose broker does not answer takes one bounded attempt per step and
gives its pool thread back, so connectors whose brokers answer keep moving
records. The same holds for a JDBC sink whose database does not answer."""
import socket
import threading

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from kafka_io import create_topic
from worker import free_port, wait_for

pytestmark = pytest.mark.integration


def end_offset(bed, topic):
    """The end offset of topic's partition 0; 0 before the topic exists."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"end-{topic}"})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        return high
    except KafkaException:
        return 0
    finally:
        consumer.close()


def task_state(w, name):
    tasks = w.get(f"/connectors/{name}/status").json().get("tasks", [])
    return tasks[0]["state"] if tasks else None


def assert_a_healthy_connector_runs(w, bed):
    """A connector whose broker answers gets its records through, and the
    worker is healthy."""
    topic = bed.unique_topic("healthy")
    config = {"connector.class": "datagen", "topic": topic, "records.per.second": "50"}
    assert w.post("/connectors", json={"name": "healthy",
                                       "config": config}).status_code == 201
    first = wait_for(lambda: end_offset(bed, topic), timeout=20,
                     what="the healthy connector's first records")
    wait_for(lambda: end_offset(bed, topic) > first, timeout=20,
             what="the healthy connector's records to keep growing")
    assert w.get("/health").status_code == 200


def test_unreachable_transaction_coordinators_starve_no_other_connector(
        start_worker, bed):
    # two dead tasks, two pool threads: a dead task that held its thread
    # through init_transactions (30 s) would leave none to the healthy one
    w = start_worker({"task.threads": "2", "exactly.once.source.support": "enabled",
                      "connector.client.config.override.allowlist": "bootstrap.servers",
                      "task.restart.backoff.initial.ms": "600000"})
    dead = {}
    for name in ("dead1", "dead2"):
        closed = f"127.0.0.1:{free_port()}"  # nothing listens there
        dead[name] = closed
        config = {"connector.class": "datagen", "topic": bed.unique_topic(name),
                  "exactly.once.support": "required",
                  "producer.override.bootstrap.servers": closed}
        assert w.post("/connectors", json={"name": name,
                                           "config": config}).status_code == 201
    for name, closed in dead.items():
        wait_for(lambda: closed in w.logs(), what=f"{name}'s producer trying {closed}")

    assert_a_healthy_connector_runs(w, bed)
    # the dead tasks are still in their first attempt, starting (not RUNNING,
    # not FAILED yet): the healthy one ran while they were trying, not after
    # they gave up
    assert [task_state(w, name) for name in dead] == ["UNASSIGNED", "UNASSIGNED"]
    # and their status says what they wait for
    for name in dead:
        task = w.get(f"/connectors/{name}/status").json()["tasks"][0]
        assert task["trace"].startswith(
            f"not started yet: initialising transactions (connect-{name}-0) has had "
            "no answer"), task


class SilentServer:
    """A TCP server that accepts connections and never says a word: what a
    database behind a dead proxy looks like to libpq."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.accepted = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.accepted.append(self.listener.accept()[0])
            except OSError:
                return  # closed

    def close(self):
        self.listener.close()
        for conn in self.accepted:
            conn.close()


def test_a_database_that_does_not_answer_starves_no_other_connector(start_worker, bed):
    # libpq's connect timeout is 10 s, three attempts 10 s apart: a JDBC task
    # that waited through them on its pool thread would hold it for 50 s
    silent = SilentServer()
    url = f"jdbc:postgresql://127.0.0.1:{silent.port}/nobody"
    try:
        w = start_worker({"task.threads": "2"}, env={"MUTE_PASSWORD": "x"})
        for name in ("mute1", "mute2"):
            topic = bed.unique_topic(name)
            create_topic(bed, topic, 1)
            config = {"connector.class": "jdbc-sink", "topics": topic,
                      "connection.url": url, "connection.user": "u",
                      "connection.password": "${env:MUTE_PASSWORD}"}
            assert w.post("/connectors", json={"name": name,
                                               "config": config}).status_code == 201
        wait_for(lambda: len(silent.accepted) >= 2, timeout=30,
                 what="both sinks connecting to the silent server")

        assert_a_healthy_connector_runs(w, bed)
        # the silent ones are still in their first attempt, and say so
        for name in ("mute1", "mute2"):
            task = w.get(f"/connectors/{name}/status").json()["tasks"][0]
            assert task["state"] == "RUNNING", task
            assert "waiting for the server" in task.get("trace", ""), task
    finally:
        silent.close()


def test_unreachable_offsets_topic_starves_no_other_connector(start_worker, bed):
    # the producers reach the broker, so both dead tasks fence their
    # predecessors; the offsets they then read at start come through their
    # consumers, which reach nothing: a read that held its pool thread
    # (metadata, end offsets, the topic's creation) would leave none
    offsets = bed.unique_topic("offsets")
    w = start_worker({"task.threads": "2", "exactly.once.source.support": "enabled",
                      "offset.storage.topic": offsets,
                      "connector.client.config.override.allowlist": "bootstrap.servers",
                      "task.restart.backoff.initial.ms": "600000"})
    for name in ("deadread1", "deadread2"):
        closed = f"127.0.0.1:{free_port()}"
        config = {"connector.class": "datagen", "topic": bed.unique_topic(name),
                  "exactly.once.support": "required",
                  "consumer.override.bootstrap.servers": closed}
        assert w.post("/connectors", json={"name": name,
                                           "config": config}).status_code == 201
        wait_for(lambda: closed in w.logs(), what=f"{name}'s reader trying {closed}")

    assert_a_healthy_connector_runs(w, bed)
    assert [task_state(w, name) for name in ("deadread1", "deadread2")] == \
        ["UNASSIGNED", "UNASSIGNED"]
    # and their status says what they wait for
    for name in ("deadread1", "deadread2"):
        task = w.get(f"/connectors/{name}/status").json()["tasks"][0]
        assert task.get("trace", "").startswith(
            f"not started yet: reading the offsets topic {offsets} to its end for the "
            f"offsets of connect-{name}-0's last committed transaction"), task
