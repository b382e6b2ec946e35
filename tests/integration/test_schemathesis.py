"""schemathesis generates requests from openapi.yaml against a running
worker: no answer may be a 5xx, and every answer must match the spec
(status code, content type, headers and body schema). Every answer goes
through the suite's secrets scan, read from schemathesis' HAR report."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import secret_scan

pytestmark = pytest.mark.integration

HERE = pathlib.Path(__file__).resolve().parent
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_headers_conformance,response_schema_conformance")


def test_generated_requests_conform_to_the_spec(worker, bed, tmp_path):
    config = {"connector.class": "datagen", "topic": bed.unique_topic("st")}
    assert worker.post("/connectors", json={"name": "st-demo",
                                            "config": config}).status_code == 201
    st = pathlib.Path(sys.executable).parent / "st"
    result = subprocess.run(
        [str(st), "--config-file", str(HERE / "schemathesis.toml"), "run",
         str(HERE.parents[1] / "openapi.yaml"), "--url", worker.url,
         "--max-examples", "15", "--generation-deterministic", "--checks", CHECKS,
         "--request-timeout", "10", "--report", "har", "--report-har-path", "st.har"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
    har = json.loads((tmp_path / "st.har").read_text())
    bodies = [entry["response"]["content"].get("text", "") for entry in har["log"]["entries"]]
    assert len(bodies) > 50 and any(bodies), "schemathesis' report lists too few answers"
    secret_scan.check_text("the answers to schemathesis", "\n".join(bodies))
