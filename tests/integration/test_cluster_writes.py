"""Distributed mode under write load (docs/OPERATIONS.md, "Running a cluster"): 500 REST
writes (create, PUT config, pause, resume, delete) spread over every worker of a cluster
while workers join and leave, from several client threads at once. No write is refused
with a 409 or fails with a 5xx, and every one lands: at the end, the config topic (read
with an independent Kafka client) holds for each connector the config last PUT and the
target state last asked for, and a tombstone for each connector last deleted."""

from __future__ import annotations

import json
import threading

import pytest
import requests
from urllib3.exceptions import NewConnectionError

from kafka_io import read_topic
from test_distributed import TB_FORWARD_WAIT_S, cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration

CLIENTS = 4
CONNECTORS_PER_CLIENT = 5
ROUNDS = 8  # of PUT config, pause and resume per connector, after its create
WRITES = CLIENTS * CONNECTORS_PER_CLIENT * (1 + 3 * ROUNDS)
EXPECTED = {"POST": 201, "PUT config": 200, "PUT pause": 202, "PUT resume": 202,
            "DELETE": 204}


class Serving:
    """The workers clients send to, in turn. A worker about to stop is taken out first,
    as a load balancer takes it out, and then stopped at once: the requests it had
    accepted must still be answered."""

    def __init__(self, workers):
        self.lock = threading.Lock()
        self.workers = list(workers)
        self.turn = 0

    def pick(self):
        with self.lock:
            self.turn += 1
            return self.workers[self.turn % len(self.workers)]

    def add(self, w):
        with self.lock:
            self.workers.append(w)

    def remove(self, w):
        with self.lock:
            self.workers.remove(w)


class Client(threading.Thread):
    """Writes its own connectors' lifecycles, one write after the other, each to the
    next serving worker; records every reply."""

    def __init__(self, index, serving, topic, source_file, progress):
        super().__init__(daemon=True)
        self.names = [f"w{index}-{k}" for k in range(CONNECTORS_PER_CLIENT)]
        self.serving, self.topic, self.file = serving, topic, source_file
        self.progress = progress
        self.replies = []  # (what, connector, status, body)
        self.last_config = {}
        self.last_target = {}
        self.deleted = set()

    def config(self, name, round_):
        return {"connector.class": "FileStreamSource", "file": str(self.file),
                "topic": self.topic, "batch.size": str(100 + round_),
                "note": f"{name}/{round_}"}

    def write(self, what, name, method, path, body=None):
        """One write; sent again elsewhere only when its worker, stopped since it was
        picked, refused the connection (so the write never reached it)."""
        for attempt in range(2):
            w = self.serving.pick()
            try:
                reply = requests.request(method, w.url + path, json=body,
                                         timeout=TB_FORWARD_WAIT_S + 10)
                self.replies.append((what, name, reply.status_code, reply.text))
                break
            except requests.RequestException as e:
                if attempt == 0 and w not in self.serving.workers and \
                        isinstance(getattr(e.args[0], "reason", None), NewConnectionError):
                    continue
                self.replies.append((what, name, None, f"{w.url}: {e!r}"))
                break
        self.progress.step()

    def run(self):
        for name in self.names:
            config = self.config(name, 0)
            self.write("POST", name, "POST", "/connectors", {"name": name, "config": config})
            self.last_config[name], self.last_target[name] = config, "STARTED"
        for round_ in range(1, ROUNDS + 1):
            for k, name in enumerate(self.names):
                config = self.config(name, round_)
                self.write("PUT config", name, "PUT", f"/connectors/{name}/config", config)
                self.last_config[name] = config
                # the last round deletes the odd connectors and leaves one paused
                steps = ["pause", "resume"]
                if round_ == ROUNDS and k % 2 == 1:
                    steps = ["pause", "delete"]
                elif round_ == ROUNDS and k == 2:
                    steps = ["resume", "pause"]
                for step in steps:
                    if step == "delete":
                        self.write("DELETE", name, "DELETE", f"/connectors/{name}")
                        self.deleted.add(name)
                    else:
                        self.write(f"PUT {step}", name, "PUT", f"/connectors/{name}/{step}")
                        self.last_target[name] = "PAUSED" if step == "pause" else "STARTED"


class Progress:
    """How many writes were made, and a wait for a given count."""

    def __init__(self):
        self.cond = threading.Condition()
        self.count = 0
        self.failed = False

    def step(self):
        with self.cond:
            self.count += 1
            self.cond.notify_all()

    def reached(self, n, timeout=120):
        with self.cond:
            return self.cond.wait_for(lambda: self.count >= n, timeout=timeout)


def churn(start_worker, serving, workers, settings, progress, tmp_path, events):
    """While the clients write: a fourth worker joins, then one worker is stopped and
    started again on its data directory; each at a given count of writes."""
    assert progress.reached(WRITES // 5), "the clients stalled before the join"
    joined = start_worker(settings, directory=tmp_path / "w3")
    serving.add(joined)
    events.append(("joined", progress.count))
    assert progress.reached(2 * WRITES // 5), "the clients stalled before the stop"
    leaving = workers[0]  # the first to start: the leader as long as it lives
    serving.remove(leaving)
    assert leaving.stop() == 0
    events.append(("stopped", progress.count))
    assert progress.reached(3 * WRITES // 5), "the clients stalled before the restart"
    back = start_worker(settings, directory=tmp_path / "w0")
    serving.add(back)
    events.append(("restarted", progress.count))
    return [*workers[1:], joined, back]


def target_state_of(value):
    return json.loads(value)["state"] if value is not None else None


def test_five_hundred_writes_through_every_worker_while_workers_come_and_go(
        start_worker, bed, tmp_path):
    group = bed.unique_topic("writes")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings, directory=tmp_path / f"w{i}") for i in range(3)]
    source_file = tmp_path / "in.txt"
    source_file.write_text("")
    serving = Serving(workers)
    progress = Progress()
    clients = [Client(i, serving, bed.unique_topic("lines"), source_file, progress)
               for i in range(CLIENTS)]
    for c in clients:
        c.start()
    events = []
    live = churn(start_worker, serving, workers, settings, progress, tmp_path, events)
    for c in clients:
        c.join(timeout=300)
        assert not c.is_alive(), "a client did not finish"
    replies = [r for c in clients for r in c.replies]
    assert len(replies) == WRITES == 500, len(replies)
    wrong = [r for r in replies if r[2] != EXPECTED[r[0]]]
    assert not wrong, f"{len(wrong)} write(s) not answered as expected (churn {events}): " \
                      f"{wrong[:5]}"

    # every write landed: the config topic's last record of each key says so
    latest = {key.decode(): value for _, key, value in read_topic(bed, f"{group}-configs")}
    for c in clients:
        for name in c.names:
            stored = latest.get(f"connector-{name}")
            if name in c.deleted:
                assert stored is None, (name, stored)
                continue
            assert stored is not None, f"no config of {name} in the config topic"
            assert json.loads(stored)["properties"] == {**c.last_config[name],
                                                        "name": name}, name
            assert target_state_of(latest.get(f"target-state-{name}")) == \
                c.last_target[name], name
    # and every live worker's view follows the config topic
    kept = sorted(n for c in clients for n in c.names if n not in c.deleted)
    wait_for(lambda: all(w.get("/connectors").json() == kept for w in live), timeout=60,
             what="every worker listing the connectors left")
