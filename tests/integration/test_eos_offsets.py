"""Exactly-once sources keep their offsets as records of the offsets topic,
written in each task's transaction, on the real broker: offsets of many
source partitions (far past the 4096 bytes the progress marker allowed)
survive kill -9 with no record lost or repeated, offset changes over REST
win over the topic's older transactions, each task judges its own missing
record, and the progress marker of the previous release is resumed from
once."""
import json
import signal
import sqlite3

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from kafka_io import (offsets_records, read_committed_to_end, task_record_key, tombstone,
                      zombie_producer)
from test_distributed import cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration

EOS = {"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "100",
       "task.restart.backoff.initial.ms": "0", "offset.storage.replication.factor": "1"}
STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter"}


def eos_worker(start_worker, bed, directory=None):
    """A worker with exactly-once sources and an offsets topic of its own."""
    topic = bed.unique_topic("offsets")
    return start_worker({**EOS, "offset.storage.topic": topic}, directory=directory), topic


def committed_values(bed, topic):
    """Every committed value of topic, read_committed, up to its end."""
    return [value.decode() for _, _, value in read_committed_to_end(bed, [topic])]


def file_source(topic, path):
    return {"connector.class": "FileStreamSource", "topic": topic, "file": str(path),
            "exactly.once.support": "required", **STRINGS}


def stored_position(w, name):
    offsets = w.get(f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"]["position"] if offsets else None


def tasks(w, name):
    return w.get(f"/connectors/{name}/status").json().get("tasks", [])


def stop(w, name):
    assert w.put(f"/connectors/{name}/stop").status_code == 204
    wait_for(lambda: w.get(f"/connectors/{name}/status").json()["connector"]["state"]
             == "STOPPED" and not tasks(w, name), what=f"{name} to stop")


def topic_position(bed, offsets_topic, name, path):
    """The position the offsets topic holds for the file, committed; None when none."""
    entry = offsets_records(bed, offsets_topic, name).get(
        json.dumps({"filename": str(path)}))
    return entry[0]["position"] if entry else None


# Item 7: the store decides after PATCH or DELETE, not the offsets topic's
# older transactions; the next transaction makes the topic agree again. In a
# cluster of two workers the writes go through the worker that is not asked
# the reads, and the offsets topic is the store: PATCH and DELETE write it.
# As in Connect, the change first fences the task's producers: a zombie of the
# task cannot commit over it.
@pytest.mark.parametrize("mode", ["standalone", "cluster"])
def test_offsets_patch_and_delete_move_an_exactly_once_source(start_worker, bed,
                                                              tmp_path, mode):
    topic = bed.unique_topic("eosoff")
    name = topic
    lines = [f"line-{i}" for i in range(20)]
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    size = path.stat().st_size
    if mode == "standalone":
        w, offsets_topic = eos_worker(start_worker, bed)
        workers, prefix = [w], "connect"
    else:
        group = bed.unique_topic("eosoffcluster")
        settings = {**cluster_settings(bed, group), **EOS}
        workers = [start_worker(settings) for _ in range(2)]
        w, offsets_topic, prefix = workers[0], f"{group}-offsets", group
    writer = workers[-1]
    reply = writer.post("/connectors", json={"name": name,
                                             "config": file_source(topic, path)})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: stored_position(w, name) == size, what="every line")

    stop(writer, name)
    wait_for(lambda: all(not tasks(x, name) for x in workers), what="no task anywhere")
    zombie = zombie_producer(bed, f"{prefix}-{name}-0", topic)
    tenth = len("".join(f"{line}\n" for line in lines[:10]))
    body = {"offsets": [{"partition": {"filename": str(path)},
                         "offset": {"position": tenth}}]}
    assert writer.patch(f"/connectors/{name}/offsets", json=body).status_code == 200
    with pytest.raises(KafkaException):
        zombie.commit_transaction(30)
    wait_for(lambda: stored_position(w, name) == tenth,  # the generation is not shown
             what="the patched offset")
    if mode == "cluster":
        assert topic_position(bed, offsets_topic, name, path) == tenth
    assert writer.put(f"/connectors/{name}/resume").status_code == 202
    wait_for(lambda: stored_position(w, name) == size, what="the lines after the tenth")
    assert committed_values(bed, topic) == lines + lines[10:]
    assert topic_position(bed, offsets_topic, name, path) == size

    stop(writer, name)
    wait_for(lambda: all(not tasks(x, name) for x in workers), what="no task anywhere")
    assert writer.delete(f"/connectors/{name}/offsets").status_code == 200
    wait_for(lambda: w.get(f"/connectors/{name}/offsets").json()["offsets"] == [],
             what="no offsets")
    if mode == "cluster":
        assert topic_position(bed, offsets_topic, name, path) is None
    assert writer.put(f"/connectors/{name}/resume").status_code == 202
    wait_for(lambda: stored_position(w, name) == size, what="the lines from the start")
    assert committed_values(bed, topic) == lines + lines[10:] + lines


def test_the_offsets_generation_cannot_be_patched(worker, bed, tmp_path):
    name = bed.unique_topic("gen")
    config = {"connector.class": "FileStreamSource", "topic": name,
              "file": str(tmp_path / "f")}
    assert worker.post("/connectors", json={"name": name, "config": config}
                       ).status_code == 201
    stop(worker, name)
    body = {"offsets": [{"partition": {"tributary.offsets.generation": True},
                         "offset": {"generation": 0}}]}
    reply = worker.patch(f"/connectors/{name}/offsets", json=body)
    assert reply.status_code == 400
    assert "The partition of entry 0 is reserved" in reply.json()["message"]
    body = {"offsets": [{"partition": {"tributary.exactly.once.task": 0},
                         "offset": {"transactions": 9, "generation": 0}}]}
    reply = worker.patch(f"/connectors/{name}/offsets", json=body)
    assert reply.status_code == 400
    assert "The partition of entry 0 is reserved" in reply.json()["message"]


def read_sequences(bed, topic, count):
    """Every task-0 sequence number in topic, read_committed, once count
    distinct ones are committed."""
    def committed():
        return read_committed_to_end(bed, [topic])
    records = wait_for(lambda: (lambda rs: rs if len(rs) >= count else None)(committed()),
                       timeout=90, what=f"{count} records of {topic}")
    return [json.loads(value)["seq"] for _, _, value in records]


# Item 8: the offsets of 200 source partitions (about 12 KB of JSON, where
# the progress marker held 4096 bytes) are committed with every transaction;
# kill -9 twice mid-run, and every record is in the topic exactly once.
def test_offsets_of_many_source_partitions_survive_kill(start_worker, bed, tmp_path):
    topic = bed.unique_topic("eosmany")
    name = topic
    total, slots = 3000, 200
    config = {"connector.class": "datagen", "topic": topic, "count": str(total),
              "records.per.second": "500", "source.partitions": str(slots),
              "exactly.once.support": "required",
              "exactly.once.transaction.max.records": "250",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
    folder = tmp_path / "w"
    w, offsets_topic = eos_worker(start_worker, bed, directory=folder)
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    for round_ in range(2):
        def progressed():
            entries = w.get(f"/connectors/{name}/offsets").json()["offsets"]
            return max((e["offset"]["sequence"] for e in entries), default=0) > \
                (round_ + 1) * 900
        wait_for(progressed, timeout=60, what=f"progress in round {round_}")
        w.stop(signal.SIGKILL)
        w = start_worker({**EOS, "offset.storage.topic": offsets_topic}, directory=folder)
    got = read_sequences(bed, topic, total)
    assert sorted(got) == list(range(total)), "every record exactly once"
    records = offsets_records(bed, offsets_topic, name)
    slot_records = [v for k, (v, _) in records.items() if '"slot"' in k]
    assert len(slot_records) == slots
    assert max(v["sequence"] for v in slot_records) == total
    assert sum(len(key) + len(json.dumps(v)) for v, key in records.values()) > 3 * 4096
    assert records[json.dumps({"tributary.exactly.once.task": 0})][0]["transactions"] > 0


def datagen(topic, tasks_max):
    return {"connector.class": "datagen", "topic": topic, "records.per.second": "50",
            "tasks.max": str(tasks_max), "exactly.once.support": "required"}


def task_sequence(w, name, task):
    for entry in w.get(f"/connectors/{name}/offsets").json()["offsets"]:
        if entry["partition"] == {"task": task}:
            return entry["offset"]["sequence"]
    return None


# Item 9: each task judges its own record. A task whose record of its last
# transaction is gone from the offsets topic (here: tombstoned) while the
# store has its offsets is refused; the other task goes on.
def test_a_new_task_starts_and_a_task_without_its_record_refuses(start_worker, bed):
    topic = bed.unique_topic("eostasks")
    name = topic
    w, offsets_topic = eos_worker(start_worker, bed)
    assert w.post("/connectors", json={"name": name, "config": datagen(topic, 1)}
                  ).status_code == 201
    wait_for(lambda: task_sequence(w, name, 0) is not None, what="task 0's commits")

    reply = w.put(f"/connectors/{name}/config", json=datagen(topic, 2))
    assert reply.status_code == 200
    wait_for(lambda: (task_sequence(w, name, 1) or 0) > 0,
             what="the new task 1 to commit")

    stop(w, name)
    tombstone(bed, offsets_topic, task_record_key(name, 0))
    assert w.put(f"/connectors/{name}/resume").status_code == 202

    def judged():
        states = {t["id"]: t for t in tasks(w, name)}
        return (len(states) == 2 and states[0]["state"] == "FAILED"
                and states[1]["state"] == "RUNNING" and states)
    states = wait_for(judged, what="task 0 refused, task 1 running")
    assert "cannot be trusted" in states[0]["trace"]
    before = task_sequence(w, name, 1)
    wait_for(lambda: task_sequence(w, name, 1) > before, what="task 1 to go on")


def test_a_sink_group_may_not_take_a_marker_name(worker, bed):
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x",
              "consumer.override.group.id": "__tributary-eos-orders-0"}
    reply = worker.post("/connectors", json={"name": "g", "config": config})
    assert reply.status_code == 400
    assert "consumer.override.group.id" in reply.json()["message"]
    assert "tributary's own" in reply.json()["message"]


# The upgrade: a store and a progress marker as the previous release left
# them after a crash between a transaction's commit and its store write (the
# marker ahead of the store), and an offsets topic with nothing of the
# connector yet. The task resumes after the marker and writes nothing twice;
# its next transaction puts its offsets and its record in the offsets topic.
def test_a_task_resumes_once_from_the_previous_release_marker(start_worker, bed,
                                                              tmp_path):
    topic = bed.unique_topic("eosold")
    name = topic
    lines = [f"line-{i}" for i in range(10)]
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    size = path.stat().st_size
    folder = tmp_path / "w"
    w, _ = eos_worker(start_worker, bed, directory=folder)
    assert w.post("/connectors", json={"name": name, "config": file_source(topic, path)}
                  ).status_code == 201
    wait_for(lambda: stored_position(w, name) == size, what="every line")
    w.stop(signal.SIGTERM)

    marker = json.dumps({"generation": 0,
                         "offsets": [{"offset": {"position": size},
                                      "partition": {"filename": str(path)}}]},
                        separators=(",", ":"), sort_keys=True)
    old = Consumer({"bootstrap.servers": bed.bootstrap,
                    "group.id": f"__tributary-eos-{name}-0", "enable.auto.commit": False})
    old.commit(offsets=[TopicPartition(topic, 0, 3, metadata=marker)], asynchronous=False)
    old.close()
    store = sqlite3.connect(w.settings["offset.storage.file.filename"])
    with store:  # the store one transaction behind the marker
        store.execute("UPDATE offsets SET offset_value = ? WHERE connector = ? "
                      "AND partition_key LIKE '%filename%'",
                      (json.dumps({"position": len("line-0\n")}), name))
    store.close()

    w, new_topic = eos_worker(start_worker, bed, directory=folder)  # as if upgraded
    wait_for(lambda: stored_position(w, name) == size, what="the marker adopted")
    with path.open("a") as f:
        f.write("line-10\n")
    wait_for(lambda: stored_position(w, name) == size + len("line-10\n"),
             what="the line after the upgrade")
    assert committed_values(bed, topic) == lines + ["line-10"]
    records = offsets_records(bed, new_topic, name)
    assert records[json.dumps({"filename": str(path)})][0] == {
        "position": size + len("line-10\n")}
    assert json.dumps({"tributary.exactly.once.task": 0}) in records


# Zombie fencing when the task count goes down, standalone: a producer still
# running as task 1 (a zombie, here one of the test's own) cannot commit once
# task 0 of the connector's new, single-task configs has started, since the
# worker fences the previous tasks' ids before it starts them.
def test_a_removed_task_is_fenced_when_the_task_count_goes_down(start_worker, bed):
    topic = bed.unique_topic("eosfence")
    name = topic
    w, _ = eos_worker(start_worker, bed)
    assert w.post("/connectors", json={"name": name, "config": datagen(topic, 2)}
                  ).status_code == 201
    # both tasks have committed: task 0's sequence is compared after the resume
    wait_for(lambda: all((task_sequence(w, name, t) or 0) > 0 for t in (0, 1)),
             what="both tasks' commits")
    stop(w, name)
    zombie = zombie_producer(bed, f"connect-{name}-1", topic)
    reply = w.put(f"/connectors/{name}/config", json=datagen(topic, 1))
    assert reply.status_code == 200
    assert w.put(f"/connectors/{name}/resume").status_code == 202
    before = task_sequence(w, name, 0)
    wait_for(lambda: task_sequence(w, name, 0) > before, what="the single task to go on")
    with pytest.raises(KafkaException):
        zombie.commit_transaction(30)
    assert all(b"zombie" not in value
               for _, _, value in read_committed_to_end(bed, [topic]))
