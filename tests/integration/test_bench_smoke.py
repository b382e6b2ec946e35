"""bench/run --smoke: the benchmark harness end to end with tiny figures, so that it cannot
rot. It starts its own Kafka test bed (not the suite's), builds tributary in Release and
the floor programs, and runs every scenario against tributary, Kafka Connect and the floor,
the formats' encode and decode loops against confluent-kafka's serializers, the JDBC
sink into the bed's PostgreSQL (tributary alone: Debezium's task takes tens of seconds to
start), the S3 sink into moto's S3 server beside the consume-and-PUT floor, the search
sink into the bed's OpenSearch node beside the bare _bulk floor, and the MirrorMaker 2
source between the bed's two clusters beside the consume-and-produce floor (without
MM2 itself: Connect's start takes tens of seconds).
"""
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

# minutes for one test: a parallel run starts it first
pytestmark = [pytest.mark.integration, pytest.mark.long]

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 600  # seconds; the smoke run takes well under a minute once built

# (scenario, system) rows the printed table must have, each with numeric figures
EXPECTED = [("sink", "floor"), ("sink", "floor-write"), ("sink", "tributary"),
            ("sink", "tributary-scraped"), ("sink", "connect"), ("sink", "connect-tuned"),
            ("scraping", "tributary"), ("scraping", "tributary-scraped"),
            ("source", "floor"), ("source", "tributary"), ("source", "connect"),
            ("source", "connect-tuned"),
            ("datagen", "floor"), ("datagen", "tributary"),
            ("transforms", "tributary"), ("transforms", "connect"),
            ("transforms", "connect-tuned"),
            ("scale", "tributary"), ("scale", "connect"),
            ("tasks-sink", "tasks.max=1"), ("tasks-sink", "tasks.max=4"),
            ("tasks-source", "connectors=1"), ("tasks-source", "connectors=4"),
            ("latency", "floor-write"), ("latency", "tributary"),
            ("latency", "connect-tuned"),
            ("latency-together", "floor-write"), ("latency-together", "tributary"),
            ("latency-together", "connect-tuned"),
            ("size-1024", "floor-write"), ("size-1024", "tributary"),
            ("size-1024", "connect-tuned"),
            ("rest", "tributary"), ("rest", "connect"),
            ("startup", "tributary"), ("startup", "connect"),
            ("memory", "tributary"), ("memory", "connect"),
            ("json", "tributary"),
            ("avro", "tributary"), ("avro", "confluent-kafka"),
            ("protobuf", "tributary"), ("protobuf", "confluent-kafka"),
            ("json_schema", "tributary"), ("json_schema", "confluent-kafka"),
            ("jdbc-insert", "tributary"), ("jdbc-upsert", "tributary"),
            ("s3", "floor"), ("s3-json", "tributary"), ("s3-parquet", "tributary"),
            ("mirror", "floor"), ("mirror", "tributary")]
NUMBER = re.compile(r"^-?\d[\d ]*(\.\d+)?(e[+-]?\d+)?$")


def run_smoke():
    # Its own session, so that at the timeout the whole group gets SIGTERM first: bench/run
    # then stops its workers and its test bed, and only then is anything killed.
    proc = subprocess.Popen([str(ROOT / "bench" / "run"), "--smoke"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        pytest.fail(f"bench/run --smoke took more than {TIMEOUT} s:\n{err[-4000:]}")
    return proc.returncode, out, err


def test_smoke_run_prints_every_scenario():
    code, out, err = run_smoke()
    assert code == 0, f"exit {code}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-5000:]}"

    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 3 and (cells[0], cells[1]) in EXPECTED:
            rows[(cells[0], cells[1])] = cells[2:]
    missing = [key for key in EXPECTED if key not in rows]
    assert not missing, f"no row for {missing} in:\n{out}"
    for key, figures in rows.items():
        assert all(NUMBER.match(f) for f in figures), f"{key}: not all numeric: {figures}"

    assert "## Goals" in out and "## Machine" in out
    # the search sink's table (bench/search.py): the floor and tributary, figures numeric
    assert re.search(r"^#{1,2} Search sink into OpenSearch", out, re.M), out[-3000:]
    for system in (r"floor \(_bulk\)", "tributary"):
        assert re.search(rf"^\| {system} \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$", out,
                         re.M), f"no search row for {system}"
    # the release build runs on jemalloc, and so do the floors (docs/ARCHITECTURE.md)
    assert re.search(r"^\| tributary \| tributary .*, jemalloc \d", out, re.M), out[:3000]
    for floor in ("floor_consume", "floor_produce", "floor_mirror"):
        needed = subprocess.run(["readelf", "-d", str(ROOT / "build/bench/floor" / floor)],
                                capture_output=True, text=True, check=True).stdout
        assert "libjemalloc" in needed, f"{floor} is not linked with jemalloc"
    # the scraping goal's back-to-back pair, and what one scrape costs
    pairs = re.search(r"^\| records/s \| 1 \| [\d.]+× \|", out, re.M)
    assert pairs, "no scraping pair in the results"
    assert re.search(r"^What a scrape costs: .*: \d+\.\d+ ms of its CPU per scrape", out,
                     re.M), "no scrape cost in the results"
    written = re.search(r"results written to (\S+)", err)
    assert written, err[-2000:]
    results = Path(written.group(1))
    assert results.is_file()
    assert ROOT / "bench" / "results" not in results.parents, "smoke results leaked"
