"""Dev mode (librdkafka's in-memory cluster) runs only when asked for, with
--dev or dev=true; a worker that names no broker refuses to start, naming
bootstrap.servers, as Connect 4.2 does (KIP-1161). A store serves the one mode
it was first used in, and nothing is deleted from it outside dev mode."""
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from confluent_kafka import Consumer

from kafka_io import create_topic, produce
from worker import free_port, output_lines, wait_for

pytestmark = pytest.mark.integration

NO_BROKER = {"bootstrap.servers": None}  # the key left out of the worker file
DEV_STORE_REFUSED = "was used in dev mode: its offsets belong to an in-memory Kafka cluster"
KAFKA_STORE_REFUSED = ("belongs to a worker connected to Kafka, and dev mode would drop "
                       "its sink offsets")


def answer(w, path):
    """(response,) once the worker answers; a tuple, since a 503 is falsy."""
    try:
        return (w.get(path),)
    except requests.ConnectionError:
        return None


def test_no_bootstrap_servers_refused_naming_the_key(start_worker):
    w = start_worker(NO_BROKER, wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    logs = w.logs()
    assert "refusing to start: bootstrap.servers is not set" in logs
    assert "3.9's was localhost:9092" in logs and "--dev" in logs
    assert "DEV MODE" not in logs


@pytest.mark.parametrize("ask", ["--dev", "dev=true"])
def test_dev_mode_runs_when_asked_for(start_worker, ask):
    settings, args = (NO_BROKER, ["--dev"]) if ask == "--dev" else ({"dev": "true"}, [])
    w = start_worker(settings, args=args)
    assert "DEV MODE: in-process, in-memory Kafka cluster" in w.logs()
    config = {"connector.class": "datagen", "topic": "dev-orders", "count": "5"}
    assert w.post("/connectors", json={"name": "d", "config": config}).status_code == 201
    wait_for(lambda: [t["state"] for t in w.get("/connectors/d/status").json()["tasks"]]
             == ["RUNNING"], what="the task running on the in-memory cluster")


def test_dev_store_refused_by_a_kafka_worker(start_worker, tmp_path):
    folder = tmp_path / "w"
    dev = start_worker(NO_BROKER, args=["--dev"], directory=folder)
    assert dev.stop() == 0
    w = start_worker(directory=folder, wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    logs = w.logs()
    assert DEV_STORE_REFUSED in logs
    assert "another offset.storage.file.filename, or run it in dev mode" in logs


def test_kafka_store_with_content_refused_by_a_dev_worker(start_worker, bed, tmp_path):
    folder = tmp_path / "w"
    kafka = start_worker(directory=folder)
    config = {"connector.class": "datagen", "topic": bed.unique_topic("k"), "count": "1"}
    assert kafka.post("/connectors", json={"name": "k", "config": config}).status_code == 201
    assert kafka.stop() == 0
    w = start_worker(NO_BROKER, args=["--dev"], directory=folder, wait_healthy=False,
                     expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    logs = w.logs()
    assert KAFKA_STORE_REFUSED in logs
    assert "Give dev mode another offset.storage.file.filename" in logs
    assert "DEV MODE" not in logs


def sink_with_stored_offsets(w, bed, tmp_path, name):
    """A FileStreamSink that has written 5 records and stored offset 5."""
    topic = bed.unique_topic(name)
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"v{i}".encode()) for i in range(5)])
    config = {"connector.class": "FileStreamSink", "topics": topic,
              "file": str(tmp_path / f"{name}.txt"),
              "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    stored = [{"partition": {"kafka_partition": 0, "kafka_topic": topic},
               "offset": {"kafka_offset": 5}}]
    wait_for(lambda: w.get(f"/connectors/{name}/offsets").json()["offsets"] == stored,
             what="offset 5 stored")
    return stored


def test_sink_offsets_kept_at_start_outside_dev_mode(start_worker, bed, tmp_path):
    folder = tmp_path / "w"
    first = start_worker({"offset.flush.interval.ms": "100"}, directory=folder)
    stored = sink_with_stored_offsets(first, bed, tmp_path, "keep")
    assert first.stop() == 0
    # a broker out of reach: not dev mode, so the store and its offsets are kept
    again = start_worker({"bootstrap.servers": f"127.0.0.1:{free_port()}"},
                         directory=folder, wait_healthy=False)
    wait_for(lambda: answer(again, "/connectors/keep/offsets"), what="the REST API")
    assert again.get("/connectors/keep/offsets").json()["offsets"] == stored
    assert "offsets from the last run were dropped" not in again.logs()


def corrupt_offsets(store, connector):
    with sqlite3.connect(store) as db:
        db.execute("UPDATE offsets SET offset_value = '{' WHERE connector = ?", (connector,))


def task_trace_once_failed(w, name):
    tasks = w.get(f"/connectors/{name}/status").json()["tasks"]
    return tasks and tasks[0]["state"] == "FAILED" and tasks[0]["trace"]


def test_unreadable_sink_offsets_fail_the_task(start_worker, bed, tmp_path):
    folder = tmp_path / "w"
    settings = {"offset.flush.interval.ms": "100", "task.restart.backoff.initial.ms": "0"}
    first = start_worker(settings, directory=folder)
    sink_with_stored_offsets(first, bed, tmp_path, "bad")
    assert first.stop() == 0
    corrupt_offsets(first.settings["offset.storage.file.filename"], "bad")
    w = start_worker(settings, directory=folder)
    trace = wait_for(lambda: task_trace_once_failed(w, "bad"), what="the task to fail")
    assert "store: get offsets 'bad': cannot decode a stored offset" in trace
    assert "start offsets of the assigned partitions cannot be resolved" in trace
    assert (tmp_path / "bad.txt").read_text().splitlines() == [f"v{i}" for i in range(5)]


def test_unreadable_source_offsets_fail_the_task(start_worker, bed, tmp_path):
    folder = tmp_path / "w"
    settings = {"offset.flush.interval.ms": "100", "task.restart.backoff.initial.ms": "0"}
    first = start_worker(settings, directory=folder)
    config = {"connector.class": "datagen", "topic": bed.unique_topic("src"), "count": "5"}
    assert first.post("/connectors", json={"name": "src", "config": config}).status_code == 201
    wait_for(lambda: first.get("/connectors/src/offsets").json()["offsets"],
             what="a stored source offset")
    assert first.stop() == 0
    corrupt_offsets(first.settings["offset.storage.file.filename"], "src")
    w = start_worker(settings, directory=folder)
    trace = wait_for(lambda: task_trace_once_failed(w, "src"), what="the task to fail")
    assert "the stored source offsets cannot be read: store: get offsets 'src': " \
        "cannot decode a stored offset" in trace


def stopped_dev_sink(start_worker, tmp_path, topic, tasks_max=1):
    """A dev worker whose sink c1 (tasks_max tasks) read datagen's 5 records
    of topic and was stopped: the worker, the sink's output file and its
    stored offsets."""
    w = start_worker({**NO_BROKER, "offset.flush.interval.ms": "100"}, args=["--dev"])
    source = {"connector.class": "datagen", "topic": topic, "count": "5"}
    assert w.post("/connectors", json={"name": "gen", "config": source}).status_code == 201
    out = tmp_path / "out.txt"
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            "tasks.max": str(tasks_max)}
    assert w.post("/connectors", json={"name": "c1", "config": sink}).status_code == 201

    def all_five_stored():
        offsets = w.get("/connectors/c1/offsets").json()["offsets"]
        return sum(e["offset"]["kafka_offset"] for e in offsets) == 5 and offsets
    offsets = wait_for(all_five_stored, what="the sink's offsets after 5 records")
    assert w.put("/connectors/c1/stop").status_code == 204
    wait_for(lambda: w.get("/connectors/c1/status").json()["connector"]["state"]
             == "STOPPED", what="the sink stopped")
    return w, out, offsets


@pytest.mark.parametrize("tasks_max", [1, 2])
def test_stopped_sink_offsets_altered_in_dev_mode(start_worker, tmp_path, tasks_max):
    w, out, offsets = stopped_dev_sink(start_worker, tmp_path, f"dev-alter{tasks_max}",
                                       tasks_max)
    fullest = max(offsets, key=lambda e: e["offset"]["kafka_offset"])
    back = [{"partition": fullest["partition"], "offset": {"kafka_offset": 0}}]
    reply = requests.patch(w.url + "/connectors/c1/offsets", json={"offsets": back},
                           timeout=60)
    assert reply.status_code == 200, reply.text
    assert w.put("/connectors/c1/resume").status_code == 202
    # the partition's records again: the group moved too, or its offset would win
    again = 5 + fullest["offset"]["kafka_offset"]
    wait_for(lambda: len(output_lines(out)) == again, what="the records read again")


def test_offsets_altered_beside_a_member_still_in_the_group(start_worker, tmp_path):
    """The worker joins the sink's group to commit in dev mode; a member of
    the sink's group still in it (one whose leaving the cluster has not seen
    yet) then shares the group's protocol with it. One of another assignor
    aborted the whole worker in the mock cluster's leader election."""
    w, _, offsets = stopped_dev_sink(start_worker, tmp_path, "dev-beside", 2)
    bootstrap = re.search(r"in-memory Kafka cluster at (\S+) ", w.logs()).group(1)
    # a short session: the cluster elects the group's leader as soon as it
    # (less a second) passed after the worker's member joined, both in it
    member = Consumer({"bootstrap.servers": bootstrap, "group.id": "connect-c1",
                       "partition.assignment.strategy": "cooperative-sticky",
                       "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                       "enable.auto.commit": False})
    try:
        member.subscribe(["dev-beside"])
        wait_for(lambda: member.poll(0.1) or member.assignment(),
                 what="the member in the sink's group")
        back = [{"partition": offsets[0]["partition"], "offset": {"kafka_offset": 0}}]
        with ThreadPoolExecutor(1) as pool:
            patch = pool.submit(requests.patch, w.url + "/connectors/c1/offsets",
                                json={"offsets": back}, timeout=60)
            # the member goes on polling: it takes part in the rebalance
            wait_for(lambda: member.poll(0.1) or patch.done(), timeout=70,
                     what="the PATCH's answer")
            reply = patch.result()
        assert reply.status_code == 200, reply.text
        assert w.get("/").status_code == 200, "the worker runs"
    finally:
        member.close()


def test_stopped_sink_offsets_reset_in_dev_mode(start_worker, tmp_path):
    w, out, _ = stopped_dev_sink(start_worker, tmp_path, "dev-reset")
    reply = requests.delete(w.url + "/connectors/c1/offsets", timeout=60)
    assert reply.status_code == 200, reply.text
    assert w.get("/connectors/c1/offsets").json()["offsets"] == []
    assert w.put("/connectors/c1/resume").status_code == 202
    # every record again: the group went back to the start, or its offsets would win
    wait_for(lambda: len(output_lines(out)) == 10, what="the records read again")
