"""A record Kafka refuses is never lost: a source whose record the broker
refuses (larger than the topic's max.message.bytes) fails without recording
its offset, or with errors.tolerance=all lets it go through the dead letter
queue or a counted log line; a sink whose dead letter queue refuses a record
records no offset past it. After the cause is fixed and the task restarted,
the record arrives."""
import json

import pytest
from confluent_kafka import Consumer, TopicPartition

from kafka_io import create_topic, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

SMALL_LIMIT = 2000  # the topic's max.message.bytes
BIG = 5000  # bytes of the record it refuses
# no automatic restart: each test restarts the task itself once it fixed the cause
SETTINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "100", "task.restart.backoff.initial.ms": "0"}
REASON = "Message size too large"  # librdkafka's text of Kafka's MESSAGE_TOO_LARGE


def create_limited_topic(bed, topic, max_bytes=SMALL_LIMIT):
    result = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--create",
                      "--topic", topic, "--partitions", "1",
                      "--config", f"max.message.bytes={max_bytes}")
    assert result.returncode == 0, result.stderr


def raise_limit(bed, topic):
    result = bed.tool("configs", "--bootstrap-server", bed.bootstrap, "--alter",
                      "--entity-type", "topics", "--entity-name", topic,
                      "--add-config", "max.message.bytes=1048588")
    assert result.returncode == 0, result.stderr


def read_messages(bed, topic, until, timeout=60):
    """The messages of topic from its start, read until until(messages)."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"r-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = []

    def done():  # until() sees each batch, not each record (kafka_io.read_raw)
        got.extend(m for m in consumer.consume(1000, 0.5) if not m.error())
        return until(got)
    try:
        wait_for(done, timeout=timeout, interval=0, what=f"the records of {topic}")
    finally:
        consumer.close()
    return got


def values(messages):
    return [m.value().decode() for m in messages]


def task_status(w, name):
    tasks = w.get(f"/connectors/{name}/status").json().get("tasks", [])
    return tasks[0] if tasks else {}


def wait_failed(w, name):
    return wait_for(lambda: task_status(w, name).get("state") == "FAILED" and
                    task_status(w, name), timeout=60, what=f"task {name}-0 FAILED")


def metric(w, family, name):
    """The sum of family's samples of connector name."""
    total = 0.0
    for line in w.get("/metrics").text.splitlines():
        if line.startswith(family + "{") and f'connector="{name}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


# -------------------------------------------------------------------------
# Sources: FileStreamSource, 50 lines, line 20 larger than the topic takes

def big_line_file(tmp_path):
    lines = [f"line-{i}" for i in range(1, 51)]
    lines[19] = "line-20-" + "x" * BIG
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


def file_source(w, name, topic, path, **extra):
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(path),
              "batch.size": "5", **extra}
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def stored_position(w, name):
    offsets = w.get(f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"]["position"] if offsets else 0


def test_refused_source_record_fails_the_task_and_is_sent_after_restart(
        start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("refused")
    create_limited_topic(bed, topic)
    path, lines = big_line_file(tmp_path)
    file_source(w, "fs", topic, path)

    trace = wait_failed(w, "fs")["trace"]
    assert topic in trace and REASON in trace and "record" in trace, trace
    # the offset never passes line 20: it starts after lines 1..19
    line_20_starts = sum(len(line) + 1 for line in lines[:19])
    assert stored_position(w, "fs") <= line_20_starts
    assert "errors.tolerance=all" not in w.logs()

    raise_limit(bed, topic)
    assert w.post("/connectors/fs/tasks/0/restart").status_code == 204
    wait_for(lambda: stored_position(w, "fs") == path.stat().st_size, timeout=60,
             what="the whole file acknowledged")
    got = values(read_messages(bed, topic, lambda ms: lines[-1] in values(ms)))
    assert set(lines) <= set(got)
    # the restart sent again from the stored offset: line 20 and every line
    # after it, in order, end the topic
    assert got[-31:] == lines[19:]


def test_refused_source_record_goes_to_the_source_dlq(start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    topic, dlq = bed.unique_topic("refused"), bed.unique_topic("srcdlq")
    create_limited_topic(bed, topic)
    path, lines = big_line_file(tmp_path)
    file_source(w, "fsd", topic, path, **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})

    wait_for(lambda: stored_position(w, "fsd") == path.stat().st_size, timeout=60,
             what="the offset past the refused record")
    # Kafka refuses a whole produce batch: lines sent with line 20 go too
    sent = metric(w, "tributary_task_records_dlq_total", "fsd")
    dead = read_messages(bed, dlq, lambda ms: len(ms) >= sent)
    assert len(dead) == sent
    message = next(m for m in dead if m.value().decode() == lines[19])
    headers = {k: v.decode() for k, v in message.headers()}
    assert headers["__connect.errors.topic"] == topic
    assert headers["__connect.errors.offset"] == "-1"  # never written
    assert headers["__connect.errors.stage"] == "KAFKA_PRODUCE"
    assert headers["__connect.errors.connector.name"] == "fsd"
    assert headers["__connect.errors.task.id"] == "0"
    assert REASON in headers["__connect.errors.exception.message"]
    # every line is in the topic or in the dead letter queue
    in_dlq = set(values(dead))
    written = values(read_messages(
        bed, topic, lambda ms: set(values(ms)) | in_dlq >= set(lines)))
    assert set(written) | in_dlq >= set(lines)
    assert task_status(w, "fsd")["state"] == "RUNNING"


def test_refused_source_record_without_dlq_is_counted_and_logged(
        start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("refused")
    create_limited_topic(bed, topic)
    path, _ = big_line_file(tmp_path)
    file_source(w, "fsl", topic, path, **{"errors.tolerance": "all"})

    wait_for(lambda: stored_position(w, "fsl") == path.stat().st_size, timeout=60,
             what="the offset past the refused record")
    skipped = [line for line in w.logs().splitlines()
               if "Kafka refused record" in line and topic in line]
    assert skipped and all("skipped (errors.tolerance=all)" in line and REASON in line
                           for line in skipped), skipped
    assert metric(w, "tributary_task_records_dropped_total", "fsl") == len(skipped)


# -------------------------------------------------------------------------
# Sinks: the dead letter queue refuses the record that failed

def test_sink_dlq_refusal_records_no_offset_past_the_record(start_worker, bed, tmp_path):
    settings = {**SETTINGS,
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false"}
    w = start_worker(settings)
    topic, dlq = bed.unique_topic("sinkin"), bed.unique_topic("sinkdlq")
    create_topic(bed, topic, 1)
    create_limited_topic(bed, dlq)
    bad = b"not json " + b"x" * BIG  # offset 10: fails conversion, too big for the DLQ
    produce(bed.bootstrap, topic,
            [(0, None, bad if i == 10 else f'{{"n":{i}}}'.encode()) for i in range(21)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq}
    name = f"fk-{topic}"  # its group, connect-<name>, is this test's alone
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201

    def stored():
        offsets = w.get(f"/connectors/{name}/offsets").json()["offsets"]
        return offsets[0]["offset"]["kafka_offset"] if offsets else 0
    trace = wait_failed(w, name)["trace"]
    assert dlq in trace and REASON in trace, trace
    assert stored() <= 10
    group = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"connect-{name}"})
    committed = group.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    group.close()
    assert committed <= 10

    raise_limit(bed, dlq)
    assert w.post(f"/connectors/{name}/tasks/0/restart").status_code == 204
    wait_for(lambda: stored() == 21, timeout=60, what="every record written")
    dead = read_messages(bed, dlq, lambda ms: any(m.value() == bad for m in ms))
    assert [m.value() for m in dead].count(bad) >= 1
    written = {json.loads(line)["n"] for line in output_lines(out)}
    assert written == set(range(21)) - {10}
