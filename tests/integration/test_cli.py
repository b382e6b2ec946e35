"""The command line of connect-standalone: connector files after the worker
file create or update their connectors."""
import json

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
