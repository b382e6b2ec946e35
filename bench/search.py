#!/usr/bin/env python3
"""The search sink bench: tributary's Elasticsearch sink against a bare _bulk floor, into
the same OpenSearch node, the same N documents. See bench/README.md.

    bench/search.py --bed DIR [-n N] [--batch B] [--in-flight K] [--label TEXT] [--out FILE]

DIR is a running test bed with OpenSearch (tests/bed/bed.sh start DIR). The topic holds N
schemaless JSON records (null keys, 4 partitions). The floor is this script sending the
same documents, as index actions with the ids the sink gives them
(<topic>+<partition>+<offset>), in bulk requests of B documents, K at once, their bodies
made before the clock starts: what the node takes with no connector at all. The sink
(key.ignore=true, schema.ignore=true, batch.size=B, max.in.flight.requests=K, one task)
runs in a fresh worker. Each writes into a fresh index (the sink's: the topic's name);
documents/s are measured from the first document counted to the N-th (the index's _count
polled every 50 ms), the CPU time (from /proc) of the sender (the worker, or this script)
and of the node per document over the same span. Needs confluent-kafka (the test
venv: tests/bed/venv.sh) to write the records.
"""
import argparse
import json
import os
import shutil
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import BenchError, Tributary, cpu_seconds, log, run_script  # noqa: E402
from jdbc import PARTITIONS, bed_env  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def value_of(i: int) -> dict:
    return {"id": i, "customer": f"c{i % 977}", "amount": i * 0.01, "currency": "EUR",
            "note": "x" * 20}


def preload(bootstrap: str, topic: str, n: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        future.result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value=json.dumps(value_of(i)).encode(),
                                 partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(120) != 0:
        raise BenchError("the records were not all written")


class Node:
    def __init__(self, url: str, pid: int):
        self.url = url
        self.pid = pid

    def call(self, method: str, path: str, body: bytes | None = None,
             ndjson: bool = False) -> tuple[int, dict]:
        headers = {"Content-Type": "application/x-ndjson" if ndjson else "application/json"}
        request = urllib.request.Request(self.url + path, data=body, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                return reply.status, json.loads(reply.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def fresh_index(self, index: str) -> None:
        self.call("DELETE", f"/{index}")
        code, body = self.call("PUT", f"/{index}", b"{}")
        if code != 200:
            raise BenchError(f"creating {index}: {code} {body}")

    def count(self, index: str) -> int:
        code, body = self.call("GET", f"/{index}/_count")
        return body.get("count", 0) if code == 200 else 0


def watch(node: Node, index: str, n: int, pid: int, check, timeout: float) -> dict:
    """Polls the index's count until n; the rate and CPU from the first document on."""
    deadline = time.monotonic() + timeout
    first = count = 0
    while count < n:
        check()
        if time.monotonic() > deadline:
            raise BenchError(f"{count} of {n} documents after {timeout:.0f} s")
        count = node.count(index)
        if first == 0 and count > 0:
            first, first_at = count, time.monotonic()
            cpu_first, node_first = cpu_seconds(pid), cpu_seconds(node.pid)
        time.sleep(0.05)
    seconds = time.monotonic() - first_at
    docs = max(n - first, 1)
    return {"docs_per_s": docs / max(seconds, 1e-3), "seconds": seconds,
            "cpu_us_per_doc": (cpu_seconds(pid) - cpu_first) / docs * 1e6,
            "node_us_per_doc": (cpu_seconds(node.pid) - node_first) / docs * 1e6}


def floor(node: Node, topic: str, n: int, batch: int, in_flight: int) -> dict:
    """The same documents sent by this script, in_flight requests at once (a thread
    each), no connector."""
    index = f"{topic}-floor"
    node.fresh_index(index)
    bodies = []
    for start in range(0, n, batch):
        lines = []
        for i in range(start, min(start + batch, n)):
            doc_id = f"{topic}+{i % PARTITIONS}+{i // PARTITIONS}"
            lines.append(json.dumps({"index": {"_index": index, "_id": doc_id}}))
            lines.append(json.dumps(value_of(i)))
        bodies.append(("\n".join(lines) + "\n").encode())
    failures = []

    def send(mine):
        for body in mine:
            code, reply = node.call("POST", "/_bulk", body, ndjson=True)
            if code != 200 or reply.get("errors"):
                failures.append(f"_bulk answered {code}")
                return

    def check():
        if failures:
            raise BenchError(failures[0])

    senders = [threading.Thread(target=send, args=(bodies[k::in_flight],), daemon=True)
               for k in range(in_flight)]
    for sender in senders:
        sender.start()
    try:
        result = watch(node, index, n, os.getpid(), check, max(180.0, n / 200.0))
    finally:
        for sender in senders:
            sender.join(timeout=120)
    node.call("DELETE", f"/{index}")
    return {"system": "floor (_bulk)", **result}


def sink(ctx, node: Node, topic: str, n: int, batch: int, in_flight: int) -> dict:
    index = topic  # the sink's index: the topic's name (lower case already)
    node.fresh_index(index)
    worker = Tributary(ctx, "search")
    worker.start()
    try:
        worker.wait_ready()
        worker.create(f"bench-search-{int(time.time())}", {
            "connector.class": "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
            "topics": topic, "tasks.max": "1", "connection.url": node.url,
            "key.ignore": "true", "schema.ignore": "true", "batch.size": str(batch),
            "max.in.flight.requests": str(in_flight),
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "consumer.override.max.poll.records": str(batch)})
        result = watch(node, index, n, worker.pid, worker.check_alive, max(180.0, n / 200.0))
    finally:
        worker.stop()
    node.call("DELETE", f"/{index}")
    return {"system": "tributary", **result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bed", required=True, type=Path)
    parser.add_argument("-n", "--records", type=int, default=100000)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--in-flight", type=int, default=5,
                        help="bulk requests on the wire at once, the sink's "
                             "max.in.flight.requests and the floor's threads")
    parser.add_argument("--tributary", default=str(ROOT / "build" / "bench" / "tributary"))
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path, help="also write the table there")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "search-work",
                        help="the worker's directory (emptied first)")
    args = parser.parse_args()
    env = bed_env(args.bed)
    if "BED_OPENSEARCH_URL" not in env:
        raise BenchError(f"the bed in {args.bed} has no OpenSearch node")
    node = Node(env["BED_OPENSEARCH_URL"], int(env["BED_OPENSEARCH_PID"]))
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    ctx = SimpleNamespace(work=args.work, bootstrap=env["BED_BOOTSTRAP"], flush_ms=500,
                          tributary=args.tributary)
    topic = f"bench-search-{int(time.time()) % 1000000}"
    log(f"writing {args.records} records to {topic}")
    preload(env["BED_BOOTSTRAP"], topic, args.records)
    log(f"floor: {args.records} documents in bulk requests of {args.batch}")
    rows = [floor(node, topic, args.records, args.batch, args.in_flight)]
    log(f"tributary: {args.records} documents")
    rows.append(sink(ctx, node, topic, args.records, args.batch, args.in_flight))
    lines = [f"# Search sink into OpenSearch {env.get('BED_OPENSEARCH_VERSION', '')}: "
             f"{args.records} documents, bulk requests of {args.batch}, {args.in_flight} at once"
             + (f" ({args.label})" if args.label else ""), "",
             "documents/s and CPU per document from the first document counted to the "
             "last; the sender's CPU is the worker's, or this script's for the floor.", "",
             "| system | documents/s | sender CPU µs/doc | node CPU µs/doc | s |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['system']} | {r['docs_per_s']:.0f} | {r['cpu_us_per_doc']:.1f} | "
                     f"{r['node_us_per_doc']:.1f} | {r['seconds']:.2f} |")
    ratio = rows[1]["docs_per_s"] / rows[0]["docs_per_s"]
    lines += ["", f"- tributary indexes at {ratio:.2f}x the floor's documents/s"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    run_script(main)  # the workers are stopped on the way out
