"""The CDC benchmark (bench/cdc; bench/README.md): tributary's PostgreSQL source against
Debezium 3.6.1's PostgreSQL connector in Kafka Connect 3.9 standalone, on the same table
of the bed's PostgreSQL, the same N changes, the same converter (JsonConverter with
schemas), and a floor: pg_recvlogical reading the same changes from a slot of its own.

Each repetition makes a fresh table, a publication and a slot per system, then inserts N
rows in transactions of 1 000 (untimed). The systems then run one after another in
alternating order (harness.alternating), each streaming the same N changes from its own
slot into its own 4-partition topic: the time runs from the connector's creation to the
N-th record in the topic, the CPU is the worker's over that time. The snapshot scenario
then reads the same table (N rows) with snapshot.mode=initial. Python standard library
only; the shared machinery (workers, CPU readings, the topic watcher) is harness.py's."""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from harness import (BenchError, Background, ConnectTuned, Fixed, Tributary,  # noqa: E402
                     Watcher, alternating, cpu_seconds, log, status_number)

JSON = "org.apache.kafka.connect.json.JsonConverter"
BATCH_ROWS = 1000  # rows per inserted transaction
SYSTEMS = ["floor", "tributary", "debezium"]
# Both connectors get the same Debezium keys, tuned past Debezium's defaults (2048 and
# 8192) for throughput: bigger polls, a queue four times a poll.
TUNING = {"max.batch.size": "8192", "max.queue.size": "32768"}
PASSWORD_ENV = "BENCH_PG_PASSWORD"


class Pg:
    """psql against the bed's PostgreSQL as its (REPLICATION) user."""

    def __init__(self, args):
        self.bin, self.host, self.port = Path(args.pg_bin), args.pg_host, args.pg_port
        self.user, self.db = args.pg_user, args.pg_db
        self.password = os.environ[PASSWORD_ENV]

    def env(self) -> dict:
        return {**os.environ, "PGPASSWORD": self.password}

    def sql(self, statement: str) -> list[str]:
        done = subprocess.run(
            [self.bin / "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-h", self.host, "-p", str(self.port), "-U", self.user, "-d", self.db,
             "-c", statement], capture_output=True, text=True, env=self.env(), timeout=3600)
        if done.returncode != 0:
            raise BenchError(f"psql failed on {statement[:200]!r}: {done.stderr.strip()}")
        return done.stdout.splitlines()


class Debezium(ConnectTuned):
    """Connect tuned (harness.CONNECT_TUNED) with Debezium's plugin on its plugin.path."""
    kind = "debezium"


class Context(harness.Context):
    def __init__(self, args):
        super().__init__(args)
        # Debezium streams about a thousand changes a second on a loaded 2-core machine:
        # ten minutes, or ten times that long
        self.run_timeout = max(600.0, self.n / 100.0)

    def _sink_dir(self) -> Path:
        return self.work  # no sink here


def table_ddl(table: str) -> str:
    return (f"CREATE TABLE {table} (id bigint PRIMARY KEY, customer int NOT NULL, "
            "amount numeric(12,2) NOT NULL, currency char(3) NOT NULL, note text, "
            "created timestamp NOT NULL)")


def insert_rows(pg: Pg, table: str, n: int) -> None:
    """N rows, BATCH_ROWS a transaction (a DO block may commit since PostgreSQL 11)."""
    pg.sql(f"DO $$ BEGIN FOR b IN 0..{(n - 1) // BATCH_ROWS} LOOP "
           f"INSERT INTO {table} SELECT g, g % 1000, g * 1.25, 'EUR', "
           "repeat('x', 40), timestamp '2024-01-01' + g * interval '1 second' "
           f"FROM generate_series(b * {BATCH_ROWS} + 1, "
           f"least((b + 1) * {BATCH_ROWS}, {n})) g; COMMIT; END LOOP; END $$")


def connector_config(ctx, pg: Pg, system: str, prefix: str, slot: str, publication: str,
                     table: str, snapshot: str) -> dict:
    password = f"${{env:{PASSWORD_ENV}}}" if system == "tributary" else pg.password
    return {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": pg.host, "database.port": str(pg.port),
            "database.user": pg.user, "database.password": password,
            "database.dbname": pg.db, "topic.prefix": prefix, "plugin.name": "pgoutput",
            "slot.name": slot, "publication.name": publication,
            "publication.autocreate.mode": "disabled",
            "table.include.list": f"public\\.{table}", "snapshot.mode": snapshot,
            "key.converter": JSON, "value.converter": JSON, **TUNING}


def run_floor(ctx, pg: Pg, slot: str, publication: str, end_lsn: str, label: str) -> dict:
    """pg_recvlogical from the slot to /dev/null until end_lsn: the server decoding and
    sending the changes with pgoutput, and nothing done with them. Its own CPU and peak
    RSS (wait4's)."""
    log_path = ctx.work / f"{label}.log"
    t0 = time.monotonic()
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [pg.bin / "pg_recvlogical", "-h", pg.host, "-p", str(pg.port), "-U", pg.user,
             "-d", pg.db, "--slot", slot, "--start", "--no-loop", "-E", end_lsn,
             "-o", "proto_version=1", "-o", f"publication_names={publication}",
             "-f", "/dev/null"], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            env=pg.env())
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise BenchError(f"pg_recvlogical failed ({proc.returncode}):\n"
                         f"{harness.tail(log_path)}")
    return {"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
            "hwm_kb": usage.ru_maxrss}


def run_worker(ctx, pg: Pg, system: str, scenario: str, config: dict, topic: str,
               label: str) -> None:
    worker = (Tributary if system == "tributary" else Debezium)(ctx, f"{scenario}-{ctx.rep}")
    worker.start()
    try:
        worker.wait_ready()
        first = Watcher(ctx, topic, f"{label}-first", n=1)
        watcher = Watcher(ctx, topic, label)
        background = Background(ctx)
        cpu0, t0 = cpu_seconds(worker.pid), time.monotonic()
        worker.create(label, config)
        t_first = first.wait(worker)
        cpu_first = cpu_seconds(worker.pid)
        t1 = watcher.wait(worker)
        cpu1, hwm = cpu_seconds(worker.pid), status_number(worker.pid, "VmHWM")
        busy = background.cores()
    finally:
        worker.stop()
    entry = harness.throughput_row(ctx, scenario, system, t1 - t0, cpu1 - cpu0, hwm,
                                   Fixed(busy))
    # the same after the first record: the connector's start left out
    streamed = max(ctx.n - 1, 1)
    entry["steady_rps"] = streamed / (t1 - t_first) if t1 > t_first else 0.0
    entry["steady_cpu_per_m"] = (cpu1 - cpu_first) / streamed * 1e6


def repetition(ctx, pg: Pg, systems: list[str]) -> None:
    """One repetition's table, slots and publications; then each system streams it and,
    unless smoke, snapshots it."""
    tag = f"{ctx.run_id}_{ctx.rep}"
    table = f"bench_cdc_{tag}"
    pg.sql(table_ddl(table))
    for system in SYSTEMS:
        pg.sql(f"CREATE PUBLICATION pub_{system}_{tag} FOR TABLE {table}")
        pg.sql(f"SELECT pg_create_logical_replication_slot('s_{system}_{tag}', 'pgoutput')")
    log(f"inserting {ctx.n} rows into {table}, {BATCH_ROWS} a transaction")
    insert_rows(pg, table, ctx.n)
    end_lsn = pg.sql("SELECT pg_current_wal_lsn()")[0]
    slots = []
    for system in systems:
        slot, publication = f"s_{system}_{tag}", f"pub_{system}_{tag}"
        label = f"cdc-stream-{system}-{tag}"
        if system == "floor":
            r = run_floor(ctx, pg, slot, publication, end_lsn, label)
            entry = harness.throughput_row(ctx, "stream", "floor", r["seconds"], r["cpu"],
                                           r["hwm_kb"], Fixed(0.0))
            # pg_recvlogical starts in milliseconds: no start to leave out
            entry["steady_rps"], entry["steady_cpu_per_m"] = entry["rps"], entry["cpu_per_m"]
            continue
        prefix = f"b{system[0]}{tag}"
        run_worker(ctx, pg, system, "stream",
                   connector_config(ctx, pg, system, prefix, slot, publication, table,
                                    "no_data"), f"{prefix}.public.{table}", label)
        if ctx.snapshot:
            prefix, slot = f"s{system[0]}{tag}", f"snap_{system}_{tag}"
            slots.append(slot)
            run_worker(ctx, pg, system, "snapshot",
                       connector_config(ctx, pg, system, prefix, slot, publication, table,
                                        "initial"), f"{prefix}.public.{table}",
                       f"cdc-snapshot-{system}-{tag}")
    # the slots hold WAL back: gone once the repetition is measured
    for slot in [f"s_{s}_{tag}" for s in SYSTEMS] + slots:
        pg.sql(f"SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
               f"WHERE slot_name = '{slot}' AND NOT active")
    pg.sql(f"DROP TABLE {table}")


# ------------------------------------------------------------------------ results
def figures(rows, scenario, system):
    return [r for r in rows if r["scenario"] == scenario and r["system"] == system]


def spread(values, digits=3) -> str:
    """median (min-max)."""
    if not values:
        return "not measured"
    med = statistics.median(values)
    if len(values) == 1:
        return harness.fmt(med, digits)
    return f"{harness.fmt(med, digits)} ({harness.fmt(min(values), digits)}–" \
           f"{harness.fmt(max(values), digits)})"


def ratios(rows, scenario, key):
    """Per repetition, tributary's figure key over Debezium's."""
    t, d = figures(rows, scenario, "tributary"), figures(rows, scenario, "debezium")
    by_rep = {r["rep"]: r for r in d}
    return [a[key] / by_rep[a["rep"]][key] for a in t
            if a["rep"] in by_rep and by_rep[a["rep"]][key] > 0]


def render(ctx, label: str, wall: float) -> str:
    a = ctx.args
    L = [f"# tributary CDC benchmark{' (smoke)' if ctx.smoke else ''}", "",
         f"Machine: {label}.", "", *harness.machine(ctx),
         f"| Debezium | {a.debezium_version} PostgreSQL connector in Kafka Connect "
         f"{a.kafka_version} standalone |",
         f"| PostgreSQL | {a.pg_version} |", "",
         f"N = {ctx.n} changes (inserted {BATCH_ROWS} rows a transaction), "
         f"{ctx.reps} repetition(s) in alternating order; {wall:.0f} s in all.", "",
         "## Per run", "",
         "Whole: from the connector's creation to the N-th record; steady: from the "
         "first record to the N-th (the connector's start left out).", "",
         "| scenario | system | rep | seconds | events/s whole | events/s steady | "
         "CPU s per M events whole | steady | cores | peak RSS MB | other load (cores) |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in ctx.rows:
        L.append(f"| {r['scenario']} | {r['system']} | {r['rep']} | {r['seconds']:.2f} | "
                 f"{r['rps']:.0f} | {r['steady_rps']:.0f} | {r['cpu_per_m']:.1f} | "
                 f"{r['steady_cpu_per_m']:.1f} | {r['cores']:.2f} | {r['rss_mb']:.0f} | "
                 f"{r['background']:.2f} |")
    L += ["", "## Summary (median, min–max over the repetitions)", "",
          "| scenario | system | events/s whole | events/s steady | CPU s per M events whole "
          "| steady |", "|---|---|---|---|---|---|"]
    scenarios = ["stream"] + (["snapshot"] if ctx.snapshot else [])
    for scenario in scenarios:
        for system in SYSTEMS:
            rows = figures(ctx.rows, scenario, system)
            if rows:
                L.append(f"| {scenario} | {system} | {spread([r['rps'] for r in rows], 4)} | "
                         f"{spread([r['steady_rps'] for r in rows], 4)} | "
                         f"{spread([r['cpu_per_m'] for r in rows])} | "
                         f"{spread([r['steady_cpu_per_m'] for r in rows])} |")
    L += ["", "tributary ÷ Debezium, per repetition (issue 22's goals: ≥ 3 for events/s, "
          "≤ 0.25 for CPU per event):", "",
          "| scenario | events/s whole | events/s steady | CPU per event whole | steady |",
          "|---|---|---|---|---|"]
    for scenario in scenarios:
        L.append(f"| {scenario} | " + " | ".join(spread(ratios(ctx.rows, scenario, key))
                                                for key in ("rps", "steady_rps", "cpu_per_m",
                                                            "steady_cpu_per_m")) + " |")
    floor = figures(ctx.rows, "stream", "floor")
    trib = {r["rep"]: r for r in figures(ctx.rows, "stream", "tributary")}
    share = [trib[f["rep"]]["steady_rps"] / f["rps"] for f in floor
             if f["rep"] in trib and f["rps"] > 0]
    if share:
        L += ["", f"tributary's steady stream runs at {spread(share)} of the floor's "
              "events/s (pg_recvlogical, which only receives the changes)."]
    L += ["", "## How it was measured", "",
          "- Time: from the connector's creation (POST /connectors to a running worker) to "
          "the N-th record in its topic (floor_consume --end-offsets, 4 partitions), and "
          "from the first record (a second watcher) to the N-th. The whole time includes "
          "the connector's start (connections, catalog, for Debezium its type registry "
          "and a fresh JVM's warm-up): a small N weighs that more.",
          "- CPU: the worker process's (every thread) over those times; PostgreSQL's WAL "
          "sender, the same work for every system, is not counted. The floor's is "
          "pg_recvlogical's alone.",
          "- Both connectors: pgoutput, an existing slot and publication per system, "
          "JsonConverter with schemas for keys and values, "
          + ", ".join(f"{k}={v}" for k, v in TUNING.items())
          + "; the stream with snapshot.mode=no_data, the snapshot with initial. Connect "
          "runs with the producer settings of bench/README.md's connect-tuned row "
          "(linger.ms=5, batch.size=1000000, 5 in flight, idempotence), "
          f"offset.flush.interval.ms={ctx.flush_ms} for both.",
          "- Floor: pg_recvlogical with pgoutput (proto_version 1) from a slot of its "
          "own to /dev/null until the WAL position after the inserts: PostgreSQL decoding "
          "and sending the changes, nothing done with them.",
          "- Other load: cores kept busy by processes outside the benchmark during the "
          "run (harness.Background): the machine is shared."]
    return "\n".join(L) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--no-snapshot", action="store_true")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help="the systems to run, comma-separated (default: all)")
    p.add_argument("--flush-ms", type=int, default=500)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--libs", required=True)
    p.add_argument("--plugins", required=True, help="Connect's plugin.path, Debezium's too")
    p.add_argument("--kafka-version", default="3.9")
    p.add_argument("--debezium-version", required=True)
    p.add_argument("--broker-pid", type=int, default=0)
    p.add_argument("--tributary", required=True)
    p.add_argument("--src", default=str(Path(__file__).resolve().parents[1]))
    p.add_argument("--src-label", default="")
    p.add_argument("--floor", required=True, help="directory of the floor programs")
    p.add_argument("--work", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--machine-label", default="a loaded 2-core machine")
    for key in ("bin", "host", "port", "user", "db"):
        p.add_argument(f"--pg-{key}", required=True)  # the password: in BENCH_PG_PASSWORD
    args = p.parse_args()
    args.value_size = 0

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    ctx = Context(args)
    ctx.snapshot = not args.no_snapshot
    ctx.work.mkdir(parents=True, exist_ok=True)
    pg = Pg(args)  # tributary's workers read the password from ${env:BENCH_PG_PASSWORD}
    started = time.monotonic()
    try:
        args.pg_version = pg.sql("SHOW server_version")[0]
        # a fresh broker runs its first minute interpreted: warm it up, as bench/run's
        # preload does, so that the first system measured is not the one paying for it
        log(f"warming the broker up with {ctx.n} records")
        harness.run_floor(ctx, [ctx.floor("floor_produce"), "-b", ctx.bootstrap,
                                "-t", f"bench-cdc-warmup-{ctx.run_id}", "-n", ctx.n,
                                "-s", 100, "-T", int(ctx.run_timeout)], "warmup")
        rep_systems = {}
        chosen = [s for s in SYSTEMS if s in args.systems.split(",")]
        if not chosen:
            raise BenchError(f"--systems {args.systems}: none of {', '.join(SYSTEMS)}")
        for system in alternating(ctx, chosen):
            rep_systems.setdefault(ctx.rep, []).append(system)
        for rep, systems in rep_systems.items():
            ctx.rep = rep
            repetition(ctx, pg, systems)
        text = render(ctx, args.machine_label, time.monotonic() - started)
    except BenchError as e:
        log(f"failed: {e}")
        return 1
    finally:
        harness.stop_all()
    harness.publish(Path(args.results), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
