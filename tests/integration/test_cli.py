"""The command line of connect-standalone: connector files after the worker
file create or update their connectors."""
import json
import socket

import pytest

from worker import wait_for

pytestmark = pytest.mark.integration


def test_connector_files_create_connectors(start_worker, bed, tmp_path):
    props = tmp_path / "gen.properties"
    props.write_text(f"name=from-props\nconnector.class=datagen\ntopic={bed.unique_topic('p')}\n")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"name": "from-map", "connector.class": "datagen",
                                 "topic": bed.unique_topic("m")}))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"name": "from-wrapped", "initial_state": "PAUSED",
                                   "config": {"connector.class": "datagen",
                                              "topic": bed.unique_topic("w")}}))
    w = start_worker(args=[str(props), str(plain), str(wrapped)])
    assert w.get("/connectors").json() == ["from-map", "from-props", "from-wrapped"]
    status = w.get("/connectors/from-wrapped/status").json()
    assert status["connector"]["state"] == "PAUSED"
    wait_for(lambda: w.get("/connectors/from-props/status").json()["tasks"],
             what="tasks of from-props")


def test_invalid_connector_file_stops_the_worker(start_worker, tmp_path):
    bad = tmp_path / "bad.properties"
    bad.write_text("name=bad\nconnector.class=datagen\ntasks.max=0\n")
    w = start_worker(args=[str(bad)], wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    assert "connector file" in w.logs() and "tasks.max" in w.logs()


def test_a_taken_rest_port_stops_the_worker_before_any_connector_starts(start_worker,
                                                                         tmp_path):
    """The listeners are bound first, so a worker that cannot have its port says so and
    starts nothing (and no in-memory cluster or Kafka client can take the port first)."""
    props = tmp_path / "gen.properties"
    props.write_text("name=never\nconnector.class=datagen\ntopic=never\n")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        listener = f"http://127.0.0.1:{holder.getsockname()[1]}"
        w = start_worker({"listeners": listener}, args=[str(props)], wait_healthy=False,
                         expect_exit=1)
        assert w.proc.wait(timeout=30) == 1
    logs = w.logs()
    assert f"refusing to start: listener {listener}: cannot bind: Address already in use" \
        in logs, logs
    assert "[connector:never]" not in logs, logs


# Connect's distributed keys that tributary's distributed mode does not implement
UNIMPLEMENTED_DISTRIBUTED = {"connect.protocol": "sessioned",
                             "worker.sync.timeout.ms": "3000"}


def test_unimplemented_distributed_keys_are_refused(start_worker):
    w = start_worker({"group.id": "connect-cluster", **UNIMPLEMENTED_DISTRIBUTED},
                     wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    refusals = [line for line in w.logs().splitlines()
                if "which tributary's distributed mode does not implement yet" in line]
    assert len(refusals) == 1, w.logs()
    for key in UNIMPLEMENTED_DISTRIBUTED:
        assert key in refusals[0]
    assert "group.id" not in refusals[0] and "remove them" in refusals[0]


def test_refused_worker_key_names_itself_and_why(start_worker):
    w = start_worker({"rest.extension.classes": "com.example.AuthExtension"},
                     wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    assert ("worker key rest.extension.classes is not supported: Java REST extensions "
            "cannot run in tributary") in w.logs()


def test_worker_keys_without_effect_are_logged_once(start_worker):
    w = start_worker({"plugin.path": "/usr/share/java", "metric.reporters": "x.Reporter",
                      "no.such.key": "1"})
    logs = w.logs()
    assert logs.count("worker key plugin.path has no effect in tributary: ") == 1
    assert logs.count("worker key metric.reporters has no effect in tributary: ") == 1
    assert "worker key no.such.key is ignored: neither Kafka Connect nor tributary" in logs
