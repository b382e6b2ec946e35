"""`tributary validate`: Connect's validation of connector files with no Kafka,
no store and no listener, for pipelines that check configs before applying
them."""
import json
import os
import pathlib
import socket
import subprocess

import pytest

pytestmark = pytest.mark.integration

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def connector_examples():
    """Every connector file under examples/ (the worker file is not one)."""
    return sorted(p for p in EXAMPLES.rglob("*")
                  if p.suffix in (".json", ".properties") and p.stem != "worker")


def validate(*args, env=None):
    result = subprocess.run([os.environ["TRIBUTARY_BIN"], "validate", *map(str, args)],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, **(env or {})})
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return result, lines


def key_errors(line, key):
    """The errors ConfigInfos gives for key."""
    return next(c["value"]["errors"] for c in line["result"]["configs"]
                if c["value"]["name"] == key)


@pytest.mark.parametrize("with_worker_file", [True, False])
def test_every_example_validates(with_worker_file):
    files = connector_examples()
    assert len(files) >= 7 and EXAMPLES / "postgres-cdc" / "inventory.json" in files
    args = ([EXAMPLES / "worker.properties"] if with_worker_file else []) + files
    result, lines = validate(*args)
    assert result.returncode == 0, result.stderr
    assert [line["file"] for line in lines] == [str(f) for f in files]
    for line in lines:
        assert line["result"]["error_count"] == 0, line["file"]
        assert f"{line['file']}: {line['name']} (" in result.stderr


def edit_json(name, change):
    doc = json.loads((EXAMPLES / name).read_text())
    change(doc)
    return json.dumps(doc)


BROKEN = {
    # file, its broken text, the key the error names
    "tasks-max": ("datagen-orders.json",
                  lambda: edit_json("datagen-orders.json",
                                    lambda d: d["config"].update({"tasks.max": "0"})),
                  "tasks.max"),
    "insert-mode": ("jdbc-sink.json",
                    lambda: edit_json("jdbc-sink.json",
                                      lambda d: d["config"].update({"insert.mode": "often"})),
                    "insert.mode"),
    "literal-secret": ("postgres-cdc-inventory.json",
                       lambda: edit_json("postgres-cdc/inventory.json",
                                         lambda d: d["config"].update(
                                             {"database.password": "plain-text"})),
                       "database.password"),
    "literal-header": ("http-sink.json",
                       lambda: edit_json("http-sink.json",
                                         lambda d: d["config"].update(
                                             {"http.headers": "Authorization: Bearer x"})),
                       "http.headers"),
    "name-mismatch": ("file-source.json",
                      lambda: edit_json("file-source.json",
                                        lambda d: d["config"].update({"name": "other"})),
                      "name"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_copy_exits_1_naming_the_key(case, tmp_path):
    name, text, key = BROKEN[case]
    broken = tmp_path / name
    broken.write_text(text())
    good = EXAMPLES / "datagen-orders.json"
    worker = []
    if case.startswith("literal"):
        # literal secrets are taken by default (and protected): a worker that
        # refuses them makes them errors
        worker = [tmp_path / "worker.properties"]
        worker[0].write_text("secrets.literal.allowed=false\n")
    result, lines = validate(*worker, good, broken)
    assert result.returncode == 1, result.stderr
    assert [line["file"] for line in lines] == [str(good), str(broken)]
    assert lines[0]["result"]["error_count"] == 0, "the other file is judged alone"
    assert lines[1]["result"]["error_count"] >= 1
    assert key_errors(lines[1], key), lines[1]
    assert f"{broken}: {key}: " in result.stderr
    assert "plain-text" not in result.stdout + result.stderr


@pytest.mark.parametrize("text, said", [
    ("name=no-class\ntopics=t\n", "connector.class is missing"),
    ("name=odd\nconnector.class=NoSuchConnector\n",
     "connector.class: NoSuchConnector is not a connector of this build"),
    ('{"name": "x", "config": {', "line 1"),
    ('{"name": "x", "initial_state": "ASLEEP", "config": {"connector.class": "datagen"}}',
     "initial_state: ASLEEP is not RUNNING, PAUSED or STOPPED"),
])
def test_a_file_without_a_connector_is_named(text, said, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text(text)
    result, lines = validate(EXAMPLES / "file-sink.properties", broken)
    assert result.returncode == 1
    assert lines[1] == {"file": str(broken), "error": lines[1]["error"]}
    assert said in lines[1]["error"] and f"{broken}: {said}" in result.stderr


def test_the_worker_file_decides_and_nothing_runs(tmp_path):
    """The worker's keys decide what is allowed, and validating opens no store, no
    listener and no Kafka connection (the listener's port is taken, the brokers
    are nowhere)."""
    literal = tmp_path / "literal.json"
    literal.write_text(edit_json("postgres-cdc/inventory.json", lambda d: d["config"].update(
        {"database.password": "plain-text"})))
    store = tmp_path / "data" / "worker.db"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        worker = tmp_path / "worker.properties"
        worker.write_text(f"bootstrap.servers=192.0.2.1:9\n"
                          f"listeners=http://127.0.0.1:{holder.getsockname()[1]}\n"
                          f"offset.storage.file.filename={store}\n"
                          "secrets.literal.allowed=true\n")
        result, lines = validate(worker, literal)
    assert result.returncode == 0, result.stderr
    assert lines[0]["result"]["error_count"] == 0
    assert not store.parent.exists()

    no_env = tmp_path / "no-env.properties"
    no_env.write_text("config.providers=file\n")
    result, lines = validate(no_env, EXAMPLES / "postgres-cdc" / "inventory.json")
    assert result.returncode == 1
    assert key_errors(lines[0], "database.password")


def test_an_invalid_worker_file_exits_1_naming_the_key(tmp_path):
    worker = tmp_path / "worker.properties"
    worker.write_text("task.threads=many\n")
    result, lines = validate(worker, EXAMPLES / "datagen-orders.json")
    assert result.returncode == 1 and lines == []
    assert "task.threads" in result.stderr


def test_no_connector_file_is_a_usage_error():
    result, _ = validate()
    assert result.returncode == 2 and "no connector file" in result.stderr


def test_a_worker_file_alone_validates_its_connectors_dir(tmp_path):
    folder = tmp_path / "connectors"
    folder.mkdir()
    good = folder / "a.json"
    good.write_text((EXAMPLES / "datagen-orders.json").read_text())
    bad = folder / "b.properties"
    bad.write_text("name=b\nconnector.class=datagen\ntasks.max=0\n")
    (folder / "README.md").write_text("not a connector file")
    worker = tmp_path / "worker.properties"
    worker.write_text(f"connectors.dir={folder}\n")
    result, lines = validate(worker)
    assert result.returncode == 1, result.stderr
    assert [line["file"] for line in lines] == [str(good), str(bad)]
    assert f"{bad}: tasks.max: " in result.stderr
    bad.unlink()
    result, lines = validate(worker)
    assert result.returncode == 0 and len(lines) == 1, result.stderr

    worker.write_text("task.threads=2\n")
    result, lines = validate(worker)
    assert result.returncode == 2 and lines == []
    assert "no connector file to validate" in result.stderr


def test_the_workers_own_files_are_refused_as_the_worker_refuses_them(tmp_path):
    """A connector may not read the worker's properties file: validate says so
    as the worker does, naming the key (and passes the same file without it)."""
    worker = tmp_path / "worker.properties"
    worker.write_text(f"offset.storage.file.filename={tmp_path}/data/worker.db\n")
    other = tmp_path / "lines.txt"
    other.write_text("a line\n")
    for path, refused in ((worker, True), (other, False)):
        reading = tmp_path / "reading.json"
        reading.write_text(edit_json("file-source.json",
                                     lambda d: d["config"].update({"file": str(path)})))
        result, lines = validate(worker, reading)
        assert result.returncode == (1 if refused else 0), result.stderr
        assert bool(key_errors(lines[0], "file")) == refused, lines[0]
