#!/usr/bin/env python3
"""The MirrorMaker 2 bench: tributary's MirrorSourceConnector against MM2's in Kafka
Connect (tuned) and a bare librdkafka consume-produce floor (floor_mirror), replicating
the same N records from the bed's first cluster to its second. See bench/README.md.

    bench/mirror.py --bed DIR --floor DIR [-n N] [--reps R] [--systems LIST]

DIR is a running test bed (tests/bed/bed.sh start DIR) with its two clusters: the source
topic (N records of 100-byte JSON values, null keys, 4 partitions, written by
floor_produce) is on the first, every system copies it into a remote topic of its own on
the second, created beforehand with 4 partitions. tributary and Connect run as workers of
the second cluster in a fresh process each, the connector with the same MM2 config (one
source and target alias per run, so that each run has its remote and offset-syncs topics);
Connect gets bench/harness.py's tuned client settings, for its producer as worker keys and
for MM2's consumer as source.consumer.* keys. floor_mirror gets tributary's client
settings. A watcher (floor_consume --end-offsets --first) polls the remote topic's end
offsets every 20 ms: records/s count from the first record there to the N-th, and the CPU
time (utime + stime from /proc) of the system's process, and of the two brokers, over
the same span (the floor measures its own span: first delivery report to the N-th).
Before the first, one floor_mirror pass, not counted, warms the brokers up. Systems run
R times in alternating order; the table gives medians and the spread.
"""
import argparse
import glob
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (CONNECT_TUNED, PARTITIONS, Background, BenchError,  # noqa: E402
                     ConnectTuned, Tributary, cpu_seconds, load_average, log, ratio,
                     run_script, spread, status_number, stop, tail)
from jdbc import bed_env  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
MIRROR = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
SIZE = 100
# system -> (worker, tasks.max); the floor is one consumer and one producer
SYSTEMS = {"floor": (None, 1), "tributary": (Tributary, 1), "tributary-4": (Tributary, 4),
           "mm2": (ConnectTuned, 1), "mm2-4": (ConnectTuned, 4)}
REFERENCE = "tributary"  # the row the goals read: one task, as the floor


def mirror_config(ctx, system: str, tag: str) -> dict:
    worker, tasks = SYSTEMS[system]
    config = {"connector.class": MIRROR, "tasks.max": str(tasks),
              "source.cluster.alias": f"a{tag}", "target.cluster.alias": f"b{tag}",
              "source.cluster.bootstrap.servers": ctx.source,
              "target.cluster.bootstrap.servers": ctx.target,
              "topics": ctx.topic, "replication.factor": "1",
              "offset-syncs.topic.replication.factor": "1",
              "sync.topic.acls.enabled": "false",  # tributary refuses true; no ACLs here
              "key.converter": BYTES, "value.converter": BYTES}
    if worker is ConnectTuned:
        # MM2's consumer is its own, not the worker's: the tuned consumer settings go to
        # it under source.consumer., with read_committed as tributary's reads
        config.update({"source." + p.split("=", 1)[0]: p.split("=", 1)[1]
                       for p in CONNECT_TUNED if p.startswith("consumer.")})
        config["source.consumer.isolation.level"] = "read_committed"
    return config


def brokers_cpu(ctx) -> float:
    return sum(cpu_seconds(pid) for pid in ctx.broker_pids)


class Watcher:
    """floor_consume --end-offsets --first on the remote topic, which it creates with
    PARTITIONS partitions: the time of its first record and of its N-th, by the
    watcher's clock, and what the system's process and the brokers spent between."""

    def __init__(self, ctx, remote: str, label: str):
        self.ctx = ctx
        self.log_path = ctx.work / f"{label}-watch.log"
        with open(self.log_path, "ab") as err:
            self.proc = subprocess.Popen(
                [str(ctx.floor / "floor_consume"), "--end-offsets", "--first",
                 "-c", str(PARTITIONS), "-b", ctx.target, "-t", remote, "-n", str(ctx.records),
                 "-T", str(int(ctx.timeout)), "-i", "20"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        line = self.line(60)
        if not line.startswith("ready"):
            self.close()
            raise BenchError(f"watcher of {remote}: {line!r}\n{tail(self.log_path)}")

    def line(self, timeout: float) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().decode().strip() if ready else ""

    def measure(self, worker, cpu_created: float) -> dict:
        """Waits for the first and the N-th record; worker's process is checked alive
        and its CPU read at each. cpu_created: its CPU when the connector was created."""
        figures = {}
        deadline = time.monotonic() + self.ctx.timeout
        while "seconds" not in figures:
            if worker is not None:
                worker.check_alive()
            if self.proc.poll() is not None and not select.select(
                    [self.proc.stdout], [], [], 0)[0]:
                raise BenchError(f"the watcher ended early:\n{tail(self.log_path)}")
            if time.monotonic() > deadline:
                raise BenchError(f"the remote topic did not reach {self.ctx.records} "
                                 f"records in {self.ctx.timeout:.0f} s")
            line = self.line(0.5)
            if line.startswith("first"):
                figures.update(first=float(line.split()[1]), brokers0=brokers_cpu(self.ctx),
                               cpu0=cpu_seconds(worker.pid))
            elif line.startswith("{"):
                done = json.loads(line)
                figures.update(brokers1=brokers_cpu(self.ctx), cpu1=cpu_seconds(worker.pid),
                               hwm_kb=status_number(worker.pid, "VmHWM"))
                figures["seconds"] = done["seconds"] - figures.get("first", done["seconds"])
        if figures["seconds"] <= 0:
            raise BenchError("the remote topic had all its records at the watcher's first "
                             "look: use a larger N")
        return {"seconds": figures["seconds"], "cpu": figures["cpu1"] - figures["cpu0"],
                "cpu_all": figures["cpu1"] - cpu_created,
                "brokers": figures["brokers1"] - figures["brokers0"],
                "hwm_mb": figures["hwm_kb"] / 1024}

    def close(self) -> None:
        stop(self.proc, 5)


def run_worker(ctx, system: str, run: int) -> dict:
    worker_class, _ = SYSTEMS[system]
    tag = f"{run}{system.replace('-', '')}"
    remote = f"a{tag}.{ctx.topic}"  # DefaultReplicationPolicy's name
    worker = worker_class(ctx, f"mirror-{tag}").start()
    watcher = None
    try:
        worker.wait_ready()
        watcher = Watcher(ctx, remote, f"mirror-{tag}")
        background = Background(None, ctx.broker_pids)
        cpu_created = cpu_seconds(worker.pid)
        worker.create(f"mirror-{tag}", mirror_config(ctx, system, tag))
        result = watcher.measure(worker, cpu_created)
        result["background"] = background.cores()
    finally:
        if watcher is not None:
            watcher.close()
        worker.stop()
    return result


def run_floor(ctx, tag: str) -> dict:
    remote = f"afloor{tag}.{ctx.topic}"
    watcher = Watcher(ctx, remote, f"mirror-floor{tag}")
    log_path = ctx.work / f"mirror-floor{tag}.log"
    background = Background(None, ctx.broker_pids)
    with open(log_path, "ab") as err:
        proc = subprocess.Popen(
            [str(ctx.floor / "floor_mirror"), "-s", ctx.source, "-t", ctx.topic,
             "-d", ctx.target, "-r", remote, "-n", str(ctx.records),
             "-T", str(int(ctx.timeout))],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
    try:
        # "first" at its first delivery report, its JSON line at the N-th
        first = proc.stdout.readline().decode().strip()
        brokers0 = brokers_cpu(ctx)
        done = proc.stdout.readline().decode().strip()
        brokers = brokers_cpu(ctx) - brokers0
        code = proc.wait(ctx.timeout + 60)
    finally:
        stop(proc, 5)
        watcher.close()
    if code != 0 or first != "first" or not done.startswith("{"):
        raise BenchError(f"floor_mirror exited with {code}: {tail(log_path)}")
    result = json.loads(done)
    return {"seconds": result["seconds"], "cpu": result["cpu_seconds"],
            "cpu_all": result["total_cpu_seconds"], "brokers": brokers,
            "hwm_mb": result["hwm_kb"] / 1024, "background": background.cores()}


def per_rep(results: dict, system: str, other: str, key: str, invert: bool) -> list:
    """system's figure ÷ other's in each repetition (of seconds inverted: records/s)."""
    pairs = zip(results.get(system, []), results.get(other, []))
    return [ratio(o[key], s[key]) if invert else ratio(s[key], o[key]) for s, o in pairs]


def median_of(runs: list, ctx, key: str) -> float:
    if key == "rps":
        return statistics.median(ctx.records / r["seconds"] for r in runs)
    return statistics.median(r[key] for r in runs)


def goals(ctx, results: dict) -> list:
    lines = ["## Goals (issue 37)", ""]
    mm2 = [s for s in results if s.startswith("mm2")]
    if REFERENCE not in results or not mm2 or "floor" not in results:
        return lines + ["Not measured: the goals need the floor, tributary and MM2 rows.", ""]
    fastest = max(mm2, key=lambda s: median_of(results[s], ctx, "rps"))
    cheapest = min(mm2, key=lambda s: median_of(results[s], ctx, "cpu"))

    def line(text, values, target, at_least):
        values = [v for v in values if v is not None]
        if not values:
            return f"- {text}: not measured"
        value = statistics.median(values)
        met = value >= target if at_least else value <= target
        verdict = "met" if met else "missed"
        return (f"- {text}: {value:.2f}× (runs {min(values):.2f}–{max(values):.2f}), "
                f"goal {'≥' if at_least else '≤'} {target}×: **{verdict}**")
    return lines + [
        f"tributary is the `{REFERENCE}` row (one task, as the floor); MM2 its fastest row "
        f"(`{fastest}`) for records/s and its cheapest (`{cheapest}`) for CPU. Medians of "
        "the repetitions' ratios.", "",
        line(f"records/s vs MM2 (`{fastest}`)",
             per_rep(results, REFERENCE, fastest, "seconds", True), 3, True),
        line(f"CPU per record vs MM2 (`{cheapest}`)",
             per_rep(results, REFERENCE, cheapest, "cpu", False), 0.25, False),
        line("CPU per record vs the floor",
             per_rep(results, REFERENCE, "floor", "cpu", False), 1.3, False),
        line("CPU per record from the start vs the floor's (the same goal, both "
             "processes' whole work)",
             per_rep(results, REFERENCE, "floor", "cpu_all", False), 1.3, False), ""]


def table(ctx, results: dict) -> str:
    lines = [f"# MirrorMaker 2: {ctx.records} records of {SIZE} bytes, {PARTITIONS} "
             f"partitions, cluster to cluster, {ctx.reps} runs each", "",
             f"Kafka {ctx.kafka_version} (two single-node clusters of the bed); MM2: "
             f"connect-mirror {ctx.mm2_version} in Connect {ctx.connect_version} standalone, "
             "tuned (the harness's `connect-tuned` client settings). Load average before the "
             f"runs {ctx.load_before}, after them {load_average()} ({os.cpu_count()} cores).",
             "",
             "From the first record in the remote topic to the N-th (the floor: its first "
             "delivery report to its N-th); CPU of the system's process and of the "
             "two brokers over that span; median (min–max) of the runs. The ratios divide "
             "each run's figure by that of the same repetition. CPU from the start: the "
             "process's from the connector's creation (the floor's start) to the N-th "
             "record, which also counts what the consumer read ahead before the first record "
             "reached the target (librdkafka keeps up to 64 MiB of records fetched, Java's "
             "consumer a few MiB) and, for Connect, the task's start and the JIT's first "
             "compilations. Background: cores kept busy by processes outside the bench.", "",
             "| scenario | system | tasks | records/s | CPU µs/record | "
             "CPU µs/record from the start | brokers' CPU µs/record | peak RSS MB | "
             "background cores | records/s ÷ floor's | CPU ÷ floor's |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for system, runs in results.items():
        rates = [ctx.records / r["seconds"] for r in runs]
        lines.append(
            f"| mirror | {system} | {SYSTEMS[system][1]} | {spread(rates, 0)} | "
            f"{spread([r['cpu'] / ctx.records * 1e6 for r in runs], 2)} | "
            f"{spread([r['cpu_all'] / ctx.records * 1e6 for r in runs], 2)} | "
            f"{spread([r['brokers'] / ctx.records * 1e6 for r in runs], 2)} | "
            f"{spread([r['hwm_mb'] for r in runs], 1)} | "
            f"{spread([r['background'] for r in runs], 2)} | "
            f"{spread(per_rep(results, system, 'floor', 'seconds', True), 2)} | "
            f"{spread(per_rep(results, system, 'floor', 'cpu', False), 2)} |")
    mm2 = [s for s in results if s.startswith("mm2")]
    trib = [s for s in results if s.startswith("tributary")]
    if mm2 and trib:
        lines += ["", "| tributary | MM2 | records/s ratio | CPU per record ratio |",
                  "|---|---|---|---|"]
        for t in trib:
            for m in mm2:
                lines.append(f"| {t} | {m} | "
                             f"{spread(per_rep(results, t, m, 'seconds', True), 2)} | "
                             f"{spread(per_rep(results, t, m, 'cpu', False), 2)} |")
    return "\n".join(lines + [""] + goals(ctx, results)) + "\n"


def preload(ctx) -> None:
    log(f"preloading {ctx.records} records of {SIZE} bytes into {ctx.topic}")
    with open(ctx.work / "preload.log", "ab") as err:
        watcher = subprocess.Popen(
            [str(ctx.floor / "floor_consume"), "--end-offsets", "-c", str(PARTITIONS),
             "-b", ctx.source, "-t", ctx.topic, "-n", str(ctx.records),
             "-T", str(int(ctx.timeout))], stdout=subprocess.PIPE, stderr=err)
        try:
            if not watcher.stdout.readline().startswith(b"ready"):
                raise BenchError(f"creating {ctx.topic}: {tail(ctx.work / 'preload.log')}")
            subprocess.run([str(ctx.floor / "floor_produce"), "-b", ctx.source,
                            "-t", ctx.topic, "-n", str(ctx.records), "-s", str(SIZE),
                            "-T", str(int(ctx.timeout))], stdout=subprocess.DEVNULL,
                           stderr=err, check=True, timeout=ctx.timeout + 60)
            if watcher.wait(ctx.timeout) != 0:
                raise BenchError(f"{ctx.topic} did not reach {ctx.records} records")
        except subprocess.CalledProcessError as e:
            raise BenchError(f"floor_produce failed: {tail(ctx.work / 'preload.log')}") from e
        finally:
            stop(watcher, 5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bed", required=True, type=Path)
    parser.add_argument("--floor", required=True, type=Path,
                        help="the directory of floor_mirror, floor_consume, floor_produce")
    parser.add_argument("-n", "--records", type=int, default=1000000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--tributary", default=str(ROOT / "build" / "bench" / "tributary"))
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "mirror-work")
    parser.add_argument("--out", type=Path, help="also write the table there")
    args = parser.parse_args()
    systems = args.systems.split(",")
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown or args.records < 1000 or args.reps < 1:
        raise BenchError(f"--systems takes {','.join(SYSTEMS)} (not {unknown}); "
                         "-n at least 1000; --reps at least 1")
    env = bed_env(args.bed)
    if "BED_KAFKA2_BOOTSTRAP" not in env:
        raise BenchError(f"the bed in {args.bed} has no second cluster (BED_KAFKA2_BOOTSTRAP)")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    libs = env["BED_CONNECT_LIBS"]
    jars = sorted(glob.glob(f"{libs}/connect-mirror-[0-9]*.jar"))
    ctx = SimpleNamespace(
        work=args.work, source=env["BED_BOOTSTRAP"], target=env["BED_KAFKA2_BOOTSTRAP"],
        # the workers' own cluster is the target, as for MM2 in Connect
        bootstrap=env["BED_KAFKA2_BOOTSTRAP"], flush_ms=500, libs=libs,
        plugins=env["BED_CONNECT_PLUGINS"], tributary=args.tributary, floor=args.floor,
        records=args.records, reps=args.reps,
        broker_pids=[int(env["BED_PID"]), int(env["BED_KAFKA2_PID"])],
        # generous but bounded: 5 minutes, or 2 000 records/s (a third of MM2's slowest here)
        timeout=max(300.0, args.records / 2000.0),
        topic=f"bench-mirror-{int(time.time()) % 1000000}",
        kafka_version=env.get("BED_KAFKA_VERSION", "?"),
        connect_version=env.get("BED_CONNECT_VERSION", "?"),
        mm2_version=Path(jars[-1]).stem.split("-")[-1] if jars else "not on the classpath")
    if any(s.startswith("mm2") for s in systems) and not jars:
        raise BenchError(f"no connect-mirror jar in {libs}: the bed has no MM2")
    preload(ctx)
    # The brokers are JVMs too: their first heavy fetches and produces run interpreted,
    # and the first system measured paid for it (about twice the CPU per record).
    log("warming the brokers up: one floor_mirror pass, not counted")
    run_floor(ctx, "warmup")
    ctx.load_before = load_average()
    results = {s: [] for s in systems}
    for run in range(args.reps):
        for system in systems if run % 2 == 0 else reversed(systems):
            log(f"run {run + 1} of {args.reps}: {system}")
            result = (run_floor(ctx, str(run)) if system == "floor"
                      else run_worker(ctx, system, run))
            log(f"{system}: {ctx.records / result['seconds']:.0f} records/s, "
                f"{result['cpu'] / ctx.records * 1e6:.2f} CPU µs/record")
            results[system].append(result)
    text = table(ctx, results)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    run_script(main)  # the workers are stopped on the way out
