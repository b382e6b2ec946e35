"""The container's start command, run outside Docker (no Docker engine runs
here): the Dockerfile's ENV lines are applied as they are, tributary starts
with no arguments, and the image's health check passes."""
import os
import pathlib
import re
import subprocess

import pytest

from worker import free_port, wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]


def dockerfile_env():
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"(\w+)=(\S+)", line[4:]))
    return env


def test_container_environment_starts_the_worker(bed, tmp_path):
    env = dockerfile_env()
    assert env["TRIBUTARY_LISTENERS"].startswith("http://0.0.0.0:")
    port = free_port()
    env.update({"TRIBUTARY_LISTENERS": f"http://0.0.0.0:{port}",
                "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME": str(tmp_path / "data" / "t.db"),
                "TRIBUTARY_BOOTSTRAP_SERVERS": bed.bootstrap})
    log = open(tmp_path / "log", "w")
    proc = subprocess.Popen([os.environ["TRIBUTARY_BIN"]], cwd=tmp_path, stdout=log,
                            stderr=subprocess.STDOUT, env={**os.environ, **env})
    try:
        check = [str(ROOT / "scripts" / "healthcheck")]
        health_env = {**os.environ,
                      "TRIBUTARY_HEALTHCHECK_URL": f"http://127.0.0.1:{port}/health"}
        wait_for(lambda: subprocess.run(check, env=health_env).returncode == 0,
                 timeout=60, what="the container health check to pass")
        assert (tmp_path / "data" / "t.db").exists()
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, (tmp_path / "log").read_text()
