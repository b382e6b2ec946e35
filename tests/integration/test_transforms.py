"""Single message transforms on the real broker: a source chain writes the
bytes Connect's JsonConverter would and the headers it leaves, a sink's Filter skips one topic
of two while every partition's lag still reaches 0, a sink chain of the
structural transforms reshapes schema'd records, and a transform's failure
goes to the dead letter queue under stage TRANSFORMATION."""
import json
import time
import uuid

import pytest
from confluent_kafka import Consumer

from kafka_io import create_topic, group_lag, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"


def read_messages(bed, topic, count, timeout=60):
    """The first count messages of topic."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                         "group.id": f"reader-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                got.append(message)
    finally:
        consumer.close()
    return got


def read_records(bed, topic, count, timeout=60):
    """(key, value) bytes of the first count records of topic."""
    return [(m.key(), m.value()) for m in read_messages(bed, topic, count, timeout)]


def test_source_chain_writes_what_connect_writes(start_worker, bed, tmp_path):
    """Connect's quickstart chain (HoistField$Value, InsertField$Value) plus
    ValueToKey and RegexRouter on FileStreamSource lines, with
    JsonConverter keys and values."""
    w = start_worker({"offset.flush.interval.ms": "100"})
    topic = bed.unique_topic("smtsrc")
    routed = f"{topic}-routed"
    create_topic(bed, routed, 1)
    source = tmp_path / "in.txt"
    source.write_text("foo\nbar\n")
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source),
              "key.converter": JSON, "value.converter": JSON,
              "transforms": "MakeMap,InsertSource,Key,Route",
              "transforms.MakeMap.type": "org.apache.kafka.connect.transforms.HoistField$Value",
              "transforms.MakeMap.field": "line",
              "transforms.InsertSource.type":
                  "org.apache.kafka.connect.transforms.InsertField$Value",
              "transforms.InsertSource.static.field": "data_source",
              "transforms.InsertSource.static.value": "test-file-source",
              "transforms.Key.type": "org.apache.kafka.connect.transforms.ValueToKey",
              "transforms.Key.fields": "line",
              "transforms.Route.type": "org.apache.kafka.connect.transforms.RegexRouter",
              "transforms.Route.regex": "(.*)",
              "transforms.Route.replacement": "$1-routed"}
    name = bed.unique_topic("smtsrc")
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    messages = read_messages(bed, routed, 2)
    assert [m.headers() for m in messages] == [None, None]  # a chain adds none
    got = [(m.key(), m.value()) for m in messages]
    expected = []
    for line in ("foo", "bar"):
        key = ('{"schema":{"type":"struct","fields":[{"type":"string","optional":false,'
               '"field":"line"}],"optional":false},"payload":{"line":"%s"}}' % line)
        value = ('{"schema":{"type":"struct","fields":[{"type":"string","optional":false,'
                 '"field":"line"},{"type":"string","optional":true,"field":"data_source"}],'
                 '"optional":false},"payload":{"line":"%s","data_source":"test-file-source"}}'
                 % line)
        expected.append((key.encode(), value.encode()))
    assert got == expected
    wait_for(lambda: routed in w.get(f"/connectors/{name}/topics").json()[name]["topics"],
             what="the routed topic tracked")


def test_sink_filter_skips_one_topic_and_lag_reaches_zero(start_worker, bed, tmp_path):
    w = start_worker({"offset.flush.interval.ms": "200"})
    skipped = bed.unique_topic("smtskip")
    kept = bed.unique_topic("smtkeep")
    for topic in (skipped, kept):
        create_topic(bed, topic, 1)
    produce(bed.bootstrap, skipped, [(0, None, f"skip-{i}".encode()) for i in range(5)])
    produce(bed.bootstrap, kept, [(0, None, f"keep-{i}".encode()) for i in range(5)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": f"{skipped},{kept}",
              "file": str(out), "key.converter": STRING, "value.converter": STRING,
              "transforms": "drop",
              "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
              "transforms.drop.predicate": "isSkipped",
              "predicates": "isSkipped",
              "predicates.isSkipped.type":
                  "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
              "predicates.isSkipped.pattern": skipped}
    name = bed.unique_topic("smtsink")  # a group of its own on a shared bed
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: len(output_lines(out)) >= 5, what="the kept topic's records")
    wait_for(lambda: group_lag(bed, f"connect-{name}") == {(skipped, 0): 0, (kept, 0): 0},
             timeout=60, what="lag 0 on both topics")
    assert output_lines(out) == [f"keep-{i}" for i in range(5)]
    offsets = {(o["partition"]["kafka_topic"], o["offset"]["kafka_offset"])
               for o in w.get(f"/connectors/{name}/offsets").json()["offsets"]}
    assert (kept, 5) in offsets


T = "org.apache.kafka.connect.transforms."


def envelope(fields, payload):
    """JsonConverter's schemas.enable=true bytes of a struct."""
    return json.dumps({"schema": {"type": "struct", "optional": False, "fields": fields},
                       "payload": payload}).encode()


def test_sink_chain_of_structural_transforms(start_worker, bed, tmp_path):
    """ReplaceField, MaskField, Cast, Flatten, HeaderFrom, TimestampConverter
    and SetSchemaMetadata in one chain on JsonConverter records with schemas:
    the FileStreamSink writes the payload each step leaves."""
    w = start_worker({"offset.flush.interval.ms": "200"})
    topic = bed.unique_topic("smtchain")
    create_topic(bed, topic, 1)
    fields = [{"field": "id", "type": "int32", "optional": False},
              {"field": "secret", "type": "string", "optional": False},
              {"field": "ssn", "type": "string", "optional": False},
              {"field": "age", "type": "int64", "optional": False},
              {"field": "at", "type": "int64", "optional": False,
               "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
              {"field": "addr", "type": "struct", "optional": True, "fields": [
                  {"field": "city", "type": "string", "optional": False}]}]
    produce(bed.bootstrap, topic, [
        (0, None, envelope(fields, {"id": i, "secret": "s", "ssn": "123-45", "age": 40 + i,
                                    "at": 1700000000000 + i * 86400000,
                                    "addr": {"city": "Oslo"} if i == 0 else None}))
        for i in range(2)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "key.converter": STRING, "value.converter": JSON,
              "value.converter.schemas.enable": "true",
              "transforms": "drop,mask,cast,flat,head,when,meta",
              "transforms.drop.type": T + "ReplaceField$Value",
              "transforms.drop.exclude": "secret", "transforms.drop.renames": "id:key",
              "transforms.mask.type": T + "MaskField$Value", "transforms.mask.fields": "ssn",
              "transforms.mask.replacement": "***",
              "transforms.cast.type": T + "Cast$Value", "transforms.cast.spec": "age:string",
              "transforms.flat.type": T + "Flatten$Value",
              "transforms.flat.delimiter": "_",
              "transforms.head.type": T + "HeaderFrom$Value",
              "transforms.head.fields": "key", "transforms.head.headers": "k",
              "transforms.head.operation": "move",
              "transforms.when.type": T + "TimestampConverter$Value",
              "transforms.when.field": "at", "transforms.when.target.type": "string",
              "transforms.when.format": "yyyy-MM-dd",
              "transforms.meta.type": T + "SetSchemaMetadata$Value",
              "transforms.meta.schema.name": "com.example.Row"}
    name = bed.unique_topic("smtchain")
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: len(output_lines(out)) >= 2, what="the transformed records")
    assert [json.loads(line) for line in output_lines(out)] == [
        {"ssn": "***", "age": "40", "at": "2023-11-14", "addr_city": "Oslo"},
        {"ssn": "***", "age": "41", "at": "2023-11-15", "addr_city": None}]


def test_transform_failure_goes_to_the_dlq_under_transformation(start_worker, bed,
                                                                 tmp_path):
    """With errors.tolerance=all, a record Cast cannot cast lands in the dead
    letter queue with the stage TRANSFORMATION and Cast's class in its
    context headers; the others reach the sink."""
    w = start_worker({"offset.flush.interval.ms": "200"})
    topic, dlq = bed.unique_topic("smtfail"), bed.unique_topic("smtfail-dlq")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, b'{"n":"1"}'), (0, None, b'{"n":"x"}'),
                                   (0, None, b'{"n":"3"}')])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "key.converter": STRING, "value.converter": JSON,
              "value.converter.schemas.enable": "false",
              "transforms": "cast", "transforms.cast.type": T + "Cast$Value",
              "transforms.cast.spec": "n:int32",
              "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
              "errors.deadletterqueue.topic.replication.factor": "1",
              "errors.deadletterqueue.context.headers.enable": "true"}
    name = bed.unique_topic("smtfail")
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: len(output_lines(out)) >= 2, what="the castable records")
    assert output_lines(out) == ['{"n":1}', '{"n":3}']
    dead = read_messages(bed, dlq, 1)
    assert len(dead) == 1
    message = dead[0]
    assert message.value() == b'{"n":"x"}'  # the record as it was consumed
    headers = {k: v.decode() for k, v in message.headers()}
    assert headers["__connect.errors.stage"] == "TRANSFORMATION"
    assert headers["__connect.errors.class.name"] == T + "Cast$Value"
    assert headers["__connect.errors.topic"] == topic
    assert headers["__connect.errors.offset"] == "1"
    assert "Value (x) was out of range" in headers["__connect.errors.exception.message"]


def test_source_chain_converts_before_the_converters(start_worker, bed, tmp_path):
    """On a source, TimestampConverter and Cast run before JsonConverter: a
    FileStreamSource line becomes a Timestamp field, and Cast$Key makes the
    key's copy of it a plain int64."""
    w = start_worker({"offset.flush.interval.ms": "100"})
    topic = bed.unique_topic("smtsrcts")
    create_topic(bed, topic, 1)
    source = tmp_path / "in.txt"
    source.write_text("2023-11-14\n")
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source),
              "key.converter": JSON, "value.converter": JSON,
              "transforms": "hoist,ts,key,cast",
              "transforms.hoist.type": T + "HoistField$Value",
              "transforms.hoist.field": "day",
              "transforms.ts.type": T + "TimestampConverter$Value",
              "transforms.ts.field": "day", "transforms.ts.target.type": "Timestamp",
              "transforms.ts.format": "yyyy-MM-dd",
              "transforms.key.type": T + "ValueToKey", "transforms.key.fields": "day",
              "transforms.cast.type": T + "Cast$Key", "transforms.cast.spec": "day:int64"}
    name = bed.unique_topic("smtsrcts")
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    [(key, value)] = read_records(bed, topic, 1)
    day = 1699920000000
    assert json.loads(value) == {
        "schema": {"type": "struct", "optional": False, "fields": [
            {"type": "int64", "optional": False, "field": "day", "version": 1,
             "name": "org.apache.kafka.connect.data.Timestamp"}]},
        "payload": {"day": day}}
    assert json.loads(key) == {
        "schema": {"type": "struct", "optional": False, "fields": [
            {"type": "int64", "optional": False, "field": "day"}]},
        "payload": {"day": day}}


# at-least-once, and in transactions with a message id after the chain's
SOURCE_MODES = {
    "at-least-once": ({}, {}, []),
    "exactly-once": ({"exactly.once.source.support": "enabled",
                      "offset.storage.topic": f"offsets-{uuid.uuid4().hex[:8]}"},
                     {"exactly.once.support": "required", "message.id.header": "id"},
                     ["id"]),
}


@pytest.mark.parametrize("mode", sorted(SOURCE_MODES))
def test_source_chain_headers_are_written(start_worker, bed, tmp_path, mode):
    """InsertHeader and HeaderFrom (a field of the value HoistField made)
    put headers on FileStreamSource records and DropHeaders takes one off
    again: Kafka has exactly the headers the chain left, in its order."""
    worker_extra, connector_extra, trailing = SOURCE_MODES[mode]
    w = start_worker({"offset.flush.interval.ms": "100", **worker_extra})
    topic = bed.unique_topic("smtsrchdr")
    create_topic(bed, topic, 1)
    source = tmp_path / "in.txt"
    source.write_text("foo\nbar\n")
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source),
              "value.converter": JSON,
              "transforms": "hoist,origin,scratch,copy,drop",
              "transforms.hoist.type": T + "HoistField$Value",
              "transforms.hoist.field": "line",
              "transforms.origin.type": T + "InsertHeader",
              "transforms.origin.header": "origin",
              "transforms.origin.value.literal": "file",
              "transforms.scratch.type": T + "InsertHeader",
              "transforms.scratch.header": "scratch",
              "transforms.scratch.value.literal": "dropped",
              "transforms.copy.type": T + "HeaderFrom$Value",
              "transforms.copy.fields": "line", "transforms.copy.headers": "text",
              "transforms.copy.operation": "copy",
              "transforms.drop.type": T + "DropHeaders",
              "transforms.drop.headers": "scratch", **connector_extra}
    name = bed.unique_topic("smtsrchdr")
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    messages = read_messages(bed, topic, 2)
    assert len(messages) == 2
    for message, line in zip(messages, ("foo", "bar")):
        headers = message.headers()
        assert headers[:2] == [("origin", b"file"), ("text", line.encode())]
        assert [k for k, _ in headers[2:]] == trailing
        assert json.loads(message.value())["payload"] == {"line": line}
