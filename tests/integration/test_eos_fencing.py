"""Zombie fencing of an exactly-once source in a cluster, as Connect's KIP-618: when the
connector's task configs change, the leader fences every transactional id of the previous
task count and records tasks-fencing-<connector> {"task-count":N} in the config topic
before any task of the new configs begins a transaction. Two workers on one machine, with
two test seams, as a slow broker and a slow worker would be: every fencing starts
FENCING_DELAY_MS late, and task 1 starts TASK1_DELAY_MS late. So a zombie of task 1 is
fenced before task 0 of the new configs commits only if task 0 waits for the fencing: neither
task 1's own init_transactions nor a fencing that runs beside the new tasks comes in time."""
import json

import pytest
from confluent_kafka import KafkaException

from kafka_io import offsets_records, read_committed_to_end, zombie_producer
from test_distributed import cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration

FENCING_DELAY_MS = 5000
TASK1_DELAY_MS = 7000


def fencing_records(bed, group, name):
    """The config topic's tasks-fencing-<name> records, in order, as (value, timestamp)."""
    key = f"tasks-fencing-{name}".encode()
    return [(json.loads(value), ts)
            for _, k, value, ts in read_committed_to_end(bed, [f"{group}-configs"],
                                                         timestamps=True)
            if k == key]


def committed_sequence(bed, group, name, task):
    offsets = offsets_records(bed, f"{group}-offsets", name)
    return offsets.get(json.dumps({"task": task}), ({},))[0].get("sequence", 0)


def connector_state(worker, name):
    status = worker.get(f"/connectors/{name}/status").json()
    return status["connector"]["state"], status.get("tasks", [])


def test_a_zombie_of_a_task_that_stays_cannot_commit_after_the_task_count_changes(
        start_worker, bed):
    group = bed.unique_topic("eosfencing")
    settings = {**cluster_settings(bed, group), "exactly.once.source.support": "enabled",
                "task.restart.backoff.initial.ms": "0"}
    seam = {"TB_EOS_START_DELAY": f"1:{TASK1_DELAY_MS}",
            "TB_FENCING_DELAY_MS": str(FENCING_DELAY_MS)}
    workers = [start_worker(settings, env=seam) for _ in range(2)]
    name, topic = "fenced", bed.unique_topic("eosfencingdata")

    def source(tasks_max):
        return {"connector.class": "datagen", "topic": topic, "tasks.max": str(tasks_max),
                "records.per.second": "50", "exactly.once.support": "required",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false"}
    reply = workers[0].post("/connectors", json={"name": name, "config": source(2)})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: all(committed_sequence(bed, group, name, t) > 0 for t in (0, 1)),
             timeout=90, what="both tasks' first commits")
    assert [v for v, _ in fencing_records(bed, group, name)] == [{"task-count": 2}]

    assert workers[1].put(f"/connectors/{name}/stop").status_code == 204
    wait_for(lambda: all(connector_state(w, name) == ("STOPPED", []) for w in workers),
             timeout=60, what="the connector STOPPED on both workers")
    before = committed_sequence(bed, group, name, 0)
    # a zombie of task 1, the old generation's: an open transaction with a record
    zombie = zombie_producer(bed, f"{group}-{name}-1", topic)

    assert workers[1].put(f"/connectors/{name}/config", json=source(3)).status_code == 200
    assert workers[0].put(f"/connectors/{name}/resume").status_code == 202
    wait_for(lambda: committed_sequence(bed, group, name, 0) > before, timeout=60,
             what="task 0 of the new task configs to commit")
    with pytest.raises(KafkaException):
        zombie.commit_transaction(30)
    assert all(b"zombie" not in value
               for _, _, value in read_committed_to_end(bed, [topic]))

    # the record of the new count came before any record of the new task configs
    records = fencing_records(bed, group, name)
    assert [v for v, _ in records] == [{"task-count": 2}, {"task-count": 3}]
    new_records = [ts for _, _, value, ts in read_committed_to_end(bed, [topic],
                                                                   timestamps=True)
                   if value and (lambda v: v.get("task") == 0 and v["seq"] > before)(
                       json.loads(value))]
    assert new_records and records[-1][1] <= min(new_records)
    wait_for(lambda: all(committed_sequence(bed, group, name, t) > 0 for t in (1, 2)),
             timeout=60, what="tasks 1 and 2 of the new task configs to commit")
