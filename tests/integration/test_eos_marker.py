"""The exactly-once source's progress marker on the real broker: offset
changes over REST win over it, it does not grow as a connector's source
partitions change, each task judges its own missing marker, its group is
one no sink can take, and a marker under tributary 0.1.0's name is found
once after the upgrade."""
import json
import signal
import sqlite3

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from kafka_io import group_lag
from worker import wait_for

pytestmark = pytest.mark.integration

EOS = {"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "100",
       "task.restart.backoff.initial.ms": "0"}
STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter"}


def committed_values(bed, topic):
    """Every committed value of partition 0, read_committed, up to its end."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"rc-{topic}",
                         "isolation.level": "read_committed",
                         "enable.auto.commit": False})
    tp = TopicPartition(topic, 0, OFFSET_BEGINNING)
    consumer.assign([tp])
    end = consumer.get_watermark_offsets(tp, timeout=30)[1]
    values = []

    def at_end():
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            values.append(message.value().decode())
        return consumer.position([tp])[0].offset >= end
    try:
        wait_for(at_end, timeout=60, interval=0, what=f"the end of {topic}")
    finally:
        consumer.close()
    return values


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


# Item 7: the store decides after PATCH or DELETE, not the older marker.
def test_offsets_patch_and_delete_move_an_exactly_once_source(start_worker, bed,
                                                              tmp_path):
    topic = bed.unique_topic("eosoff")
    name = topic
    lines = [f"line-{i}" for i in range(20)]
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    size = path.stat().st_size
    w = start_worker(EOS)
    reply = w.post("/connectors", json={"name": name, "config": file_source(topic, path)})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: stored_position(w, name) == size, what="every line")

    stop(w, name)
    tenth = len("".join(f"{line}\n" for line in lines[:10]))
    body = {"offsets": [{"partition": {"filename": str(path)},
                         "offset": {"position": tenth}}]}
    assert w.patch(f"/connectors/{name}/offsets", json=body).status_code == 200
    assert stored_position(w, name) == tenth  # the generation entry is not shown
    assert w.put(f"/connectors/{name}/resume").status_code == 202
    wait_for(lambda: stored_position(w, name) == size, what="the lines after the tenth")
    assert committed_values(bed, topic) == lines + lines[10:]

    stop(w, name)
    assert w.delete(f"/connectors/{name}/offsets").status_code == 200
    assert w.get(f"/connectors/{name}/offsets").json()["offsets"] == []
    assert w.put(f"/connectors/{name}/resume").status_code == 202
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


# Item 8: a FileStreamSource moved to other files keeps one file in its
# marker. Before, the marker kept every file it ever read: with names of
# 1400 bytes the third one took it past 4096 bytes and every commit failed.
def test_the_marker_does_not_grow_as_source_partitions_change(start_worker, bed,
                                                               tmp_path):
    topic = bed.unique_topic("eosgrow")
    name = topic
    w = start_worker(EOS)
    sent = []
    for round_ in range(4):
        folder = tmp_path
        for level in range(7):  # 7 x 200 bytes of directory names
            folder = folder / (f"{round_}{level}" + "d" * 198)
        folder.mkdir(parents=True)
        path = folder / "in.txt"
        assert len(str(path)) > 1400
        path.write_text(f"file-{round_}\n")
        sent.append(f"file-{round_}")
        config = file_source(topic, path)
        assert w.put(f"/connectors/{name}/config", json=config).status_code in (200, 201)

        def arrived():
            states = [t["state"] for t in tasks(w, name)]
            assert "FAILED" not in states, tasks(w, name)
            offsets = w.get(f"/connectors/{name}/offsets").json()["offsets"]
            return {"partition": {"filename": str(path)},
                    "offset": {"position": len(sent[-1]) + 1}} in offsets
        wait_for(arrived, timeout=60, what=f"file {round_}")
    assert committed_values(bed, topic) == sent


def datagen(topic, tasks_max):
    return {"connector.class": "datagen", "topic": topic, "records.per.second": "50",
            "tasks.max": str(tasks_max), "exactly.once.support": "required"}


def task_sequence(w, name, task):
    for entry in w.get(f"/connectors/{name}/offsets").json()["offsets"]:
        if entry["partition"] == {"task": task}:
            return entry["offset"]["sequence"]
    return None


# Item 9: each task judges its own missing marker.
def test_a_new_task_starts_and_a_task_without_its_marker_refuses(start_worker, bed):
    topic = bed.unique_topic("eostasks")
    name = topic
    w = start_worker(EOS)
    assert w.post("/connectors", json={"name": name, "config": datagen(topic, 1)}
                  ).status_code == 201
    wait_for(lambda: task_sequence(w, name, 0) is not None, what="task 0's commits")

    reply = w.put(f"/connectors/{name}/config", json=datagen(topic, 2))
    assert reply.status_code == 200
    wait_for(lambda: (task_sequence(w, name, 1) or 0) > 0,
             what="the new task 1 to commit")

    stop(w, name)
    deleted = bed.tool("consumer-groups", "--bootstrap-server", bed.bootstrap, "--delete",
                       "--group", f"__tributary-eos-{name}-0")
    assert deleted.returncode == 0, deleted.stderr
    assert w.put(f"/connectors/{name}/resume").status_code == 202

    def judged():
        states = {t["id"]: t for t in tasks(w, name)}
        return (len(states) == 2 and states[0]["state"] == "FAILED"
                and states[1]["state"] == "RUNNING" and states)
    states = wait_for(judged, what="task 0 refused, task 1 running")
    assert "cannot be trusted" in states[0]["trace"]
    before = task_sequence(w, name, 1)
    wait_for(lambda: task_sequence(w, name, 1) > before, what="task 1 to go on")


# Item 10: a sink named <source>-0 used to share the source's marker group;
# its commit on the topic's partition 0 replaced the marker.
def test_a_sink_named_like_a_marker_leaves_the_marker_alone(start_worker, bed,
                                                            tmp_path):
    topic = bed.unique_topic("eosname")
    source = topic
    path = tmp_path / "in.txt"
    path.write_text("a\nb\n")
    w = start_worker(EOS)
    assert w.post("/connectors", json={"name": source,
                                       "config": file_source(topic, path)}
                  ).status_code == 201
    wait_for(lambda: stored_position(w, source) == 4, what="the source's lines")
    sink = {"connector.class": "FileStreamSink", "topics": topic,
            "file": str(tmp_path / "out.txt"), **STRINGS}
    assert w.post("/connectors", json={"name": f"{source}-0", "config": sink}
                  ).status_code == 201
    wait_for(lambda: (topic, 0) in group_lag(bed, f"connect-{source}-0"),
             what="the sink's commit")
    assert w.post(f"/connectors/{source}/tasks/0/restart").status_code == 204
    with path.open("a") as f:
        f.write("c\n")
    wait_for(lambda: stored_position(w, source) == 6, what="the line after the restart")
    assert tasks(w, source)[0]["state"] == "RUNNING"
    assert committed_values(bed, topic) == ["a", "b", "c"]
    assert (topic, 0) in group_lag(bed, f"__tributary-eos-{source}-0")


def test_a_sink_group_may_not_take_a_marker_name(worker, bed):
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x",
              "consumer.override.group.id": "__tributary-eos-orders-0"}
    reply = worker.post("/connectors", json={"name": "g", "config": config})
    assert reply.status_code == 400
    assert "consumer.override.group.id" in reply.json()["message"]
    assert "progress markers" in reply.json()["message"]


# Item 10, the upgrade: a store and marker as tributary 0.1.0 left them after
# a crash between a transaction's commit and its store write (the marker
# under connect-<name>-0 is ahead of the store). The task resumes after the
# marker, writes nothing twice, and the old marker is deleted.
def test_a_marker_under_the_old_name_is_found_once(start_worker, bed, tmp_path):
    topic = bed.unique_topic("eosold")
    name = topic
    lines = [f"line-{i}" for i in range(10)]
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    size = path.stat().st_size
    folder = tmp_path / "w"
    w = start_worker(EOS, directory=folder)
    assert w.post("/connectors", json={"name": name, "config": file_source(topic, path)}
                  ).status_code == 201
    wait_for(lambda: stored_position(w, name) == size, what="every line")
    w.stop(signal.SIGTERM)

    deleted = bed.tool("consumer-groups", "--bootstrap-server", bed.bootstrap, "--delete",
                       "--group", f"__tributary-eos-{name}-0")
    assert deleted.returncode == 0, deleted.stderr
    marker = json.dumps([{"offset": {"position": size},
                          "partition": {"filename": str(path)}}],
                        separators=(",", ":"), sort_keys=True)
    old = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"connect-{name}-0",
                    "enable.auto.commit": False})
    old.commit(offsets=[TopicPartition(topic, 0, 3, metadata=marker)], asynchronous=False)
    old.close()
    store = sqlite3.connect(w.settings["offset.storage.file.filename"])
    with store:  # the store one transaction behind the marker
        store.execute("UPDATE offsets SET offset_value = ? WHERE connector = ? "
                      "AND partition_key LIKE '%filename%'",
                      (json.dumps({"position": len("line-0\n")}), name))
    store.close()

    w = start_worker(EOS, directory=folder)
    wait_for(lambda: stored_position(w, name) == size, what="the marker adopted")
    with path.open("a") as f:
        f.write("line-10\n")
    wait_for(lambda: stored_position(w, name) == size + len("line-10\n"),
             what="the line after the upgrade")
    assert committed_values(bed, topic) == lines + ["line-10"]
    wait_for(lambda: group_lag(bed, f"connect-{name}-0") == {},
             what="the old marker to be deleted")
