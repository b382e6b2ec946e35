"""Tasks run on a bounded pool: however many connectors there are, the
worker's own thread count stays at the pool size plus a constant. (Each
Kafka client brings librdkafka's own threads, named rdk:*; they are counted
apart.)"""
import os

import pytest

from worker import wait_for

pytestmark = pytest.mark.integration

CONNECTORS = 200


def own_threads(pid):
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except FileNotFoundError:
            continue  # a thread that just ended
    return sorted(n for n in names if not n.startswith("rdk:"))


def test_idle_connectors_hold_no_threads(start_worker, bed):
    w = start_worker({"task.threads": "3"})
    topic = bed.unique_topic("idle")

    def create(i):
        # count=0: the task starts, has nothing to send, and parks
        config = {"connector.class": "datagen", "topic": topic, "count": "0"}
        assert w.post("/connectors", json={"name": f"idle{i}",
                                           "config": config}).status_code == 201

    def all_running(names):
        expanded = w.get("/connectors?expand=status").json()
        return len(expanded) == len(names) and all(
            [t["state"] for t in e["status"]["tasks"]] == ["RUNNING"]
            for e in expanded.values())

    create(0)
    wait_for(lambda: all_running(["idle0"]), what="the first connector to run")
    baseline = own_threads(w.proc.pid)
    assert baseline.count("tb-pool-0") == 1 and "tb-pool-2" in baseline
    assert not any(n.startswith("tb-pool-3") for n in baseline)
    # the idle sources share one producer, whose reports one thread serves
    assert baseline.count("tb-shared-dr") == 1

    for i in range(1, CONNECTORS):
        create(i)
    wait_for(lambda: all_running(range(CONNECTORS)), timeout=120,
             what=f"{CONNECTORS} connectors to run")
    assert own_threads(w.proc.pid) == baseline
