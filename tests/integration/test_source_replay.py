"""Source replay: records sent again after a kill -9 keep their message id,
and bytes pass a FileStreamSource with ByteArrayConverter unchanged."""
import json
import signal
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, TopicPartition

from kafka_io import create_topic, unwrap
from worker import wait_for

pytestmark = pytest.mark.integration

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


def written(w, name):
    """records_written_total of task 0 of name (acknowledged by Kafka), or 0."""
    prefix = f'tributary_task_records_written_total{{connector="{name}",task="0"}} '
    for line in w.get("/metrics").text.splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix):])
    return 0


def read_partition(bed, topic, partition=0, timeout=60):
    """Every message of one partition, from its start to its current end."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"r-{topic}",
                         "enable.auto.commit": False})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                               timeout=10)
    consumer.assign([TopicPartition(topic, partition, low)])
    got = []

    def at_end():
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            got.append(message)
        return bool(got) and got[-1].offset() >= high - 1
    try:
        if high > low:
            wait_for(at_end, timeout=timeout, interval=0, what=f"{topic} up to {high}")
    finally:
        consumer.close()
    return got


def seq_of(value):
    return unwrap(json.loads(value))["seq"]


def copies_by_payload(messages, header):
    """{value: [message id of each copy]}; each message has exactly one id header."""
    copies = defaultdict(list)
    for m in messages:
        ids = [v for k, v in (m.headers() or []) if k == header]
        assert len(ids) == 1, (m.offset(), m.headers())
        copies[m.value()].append(ids[0])
    return copies


def test_message_ids_survive_kill_and_offset_rewind(start_worker, bed, tmp_path):
    """A datagen source with message.id.header is killed with SIGKILL while it
    runs, before any offset is recorded: the next worker on the same store
    sends those records again, with the ids of their first copies. Then the
    offset is moved back to the middle and the second half is sent a third
    time, by a run that starts elsewhere: the id depends on the record's
    source offset, not on how many records the run has sent."""
    folder = tmp_path / "w"
    # no periodic flush: nothing is recorded before the kill, so the kill
    # surely leaves records to send again
    settings = {"offset.flush.interval.ms": "600000"}
    topic = bed.unique_topic("msgid")
    create_topic(bed, topic, 1)
    total = 900
    config = {"connector.class": "datagen", "topic": topic, "count": str(total),
              "records.per.second": "300", "message.id.header": "msgid"}
    w = start_worker(settings, directory=folder)
    assert w.post("/connectors", json={"name": "ids", "config": config}).status_code == 201
    wait_for(lambda: written(w, "ids") >= 150, timeout=60, what="150 records acknowledged")
    assert w.get("/connectors/ids/offsets").json()["offsets"] == [], \
        "an offset was recorded before the kill: the replay would prove less"
    assert w.stop(signal.SIGKILL) == -signal.SIGKILL

    w = start_worker(settings, directory=folder)
    wait_for(lambda: written(w, "ids") >= total, timeout=60,
             what="the restarted task to send every record")
    first = read_partition(bed, topic)
    copies = copies_by_payload(first, "msgid")
    assert len(copies) == total, "every record is there"
    replayed = {v: ids for v, ids in copies.items() if len(ids) > 1}
    assert len(replayed) >= 150, "the records acknowledged before the kill were sent again"
    for value, ids in replayed.items():
        assert len(set(ids)) == 1, f"the copies of seq {seq_of(value)} carry different ids: {ids}"

    # a third copy of the second half, from a run that starts at sequence 450
    assert w.put("/connectors/ids/stop").status_code == 204
    rewind = {"offsets": [{"partition": {"task": 0}, "offset": {"sequence": 450}}]}
    reply = w.patch("/connectors/ids/offsets", json=rewind)
    assert reply.status_code == 200, reply.text
    before = len(first)
    assert w.put("/connectors/ids/resume").status_code == 202

    def resent():
        return len(read_partition(bed, topic)) >= before + total - 450
    wait_for(resent, timeout=60, interval=0.5, what="the second half sent again")
    everything = read_partition(bed, topic)
    copies = copies_by_payload(everything, "msgid")
    assert len(copies) == total
    before_rewind = copies_by_payload(first, "msgid")
    more = sorted(seq_of(v) for v, ids in copies.items()
                  if len(ids) == len(before_rewind[v]) + 1)
    assert more == list(range(450, total)), "the records from sequence 450 were resent"
    for value, ids in copies.items():
        assert len(set(ids)) == 1, f"the copies of seq {seq_of(value)} carry different ids: {ids}"
    # and distinct records have distinct ids
    distinct = [ids[0] for ids in copies.values()]
    assert len(set(distinct)) == total
    assert all(len(i) == 64 and all(c in b"0123456789abcdef" for c in i)
               for i in distinct)


NON_UTF8 = [b"plain ascii", b"\xff\xfe\x01 binary", b"caf\xc3\xa9 utf-8",
            b"\x80\x81\x82 lone continuation bytes", b"\x7f\xc0\xc1\xf5\xf6\xf7\xf8",
            b"\t\x1b[0m\x0b\x0c control bytes"]
WITH_NUL = [b"before", b"nul\x00in\x00the\x00middle", b"\x00", b"\x00\xff\x00", b"after"]


@pytest.mark.parametrize("lines", [NON_UTF8, WITH_NUL], ids=["non-utf8", "nul"])
def test_byte_array_round_trip_keeps_bytes(start_worker, bed, tmp_path, lines):
    """FileStreamSource -> topic -> FileStreamSink, both with ByteArrayConverter:
    each line's bytes (non-UTF-8 bytes and NUL included) are the record's
    value unchanged, and the sink's file is the source's file byte for byte."""
    source = tmp_path / "in.bin"
    source.write_bytes(b"".join(line + b"\n" for line in lines))
    out = tmp_path / "out.bin"
    topic = bed.unique_topic("bytes")
    create_topic(bed, topic, 1)
    w = start_worker({"key.converter": BYTES, "value.converter": BYTES,
                      "offset.flush.interval.ms": "200"})
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source)}
    assert w.post("/connectors", json={"name": "bsrc", "config": config}).status_code == 201
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out)}
    assert w.post("/connectors", json={"name": "bsink", "config": sink}).status_code == 201

    def copied():
        assert w.proc.poll() is None, f"tributary exited:\n{w.logs()}"
        return out.exists() and out.read_bytes().count(b"\n") >= len(lines)
    wait_for(copied, timeout=60, what="every line through the sink")
    assert [m.value() for m in read_partition(bed, topic)] == lines
    assert out.read_bytes() == source.read_bytes()
