"""A worker with a few hundred connectors still answers its REST API. Each
connector's Kafka client holds descriptors (each its own producer here:
sources share one by default), so the worker's open files pass 1024, the most
select() can watch: the listeners must not depend on it."""
import os

import pytest

from worker import wait_for

pytestmark = pytest.mark.integration

CONNECTORS = 200


def open_files(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_rest_answers_with_more_open_files_than_select_takes(start_worker, bed, tmp_path):
    w = start_worker({"value.converter": "org.apache.kafka.connect.storage.StringConverter",
                      "connector.producer.sharing.enabled": "false"})
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    topic = bed.unique_topic("many")
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(empty)}
    for i in range(CONNECTORS):
        reply = w.post("/connectors", json={"name": f"many-{i}", "config": config})
        assert reply.status_code == 201, reply.text

    def all_running():
        status = w.get("/connectors?expand=status").json()
        return len(status) == CONNECTORS and all(
            s["status"]["connector"]["state"] == "RUNNING" and s["status"]["tasks"]
            and all(t["state"] == "RUNNING" for t in s["status"]["tasks"])
            for s in status.values())
    wait_for(all_running, timeout=300, what=f"{CONNECTORS} connectors RUNNING")
    assert open_files(w.proc.pid) > 1024
    # new connections, each on a descriptor above 1024
    for _ in range(5):
        assert w.get("/connectors").status_code == 200
