#!/usr/bin/env python3
"""The cluster scenarios of bench/run --cluster: a tributary cluster against a Kafka Connect
3.9 distributed cluster, three workers each, with the same session.timeout.ms,
heartbeat.interval.ms and scheduled.rebalance.max.delay.ms, against a running test bed.

- failover: a sink connector's tasks spread over three workers; one worker that runs tasks
  and does not lead is killed with SIGKILL; the time until another worker's status shows
  every task RUNNING on the two left.
- join: records flow steadily to the sink (a fixed rate over every partition, the file
  flushed every FLUSH_MS); a third worker joins the two and takes tasks. The pause of the
  tasks that did not move is the longest time the sink's file did not grow from the join
  until the tasks run spread over three workers and SETTLE_S more: while the tasks that
  moved are stopped or starting, the ones that stayed are the ones that write.

bench/run builds tributary, starts the bed and calls this with the test venv's Python
(confluent-kafka produces the traffic); see bench/README.md. It reuses bench/harness.py's
processes and workers. Every wait is a bounded poll; every process started here is stopped
here.
"""
from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

import harness
from harness import BenchError, Connect, Tributary, http, log, stop_all

SESSION_MS = 6000  # the broker's group.min.session.timeout.ms
HEARTBEAT_MS = 1000
DELAY_MS = 3000  # scheduled.rebalance.max.delay.ms
FLUSH_MS = 100  # offset.flush.interval.ms: how often a file sink's file grows
TASKS = 3
PARTITIONS = 6
RATE = 300  # records a second, over every partition
SETTLE_S = 5
CONNECT_DISTRIBUTED = "org.apache.kafka.connect.cli.ConnectDistributed"


def cluster_properties(worker, group: str) -> list[str]:
    return [f"group.id={group}", f"config.storage.topic={group}-configs",
            f"offset.storage.topic={group}-offsets", f"status.storage.topic={group}-status",
            "config.storage.replication.factor=1", "offset.storage.replication.factor=1",
            "status.storage.replication.factor=1", "offset.storage.partitions=5",
            "status.storage.partitions=2", f"session.timeout.ms={SESSION_MS}",
            f"heartbeat.interval.ms={HEARTBEAT_MS}",
            # the sink's consumers too: a dead worker's consumer holds the sink's group up
            # for its own session otherwise (45 s by default in both)
            f"consumer.session.timeout.ms={SESSION_MS}",
            f"consumer.heartbeat.interval.ms={HEARTBEAT_MS}",
            f"scheduled.rebalance.max.delay.ms={DELAY_MS}",
            "rest.advertised.host.name=127.0.0.1", f"rest.advertised.port={worker.port}"]


class Member:
    """Mixed in before a harness worker class: that worker with the cluster's keys."""

    def __init__(self, ctx, label, group):
        super().__init__(ctx, label)
        self.group = group

    def common_properties(self) -> list[str]:
        return super().common_properties() + cluster_properties(self, self.group)


class TributaryMember(Member, Tributary):
    pass


class ConnectMember(Member, Connect):
    def argv(self) -> list:
        argv = super().argv()
        argv[argv.index(harness.CONNECT_MAIN)] = CONNECT_DISTRIBUTED
        # distributed, offset.storage.* are the offsets topic's settings: the standalone
        # worker's file would be taken for a topic config
        props = self.dir / "worker.properties"
        props.write_text("".join(line for line in props.read_text().splitlines(True)
                                 if not line.startswith("offset.storage.file.filename=")))
        return argv


SYSTEMS = {"tributary": TributaryMember, "connect": ConnectMember}


def worker_id(worker) -> str:
    return f"127.0.0.1:{worker.port}"


def placement(worker, name: str):
    """{task: worker_id} once the connector and TASKS tasks are RUNNING; else None."""
    code, body = http("GET", f"{worker.base}/connectors/{name}/status", timeout=30)
    if code != 200:
        return None
    status = json.loads(body)
    tasks = status.get("tasks", [])
    if status.get("connector", {}).get("state") != "RUNNING" or len(tasks) != TASKS or \
            any(t.get("state") != "RUNNING" for t in tasks):
        return None
    return {t["id"]: t["worker_id"] for t in tasks}


def wait(condition, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise BenchError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def create(worker, name: str, config: dict) -> None:
    """POST /connectors, again while Connect answers 409 during its first rebalance."""
    def created():
        code, body = http("POST", f"{worker.base}/connectors", {"name": name,
                                                                 "config": config})
        if code not in (201, 409):
            raise BenchError(f"{worker.kind}: creating {name} answered {code}: {body[:300]!r}")
        return code == 201 or b"already exists" in body
    wait(created, 120, f"{worker.kind} to create {name}", interval=0.5)


class Traffic:
    """RATE records a second over every partition of topic, until stopped."""

    def __init__(self, bootstrap: str, topic: str):
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic = topic
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        sent, t0 = 0, time.monotonic()
        while not self.stopping.is_set():
            due = int((time.monotonic() - t0) * RATE)
            for _ in range(due - sent):
                self.producer.produce(self.topic, value=f"r{sent:08d}".encode(),
                                      partition=sent % PARTITIONS)
                sent += 1
            self.producer.poll(0)
            time.sleep(0.005)

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.producer.flush(30)


class Growth:
    """When the sink's file grew, polled every 5 ms."""

    def __init__(self, path: Path):
        self.path, self.times = path, []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        size = -1
        while not self.stopping.is_set():
            now = self.path.stat().st_size if self.path.exists() else 0
            if now != size:
                size = now
                self.times.append(time.monotonic())
            time.sleep(0.005)

    def longest_gap(self, start: float, end: float) -> float:
        times = [start] + [t for t in self.times if start < t < end] + [end]
        return max(b - a for a, b in zip(times, times[1:]))

    def stop(self):
        self.stopping.set()
        self.thread.join(10)


def run_system(ctx, system: str, rep: int) -> dict:
    group = f"bench-cluster-{ctx.run_id}-{system}-{rep}"
    topic = f"{group}-in"
    admin = AdminClient({"bootstrap.servers": ctx.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    members = [SYSTEMS[system](ctx, f"{rep}-w{i}", group) for i in range(3)]
    try:
        for m in members:
            m.start()
        for m in members:
            m.wait_ready()
        out = ctx.work / f"{group}.txt"
        config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
                  "tasks.max": str(TASKS), "key.converter": harness.STRING,
                  "value.converter": harness.STRING}
        create(members[0], "sink", config)
        before = wait(lambda: (lambda p: p if p and len(set(p.values())) == 3 else None)(
            placement(members[0], "sink")), 120, f"{system}: tasks on three workers")

        # failover: the last worker started (it does not lead), which runs a task
        victim = members[2]
        if worker_id(victim) not in before.values():
            raise BenchError(f"{system}: the third worker runs no task: {before}")
        victim.proc.kill()
        killed = time.monotonic()
        wait(lambda: (lambda p: p if p and worker_id(victim) not in p.values() else None)(
            placement(members[0], "sink")), SESSION_MS / 1000 + DELAY_MS / 1000 + 60,
            f"{system}: the killed worker's tasks elsewhere", interval=0.02)
        failover = time.monotonic() - killed
        victim.stop()

        # join: traffic first, then a third worker
        traffic, growth = Traffic(ctx.bootstrap, topic), Growth(out)
        wait(lambda: out.exists() and out.stat().st_size > 0, 60, f"{system}: records")
        time.sleep(SETTLE_S)
        steady = growth.longest_gap(time.monotonic() - SETTLE_S, time.monotonic())
        joining = SYSTEMS[system](ctx, f"{rep}-w3", group)
        members.append(joining)
        joining.start()
        joined = time.monotonic()
        joining.wait_ready()
        ready = time.monotonic()
        live = {worker_id(m) for m in members[:2]} | {worker_id(joining)}
        wait(lambda: (lambda p: p if p and set(p.values()) == live else None)(
            placement(members[0], "sink")), 120, f"{system}: tasks spread again")
        spread = time.monotonic()
        time.sleep(SETTLE_S)
        pause = growth.longest_gap(joined, time.monotonic())
        traffic.stop()
        growth.stop()
        return {"system": system, "rep": rep, "failover_s": failover,
                "spawn_spread_s": spread - joined, "join_spread_s": spread - ready,
                "join_pause_s": pause, "steady_gap_s": steady}
    finally:
        for m in members:
            m.stop()


def render(ctx, rows: list[dict]) -> str:
    L = ["# tributary cluster benchmark", "",
         "**Taken on a loaded 2-core machine** (other jobs ran beside it: see the load "
         "average below): read the figures as a comparison of the two systems in one run, "
         "not as absolute numbers.", "",
         f"Three workers of each system on one single-node Kafka {ctx.args.kafka_version}, "
         f"session.timeout.ms={SESSION_MS}, heartbeat.interval.ms={HEARTBEAT_MS} (the "
         "workers' and the sink consumers'), "
         f"scheduled.rebalance.max.delay.ms={DELAY_MS}, offset.flush.interval.ms="
         f"{FLUSH_MS} for both; a FileStreamSink with tasks.max={TASKS} on a "
         f"{PARTITIONS}-partition topic; {RATE} records/s during the join. bench/README.md "
         "(\"Cluster\") says how each figure is taken.", "",
         "| system | run | failover (kill -9 → tasks RUNNING elsewhere) | join: tasks spread, "
         "from the new worker's start | from its REST API up "
         "| join: pause of the tasks that stayed | steady: longest gap |",
         "|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['system']} | {r['rep']} | {r['failover_s']:.2f} s | "
                 f"{r['spawn_spread_s']:.2f} s | "
                 f"{r['join_spread_s']:.2f} s | {r['join_pause_s']:.2f} s | "
                 f"{r['steady_gap_s']:.2f} s |")
    for system in SYSTEMS:
        mine = [r for r in rows if r["system"] == system]
        if len(mine) > 1:
            L.append(f"| {system} | median | "
                     f"{statistics.median(r['failover_s'] for r in mine):.2f} s | "
                     f"{statistics.median(r['spawn_spread_s'] for r in mine):.2f} s | "
                     f"{statistics.median(r['join_spread_s'] for r in mine):.2f} s | "
                     f"{statistics.median(r['join_pause_s'] for r in mine):.2f} s | |")
    floor = SESSION_MS / 1000 + DELAY_MS / 1000
    L += ["", f"A failover takes about session.timeout.ms + "
          f"scheduled.rebalance.max.delay.ms = {floor:.0f} s here at least (less the time "
          "since the killed worker's last heartbeat). The steady gap is the "
          "longest time the file did not grow before the join: the resolution of the pause "
          "(the sinks write at each flush).", "", "## Machine", ""]
    L += [line.replace("Connect standalone", "Connect distributed")
          for line in harness.machine(ctx)]
    return "\n".join(L) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--libs", required=True)
    p.add_argument("--plugins", required=True)
    p.add_argument("--kafka-version", default="3.9")
    p.add_argument("--tributary", required=True)
    p.add_argument("--src", default=str(Path(__file__).resolve().parents[1]))
    p.add_argument("--src-label", default="")
    p.add_argument("--work", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--reps", type=int, default=1)
    args = p.parse_args()

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    ctx = SimpleNamespace(args=args, bootstrap=args.bootstrap, libs=args.libs,
                          plugins=args.plugins, tributary=args.tributary,
                          work=Path(args.work), flush_ms=FLUSH_MS,
                          run_id=f"{int(time.time()) % 1000000}")
    ctx.work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for rep in range(args.reps):
            # alternate which system runs first
            for system in (list(SYSTEMS) if rep % 2 == 0 else list(reversed(SYSTEMS))):
                log(f"cluster: {system}, run {rep + 1}")
                rows.append(run_system(ctx, system, rep + 1))
                log(f"cluster: {rows[-1]}")
        text = render(ctx, rows)
    except BenchError as e:
        log(f"failed: {e}")
        return 1
    finally:
        stop_all()
    harness.publish(Path(args.results), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
