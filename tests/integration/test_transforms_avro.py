"""Transforms that need a record's structure, on Avro topics (the test registry
in tests/registry/): a source chain whose structs AvroConverter writes and
confluent-kafka's AvroDeserializer reads, and a sink chain over records that
confluent-kafka's AvroSerializer wrote."""
import base64
import decimal
import json
import os
import sys

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from kafka_io import create_topic

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "registry"))
from fixtures import (AVRO, client, consume, context, converters, create,  # noqa: E402
                      file_sink, json_lines, produce, registry)

pytestmark = pytest.mark.integration
__all__ = ["registry"]  # the fixture, imported for pytest

FAST = {"offset.flush.interval.ms": "200"}
SMT = "org.apache.kafka.connect.transforms."


def test_source_chain_structs_are_read_by_confluent(start_worker, bed, registry,
                                                     tmp_path):
    """HoistField, InsertField, ValueToKey and RegexRouter on FileStreamSource
    lines: the structs they make are registered under the routed topic's
    subjects, as Confluent's AvroConverter names and shapes them."""
    w = start_worker(FAST)
    topic = bed.unique_topic("avro-smt")
    routed = f"{topic}-routed"
    create_topic(bed, routed, 1)
    source = tmp_path / "in.txt"
    source.write_text("foo\nbar\n")
    create(w, "avro-chain", {
        "connector.class": "FileStreamSource", "topic": topic, "file": str(source),
        **converters(AVRO, registry),
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
    values = AvroDeserializer(client(registry))
    keys = AvroDeserializer(client(registry))
    assert [values(m.value(), context(routed)) for m in messages] == [
        {"line": "foo", "data_source": "test-file-source"},
        {"line": "bar", "data_source": "test-file-source"}]
    assert [keys(m.key(), context(routed, True)) for m in messages] == [
        {"line": "foo"}, {"line": "bar"}]
    schema = json.loads(
        client(registry).get_latest_version(f"{routed}-value").schema.schema_str)
    assert schema == {
        "type": "record", "name": "ConnectDefault", "namespace": "io.confluent.connect.avro",
        "fields": [{"name": "line", "type": "string"},
                   {"name": "data_source", "type": ["null", "string"], "default": None}]}
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
