"""examples/cluster/docker-compose.yml (docs/OPERATIONS.md, "Running a cluster"), without
Docker (no Docker engine runs here): the file parses, builds its three workers from the
project's Dockerfile, and gives them one cluster; each worker's environment, applied over
the Dockerfile's ENV as the container would, with the test bed's Kafka and loopback ports
put in for the compose network's, starts a worker, and the three form one cluster with
one leader."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from test_cluster_metrics import REBALANCE
from test_container import dockerfile_env
from test_observability import parse
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

COMPOSE = Path(__file__).resolve().parents[2] / "examples" / "cluster" / "docker-compose.yml"
WORKERS = ["tributary-1", "tributary-2", "tributary-3"]
# what the compose network gives and this machine does not
LOCAL = {"TRIBUTARY_BOOTSTRAP_SERVERS", "TRIBUTARY_REST_ADVERTISED_HOST_NAME",
         "TRIBUTARY_LISTENERS", "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME"}


def services():
    return yaml.safe_load(COMPOSE.read_text())["services"]


def test_the_compose_file_builds_three_workers_of_one_cluster_from_the_dockerfile():
    found = services()
    assert set(found) == {"kafka", *WORKERS}
    kafka_listener = found["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    for name in WORKERS:
        service = found[name]
        context = (COMPOSE.parent / service["build"]["context"]).resolve()
        assert (context / service["build"]["dockerfile"]) == COMPOSE.parents[2] / "Dockerfile"
        env = service["environment"]
        assert env["TRIBUTARY_REST_ADVERTISED_HOST_NAME"] == name  # how the others reach it
        assert f"PLAINTEXT://{env['TRIBUTARY_BOOTSTRAP_SERVERS']}" == kafka_listener
        assert service["depends_on"] == ["kafka"]
        assert service["volumes"] == [f"{name}:/var/lib/tributary"]
        assert service["ports"][0].endswith(":8083")
    # one cluster: the same group and topics everywhere
    shared = [{k: v for k, v in found[n]["environment"].items() if k not in LOCAL}
              for n in WORKERS]
    assert shared[0]["TRIBUTARY_GROUP_ID"]
    assert all(s == shared[0] for s in shared), shared


def test_the_compose_workers_environment_starts_a_cluster(bed, tmp_path):
    procs, urls = [], []
    run = bed.unique_topic("compose")
    try:
        for name in WORKERS:
            port = free_port()
            env = {**dockerfile_env(), **services()[name]["environment"]}
            # this run's own group and topics, on the test bed
            env = {k: v.replace("tributary-", f"{run}-") if k.endswith(("_ID", "_TOPIC"))
                   else v for k, v in env.items()}
            group = env["TRIBUTARY_GROUP_ID"]
            env.update({"TRIBUTARY_BOOTSTRAP_SERVERS": bed.bootstrap,
                        "TRIBUTARY_LISTENERS": f"http://127.0.0.1:{port}",
                        "TRIBUTARY_REST_ADVERTISED_HOST_NAME": "127.0.0.1",
                        "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME":
                            str(tmp_path / name / "tributary.db")})
            base = {k: v for k, v in os.environ.items() if not k.startswith("TRIBUTARY_")}
            (tmp_path / name).mkdir()
            log = open(tmp_path / name / "log", "w")
            procs.append(subprocess.Popen([os.environ["TRIBUTARY_BIN"]], cwd=tmp_path / name,
                                          stdout=log, stderr=subprocess.STDOUT,
                                          env={**base, **env}))
            urls.append(f"http://127.0.0.1:{port}")

        def leaders():
            named = set()
            for p, url in zip(procs, urls):
                assert p.poll() is None, (tmp_path / WORKERS[procs.index(p)] /
                                          "log").read_text()
                page = requests.get(url + "/metrics", timeout=5).text
                named |= {labels["leader_name"] for name, labels, value in parse(page)
                          if name == REBALANCE + "leader_name" and value == 1}
                if not any(name == REBALANCE + "leader_name" for name, _, _ in parse(page)):
                    return None
            return named if len(named) == 1 else None
        named = wait_for(leaders, timeout=60, what="every worker naming the same leader")
        assert named <= set(urls), named
        logs = [(tmp_path / n / "log").read_text() for n in WORKERS]
        assert all(f"group {group}: 3 worker(s)" in text for text in logs), logs
    finally:
        for p in procs:
            p.terminate()
        codes = [p.wait(timeout=30) for p in procs]
    assert codes == [0, 0, 0], codes
