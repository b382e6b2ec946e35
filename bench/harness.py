#!/usr/bin/env python3
"""The scenarios of bench/run: tributary side by side with Apache Kafka Connect 3.9
standalone and the librdkafka floor programs, against a running test bed.

bench/run builds everything, starts the bed and calls this script; see bench/README.md.
Standard library only. Every wait is a bounded poll; every process started here is
stopped here (also on SIGTERM/SIGINT).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
STRING = "org.apache.kafka.connect.storage.StringConverter"
PARTITIONS = 4
# Kafka's own scripts (kafka-run-class.sh, connect-standalone.sh) start Connect with these.
CONNECT_JVM = ["-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
               "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
               "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]
CONNECT_MAIN = "org.apache.kafka.connect.cli.ConnectStandalone"
# pkg-config of the librdkafka tributary builds with (the cache's, see scripts/install-deps)
RDKAFKA_FLAGS = Path(__file__).resolve().parents[1] / "scripts" / "rdkafka-flags"
# Connect tuned to the client settings tributary runs with (librdkafka 2.0's defaults, which
# tributary keeps, and its sink's batch bound): the row the goals read. As shipped, Connect's
# worker forces acks=all and max.in.flight.requests.per.connection=1 on its producers, with
# linger.ms=0, 16 KiB batches, and 500 records per poll.
CONNECT_TUNED = [
    "producer.linger.ms=5",                       # librdkafka linger.ms
    "producer.batch.size=1000000",                # librdkafka batch.size
    "producer.max.in.flight.requests.per.connection=5",
    "producer.enable.idempotence=true",           # tributary's source producers
    "producer.acks=all",
    "producer.compression.type=none",             # librdkafka compression.codec
    "consumer.max.poll.records=1024",             # tributary's sink batch (BATCH_MAX)
    "consumer.fetch.min.bytes=1",                 # librdkafka fetch.min.bytes
    "consumer.fetch.max.wait.ms=500",             # librdkafka fetch.wait.max.ms
    "consumer.fetch.max.bytes=52428800",          # librdkafka fetch.max.bytes
    "consumer.max.partition.fetch.bytes=1048576",  # librdkafka max.partition.fetch.bytes
    "consumer.receive.buffer.bytes=-1",           # librdkafka: the OS default
]
# Records per encode and per decode loop of the formats scenario (at most N): a million
# take tributary's slowest loop about ten seconds; Python's serializers are slower.
FORMAT_RECORDS = 1_000_000
FORMAT_PEER_RECORDS = 100_000
FORMATS = ("json", "avro", "protobuf", "json_schema")
# Loopback only: never through a proxy from the environment.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class BenchError(Exception):
    pass


STARTED = time.monotonic()
LOAD_AT_START = Path("/proc/loadavg").read_text().split()[:3]


def log(message: str) -> None:
    print(f"bench: [{time.monotonic() - STARTED:6.1f} s] {message}", file=sys.stderr, flush=True)


def end_on_signals() -> None:
    """SIGTERM and SIGINT end the script through SystemExit, so that the finally blocks
    stop its workers and servers on the way out."""
    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def run_script(main) -> None:
    """Runs a scenario script's main() and exits with what it returns: 1 and the reason
    logged on a BenchError, 128 + the signal on SIGTERM or SIGINT."""
    end_on_signals()
    try:
        sys.exit(main())
    except BenchError as e:
        log(str(e))
        sys.exit(1)


# ------------------------------------------------------------------------ /proc readings
def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of pid, in seconds (/proc/<pid>/stat fields 14, 15)."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()  # fields[0] is field 3, the state
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def status_number(pid: int, key: str) -> int:
    """A figure of /proc/<pid>/status: VmRSS (now) or VmHWM (peak) in kB, or Threads."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise BenchError(f"no {key} in /proc/{pid}/status")


def busy_seconds() -> float:
    """CPU time the whole machine spent busy (every core), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def own_seconds(extra_pids) -> float:
    """CPU time of the benchmark itself: this process with its reaped children (cutime,
    cstime), every live descendant, and extra_pids (the broker)."""
    parents, stats = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        stats[int(entry)] = [int(x) for x in fields[11:15]]  # utime stime cutime cstime

    def ours(pid):
        for _ in range(64):  # bounded walk up the tree
            if pid == os.getpid() or pid in extra_pids:
                return True
            if pid not in parents or pid <= 1:
                return False
            pid = parents[pid]
        return False
    total = 0
    for pid, (utime, stime, cutime, cstime) in stats.items():
        if ours(pid):
            total += utime + stime + cutime + cstime
    return total / CLK_TCK


class Background:
    """How many cores processes outside the benchmark kept busy during a measurement: the
    machine's busy time minus the benchmark's own (harness, its children, the broker), per
    second. About 0 on a quiet machine; other jobs on a shared machine show here. pids:
    the brokers, when not ctx's one (bench/mirror.py's two clusters)."""

    def __init__(self, ctx: "Context | None", pids=None):
        self.pids = set(pids) if pids is not None else (
            {ctx.broker_pid} if ctx.broker_pid else set())
        self.t0, self.busy0, self.own0 = time.monotonic(), busy_seconds(), own_seconds(self.pids)

    def cores(self) -> float:
        elapsed = time.monotonic() - self.t0
        foreign = (busy_seconds() - self.busy0) - (own_seconds(self.pids) - self.own0)
        return max(0.0, foreign / elapsed) if elapsed > 0 else 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# ------------------------------------------------------------------------ processes
CHILDREN: list[subprocess.Popen] = []


def spawn(argv, log_path: Path, stdout=None, cwd=None) -> subprocess.Popen:
    out = open(log_path, "ab")
    proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL,
                            stdout=stdout if stdout is not None else out, stderr=out,
                            cwd=cwd)
    out.close()
    CHILDREN.append(proc)
    return proc


def stop(proc: subprocess.Popen, grace: float = 30) -> int | None:
    """SIGTERM, up to `grace` seconds, then SIGKILL."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    if proc in CHILDREN:
        CHILDREN.remove(proc)
    return proc.returncode


def stop_all() -> None:
    for proc in list(reversed(CHILDREN)):
        stop(proc, 10)


def http(method: str, url: str, body=None, timeout: float = 60):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": "application/json"})
    try:
        with HTTP.open(request, timeout=timeout) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def probe(port: int, path: str) -> int:
    """Status code of GET path, 0 when nothing answers yet. Raw socket: cheap enough to
    poll every millisecond."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      "Connection: close\r\n\r\n".encode())
            head = b""
            while b"\r\n" not in head and len(head) < 256:
                chunk = s.recv(256)
                if not chunk:
                    break
                head += chunk
        parts = head.split()
        return int(parts[1]) if head.startswith(b"HTTP/") and len(parts) > 1 else 0
    except (OSError, ValueError):
        return 0


# ------------------------------------------------------------------------ the systems
class Worker:
    """A tributary or Kafka Connect standalone worker in a fresh directory."""

    kind = ""
    ready_path = ""

    def __init__(self, ctx: "Context", label: str):
        self.ctx = ctx
        self.dir = ctx.work / f"{self.kind}-{label}"
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.spawned_at = 0.0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def common_properties(self) -> list[str]:
        return [f"bootstrap.servers={self.ctx.bootstrap}",
                f"listeners=http://127.0.0.1:{self.port}",
                f"key.converter={STRING}",
                f"value.converter={STRING}",
                f"offset.flush.interval.ms={self.ctx.flush_ms}"]

    def argv(self) -> list:
        raise NotImplementedError

    def start(self) -> "Worker":
        argv = self.argv()
        self.spawned_at = time.monotonic()
        self.proc = spawn(argv, self.log_path)
        return self

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise BenchError(f"{self.kind} exited with {self.proc.returncode}:\n"
                             f"{tail(self.log_path)}")

    def wait_ready(self, timeout: float = 180) -> float:
        """Polls ready_path every millisecond; returns seconds from spawn to the first 200."""
        deadline = self.spawned_at + timeout
        while True:
            if probe(self.port, self.ready_path) == 200:
                return time.monotonic() - self.spawned_at
            self.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"{self.kind} not ready after {timeout} s:\n{tail(self.log_path)}")
            time.sleep(0.001)

    def create(self, name: str, config: dict) -> None:
        code, body = http("POST", f"{self.base}/connectors", {"name": name, "config": config})
        if code != 201:
            raise BenchError(f"{self.kind}: creating {name} answered {code}: {body[:500]!r}")

    def running(self, name: str) -> bool:
        code, body = http("GET", f"{self.base}/connectors/{name}/status", timeout=30)
        if code != 200:
            return False
        status = json.loads(body)
        tasks = status.get("tasks", [])
        failed = [t for t in tasks if t.get("state") == "FAILED"]
        if failed or status.get("connector", {}).get("state") == "FAILED":
            raise BenchError(f"{self.kind}: {name} failed: {json.dumps(status)[:2000]}")
        return (status.get("connector", {}).get("state") == "RUNNING" and bool(tasks)
                and all(t.get("state") == "RUNNING" for t in tasks))

    def wait_running(self, names: list[str], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        pending = list(names)
        while pending:
            pending = [n for n in pending if not self.running(n)]
            if not pending:
                return
            self.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"{self.kind}: not RUNNING after {timeout} s: {pending[:5]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            code = stop(self.proc, 30)
            if code not in (0, 143, -15):
                log(f"{self.kind} in {self.dir} exited with {code}")


class Tributary(Worker):
    kind = "tributary"
    ready_path = "/health"

    def argv(self) -> list:
        props = self.dir / "worker.properties"
        props.write_text("\n".join(self.common_properties() + [
            f"offset.storage.file.filename={self.dir / 'store' / 'tributary.db'}"]) + "\n")
        self.log_path = self.dir / "tributary.log"
        return [self.ctx.tributary, props]


def connect_log_option(libs, folder: Path) -> str:
    """What Kafka's config/connect-log4j2.properties (4.x) or connect-log4j.properties (3.9)
    does, into folder/connect.log instead of stdout: the JVM option naming the file written.
    The flavor is the classpath's: 4.x brings log4j-core, 3.9 uses reload4j."""
    log = folder / "connect.log"
    if any(Path(libs).glob("log4j-core-*.jar")):
        config = folder / "log4j2.properties"
        config.write_text("\n".join([
            "rootLogger.level = INFO", "rootLogger.appenderRef.file.ref = file",
            "appender.file.type = File", "appender.file.name = file",
            f"appender.file.fileName = {log}", "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d] %p %m (%c:%L)%n",
            "logger.reflections.name = org.reflections",
            "logger.reflections.level = error"]) + "\n")
        return f"-Dlog4j2.configurationFile={config}"
    config = folder / "log4j.properties"
    config.write_text("\n".join([
        "log4j.rootLogger=INFO, file",
        "log4j.appender.file=org.apache.log4j.FileAppender",
        f"log4j.appender.file.File={log}",
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c:%L)%n",
        "log4j.logger.org.reflections=ERROR"]) + "\n")
    return f"-Dlog4j.configuration=file:{config}"


class Connect(Worker):
    kind = "connect"
    ready_path = "/"

    def argv(self) -> list:
        props = self.dir / "worker.properties"
        props.write_text("\n".join(self.common_properties() + [
            f"offset.storage.file.filename={self.dir / 'connect.offsets'}",
            f"plugin.path={self.ctx.plugins}",
            # What Connect's own start-up warning recommends when every plugin has a
            # ServiceLoader manifest: skips the reflective scan, about 2.5 s less start-up
            # here. The faster setting, so the comparison does not flatter tributary.
            "plugin.discovery=service_load"]) + "\n")
        self.log_path = self.dir / "connect.out"
        return ["java", *CONNECT_JVM, connect_log_option(self.ctx.libs, self.dir),
                "-cp", f"{self.ctx.libs}/*", CONNECT_MAIN, props]

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise BenchError(f"connect exited with {self.proc.returncode}:\n"
                             f"{tail(self.log_path)}\n{tail(self.dir / 'connect.log')}")


class ConnectTuned(Connect):
    """Connect with CONNECT_TUNED in its worker properties."""
    kind = "connect-tuned"

    def common_properties(self) -> list[str]:
        return super().common_properties() + CONNECT_TUNED


WORKERS = {"tributary": Tributary, "connect": Connect, "connect-tuned": ConnectTuned}


# ------------------------------------------------------------------------ context
class Dataset:
    """A preloaded topic the sinks read: n records of size-byte values, and the bytes a sink's
    file holds once it wrote them all (each value and a newline)."""

    def __init__(self, topic: str, n: int, size: int):
        self.topic, self.n, self.size = topic, n, size
        self.expected_bytes = 0


class Context:
    def __init__(self, args):
        self.args = args
        self.smoke = args.smoke
        self.n = args.records
        self.size = args.value_size
        self.bootstrap = args.bootstrap
        self.libs = args.libs
        self.plugins = args.plugins
        self.tributary = args.tributary
        self.floor_dir = Path(args.floor)
        self.work = Path(args.work)
        self.flush_ms = args.flush_ms
        self.reps = args.reps
        self.scrape_pairs = args.scrape_pairs
        self.rep = 0  # the repetition running now, recorded in each row
        self.broker_pid = args.broker_pid
        self.run_id = f"{int(time.time()) % 1000000}"
        self.topic = f"bench-in-{self.run_id}"
        self.input_file = self.work / "source-input.txt"
        self.data = Dataset(self.topic, self.n, self.size)  # preload() fills expected_bytes
        # the scraping pairs' topic, preloaded by sink() (bench-scrape-...)
        self.scrape_data = Dataset(f"bench-scrape-{self.run_id}",
                                   args.scrape_records or 4 * self.n, self.size)
        # generous but bounded: a minute, or 5000 records/s (ten times slower than the
        # slowest system measured so far)
        self.run_timeout = max(60.0, max(self.n, self.scrape_data.n) / 5000.0)
        self.rows: list[dict] = []
        self.notes: list[str] = []
        self.sink_dir = self._sink_dir()

    def _sink_dir(self) -> Path:
        """Where the sinks write: tmpfs when it has room for two outputs, so that the
        disk's writeback (and the throttling of writers while the previous system's
        half-gigabyte is still being written back) does not decide the figures."""
        needed = 2 * max(self.n, self.scrape_data.n) * (self.size + 1)
        shm = Path("/dev/shm")
        if shm.is_dir() and shutil.disk_usage(shm).free > needed:
            self.notes.append("The sinks write to tmpfs (/dev/shm), the same for every "
                              "system: the figures measure the pipelines, not the disk.")
            return Path(tempfile.mkdtemp(prefix="tributary-bench-", dir=shm))
        self.notes.append("The sinks write to the work directory on disk (/dev/shm has no "
                          "room): its writeback shows in the sink figures.")
        return self.work

    def floor(self, name: str) -> str:
        return str(self.floor_dir / name)


def run_floor(ctx: Context, argv: list, label: str) -> dict:
    log_path = ctx.work / f"{label}.log"
    proc = spawn(argv, log_path, stdout=subprocess.PIPE)
    try:
        out, _ = proc.communicate(timeout=ctx.run_timeout + 60)
    except subprocess.TimeoutExpired:
        stop(proc, 5)
        raise BenchError(f"{label} did not finish:\n{tail(log_path)}")
    CHILDREN.remove(proc)
    lines = [ln for ln in out.decode().splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise BenchError(f"{label} failed ({proc.returncode}): {out.decode()[-500:]}\n"
                         f"{tail(log_path)}")
    return json.loads(lines[-1])


class Watcher:
    """floor_consume --end-offsets: creates the topic with 4 partitions and waits until its
    end offsets add up to n (N unless told)."""

    def __init__(self, ctx: Context, topic: str, label: str, n: int | None = None):
        self.ctx = ctx
        self.n = ctx.n if n is None else n
        self.log_path = ctx.work / f"{label}-watch.log"
        self.proc = spawn([ctx.floor("floor_consume"), "--end-offsets", "-c", PARTITIONS,
                           "-b", ctx.bootstrap, "-t", topic, "-n", self.n,
                           "-T", int(ctx.run_timeout), "-i", 20],
                          self.log_path, stdout=subprocess.PIPE)
        line = self._line(60)
        if not line.startswith("ready"):
            stop(self.proc, 5)
            raise BenchError(f"watcher for {topic}: {line!r}\n{tail(self.log_path)}")

    def _line(self, timeout: float) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().decode().strip() if ready else ""

    def wait(self, worker: Worker | None = None) -> float:
        """Waits for the count-th record; returns the monotonic time it was seen."""
        deadline = time.monotonic() + self.ctx.run_timeout + 30
        while self.proc.poll() is None:
            if worker is not None:
                worker.check_alive()
            if time.monotonic() > deadline:
                stop(self.proc, 5)
                raise BenchError("the watcher did not finish")
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.01)
            if ready:
                break
        done = time.monotonic()
        out = self.proc.stdout.read().decode()
        self.proc.wait(30)
        CHILDREN.remove(self.proc)
        if self.proc.returncode != 0:
            raise BenchError(f"the topic did not reach {self.n} records: {out.strip()}")
        return done


def alternating(ctx: Context, systems: list[str], first: int = 0):
    """Yields the systems ctx.reps times, as listed in even repetitions and reversed in odd
    ones, so that no system always runs first (on a cold broker) or right after the same
    other one; ctx.rep tells the repetition, counted from first."""
    for repetition in range(first, first + ctx.reps):
        ctx.rep = repetition
        yield from (systems if repetition % 2 == 0 else list(reversed(systems)))


def row(ctx, scenario, system, **figures) -> dict:
    entry = {"scenario": scenario, "system": system, "rep": ctx.rep, **figures}
    ctx.rows.append(entry)
    log(f"{scenario} {system}: " + ", ".join(f"{k}={v:.6g}" if isinstance(v, float)
                                           else f"{k}={v}" for k, v in figures.items()))
    return entry


class Fixed:
    """A Background reading taken earlier."""

    def __init__(self, cores: float):
        self.value = cores

    def cores(self) -> float:
        return self.value


def throughput_row(ctx, scenario, system, seconds, cpu, hwm_kb, background, records=None,
                   **extra):
    """records: N unless said otherwise; extra: more figures of the row."""
    records = records or ctx.n
    return row(ctx, scenario, system, records=records, seconds=seconds,
               rps=records / seconds if seconds > 0 else 0.0,
               cpu_per_m=cpu / records * 1e6, cores=cpu / seconds if seconds > 0 else 0.0,
               rss_mb=hwm_kb / 1024, background=background.cores(), **extra)


# ------------------------------------------------------------------------ data
def preload_topic(ctx: Context, data: Dataset, label: str) -> dict:
    """Writes data's records into its topic (created with PARTITIONS partitions) with
    floor_produce; returns floor_produce's figures."""
    log(f"preloading {data.n} records of {data.size} bytes into {data.topic} "
        f"({PARTITIONS} partitions)")
    watcher = Watcher(ctx, data.topic, label, n=data.n)
    result = run_floor(ctx, [ctx.floor("floor_produce"), "-b", ctx.bootstrap, "-t", data.topic,
                             "-n", data.n, "-s", data.size, "-T", int(ctx.run_timeout)],
                       label)
    watcher.wait()
    data.expected_bytes = result["bytes"] + data.n  # each value and a newline
    return result


def preload(ctx: Context) -> None:
    result = preload_topic(ctx, ctx.data, "preload")
    # The bed's first consumer group creates __consumer_offsets (and its coordinator answers
    # COORDINATOR_NOT_AVAILABLE meanwhile): let a throwaway group pay that, not a system.
    run_floor(ctx, [ctx.floor("floor_consume"), "-b", ctx.bootstrap, "-t", ctx.topic, "-n", 1,
                    "-T", 60], "preload-group")
    ctx.notes.append(f"Preload: {ctx.n} records ({result['bytes'] / 1e6:.1f} MB of values) "
                     f"in {result['seconds']:.1f} s.")
    subprocess.run([ctx.floor("floor_produce"), "-o", ctx.input_file, "-n", str(ctx.n),
                    "-s", str(ctx.size)], check=True, timeout=ctx.run_timeout)


# ------------------------------------------------------------------------ scenarios
class Scraper:
    """GET /metrics once a second in a thread, until stopped; counts scrapes."""

    def __init__(self, port: int):
        self.port = port
        self.scrapes = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.done.wait(1.0):
            if probe(self.port, "/metrics") == 200:
                self.scrapes += 1

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)


# The consumer settings tributary gives its sinks where librdkafka's defaults differ
# (connectors/kafka/client_props.c): the floors consume with them too, so that floor and
# tributary run the same client.
TRIBUTARY_CONSUMER = ["queued.min.messages=10000000", "queued.max.messages.kbytes=131072"]

# The sink's systems in the order of the even repetitions. floor: floor_consume counting;
# floor-write: floor_consume writing each value as a line to the same tmpfs (the same work
# as a file sink); tributary-scraped: tributary with GET /metrics once a second.
SINK_SYSTEMS = ["floor", "floor-write", "tributary", "connect", "connect-tuned",
                "tributary-scraped"]


# The scraping goal asks scraped and unscraped sinks to agree within 5%, finer than the
# spread of one sink run on 2 cores: two runs back to back differ by some ±15%, in speed
# and in CPU per record alike (a run that finds the broker slower also spends more CPU
# per record), and a 2-second run sees one or two scrapes. So the scenario "scraping" runs
# the pair at once: two workers, one scraped once a second, each with a FileStreamSink
# over the same topic of its own (four times N records), created one right after the
# other, each pair's first in turn. Both meet the same broker and the same machine at the
# same time, so what varies from run to run is shared and cancels out of the pair's
# ratio. The goal reads the median of ctx.scrape_pairs pairs' ratios ("scrape-pair"
# rows). After each pair the scraped worker, idle with the sink's series in place,
# answers SCRAPE_BURST scrapes back to back: their CPU is what a scrape costs.
SCRAPE_PAIR = ["tributary", "tributary-scraped"]
SCRAPE_BURST = 200


def sink(ctx: Context) -> None:
    log("scenario sink: Kafka -> file")
    for system in alternating(ctx, SINK_SYSTEMS):
        if system.startswith("floor"):
            sink_floor(ctx, system)
        else:
            sink_worker(ctx, system)
    if ctx.scrape_pairs > 0:
        preload_topic(ctx, ctx.scrape_data, "preload-scrape")
    for pair in range(ctx.scrape_pairs):
        ctx.rep = pair
        scrape_pair(ctx, SCRAPE_PAIR if pair % 2 == 0 else list(reversed(SCRAPE_PAIR)))


def scrape_pair(ctx: Context, order: list[str]) -> None:
    """Both systems of SCRAPE_PAIR at once, each a fresh worker whose sink is created in
    order; each run's time and CPU from its creation to its file holding every line."""
    data = ctx.scrape_data
    workers = {system: Tributary(ctx, f"scraping-{system}").start() for system in order}
    outs = {system: ctx.sink_dir / f"scraping-{system}.txt" for system in order}
    scraper = None
    try:
        for worker in workers.values():
            worker.wait_ready()
        scraper = Scraper(workers["tributary-scraped"].port)
        background = Background(ctx)
        started, done = {}, {}
        for system in order:
            started[system] = cpu_seconds(workers[system].pid), time.monotonic()
            workers[system].create(f"bench-scraping-{system}-{ctx.run_id}-{ctx.rep}", {
                "connector.class": "FileStreamSink", "topics": data.topic,
                "file": str(outs[system]), "key.converter": STRING,
                "value.converter": STRING})
        while len(done) < len(order):
            for system in order:
                out = outs[system]
                if system not in done and out.exists() and \
                        out.stat().st_size >= data.expected_bytes:
                    done[system] = cpu_seconds(workers[system].pid), time.monotonic()
                workers[system].check_alive()
            if time.monotonic() > started[order[0]][1] + ctx.run_timeout:
                raise BenchError(f"scraping: not every line written after "
                                 f"{ctx.run_timeout} s")
            time.sleep(0.02)
        busy = background.cores()
        runs = {}
        for system in order:
            check_line_count(outs[system], data.n, f"scraping {system}")
            (cpu0, t0), (cpu1, t1) = started[system], done[system]
            runs[system] = throughput_row(ctx, "scraping", system, t1 - t0, cpu1 - cpu0,
                                          status_number(workers[system].pid, "VmHWM"),
                                          Fixed(busy), records=data.n)
        scraper.stop()
        runs["tributary-scraped"]["scrape_cpu_ms"] = scrape_cost(workers["tributary-scraped"])
        scraped, plain = runs["tributary-scraped"], runs["tributary"]
        # None where a run took less CPU than a clock tick (smoke N): not measured
        row(ctx, "scrape-pair", "scraped/not", rps=ratio(scraped["rps"], plain["rps"]),
            cpu_per_m=ratio(scraped["cpu_per_m"], plain["cpu_per_m"]))
    finally:
        if scraper is not None:
            scraper.stop()
        for worker in workers.values():
            worker.stop()
        for out in outs.values():
            out.unlink(missing_ok=True)


def sink_floor(ctx: Context, system: str, scenario: str = "sink",
               data: Dataset | None = None) -> dict:
    data = data or ctx.data
    out = ctx.sink_dir / f"{scenario}-{system}.txt"
    argv = [ctx.floor("floor_consume"), "-b", ctx.bootstrap, "-t", data.topic, "-n", data.n,
            "-T", int(ctx.run_timeout)]
    for setting in TRIBUTARY_CONSUMER:
        argv += ["-X", setting]
    if system == "floor-write":
        argv += ["-o", out]
    try:
        background = Background(ctx)
        result = run_floor(ctx, argv, f"{scenario}-{system}")
        return throughput_row(ctx, scenario, system, result["seconds"],
                              result["cpu_seconds"], result["hwm_kb"], background,
                              records=data.n)
    finally:
        out.unlink(missing_ok=True)


def check_line_count(out: Path, expected: int, label: str) -> None:
    with open(out, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    if lines != expected:
        raise BenchError(f"{label} wrote {lines} lines, not {expected}")


def wait_for_file(ctx: Context, worker: Worker, out: Path, t0: float, label: str,
                  data: Dataset | None = None) -> None:
    """Until the sink's file holds every line. Its size tells (each value has the same
    length): a stat every 20 ms, cheaper than counting lines."""
    expected = (data or ctx.data).expected_bytes
    while (size := out.stat().st_size if out.exists() else 0) < expected:
        worker.check_alive()
        if time.monotonic() > t0 + ctx.run_timeout:
            raise BenchError(f"{label} sink: {size} of {expected} bytes "
                             f"after {ctx.run_timeout} s")
        time.sleep(0.02)


class AssignmentWatch:
    """When a tributary sink task was given its partitions: its log's first "partition
    T-N starts at offset" line (INFO, written as the assignment is handled), read every
    5 ms from a thread of its own, with the worker's CPU seconds at that moment. Records
    wait in the topic from then on; before it the task has nothing it may read."""

    MARK = b"starts at offset"

    def __init__(self, worker: Worker):
        self.at: float | None = None
        self.cpu = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(worker,), daemon=True)
        self._thread.start()

    def _watch(self, worker: Worker) -> None:
        with open(worker.log_path, "rb") as log_file:
            tail_bytes = b""
            while not self._stop.is_set():
                tail_bytes = tail_bytes[-len(self.MARK):] + log_file.read()
                if self.MARK in tail_bytes:
                    self.cpu, self.at = cpu_seconds(worker.pid), time.monotonic()
                    return
                time.sleep(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def scrape_cost(worker: Worker) -> float:
    """CPU ms of the worker per GET /metrics, each read to its end: SCRAPE_BURST scrapes
    back to back, less what the worker spent meanwhile when not scraped (measured over
    the second before)."""
    idle_cpu, idle_t = cpu_seconds(worker.pid), time.monotonic()
    time.sleep(1.0)
    cpu0, t0 = cpu_seconds(worker.pid), time.monotonic()
    idle_rate = (cpu0 - idle_cpu) / (t0 - idle_t)
    url = f"http://127.0.0.1:{worker.port}/metrics"
    for _ in range(SCRAPE_BURST):
        status, _body = http("GET", url)
        if status != 200:
            raise BenchError(f"GET /metrics answered {status}")
    cpu1, t1 = cpu_seconds(worker.pid), time.monotonic()
    return max(0.0, (cpu1 - cpu0) - idle_rate * (t1 - t0)) / SCRAPE_BURST * 1000


def sink_worker(ctx: Context, system: str, scenario: str = "sink",
                extra: dict | None = None, data: Dataset | None = None) -> dict:
    """One sink run: a fresh worker, a FileStreamSink with a new group, until the file holds
    every line."""
    data = data or ctx.data
    scraped = system == "tributary-scraped"
    kind = "tributary" if scraped else system
    worker = WORKERS[kind](ctx, scenario).start()
    scraper = None
    out = ctx.sink_dir / f"{scenario}-{system}.txt"
    try:
        worker.wait_ready()
        name = f"bench-{scenario}-{system}-{ctx.run_id}-{ctx.rep}"
        if scraped:
            scraper = Scraper(worker.port)
        background = Background(ctx)
        assignment = AssignmentWatch(worker) if kind == "tributary" else None
        cpu0, t0 = cpu_seconds(worker.pid), time.monotonic()
        worker.create(name, {"connector.class": "FileStreamSink", "topics": data.topic,
                             "file": str(out), "key.converter": STRING,
                             "value.converter": STRING, **(extra or {})})
        if extra:
            wait_for_lines(ctx, worker, out, t0, f"{scenario} {system}")
        else:
            wait_for_file(ctx, worker, out, t0, system, data)
        t1, cpu1 = time.monotonic(), cpu_seconds(worker.pid)
        hwm = status_number(worker.pid, "VmHWM")
        busy = background.cores()
        check_line_count(out, data.n, f"{system} {scenario}")
        if extra:
            check_chain(out, f"{scenario} {system}")
        figures = {}
        if assignment is not None:
            assignment.stop()
            if assignment.at is None:
                raise BenchError(f"{system} {scenario}: the log never showed the partitions' "
                                 "assignment")
            figures = {"assigned_s": assignment.at - t0,
                       "cores_assigned": (cpu1 - assignment.cpu) / (t1 - assignment.at)}
        return throughput_row(ctx, scenario, system, t1 - t0, cpu1 - cpu0, hwm, Fixed(busy),
                              records=data.n, **figures)
    finally:
        if assignment is not None:
            assignment.stop()
        if scraper is not None:
            scraper.stop()
        worker.stop()
        out.unlink(missing_ok=True)


# The transforms scenario: the sink with a three-transform chain on schemaless JSON values,
# the same config on both systems. RegexRouter runs first so that InsertField's topic.field
# shows the routed topic: the output's lines then prove all three transforms ran.
TRANSFORM_SYSTEMS = ["tributary", "connect", "connect-tuned"]
TRANSFORM_FIELD, TRANSFORM_VALUE, TRANSFORM_DROPPED = "origin", "bench", "note"


def transform_chain(ctx: Context) -> dict:
    return {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "transforms": "route,insert,drop",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "bench-in-(.*)",
            "transforms.route.replacement": "routed-$1",
            "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.insert.static.field": TRANSFORM_FIELD,
            "transforms.insert.static.value": TRANSFORM_VALUE,
            "transforms.insert.topic.field": "topic",
            "transforms.drop.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
            "transforms.drop.exclude": TRANSFORM_DROPPED}


def transforms(ctx: Context) -> None:
    log("scenario transforms: Kafka -> InsertField, ReplaceField, RegexRouter -> file")
    for system in alternating(ctx, TRANSFORM_SYSTEMS):
        sink_worker(ctx, system, scenario="transforms", extra=transform_chain(ctx))


def wait_for_lines(ctx: Context, worker: Worker, out: Path, t0: float, label: str) -> None:
    """Until the sink's file holds N lines, when the lines' length is not known in advance
    (Connect writes a map's toString, tributary JSON): reads what was appended every 20 ms
    and counts its newlines."""
    lines, f = 0, None
    try:
        while lines < ctx.n:
            worker.check_alive()
            if f is None and out.exists():
                f = open(out, "rb")
            if f is not None:
                while chunk := f.read(1 << 20):
                    lines += chunk.count(b"\n")
                if lines >= ctx.n:
                    break
            if time.monotonic() > t0 + ctx.run_timeout:
                raise BenchError(f"{label}: {lines} of {ctx.n} lines after {ctx.run_timeout} s")
            time.sleep(0.02)
    finally:
        if f is not None:
            f.close()


def check_chain(out: Path, label: str) -> None:
    """The first line must show all three transforms: the inserted static field, the routed
    topic (InsertField's topic.field runs after RegexRouter) and no excluded field."""
    with open(out, "r", errors="replace") as f:
        first = f.readline().strip()
    problems = []
    if TRANSFORM_FIELD not in first or TRANSFORM_VALUE not in first:
        problems.append(f"no inserted {TRANSFORM_FIELD}={TRANSFORM_VALUE}")
    if "routed-" not in first:
        problems.append("no routed topic")
    if TRANSFORM_DROPPED in first:
        problems.append(f"the excluded {TRANSFORM_DROPPED} is still there")
    if problems:
        raise BenchError(f"{label}: the chain did not run ({', '.join(problems)}): "
                         f"{first[:300]!r}")
    log(f"{label}: first line {first[:200]}")


SOURCE_SYSTEMS = ["floor", "tributary", "connect", "connect-tuned"]
# floor-keyed: floor_produce -k, each record with a key as datagen's (a number below 1000
# as text), so that the partitioner spreads them over the partitions by key as it does
# datagen's, instead of filling one partition's batch at a time (the same work)
DATAGEN_SYSTEMS = ["floor", "floor-keyed", "tributary"]


def check_content(ctx: Context, topic: str, label: str) -> None:
    """floor_consume --check over the whole topic: every line of the input file exactly
    once, in file order within each partition. Outside the measured time."""
    result = run_floor(ctx, [ctx.floor("floor_consume"), "-b", ctx.bootstrap, "-t", topic,
                             "-n", ctx.n, "-T", int(ctx.run_timeout), "--check"],
                       f"{label}-check")
    if not result.get("check_passed"):
        raise BenchError(f"{label}: the topic's content is wrong: {json.dumps(result)}")


def source_like(ctx: Context, scenario: str, systems: list[str], config_of,
                check: bool) -> None:
    for kind in alternating(ctx, systems):
        topic = f"bench-{scenario}-{kind}-{ctx.run_id}-{ctx.rep}"
        label = f"{scenario}-{kind}-{ctx.rep}"
        if kind.startswith("floor"):
            watcher = Watcher(ctx, topic, label)
            background = Background(ctx)
            result = run_floor(ctx, [ctx.floor("floor_produce"), "-b", ctx.bootstrap,
                                     "-t", topic, "-n", ctx.n, "-s", ctx.size,
                                     "-T", int(ctx.run_timeout),
                                     *(["-k"] if kind == "floor-keyed" else [])], label)
            watcher.wait()
            throughput_row(ctx, scenario, kind, result["seconds"], result["cpu_seconds"],
                           result["hwm_kb"], Fixed(background.cores()))
            continue
        worker = WORKERS[kind](ctx, scenario).start()
        try:
            worker.wait_ready()
            watcher = Watcher(ctx, topic, label)
            background = Background(ctx)
            cpu0, t0 = cpu_seconds(worker.pid), time.monotonic()
            worker.create(f"bench-{scenario}-{kind}-{ctx.run_id}-{ctx.rep}", config_of(topic))
            t1 = watcher.wait(worker)
            cpu1, hwm = cpu_seconds(worker.pid), status_number(worker.pid, "VmHWM")
            busy = background.cores()
        finally:
            worker.stop()
        if check:
            check_content(ctx, topic, label)
        throughput_row(ctx, scenario, kind, t1 - t0, cpu1 - cpu0, hwm, Fixed(busy))


def source(ctx: Context) -> None:
    log("scenario source: file -> Kafka")
    source_like(ctx, "source", SOURCE_SYSTEMS,
                lambda topic: {"connector.class": "FileStreamSource",
                               "file": str(ctx.input_file), "topic": topic,
                               "key.converter": STRING, "value.converter": STRING},
                check=True)
    ctx.notes.append("Source content: after each tributary and Connect run, floor_consume "
                     "--check read the topic back: every line of the file exactly once, in "
                     "file order within each partition (checked, or the run fails).")


def datagen(ctx: Context) -> None:
    log("scenario datagen: generated records -> Kafka")
    source_like(ctx, "datagen", DATAGEN_SYSTEMS, lambda topic: {
        "connector.class": "datagen", "topic": topic, "records.per.second": "0",
        "count": str(ctx.n), "key.converter": STRING, "value.converter": STRING},
        check=False)


def formats(ctx: Context) -> None:
    """Encode and decode loops of the registry formats (bench/formats/formats.py, in the
    test venv): tributary's converters, then confluent-kafka's serializers."""
    log("scenario formats: JSON <-> Avro, Protobuf, JSON Schema")
    records = min(ctx.n, FORMAT_RECORDS)
    peer_records = min(ctx.n, FORMAT_PEER_RECORDS)
    script = Path(__file__).resolve().parent / "formats" / "formats.py"
    argv = [ctx.args.venv_python, str(script), "--bench-formats", ctx.args.bench_formats,
            "--input", str(ctx.input_file), "--records", str(records),
            "--peer-records", str(peer_records)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise BenchError(f"formats failed ({done.returncode}):\n{done.stderr[-3000:]}")
    for line in done.stdout.splitlines():
        entry = json.loads(line)
        n = entry["records"]
        row(ctx, f"format-{entry['format']}", entry["system"], records=n,
            encode_rps=n / entry["encode_seconds"], decode_rps=n / entry["decode_seconds"],
            encode_cpu_us=entry["encode_cpu_seconds"] / n * 1e6,
            decode_cpu_us=entry["decode_cpu_seconds"] / n * 1e6,
            value_bytes=entry["value_bytes"], encoded_bytes=entry["encoded_bytes"],
            registry_requests=entry["registry_requests"])


def wrk(ctx: Context, url: str, seconds: float) -> dict:
    argv = ["wrk", f"-t{ctx.args.wrk_threads}", f"-c{ctx.args.wrk_connections}",
            f"-d{max(1, int(seconds))}s", "--latency", url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    if done.returncode != 0:
        raise BenchError(f"wrk failed: {done.stdout}{done.stderr}")
    text = done.stdout

    def duration_ms(value: str, unit: str) -> float:
        return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}[unit]

    latency = {m.group(1): duration_ms(m.group(2), m.group(3)) for m in
               re.finditer(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)}
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    total = re.search(r"^\s+(\d+) requests in", text, re.M)
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    socket_errors = re.search(r"Socket errors:(.*)$", text, re.M)
    if rps is None or "50" not in latency or "99" not in latency or total is None:
        raise BenchError(f"cannot read wrk's output:\n{text}")
    return {"rps": float(rps.group(1)), "p50_ms": latency["50"], "p99_ms": latency["99"],
            "requests": int(total.group(1)),
            "non_2xx": int(errors.group(1)) if errors else 0,
            "socket_errors": socket_errors.group(1).strip() if socket_errors else ""}


def service(ctx: Context) -> None:
    """Start-up, resident memory and REST, on the same worker per system: start-up trials,
    then the last trial's worker idle, with 1 connector, with many; then wrk against
    GET /connectors/{name}/status with those connectors in place."""
    many = ctx.args.connectors
    for kind in ("tributary", "connect"):
        trials = ctx.args.startup_trials if kind == "tributary" else ctx.args.connect_trials
        log(f"scenario start-up, memory, REST: {kind} ({trials} start-up trials)")
        times = []
        worker = None
        try:
            background = Background(ctx)
            for trial in range(trials):
                worker = WORKERS[kind](ctx, f"service{trial}").start()
                times.append(worker.wait_ready() * 1000)
                if trial < trials - 1:
                    worker.stop()
                    shutil.rmtree(worker.dir, ignore_errors=True)
            row(ctx, "startup", kind, median_ms=statistics.median(times), min_ms=min(times),
                max_ms=max(times), trials=trials, background=background.cores())

            time.sleep(ctx.args.settle)
            idle = status_number(worker.pid, "VmRSS")
            empty = worker.dir / "empty.txt"
            empty.write_text("")
            topic = f"bench-mem-{kind}-{ctx.run_id}"

            def config(i):
                return {"connector.class": "FileStreamSource", "file": str(empty),
                        "topic": topic, "key.converter": STRING, "value.converter": STRING}
            names = [f"mem-{i}" for i in range(many)]
            worker.create(names[0], config(0))
            worker.wait_running(names[:1])
            time.sleep(ctx.args.settle)
            one = status_number(worker.pid, "VmRSS")
            for i, name in enumerate(names[1:], start=1):
                worker.create(name, config(i))
            worker.wait_running(names, timeout=300)
            time.sleep(ctx.args.settle)
            full = status_number(worker.pid, "VmRSS")
            row(ctx, "memory", kind, idle_mb=idle / 1024, one_mb=one / 1024,
                many_mb=full / 1024, connectors=many,
                hwm_mb=status_number(worker.pid, "VmHWM") / 1024)

            url = f"{worker.base}/connectors/{names[0]}/status"
            if ctx.args.wrk_warmup > 0:
                wrk(ctx, url, ctx.args.wrk_warmup)
            background = Background(ctx)
            cpu0 = cpu_seconds(worker.pid)
            result = wrk(ctx, url, ctx.args.wrk_seconds)
            cpu1 = cpu_seconds(worker.pid)
            row(ctx, "rest", kind, rps=result["rps"], p50_ms=result["p50_ms"],
                p99_ms=result["p99_ms"],
                cpu_per_m=(cpu1 - cpu0) / max(1, result["requests"]) * 1e6,
                requests=result["requests"], non_2xx=result["non_2xx"],
                rss_mb=status_number(worker.pid, "VmHWM") / 1024, background=background.cores())
            if result["non_2xx"] or result["socket_errors"]:
                ctx.notes.append(f"REST {kind}: {result['non_2xx']} non-2xx answers, "
                                 f"socket errors: {result['socket_errors'] or 'none'}.")
        finally:
            if worker is not None:
                worker.stop()


def scale(ctx: Context) -> None:
    """How cost grows with connectors: a fresh worker per system, FileStreamSource
    connectors on one empty file added in steps; at each step, once all are RUNNING and
    after the settle, the worker's resident memory and thread count. Connect stops at
    --connect-scale-max. Then tributary's FileStreamSink connectors on one empty topic
    (each its own consumer group), up to --scale-sink-max."""
    steps = [int(x) for x in ctx.args.scale_steps.split(",")]
    topic = f"bench-scale-sinks-{ctx.run_id}"
    for kind, system, top in (
            ("tributary", "tributary", steps[-1]),
            ("connect", "connect", min(steps[-1], ctx.args.connect_scale_max)),
            ("tributary", "tributary sinks", min(steps[-1], ctx.args.scale_sink_max))):
        if top <= 0:
            continue
        log(f"scenario scale: {system}, up to {top} connectors")
        worker = WORKERS[kind](ctx, "scale").start()
        try:
            worker.wait_ready()
            if system.endswith("sinks"):
                config = {"connector.class": "FileStreamSink", "topics": topic,
                          "file": str(worker.dir / "out.txt"), "key.converter": STRING,
                          "value.converter": STRING}
            else:
                empty = worker.dir / "empty.txt"
                empty.write_text("")
                config = {"connector.class": "FileStreamSource", "file": str(empty),
                          "topic": f"bench-scale-{kind}-{ctx.run_id}",
                          "key.converter": STRING, "value.converter": STRING}
            created, seconds = 0, 0.0
            for step in [0] + [n for n in steps if n <= top]:
                t0 = time.monotonic()
                names = [f"scale-{i}" for i in range(created, step)]
                for name in names:
                    worker.create(name, config)
                worker.wait_running(names, timeout=max(120, step))
                seconds, created = time.monotonic() - t0, step
                time.sleep(ctx.args.settle)
                row(ctx, "scale", system, connectors=step, seconds=seconds,
                    rss_mb=status_number(worker.pid, "VmRSS") / 1024,
                    threads=status_number(worker.pid, "Threads"))
        finally:
            worker.stop()


def tasks(ctx: Context) -> None:
    """tributary's sink with tasks.max 1, 2 and 4 on the 4-partition topic, and 1, 2 and 4
    FileStreamSource connectors at once, each on the input file into a topic of its own:
    records/s of all of them together, from the first creation to the last record."""
    log("scenario tasks: sink tasks.max and concurrent sources")
    for count in (1, 2, 4):
        out = ctx.sink_dir / f"tasks-{count}.txt"
        worker = Tributary(ctx, f"tasks-sink-{count}").start()
        try:
            worker.wait_ready()
            background = Background(ctx)
            cpu0, t0 = cpu_seconds(worker.pid), time.monotonic()
            worker.create(f"bench-tasks-{count}-{ctx.run_id}", {
                "connector.class": "FileStreamSink", "topics": ctx.topic, "file": str(out),
                "tasks.max": str(count), "key.converter": STRING, "value.converter": STRING})
            wait_for_file(ctx, worker, out, t0, f"tasks.max={count}")
            t1, cpu1 = time.monotonic(), cpu_seconds(worker.pid)
            throughput_row(ctx, "tasks-sink", f"tasks.max={count}", t1 - t0, cpu1 - cpu0,
                           status_number(worker.pid, "VmHWM"), Fixed(background.cores()))
        finally:
            worker.stop()
            out.unlink(missing_ok=True)
    for count in (1, 2, 4):
        worker = Tributary(ctx, f"tasks-source-{count}").start()
        try:
            worker.wait_ready()
            topics = [f"bench-tasks-source-{count}-{i}-{ctx.run_id}" for i in range(count)]
            watchers = [Watcher(ctx, topic, f"tasks-source-{count}-{i}")
                        for i, topic in enumerate(topics)]
            background = Background(ctx)
            cpu0, t0 = cpu_seconds(worker.pid), time.monotonic()
            for topic in topics:
                worker.create(topic, {"connector.class": "FileStreamSource",
                                      "file": str(ctx.input_file), "topic": topic,
                                      "key.converter": STRING, "value.converter": STRING})
            t1 = max(w.wait(worker) for w in watchers)
            cpu1 = cpu_seconds(worker.pid)
            throughput_row(ctx, "tasks-source", f"connectors={count}", t1 - t0, cpu1 - cpu0,
                           status_number(worker.pid, "VmHWM"), Fixed(background.cores()),
                           records=count * ctx.n)
        finally:
            worker.stop()


# ------------------------------------------------------------------------ latency
LATENCY_SYSTEMS = ["floor-write", "tributary", "connect-tuned"]
STAMP = re.compile(rb'{"id":(\d+),"ts":(\d+)')


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile p (0-100) of values."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered))) - 1))]


class Tail:
    """Reads a file as it grows, every millisecond: when each complete line was first seen
    (wall clock, the clock of floor_produce's stamps)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.partial = path, 0, b""
        self.seen: list[tuple[float, bytes]] = []

    def poll(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        now = time.time()
        self.offset += len(chunk)
        lines = (self.partial + chunk).split(b"\n")
        self.partial = lines.pop()
        self.seen.extend((now, line) for line in lines)

    def until(self, count: int, check, timeout: float, label: str) -> None:
        deadline = time.monotonic() + timeout
        while len(self.seen) < count:
            check()
            if time.monotonic() > deadline:
                raise BenchError(f"{label}: {len(self.seen)} of {count} lines after "
                                 f"{timeout:.0f} s")
            self.poll()
            time.sleep(0.001)


def latency(ctx: Context) -> None:
    """End-to-end latency at a fixed offered rate below saturation: floor_produce -r paces
    records into a fresh topic, each value stamped with the time it was produced; the sink
    (a connector's FileStreamSink, or floor_consume writing the same file) writes them; the
    harness tails the file and takes, for each line, the time it first saw it minus the
    stamp. The first --latency-warmup seconds of records are not counted."""
    rate, seconds = ctx.args.latency_rate, ctx.args.latency_seconds
    warm = int(rate * ctx.args.latency_warmup)
    count = warm + int(rate * seconds)
    log(f"scenario latency: {count} records at {rate:g} records/s")
    for system in alternating(ctx, LATENCY_SYSTEMS):
        label = f"latency-{system}-{ctx.rep}"
        topic = f"bench-{label}-{ctx.run_id}"
        out = ctx.sink_dir / f"{label}.txt"
        run_floor(ctx, [ctx.floor("floor_consume"), "--end-offsets", "-c", PARTITIONS,
                        "-b", ctx.bootstrap, "-t", topic, "-n", 0], f"{label}-topic")
        worker, floor = None, None
        try:
            if system == "floor-write":
                floor = spawn([ctx.floor("floor_consume"), "-b", ctx.bootstrap, "-t", topic,
                               "-n", count + 1, "-T", int(ctx.run_timeout), "-o", out,
                               "--flush-each", *[a for setting in TRIBUTARY_CONSUMER
                                                 for a in ("-X", setting)]],
                              ctx.work / f"{label}.log", stdout=subprocess.DEVNULL)

                def alive():
                    if floor.poll() not in (None, 0):
                        raise BenchError(f"{label}: floor_consume exited {floor.returncode}")
            else:
                worker = WORKERS[system](ctx, "latency").start()
                worker.wait_ready()
                worker.create(f"bench-{label}-{ctx.run_id}", {
                    "connector.class": "FileStreamSink", "topics": topic, "file": str(out),
                    "key.converter": STRING, "value.converter": STRING})
                alive = worker.check_alive
            seen = Tail(out)
            load, busy = pace(ctx, topic, count, rate, label,
                              lambda n, timeout: seen.until(n, alive, timeout, label))
        finally:
            if worker is not None:
                worker.stop()
            if floor is not None:
                stop(floor, 10)
            out.unlink(missing_ok=True)
        waits = [(at - int(m.group(2)) / 1e6) * 1000 for at, line in seen.seen
                 if (m := STAMP.match(line)) and int(m.group(1)) >= warm]
        if len(waits) != count - warm:
            raise BenchError(f"{label}: {len(waits)} stamped lines, not {count - warm}")
        row(ctx, "latency", system, rate=rate, records=len(waits),
            p50_ms=percentile(waits, 50), p99_ms=percentile(waits, 99),
            p999_ms=percentile(waits, 99.9), max_ms=max(waits), background=busy, load=load)


def pace(ctx, topic: str, count: int, rate: int, label: str, wait_lines) -> tuple:
    """One record first, so that the sinks' groups have joined before the paced run
    starts, then count records at rate records/s through floor_produce -r;
    wait_lines(n, timeout) returns once every sink wrote n lines. Returns the load
    average when the paced run started and the background's cores during it."""
    produce = [ctx.floor("floor_produce"), "-b", ctx.bootstrap, "-t", topic,
               "-s", ctx.size, "-T", int(ctx.run_timeout)]
    run_floor(ctx, produce + ["-n", 1], f"{label}-first")
    wait_lines(1, ctx.run_timeout)
    background = Background(ctx)
    load = os.getloadavg()[0]
    pacer = spawn(produce + ["-n", count, "-r", rate], ctx.work / f"{label}-pace.log",
                  stdout=subprocess.DEVNULL)
    wait_lines(1 + count, ctx.run_timeout + count / rate)
    busy = background.cores()
    try:
        code = pacer.wait(30)
    except subprocess.TimeoutExpired:
        code = None
    stop(pacer, 5)
    if code != 0:
        raise BenchError(f"{label}: floor_produce -r failed ({code}):\n"
                         f"{tail(ctx.work / f'{label}-pace.log')}")
    return load, busy


def until_all(tails: dict, count: int, check, timeout: float, label: str) -> None:
    """Polls every Tail each millisecond until each has count lines."""
    deadline = time.monotonic() + timeout
    while any(len(t.seen) < count for t in tails.values()):
        check()
        if time.monotonic() > deadline:
            raise BenchError(f"{label}: " + ", ".join(
                f"{system} {len(t.seen)}" for system, t in tails.items()) +
                f" of {count} lines after {timeout:.0f} s")
        for t in tails.values():
            t.poll()
        time.sleep(0.001)


def latency_together(ctx: Context) -> None:
    """The latency scenario's three sinks at once on one paced topic, each in its own
    consumer group: each record's latency in each system, and its difference from the
    floor's for the same record. Runs one after another meet different moments of a shared
    machine; at once, the machine's stalls hit every system, and the difference is what a
    system adds."""
    rate, seconds = ctx.args.latency_rate, ctx.args.latency_seconds
    warm = int(rate * ctx.args.latency_warmup)
    count = warm + int(rate * seconds)
    log(f"scenario latency-together: {count} records at {rate:g} records/s, "
        f"{ctx.args.together_runs} runs")
    for rep in range(ctx.args.together_runs):
        ctx.rep = rep
        label = f"together-{rep}"
        topic = f"bench-{label}-{ctx.run_id}"
        outs = {system: ctx.sink_dir / f"{label}-{system}.txt" for system in LATENCY_SYSTEMS}
        run_floor(ctx, [ctx.floor("floor_consume"), "--end-offsets", "-c", PARTITIONS,
                        "-b", ctx.bootstrap, "-t", topic, "-n", 0], f"{label}-topic")
        workers, floor = [], None
        try:
            floor = spawn([ctx.floor("floor_consume"), "-b", ctx.bootstrap, "-t", topic,
                           "-n", count + 1, "-T", int(ctx.run_timeout), "-o",
                           outs["floor-write"], "--flush-each",
                           *[a for setting in TRIBUTARY_CONSUMER for a in ("-X", setting)]],
                          ctx.work / f"{label}.log", stdout=subprocess.DEVNULL)
            for system in LATENCY_SYSTEMS[1:]:
                worker = WORKERS[system](ctx, label).start()
                workers.append(worker)
                worker.wait_ready()
                worker.create(f"bench-{label}-{system}-{ctx.run_id}", {
                    "connector.class": "FileStreamSink", "topics": topic,
                    "file": str(outs[system]), "key.converter": STRING,
                    "value.converter": STRING})

            def alive():
                if floor.poll() not in (None, 0):
                    raise BenchError(f"{label}: floor_consume exited {floor.returncode}")
                for w in workers:
                    w.check_alive()
            tails = {system: Tail(path) for system, path in outs.items()}
            load, busy = pace(ctx, topic, count, rate, label,
                              lambda n, timeout: until_all(tails, n, alive, timeout, label))
        finally:
            for worker in workers:
                worker.stop()
            if floor is not None:
                stop(floor, 10)
            for path in outs.values():
                path.unlink(missing_ok=True)
        waits = {system: {int(m.group(1)): (at - int(m.group(2)) / 1e6) * 1000
                          for at, line in t.seen
                          if (m := STAMP.match(line)) and int(m.group(1)) >= warm}
                 for system, t in tails.items()}
        for system, by_id in waits.items():
            if len(by_id) != count - warm:
                raise BenchError(f"{label}: {system} wrote {len(by_id)} stamped lines, "
                                 f"not {count - warm}")
            values = list(by_id.values())
            added = [by_id[i] - waits["floor-write"][i] for i in by_id]
            row(ctx, "latency-together", system, rate=rate, records=len(values),
                p50_ms=percentile(values, 50), p99_ms=percentile(values, 99),
                p999_ms=percentile(values, 99.9), max_ms=max(values),
                added_p50_ms=percentile(added, 50), added_p99_ms=percentile(added, 99),
                added_p999_ms=percentile(added, 99.9), background=busy, load=load)


# ------------------------------------------------------------------------ message sizes
SIZE_SYSTEMS = ["floor-write", "tributary", "connect-tuned"]


def sizes(ctx: Context) -> None:
    """The sink (Kafka -> file) with values of each of --sizes bytes: a topic per size
    holding --size-mb of values, read by each system as in the sink scenario."""
    for size in (int(x) for x in ctx.args.sizes.split(",")):
        data = Dataset(f"bench-size-{size}-{ctx.run_id}",
                       max(1, int(ctx.args.size_mb * 1e6) // size), size)
        log(f"scenario sizes: {data.n} records of {size} bytes")
        preload_topic(ctx, data, f"size-{size}")
        for system in alternating(ctx, SIZE_SYSTEMS):
            scenario = f"size-{size}"
            entry = (sink_floor(ctx, system, scenario, data) if system.startswith("floor")
                     else sink_worker(ctx, system, scenario, data=data))
            entry["mb_per_s"] = entry["rps"] * size / 1e6


# ------------------------------------------------------------------------ profile
def profile_sink_file(ctx: Context) -> Path:
    return ctx.sink_dir / "sink-profile.txt"


def profile_config(ctx: Context, scenario: str, worker: Worker) -> dict:
    if scenario in ("sink", "transforms"):
        config = {"connector.class": "FileStreamSink", "topics": ctx.topic,
                  "file": str(profile_sink_file(ctx))}
    elif scenario == "source":
        config = {"connector.class": "FileStreamSource", "file": str(ctx.input_file),
                  "topic": f"bench-profile-{scenario}-{ctx.run_id}"}
    else:
        config = {"connector.class": "datagen", "topic": f"bench-profile-{scenario}-{ctx.run_id}",
                  "records.per.second": "0", "count": str(ctx.n)}
    config.update({"key.converter": STRING, "value.converter": STRING})
    if scenario == "transforms":
        config.update(transform_chain(ctx))
    return config


def keep(lines: list[str], limit: int = 25) -> list[str]:
    """Report lines without headers, blanks, and frames that have no symbol (bare addresses
    inside libraries without debug information)."""
    return [ln.rstrip() for ln in lines if ln.strip() and not ln.startswith("#")
            and not re.match(r"^-+$", ln.strip())
            and not re.search(r"[\s:]0x[0-9a-f]+(\s*$|\s+\[)", ln)][:limit]


def perf_profile(ctx: Context, scenario: str, perf: str) -> list[str] | None:
    seconds = ctx.args.profile_seconds
    worker = Tributary(ctx, f"profile-{scenario}").start()
    data = worker.dir / "perf.data"
    try:
        worker.wait_ready()
        recorder = spawn([perf, "record", "-q", "-F", "199", "--call-graph", "dwarf",
                          "-p", worker.pid, "-o", data, "--", "sleep", seconds],
                         worker.dir / "perf.log")
        worker.create(f"bench-profile-{scenario}", profile_config(ctx, scenario, worker))
        try:
            recorder.wait(seconds + 60)
        finally:
            stop(recorder, 5)
        if recorder.returncode != 0 or not data.exists():
            log(f"perf could not record: {tail(worker.dir / 'perf.log', 3)}")
            return None
        worker.stop()

        def report(*extra):
            done = subprocess.run([perf, "report", "-i", data, "--stdio", "-g", "none",
                                   "--percent-limit", "1.5", *extra],
                                  capture_output=True, text=True, timeout=600)
            return keep(done.stdout.splitlines())
        children = report("--children", "--sort", "sym")
        self_time = report("--no-children", "--sort", "dso,sym")
        if not children and not self_time:
            return [f"### {scenario}", "", f"No samples in {seconds} s: the worker was done "
                    "before perf attached (N too small).", ""]
        return [f"### {scenario}: {seconds} s of `perf record -F 199 --call-graph dwarf` "
                "on a fresh worker from the connector's creation", "",
                "Inclusive time (children): the path from the pool thread down.", "",
                "```", *children, "```", "",
                "Self time by library and function:", "",
                "```", *self_time, "```", ""]
    finally:
        worker.stop()
        profile_sink_file(ctx).unlink(missing_ok=True)
        data.unlink(missing_ok=True)


class CallgrindTributary(Tributary):
    def argv(self) -> list:
        return ["valgrind", "--tool=callgrind", "--quiet",
                f"--callgrind-out-file={self.dir / 'callgrind.out'}", *super().argv()]


def callgrind_profile(ctx: Context, scenario: str) -> list[str] | None:
    """The fallback: tributary under callgrind (about 50 times slower) for three times the
    profile window, then callgrind_annotate."""
    seconds = ctx.args.profile_seconds * 3
    worker = CallgrindTributary(ctx, f"callgrind-{scenario}").start()
    output = worker.dir / "callgrind.out"
    try:
        worker.wait_ready(timeout=300)
        worker.create(f"bench-profile-{scenario}", profile_config(ctx, scenario, worker))
        time.sleep(seconds)
        stop(worker.proc, 120)  # callgrind writes its file at exit
        if not output.exists():
            return None

        def annotate(*extra):
            done = subprocess.run(["callgrind_annotate", *extra, output],
                                  capture_output=True, text=True, timeout=600)
            lines = done.stdout.splitlines()
            start = next((i for i, ln in enumerate(lines) if "file:function" in ln), 0)
            return keep(lines[start + 1:])
        return [f"### {scenario}: {seconds} s of tributary under `valgrind --tool=callgrind`", "",
                "Inclusive instructions:", "", "```", *annotate("--inclusive=yes"), "```", "",
                "Self instructions:", "", "```", *annotate(), "```", ""]
    finally:
        worker.stop()
        profile_sink_file(ctx).unlink(missing_ok=True)
        output.unlink(missing_ok=True)


def profile(ctx: Context, scenarios: list[str]) -> list[str]:
    """A profile of tributary in each scenario that missed a goal: perf (cpu-clock, DWARF
    call graphs), or callgrind when perf cannot record here. Returns Markdown lines."""
    out = ["## Profile of tributary's hottest paths", ""]
    perf, valgrind = shutil.which("perf"), shutil.which("valgrind")
    for scenario in scenarios:
        log(f"profiling tributary: {scenario}")
        section = perf_profile(ctx, scenario, perf) if perf else None
        if section is None and valgrind:
            section = callgrind_profile(ctx, scenario)
        out += section or [f"### {scenario}", "", "Neither perf nor valgrind could profile "
                           "here.", ""]
    return out


# ------------------------------------------------------------------------ report
def find(ctx, scenario, system):
    """The rows of (scenario, system) merged: each number is the median over the
    repetitions that measured it (a figure may be None in some), with its min and max
    under "<field>_min" and "<field>_max", and "runs" how many there were. None when not
    measured."""
    trials = [e for e in ctx.rows if e["scenario"] == scenario and e["system"] == system]
    if not trials:
        return None
    merged = dict(trials[0], runs=len(trials))
    for key in trials[0]:
        values = [t[key] for t in trials if isinstance(t.get(key), (int, float))
                  and not isinstance(t[key], bool)]
        if values and key != "rep":
            merged[key] = statistics.median(values)
            merged[f"{key}_min"], merged[f"{key}_max"] = min(values), max(values)
    return merged


def render_together(ctx) -> list[str]:
    """The table of the latency-together scenario, or nothing when it did not run."""
    rows = [find(ctx, "latency-together", system) for system in LATENCY_SYSTEMS]
    if not any(rows):
        return []
    L = ["## End-to-end latency, the systems at once", "",
         "| scenario | system | runs | p50 ms | min | max | p99 ms | min | max | p99.9 ms | min "
         "| max | added p50 ms | added p99 ms | added p99.9 ms | load average | background "
         "cores |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for system, e in zip(LATENCY_SYSTEMS, rows):
        if e:
            L.append(f"| latency-together | {system} | {e['runs']} | "
                     + " | ".join(f"{fmt(e[k])} | {fmt(e[k + '_min'])} | {fmt(e[k + '_max'])}"
                                  for k in ("p50_ms", "p99_ms", "p999_ms"))
                     + f" | {fmt(e['added_p50_ms'])} | {fmt(e['added_p99_ms'])} | "
                     f"{fmt(e['added_p999_ms'])} | {e['load']:.2f} | {e['background']:.2f} |")
    return L + ["", "The three sinks of the latency scenario read one paced topic at once, each "
                "in its own consumer group (the same rate, warm-up and counted seconds). "
                "added: per record, the system's latency minus the floor's for the same "
                "record, its p50, p99 and p99.9 (medians over the runs): what the system "
                "adds to the floor at the same moment of the machine, whatever its load.", ""]


def fmt(value, digits=3) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}".replace(",", " ")
    if abs(value) >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    return f"{value:.{digits}g}"


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def spread(values: list, digits: int) -> str:
    """The median and range of the values measured; a ratio whose floor measured zero
    (a run too short for the clock's tick) is left out, and none at all reads "–"."""
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.{digits}f}"
    return f"{median:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def median_interval(values: list[float]) -> tuple[float, float] | None:
    """A 95% confidence interval of the median that assumes no distribution: the k-th
    smallest and k-th largest values, k the largest with P(Binomial(n, 1/2) < k) ≤ 2.5%
    (at 12 values the 3rd and the 10th, 96%). None with fewer than 6 values."""
    n, below, k = len(values), 0.0, 0
    while (below := below + math.comb(n, k) / 2 ** n) <= 0.025:
        k += 1
    ordered = sorted(values)
    return (ordered[k - 1], ordered[n - k]) if k > 0 else None


def pair_ratios(ctx, field: str) -> list[float]:
    return [e[field] for e in ctx.rows if e["scenario"] == "scrape-pair"
            and isinstance(e.get(field), float)]


def ratio_text(value) -> str:
    return "–" if value is None else f"{value:.2f}×"


# The throughput table's rows, in order.
THROUGHPUT_SYSTEMS = [("sink", SINK_SYSTEMS), ("scraping", SCRAPE_PAIR),
                      ("source", SOURCE_SYSTEMS),
                      ("datagen", DATAGEN_SYSTEMS), ("transforms", TRANSFORM_SYSTEMS)]


def evaluate(ctx) -> list[dict]:
    goals = []

    def at_least(name, target, measured, detail, unit="×"):
        goals.append({"goal": name, "target": f"≥ {target:g}{unit}", "measured": measured,
                      "met": measured is not None and measured >= target,
                      "shortfall": None if measured is None or measured >= target else
                      f"{(1 - measured / target) * 100:.0f}% short: {target / measured:.2f}× "
                      f"more needed" if measured else "nothing measured",
                      "unit": unit, "detail": detail})

    def at_most(name, target, measured, detail, unit="×"):
        goals.append({"goal": name, "target": f"≤ {target:g}{unit}", "measured": measured,
                      "met": measured is not None and measured <= target,
                      "shortfall": None if measured is None or measured <= target else
                      f"{(measured / target - 1) * 100:.0f}% over: {measured / target:.2f}× "
                      "the limit",
                      "unit": unit, "detail": detail})

    def get(s, k, field):
        entry = find(ctx, s, k)
        return entry.get(field) if entry else None

    def within(name, limit, measured, detail):
        """|measured - 1| < limit: a change of less than limit either way."""
        met = measured is not None and abs(measured - 1) < limit
        goals.append({"goal": name, "target": f"within ±{limit * 100:g}%",
                      "measured": measured, "met": met, "unit": "×", "detail": detail,
                      "shortfall": None if measured is None or met else
                      f"{(measured - 1) * 100:+.0f}%, the limit ±{limit * 100:g}%"})

    for scenario in ("sink", "source"):
        t, c = get(scenario, "tributary", "rps"), get(scenario, "connect-tuned", "rps")
        at_least(f"{scenario} throughput vs tuned Connect", 3, ratio(t, c),
                 f"{fmt(t)} vs {fmt(c)} records/s")
        t, c = (get(scenario, "tributary", "cpu_per_m"),
                get(scenario, "connect-tuned", "cpu_per_m"))
        at_most(f"{scenario} CPU per record vs tuned Connect", 0.25, ratio(t, c),
                f"{fmt(t)} vs {fmt(c)} CPU s per M records")
    t, c = (get("transforms", "tributary", "cpu_per_m"),
            get("transforms", "connect-tuned", "cpu_per_m"))
    # 0 CPU seconds (smoke N, below the clock tick): not measured
    at_most("transforms CPU per record vs tuned Connect", 0.25, ratio(t or None, c),
            f"{fmt(t)} vs {fmt(c)} CPU s per M records")
    t, f = get("sink", "tributary", "rps"), get("sink", "floor-write", "rps")
    at_least("sink throughput vs the writing floor", 0.8, ratio(t, f),
             f"{fmt(t)} vs {fmt(f)} records/s")
    # while records are waiting: from the partitions' assignment (bench/README.md)
    cores = get("sink", "tributary", "cores_assigned")
    # 0 CPU seconds: the run was shorter than the clock tick (smoke N), not measured
    at_least("sink cores used from the assignment", 0.9, cores or None,
             f"{fmt(cores)} cores", unit="")
    for scenario, floor in (("sink", "floor-write"), ("source", "floor"),
                            ("datagen", "floor"), ("datagen", "floor-keyed")):
        t, f = get(scenario, "tributary", "cpu_per_m"), get(scenario, floor, "cpu_per_m")
        at_most(f"{scenario} CPU per record vs {floor}", 1.3, ratio(t, f),
                f"{fmt(t)} vs {fmt(f)} CPU s per M records")
    pairs = find(ctx, "scrape-pair", "scraped/not")
    for field, label in (("rps", "records/s"), ("cpu_per_m", "CPU per record")):
        interval = median_interval(pair_ratios(ctx, field))
        within(f"sink {label} scraped / not scraped", 0.05, pairs and pairs.get(field),
               f"the median of {pairs['runs']} pairs' ratios (the two runs at once)"
               + (f", 95% interval {fmt(interval[0])}–{fmt(interval[1])}" if interval
                  else "") + f", all {fmt(pairs.get(field + '_min'))}–"
               f"{fmt(pairs.get(field + '_max'))}" if pairs else "not measured")
    t, c = get("rest", "tributary", "rps"), get("rest", "connect", "rps")
    at_least("REST requests/s vs Connect", 5, ratio(t, c), f"{fmt(t)} vs {fmt(c)} requests/s")
    t, c = get("rest", "tributary", "p99_ms"), get("rest", "connect", "p99_ms")
    at_most("REST p99 below Connect's", 1, ratio(t, c), f"{fmt(t)} vs {fmt(c)} ms")
    if goals[-1]["met"] and t == c:
        goals[-1]["met"] = False
    idle = get("memory", "tributary", "idle_mb")
    at_most("idle RSS", 20, idle, f"{fmt(idle)} MB", unit=" MB")
    start = get("startup", "tributary", "median_ms")
    at_most("start-up to healthy", 200, start, f"median {fmt(start)} ms", unit=" ms")
    return goals


def machine(ctx) -> list[str]:
    def first_line(argv):
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            return (done.stdout + done.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "unknown"

    def proc_value(path, key):
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return "unknown"

    os_name = "unknown"
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    root = Path(ctx.args.src)
    if ctx.args.src_label:
        source = ctx.args.src_label
    elif (root / ".git").exists():
        commit = first_line(["git", "-C", root, "rev-parse", "--short=12", "HEAD"])
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain"],
                               capture_output=True, text=True).stdout.strip()
        source = f"commit {commit}{' with uncommitted changes' if dirty else ''}"
    else:
        source = f"source tree {root} (not a git checkout)"

    mem_kb = int(proc_value("/proc/meminfo", "MemTotal").split()[0])
    load = Path("/proc/loadavg").read_text().split()[:3]
    return [
        "| | |", "|---|---|",
        f"| date | {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} |",
        f"| host | {socket.gethostname()} |",
        f"| CPU | {proc_value('/proc/cpuinfo', 'model name')}, nproc {os.cpu_count()} |",
        f"| memory | {mem_kb / 1024 / 1024:.1f} GiB |",
        f"| kernel | {platform.release()} ({platform.machine()}) |",
        f"| OS | {os_name} |",
        f"| load average (1, 5, 15 min) | at the start {' '.join(LOAD_AT_START)}; at the end "
        f"{' '.join(load)} |",
        f"| tributary | {first_line([ctx.tributary, '--version'])}; {source}; Release build |",
        f"| librdkafka | {first_line([str(RDKAFKA_FLAGS), '--modversion'])} |",
        f"| Kafka / Connect | {ctx.args.kafka_version} (broker and Connect standalone from the "
        "Maven Central jars) |",
        f"| Java | {first_line(['java', '-version'])} |",
        f"| C compiler | {first_line(['gcc', '--version'])} |",
        f"| wrk | {first_line(['wrk', '-v'])} |",
        f"| Python | {platform.python_version()} |",
    ]


def render(ctx, goals, profile_lines, wall) -> str:
    a = ctx.args
    many = a.connectors
    L = [f"# tributary benchmark{' (smoke)' if ctx.smoke else ''}", "",
         "Written by `bench/run`; bench/README.md says how each figure is measured.", "",
         "## Machine", "", *machine(ctx), "",
         "## Parameters", "",
         f"- {ctx.n:,} records".replace(",", " ") + f" of {ctx.size}-byte JSON values, "
         f"null keys, in a {PARTITIONS}-partition topic; the same records for every system.",
         f"- Both workers: StringConverter for keys and values, "
         f"offset.flush.interval.ms={ctx.flush_ms}, tasks.max=1; Connect with "
         f"`{' '.join(CONNECT_JVM[:2])}` and the rest of Kafka's script options, "
         "`plugin.discovery=service_load`, INFO logs "
         "to a file; tributary at its default INFO level.",
         f"- REST: `wrk -t{a.wrk_threads} -c{a.wrk_connections} -d{a.wrk_seconds}s --latency` "
         f"after a {a.wrk_warmup} s warm-up, against `GET /connectors/mem-0/status` with "
         f"{many} connectors in place.",
         f"- Start-up: {a.startup_trials} trials for tributary, {a.connect_trials} for Connect "
         "(median), each from an empty store.",
         f"- Whole run: {wall / 60:.1f} minutes.", *[f"- {n}" for n in ctx.notes], ""]

    L += ["## Throughput", "",
          f"Each system ran {ctx.reps} times (the runs column), in an order that alternates "
          "between repetitions; the scraping scenario's two systems ran "
          f"{ctx.scrape_pairs} times each, in pairs at once (below). "
          "Each figure is the median of the runs, records/s and CPU also with their min "
          "and max.", "",
          "| scenario | system | runs | records | seconds | records/s | min | max "
          "| CPU s per M records | min | max | cores used | peak RSS MB | background cores |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for scenario, systems in THROUGHPUT_SYSTEMS:
        for system in systems:
            e = find(ctx, scenario, system)
            if e:
                L.append(f"| {scenario} | {system} | {e['runs']} | {fmt(e['records'])} | "
                         f"{fmt(e['seconds'])} | {fmt(e['rps'])} | {fmt(e['rps_min'])} | "
                         f"{fmt(e['rps_max'])} | {fmt(e['cpu_per_m'])} | "
                         f"{fmt(e['cpu_per_m_min'])} | {fmt(e['cpu_per_m_max'])} | "
                         f"{e['cores']:.2f} | {fmt(e['rss_mb'])} | {e['background']:.2f} |")
    L += ["", "cores used: the measured process's CPU seconds per second of the run (well "
          "below 1 means it waited rather than computed).", "",
          "background cores: CPU time of processes outside the benchmark during the "
          "measurement, per second (0 on a quiet machine, 2 when other jobs keep both cores "
          "busy); a row with more than about 0.2 was measured on a shared, busy machine.",
          "", "sink: Kafka → file (floor: floor_consume, only counting; floor-write: "
          "floor_consume writing each value as a line to the same tmpfs, through a 256 KiB "
          "buffer). source: file → Kafka (floor: floor_produce, generating). datagen: "
          "tributary's datagen connector → Kafka (floor: floor_produce; floor-keyed: "
          "floor_produce -k, each record with a key as datagen's). Connect has no "
          "datagen connector. transforms: the sink with the chain RegexRouter, "
          "InsertField$Value (a static field and the topic), ReplaceField$Value (exclude) on "
          "JsonConverter values with schemas.enable=false, the same config on both systems, "
          "its first output line checked. connect: Connect as shipped; connect-tuned: Connect with "
          "tributary's client settings (" + ", ".join(f"`{p}`" for p in CONNECT_TUNED) +
          ").", ""]

    L += ["## REST", "",
          "| scenario | system | requests/s | p50 ms | p99 ms | CPU s per M requests "
          "| peak RSS MB | background cores |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]
    for system in ("tributary", "connect"):
        e = find(ctx, "rest", system)
        if e:
            L.append(f"| rest | {system} | {fmt(e['rps'])} | {fmt(e['p50_ms'])} | "
                     f"{fmt(e['p99_ms'])} | {fmt(e['cpu_per_m'])} | {fmt(e['rss_mb'])} | "
                     f"{e['background']:.2f} |")
    L += ["", "## Start-up to the first 200", "",
          "| scenario | system | median ms | min ms | max ms | trials | background cores |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for system in ("tributary", "connect"):
        e = find(ctx, "startup", system)
        if e:
            L.append(f"| startup | {system} | {fmt(e['median_ms'])} | {fmt(e['min_ms'])} | "
                     f"{fmt(e['max_ms'])} | {e['trials']} | {e['background']:.2f} |")
    L += ["", "tributary: `GET /health`; Connect: `GET /`.", "",
          "## Resident memory (VmRSS)", "",
          f"| scenario | system | idle MB | 1 connector MB | {many} connectors MB "
          "| peak RSS MB |",
          "|---|---|---:|---:|---:|---:|"]
    for system in ("tributary", "connect"):
        e = find(ctx, "memory", system)
        if e:
            L.append(f"| memory | {system} | {fmt(e['idle_mb'])} | {fmt(e['one_mb'])} | "
                     f"{fmt(e['many_mb'])} | {fmt(e['hwm_mb'])} |")
    L += ["", "Each connector: FileStreamSource on an empty file, RUNNING (one task and its "
          "producer), on both systems.", ""]

    scaled = [e for e in ctx.rows if e["scenario"] == "scale"]
    L += ["## How cost grows: connectors", "",
          "| scenario | system | connectors | RSS MB | MB per connector | threads "
          "| seconds to RUNNING |", "|---|---|---:|---:|---:|---:|---:|"]
    for system in ("tributary", "connect", "tributary sinks"):
        idle = next((e for e in scaled if e["system"] == system and e["connectors"] == 0),
                    None)
        for e in (e for e in scaled if e["system"] == system):
            per = ((e["rss_mb"] - idle["rss_mb"]) / e["connectors"]
                   if idle and e["connectors"] else 0.0)
            L.append(f"| scale | {system} | {e['connectors']} | {fmt(e['rss_mb'])} | "
                     f"{fmt(per)} | {e['threads']} | {fmt(e['seconds'])} |")
    L += ["", "A fresh worker per system; FileStreamSource connectors on one empty file "
          "added in steps, each step measured once all are RUNNING and after "
          f"{ctx.args.settle:g} s. MB per connector: above the idle worker. Connect is "
          f"measured up to {ctx.args.connect_scale_max} connectors, to bound the run's "
          "time. tributary sinks: FileStreamSink connectors on one empty topic, each its "
          f"own consumer, up to {ctx.args.scale_sink_max}.", "",
          "## How cost grows: tasks", "",
          "| scenario | system | records | seconds | records/s | CPU s per M records "
          "| cores used | peak RSS MB | background cores |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for scenario, systems in (("tasks-sink", ("tasks.max=1", "tasks.max=2", "tasks.max=4")),
                              ("tasks-source",
                               ("connectors=1", "connectors=2", "connectors=4"))):
        for system in systems:
            e = find(ctx, scenario, system)
            if e:
                L.append(f"| {scenario} | {system} | {fmt(e['records'])} | "
                         f"{fmt(e['seconds'])} | {fmt(e['rps'])} | {fmt(e['cpu_per_m'])} | "
                         f"{e['cores']:.2f} | {fmt(e['rss_mb'])} | {e['background']:.2f} |")
    L += ["", "tributary only, one run each. tasks-sink: FileStreamSink with that tasks.max "
          "on the 4-partition topic, every task appending to the same file. tasks-source: "
          "that many FileStreamSource connectors at once, each reading the input file into "
          "a topic of its own; records are all of theirs together.", ""]

    L += ["## End-to-end latency", "",
          "| scenario | system | runs | records/s offered | records counted | p50 ms | min "
          "| max | p99 ms | min | max | p99.9 ms | min | max | worst ms | background cores |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for system in LATENCY_SYSTEMS:
        e = find(ctx, "latency", system)
        if e:
            L.append(f"| latency | {system} | {e['runs']} | {fmt(e['rate'])} | "
                     f"{fmt(e['records'])} | "
                     + " | ".join(f"{fmt(e[k])} | {fmt(e[k + '_min'])} | {fmt(e[k + '_max'])}"
                                  for k in ("p50_ms", "p99_ms", "p999_ms"))
                     + f" | {fmt(e.get('max_ms_max', e['max_ms']))} | {e['background']:.2f} |")
    runs = [e for e in ctx.rows if e["scenario"] == "latency"]
    if runs:
        L += ["", "Each run, in the order run (the systems alternate), with the machine's "
              "1-minute load average as its paced producer started:", "",
              "| run | system | p50 ms | p99 ms | p99.9 ms | worst ms | load average | "
              "background cores |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
        L += [f"| {e['rep'] + 1} | {e['system']} | {fmt(e['p50_ms'])} | {fmt(e['p99_ms'])} | "
              f"{fmt(e['p999_ms'])} | {fmt(e['max_ms'])} | {e['load']:.2f} | "
              f"{e['background']:.2f} |" for e in runs]
    L += ["", f"floor_produce paces {a.latency_rate:g} records/s (librdkafka's defaults, "
          "linger.ms=5, acks=all) into a fresh "
          f"{PARTITIONS}-partition topic, each value stamped with its produce time; "
          f"the first {a.latency_warmup:g} s of records are not counted, then "
          f"{a.latency_seconds:g} s are. Latency: when the harness first saw the line in "
          "the sink's file (it reads the file every millisecond) minus the stamp. "
          "floor-write: floor_consume writing the file, flushed after every batch, a "
          "batch being the records waiting (the first waited for). "
          "worst: the largest of all runs' counted records.", ""]
    L += render_together(ctx)
    L += ["## Message size", "",
          "| scenario | system | runs | records | seconds | records/s | MB/s | CPU s per M "
          "records | cores used | peak RSS MB | background cores |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for size in (int(x) for x in a.sizes.split(",")):
        for system in SIZE_SYSTEMS:
            e = find(ctx, f"size-{size}", system)
            if e:
                L.append(f"| size-{size} | {system} | {e['runs']} | {fmt(e['records'])} | "
                         f"{fmt(e['seconds'])} | {fmt(e['rps'])} | {fmt(e['mb_per_s'])} | "
                         f"{fmt(e['cpu_per_m'])} | {e['cores']:.2f} | {fmt(e['rss_mb'])} | "
                         f"{e['background']:.2f} |")
    L += ["", f"The sink (Kafka → file) as in the sink scenario, on a topic per value size "
          f"holding {a.size_mb:g} MB of values; MB/s counts the values' bytes.", ""]

    def r(s, k1, k2, field):
        a_, b_ = find(ctx, s, k1), find(ctx, s, k2)
        return ratio(a_ and a_.get(field), b_ and b_.get(field))

    L += ["## Ratios", "", "Of the medians.", "",
          "| scenario | figure | tributary/Connect | tributary/Connect tuned "
          "| tributary/floor | tributary/floor-write |", "|---|---|---:|---:|---:|---:|"]
    for scenario in ("sink", "source", "datagen"):
        for field, label in (("rps", "records/s"), ("cpu_per_m", "CPU per record"),
                             ("rss_mb", "peak RSS")):
            L.append(f"| {scenario} | {label} | " + " | ".join(
                ratio_text(r(scenario, "tributary", other, field))
                for other in ("connect", "connect-tuned", "floor", "floor-write")) + " |")
    for field, label in (("rps", "records/s"), ("cpu_per_m", "CPU per record")):
        L.append(f"| datagen | {label}, against floor-keyed | – | – | "
                 f"{ratio_text(r('datagen', 'tributary', 'floor-keyed', field))} | – |")
    for field, label in (("p50_ms", "p50 latency"), ("p99_ms", "p99 latency")):
        L.append(f"| latency | {label} | – | "
                 f"{ratio_text(r('latency', 'tributary', 'connect-tuned', field))} | – | "
                 f"{ratio_text(r('latency', 'tributary', 'floor-write', field))} |")
    for size in (int(x) for x in a.sizes.split(",")):
        for field, label in (("rps", "records/s"), ("cpu_per_m", "CPU per record")):
            scenario = f"size-{size}"
            L.append(f"| {scenario} | {label} | – | "
                     f"{ratio_text(r(scenario, 'tributary', 'connect-tuned', field))} | – | "
                     f"{ratio_text(r(scenario, 'tributary', 'floor-write', field))} |")
    for field, label in (("rps", "requests/s"), ("p50_ms", "p50 latency"),
                         ("p99_ms", "p99 latency"), ("cpu_per_m", "CPU per request")):
        L.append(f"| rest | {label} | {ratio_text(r('rest', 'tributary', 'connect', field))} "
                 "| – | – | – |")
    L.append(f"| startup | median | "
             f"{ratio_text(r('startup', 'tributary', 'connect', 'median_ms'))} | – | – | – |")
    for field, label in (("idle_mb", "idle RSS"), ("one_mb", "RSS, 1 connector"),
                         ("many_mb", f"RSS, {many} connectors")):
        L.append(f"| memory | {label} | "
                 f"{ratio_text(r('memory', 'tributary', 'connect', field))} | – | – | – |")

    windows = [(system, e) for system in ("tributary", "tributary-scraped")
               if (e := find(ctx, "sink", system)) and "cores_assigned" in e]
    if windows:
        L += ["", "## Sink cores used: from the creation and from the assignment", "",
              "| system | runs | cores used from the connector's creation | from the "
              "partitions' assignment | min | max | seconds to the assignment |",
              "|---|---:|---:|---:|---:|---:|---:|"]
        for system, e in windows:
            L.append(f"| {system} | {e['runs']} | {e['cores']:.2f} | "
                     f"{e['cores_assigned']:.2f} | {e['cores_assigned_min']:.2f} | "
                     f"{e['cores_assigned_max']:.2f} | {fmt(e['assigned_s'])} |")
        L += ["", "From the assignment: CPU seconds over seconds from the task's first "
              "\"partition … starts at offset\" log line (read every 5 ms) to the file "
              "holding every line; the group's join before it is in the first column only. "
              "The goal reads the second column: records wait only from the assignment on.",
              ""]

    pairs = find(ctx, "scrape-pair", "scraped/not")
    if pairs:
        data = ctx.scrape_data
        L += ["", "## Scraping /metrics while the sink runs", "",
              f"Scenario \"scraping\": pairs of sink runs at once, two workers each with a "
              f"FileStreamSink over the same topic of its own ({fmt(data.n)} records), one "
              "scraped once a second, the two sinks created one right after the other, each "
              "pair's first in turn; each run from its creation to its file holding every "
              "line. A pair's ratio is the scraped run's figure over the unscraped one's; "
              "the goal reads the median of the pairs. The two share the machine, so each "
              "runs at about half the sink's speed alone.", "",
              "| figure | pairs | scraped / not scraped, median of the pairs | 95% interval "
              "of the median | min | max | of the medians of all runs |",
              "|---|---:|---:|---:|---:|---:|---:|"]
        for field, label in (("rps", "records/s"), ("cpu_per_m", "CPU per record")):
            interval = median_interval(pair_ratios(ctx, field))
            L.append(f"| {label} | {pairs['runs']} | {ratio_text(pairs.get(field))} | "
                     + (f"{ratio_text(interval[0])}–{ratio_text(interval[1])}" if interval
                        else "–") + " | "
                     f"{ratio_text(pairs.get(field + '_min'))} | "
                     f"{ratio_text(pairs.get(field + '_max'))} | "
                     f"{ratio_text(r('scraping', 'tributary-scraped', 'tributary', field))} |")
        scraped = find(ctx, "scraping", "tributary-scraped")
        if scraped and "scrape_cpu_ms" in scraped:
            cost, cores = scraped["scrape_cpu_ms"], scraped["cores"]
            L += ["", f"What a scrape costs: after each pair, the scraped worker (idle, the "
                  f"sink's series in place) answered {SCRAPE_BURST} scrapes back to back, "
                  f"each read to its end: {cost:.2f} ms of its CPU per scrape (median of "
                  f"{scraped['runs']} runs, {scraped['scrape_cpu_ms_min']:.2f}–"
                  f"{scraped['scrape_cpu_ms_max']:.2f}). "
                  + (f"Once a second, that is {cost / 10 / cores:.3f}% of the {cores:.2f} "
                     "cores the sink uses: what scraping adds to the sink's CPU per record, "
                     "measured directly." if cores > 0 else
                     "The sink's runs were too short for their CPU to be measured (a "
                     "smoke run), so no share of it is given.")]
        L.append("")

    L += ["", "## Formats: encode and decode per record", "",
          "| format | system | records per loop | encodes/s | decodes/s | encode CPU µs "
          "| decode CPU µs | value bytes | encoded bytes | registry requests |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for fmt_name in FORMATS:
        for system in ("tributary", "confluent-kafka"):
            e = find(ctx, f"format-{fmt_name}", system)
            if e:
                L.append(f"| {fmt_name} | {system} | {fmt(e['records'])} | "
                         f"{fmt(e['encode_rps'])} | {fmt(e['decode_rps'])} | "
                         f"{fmt(e['encode_cpu_us'])} | {fmt(e['decode_cpu_us'])} | "
                         f"{fmt(e['value_bytes'])} | {fmt(e['encoded_bytes'])} | "
                         f"{e['registry_requests']} |")
    L += ["", "| format | figure | tributary/confluent-kafka | tributary/tributary json |",
          "|---|---|---:|---:|"]
    for fmt_name in FORMATS[1:]:
        scenario = f"format-{fmt_name}"
        for field, label in (("encode_rps", "encodes/s"), ("decode_rps", "decodes/s")):
            vs_peer = r(scenario, "tributary", "confluent-kafka", field)
            mine, json_only = find(ctx, scenario, "tributary"), find(ctx, "format-json",
                                                                     "tributary")
            vs_json = ratio(mine and mine[field], json_only and json_only[field])
            L.append(f"| {fmt_name} | {label} | {ratio_text(vs_peer)} | "
                     f"{ratio_text(vs_json)} |")
    L += ["", "JSON text in, framed bytes out, and back, in one thread, against a registry "
          "that already holds the schema (the first call of each loop fills the caches). "
          "tributary: the converter a task calls (bench/formats/bench_formats.c); "
          "confluent-kafka: its Python serializers with the same settings, "
          "plus json.loads/json.dumps (Protobuf: json_format). json: tributary's "
          "JsonConverter with schemas.enable=false, the cost of JSON alone."]

    L += ["", "## Goals (issues 9, 18 and 19)", "", "Of the medians; throughput and CPU against "
          "Connect read the tuned row.", "",
          "| goal | target | measured | | shortfall | figures |", "|---|---|---:|---|---|---|"]
    for g in goals:
        if g["measured"] is None:
            measured, verdict = "–", "not measured"
        else:
            measured = (f"{g['measured']:.2f}×" if g["unit"] == "×"
                        else f"{fmt(g['measured'])}{g['unit']}")
            verdict = "met" if g["met"] else "**not met**"
        L.append(f"| {g['goal']} | {g['target']} | {measured} | {verdict} | "
                 f"{g['shortfall'] or '–'} | {g['detail']} |")
    L.append("")
    if profile_lines:
        L += profile_lines
    return "\n".join(L) + "\n"


# ------------------------------------------------------------------------ main
def publish(results: Path, text: str) -> None:
    """Writes the results file and prints it."""
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(text)
    print(text)
    log(f"results written to {results}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--value-size", type=int, default=100)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--libs", required=True)
    p.add_argument("--plugins", required=True)
    p.add_argument("--kafka-version", default="3.9")
    p.add_argument("--broker-pid", type=int, default=0, help="counted as the benchmark's own")
    p.add_argument("--tributary", required=True)
    p.add_argument("--src", default=str(Path(__file__).resolve().parents[1]),
                   help="the source tree tributary was built from")
    p.add_argument("--src-label", default="", help="how to name that tree in the results")
    p.add_argument("--floor", required=True, help="directory of the floor programs")
    p.add_argument("--bench-formats", required=True, help="the bench_formats program")
    p.add_argument("--venv-python", required=True,
                   help="the test venv's Python (confluent-kafka), for the formats")
    p.add_argument("--work", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--flush-ms", type=int, default=500)
    p.add_argument("--reps", type=int, default=3,
                   help="runs of each throughput system, in alternating order")
    p.add_argument("--scrape-pairs", type=int, default=12,
                   help="pairs of sink runs at once, one unscraped and one scraped, for "
                   "the scraping goal")
    p.add_argument("--scrape-records", type=int, default=0,
                   help="records of the scraping pairs' topic (default: four times "
                   "--records)")
    p.add_argument("--wrk-seconds", type=float, default=10)
    p.add_argument("--wrk-warmup", type=float, default=3)
    p.add_argument("--wrk-threads", type=int, default=2)
    p.add_argument("--wrk-connections", type=int, default=16)
    p.add_argument("--startup-trials", type=int, default=5)
    p.add_argument("--connect-trials", type=int, default=3)
    p.add_argument("--connectors", type=int, default=50)
    p.add_argument("--settle", type=float, default=5)
    p.add_argument("--scale-steps", default="1,10,100,1000",
                   help="connector counts of the scale scenario")
    p.add_argument("--connect-scale-max", type=int, default=100,
                   help="the most connectors the scale scenario gives Connect")
    p.add_argument("--scale-sink-max", type=int, default=1000,
                   help="the most FileStreamSink connectors the scale scenario gives "
                   "tributary (0: none)")
    p.add_argument("--latency-rate", type=float, default=10000,
                   help="records/s the latency scenario offers")
    p.add_argument("--latency-seconds", type=float, default=10,
                   help="how long the latency scenario's counted records are offered")
    p.add_argument("--latency-warmup", type=float, default=2,
                   help="seconds of records offered first and not counted")
    p.add_argument("--together-runs", type=int, default=3,
                   help="runs of the latency scenario's systems at once on one topic")
    p.add_argument("--sizes", default="100,1024,10240",
                   help="value sizes (bytes) of the message-size scenario")
    p.add_argument("--size-mb", type=float, default=50,
                   help="MB of values per size in the message-size scenario")
    p.add_argument("--profile", action="store_true", help="profile the missed goals")
    p.add_argument("--profile-seconds", type=int, default=10)
    p.add_argument("--only", default="", help="comma-separated scenarios (for development)")
    args = p.parse_args()
    end_on_signals()

    ctx = Context(args)
    ctx.work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    wanted = set(filter(None, args.only.split(","))) or {
        "service", "sink", "source", "datagen", "transforms", "scale", "tasks", "latency",
        "latency-together", "sizes", "formats"}
    try:
        preload(ctx)
        for name, scenario in (("service", service), ("sink", sink), ("source", source),
                               ("datagen", datagen), ("transforms", transforms),
                               ("scale", scale), ("tasks", tasks), ("latency", latency),
                               ("latency-together", latency_together),
                               ("sizes", sizes), ("formats", formats)):
            if name in wanted:
                scenario(ctx)
        goals = evaluate(ctx)
        profile_lines = []
        if args.profile:
            missed = [s for s in ("sink", "source", "datagen", "transforms") if any(
                g["measured"] is not None and not g["met"] and g["goal"].startswith(s)
                for g in goals)]
            if missed:
                profile_lines = profile(ctx, missed)
        text = render(ctx, goals, profile_lines, time.monotonic() - started)
    except BenchError as e:
        log(f"failed: {e}")
        return 1
    finally:
        stop_all()
        if ctx.sink_dir != ctx.work:
            shutil.rmtree(ctx.sink_dir, ignore_errors=True)
    publish(Path(args.results), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
