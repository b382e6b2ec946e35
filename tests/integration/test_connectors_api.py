"""Kafka Connect's REST API on connectors: every endpoint's success and error
cases, with Connect's shapes, codes and messages."""
import threading

import pytest
import requests

from worker import free_port, wait_for

pytestmark = pytest.mark.integration

DATAGEN = "io.tributary.connect.datagen.DatagenConnector"


def datagen(bed, **extra):
    config = {"connector.class": "datagen", "topic": bed.unique_topic("gen"),
              "records.per.second": "50"}
    config.update(extra)
    return config


def create(w, name, config, **body):
    return w.post("/connectors", json={"name": name, "config": config, **body})


def wait_state(w, name, connector_state, task_state=None, tasks=None):
    def reached():
        status = w.get(f"/connectors/{name}/status").json()
        states = [t["state"] for t in status["tasks"]]
        ok = status["connector"]["state"] == connector_state
        if task_state is not None:
            ok = ok and states and all(s == task_state for s in states)
        if tasks is not None:
            ok = ok and len(states) == tasks
        return status if ok else None
    return wait_for(reached, what=f"{name} to be {connector_state}/{task_state}")


def test_create_returns_201_location_and_info(worker, bed):
    config = datagen(bed, **{"tasks.max": "2"})
    reply = create(worker, "c1", config)
    assert reply.status_code == 201
    assert reply.headers["Location"] == f"{worker.url}/connectors/c1"
    info = reply.json()
    assert info["name"] == "c1"
    assert info["type"] == "source"
    assert info["config"] == {**config, "name": "c1"}
    assert info["tasks"] == [{"connector": "c1", "task": 0},
                             {"connector": "c1", "task": 1}]
    status = wait_state(worker, "c1", "RUNNING", "RUNNING", tasks=2)
    assert status == {
        "name": "c1", "type": "source",
        "connector": {"state": "RUNNING", "worker_id": f"127.0.0.1:{worker.port}",
                      "version": "0.1.0"},
        "tasks": [{"id": i, "state": "RUNNING", "worker_id": f"127.0.0.1:{worker.port}",
                   "version": "0.1.0"} for i in range(2)]}
    # KIP-891 (Connect 4.1): the version is the plugin's, as the plugin list shows it
    listed = worker.get("/connector-plugins").json()
    assert {"class": DATAGEN, "type": "source", "version": "0.1.0"} in listed


def test_create_conflict_and_bad_bodies(worker, bed):
    assert create(worker, "dup", datagen(bed)).status_code == 201
    reply = create(worker, "dup", datagen(bed))
    assert reply.status_code == 409
    assert reply.json() == {"error_code": 409, "message": "Connector dup already exists"}

    reply = worker.post("/connectors", data="{not json", headers={
        "Content-Type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error_code"] == 400
    assert "Malformed JSON" in reply.json()["message"]

    reply = create(worker, "x", {"topic": "t"})
    assert reply.status_code == 400
    assert "contains no connector type" in reply.json()["message"]

    reply = create(worker, "x", {"connector.class": "NoSuchConnector"})
    assert reply.status_code == 400  # Connect answers 500; see the README
    assert reply.json()["message"].startswith(
        "Failed to find any class that implements Connector and which name matches "
        "NoSuchConnector, available connectors are: ")

    reply = create(worker, "x", {**datagen(bed), "name": "y"})
    assert reply.status_code == 400
    assert reply.json()["message"] == (
        "Connector name configuration (y) doesn't match connector name in the URL (x)")

    reply = create(worker, "x", {"connector.class": "datagen", "tasks.max": "0"})
    assert reply.status_code == 400
    message = reply.json()["message"]
    assert message.startswith("Connector configuration is invalid and contains the "
                              "following 2 error(s):\n")
    assert 'Missing required configuration "topic" which has no default value.' in message
    assert "Invalid value 0 for configuration tasks.max: Value must be at least 1" in message
    assert message.endswith("You can also find the above list of errors at the endpoint "
                            "`/connector-plugins/{connectorType}/config/validate`")

    reply = create(worker, "x", {"connector.class": "datagen", "topic": 5})
    assert reply.status_code == 400
    assert "'topic'" in reply.json()["message"]

    reply = create(worker, "x", datagen(bed), tasks=[])
    assert reply.status_code == 400  # Connect: 500 "Unrecognized field"
    assert 'Unrecognized field "tasks"' in reply.json()["message"]

    reply = create(worker, "x", datagen(bed), initial_state="SLEEPING")
    assert reply.status_code == 400
    assert "initial_state" in reply.json()["message"]
    assert create(worker, "  spaced ", datagen(bed)).json()["name"] == "spaced"
    assert worker.get("/connectors").json() == ["dup", "spaced"]


def test_list_and_expand(worker, bed):
    create(worker, "b", datagen(bed))
    create(worker, "a", datagen(bed))
    assert worker.get("/connectors").json() == ["a", "b"]
    wait_state(worker, "a", "RUNNING", "RUNNING")
    expanded = worker.get("/connectors?expand=status&expand=info").json()
    assert set(expanded) == {"a", "b"}
    assert set(expanded["a"]) == {"status", "info"}
    assert expanded["a"]["info"]["name"] == "a"
    assert expanded["a"]["status"]["connector"]["state"] == "RUNNING"
    assert expanded["a"]["status"]["connector"]["version"] == "0.1.0"
    assert {t["version"] for t in expanded["a"]["status"]["tasks"]} == {"0.1.0"}
    only_info = worker.get("/connectors?expand=info").json()
    assert set(only_info["b"]) == {"info"}
    # Connect does not split on commas: an unknown expansion gives empty entries
    assert worker.get("/connectors?expand=status,info").json() == {"a": {}, "b": {}}


def test_initial_states(worker, bed):
    create(worker, "paused", datagen(bed), initial_state="paused")
    create(worker, "stopped", datagen(bed), initial_state="STOPPED")
    # as in Connect, tasks are generated only once a connector is started
    wait_state(worker, "paused", "PAUSED", tasks=0)
    assert worker.get("/connectors/stopped").json()["tasks"] == []
    wait_state(worker, "stopped", "STOPPED", tasks=0)
    assert worker.put("/connectors/paused/resume").status_code == 202
    wait_state(worker, "paused", "RUNNING", "RUNNING", tasks=1)


def test_get_connector_config_tasks_and_404s(worker, bed):
    config = datagen(bed)
    create(worker, "c", config)
    assert worker.get("/connectors/c").json()["name"] == "c"
    assert worker.get("/connectors/c/config").json() == {**config, "name": "c"}
    tasks = worker.get("/connectors/c/tasks").json()
    assert tasks[0]["id"] == {"connector": "c", "task": 0}
    assert tasks[0]["config"]["topic"] == config["topic"]
    # as Connect's worker, each task config names the task class
    assert tasks[0]["config"]["task.class"] == "io.tributary.connect.datagen.DatagenTask"
    tasks_config = worker.get("/connectors/c/tasks-config").json()
    assert list(tasks_config) == ["c-0"]
    assert tasks_config["c-0"] == tasks[0]["config"]
    wait_state(worker, "c", "RUNNING", "RUNNING")
    assert worker.get("/connectors/c/tasks/0/status").json() == {
        "id": 0, "state": "RUNNING", "worker_id": f"127.0.0.1:{worker.port}",
        "version": "0.1.0"}

    for path, message in [
            ("/connectors/nope", "Connector nope not found"),
            ("/connectors/nope/config", "Connector nope not found"),
            ("/connectors/nope/status", "No status found for connector nope"),
            ("/connectors/nope/tasks", "Connector nope not found"),
            ("/connectors/c/tasks/7/status", "No status found for task c-7"),
            ("/connectors/nope/offsets", "Connector nope not found")]:
        reply = worker.get(path)
        assert reply.status_code == 404, path
        assert reply.json() == {"error_code": 404, "message": message}
    assert worker.delete("/connectors/nope").status_code == 404
    assert worker.put("/connectors/nope/pause").json() == {
        "error_code": 404, "message": "Unknown connector nope"}
    assert worker.post("/connectors/c/tasks/9/restart").json() == {
        "error_code": 404, "message": "Task c-9 not found"}


def test_put_config_creates_then_replaces(worker, bed):
    config = datagen(bed)
    reply = worker.put("/connectors/p/config", json=config)
    assert reply.status_code == 201
    assert reply.headers["Location"].endswith("/connectors/p")
    changed = {**config, "records.per.second": "5"}
    reply = worker.put("/connectors/p/config", json=changed)
    assert reply.status_code == 200
    assert reply.json()["config"]["records.per.second"] == "5"
    reply = worker.put("/connectors/p/config", json={**config, "tasks.max": "x"})
    assert reply.status_code == 400
    assert worker.get("/connectors/p/config").json()["records.per.second"] == "5"


def test_config_change_restarts_only_changed_tasks(worker, bed):
    config = datagen(bed, **{"tasks.max": "2"})
    create(worker, "k", config)
    wait_state(worker, "k", "RUNNING", "RUNNING", tasks=2)
    assert worker.put("/connectors/k/config", json=config).status_code == 200
    wait_for(lambda: "config replaced; 2 task(s) unchanged, 0 (re)started"
             in worker.logs(), what="the unchanged tasks to be kept")
    changed = {**config, "records.per.second": "3"}
    assert worker.put("/connectors/k/config", json=changed).status_code == 200
    wait_for(lambda: "config replaced; 0 task(s) unchanged, 2 (re)started"
             in worker.logs(), what="the changed tasks to restart")
    wait_state(worker, "k", "RUNNING", "RUNNING", tasks=2)
    assert worker.get("/connectors/k/tasks").json()[1]["config"][
        "records.per.second"] == "3"


def test_unknown_keys_are_accepted_and_named_once(worker, bed):
    config = datagen(bed, **{"no.such.key": "x", "producer.override.acks": "all"})
    assert create(worker, "u", config).status_code == 201
    wait_for(lambda: "config key 'no.such.key' is not used by" in worker.logs(),
             what="the unused key to be logged")
    assert worker.logs().count("'no.such.key'") == 1
    assert "producer.override.acks" not in worker.logs()


def test_patch_config_merges_and_deletes_keys(worker, bed):
    create(worker, "m", datagen(bed, shape="users"))
    reply = worker.patch("/connectors/m/config",
                         json={"records.per.second": "7", "shape": None})
    assert reply.status_code == 200
    config = reply.json()["config"]
    assert config["records.per.second"] == "7"
    assert "shape" not in config
    assert worker.patch("/connectors/none/config", json={}).status_code == 404
    assert worker.patch("/connectors/m/config", json={"tasks.max": "0"}).status_code == 400


def test_pause_resume_stop_delete(worker, bed):
    create(worker, "life", datagen(bed, **{"tasks.max": "2"}))
    wait_state(worker, "life", "RUNNING", "RUNNING", tasks=2)
    reply = worker.put("/connectors/life/pause")
    assert reply.status_code == 202 and reply.content == b""
    wait_state(worker, "life", "PAUSED", "PAUSED")
    assert worker.put("/connectors/life/pause").status_code == 202  # idempotent
    assert worker.put("/connectors/life/resume").status_code == 202
    wait_state(worker, "life", "RUNNING", "RUNNING")
    reply = worker.put("/connectors/life/stop")
    assert reply.status_code == 204
    wait_state(worker, "life", "STOPPED", tasks=0)
    assert worker.get("/connectors/life/tasks").json() == []
    assert worker.put("/connectors/life/resume").status_code == 202
    wait_state(worker, "life", "RUNNING", "RUNNING", tasks=2)
    assert worker.delete("/connectors/life").status_code == 204
    assert worker.get("/connectors").json() == []


def test_restart_variants(worker, bed):
    create(worker, "r", datagen(bed, **{"tasks.max": "2"}))
    wait_state(worker, "r", "RUNNING", "RUNNING", tasks=2)
    reply = worker.post("/connectors/r/restart")
    assert reply.status_code == 204 and reply.content == b""
    reply = worker.post("/connectors/r/restart?includeTasks=true")
    assert reply.status_code == 202
    body = reply.json()
    assert body["connector"] == {"state": "RESTARTING",
                                 "worker_id": f"127.0.0.1:{worker.port}",
                                 "version": "0.1.0"}
    assert [(t["state"], t["version"]) for t in body["tasks"]] == [
        ("RESTARTING", "0.1.0"), ("RESTARTING", "0.1.0")]
    wait_state(worker, "r", "RUNNING", "RUNNING", tasks=2)
    reply = worker.post("/connectors/r/restart?includeTasks=true&onlyFailed=true")
    assert reply.status_code == 202
    body = reply.json()
    assert body["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in body["tasks"]] == ["RUNNING", "RUNNING"]
    assert worker.post("/connectors/r/tasks/1/restart").status_code == 204
    wait_state(worker, "r", "RUNNING", "RUNNING", tasks=2)
    assert worker.post("/connectors/nope/restart").status_code == 404


def test_topics_endpoints(worker, bed):
    config = datagen(bed)
    create(worker, "t", config)
    wait_for(lambda: worker.get("/connectors/t/topics").json() == {
        "t": {"topics": [config["topic"]]}}, what="the topic to be tracked")
    assert worker.get("/connectors/unknown/topics").json() == {
        "unknown": {"topics": []}}
    reply = worker.put("/connectors/t/topics/reset")
    assert reply.status_code == 202
    assert worker.get("/connectors/t/topics").json() == {"t": {"topics": []}}
    # like Connect, no check that the connector exists
    assert worker.put("/connectors/none/topics/reset").status_code == 202


def test_topic_tracking_can_be_turned_off(start_worker):
    w = start_worker({"topic.tracking.enable": "false"})
    for reply in (w.get("/connectors/t/topics"), w.put("/connectors/t/topics/reset")):
        assert reply.status_code == 403
        assert reply.json() == {"error_code": 403, "message": "Topic tracking is disabled."}
    w = start_worker({"topic.tracking.allow.reset": "false"})
    assert w.get("/connectors/t/topics").json() == {"t": {"topics": []}}
    reply = w.put("/connectors/t/topics/reset")
    assert reply.status_code == 403
    assert reply.json() == {"error_code": 403,
                            "message": "Topic tracking reset is disabled."}


def test_body_limit_gives_413(start_worker, bed):
    w = start_worker({"rest.request.body.max.bytes": "1000"})
    reply = w.post("/connectors", json={"name": "big", "config": {
        "connector.class": "datagen", "topic": "x" * 2000}})
    assert reply.status_code == 413
    assert reply.json()["error_code"] == 413
    assert "rest.request.body.max.bytes" in reply.json()["message"]


def test_concurrent_patches_of_different_keys_all_land(worker, bed):
    """PATCH reads, merges and writes: two at once must not lose either's key."""
    from concurrent.futures import ThreadPoolExecutor
    assert create(worker, "cp", datagen(bed), initial_state="STOPPED").status_code == 201
    keys = [f"patched.key.{i}" for i in range(96)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        replies = list(pool.map(
            lambda key: worker.patch("/connectors/cp/config", json={key: "set"}), keys))
    assert [r.status_code for r in replies] == [200] * len(keys), replies[0].text
    config = worker.get("/connectors/cp/config").json()
    assert [key for key in keys if config.get(key) != "set"] == []


def test_a_slow_offsets_change_holds_up_neither_reads_nor_other_connectors(
        start_worker, bed, tmp_path):
    # an override of bootstrap.servers needs the allowlist to name it
    w = start_worker({"connector.client.config.override.policy": "All",
                      "connector.client.config.override.allowlist": "bootstrap.servers"})
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there
    topic = bed.unique_topic("slow")
    config = {"connector.class": "FileStreamSink", "topics": topic,
              "file": str(tmp_path / "out.txt"),
              "consumer.override.bootstrap.servers": closed,
              "admin.override.bootstrap.servers": closed}
    assert create(w, "slow", config, initial_state="STOPPED").status_code == 201
    offsets = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                            "offset": {"kafka_offset": 5}}]}
    replies = []
    slow = threading.Thread(target=lambda: replies.append(requests.patch(
        w.url + "/connectors/slow/offsets", json=offsets, timeout=120)))
    slow.start()
    wait_for(lambda: closed in w.logs(), what="the group's admin client trying " + closed)

    assert w.get("/connectors").status_code == 200
    assert create(w, "other", datagen(bed, count="1")).status_code == 201
    assert w.get("/connectors/slow/status").json()["connector"]["state"] == "STOPPED"
    assert slow.is_alive(), "the other calls answered while the offsets change ran"
    slow.join(timeout=120)
    assert replies[0].status_code == 500
    assert "no answer from Kafka" in replies[0].json()["message"]
