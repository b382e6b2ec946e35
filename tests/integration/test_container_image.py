"""The container image itself, built from the Dockerfile by scripts/build-image (buildah,
no Docker daemon) and run with buildah's chroot isolation on the host's network: its
entry point, user, environment and health check, against the bed's Kafka. (Podman cannot
start a container on this kind of machine: docs/OPERATIONS.md, "The image, built without
Docker".)"""
import contextlib
import json
import os
import pathlib
import signal
import subprocess

import pytest

from kafka_io import read_values
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAG = os.environ.get("TB_IMAGE_TAG", "localhost/tributary:ci")


@pytest.fixture(scope="module")
def buildah():
    """buildah with the image's storage options (scripts/build-image builds the image, or
    finds its layers cached, and prints them)."""
    storage = os.environ.get("TB_IMAGE_STORAGE") or subprocess.run(
        [str(ROOT / "scripts" / "build-image")], check=True, capture_output=True, text=True,
        timeout=3600).stdout.strip()
    return ["buildah", *storage.split()]


@pytest.fixture
def image(buildah):
    """A working container of the image; yields (name, its Docker config)."""
    name = subprocess.run([*buildah, "from", "--pull=never", TAG], check=True,
                          capture_output=True, text=True, timeout=120).stdout.strip()
    try:
        inspect = subprocess.run([*buildah, "inspect", "--type", "image", TAG], check=True,
                                 capture_output=True, text=True, timeout=60).stdout
        yield name, json.loads(inspect)["Docker"]["config"]
    finally:
        subprocess.run([*buildah, "rm", name], capture_output=True, timeout=120)


def run(buildah, name, command, env, volumes=()):
    """command in the container as its image says (user, working directory, ENV), with
    env added, on the host's network, with volumes ("host:container") mounted."""
    args = [*buildah, "run", "--isolation=chroot", "--network=host"]
    for volume in volumes:
        args += ["--volume", volume]
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    return [*args, name, "--", *command]


def process_of(parent, comm):
    """The pid of the process named comm below parent (None when it is gone)."""
    children = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo = list(children.get(parent, []))
    while todo:
        pid = todo.pop()
        try:
            if pathlib.Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                return pid
        except OSError:
            continue
        todo += children.get(pid, [])
    return None


@contextlib.contextmanager
def started(buildah, name, config, env, log, volumes):
    """The image's entry point running; stopped at the end as a container engine stops
    it, with its STOPSIGNAL to the process itself (buildah run kills its child when it
    gets one), which must then exit 0."""
    proc = subprocess.Popen(run(buildah, name, config["Entrypoint"], env, volumes), stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            assert config["StopSignal"] == "SIGTERM"
            pid = process_of(proc.pid, "tributary")
            if pid is None:
                proc.terminate()
            else:
                os.kill(pid, signal.SIGTERM)
        code = proc.wait(timeout=60)
        assert code == 0, (f"the container exited {code}\n" +
                           pathlib.Path(log.name).read_text())


def test_the_image_runs_healthy_and_runs_a_connector(buildah, image, bed, tmp_path):
    name, config = image
    assert config["User"] == "10001:10001"
    # a loopback port of its own instead of the image's 0.0.0.0:8083
    port = free_port()
    env = {"TRIBUTARY_BOOTSTRAP_SERVERS": bed.bootstrap,
           "TRIBUTARY_LISTENERS": f"http://127.0.0.1:{port}"}
    health = config["Healthcheck"]["Test"]
    assert health[0] == "CMD"
    health_env = {"TRIBUTARY_HEALTHCHECK_URL": f"http://127.0.0.1:{port}/health"}
    topic = bed.unique_topic("image")
    # the image's volume, a folder its user owns, as an operator would give it
    assert list(config["Volumes"]) == ["/var/lib/tributary"]
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, 10001, 10001)
    volumes = [f"{data}:/var/lib/tributary"]
    with open(tmp_path / "log", "w") as log, \
            started(buildah, name, config, env, log, volumes) as proc:
        def healthy():
            assert proc.poll() is None, (tmp_path / "log").read_text()
            return subprocess.run(run(buildah, name, health[1:], health_env),
                                  capture_output=True, timeout=60).returncode == 0
        wait_for(healthy, timeout=120, interval=1, what="the image's health check to pass")
        connector = {"name": "image-datagen", "config": {
            "connector.class": "datagen", "topic": topic, "records.per.second": "20",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"}}
        curl = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                "Content-Type: application/json", "-d", json.dumps(connector),
                f"http://127.0.0.1:{port}/connectors"]
        created = subprocess.run(run(buildah, name, curl, {}), capture_output=True,
                                 text=True, timeout=60)
        assert created.stdout == "201", created
        values = read_values(bed.bootstrap, topic, until=lambda v: len(v) >= 10)
        assert len(values) >= 10, values
    # the store is on the volume, written by the image's user
    assert (data / "tributary.db").stat().st_uid == 10001
