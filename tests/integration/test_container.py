"""The container's start command, run outside Docker (no Docker engine runs
here): the Dockerfile's ENV lines are applied as they are, tributary starts
with no arguments, and the image's health check runs against it."""
import contextlib
import os
import pathlib
import re
import subprocess

import pytest

from worker import free_port, wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEALTHCHECK = [str(ROOT / "scripts" / "healthcheck")]


def dockerfile_env():
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"(\w+)=(\S+)", line[4:]))
    return env


@contextlib.contextmanager
def container(tmp_path, extra_env, expect_exit=0):
    """The image's command with its ENV (and extra_env); yields the health
    check's environment. The process must stop cleanly (or exit with
    expect_exit by itself)."""
    env = dockerfile_env()
    assert env["TRIBUTARY_LISTENERS"].startswith("http://0.0.0.0:")
    port = free_port()
    env.update({"TRIBUTARY_LISTENERS": f"http://0.0.0.0:{port}",
                "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME": str(tmp_path / "data" / "t.db"),
                **extra_env})
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRIBUTARY_")}
    log = open(tmp_path / "log", "w")
    proc = subprocess.Popen([os.environ["TRIBUTARY_BIN"]], cwd=tmp_path, stdout=log,
                            stderr=subprocess.STDOUT, env={**base, **env})
    try:
        yield {**os.environ, "TRIBUTARY_HEALTHCHECK_URL": f"http://127.0.0.1:{port}/health"}
    finally:
        if proc.poll() is None:
            proc.terminate()
        assert proc.wait(timeout=30) == expect_exit, (tmp_path / "log").read_text()


def test_container_environment_starts_the_worker(bed, tmp_path):
    with container(tmp_path, {"TRIBUTARY_BOOTSTRAP_SERVERS": bed.bootstrap}) as health_env:
        wait_for(lambda: subprocess.run(HEALTHCHECK, env=health_env).returncode == 0,
                 timeout=60, what="the container health check to pass")
        assert (tmp_path / "data" / "t.db").exists()


def test_container_without_kafka_refuses_to_start_naming_the_key(tmp_path):
    with container(tmp_path, {}, expect_exit=1):
        log = tmp_path / "log"
        wait_for(lambda: "refusing to start: bootstrap.servers is not set"
                 in log.read_text(), what="the log line naming bootstrap.servers")
        assert "DEV MODE" not in log.read_text()


def dockerfile_stage_packages():
    """The packages each stage's apt-get install names: [build, runtime]."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    stages = []
    for line in text.splitlines():
        if "apt-get install" in line:
            words = line.split("apt-get install", 1)[1].split("&&")[0].split()
            stages.append({w for w in words if not w.startswith("-")})
    return stages


def install_deps_build_packages():
    text = (ROOT / "scripts" / "install-deps").read_text()
    listed = re.search(r"build_packages=\(([^)]*)\)", text).group(1)
    return set(listed.split())


def library_stem(package):
    """A shared library package's name without its soname version and t64 suffix: this
    machine may run Debian bookworm while the image is trixie, where the 64-bit time_t
    transition and soname bumps renamed them (libmicrohttpd12 is libmicrohttpd12t64,
    libavro23 is libavro24)."""
    return re.sub(r"[0-9.-]*(t64)?$", "", package)


def test_the_image_builds_and_runs_with_every_library_the_build_needs():
    """The image's stages keep up with scripts/install-deps: its build stage installs every
    build package, and its runtime stage the shared library each -dev package is for."""
    build_stage, runtime_stage = dockerfile_stage_packages()
    runtime_stems = {library_stem(p) for p in runtime_stage}
    assert install_deps_build_packages() <= build_stage, \
        f"not in the Dockerfile's build stage: {install_deps_build_packages() - build_stage}"
    for dev in sorted(p for p in build_stage if p.endswith("-dev")):
        depends = subprocess.run(["dpkg-query", "-W", "-f=${Depends}", dev],
                                 capture_output=True, text=True, check=True).stdout
        libraries = {d.split()[0] for d in depends.split(",") if d.strip()}
        assert {library_stem(p) for p in libraries} & runtime_stems, \
            f"the runtime stage installs none of {sorted(libraries)}, which {dev} is for"
