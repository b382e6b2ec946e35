"""Transforms that need a record's structure, on registry topics (the test
registry in tests/registry/): a source chain whose structs AvroConverter and
JsonSchemaConverter write and confluent-kafka's deserializers read, and sink
chains over records that confluent-kafka's serializers wrote."""
import base64
import decimal
import json
import os
import sys

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

from kafka_io import create_topic

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "registry"))
from fixtures import (AVRO, JSON_SCHEMA, client, consume, context,  # noqa: E402
                      converters, create, file_sink, json_lines, produce, registry)

pytestmark = pytest.mark.integration
__all__ = ["registry"]  # the fixture, imported for pytest

FAST = {"offset.flush.interval.ms": "200"}
SMT = "org.apache.kafka.connect.transforms."


def deserializer(cls, registry):
    if cls == AVRO:
        return AvroDeserializer(client(registry))
    return JSONDeserializer(None, schema_registry_client=client(registry))


# what the registry holds for the chain's values
SOURCE_SCHEMAS = {
    AVRO: {"type": "record", "name": "ConnectDefault",
           "namespace": "io.confluent.connect.avro",
           "fields": [{"name": "line", "type": "string"},
                      {"name": "data_source", "type": ["null", "string"],
                       "default": None}]},
    JSON_SCHEMA: {"type": "object", "required": ["line"], "properties": {
        "line": {"type": "string", "connect.index": 0},
        "data_source": {"oneOf": [{"type": "null"}, {"type": "string"}],
                        "connect.index": 1}}},
}


@pytest.mark.parametrize("cls", [AVRO, JSON_SCHEMA])
def test_source_chain_structs_are_read_by_confluent(start_worker, bed, registry,
                                                     tmp_path, cls):
    """HoistField, InsertField, ValueToKey and RegexRouter on FileStreamSource
    lines: the structs they make are registered under the routed topic's
    subjects, as Confluent's converters name and shape them."""
    w = start_worker(FAST)
    topic = bed.unique_topic("registry-smt")
    routed = f"{topic}-routed"
    create_topic(bed, routed, 1)
    source = tmp_path / "in.txt"
    source.write_text("foo\nbar\n")
    create(w, "avro-chain", {
        "connector.class": "FileStreamSource", "topic": topic, "file": str(source),
        **converters(cls, registry),
        "transforms": "MakeMap,InsertSource,Key,Route",
        "transforms.MakeMap.type": SMT + "HoistField$Value",
        "transforms.MakeMap.field": "line",
        "transforms.InsertSource.type": SMT + "InsertField$Value",
        "transforms.InsertSource.static.field": "data_source",
        "transforms.InsertSource.static.value": "test-file-source",
        "transforms.Key.type": SMT + "ValueToKey",
        "transforms.Key.fields": "line",
        "transforms.Route.type": SMT + "RegexRouter",
        "transforms.Route.regex": "(.*)",
        "transforms.Route.replacement": "$1-routed"})
    messages = consume(bed, routed, 2)
    values = deserializer(cls, registry)
    keys = deserializer(cls, registry)
    assert [values(m.value(), context(routed)) for m in messages] == [
        {"line": "foo", "data_source": "test-file-source"},
        {"line": "bar", "data_source": "test-file-source"}]
    assert [keys(m.key(), context(routed, True)) for m in messages] == [
        {"line": "foo"}, {"line": "bar"}]
    schema = json.loads(
        client(registry).get_latest_version(f"{routed}-value").schema.schema_str)
    assert schema == SOURCE_SCHEMAS[cls]
    assert f"{routed}-key" in client(registry).get_subjects()


ORDER = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal",
                                   "precision": 38, "scale": 9}},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "city", "type": "string"}]}},
    ]})


def test_sink_chain_extracts_a_field_of_confluent_avro(start_worker, bed, registry,
                                                      tmp_path):
    """ExtractField$Value on records AvroSerializer wrote: the sink gets the
    nested struct; HoistField$Value on the same records keeps a Decimal that
    no double holds to its last digit."""
    w = start_worker(FAST)
    topic = bed.unique_topic("avro-extract")
    create_topic(bed, topic, 1)
    serializer = AvroSerializer(client(registry), ORDER)
    big = decimal.Decimal("12345678901234567890.123456789")
    produce(bed, topic, [(None, serializer({"id": i, "price": big + i,
                                            "address": {"city": f"c{i}"}},
                                           context(topic))) for i in range(3)])
    out = tmp_path / "city.txt"
    file_sink(w, "extract", topic, out, **converters(AVRO, registry),
              **{"transforms": "Pick", "transforms.Pick.type": SMT + "ExtractField$Value",
                 "transforms.Pick.field": "address"})
    assert json_lines(out, 3) == [{"city": f"c{i}"} for i in range(3)]

    # HoistField hands the whole order over as JSON, the Decimal as the base64
    # of its unscaled bytes (JsonConverter's BASE64): every digit kept
    exact = tmp_path / "order.txt"
    file_sink(w, "hoist", topic, exact, **converters(AVRO, registry),
              **{"transforms": "Wrap", "transforms.Wrap.type": SMT + "HoistField$Value",
                 "transforms.Wrap.field": "order"})
    assert json_lines(exact, 3) == [
        {"order": {"id": i, "price": unscaled_base64(big + i, 9),
                   "address": {"city": f"c{i}"}}} for i in range(3)]


def unscaled_base64(value, scale):
    unscaled = int(value.scaleb(scale))
    size = (unscaled.bit_length() + 8) // 8
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


PRICED = json.dumps({"title": "Priced", "type": "object", "required": ["id", "price"],
                     "properties": {"id": {"type": "integer", "connect.index": 0},
                                    "price": {"type": "number", "connect.index": 1}}})


def test_sink_chain_on_confluent_json_schema(start_worker, bed, registry, tmp_path):
    """ExtractField$Value on records JSONSerializer wrote: the sink gets the
    price alone."""
    w = start_worker(FAST)
    topic = bed.unique_topic("js-smt")
    create_topic(bed, topic, 1)
    serializer = JSONSerializer(PRICED, client(registry))
    produce(bed, topic, [(None, serializer({"id": i, "price": i + 0.5}, context(topic)))
                         for i in range(3)])
    out = tmp_path / "prices.txt"
    file_sink(w, "js-extract", topic, out, **converters(JSON_SCHEMA, registry),
              **{"transforms": "Pick", "transforms.Pick.type": SMT + "ExtractField$Value",
                 "transforms.Pick.field": "price"})
    assert json_lines(out, 3) == [i + 0.5 for i in range(3)]
