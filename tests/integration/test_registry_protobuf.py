"""ProtobufConverter against the real Kafka bed and the test registry (tests/registry/):
records written by confluent-kafka's ProtobufSerializer are decoded by a
FileStreamSink (keys too: their message index is [2], not [0]); records written by
tributary's FileStreamSource under the subject's latest schema are decoded by
confluent-kafka's ProtobufDeserializer; the subject name strategies; malformed frames
under errors.tolerance.

The message classes are built at test time: protoc (Debian's protobuf-compiler)
compiles ORDER_PROTO to a descriptor set that goes into the protobuf package's
default pool; no generated code is kept in the tree."""
import json
import os
import pathlib
import shutil
import sys
import uuid

import pytest
from confluent_kafka.schema_registry import record_subject_name_strategy
from confluent_kafka.schema_registry import topic_record_subject_name_strategy
from confluent_kafka.schema_registry.protobuf import (ProtobufDeserializer,
                                                      ProtobufSerializer)
from google.protobuf import descriptor_pool
from google.protobuf import timestamp_pb2  # noqa: F401 (puts Timestamp in the pool)

from kafka_io import create_topic
from worker import output_lines, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "registry"))
from fixtures import (PROTOBUF, client, consume, context,  # noqa: E402
                      converters, create, dlq_headers, file_sink, json_lines,
                      produce, proto_classes, registry, task_state)

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("protoc") is None,
                                 reason="needs protoc: apt-get install protobuf-compiler")]
__all__ = ["registry"]  # the fixture, imported for pytest

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

FAST = {"offset.flush.interval.ms": "200"}

# The key is the file's third message: its frames carry the message index [2].
ORDER_PROTO = """syntax = "proto3";
package tbtest.shop;
import "google/protobuf/timestamp.proto";

enum Kind { KIND_UNKNOWN = 0; A = 1; B = 2; }
message Order {
  int64 id = 1;
  string item = 2;
  Kind kind = 3;
  repeated string tags = 4;
  map<string, int32> counts = 5;
  Address address = 6;
  google.protobuf.Timestamp at = 7;
  double price = 8;
  message Line { string sku = 1; int32 qty = 2; }
  repeated Line lines = 9;
}
message Address { string city = 1; }
message OrderKey { int64 id = 1; }
"""

_classes = {}


def classes():
    """The Order and OrderKey message classes, built once from ORDER_PROTO."""
    if not _classes:
        _classes["Order"], _classes["OrderKey"] = proto_classes(
            ORDER_PROTO, "tbtest_shop.proto", ["tbtest.shop.Order", "tbtest.shop.OrderKey"])
    return _classes["Order"], _classes["OrderKey"]


def order(i):
    Order, _ = classes()
    message = Order(id=i, item=f"item-{i}", kind=1 + i % 2, tags=["x"] * i,
                    counts={"n": i}, price=i + 0.25)
    message.address.city = f"c{i}"
    message.at.FromJsonString("2024-01-02T03:04:05.678Z")
    message.lines.add(sku=f"s{i}", qty=i)
    return message


def expected(i):
    """What tributary's sink writes for order(i) (registry/protobuf/tb_protobuf.h)."""
    return {"id": i, "item": f"item-{i}", "kind": "AB"[i % 2], "tags": ["x"] * i,
            "counts": {"n": i}, "address": {"city": f"c{i}"},
            "at": "2024-01-02T03:04:05.678Z", "price": i + 0.25,
            "lines": [{"sku": f"s{i}", "qty": i}]}


def serialized(registry, topic, count, strategy=None):
    Order, OrderKey = classes()
    conf = {"use.deprecated.format": False}
    if strategy:
        conf["subject.name.strategy"] = strategy
    values = ProtobufSerializer(Order, client(registry), conf=conf)
    keys = ProtobufSerializer(OrderKey, client(registry), conf=conf)
    return [(keys(OrderKey(id=i), context(topic, True)), values(order(i), context(topic)))
            for i in range(count)]


@pytest.mark.parametrize("strategy", [None, record_subject_name_strategy,
                                      topic_record_subject_name_strategy])
def test_sink_decodes_confluent_protobuf(start_worker, bed, registry, tmp_path, strategy):
    w = start_worker(FAST)
    topic = bed.unique_topic("pb-in")
    create_topic(bed, topic, 1)
    records = serialized(registry, topic, 5, strategy)
    assert records[0][0][5:7] == b"\x02\x04"  # the key's message index: [2]
    assert records[0][1][5:6] == b"\x00"  # the value's: [0]
    produce(bed, topic, records)
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(PROTOBUF, registry))
    assert json_lines(out, 5) == [expected(i) for i in range(5)]
    subjects = client(registry).get_subjects()
    if strategy is None:
        assert sorted(subjects) == [f"{topic}-key", f"{topic}-value"]
    elif strategy is record_subject_name_strategy:
        assert sorted(subjects) == ["tbtest.shop.Order", "tbtest.shop.OrderKey"]
    else:
        assert sorted(subjects) == [f"{topic}-tbtest.shop.Order",
                                    f"{topic}-tbtest.shop.OrderKey"]


def mapped(worker, name):
    """Whether the worker's process maps a file of that name."""
    with open(f"/proc/{worker.proc.pid}/maps") as f:
        return any(line.endswith("/" + name) or f"/{name}." in line
                   for line in f.read().splitlines())


def install(tmp_path, monkeypatch, with_module):
    """Copies the binary to tmp_path/bin (and its Protobuf module to
    tmp_path/lib/tributary, as `cmake --install` lays them out) and makes it
    the one the workers run. Returns the copy's path."""
    built = pathlib.Path(os.environ["TRIBUTARY_BIN"])
    binary = tmp_path / "bin" / "tributary"
    binary.parent.mkdir()
    shutil.copy(built, binary)
    if with_module:
        (tmp_path / "lib" / "tributary").mkdir(parents=True)
        shutil.copy(built.parent / "tributary-protobuf.so", tmp_path / "lib" / "tributary")
    monkeypatch.setenv("TRIBUTARY_BIN", str(binary))
    return binary


@pytest.mark.parametrize("layout", ["built", "installed"])
def test_libprotobuf_is_loaded_only_when_a_schema_is_compiled(start_worker, bed, registry,
                                                               tmp_path, monkeypatch,
                                                               layout):
    """registry/protobuf/tb_protobuf_module.h: an idle worker does not pay libprotobuf's
    resident memory; the Protobuf module comes in with the first schema, from
    beside the binary (a build directory) or from lib/tributary beside its bin/."""
    if layout == "installed":
        install(tmp_path, monkeypatch, with_module=True)
    w = start_worker(FAST)
    assert not mapped(w, "libprotobuf.so") and not mapped(w, "tributary-protobuf.so")
    topic = bed.unique_topic("pb-lazy")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 1))
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(PROTOBUF, registry))
    assert json_lines(out, 1) == [expected(0)]
    assert mapped(w, "libprotobuf.so") and mapped(w, "tributary-protobuf.so")


def test_a_binary_without_its_module_says_where_it_looked(start_worker, bed, registry,
                                                          tmp_path, monkeypatch):
    alone = install(tmp_path, monkeypatch, with_module=False)
    w = start_worker(FAST)
    topic = bed.unique_topic("pb-nomodule")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 1))
    file_sink(w, SINK, topic, tmp_path / "out.txt", **converters(PROTOBUF, registry))
    wait_for(lambda: task_state(w, SINK).get("state") == "FAILED", timeout=60,
             what="the task to fail")
    where = f"tributary-protobuf.so is neither in {alone.parent} nor in {alone.parent}/../lib"
    assert "Protobuf is not available" in task_state(w, SINK)["trace"]
    assert where in task_state(w, SINK)["trace"]
    assert any("task failed" in line and where in line for line in w.logs().splitlines())


def test_file_source_encodes_json_lines_under_the_latest_schema(start_worker, bed,
                                                                 registry, tmp_path):
    w = start_worker(FAST)
    topic = bed.unique_topic("pb-lines")
    registry.register(f"{topic}-value", ORDER_PROTO, "PROTOBUF")
    source = tmp_path / "in.jsonl"
    rows = [expected(i) for i in range(3)]
    rows[1] = {"id": "1", "item": "item-1", "kind": 2, "tags": ["x"],  # Protobuf JSON
               "counts": {"n": 1}, "address": {"city": "c1"},
               "at": "2024-01-02T03:04:05.678Z", "price": 1.25,
               "lines": [{"sku": "s1", "qty": 1}]}
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source),
              "value.converter": PROTOBUF,
              "value.converter.schema.registry.url": registry.url,
              "value.converter.use.latest.version": "true",
              "value.converter.auto.register.schemas": "false"}
    create(w, "lines", config)
    messages = consume(bed, topic, 3)
    Order, _ = classes()
    values = ProtobufDeserializer(Order, {"use.deprecated.format": False}, client(registry))
    got = [values(m.value(), context(topic)) for m in messages]
    assert [m.value()[5] for m in messages] == [0, 0, 0]  # message index [0]
    assert got == [order(i) for i in range(3)]


def test_file_source_without_a_schema_says_what_to_do(start_worker, bed, registry,
                                                      tmp_path):
    w = start_worker(FAST)
    topic = bed.unique_topic("pb-noschema")
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": 1}\n')
    create(w, "lines", {"connector.class": "FileStreamSource", "topic": topic,
                        "file": str(source), "value.converter": PROTOBUF,
                        "value.converter.schema.registry.url": registry.url})
    wait_for(lambda: task_state(w, "lines").get("state") == "FAILED", timeout=60,
             what="the task to fail")
    trace = task_state(w, "lines")["trace"]
    assert "use.latest.version" in trace and ".proto" in trace, trace


def frames(registry, topic):
    """One good record, then the malformed frames of the test, by name."""
    good = serialized(registry, topic, 2)[1]
    key, value = good
    schema_id = value[1:5]
    string_id = registry.register("other", '"string"')  # an AVRO schema
    return [
        ("good", key, value),
        ("wrong magic", key, b"\x01" + value[1:]),
        ("unknown id", key, b"\x00\x00\x00\x7f\xff" + value[5:]),
        ("truncated", key, value[:11]),  # inside the item string
        ("bad message index", key, b"\x00" + schema_id + b"\x02\x0a" + value[6:]),
        ("schema mismatch", key, b"\x00" + string_id.to_bytes(4, "big") + b"\x00\x08"),
        ("bad key", b"\x00" + schema_id + b"\x02\x04\x08\x80", value),
        ("good again", key, value),
    ]


def test_malformed_frames_go_to_the_dlq(start_worker, bed, registry, tmp_path):
    w = start_worker(FAST)
    topic, dlq = bed.unique_topic("pb-bad"), bed.unique_topic("pb-dlq")
    create_topic(bed, topic, 1)
    cases = frames(registry, topic)
    produce(bed, topic, [(k, v) for _, k, v in cases])
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(PROTOBUF, registry), **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})
    assert json_lines(out, 2) == [expected(1), expected(1)]
    dead = consume(bed, dlq, 6)
    headers = [dlq_headers(m) for m in dead]
    assert [h["__connect.errors.stage"] for h in headers] == \
        ["VALUE_CONVERTER"] * 5 + ["KEY_CONVERTER"]
    assert [int(h["__connect.errors.offset"]) for h in headers] == [1, 2, 3, 4, 5, 6]
    reasons = [h["__connect.errors.exception.message"] for h in headers]
    assert "magic byte" in reasons[0]
    assert "32767" in reasons[1]
    assert "not a valid tbtest.shop.Order" in reasons[2]
    assert "message index [5]" in reasons[3]
    assert "AVRO" in reasons[4]
    assert "not a valid tbtest.shop.OrderKey" in reasons[5]
    assert [m.value() for m in dead] == [v for _, _, v in cases[1:7]]
    assert task_state(w, SINK)["state"] == "RUNNING"
    assert len(output_lines(out)) == 2



SMT = "org.apache.kafka.connect.transforms."


def test_sink_chain_extracts_a_field_of_confluent_protobuf(start_worker, bed, registry,
                                                           tmp_path):
    """ExtractField$Value on Orders ProtobufSerializer wrote: the message is
    Connect data (its enum, map, repeated message and Timestamp included), and
    the sink gets the nested Address; ExtractField$Key reads the keys, the
    file's third message (message index [2])."""
    w = start_worker(FAST)
    topic = bed.unique_topic("pb-smt-in")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 3))
    out = tmp_path / "city.txt"
    file_sink(w, f"{SINK}-extract", topic, out, **converters(PROTOBUF, registry),
              **{"transforms": "Pick,Key",
                 "transforms.Pick.type": SMT + "ExtractField$Value",
                 "transforms.Pick.field": "address",
                 "transforms.Key.type": SMT + "ExtractField$Key",
                 "transforms.Key.field": "id"})
    assert json_lines(out, 3) == [{"city": f"c{i}"} for i in range(3)]


def message_class(text, name):
    """The class of message name in the .proto text, built with protoc."""
    return proto_classes(text, "derived.proto", [name], descriptor_pool.DescriptorPool())[0]


def test_source_chain_structs_are_read_by_confluent(start_worker, bed, registry,
                                                     tmp_path):
    """HoistField$Value and InsertField$Value on FileStreamSource lines: the
    struct they make goes out under a proto3 schema derived from it and
    registered under the topic's subject; ProtobufDeserializer reads it."""
    w = start_worker(FAST)
    topic = bed.unique_topic("pb-smt-out")
    source = tmp_path / "in.txt"
    source.write_text("foo\nbar\n")
    create(w, "chain", {
        "connector.class": "FileStreamSource", "topic": topic, "file": str(source),
        "value.converter": PROTOBUF, "value.converter.schema.registry.url": registry.url,
        "transforms": "MakeMap,InsertSource",
        "transforms.MakeMap.type": SMT + "HoistField$Value",
        "transforms.MakeMap.field": "line",
        "transforms.InsertSource.type": SMT + "InsertField$Value",
        "transforms.InsertSource.static.field": "data_source",
        "transforms.InsertSource.static.value": "test-file-source"})
    messages = consume(bed, topic, 2)
    text = client(registry).get_latest_version(f"{topic}-value").schema.schema_str
    assert "optional string data_source = 2;" in text, text
    Line = message_class(text, "ConnectDefault")
    values = ProtobufDeserializer(Line, {"use.deprecated.format": False}, client(registry))
    got = [values(m.value(), context(topic)) for m in messages]
    assert [(v.line, v.data_source) for v in got] == [("foo", "test-file-source"),
                                                     ("bar", "test-file-source")]
