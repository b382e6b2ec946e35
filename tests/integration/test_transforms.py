"""Single message transforms on the real broker: a source chain writes the
bytes Connect's JsonConverter would, and a sink's Filter skips one topic
of two while every partition's lag still reaches 0."""
import time
import uuid

import pytest
from confluent_kafka import Consumer

from kafka_io import create_topic, group_lag, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"


def read_records(bed, topic, count, timeout=60):
    """(key, value) bytes of the first count records of topic."""
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
                got.append((message.key(), message.value()))
    finally:
        consumer.close()
    return got


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
    got = read_records(bed, routed, 2)
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
