"""errors.retry.timeout and errors.retry.delay.max.ms in the converter stages,
as Connect's RetryWithToleranceOperator applies them: a registry converter
whose registry is down is tried again with backoff, so a registry that comes
back within the timeout loses no record and fails no task; once the timeout
is spent, errors.tolerance decides, naming the stage. The same holds where
the converter runs for a transformation that needs a record's structure and
for a sink plugin that takes Connect data (the JDBC sink)."""
import json
import os
import sqlite3
import sys
import uuid

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from kafka_io import create_topic
from worker import output_lines, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "registry"))
from fixtures import (AVRO, client, consume, context, converters,  # noqa: E402
                      create, dlq_headers, file_sink, json_lines, produce, registry,
                      task_state)
from test_registry_avro import expected, serialized  # noqa: E402

pytestmark = pytest.mark.integration

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

__all__ = ["registry"]  # the fixture, imported for pytest

# each registry call answers at once (no retries of the registry client's own)
FAST_REGISTRY = {"max.retries": "0", "retries.wait.ms": "50"}
# failed tasks stay failed: a restart would hide a failure
WORKER = {"offset.flush.interval.ms": "200", "task.restart.backoff.initial.ms": "0"}


def metric(w, name, connector):
    for line in w.get("/metrics").text.splitlines():
        if line.startswith(f'{name}{{connector="{connector}",task="0"}} '):
            return float(line.rsplit(" ", 1)[1])
    return None


def retried_while_down(w, registry, name, path, times=3):
    """Waits until the task has retried times with the registry down and
    is still RUNNING."""
    wait_for(lambda: registry.count(path) >= times and
             (metric(w, "tributary_task_retries_total", name) or 0) >= times,
             timeout=60, what=f"{times} retries of the converter")
    assert task_state(w, name)["state"] == "RUNNING", task_state(w, name)


def retrying(timeout_ms):
    return {"errors.retry.timeout": str(timeout_ms),
            "errors.retry.delay.max.ms": "400"}


def test_sink_converter_retries_until_the_registry_is_back(start_worker, bed, registry,
                                                           tmp_path):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-sink")
    create_topic(bed, topic, 1)
    records = serialized(registry, topic, 5)
    produce(bed, topic, records)
    registry.down = True
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry, **FAST_REGISTRY),
              **retrying(120000))
    retried_while_down(w, registry, SINK, "GET /schemas/ids/")
    assert output_lines(out) == []
    registry.down = False
    assert json_lines(out, 5) == [expected(i) for i in range(5)]
    assert task_state(w, SINK)["state"] == "RUNNING"
    assert metric(w, "tributary_task_restarts_total", SINK) == 0
    assert metric(w, "kafka_connect_task_error_metrics_total_retries", SINK) >= 3
    assert metric(w, "kafka_connect_task_error_metrics_total_record_errors", SINK) == 0


def test_sink_converter_retries_spent_fail_the_task_naming_the_stage(
        start_worker, bed, registry, tmp_path):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-spent")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 2))
    registry.down = True
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry, **FAST_REGISTRY),
              **retrying(1000))
    failed = wait_for(lambda: task_state(w, SINK).get("state") == "FAILED" and
                      task_state(w, SINK), timeout=60, what="the task to fail")
    trace = failed["trace"]
    assert f"{topic}-0 at offset 0" in trace and "KEY_CONVERTER" in trace, trace
    assert "errors.retry.timeout=1000 ms spent" in trace, trace
    assert "schema registry unavailable" in trace, trace
    assert registry.count("GET /schemas/ids/") >= 2  # retried before failing
    assert output_lines(out) == []


def test_sink_converter_retries_spent_go_to_the_dlq(start_worker, bed, registry,
                                                   tmp_path):
    w = start_worker(WORKER)
    topic, dlq = bed.unique_topic("retry-dlq-in"), bed.unique_topic("retry-dlq")
    create_topic(bed, topic, 1)
    records = serialized(registry, topic, 3)
    produce(bed, topic, records)
    registry.down = True
    out = tmp_path / "out.txt"
    file_sink(w, SINK, topic, out, **converters(AVRO, registry, **FAST_REGISTRY),
              **retrying(500), **{
                  "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
                  "errors.deadletterqueue.topic.replication.factor": "1",
                  "errors.deadletterqueue.context.headers.enable": "true"})
    dead = consume(bed, dlq, 3)
    assert [dlq_headers(m)["__connect.errors.stage"] for m in dead] == \
        ["KEY_CONVERTER"] * 3
    assert [m.value() for m in dead] == [v for _, v in records]
    assert all("errors.retry.timeout=500 ms spent" in
               dlq_headers(m)["__connect.errors.exception.message"] for m in dead)
    assert task_state(w, SINK)["state"] == "RUNNING"
    assert output_lines(out) == []


def datagen(topic, count, **extra):
    return {"connector.class": "datagen", "topic": topic, "count": str(count),
            "records.per.second": "0", **extra}


def test_source_converter_retries_until_the_registry_is_back(start_worker, bed,
                                                             registry):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-source")
    registry.down = True
    create(w, "gen", datagen(topic, 20, **converters(AVRO, registry, **FAST_REGISTRY),
                             **retrying(120000)))
    retried_while_down(w, registry, "gen", "POST /subjects/")
    registry.down = False
    messages = consume(bed, topic, 20)
    values = AvroDeserializer(client(registry))
    assert sorted(values(m.value(), context(topic))["seq"] for m in messages) == \
        list(range(20))
    assert task_state(w, "gen")["state"] == "RUNNING"
    assert metric(w, "tributary_task_restarts_total", "gen") == 0


def test_source_converter_retries_spent_fail_the_task_naming_the_stage(
        start_worker, bed, registry):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-source-spent")
    registry.down = True
    create(w, "gen", datagen(topic, 5, **converters(AVRO, registry, **FAST_REGISTRY),
                             **retrying(1000)))
    failed = wait_for(lambda: task_state(w, "gen").get("state") == "FAILED" and
                      task_state(w, "gen"), timeout=60, what="the task to fail")
    assert "KEY_CONVERTER" in failed["trace"], failed["trace"]
    assert "errors.retry.timeout=1000 ms spent" in failed["trace"], failed["trace"]
    assert registry.count("POST /subjects/") >= 2  # retried before failing


def test_source_converter_retries_spent_are_skipped_under_tolerance_all(
        start_worker, bed, registry):
    """KAFKA-18073: spent retries go through errors.tolerance, so under
    all each record is counted as skipped once its retries are spent, not
    dropped unseen, and the task keeps running."""
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-source-all")
    registry.down = True
    create(w, "gen", datagen(topic, 3, **converters(AVRO, registry, **FAST_REGISTRY),
                             **retrying(300), **{"errors.tolerance": "all"}))
    wait_for(lambda: metric(w, "tributary_task_records_dropped_total", "gen") == 3,
             timeout=60, what="3 records skipped under errors.tolerance=all")
    assert metric(w, "tributary_task_retries_total", "gen") >= 3  # each retried first
    assert metric(w, "tributary_task_record_errors_total", "gen") == 3
    assert task_state(w, "gen")["state"] == "RUNNING"


SMT = "org.apache.kafka.connect.transforms."
# a chain that needs the value's structure: the converter runs inside it
EXTRACT_ADDRESS = {"transforms": "Pick", "transforms.Pick.type": SMT + "ExtractField$Value",
                   "transforms.Pick.field": "address"}
BYTE_KEYS = "org.apache.kafka.connect.converters.ByteArrayConverter"


def chain_sink(w, registry, topic, out, timeout_ms):
    """A file sink whose keys need no registry: only the converter the chain
    reads values through waits for it."""
    config = {**converters(AVRO, registry, **FAST_REGISTRY), "key.converter": BYTE_KEYS}
    for name in list(config):
        if name.startswith("key.converter."):
            del config[name]
    file_sink(w, SINK, topic, out, **config, **retrying(timeout_ms), **EXTRACT_ADDRESS)


def test_sink_chain_converter_retries_until_the_registry_is_back(start_worker, bed,
                                                                 registry, tmp_path):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-chain")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 5))
    registry.down = True
    out = tmp_path / "out.txt"
    chain_sink(w, registry, topic, out, 120000)
    retried_while_down(w, registry, SINK, "GET /schemas/ids/")
    assert output_lines(out) == []
    registry.down = False
    assert json_lines(out, 5) == [{"city": f"c{i}"} for i in range(5)]
    assert task_state(w, SINK)["state"] == "RUNNING"
    assert metric(w, "tributary_task_restarts_total", SINK) == 0
    assert metric(w, "kafka_connect_task_error_metrics_total_record_errors", SINK) == 0


def test_sink_chain_converter_retries_spent_fail_the_task_naming_the_stage(
        start_worker, bed, registry, tmp_path):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-chain-spent")
    create_topic(bed, topic, 1)
    produce(bed, topic, serialized(registry, topic, 2))
    registry.down = True
    out = tmp_path / "out.txt"
    chain_sink(w, registry, topic, out, 1000)
    failed = wait_for(lambda: task_state(w, SINK).get("state") == "FAILED" and
                      task_state(w, SINK), timeout=60, what="the task to fail")
    trace = failed["trace"]
    assert f"{topic}-0 at offset 0" in trace and "VALUE_CONVERTER" in trace, trace
    assert "errors.retry.timeout=1000 ms spent" in trace, trace
    assert registry.count("GET /schemas/ids/") >= 2  # retried before failing
    assert output_lines(out) == []


ROW = json.dumps({"type": "record", "name": "Row", "namespace": "retry",
                  "fields": [{"name": "id", "type": "long"},
                             {"name": "name", "type": "string"}]})
ROW_KEY = json.dumps({"type": "record", "name": "RowKey", "namespace": "retry",
                      "fields": [{"name": "id", "type": "long"}]})


def sqlite_rows(path, sql):
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []  # the table is not created yet


def test_typed_sink_converter_retries_until_the_registry_is_back(start_worker, bed,
                                                                 registry, tmp_path):
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-typed")
    create_topic(bed, topic, 1)
    keys = AvroSerializer(client(registry), ROW_KEY)
    values = AvroSerializer(client(registry), ROW)
    produce(bed, topic, [(keys({"id": i}, context(topic, True)),
                          values({"id": i, "name": f"n{i}"}, context(topic)))
                         for i in range(5)])
    registry.down = True
    db = str(tmp_path / "target.db")
    jdbc = f"{SINK}-jdbc"  # its group, connect-<name>, this file's alone
    create(w, jdbc, {"connector.class": "jdbc-sink", "topics": topic,
                      "connection.url": f"jdbc:sqlite:{db}", "auto.create": "true",
                      **converters(AVRO, registry, **FAST_REGISTRY),
                      **retrying(120000)})
    retried_while_down(w, registry, jdbc, "GET /schemas/ids/")
    registry.down = False
    query = f'SELECT id, name FROM "{topic}" ORDER BY id'
    wait_for(lambda: len(sqlite_rows(db, query)) >= 5, timeout=60, what="5 rows")
    assert sqlite_rows(db, query) == [(i, f"n{i}") for i in range(5)]
    assert task_state(w, jdbc)["state"] == "RUNNING"
    assert metric(w, "tributary_task_restarts_total", jdbc) == 0


def test_source_chain_converter_retries_until_the_registry_is_back(start_worker, bed,
                                                                   registry):
    """The chain makes Connect data of the value, which the Avro converter
    writes (its typed form); the key's converter needs no registry, so only
    that typed conversion waits for it."""
    w = start_worker(WORKER)
    topic = bed.unique_topic("retry-source-chain")
    registry.down = True
    value = {"value.converter": AVRO, "value.converter.schema.registry.url": registry.url,
             **{f"value.converter.{k}": v for k, v in FAST_REGISTRY.items()}}
    create(w, "gen", datagen(topic, 20, **value, **retrying(120000), **{
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "transforms": "Seq", "transforms.Seq.type": SMT + "ExtractField$Value",
        "transforms.Seq.field": "seq"}))
    retried_while_down(w, registry, "gen", "POST /subjects/")
    registry.down = False
    messages = consume(bed, topic, 20)
    values = AvroDeserializer(client(registry))
    assert sorted(values(m.value(), context(topic)) for m in messages) == list(range(20))
    assert task_state(w, "gen")["state"] == "RUNNING"
    assert metric(w, "tributary_task_restarts_total", "gen") == 0
