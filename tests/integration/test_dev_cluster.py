"""`scripts/run --cluster` (README.md, docs/OPERATIONS.md "Trying a cluster by hand"): three
workers started by the dev script on one Kafka, which agree on one leader, share a
connector's tasks and move a killed worker's tasks to the others; Ctrl-C (SIGTERM) stops
what runs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from test_distributed import FAILOVER_BOUND_S, agreed_placement
from test_observability import parse
from worker import wait_for

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "run"
TASKS = 3
# the script's session.timeout.ms and scheduled.rebalance.max.delay.ms
SESSION_S, DELAY_S = 6, 5


def three_free_ports():
    """A port N with N, N+1 and N+2 free on loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + 2 > 65535:
            continue
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", base + 1))
                b.bind(("127.0.0.1", base + 2))
            return base
        except OSError:
            continue
    raise AssertionError("no three consecutive free ports")


class Member:
    """A worker the script started, as the test sees it."""

    def __init__(self, directory, url):
        self.dir, self.url = directory, url

    def get(self, path):
        return requests.get(self.url + path, timeout=10)

    def pid(self):
        return int((self.dir / "pid").read_text())

    def leader_names(self):
        return [labels["leader_name"] for name, labels, value in
                parse(self.get("/metrics").text)
                if name == "kafka_connect_connect_worker_rebalance_metrics_leader_name"
                and value == 1]


def test_the_dev_script_starts_a_cluster_whose_killed_workers_tasks_move(bed, tmp_path):
    port = three_free_ports()
    out = tmp_path / "run.out"
    script = subprocess.Popen(
        [str(SCRIPT), "--cluster", "--bootstrap", bed.bootstrap, "--port", str(port),
         "--dir", str(tmp_path / "cluster"), "--group", bed.unique_topic("devcluster"),
         "--bin", os.environ["TRIBUTARY_BIN"]],
        stdout=out.open("w"), stderr=subprocess.STDOUT, env=os.environ.copy())
    try:
        wait_for(lambda: "Ctrl-C stops the cluster." in out.read_text()
                 or script.poll() is not None, timeout=120, what="the script's summary")
        assert script.poll() is None, out.read_text()
        members = [Member(tmp_path / "cluster" / f"w{i}", f"http://127.0.0.1:{port + i}")
                   for i in range(3)]

        # three workers, one leader, the same one for all
        wait_for(lambda: len({tuple(m.leader_names()) for m in members}) == 1
                 and len(members[0].leader_names()) == 1, timeout=60,
                 what="every worker naming the same leader")
        leader = members[0].leader_names()[0]
        assert leader in {m.url for m in members}
        # the leader's name is served as soon as a worker's view has it; the view of
        # all three members may come a refresh later, and is logged after it is served
        wait_for(lambda: all("3 worker(s), leader " + leader in
                             (m.dir / "tributary.log").read_text() for m in members),
                 timeout=60, what="every worker logging a view of three, the same leader")

        config = {"connector.class": "datagen", "topic": bed.unique_topic("gen"),
                  "records.per.second": "10", "tasks.max": str(TASKS)}
        reply = requests.post(members[1].url + "/connectors", timeout=70,
                              json={"name": "gen", "config": config})
        assert reply.status_code == 201, reply.text
        before = wait_for(lambda: agreed_placement(members, ["gen"], {"gen": TASKS}),
                          timeout=60, what="the tasks RUNNING, every worker agreeing")
        victim = next(m for m in members if m.url.removeprefix("http://") in
                      before.values())
        os.kill(victim.pid(), signal.SIGKILL)
        survivors = [m for m in members if m is not victim]
        bound = SESSION_S + DELAY_S + FAILOVER_BOUND_S
        wait_for(lambda: (lambda p: p if p and victim.url.removeprefix("http://")
                          not in p.values() else None)(
            agreed_placement(survivors, ["gen"], {"gen": TASKS})),
            timeout=bound, what="the killed worker's tasks running on the others")
    finally:
        if script.poll() is None:
            script.send_signal(signal.SIGTERM)
        code = script.wait(timeout=60)
    assert code == 0, out.read_text()
    assert "cluster: stopped" in out.read_text()
    for m in survivors:
        with pytest.raises(requests.ConnectionError):
            m.get("/health")
        assert "Sanitizer" not in (m.dir / "tributary.log").read_text()
