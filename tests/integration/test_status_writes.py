"""Status must say what runs (issue 34 item 6): a status write that fails is written again
once the store takes writes (connectors/runtime/worker/tb_status_writer.h), so that every
worker of a cluster, not only the one running a task, shows it RUNNING while its records flow.

The status topic's writes are refused with the test seam TB_STATUS_WRITE_HOLD (core/tb_seam.h)
while a file exists, as on a broker that does not take them, while the task starts; the seam
tells each refused write in that file. Nothing of the shared bed is stopped."""

from __future__ import annotations

import pytest

from kafka_io import read_raw
from test_distributed import cluster_settings, worker_id
from worker import wait_for

pytestmark = pytest.mark.integration


def task_state(worker, name):
    reply = worker.get(f"/connectors/{name}/tasks/0/status")
    return reply.json() if reply.status_code == 200 else None


def test_a_refused_status_write_is_written_once_the_store_takes_writes(start_worker, bed,
                                                                       tmp_path):
    hold = tmp_path / "status-hold"
    group = bed.unique_topic("status-hold")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings, env={"TB_STATUS_WRITE_HOLD": str(hold)})
               for _ in range(2)]
    wait_for(lambda: all(w.get("/connectors").status_code == 200 for w in workers),
             timeout=60, what="both workers answering")
    topic = bed.unique_topic("status-hold-out")
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line-{i}\n" for i in range(100)))

    hold.write_text("")  # from here every status write is refused
    config = {"connector.class": "FileStreamSource", "topic": topic,
              "file": str(source_file), "tasks.max": "1"}
    reply = workers[0].post("/connectors", json={"name": "held", "config": config})
    assert reply.status_code == 201, reply.text
    # the task runs and its records flow while its RUNNING state cannot be written
    values = read_raw(bed.bootstrap, topic, lambda v: len(v) >= 100, timeout=90)
    assert len(values) >= 100, f"{len(values)} records of 100"
    wait_for(lambda: "held 0 RUNNING\n" in hold.read_text(), timeout=60,
             what="the task's RUNNING state refused by the store")
    runner = wait_for(lambda: next((w for w in workers
                                    if (task_state(w, "held") or {}).get("state") == "RUNNING"
                                    and task_state(w, "held")["worker_id"] == worker_id(w)),
                                   None),
                      timeout=30, what="the worker running the task showing it RUNNING")

    hold.unlink()  # the store takes writes again
    with source_file.open("a") as f:
        f.write("".join(f"more-{i}\n" for i in range(20)))
    values = read_raw(bed.bootstrap, topic, lambda v: len(v) >= 120, timeout=90)
    assert len(values) >= 120, f"{len(values)} records of 120"
    # every worker, the one that does not run the task included, shows what runs
    expected = {"state": "RUNNING", "worker_id": worker_id(runner)}
    wait_for(lambda: all({k: (task_state(w, "held") or {}).get(k) for k in expected}
                         == expected for w in workers),
             timeout=60, what="every worker showing the task RUNNING where it runs")
    wait_for(lambda: all(w.get("/connectors/held/status").json()["connector"]["state"]
                         == "RUNNING" for w in workers),
             timeout=60, what="every worker showing the connector RUNNING")
