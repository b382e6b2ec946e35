"""Kafka -> HTTP sink against a local receiver: retries without loss or
reordering, and one bad record through errors.tolerance and the DLQ."""
import itertools

import pytest
from confluent_kafka import Consumer

from http_receiver import Receiver
from kafka_io import create_topic, produce
from worker import wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "200"}


@pytest.fixture
def receiver():
    made = []

    def make(answer):
        made.append(Receiver(answer))
        return made[-1]
    yield make
    for r in made:
        r.close()


def http_sink(w, name, topic, url, **extra):
    config = {"connector.class": "HttpSink", "topics": topic, "http.url": url,
              "batch.max.records": "10", "retry.backoff.ms": "10", **extra}
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def test_503_then_200_loses_and_reorders_nothing(start_worker, bed, receiver):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("http503")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f'{{"n":{i}}}'.encode()) for i in range(100)])
    calls = itertools.count()
    r = receiver(lambda body: 503 if next(calls) % 3 == 0 else 200)
    http_sink(w, "h503", topic, r.url)
    wait_for(lambda: len(r.values()) >= 100, what="100 records delivered")
    assert [v["n"] for v in r.values()] == list(range(100))
    assert any(status == 503 for _, _, status in r.requests)


def one_bad_record(bed, topic):
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic,
            [(0, f"k{i}".encode(), (b'{"bad":true}' if i == 7 else f'{{"n":{i}}}'.encode()))
             for i in range(20)])


# Connect reads enum and boolean values in any case; so does every engine.
@pytest.mark.parametrize("tolerance,enable", [("all", "true"), ("ALL", "True")])
def test_bad_record_goes_to_the_dlq_with_context(start_worker, bed, receiver, tolerance,
                                                 enable):
    w = start_worker(SETTINGS)
    topic, dlq = bed.unique_topic("http400"), bed.unique_topic("dlq")
    one_bad_record(bed, topic)
    r = receiver(lambda body: 400 if '"bad"' in body else 200)
    http_sink(w, "h400", topic, r.url, **{
        "errors.tolerance": tolerance, "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": enable,
        "errors.log.enable": enable})
    wait_for(lambda: len(r.values()) >= 19, what="the 19 good records")
    assert [v["n"] for v in r.values()] == [i for i in range(20) if i != 7]

    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"dlq-{dlq}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([dlq])
    message = wait_for(lambda: _valid(consumer.poll(0.5)), timeout=60,
                       what="the record in the DLQ")
    consumer.close()
    assert message.value() == b'{"bad":true}'
    assert message.key() == b"k7"
    headers = {k: v.decode() for k, v in message.headers()}
    assert headers["__connect.errors.topic"] == topic
    assert headers["__connect.errors.partition"] == "0"
    assert headers["__connect.errors.offset"] == "7"
    assert headers["__connect.errors.connector.name"] == "h400"
    assert headers["__connect.errors.task.id"] == "0"
    assert headers["__connect.errors.stage"] == "TASK_PUT"
    assert "HTTP 400" in headers["__connect.errors.exception.message"]
    assert "skipped in stage TASK_PUT" in w.logs()


def _valid(message):
    return message if message is not None and not message.error() else None


def test_bad_record_fails_the_task_without_tolerance(start_worker, bed, receiver):
    w = start_worker({**SETTINGS, "task.restart.backoff.initial.ms": "0"})
    topic = bed.unique_topic("http400none")
    one_bad_record(bed, topic)
    r = receiver(lambda body: 400 if '"bad"' in body else 200)
    http_sink(w, "hnone", topic, r.url)

    def failed():
        tasks = w.get("/connectors/hnone/status").json()["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_for(failed, what="the task to fail")
    assert f"record {topic}-0 at offset 7 failed in stage TASK_PUT" in task["trace"]
    assert "HTTP 400" in task["trace"]


def group_state(bed, group):
    """(state, member count) of group as kafka-consumer-groups reports it."""
    result = bed.consumer_groups("--describe", "--group", group, "--state")
    assert result.returncode == 0, result.stdout + result.stderr
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0] == group:
            return fields[-2], int(fields[-1])
    raise LookupError(result.stdout)


def test_consumer_is_polled_while_a_put_is_retried(start_worker, bed, receiver):
    """The endpoint answers 503 for longer than max.poll.interval.ms (6 s, the
    broker's smallest session): the task holds its partitions and keeps polling,
    so it stays in the group, and once the endpoint recovers every record
    arrives once, in order."""
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("httphold")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f'{{"n":{i}}}'.encode()) for i in range(30)])
    refusals = itertools.count(1)
    # 60 refusals at errors.retry.delay.max.ms=200 take longer than 6 s
    r = receiver(lambda body: 503 if next(refusals) <= 60 else 200)
    http_sink(w, "hold", topic, r.url, **{
        "retry.max.attempts": "0",
        "errors.retry.timeout": "300000",
        "errors.retry.delay.max.ms": "200",
        "consumer.override.max.poll.interval.ms": "6000",
        "consumer.override.session.timeout.ms": "6000"})
    wait_for(lambda: r.requests, timeout=60, what="the first refused request")
    # read while the first 30 wait in the sink: its next put is refused, and
    # the runtime retries it
    produce(bed.bootstrap, topic, [(0, None, f'{{"n":{i}}}'.encode())
                                   for i in range(30, 40)])
    wait_for(lambda: len(r.values()) >= 40, timeout=120, interval=0.2,
             what="40 records delivered after the endpoint recovered")
    assert [v["n"] for v in r.values()] == list(range(40))
    assert sum(1 for _, _, status in r.requests if status == 503) == 60
    assert "maximum poll interval" not in w.logs()
    assert "retriable failure" in w.logs()
    assert group_state(bed, "connect-hold") == ("Stable", 1)
    status = w.get("/connectors/hold/status").json()
    assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status
