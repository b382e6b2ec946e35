#!/usr/bin/env python3
"""The S3 sink bench: tributary's S3 sink, JsonFormat and ParquetFormat, against a bare
consume-and-PUT floor (floor_consume -p) into the same moto S3 server, the same N records.
See bench/README.md.

    bench/s3.py --bed DIR --floor DIR [-n N] [--reps R] [--flush F] [--formats LIST]

DIR is a running test bed (tests/bed/bed.sh start DIR). The topic holds N JsonConverter
records with schemas (a struct of id, customer, amount, currency, note), null keys, on 4
partitions. moto's server (from the test venv, signature checks on) runs on loopback for
the whole run, one fresh bucket per run. Each system reads the topic from the start with
one task and writes objects of F records per partition (flush.size); a run ends when
N / F objects are in the bucket: tributary_s3_objects_total for tributary, polled every
50 ms, and the floor's own exit. Records/s and CPU per record are taken over the whole run,
from the connector's creation (the floor's start) to the last object, CPU from /proc for
the worker and from the floor itself. The floor PUTs the raw values, a line each, signed
as tributary's requests are: what any S3 sink must do at least. Each system runs R times,
in alternating order; the table gives medians and the spread (min-max).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "integration"))
from harness import (BenchError, Tributary, cpu_seconds, load_average, log,  # noqa: E402
                     ratio, run_script, spread, status_number)
from jdbc import bed_env, preload  # noqa: E402
from s3_server import MotoS3  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
JSON = "org.apache.kafka.connect.json.JsonConverter"
FORMATS = {"json": "io.confluent.connect.s3.format.json.JsonFormat",
           "parquet": "io.confluent.connect.s3.format.parquet.ParquetFormat"}
OBJECTS = re.compile(r"^tributary_s3_objects_total\{[^}]*\} (\d+)", re.M)


def objects_written(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return sum(int(m) for m in OBJECTS.findall(r.read().decode()))


def run_tributary(ctx, moto: MotoS3, fmt: str, run: int) -> dict:
    bucket = moto.bucket(f"bench-{fmt}-{run}")
    worker = Tributary(ctx, f"s3-{fmt}-{run}")
    old = os.environ.copy()
    os.environ.update({"BENCH_S3_KEY": moto.access_key, "BENCH_S3_SECRET": moto.secret_key})
    try:
        worker.start()
    finally:
        os.environ.clear()
        os.environ.update(old)
    try:
        worker.wait_ready()
        expected = ctx.records // ctx.flush
        cpu0, started = cpu_seconds(worker.pid), time.monotonic()
        worker.create(f"s3-{fmt}-{run}", {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": ctx.topic, "tasks.max": "1", "s3.bucket.name": bucket,
            "s3.region": "us-east-1", "store.url": moto.url,
            "aws.access.key.id": "${env:BENCH_S3_KEY}",
            "aws.secret.access.key": "${env:BENCH_S3_SECRET}",
            "format.class": FORMATS[fmt], "flush.size": str(ctx.flush),
            "key.converter": JSON, "value.converter": JSON,
            "consumer.override.max.poll.records": "5000"})
        deadline = started + max(300.0, ctx.records / 500.0)
        while (written := objects_written(worker.port)) < expected:
            worker.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"tributary {fmt}: {written} of {expected} objects after "
                                 f"{deadline - started:.0f} s")
            time.sleep(0.05)
        seconds = time.monotonic() - started
        cpu = cpu_seconds(worker.pid) - cpu0
        hwm_kb = status_number(worker.pid, "VmHWM")
    finally:
        worker.stop()
    return {"seconds": seconds, "cpu": cpu, "hwm_mb": hwm_kb / 1024}


def run_floor(ctx, moto: MotoS3, run: int) -> dict:
    bucket = moto.bucket(f"bench-floor-{run}")
    out = subprocess.run(
        [str(ctx.floor / "floor_consume"), "-b", ctx.bootstrap, "-t", ctx.topic,
         "-n", str(ctx.records), "-T", str(max(300, ctx.records // 500)),
         "-p", f"{moto.url}/{bucket}", "-f", str(ctx.flush)],
        env={**os.environ, "AWS_ACCESS_KEY_ID": moto.access_key,
             "AWS_SECRET_ACCESS_KEY": moto.secret_key},
        capture_output=True, text=True)
    if out.returncode != 0:
        raise BenchError(f"floor_consume -p exited with {out.returncode}: {out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["objects"] != ctx.records // ctx.flush:
        raise BenchError(f"floor_consume -p wrote {result['objects']} objects")
    return {"seconds": result["seconds"], "cpu": result["cpu_seconds"],
            "hwm_mb": result["hwm_kb"] / 1024}


def table(ctx, results: dict) -> str:
    lines = [f"# S3 sink into moto's S3 server: {ctx.records} records, flush.size "
             f"{ctx.flush}, {ctx.reps} runs each", "",
             f"Load average before the runs {ctx.load_before}, after them {load_average()} "
             f"({os.cpu_count()} cores).", "",
             "From the connector's creation (the floor's start) to the last object; "
             "median (min–max) of the runs. The ratios divide each run's figure by the "
             "floor's of the same repetition.", "",
             "| scenario | system | records/s | CPU µs/record | peak RSS MB | "
             "records/s ÷ floor's | CPU ÷ floor's |", "|---|---|---|---|---|---|---|"]
    floor = results["floor"]
    for system, runs in results.items():
        rates = [ctx.records / r["seconds"] for r in runs]
        cpus = [r["cpu"] / ctx.records * 1e6 for r in runs]
        speed = [ratio(f["seconds"], r["seconds"]) for r, f in zip(runs, floor)]
        cost = [ratio(r["cpu"], f["cpu"]) for r, f in zip(runs, floor)]
        scenario, _, fmt = system.partition("-")
        lines.append(f"| s3{'-' + fmt if fmt else ''} | {scenario} | {spread(rates, 0)} | {spread(cpus, 1)} | "
                     f"{spread([r['hwm_mb'] for r in runs], 1)} | {spread(speed, 2)} | "
                     f"{spread(cost, 2)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bed", required=True, type=Path)
    parser.add_argument("--floor", required=True, type=Path,
                        help="the directory of floor_consume (bench/run builds it)")
    parser.add_argument("-n", "--records", type=int, default=400000)
    parser.add_argument("--flush", type=int, default=10000,
                        help="flush.size; N must be a multiple of 4 times it")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--formats", default="json,parquet")
    parser.add_argument("--tributary", default=str(ROOT / "build" / "bench" / "tributary"))
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "s3-work")
    parser.add_argument("--out", type=Path, help="also write the table there")
    args = parser.parse_args()
    if args.records % (4 * args.flush) != 0:
        raise BenchError(f"-n {args.records} is not a multiple of 4 × --flush {args.flush}")
    env = bed_env(args.bed)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    ctx = SimpleNamespace(work=args.work, bootstrap=env["BED_BOOTSTRAP"], flush_ms=500,
                          tributary=args.tributary, floor=args.floor, records=args.records,
                          flush=args.flush, reps=args.reps,
                          topic=f"bench-s3-{int(time.time()) % 1000000}")
    log(f"writing {args.records} records to {ctx.topic}")
    preload(ctx.bootstrap, ctx.topic, args.records)
    ctx.load_before = load_average()
    moto = MotoS3(tempfile.mkdtemp(prefix="bench-moto-", dir=args.work))
    systems = ["floor"] + [f"tributary-{f}" for f in args.formats.split(",")]
    results = {s: [] for s in systems}
    try:
        for run in range(args.reps):
            for system in systems if run % 2 == 0 else reversed(systems):
                log(f"run {run + 1} of {args.reps}: {system}")
                results[system].append(
                    run_floor(ctx, moto, run) if system == "floor"
                    else run_tributary(ctx, moto, system.split("-", 1)[1], run))
    finally:
        moto.close()
    text = table(ctx, results)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    run_script(main)  # the workers are stopped on the way out
