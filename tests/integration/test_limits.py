"""What the worker lets connectors reach: files under file.allowed.dirs
(symbolic links cannot lead out), URLs on http.sink.allowed.hosts."""
import os

import pytest

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
