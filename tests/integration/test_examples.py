"""Every example under examples/ runs against a real worker, so none can
rot."""
import json
import os
import pathlib
import sqlite3
import subprocess

import pytest

import secret_scan
from kafka_io import read_raw, read_values
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_lifecycle_script(worker, bed):
    result = subprocess.run(
        [str(EXAMPLES / "lifecycle.sh")], capture_output=True, text=True, timeout=120,
        env={**os.environ, "TRIBUTARY_URL": worker.url,
             "TOPIC": bed.unique_topic("lifecycle")})
    secret_scan.check_text("the lifecycle example's output", result.stdout + result.stderr)
    assert result.returncode == 0, result.stderr + result.stdout
    for step in ["> POST /connectors", "> PUT /connectors/lifecycle-demo/pause",
                 "> DELETE /connectors/lifecycle-demo"]:
        assert step in result.stderr
    assert result.stdout.strip().endswith("[]"), "the connector was deleted"


def example_files(folder, run):
    """The connector examples, copied into folder with their /tmp paths moved
    there and their topics (example-*) made this run's own, so that neither
    two runs on one machine nor two runs on one bed share a file or a topic."""
    copies = []
    for path in sorted(EXAMPLES.iterdir()):
        if path.suffix in (".json", ".properties") and path.stem != "worker":
            copy = folder / path.name
            text = path.read_text().replace("/tmp/tributary-example-", f"{folder}/")
            copy.write_text(text.replace("example-", f"{run}-example-"))
            copies.append(copy)
    return copies


def example_name(path):
    if path.suffix == ".json":
        return json.loads(path.read_text())["name"]
    return next(line.split("=", 1)[1] for line in path.read_text().splitlines()
                if line.startswith("name="))


def test_every_connector_example_starts(start_worker, bed, tmp_path):
    """The worker file's keys apply (with the test bed's Kafka), and every
    connector example is accepted on the command line and moves records."""
    (tmp_path / "input.txt").write_text("first line\nsecond line\n")
    settings = {}
    for line in (EXAMPLES / "worker.properties").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings[key] = value
    # the fixture chooses the port and the store; the test bed is the Kafka
    for key in ("listeners", "offset.storage.file.filename"):
        settings.pop(key)
    settings.update({"bootstrap.servers": bed.bootstrap, "offset.flush.interval.ms": "200"})
    run = bed.unique_topic("run")
    files = example_files(tmp_path, run)
    token = "Bearer " + secret_scan.new_secret("example-token")
    w = start_worker(settings, args=[str(f) for f in files],
                     env={"EXAMPLE_HTTP_TOKEN": token})
    names = [example_name(f) for f in files]
    assert w.get("/connectors").json() == sorted(names)
    assert w.get("/connectors/http-sink/status").json()["connector"]["state"] == "PAUSED"
    for name in names:
        if name != "http-sink":
            wait_for(lambda: [t["state"] for t in w.get(
                f"/connectors/{name}/status").json()["tasks"]] == ["RUNNING"],
                what=f"{name} running")
    values = read_values(bed.bootstrap, f"{run}-example-orders", lambda vs: len(vs) >= 3)
    assert len(values) >= 3, "datagen-orders wrote too little"
    assert all("seq" in v for v in values)
    wait_for(lambda: len(output_lines(tmp_path / "orders.txt")) >= 3,
             what="file-sink to write the orders")
    lines = read_raw(bed.bootstrap, f"{run}-example-lines", lambda vs: len(vs) >= 2)
    assert lines == [b"first line", b"second line"]
    wait_for(lambda: len(sqlite_rows(tmp_path / "orders.db",
                                     "SELECT order_id, customer FROM orders")) >= 3,
             what="jdbc-sink to write the orders into SQLite")


def sqlite_rows(path, query):
    """The rows of query, or none while the database or table is missing."""
    if not path.exists():
        return []
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute(query).fetchall()
    except sqlite3.OperationalError:
        return []
