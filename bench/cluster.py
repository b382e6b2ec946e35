#!/usr/bin/env python3
"""The cluster scenarios of bench/run --cluster: a tributary cluster against a Kafka Connect
distributed cluster of the bed's Kafka (4.4; 3.9 on a 3.9 bed), three workers each, with the
same session.timeout.ms, heartbeat.interval.ms and scheduled.rebalance.max.delay.ms and the
same client settings (Connect's as harness.py's connect-tuned), against a running test bed.

- failover: a sink connector's tasks spread over three workers; one worker that runs tasks
  and does not lead is killed with SIGKILL; the time until another worker's status shows
  every task RUNNING on the two left.
- join: records flow steadily to the sink (a fixed rate over every partition, the file
  flushed every FLUSH_MS); a third worker joins the two and takes tasks. The pause of the
  tasks that did not move is the longest time the sink's file did not grow from the join
  until the tasks run spread over three workers and SETTLE_S more: while the tasks that
  moved are stopped or starting, the ones that stayed are the ones that write.
- throughput: on the three workers left after the join, a second FileStreamSink with
  BULK_TASKS tasks reads N records preloaded on a BULK_PARTITIONS-partition topic (100-byte
  values, written by floor_produce once for every run); records/s until the file holds the
  N-th, counted from the connector's creation and from the first record in the file, and
  the CPU per record of the three workers together (/proc).

bench/run builds tributary, starts the bed and calls this with the test venv's Python
(confluent-kafka produces the traffic); see bench/README.md. It reuses bench/harness.py's
processes and workers. Every wait is a bounded poll; every process started here is stopped
here.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

import harness
from harness import BenchError, Connect, Tributary, cpu_seconds, http, log, stop_all

SESSION_MS = 6000  # the broker's group.min.session.timeout.ms
HEARTBEAT_MS = 1000
DELAY_MS = 3000  # scheduled.rebalance.max.delay.ms
FLUSH_MS = 100  # offset.flush.interval.ms: how often a file sink's file grows
TASKS = 3
PARTITIONS = 6
RATE = 300  # records a second, over every partition
SETTLE_S = 5
BULK_PARTITIONS = 12
BULK_TASKS = 6  # two a worker
BULK_SIZE = 100  # bytes a value, as the harness's
CONNECT_DISTRIBUTED = "org.apache.kafka.connect.cli.ConnectDistributed"
# What connect-file 4.3.1 needs of Kafka 4.4 and 4.4 moved: bench/connect-shim/
SHIMMED_CLASS = "org/apache/kafka/common/utils/AppInfoParser.class"


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
    # "group G: 3 worker(s), leader http://127.0.0.1:PORT" at each rebalance
    LEADER = re.compile(rb"leader http://127\.0\.0\.1:(\d+)")

    def leader_log(self) -> Path:
        return self.log_path


class ConnectMember(Member, Connect):
    # "Joined group at generation G ... leaderUrl='http://127.0.0.1:PORT/'"
    LEADER = re.compile(rb"leaderUrl='http://127\.0\.0\.1:(\d+)/'")

    def leader_log(self) -> Path:
        return self.dir / "connect.log"

    def common_properties(self) -> list[str]:
        return super().common_properties() + harness.CONNECT_TUNED

    def argv(self) -> list:
        argv = super().argv()
        argv[argv.index(harness.CONNECT_MAIN)] = CONNECT_DISTRIBUTED
        argv[argv.index("-cp") + 1] = self.ctx.classpath
        # distributed, offset.storage.* are the offsets topic's settings: the standalone
        # worker's file would be taken for a topic config
        props = self.dir / "worker.properties"
        props.write_text("".join(line for line in props.read_text().splitlines(True)
                                 if not line.startswith("offset.storage.file.filename=")))
        return argv


SYSTEMS = {"tributary": TributaryMember, "connect": ConnectMember}


def connect_classpath(libs: str, work: Path) -> str:
    """Connect's classpath: the Kafka jars in libs, and bench/connect-shim compiled into
    work when they lack the class connect-file 4.3.1 calls (Kafka 4.4 moved it)."""
    for jar in Path(libs).glob("kafka-clients-*.jar"):
        with zipfile.ZipFile(jar) as z:
            if SHIMMED_CLASS in z.namelist():
                return f"{libs}/*"
    shim = work / "connect-shim"
    source = Path(__file__).resolve().parent / "connect-shim" / "AppInfoParser.java"
    done = subprocess.run(["javac", "-d", str(shim), "-cp", f"{libs}/*", str(source)],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise BenchError(f"javac {source} failed: {done.stderr[-1000:]}")
    return f"{libs}/*:{shim}"


def preload(ctx) -> None:
    """ctx.args.records records of BULK_SIZE bytes on a new topic of BULK_PARTITIONS
    partitions, once for every run (each run reads it with a group of its own)."""
    ctx.bulk_topic = f"bench-cluster-{ctx.run_id}-bulk"
    admin = AdminClient({"bootstrap.servers": ctx.bootstrap})
    admin.create_topics([NewTopic(ctx.bulk_topic, BULK_PARTITIONS, 1)])[ctx.bulk_topic].result(30)
    n = ctx.args.records
    log(f"cluster: preloading {n} records of {BULK_SIZE} bytes into {ctx.bulk_topic}")
    result = harness.run_floor(ctx, [str(Path(ctx.args.floor) / "floor_produce"), "-b",
                                     ctx.bootstrap, "-t", ctx.bulk_topic, "-n", n, "-s",
                                     BULK_SIZE, "-T", int(ctx.run_timeout)], "preload")
    if result["records"] != n:
        raise BenchError(f"preload delivered {result['records']} of {n} records")
    ctx.bulk_bytes = result["bytes"] + n  # each value and a newline


def throughput(ctx, system: str, group: str, live: list) -> dict:
    """A FileStreamSink with BULK_TASKS tasks over the preloaded topic on the workers live,
    until its file holds every record (a stat every 20 ms)."""
    name = f"{group}-bulk"  # its consumer group, connect-<name>, new in every run
    out = ctx.sink_dir / f"{name}.txt"
    n, expected = ctx.args.records, ctx.bulk_bytes
    config = {"connector.class": "FileStreamSink", "topics": ctx.bulk_topic,
              "file": str(out), "tasks.max": str(BULK_TASKS),
              "key.converter": harness.STRING, "value.converter": harness.STRING}
    try:
        background = harness.Background(ctx)
        cpu0, t0 = sum(cpu_seconds(m.pid) for m in live), time.monotonic()
        create(live[0], name, config)
        first, first_size = None, 0
        while (size := out.stat().st_size if out.exists() else 0) < expected:
            if size and first is None:
                first, first_size = time.monotonic(), size
            for m in live:
                m.check_alive()
            if time.monotonic() > t0 + ctx.run_timeout:
                raise BenchError(f"{system}: the bulk sink wrote {size} of {expected} bytes "
                                 f"after {ctx.run_timeout:.0f} s")
            time.sleep(0.02)
        t1, cpu1 = time.monotonic(), sum(cpu_seconds(m.pid) for m in live)
        busy = background.cores()
        harness.check_line_count(out, n, f"{system} bulk")
        # where its tasks ran: the status once every task shows (bounded)
        where = wait(lambda: placement(live[0], name, BULK_TASKS), 60,
                     f"{system}: the bulk sink's {BULK_TASKS} tasks RUNNING")
        if first is None:  # the whole file at the first stat
            first, first_size = t1, 0
        # records after the first stat that saw any: their bytes over the time to the N-th
        after_first = (expected - first_size) / (BULK_SIZE + 1)
        return {"bulk_rps": n / (t1 - t0),
                "bulk_rps_first": after_first / (t1 - first) if t1 > first else None,
                "bulk_cpu_per_m": (cpu1 - cpu0) / n * 1e6,
                "bulk_cores": (cpu1 - cpu0) / (t1 - t0), "bulk_workers": len(set(where.values())),
                "background": busy}
    finally:
        out.unlink(missing_ok=True)


def leader_port(worker) -> int:
    """The port of the group's leader, as the worker's log last named it (0: none yet)."""
    found = worker.LEADER.findall(worker.leader_log().read_bytes())
    return int(found[-1]) if found else 0


def worker_id(worker) -> str:
    return f"127.0.0.1:{worker.port}"


def placement(worker, name: str, count: int = TASKS):
    """{task: worker_id} once the connector and its count tasks are RUNNING; else None."""
    code, body = http("GET", f"{worker.base}/connectors/{name}/status", timeout=30)
    if code != 200:
        return None
    status = json.loads(body)
    tasks = status.get("tasks", [])
    if status.get("connector", {}).get("state") != "RUNNING" or len(tasks) != count or \
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
    sink = f"{group}-sink"  # its consumer group, connect-<name>, new in every run
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
        create(members[0], sink, config)
        before = wait(lambda: (lambda p: p if p and len(set(p.values())) == 3 else None)(
            placement(members[0], sink)), 120, f"{system}: tasks on three workers")

        # failover: the last started of the workers that do not lead (they all run a
        # task): a leader's successor assigns its tasks at once, without the delay
        leader = leader_port(members[0])
        victim = [m for m in members if m.port != leader][-1]
        survivors = [m for m in members if m is not victim]  # members[0] among them
        victim.proc.kill()
        killed = time.monotonic()
        wait(lambda: (lambda p: p if p and worker_id(victim) not in p.values() else None)(
            placement(members[0], sink)), SESSION_MS / 1000 + DELAY_MS / 1000 + 60,
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
        live = {worker_id(m) for m in survivors + [joining]}
        wait(lambda: (lambda p: p if p and set(p.values()) == live else None)(
            placement(members[0], sink)), 120, f"{system}: tasks spread again")
        spread = time.monotonic()
        time.sleep(SETTLE_S)
        pause = growth.longest_gap(joined, time.monotonic())
        traffic.stop()
        growth.stop()
        return {"system": system, "rep": rep, "failover_s": failover,
                "spawn_spread_s": spread - joined, "join_spread_s": spread - ready,
                "join_pause_s": pause, "steady_gap_s": steady,
                **throughput(ctx, system, group, survivors + [joining])}
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
         f"{PARTITIONS}-partition topic; {RATE} records/s during the join. Connect's "
         "workers have harness.py's connect-tuned client settings (tributary's). "
         "bench/README.md (\"Cluster\") says how each figure is taken.", "",
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
          "(the sinks write at each flush).", "",
          "## Throughput", "",
          f"{ctx.args.records} records of {BULK_SIZE} bytes preloaded on a "
          f"{BULK_PARTITIONS}-partition topic, read by a FileStreamSink with tasks.max="
          f"{BULK_TASKS} on the three workers left after the join (\"workers\": how many "
          "ran its tasks). CPU is the three workers' together; \"other load\" the cores "
          "that processes outside the benchmark kept busy meanwhile.", "",
          "| system | run | records/s from the creation | records/s from the first record "
          "| CPU s per M records | cores used | workers | other load (cores) |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        first = f"{r['bulk_rps_first']:.0f}" if r["bulk_rps_first"] else "–"
        L.append(f"| {r['system']} | {r['rep']} | {r['bulk_rps']:.0f} | {first} | "
                 f"{r['bulk_cpu_per_m']:.2f} | {r['bulk_cores']:.2f} | {r['bulk_workers']} | "
                 f"{r['background']:.2f} |")
    for system in SYSTEMS:
        mine = [r for r in rows if r["system"] == system]
        if mine:
            L.append(f"| {system} | median (min–max) | "
                     f"{harness.spread([r['bulk_rps'] for r in mine], 0)} | "
                     f"{harness.spread([r['bulk_rps_first'] for r in mine], 0)} | "
                     f"{harness.spread([r['bulk_cpu_per_m'] for r in mine], 2)} | "
                     f"{harness.spread([r['bulk_cores'] for r in mine], 2)} | | |")
    L += ["", "## Machine", ""]
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
    p.add_argument("--floor", required=True, help="the floor programs' dir (floor_produce)")
    p.add_argument("-n", "--records", type=int, default=2_000_000,
                   help="records of the throughput scenario")
    p.add_argument("--broker-pid", type=int, default=0)
    args = p.parse_args()

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    ctx = SimpleNamespace(args=args, bootstrap=args.bootstrap, libs=args.libs,
                          plugins=args.plugins, tributary=args.tributary,
                          work=Path(args.work), flush_ms=FLUSH_MS,
                          broker_pid=args.broker_pid,
                          run_id=f"{int(time.time()) % 1000000}",
                          # a minute, or 5000 records/s
                          run_timeout=max(60.0, args.records / 5000.0))
    ctx.work.mkdir(parents=True, exist_ok=True)
    # the bulk sink's file on tmpfs, as the harness's sinks: the pipelines, not the disk
    shm = Path("/dev/shm")
    room = shm.is_dir() and shutil.disk_usage(shm).free > 2 * args.records * (BULK_SIZE + 1)
    ctx.sink_dir = Path(tempfile.mkdtemp(prefix="tributary-cluster-",
                                         dir=shm if room else ctx.work))
    rows = []
    try:
        ctx.classpath = connect_classpath(args.libs, ctx.work)
        preload(ctx)
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
        shutil.rmtree(ctx.sink_dir, ignore_errors=True)
    harness.publish(Path(args.results), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
