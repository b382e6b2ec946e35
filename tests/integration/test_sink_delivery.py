"""Sink delivery: the DLQ keeps a record's bytes and headers, a paused sink
receives nothing until it resumes, aborted transactions are delivered with
the default read_uncommitted, bytes pass ByteArrayConverter unchanged, and
a task that fails at every start restarts with a growing backoff."""
import json

import pytest
from confluent_kafka import Consumer, Producer

from kafka_io import IN_ORDER, create_topic, group_lag, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "offset.flush.interval.ms": "200"}
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"


def create(w, name, config):
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def file_sink(topic, out, **extra):
    return {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            **extra}


def stored_offsets(w, name):
    """{partition: kafka_offset} recorded in the store for a sink."""
    reply = w.get(f"/connectors/{name}/offsets")
    if reply.status_code != 200:
        return {}
    return {o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"]
            for o in reply.json().get("offsets", [])}


def read_messages(bed, topic, count, timeout=60):
    """The first count messages of topic, read from its start."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"r-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = []

    def enough():
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            got.append(message)
        return len(got) >= count
    try:
        wait_for(enough, timeout=timeout, interval=0, what=f"{count} records in {topic}")
    finally:
        consumer.close()
    return got


# ---------------------------------------------------------------------------
# The dead letter queue keeps the original record


ORIGINAL_HEADERS = [
    [("trace-id", b"abc-123"), ("binary", b"\x00\xff\x01\x80"), ("dup", b"first"),
     ("dup", b"second"), ("empty", b"")],
    [("only", b"one")],
]
BAD = [(b"k-bad-1", b"not json \xff\xfe"), (b"\x00\xffbinary key", b"{\"unterminated\": ")]


def produce_with_headers(bed, topic):
    """Records 0, 2, 4 are good JSON; 1 and 3 are not (BAD), with headers."""
    producer = Producer({"bootstrap.servers": bed.bootstrap, **IN_ORDER})
    records = [(b"k0", b'{"n":0}', None), (*BAD[0], ORIGINAL_HEADERS[0]),
               (b"k2", b'{"n":2}', [("good", b"yes")]), (*BAD[1], ORIGINAL_HEADERS[1]),
               (b"k4", b'{"n":4}', None)]
    for i, (key, value, headers) in enumerate(records):
        producer.produce(topic, key=key, value=value, headers=headers, partition=0,
                         timestamp=1_700_000_000_000 + i)
    assert producer.flush(30) == 0


@pytest.mark.parametrize("context", [True, False], ids=["context", "no-context"])
def test_dlq_copies_key_value_and_headers(start_worker, bed, tmp_path, context):
    w = start_worker(STRINGS)
    topic, dlq = bed.unique_topic("dlqh"), bed.unique_topic("dlq")
    create_topic(bed, topic, 1)
    create_topic(bed, dlq, 1)
    produce_with_headers(bed, topic)
    out = tmp_path / "out.txt"
    name = "dlqh"
    create(w, name, file_sink(topic, out, **{
        "key.converter": BYTES, "value.converter": JSON,
        "value.converter.schemas.enable": "false",
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": str(context).lower()}))
    wait_for(lambda: len(output_lines(out)) >= 3, what="the three good records")
    assert output_lines(out) == ['{"n":0}', '{"n":2}', '{"n":4}']

    got = read_messages(bed, dlq, 2)
    assert len(got) == 2
    for message, (key, value), original, offset in zip(got, BAD, ORIGINAL_HEADERS, (1, 3)):
        assert message.key() == key, "the original key bytes"
        assert message.value() == value, "the original value bytes"
        assert message.timestamp()[1] == 1_700_000_000_000 + offset
        headers = message.headers() or []
        kept = [(k, v) for k, v in headers if not k.startswith("__connect.errors.")]
        assert kept == original, "the original headers, in order, duplicates included"
        errors = {k: v.decode() for k, v in headers if k.startswith("__connect.errors.")}
        if not context:
            assert errors == {}, "no context header without context.headers.enable"
            continue
        assert len([k for k, _ in headers if k.startswith("__connect.errors.")]) == \
            len(errors), "each context header once"
        message_text = errors.pop("__connect.errors.exception.message")
        assert message_text.startswith(
            "Converting byte[] to Kafka Connect data failed due to serialization error"), \
            message_text
        assert errors == {
            "__connect.errors.topic": topic,
            "__connect.errors.partition": "0",
            "__connect.errors.offset": str(offset),
            "__connect.errors.connector.name": name,
            "__connect.errors.task.id": "0",
            "__connect.errors.stage": "VALUE_CONVERTER",
            # Connect names the class of the stage that failed: the converter
            "__connect.errors.class.name": JSON,
            "__connect.errors.exception.class.name":
                "org.apache.kafka.connect.errors.ConnectException",
        }

    def counted():
        page = w.get("/metrics").text
        line = f'tributary_task_records_dlq_total{{connector="{name}",task="0"}} 2'
        return line in page.splitlines()
    wait_for(counted, what="two records counted as sent to the DLQ")


# ---------------------------------------------------------------------------
# Pause


def state_of(w, name):
    """(connector state, [task states]) or None."""
    reply = w.get(f"/connectors/{name}/status")
    if reply.status_code != 200:
        return None
    body = reply.json()
    return body["connector"]["state"], [t["state"] for t in body.get("tasks", [])]


def test_paused_sink_receives_nothing_until_resumed(start_worker, bed, tmp_path):
    """While sink A is paused, sink B on the same topic and worker receives
    three rounds of records, each recorded by a flush of its own (so several
    flush intervals pass): A's file does not grow, and Kafka shows A's group
    lagging by exactly those records. After resume A gets them all, once."""
    w = start_worker(STRINGS)
    topic = bed.unique_topic("pause")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{i}".encode()) for i in range(20)])
    paused_out, witness_out = tmp_path / "a.txt", tmp_path / "b.txt"
    a, b = bed.unique_topic("a"), bed.unique_topic("b")  # and their groups
    create(w, a, file_sink(topic, paused_out))
    create(w, b, file_sink(topic, witness_out))
    wait_for(lambda: len(output_lines(paused_out)) == 20 and
             len(output_lines(witness_out)) == 20, what="both sinks to write 20 lines")
    wait_for(lambda: stored_offsets(w, a) == {0: 20}, what="A's offset 20 recorded")

    assert w.put(f"/connectors/{a}/pause").status_code == 202
    wait_for(lambda: state_of(w, a) == ("PAUSED", ["PAUSED"]),
             what="A's connector and task PAUSED")
    before = output_lines(paused_out)
    assert len(before) == 20

    total = 20
    for round_ in range(3):
        produce(bed.bootstrap, topic,
                [(0, None, f"r{i}".encode()) for i in range(total, total + 10)])
        total += 10
        wait_for(lambda: stored_offsets(w, b) == {0: total},
                 what=f"B to write and record round {round_}")
        assert output_lines(paused_out) == before, f"A received records in round {round_}"
    assert len(output_lines(witness_out)) == total
    assert output_lines(paused_out) == before, "A received records while paused"
    assert stored_offsets(w, a) == {0: 20}
    assert state_of(w, a) == ("PAUSED", ["PAUSED"])
    # the broker has them: A's group lags by exactly the records it was not given
    wait_for(lambda: group_lag(bed, f"connect-{a}") == {(topic, 0): 30},
             what="Kafka to show A's group lagging by 30")

    assert w.put(f"/connectors/{a}/resume").status_code == 202
    wait_for(lambda: len(output_lines(paused_out)) >= total, what="A to catch up")
    wait_for(lambda: stored_offsets(w, a) == {0: total}, what="A's offset recorded")
    assert output_lines(paused_out) == [f"r{i}" for i in range(total)], \
        "every record once, in order"
    assert state_of(w, a) == ("RUNNING", ["RUNNING"])


# ---------------------------------------------------------------------------
# Transactional topics read with read_uncommitted


@pytest.mark.parametrize("override", [
    {},  # tributary's default, as Connect's: read_uncommitted
    {"consumer.override.isolation.level": "read_uncommitted"},
], ids=["default", "explicit"])
def test_read_uncommitted_delivers_aborted_records_and_lag_reaches_zero(
        start_worker, bed, tmp_path, override):
    w = start_worker(STRINGS)
    topic = bed.unique_topic("txnru")
    create_topic(bed, topic, 2)
    txn = f"{topic}-p"
    # partition 0: committed c0 c1 (+marker), aborted a0 a1 (+marker),
    # committed c2 (+marker): end offset 8; partition 1: aborted b0 b1
    # (+marker): end offset 3
    produce(bed.bootstrap, topic, [(0, None, b"c0"), (0, None, b"c1")], transactional_id=txn)
    produce(bed.bootstrap, topic, [(0, None, b"a0"), (0, None, b"a1"), (1, None, b"b0"),
                                   (1, None, b"b1")], transactional_id=txn, abort=True)
    produce(bed.bootstrap, topic, [(0, None, b"c2")], transactional_id=txn)
    out = tmp_path / "out.txt"
    name = bed.unique_topic("ru")  # its group connect-<name> is this test's own
    create(w, name, file_sink(topic, out, **override))
    expected = ["c0", "c1", "a0", "a1", "c2", "b0", "b1"]
    wait_for(lambda: len(output_lines(out)) >= len(expected), what="every record")
    wait_for(lambda: stored_offsets(w, name) == {0: 8, 1: 3},
             what="offsets past the last control record of each partition")
    wait_for(lambda: group_lag(bed, f"connect-{name}") == {(topic, 0): 0, (topic, 1): 0},
             timeout=60, interval=0.5, what="kafka-consumer-groups to show lag 0")
    got = output_lines(out)
    assert sorted(got) == sorted(expected), "aborted records are delivered, exactly once"
    assert [v for v in got if v[0] in "ca"] == ["c0", "c1", "a0", "a1", "c2"]
    assert [v for v in got if v[0] == "b"] == ["b0", "b1"]


# ---------------------------------------------------------------------------
# ByteArrayConverter


def test_byte_array_sink_writes_bytes_unchanged(start_worker, bed, tmp_path):
    """Binary values (not UTF-8, NUL, CR, every byte but the newline the file
    format uses) go through ByteArrayConverter into the file byte for byte;
    a null value is written as null, as Connect's FileStreamSink does."""
    values = [b"\x00", b"\xff\xfe\xfd", b"nul\x00inside", b"cr\rand\r\x00",
              bytes(b for b in range(256) if b != 0x0A), b"caf\xc3\xa9", b"", None,
              b"\x80end"]
    w = start_worker({**STRINGS, "key.converter": BYTES, "value.converter": BYTES})
    topic = bed.unique_topic("bytesink")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, b"\x00\xffkey", v) for v in values])
    out = tmp_path / "out.bin"
    create(w, "bytes", file_sink(topic, out))
    wait_for(lambda: stored_offsets(w, "bytes") == {0: len(values)},
             what="every record written and recorded")
    assert out.read_bytes() == b"".join((v if v is not None else b"null") + b"\n"
                                        for v in values)


# ---------------------------------------------------------------------------
# Restart backoff


def test_restart_backoff_doubles_up_to_the_max(start_worker, bed, tmp_path):
    """A sink whose file's directory does not exist fails at every start.
    The worker logs, with millisecond timestamps, each failure and the delay
    it plans: 200, 400, 800, 1600, then 1600 (the max). The gap between
    consecutive failures is at least the delay planned between them (how much
    more a start takes is the machine's load, not asserted)."""
    w = start_worker({**STRINGS, "log.format": "json",
                      "task.restart.backoff.initial.ms": "200",
                      "task.restart.backoff.max.ms": "1600"})
    topic = bed.unique_topic("backoff")
    create_topic(bed, topic, 1)
    missing = tmp_path / "no-such-dir" / "out.txt"
    create(w, "bo", file_sink(topic, missing))

    def events():
        """[(time, message)] of the task's failure and plan lines."""
        found = []
        for line in w.logs().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("connector") == "bo" and entry.get("task") == 0 and (
                    entry["message"].startswith("task failed: ") or
                    entry["message"].startswith("restarting in ")):
                found.append((entry["time"], entry["message"]))
        return found

    def failures():
        return [t for t, m in events() if m.startswith("task failed: ")]
    wait_for(lambda: len(failures()) >= 6, timeout=30, what="six failed starts")
    found = events()
    failed = [(t, m) for t, m in found if m.startswith("task failed: ")][:6]
    planned = [int(m.split()[2]) for t, m in found if m.startswith("restarting in ")][:5]
    assert all("cannot open file" in m and str(missing) in m for _, m in failed)
    assert planned == [200, 400, 800, 1600, 1600]

    from datetime import datetime
    times = [datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ") for t, _ in failed]
    gaps = [(b - a).total_seconds() * 1000 for a, b in zip(times, times[1:])]
    # timestamps are cut to the millisecond: a gap may read up to 1 ms short
    for gap, delay in zip(gaps, planned):
        assert gap >= delay - 1, f"a restart came before its backoff: {gaps} {planned}"

    status = w.get("/connectors/bo/status").json()["tasks"][0]
    assert status["state"] == "FAILED", status
    assert "cannot open file" in status["trace"]
    assert status["restarts"] >= 5
