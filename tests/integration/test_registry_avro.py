"""AvroConverter against the real Kafka bed and the test registry (tests/registry/):
records written by confluent-kafka's AvroSerializer are decoded by a FileStreamSink;
records written by tributary's sources are decoded by confluent-kafka's
AvroDeserializer; the subject name strategies; malformed frames under
errors.tolerance; a registry outage."""
import datetime
import decimal
import json
import os
import sys
import uuid

import pytest
from confluent_kafka.schema_registry import record_subject_name_strategy
from confluent_kafka.schema_registry import topic_record_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from kafka_io import create_topic
from worker import output_lines, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "registry"))
from fixtures import (AVRO, STRATEGY, client, consume, context, converters,  # noqa: E402
                      create, dlq_headers, file_sink, json_lines, produce,
                      registry, task_state)

pytestmark = pytest.mark.integration

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

__all__ = ["registry"]  # the fixture, imported for pytest

FAST = {"offset.flush.interval.ms": "200"}

ORDER = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal",
                                   "precision": 10, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "city", "type": "string"}]}},
    ]})
KEY = json.dumps({"type": "record", "name": "OrderKey", "namespace": "shop",
                  "fields": [{"name": "id", "type": "long"}]})


def order(i):
    return {"id": i, "item": f"item-{i}", "note": None if i % 2 else f"n{i}",
            "price": decimal.Decimal(f"{i}.25"), "day": datetime.date(2024, 1, 2),
            "at": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000,
                                    tzinfo=datetime.timezone.utc),
            "tags": ["x"] * i, "kind": "AB"[i % 2], "address": {"city": f"c{i}"}}


def expected(i):
    return {"id": i, "item": f"item-{i}", "note": None if i % 2 else f"n{i}",
            "price": float(f"{i}.25"), "day": 19724, "at": 1704164645678,
            "tags": ["x"] * i, "kind": "AB"[i % 2], "address": {"city": f"c{i}"}}


def serialized(registry, topic, count, strategy=None):
    conf = {"subject.name.strategy": strategy} if strategy else {}
    values = AvroSerializer(client(registry), ORDER, conf=conf)
    keys = AvroSerializer(client(registry), KEY, conf=conf)
    return [(keys({"id": i}, context(topic, True)), values(order(i), context(topic)))
            for i in range(count)]


@pytest.mark.parametrize("strategy", [None, record_subject_name_strategy,
                                      topic_record_subject_name_strategy])
def test_sink_decodes_confluent_avro(start_worker, bed, registry, tmp_path, strategy):
    w = start_worker(FAST)
    topic = bed.unique_topic("avro-in")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 5, strategy))
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry))
    assert json_lines(out, 5) == [expected(i) for i in range(5)]
    subjects = client(registry).get_subjects()
    if strategy is None:
        assert sorted(subjects) == [f"{topic}-key", f"{topic}-value"]
    elif strategy is record_subject_name_strategy:
        assert sorted(subjects) == ["shop.Order", "shop.OrderKey"]
    else:
        assert sorted(subjects) == [f"{topic}-shop.Order", f"{topic}-shop.OrderKey"]


@pytest.mark.parametrize("strategy,subject", [
    ("TopicNameStrategy", "{topic}-value"),
    (STRATEGY + "RecordNameStrategy", "io.confluent.connect.avro.ConnectDefault"),
    ("TopicRecordNameStrategy", "{topic}-io.confluent.connect.avro.ConnectDefault")])
def test_datagen_source_is_read_by_confluent(start_worker, bed, registry, strategy,
                                             subject):
    w = start_worker(FAST)
    topic = bed.unique_topic("avro-out")
    config = {"connector.class": "datagen", "topic": topic, "count": "20",
              "records.per.second": "0",
              **converters(AVRO, registry, **{"value.subject.name.strategy": strategy})}
    create(w, "gen", config)
    messages = consume(bed, topic, 20)
    values = AvroDeserializer(client(registry))
    keys = AvroDeserializer(client(registry))
    got = [values(m.value(), context(topic)) for m in messages]
    assert sorted(v["seq"] for v in got) == list(range(20))
    assert all(set(v) == {"seq", "task", "order_id", "customer", "item", "quantity",
                          "price_cents"} for v in got)
    # datagen's keys are strings: Connect's string schema, registered as "string"
    assert all(keys(m.key(), context(topic, True)).isdigit() for m in messages)
    subjects = client(registry).get_subjects()
    assert subject.format(topic=topic) in subjects
    assert f"{topic}-key" in subjects


def test_file_source_encodes_json_lines_under_the_latest_schema(start_worker, bed,
                                                                 registry, tmp_path):
    w = start_worker(FAST)
    topic = bed.unique_topic("avro-lines")
    registry.register(f"{topic}-value", ORDER)
    source = tmp_path / "in.jsonl"
    rows = [{**expected(i), "price": f"{i}.25", "day": "2024-01-02",
             "at": "2024-01-02T03:04:05.678Z"} for i in range(3)]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source),
              "value.converter": AVRO, "value.converter.schema.registry.url": registry.url,
              "value.converter.use.latest.version": "true",
              "value.converter.auto.register.schemas": "false"}
    create(w, "lines", config)
    messages = consume(bed, topic, 3)
    values = AvroDeserializer(client(registry))
    got = [values(m.value(), context(topic)) for m in messages]
    assert [v["price"] for v in got] == [decimal.Decimal(f"{i}.25") for i in range(3)]
    assert got[2] == {**order(2), "note": "n2"}


def frames(registry, topic):
    """One good record, then the malformed frames of the test, by name."""
    good = serialized(registry, topic, 1)[0]
    string_id = registry.register("other", json.dumps("string"))
    key = good[0]
    return [
        ("good", key, good[1]),
        ("wrong magic", key, b"\x01" + good[1][1:]),
        ("unknown id", key, b"\x00\x00\x00\x7f\xff" + good[1][5:]),
        ("truncated", key, good[1][:9]),
        ("schema mismatch", key, b"\x00" + string_id.to_bytes(4, "big") + b"\x07"),
        ("bad key", b"\x05nokey", good[1]),
        ("good again", key, good[1]),
    ]


def test_malformed_frames_go_to_the_dlq(start_worker, bed, registry, tmp_path):
    w = start_worker(FAST)
    topic, dlq = bed.unique_topic("avro-bad"), bed.unique_topic("avro-dlq")
    create_topic(bed, topic, 1)
    cases = frames(registry, topic)
    produce(bed, topic, [(k, v) for _, k, v in cases])
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry), **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})
    assert json_lines(out, 2) == [expected(0), expected(0)]
    dead = consume(bed, dlq, 5)
    stages = [dlq_headers(m)["__connect.errors.stage"] for m in dead]
    assert stages == ["VALUE_CONVERTER"] * 4 + ["KEY_CONVERTER"]
    offsets = [int(dlq_headers(m)["__connect.errors.offset"]) for m in dead]
    assert offsets == [1, 2, 3, 4, 5]
    reasons = [dlq_headers(m)["__connect.errors.exception.message"] for m in dead]
    assert "magic byte" in reasons[0]
    assert "32767" in reasons[1]
    assert [m.value() for m in dead] == [v for _, _, v in cases[1:6]]
    assert task_state(w, SINK)["state"] == "RUNNING"


def test_malformed_frame_fails_the_task_naming_the_record(start_worker, bed, registry,
                                                         tmp_path):
    w = start_worker(FAST)
    topic = bed.unique_topic("avro-fail")
    create_topic(bed, topic, 1)
    good = serialized(registry, topic, 1)[0]
    produce(bed, topic, [good, (good[0], b"\x00\x00\x00\x7f\xff\x02")])
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry))
    wait_for(lambda: task_state(w, SINK).get("state") == "FAILED", timeout=60,
             what="the task to fail")
    trace = task_state(w, SINK)["trace"]
    assert f"{topic}-0 at offset 1" in trace and "VALUE_CONVERTER" in trace, trace
    assert len(output_lines(out)) <= 1


def test_registry_outage_never_hangs_the_api(start_worker, bed, registry, tmp_path):
    """The registry is down: the task retries max.retries times, then fails
    visibly (automatic restarts are off here, so the state stays put) while
    the REST API answers all along; once the registry is back, a restart
    writes every record."""
    w = start_worker({**FAST, "task.restart.backoff.initial.ms": "0"})
    topic = bed.unique_topic("avro-outage")
    create_topic(bed, topic, 1)
    records = serialized(registry, topic, 3)
    registry.down = True
    produce(bed, topic, records)
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry, **{
        "max.retries": "1", "retries.wait.ms": "200",
        "schema.registry.request.timeout.ms": "2000"}))
    wait_for(lambda: registry.count("GET /schemas/ids/") >= 2, what="the retries")
    failed = wait_for(lambda: task_state(w, SINK).get("state") == "FAILED" and
                      task_state(w, SINK), what="the task to fail")
    assert "schema registry unavailable" in failed["trace"]
    for _ in range(10):  # the REST API answers all along (no time asserted)
        assert w.get(f"/connectors/{SINK}/status").status_code == 200
    assert output_lines(out) == []
    registry.down = False
    assert w.post(f"/connectors/{SINK}/tasks/0/restart").status_code in (200, 202, 204)
    assert json_lines(out, 3) == [expected(i) for i in range(3)]
