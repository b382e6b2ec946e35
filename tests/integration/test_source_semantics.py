"""Source semantics: producer settings checked at creation, exactly-once
transactions with their offsets in the offsets topic, upsert rows and
message ids."""
import json
import signal
import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from kafka_io import (create_topic, java_partition, offsets_records, read_topic,
                      task_record_key, tombstone)
from worker import wait_for

pytestmark = pytest.mark.integration

# an offsets topic of this run's own: the bed's tributary-offsets may hold
# records of an earlier run's connectors of the same names
OFFSETS = f"offsets-{uuid.uuid4().hex[:8]}"
EOS = {"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "100",
       "offset.storage.topic": OFFSETS}
STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter"}


@pytest.mark.parametrize("key,value", [("acks", "2"), ("compression.type", "brotli"),
                                       ("linger.ms", "-5"), ("linger.ms", "soon")])
def test_invalid_producer_settings_are_400_naming_the_key(worker, bed, key, value):
    config = {"connector.class": "datagen", "topic": bed.unique_topic("p"),
              f"producer.override.{key}": value}
    reply = worker.post("/connectors", json={"name": "bad", "config": config})
    assert reply.status_code == 400
    assert f"Invalid value {value} for configuration producer.override.{key}" in \
        reply.json()["message"]


def test_managed_and_unknown_client_settings_are_refused(worker, bed):
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x",
              "consumer.override.enable.auto.commit": "true",
              "consumer.override.no.such.property": "1"}
    message = worker.post("/connectors", json={"name": "m", "config": config}).json()[
        "message"]
    assert "consumer.override.enable.auto.commit is managed by tributary" in message
    assert "consumer.override.no.such.property" in message
    assert "No such configuration property" in message  # librdkafka's own words


def test_keyed_records_go_to_the_partition_javas_partitioner_picks(worker, bed):
    """A key lands where Connect's producer puts it (murmur2 of its bytes), so that
    it stays in its partition when a team switches; librdkafka's own default
    partitioner (CRC32) would move most keys."""
    topic, count, partitions = bed.unique_topic("keyed"), 200, 4
    create_topic(bed, topic, partitions)
    config = {"connector.class": "datagen", "topic": topic, "count": str(count),
              "records.per.second": "0", **STRINGS}
    assert worker.post("/connectors", json={"name": topic, "config": config}).status_code == 201
    wait_for(lambda: len(read_topic(bed, topic)) >= count, interval=0.5,
             what=f"{count} records in {topic}")
    records = read_topic(bed, topic)
    assert len(records) == count
    misplaced = [(p, k) for p, k, _ in records if p != java_partition(k, partitions)]
    assert misplaced == []
    assert len({p for p, _, _ in records}) == partitions


def read_committed(bed, topic, until, timeout=120):
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"rc-{topic}",
                         "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    values = []

    def done():  # until() sees each batch, not each record (kafka_io.read_raw)
        values.extend(m for m in consumer.consume(1000, 0.5) if not m.error())
        return until(values)
    try:
        wait_for(done, timeout=timeout, interval=0, what="the committed records")
    finally:
        consumer.close()
    return values


def seqs(messages):
    return [json.loads(m.value())["payload"]["seq"] for m in messages]


def test_exactly_once_survives_kill_rounds(start_worker, bed, tmp_path):
    folder = tmp_path / "w"
    topic = bed.unique_topic("eos")
    total = 3000
    config = {"connector.class": "datagen", "topic": topic, "count": str(total),
              "records.per.second": "600", "exactly.once.support": "required",
              "exactly.once.transaction.max.records": "50"}
    w = start_worker(EOS, directory=folder)
    assert w.post("/connectors", json={"name": "eos", "config": config}).status_code == 201
    for round_ in range(3):
        def progressed():
            offsets = w.get("/connectors/eos/offsets").json()["offsets"]
            return offsets and offsets[0]["offset"]["sequence"] > (round_ + 1) * 300
        wait_for(progressed, timeout=60, what=f"progress in round {round_}")
        w.stop(signal.SIGKILL)
        w = start_worker(EOS, directory=folder)
    messages = read_committed(bed, topic, lambda vs: len(set(seqs(vs))) >= total)
    got = seqs(messages)
    assert sorted(got) == list(range(total)), "every sequence number exactly once"


def test_zombie_is_fenced(start_worker, bed):
    topic = bed.unique_topic("zombie")
    config = {"connector.class": "datagen", "topic": topic, "records.per.second": "50",
              "exactly.once.support": "required"}
    w = start_worker(EOS)
    assert w.post("/connectors", json={"name": "z", "config": config}).status_code == 201
    wait_for(lambda: w.get("/connectors/z/offsets").json()["offsets"], what="a commit")
    zombie = Producer({"bootstrap.servers": bed.bootstrap, "transactional.id": "connect-z-0"})
    zombie.init_transactions(30)  # the zombie fences the task ...
    zombie.begin_transaction()
    zombie.produce(topic, value=b'{"zombie":true}')
    zombie.flush(30)

    def restarted():  # ... which fails, restarts, and fences the zombie back
        task = w.get("/connectors/z/status").json()["tasks"][0]
        return task.get("restarts", 0) >= 1 and task["state"] == "RUNNING"
    wait_for(restarted, timeout=60, what="the task to restart after being fenced")
    with pytest.raises(KafkaException):
        zombie.commit_transaction(30)
    messages = read_committed(bed, topic, lambda vs: len(vs) >= 20)
    assert all(b"zombie" not in m.value() for m in messages)


def test_missing_marker_refuses_then_the_allow_option_starts(start_worker, bed):
    topic = bed.unique_topic("marker")
    config = {"connector.class": "datagen", "topic": topic, "records.per.second": "50",
              "exactly.once.support": "required"}
    w = start_worker({**EOS, "task.restart.backoff.initial.ms": "0"})
    assert w.post("/connectors", json={"name": "mk", "config": config}).status_code == 201
    wait_for(lambda: w.get("/connectors/mk/offsets").json()["offsets"], what="a commit")
    assert w.put("/connectors/mk/stop").status_code == 204
    tombstone(bed, OFFSETS, task_record_key("mk", 0))  # the record of its transactions
    assert w.put("/connectors/mk/resume").status_code == 202

    def failed():
        tasks = w.get("/connectors/mk/status").json()["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_for(failed, what="the refusal")
    assert "cannot be trusted" in task["trace"]
    assert "exactly.once.allow.missing.marker=true" in task["trace"]
    reply = w.patch("/connectors/mk/config",
                    json={"exactly.once.allow.missing.marker": "true"})
    assert reply.status_code == 200
    wait_for(lambda: w.get("/connectors/mk/status").json()["tasks"][0]["state"] == "RUNNING",
             what="the task to start")


@pytest.mark.parametrize("support", ["required", "REQUIRED"])
def test_exactly_once_needs_the_worker_setting(worker, bed, support):
    config = {"connector.class": "datagen", "topic": bed.unique_topic("e"),
              "exactly.once.support": support}
    reply = worker.post("/connectors", json={"name": "e", "config": config})
    assert reply.status_code == 400
    assert "exactly.once.source.support=enabled" in reply.json()["message"]


def end_offset(bed, topic):
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"end-{topic}"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1]
    finally:
        consumer.close()


# As in Connect, a worker with exactly.once.source.support=enabled runs its
# sources in transactions unless they opt out; required is read in any case.
@pytest.mark.parametrize("support,worker_eos,transactional", [
    ("REQUIRED", True, True), ("requested", True, True), ("Requested", False, False)])
def test_exactly_once_support_as_the_worker_allows(start_worker, bed, support, worker_eos,
                                                   transactional):
    topic, count = bed.unique_topic("eosmode"), 40
    config = {"connector.class": "datagen", "topic": topic, "count": str(count),
              "records.per.second": "1000", "exactly.once.support": support,
              "exactly.once.transaction.max.records": "10"}
    w = start_worker(EOS if worker_eos else {"offset.flush.interval.ms": "100"})
    name = topic
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    messages = read_committed(bed, topic, lambda vs: len(vs) >= count)
    assert sorted(seqs(messages)) == list(range(count))
    if transactional:  # commit markers take offsets; the offsets went with them
        assert end_offset(bed, topic) > count
        wait_for(lambda: offsets_records(bed, OFFSETS, name).get(
            json.dumps({"task": 0}), ({},))[0].get("sequence") == count,
            what="the last offset in the offsets topic")
    else:
        assert end_offset(bed, topic) == count


@pytest.mark.parametrize("worker_eos,status", [(True, 400), (False, 201)])
def test_requested_is_refused_where_transactions_cannot_honour_it(start_worker, bed,
                                                                   worker_eos, status):
    w = start_worker(EOS if worker_eos else {})
    config = {"connector.class": "datagen", "topic": bed.unique_topic("b"),
              "transaction.boundary": "interval"}  # exactly.once.support=requested
    reply = w.post("/connectors", json={"name": "b", "config": config})
    assert reply.status_code == status, reply.text
    if worker_eos:
        assert "transaction.boundary: tributary supports poll only" in \
            reply.json()["message"]


def test_stored_source_the_enabled_worker_cannot_honour_fails_naming_why(
        start_worker, bed, tmp_path):
    folder = tmp_path / "w"
    w = start_worker({}, directory=folder)
    config = {"connector.class": "datagen", "topic": bed.unique_topic("s"),
              "records.per.second": "10", "transaction.boundary": "interval"}
    assert w.post("/connectors", json={"name": "s", "config": config}).status_code == 201
    w.stop()
    w = start_worker({**EOS, "task.restart.backoff.initial.ms": "0"}, directory=folder)

    def failed():
        tasks = w.get("/connectors/s/status").json()["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_for(failed, what="the task to refuse transactions it cannot honour")
    assert "transaction.boundary: tributary supports poll only" in task["trace"]


def read_all(bed, topic, count):
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"u-{topic}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []

    def enough():
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            got.append(message)
        return len(got) >= count
    try:
        wait_for(enough, timeout=60, interval=0, what=f"{count} records")
    finally:
        consumer.close()
    return got


def test_upsert_rows_and_message_ids(start_worker, bed, tmp_path):
    rows = [{"id": 1, "v": "a", "__row_kind": "insert"},
            {"id": 1, "v": "a", "__row_kind": "update_before"},
            {"id": 1, "v": "c", "__row_kind": "update_after"},
            {"id": 2, "v": "x", "__row_kind": "delete"},
            {"id": 3, "v": "plain"}]
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot a json object\n")
    w = start_worker(STRINGS)
    topic = bed.unique_topic("upsert")
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source),
              "write.mode": "upsert", "primary.key": "id", "message.id.header": "msgid",
              "errors.tolerance": "all"}
    assert w.post("/connectors", json={"name": "u", "config": config}).status_code == 201
    got = read_all(bed, topic, 4)
    assert [(m.key(), m.value()) for m in got] == [
        (b'{"id":1}', b'{"id":1,"v":"a"}'),
        (b'{"id":1}', b'{"id":1,"v":"c"}'),
        (b'{"id":2}', None),
        (b'{"id":3}', b'{"id":3,"v":"plain"}')]
    ids = [dict(m.headers())["msgid"] for m in got]
    assert all(len(i) == 64 for i in ids) and len(set(ids)) == 4
    wait_for(lambda: "needs a JSON object value" in w.logs(), what="the bad row logged")
