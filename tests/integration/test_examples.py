"""Every example under examples/ runs against a real worker, so none can
rot."""
import os
import pathlib
import subprocess

import pytest

pytestmark = pytest.mark.integration

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_lifecycle_script(worker, bed):
    result = subprocess.run(
        [str(EXAMPLES / "lifecycle.sh")], capture_output=True, text=True, timeout=120,
        env={**os.environ, "TRIBUTARY_URL": worker.url,
             "TOPIC": bed.unique_topic("lifecycle")})
    assert result.returncode == 0, result.stderr + result.stdout
    for step in ["> POST /connectors", "> PUT /connectors/lifecycle-demo/pause",
                 "> DELETE /connectors/lifecycle-demo"]:
        assert step in result.stderr
    assert result.stdout.strip().endswith("[]"), "the connector was deleted"


def test_every_connector_example_starts(start_worker, bed, tmp_path):
    """The worker file's keys apply (with the test bed's Kafka), and every
    connector example is accepted on the command line and runs."""
    import json

    from kafka_io import read_values
    from worker import wait_for
    (tmp_path / "input").write_text("")
    settings = {}
    for line in (EXAMPLES / "worker.properties").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings[key] = value
    # the fixture chooses the port and the store; the test bed is the Kafka
    for key in ("listeners", "offset.storage.file.filename"):
        settings.pop(key)
    settings.update({"bootstrap.servers": bed.bootstrap, "offset.flush.interval.ms": "200"})
    files = sorted(str(p) for p in EXAMPLES.iterdir()
                   if p.suffix in (".json", ".properties") and p.stem != "worker")
    w = start_worker(settings, args=files, env={"EXAMPLE_HTTP_TOKEN": "Bearer x"})
    names = [json.loads(p.read_text())["name"] if p.suffix == ".json" else
             next(l.split("=", 1)[1] for l in p.read_text().splitlines()
                  if l.startswith("name="))
             for p in map(pathlib.Path, files)]
    assert w.get("/connectors").json() == sorted(names)
    assert w.get("/connectors/http-sink/status").json()["connector"]["state"] == "PAUSED"
    for name in names:
        if name != "http-sink":
            wait_for(lambda: all(t["state"] == "RUNNING" for t in w.get(
                f"/connectors/{name}/status").json()["tasks"]) and w.get(
                f"/connectors/{name}/status").json()["tasks"], what=f"{name} running")
    values = read_values(bed.bootstrap, "example-orders", lambda vs: len(vs) >= 3)
    assert all("seq" in v for v in values)
