"""The dead letter queue's topic is created at task start with
errors.deadletterqueue.topic.replication.factor, as Connect does: a factor the
cluster cannot meet (Connect's default 3 on the one-broker bed) fails the task
with the broker's reason; a topic that exists is used as it is."""
import pytest

from kafka_io import create_topic
from worker import wait_for

pytestmark = pytest.mark.integration

STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter"}


def dlq_sink(w, name, topic, dlq, out, **extra):
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
              **extra}
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def task_state(w, name):
    tasks = w.get(f"/connectors/{name}/status").json().get("tasks", [])
    return tasks[0] if tasks else {}


def describe(bed, topic):
    result = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--describe",
                      "--topic", topic)
    return result.stdout if result.returncode == 0 else None


def test_dlq_topic_is_created_at_start_with_its_replication_factor(
        start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic, dlq = bed.unique_topic("dlqrf"), bed.unique_topic("dlqrf-dlq")
    create_topic(bed, topic, 1)
    dlq_sink(w, "rf1", topic, dlq, tmp_path / "out.txt",
             **{"errors.deadletterqueue.topic.replication.factor": "1"})
    wait_for(lambda: task_state(w, "rf1").get("state") == "RUNNING",
             what="the task running")
    # no record failed: the topic is there because the task created it
    text = wait_for(lambda: describe(bed, dlq), what="the dead letter queue topic")
    assert "PartitionCount: 1" in text and "ReplicationFactor: 1" in text, text


def test_default_replication_factor_fails_on_one_broker(start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic, dlq = bed.unique_topic("dlqrf3"), bed.unique_topic("dlqrf3-dlq")
    create_topic(bed, topic, 1)
    dlq_sink(w, "rf3", topic, dlq, tmp_path / "out.txt")  # Connect's default, 3
    wait_for(lambda: task_state(w, "rf3").get("state") == "FAILED",
             what="the task failed")
    trace = task_state(w, "rf3")["trace"]
    assert "errors.deadletterqueue.topic.replication.factor=3" in trace, trace
    assert dlq in trace and "replication factor" in trace.lower(), trace
    assert describe(bed, dlq) is None, "nothing created"


def test_existing_dlq_topic_is_used_as_it_is(start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic, dlq = bed.unique_topic("dlqex"), bed.unique_topic("dlqex-dlq")
    create_topic(bed, topic, 1)
    create_topic(bed, dlq, 2)
    dlq_sink(w, "exists", topic, dlq, tmp_path / "out.txt")  # 3 cannot be met
    wait_for(lambda: task_state(w, "exists").get("state") == "RUNNING",
             what="the task running")
    assert "PartitionCount: 2" in describe(bed, dlq)
