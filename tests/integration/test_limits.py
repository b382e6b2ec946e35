"""What the worker lets connectors reach: files under file.allowed.dirs
(symbolic links cannot lead out), never the worker's store, its secrets file
or its data directory, URLs on http.sink.allowed.hosts."""
import os
import pathlib

import pytest

import secret_scan
from kafka_io import create_topic, produce
from worker import wait_for

pytestmark = pytest.mark.integration


def sink(w, name, path):
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": str(path)}
    return w.post("/connectors", json={"name": name, "config": config})


def test_files_only_under_the_allowed_directories(start_worker, tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, allowed / "escape")
    w = start_worker({"file.allowed.dirs": str(allowed)})
    assert sink(w, "in", allowed / "out.txt").status_code == 201
    for name, path in [("out", outside / "out.txt"), ("link", allowed / "escape" / "x"),
                       ("dots", allowed / ".." / "outside" / "x")]:
        reply = sink(w, name, path)
        assert reply.status_code == 400, name
        assert "outside the worker's file.allowed.dirs" in reply.json()["message"]
        assert "configuration file" in reply.json()["message"]
    source = {"connector.class": "FileStreamSource", "topic": "t",
              "file": str(outside / "in.txt")}
    assert w.post("/connectors", json={"name": "src", "config": source}).status_code == 400


def test_http_sink_only_to_allowed_hosts(start_worker):
    w = start_worker({"http.sink.allowed.hosts": "localhost"})

    def create(name, url):
        config = {"connector.class": "HttpSink", "topics": "t", "http.url": url}
        return w.post("/connectors", json={"name": name, "config": config})
    assert create("ok", "http://localhost:1/ingest").status_code == 201
    reply = create("no", "http://user:secret@127.0.0.1:1/ingest")
    assert reply.status_code == 400
    assert "http.sink.allowed.hosts" in reply.json()["message"]
    assert "secret" not in reply.json()["message"]


def secrets_file_of(w, tmp_path):
    """Makes the worker write its <store>.secrets file (a connector, stopped,
    with a literal password) and returns its path."""
    config = {"connector.class": "FileStreamSink", "topics": "t",
              "file": str(tmp_path / "unused.txt"),
              "consumer.override.security.protocol": "SASL_PLAINTEXT",
              "consumer.override.sasl.mechanism": "PLAIN",
              "consumer.override.sasl.username": "u",
              "consumer.override.sasl.password": secret_scan.new_secret("literal")}
    reply = w.post("/connectors", json={"name": "holder", "config": config,
                                        "initial_state": "STOPPED"})
    assert reply.status_code == 201, reply.text
    secrets = pathlib.Path(w.settings["offset.storage.file.filename"] + ".secrets")
    wait_for(secrets.exists, what="the worker's secrets file")
    return secrets


def failed_trace(w, name):
    """The trace of task 0 of name once it has FAILED."""
    def trace():
        task = w.get(f"/connectors/{name}/status").json()["tasks"][0]
        return task["state"] == "FAILED" and task["trace"]
    return wait_for(trace, what=f"task 0 of {name} to fail")


def topic_end(bed, topic):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": "watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1]
    finally:
        consumer.close()


def test_the_store_and_its_secrets_are_refused_whatever_the_settings(start_worker,
                                                                   tmp_path):
    w = start_worker({"secrets.literal.allowed": "true"})
    store = pathlib.Path(w.settings["offset.storage.file.filename"])
    secrets = secrets_file_of(w, tmp_path)
    os.symlink(store, tmp_path / "to-store")
    os.symlink(secrets, tmp_path / "to-secrets")
    paths = [store, secrets, f"{store}-wal", f"{store}-shm", store.parent,
             store.parent / "new.txt", tmp_path / "to-store", tmp_path / "to-secrets"]
    for path in paths:
        for config in ({"connector.class": "FileStreamSource", "topic": "t"},
                       {"connector.class": "FileStreamSink", "topics": "t"}):
            reply = w.post("/connectors", json={
                "name": "reach", "config": {**config, "file": str(path)}})
            assert reply.status_code == 400, (path, reply.text)
            message = reply.json()["message"]
            assert f"Invalid value {path} for configuration file: the path is in the " \
                   "worker's data directory" in message, message


def test_a_link_to_the_store_put_in_place_after_validation_fails_the_sink(
        start_worker, bed, tmp_path):
    w = start_worker()
    store = pathlib.Path(w.settings["offset.storage.file.filename"])
    topic = bed.unique_topic("swap")
    create_topic(bed, topic, 1)
    marker = f"marker-{os.getpid()}-{topic}".encode()
    produce(bed.bootstrap, topic, [(0, None, marker)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    reply = w.post("/connectors", json={"name": "swap", "config": config,
                                        "initial_state": "STOPPED"})
    assert reply.status_code == 201, reply.text
    os.symlink(store, out)
    assert w.put("/connectors/swap/resume").status_code == 202
    trace = failed_trace(w, "swap")
    assert str(out) in trace and "data directory" in trace, trace
    assert w.get("/connectors").status_code == 200
    w.stop()  # the store's WAL is folded into the file
    assert marker not in store.read_bytes()


def test_a_link_to_the_secrets_appearing_after_start_fails_the_source(
        start_worker, bed, tmp_path):
    w = start_worker({"secrets.literal.allowed": "true"})
    secrets = secrets_file_of(w, tmp_path)
    topic = bed.unique_topic("swap")
    create_topic(bed, topic, 1)
    source = tmp_path / "in.txt"  # not there yet: the task waits for it
    config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(source)}
    assert w.post("/connectors", json={"name": "src", "config": config}).status_code == 201

    def waiting():
        task = w.get("/connectors/src/status").json()["tasks"][0]
        logs = w.logs()
        return (task["state"] == "RUNNING" and str(source) in logs and
                "retrying every second" in logs)
    wait_for(waiting, what="the source task to wait for its file")
    os.symlink(secrets, source)
    trace = failed_trace(w, "src")
    assert f"cannot open file {source}: the path is in the worker's data directory" \
        in trace, trace
    assert topic_end(bed, topic) == 0
