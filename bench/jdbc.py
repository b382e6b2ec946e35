#!/usr/bin/env python3
"""The JDBC sink bench: tributary's JDBC sink against Debezium's JDBC sink 3.0.7
(io.debezium.connector.jdbc.JdbcSinkConnector) in Kafka Connect 3.9, tuned, into the same
PostgreSQL, the same N rows, in insert and upsert modes. See bench/README.md.

    bench/jdbc.py --bed DIR [-n N] [--label TEXT] [--systems LIST] [--modes LIST]

DIR is a running test bed (tests/bed/bed.sh start DIR: Kafka 3.9 and PostgreSQL 15). The
topic holds N JsonConverter records with schemas (a struct of id, customer, amount,
currency, note), null keys, on 4 partitions; each system, in a fresh process, writes them
into a fresh database (its table created by the sink) with one task. Rows per second and
the worker's CPU time (from /proc) per row are measured from the first row written to the
N-th, PostgreSQL's count polled every 20 ms; the time from the connector's creation to its
first row (the task's start: Hibernate's, for Debezium) is reported apart. Debezium's plugin is fetched once with Maven into
~/.cache/tributary/debezium-jdbc-<version>/ (bench/debezium-jdbc/pom.xml). Needs
confluent-kafka (the test venv: tests/bed/venv.sh) to write the records.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (BenchError, ConnectTuned, Tributary, cpu_seconds,  # noqa: E402
                     log, run_script)

ROOT = Path(__file__).resolve().parent.parent
DEBEZIUM_VERSION = "3.0.7.Final"
JSON = "org.apache.kafka.connect.json.JsonConverter"
PARTITIONS = 4
BATCH = 5000  # rows a statement may take, and records per poll, for both systems
SCHEMA = {"type": "struct", "name": "payment", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "customer", "type": "string", "optional": False},
    {"field": "amount", "type": "double", "optional": False},
    {"field": "currency", "type": "string", "optional": False},
    {"field": "note", "type": "string", "optional": True}]}


def bed_env(bed: Path) -> dict:
    env = {}
    for line in (bed / "bed.env").read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = value
    return env


def debezium_plugins() -> Path:
    """The directory holding Debezium's JDBC sink and its dependencies (no Kafka or
    Jackson jars: Connect's serve)."""
    home = Path.home() / ".cache" / "tributary" / f"debezium-jdbc-{DEBEZIUM_VERSION}"
    if (home / ".complete").exists():
        return home
    tmp = home.with_name(home.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    log(f"resolving Debezium's JDBC sink {DEBEZIUM_VERSION} into {home}")
    subprocess.run(["mvn", "-q", "-B", "-f", str(ROOT / "bench" / "debezium-jdbc" / "pom.xml"),
                    # Connect's Jackson, not a second one: the broker's jars on the
                    # classpath register a Jackson module that a plugin's own copy of
                    # Jackson refuses ("not a subtype"), and Hibernate fails to start
                    "dependency:copy-dependencies",
                    "-DexcludeGroupIds=org.apache.kafka,com.fasterxml.jackson.core",
                    "-DincludeScope=runtime", f"-DoutputDirectory={tmp / 'debezium'}"],
                   check=True)
    (tmp / ".complete").write_text("ok\n")
    shutil.rmtree(home, ignore_errors=True)
    tmp.rename(home)
    return home


class Postgres:
    def __init__(self, env: dict):
        self.env = env
        self.psql = str(Path(env["BED_PG_BIN"]) / "psql")

    def sql(self, query: str, db: str = "postgres", superuser: bool = False) -> str:
        user = self.env["BED_PG_SUPERUSER" if superuser else "BED_PG_USER"]
        password = self.env["BED_PG_SUPERPASSWORD" if superuser else "BED_PG_PASSWORD"]
        out = subprocess.run([self.psql, "-h", self.env["BED_PG_HOST"], "-p",
                              self.env["BED_PG_PORT"], "-U", user, "-d", db, "-tAc", query],
                             env={**os.environ, "PGPASSWORD": password},
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise BenchError(f"psql: {out.stderr.strip()}")
        return out.stdout.strip()

    def fresh_database(self, name: str) -> str:
        self.sql(f'DROP DATABASE IF EXISTS "{name}"', superuser=True)
        self.sql(f'CREATE DATABASE "{name}" OWNER "{self.env["BED_PG_USER"]}"',
                 superuser=True)
        return name

    def url(self, db: str) -> str:
        return f"jdbc:postgresql://{self.env['BED_PG_HOST']}:{self.env['BED_PG_PORT']}/{db}"

    def count(self, db: str, table: str) -> int:
        try:
            return int(self.sql(f'SELECT count(*) FROM "{table}"', db=db) or 0)
        except BenchError:
            return 0  # not created yet


def preload(bootstrap: str, topic: str, n: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        future.result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    schema = json.dumps(SCHEMA)[:-1]  # the envelope is written around the payload
    for i in range(n):
        payload = json.dumps({"id": i, "customer": f"c{i % 977}", "amount": i * 0.01,
                              "currency": "EUR", "note": "x" * 20})
        value = f'{{"schema":{schema}}},"payload":{payload}}}'
        while True:
            try:
                producer.produce(topic, value=value.encode(), partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(120) != 0:
        raise BenchError("the records were not all written")


def tributary_config(pg: Postgres, db: str, topic: str, mode: str) -> dict:
    keyed = {"pk.mode": "record_value", "pk.fields": "id"} if mode == "upsert" else {}
    return {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics": topic, "tasks.max": "1", "connection.url": pg.url(db),
            "connection.user": pg.env["BED_PG_USER"],
            "connection.password": "${env:BENCH_PG_PASSWORD}",
            "key.converter": JSON, "value.converter": JSON, "insert.mode": mode,
            "auto.create": "true", "table.name.format": "rows", "batch.size": str(BATCH),
            "consumer.override.max.poll.records": str(BATCH), **keyed}


def debezium_config(pg: Postgres, db: str, topic: str, mode: str) -> dict:
    keyed = ({"primary.key.mode": "record_value", "primary.key.fields": "id"}
             if mode == "upsert" else {"primary.key.mode": "none"})
    return {"connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
            "topics": topic, "tasks.max": "1", "connection.url": pg.url(db),
            "connection.username": pg.env["BED_PG_USER"],
            "connection.password": pg.env["BED_PG_PASSWORD"],
            "key.converter": JSON, "value.converter": JSON, "insert.mode": mode,
            "schema.evolution": "basic", "collection.name.format": "rows",
            "batch.size": str(BATCH), "use.reduction.buffer": "false",
            "consumer.override.max.poll.records": str(BATCH), **keyed}


class DebeziumConnect(ConnectTuned):
    """Connect 3.9 tuned as the main bench tunes it, with Debezium's plugin on its path and
    connector-level consumer overrides allowed."""
    kind = "debezium-connect"

    def common_properties(self) -> list:
        return super().common_properties() + ["connector.client.config.override.policy=All"]


def measure(worker_class, ctx, config: dict, pg: Postgres, db: str, n: int,
            env: dict) -> dict:
    worker = worker_class(ctx, f"{config['insert.mode']}")
    old = os.environ.copy()
    os.environ.update(env)
    try:
        worker.start()
    finally:
        os.environ.clear()
        os.environ.update(old)
    try:
        worker.wait_ready()
        created = time.monotonic()
        # a name of its own: no consumer group is reused
        worker.create(f"{worker.kind}-{config['insert.mode']}-{int(time.time())}", config)
        deadline = created + max(180.0, n / 500.0)
        first = count = 0
        while count < n:
            worker.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"{worker.kind}: {count} of {n} rows after "
                                 f"{deadline - created:.0f} s")
            count = pg.count(db, "rows")
            if first == 0 and count > 0:
                # the steady state starts with the first rows: a task's own start
                # (Hibernate's, for Debezium) is reported apart
                first, first_at, cpu_first = count, time.monotonic(), cpu_seconds(worker.pid)
            time.sleep(0.02)
        done = time.monotonic()
        cpu = cpu_seconds(worker.pid) - cpu_first
    finally:
        worker.stop()
    rows = max(n - first, 1)
    return {"system": worker.kind, "mode": config["insert.mode"], "rows": n,
            "to_first": first_at - created, "seconds": done - first_at,
            "rows_per_s": rows / max(done - first_at, 1e-3),
            "cpu_us_per_row": cpu / rows * 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bed", required=True, type=Path)
    parser.add_argument("-n", "--records", type=int, default=50000)  # a short run
    parser.add_argument("--tributary", default=str(ROOT / "build" / "bench" / "tributary"))
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path, help="also write the table there")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "jdbc-work",
                        help="the workers' directory (emptied first)")
    parser.add_argument("--systems", default="tributary,debezium",
                        help="the systems to run, comma-separated (default: both)")
    parser.add_argument("--modes", default="insert,upsert",
                        help="the insert modes to run, comma-separated (default: both)")
    args = parser.parse_args()
    env = bed_env(args.bed)
    pg = Postgres(env)
    systems = args.systems.split(",")
    plugins = debezium_plugins() if "debezium" in systems else ""
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ctx = SimpleNamespace(work=work, bootstrap=env["BED_BOOTSTRAP"], flush_ms=500,
                          libs=env["BED_CONNECT_LIBS"], tributary=args.tributary,
                          plugins=f"{env['BED_CONNECT_PLUGINS']},{plugins}")
    topic = f"bench-jdbc-{int(time.time()) % 1000000}"
    log(f"writing {args.records} records to {topic}")
    preload(env["BED_BOOTSTRAP"], topic, args.records)
    rows = []
    for mode in args.modes.split(","):
        for system, worker_class, make in (("tributary", Tributary, tributary_config),
                                           ("debezium", DebeziumConnect, debezium_config)):
            if system not in systems:
                continue
            db = pg.fresh_database(f"bench_{system}_{mode}")
            log(f"{system}, {mode}: {args.records} rows")
            rows.append(measure(worker_class, ctx, make(pg, db, topic, mode), pg, db,
                                args.records, {"BENCH_PG_PASSWORD": env["BED_PG_PASSWORD"]}))
    lines = [f"# JDBC sink into PostgreSQL 15: {args.records} rows"
             + (f" ({args.label})" if args.label else ""), "",
             "rows/s and CPU per row from the first row written to the last; the "
             "connector's start until its first row apart.", "",
             "| scenario | system | rows/s | CPU µs/row | s to the first row | s after it |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| jdbc-{r['mode']} | {r['system']} | {r['rows_per_s']:.0f} | "
                     f"{r['cpu_us_per_row']:.1f} | {r['to_first']:.2f} | "
                     f"{r['seconds']:.2f} |")
    lines.append("")
    for mode in args.modes.split(","):
        ours, theirs = (next((r for r in rows if r["mode"] == mode and r["system"] == s),
                             None) for s in ("tributary", "debezium-connect"))
        if ours is None or theirs is None:
            continue
        ratio = ours["rows_per_s"] / theirs["rows_per_s"]
        lines.append(f"- {mode}: tributary writes {ratio:.1f}x Debezium's rows/s "
                     f"(goal 3x: {'met' if ratio >= 3 else 'missed'})")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    run_script(main)  # the workers are stopped on the way out
