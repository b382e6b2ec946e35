"""JsonSchemaConverter against the real Kafka bed and the test registry: records
written by confluent-kafka's JSONSerializer are decoded by a FileStreamSink;
records written by tributary's sources are read by JSONDeserializer; values that
break the schema follow errors.tolerance."""
import json
import os
import sys
import uuid

import pytest
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

from kafka_io import create_topic

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "registry"))
from fixtures import (JSON_SCHEMA, client, consume, context, converters,  # noqa: E402
                      create, dlq_headers, file_sink, json_lines, produce, registry)

pytestmark = pytest.mark.integration

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

__all__ = ["registry"]

FAST = {"offset.flush.interval.ms": "200"}

USER = json.dumps({
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "User",
    "type": "object", "required": ["id", "name"], "additionalProperties": False,
    "properties": {"id": {"type": "integer", "minimum": 0},
                   "name": {"type": "string", "pattern": "^[a-z]+$"},
                   "tags": {"type": "array", "items": {"type": "string"}}}})
KEY = json.dumps({"title": "UserKey", "type": "object",
                  "properties": {"id": {"type": "integer"}}})


def test_sink_decodes_confluent_json_schema(start_worker, bed, registry, tmp_path):
    w = start_worker(FAST)
    topic = bed.unique_topic("js-in")
    create_topic(bed, topic, 1)
    values = JSONSerializer(USER, client(registry))
    keys = JSONSerializer(KEY, client(registry))
    users = [{"id": i, "name": "abc"[: i + 1], "tags": ["t"] * i} for i in range(3)]
    produce(bed, topic, [(keys({"id": u["id"]}, context(topic, True)),
                          values(u, context(topic))) for u in users])
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(JSON_SCHEMA, registry))
    assert json_lines(out, 3) == users


def test_datagen_source_is_read_by_confluent(start_worker, bed, registry):
    w = start_worker(FAST)
    topic = bed.unique_topic("js-out")
    create(w, "gen", {"connector.class": "datagen", "topic": topic, "count": "10",
                      "records.per.second": "0", "shape": "users",
                      **converters(JSON_SCHEMA, registry)})
    messages = consume(bed, topic, 10)
    values = JSONDeserializer(None, schema_registry_client=client(registry))
    got = [values(m.value(), context(topic)) for m in messages]
    assert sorted(v["seq"] for v in got) == list(range(10))
    schema = client(registry).get_latest_version(f"{topic}-value").schema
    assert json.loads(schema.schema_str)["title"] == "ConnectDefault"


def test_values_that_break_the_schema_go_to_the_dlq(start_worker, bed, registry,
                                                     tmp_path):
    w = start_worker(FAST)
    topic = bed.unique_topic("js-lines")
    registry.register(f"{topic}-value", USER, "JSON")
    source = tmp_path / "in.jsonl"
    rows = [{"id": 1, "name": "ok"}, {"id": -1, "name": "neg"}, {"id": 2, "name": "UP"},
            {"id": 3}, {"id": 4, "name": "fine", "extra": 1}, {"id": 5, "name": "end"}]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    create(w, "lines", {
        "connector.class": "FileStreamSource", "topic": topic, "file": str(source),
        "value.converter": JSON_SCHEMA,
        "value.converter.schema.registry.url": registry.url,
        "value.converter.use.latest.version": "true",
        "value.converter.auto.register.schemas": "false",
        "errors.tolerance": "all", "errors.log.enable": "true"})
    messages = consume(bed, topic, 2)
    values = JSONDeserializer(USER, schema_registry_client=client(registry))
    assert [values(m.value(), context(topic)) for m in messages] == [rows[0], rows[5]]
    logs = w.logs()
    for keyword in ("minimum", "pattern", "required", "additionalProperties"):
        assert keyword in logs, keyword


def test_sink_sends_undecodable_frames_to_the_dlq(start_worker, bed, registry, tmp_path):
    w = start_worker(FAST)
    topic, dlq = bed.unique_topic("js-bad"), bed.unique_topic("js-dlq")
    create_topic(bed, topic, 1)
    schema_id = registry.register(f"{topic}-value", USER, "JSON")
    header = b"\x00" + schema_id.to_bytes(4, "big")
    produce(bed, topic, [(None, header + b'{"id":1,"name":"a"}'), (None, b"{}"),
                         (None, header + b'{"id":'), (None, header + b'{"id":2,"name":"b"}')])
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(JSON_SCHEMA, registry), **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})
    assert json_lines(out, 2) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    dead = consume(bed, dlq, 2)
    assert [dlq_headers(m)["__connect.errors.stage"] for m in dead] == ["VALUE_CONVERTER"] * 2
