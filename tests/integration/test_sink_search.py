"""Kafka -> search sink (ElasticsearchSinkConnector / OpensearchSinkConnector keys)
against the bed's real OpenSearch node: idempotent bulk writes through kill -9,
external versions, tombstones, mapping conflicts through the DLQ, and a node
frozen mid-run."""
import json
import os
import pathlib
import signal
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from confluent_kafka import Consumer

from kafka_io import IN_ORDER, create_topic, produce
from test_rest_security import pki  # noqa: F401 (fixture)
from worker import wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "offset.flush.interval.ms": "1000",
            "task.restart.backoff.initial.ms": "0"}


@pytest.fixture
def search(bed):
    assert bed.opensearch is not None, (
        "the bed has no OpenSearch node: restart it with this checkout's tests/bed/bed.sh")
    return Search(bed.opensearch.url)


class Search:
    def __init__(self, url):
        self.url = url

    def call(self, method, path, body=None, ok=(200, 201)):
        reply = requests.request(method, self.url + path, json=body, timeout=60)
        assert reply.status_code in ok, f"{method} {path}: {reply.status_code} {reply.text}"
        return reply.json() if reply.text else None

    def count(self, index):
        reply = requests.get(f"{self.url}/{index}/_count", timeout=30)
        return reply.json()["count"] if reply.status_code == 200 else 0

    def refreshed_count(self, index):
        requests.post(f"{self.url}/{index}/_refresh", timeout=60)
        return self.count(index)

    def documents(self, index):
        """{id: (source, version)} of every document, read with a scroll ({} while
        the index does not exist)."""
        if self.call("POST", f"/{index}/_refresh", ok=(200, 404)).get("error"):
            return {}
        page = self.call("POST", f"/{index}/_search?scroll=2m",
                         {"size": 10000, "version": True, "query": {"match_all": {}}})
        found = {}
        while page["hits"]["hits"]:
            for hit in page["hits"]["hits"]:
                assert hit["_id"] not in found
                found[hit["_id"]] = (hit["_source"], hit["_version"])
            page = self.call("POST", "/_search/scroll",
                             {"scroll": "2m", "scroll_id": page["_scroll_id"]})
        self.call("DELETE", "/_search/scroll", {"scroll_id": page["_scroll_id"]})
        return found


def sink(w, name, topic, search, **extra):
    config = {"connector.class": "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
              "topics": topic, "connection.url": search.url, "tasks.max": "1",
              "schema.ignore": "true", **extra}
    reply = w.put(f"/connectors/{name}/config", json=config)
    assert reply.status_code in (200, 201), reply.text


def task_state(w, name):
    tasks = w.get(f"/connectors/{name}/status").json().get("tasks") or []
    return tasks[0] if tasks else None


@pytest.mark.parametrize("key_ignore", ["true", "false"])
def test_100k_records_survive_three_kill9(start_worker, bed, search, tmp_path, key_ignore):
    total, partitions = 100_000, 4
    topic = bed.unique_topic("Search100k")  # upper case: the index is lower-cased
    index = topic.lower()
    create_topic(bed, topic, partitions)
    produce(bed.bootstrap, topic,
            [(i % partitions, f"k{i}".encode(), json.dumps({"n": i, "s": f"v{i}"}).encode())
             for i in range(total)])
    folder = tmp_path / "w"
    folder.mkdir()
    w = start_worker(SETTINGS, directory=folder)
    sink(w, "s100k", topic, search, **{"key.ignore": key_ignore, "batch.size": "500"})
    for stage in (1, 2, 3):
        wait_for(lambda: search.count(index) >= stage * total // 5, timeout=240,
                 interval=0.2, what=f"{stage}/5 of the documents before kill -9 #{stage}")
        w.stop(signal.SIGKILL)
        w = start_worker(SETTINGS, directory=folder)
    wait_for(lambda: search.refreshed_count(index) == total, timeout=300, interval=1,
             what="every document")
    assert task_state(w, "s100k")["state"] == "RUNNING"
    docs = search.documents(index)
    assert len(docs) == total
    # offsets per partition: record i is the (i // partitions)-th of partition i % partitions
    for i in range(total):
        doc_id = f"k{i}" if key_ignore == "false" else f"{topic}+{i % partitions}+{i // partitions}"
        source, version = docs[doc_id]
        assert source == {"n": i, "s": f"v{i}"}, doc_id
        if key_ignore == "false":
            assert version == i // partitions  # the offset, as external version
    w.delete("/connectors/s100k")
    search.call("DELETE", f"/{index}")


def test_external_versions_out_of_order_across_a_restart_keep_the_newest(
        start_worker, bed, search, tmp_path):
    topic = bed.unique_topic("searchver")
    index = topic
    create_topic(bed, topic, 1)
    folder = tmp_path / "w"
    folder.mkdir()
    w = start_worker(SETTINGS, directory=folder)
    sink(w, "sver", topic, search, **{"key.ignore": "false",
                                      "external.version.header": "v"})

    def record(key, version):
        return (0, key.encode(), json.dumps({"k": key, "v": version}).encode(),
                [("v", str(version).encode())])
    produce_with_headers(bed.bootstrap, topic, [record("a", 5), record("b", 1),
                                                record("a", 3), record("b", 4)])
    wait_for(lambda: search.refreshed_count(index) == 2, what="two documents")
    w.stop(signal.SIGKILL)
    # after the restart, older versions of a and b arrive, then a newer a
    produce_with_headers(bed.bootstrap, topic, [record("b", 2), record("a", 4),
                                                record("a", 9)])
    w = start_worker(SETTINGS, directory=folder)
    wait_for(lambda: search.documents(index).get("a", ({}, 0))[1] == 9, timeout=120,
             what="the newest version of a")
    docs = search.documents(index)
    assert docs == {"a": ({"k": "a", "v": 9}, 9), "b": ({"k": "b", "v": 4}, 4)}
    assert task_state(w, "sver")["state"] == "RUNNING"


def produce_with_headers(bootstrap, topic, records):
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, **IN_ORDER})
    for partition, key, value, headers in records:
        producer.produce(topic, value=value, key=key, partition=partition, headers=headers)
    assert producer.flush(30) == 0


def test_upsert_merges_fields_and_a_replay_changes_nothing(start_worker, bed, search,
                                                         tmp_path):
    topic = bed.unique_topic("searchups")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, b"u1", b'{"a":1}'), (0, b"u2", b'{"a":2}'),
                                   (0, b"u1", b'{"b":10}'), (0, b"u1", b'{"a":3}')])
    folder = tmp_path / "w"
    folder.mkdir()
    w = start_worker(SETTINGS, directory=folder)
    sink(w, "sups", topic, search, **{"key.ignore": "false", "write.method": "upsert"})
    want = {"u1": {"a": 3, "b": 10}, "u2": {"a": 2}}
    wait_for(lambda: {k: s for k, (s, _) in search.documents(topic).items()} == want,
             what="the merged documents")
    w.stop(signal.SIGKILL)
    # a restart replays what was not committed; the documents stay the newest
    w = start_worker(SETTINGS, directory=folder)
    produce(bed.bootstrap, topic, [(0, b"u2", b'{"c":true}')])
    want["u2"]["c"] = True
    wait_for(lambda: {k: s for k, (s, _) in search.documents(topic).items()} == want,
             timeout=120, what="the merged documents after the restart")


def test_tombstones_delete(start_worker, bed, search):
    topic = bed.unique_topic("searchdel")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, f"d{i}".encode(), f'{{"i":{i}}}'.encode())
                                   for i in range(5)])
    w = start_worker(SETTINGS)
    sink(w, "sdel", topic, search, **{"key.ignore": "false",
                                      "behavior.on.null.values": "delete"})
    wait_for(lambda: search.refreshed_count(topic) == 5, what="five documents")
    produce(bed.bootstrap, topic, [(0, b"d2", None), (0, b"nothere", None)])
    wait_for(lambda: sorted(search.documents(topic)) == ["d0", "d1", "d3", "d4"],
             what="d2 deleted")
    assert task_state(w, "sdel")["state"] == "RUNNING"


def mapping_conflict(bed, search, topic):
    search.call("PUT", f"/{topic}", {"mappings": {"properties": {"n": {"type": "integer"}}}})
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic,
            [(0, f"m{i}".encode(),
              (b'{"n":"not a number"}' if i == 7 else f'{{"n":{i}}}'.encode()))
             for i in range(20)])


def test_mapping_conflict_goes_to_the_dlq_with_context(start_worker, bed, search):
    topic, dlq = bed.unique_topic("searchmap"), bed.unique_topic("dlq")
    mapping_conflict(bed, search, topic)
    w = start_worker(SETTINGS)
    sink(w, "smap", topic, search, **{
        "key.ignore": "false", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})
    wait_for(lambda: search.refreshed_count(topic) == 19, what="the 19 good documents")
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"g-{dlq}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([dlq])

    def one():
        m = consumer.poll(0.5)
        return m if m is not None and not m.error() else None
    message = wait_for(one, timeout=60, what="the record in the DLQ")
    consumer.close()
    assert message.key() == b"m7"
    assert message.value() == b'{"n":"not a number"}'
    headers = {k: v.decode() for k, v in message.headers()}
    assert headers["__connect.errors.topic"] == topic
    assert headers["__connect.errors.offset"] == "7"
    assert headers["__connect.errors.stage"] == "TASK_PUT"
    assert "mapper_parsing_exception" in headers["__connect.errors.exception.message"]
    assert sorted(search.documents(topic)) == sorted(f"m{i}" for i in range(20) if i != 7)
    assert task_state(w, "smap")["state"] == "RUNNING"


def test_mapping_conflict_fails_the_task_without_tolerance(start_worker, bed, search):
    topic = bed.unique_topic("searchmapnone")
    mapping_conflict(bed, search, topic)
    w = start_worker(SETTINGS)
    sink(w, "snone", topic, search, **{"key.ignore": "false"})
    task = wait_for(lambda: (t := task_state(w, "snone")) and t["state"] == "FAILED" and t,
                    timeout=60, what="the task to fail")
    assert f"record {topic}-0 at offset 7 failed in stage TASK_PUT" in task["trace"]
    assert "mapper_parsing_exception" in task["trace"]


def test_invalid_configs_name_the_key(start_worker, search):
    w = start_worker(SETTINGS)
    plugin = "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector"
    config = {"connector.class": plugin, "topics": "t", "connection.url": search.url,
              "write.method": "merge", "key.ignore": "true",
              "behavior.on.null.values": "delete"}
    reply = w.put(f"/connector-plugins/{plugin}/config/validate", json=config)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in reply.json()["configs"]
              if c["value"]["errors"]}
    assert "write.method" in errors and "merge" in errors["write.method"][0]
    assert "key.ignore=false" in errors["behavior.on.null.values"][0]
    # the Elasticsearch connector has no topic.to.index.map; Aiven's has
    aiven = "io.aiven.kafka.connect.opensearch.OpensearchSinkConnector"
    keys = {c["definition"]["name"] for c in w.put(
        f"/connector-plugins/{aiven}/config/validate",
        json={**config, "connector.class": aiven}).json()["configs"]}
    assert "topic.to.index.map" in keys


@pytest.mark.disrupts("opensearch")
def test_node_frozen_20s_loses_nothing(start_worker, bed, search):
    total = 20_000
    records = [(i % 2, f"f{i}".encode(), f'{{"i":{i}}}'.encode()) for i in range(total)]
    topic = bed.unique_topic("searchfreeze")
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic, records[:total // 2])
    w = start_worker(SETTINGS)
    sink(w, "sfreeze", topic, search, **{"key.ignore": "false", "batch.size": "200",
                                         "max.retries": "20", "read.timeout.ms": "2000",
                                         "retry.backoff.ms": "200"})
    wait_for(lambda: search.count(topic) > 0, timeout=120, what="the first documents")
    os.kill(bed.opensearch.pid, signal.SIGSTOP)
    try:
        frozen_until = time.monotonic() + 20
        # the other half arrives while the node is frozen, so that the sink has requests
        # to send then, however fast it took the first half
        produce(bed.bootstrap, topic, records[total // 2:])
        # the task keeps retrying while the node is frozen: it does not fail
        while time.monotonic() < frozen_until:
            state = task_state(w, "sfreeze")
            assert state is None or state["state"] != "FAILED", state
            time.sleep(0.5)
    finally:
        os.kill(bed.opensearch.pid, signal.SIGCONT)
    wait_for(lambda: search.refreshed_count(topic) == total, timeout=300, interval=1,
             what="every document after the node thawed")
    assert "retry 1 of 20" in w.logs()
    assert task_state(w, "sfreeze")["state"] == "RUNNING"


def test_every_connection_url_must_be_on_an_allowed_host(start_worker):
    w = start_worker({"http.sink.allowed.hosts": "localhost"})

    def create(name, urls):
        config = {"connector.class": "ElasticsearchSink", "topics": "t",
                  "connection.url": urls, "key.ignore": "true"}
        return w.post("/connectors", json={"name": name, "config": config})
    assert create("ok", "http://localhost:1,http://localhost:2").status_code == 201
    reply = create("no", "http://localhost:1, http://127.0.0.1:2")
    assert reply.status_code == 400
    assert "http.sink.allowed.hosts" in reply.json()["message"]


def test_schema_makes_the_index_mapping(start_worker, bed, search):
    topic = bed.unique_topic("SearchSchema")
    index = topic.lower()
    create_topic(bed, topic, 1)
    schema = {"type": "struct", "fields": [
        {"field": "n", "type": "int32"},
        {"field": "s", "type": "string"},
        {"field": "at", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"},
        {"field": "day", "type": "int32", "name": "org.apache.kafka.connect.data.Date"},
        {"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
         "parameters": {"scale": "2"}}]}
    # 12345 unscaled (0x3039, base64 "MDk="): 123.45
    payload = {"n": 1, "s": "one", "at": 1700000000000, "day": 19000, "price": "MDk="}
    produce(bed.bootstrap, topic,
            [(0, b"k1", json.dumps({"schema": schema, "payload": payload}).encode())])
    w = start_worker(SETTINGS)
    sink(w, "sschema", topic, search, **{"key.ignore": "false", "schema.ignore": "false",
                                         "value.converter": SETTINGS["value.converter"],
                                         "value.converter.schemas.enable": "true"})
    wait_for(lambda: search.refreshed_count(index) == 1, what="the document")
    mapping = search.call("GET", f"/{index}/_mapping")[index]["mappings"]["properties"]
    assert {field: m["type"] for field, m in mapping.items()} == {
        "n": "integer", "s": "text", "at": "date", "day": "date", "price": "double"}
    assert mapping["s"]["fields"]["keyword"]["type"] == "keyword"
    source, version = search.documents(index)["k1"]
    assert source == {"n": 1, "s": "one", "at": 1700000000000, "day": 19000 * 86400000,
                      "price": 123.45}
    assert version == 0


def test_the_example_connector_runs(start_worker, bed, search):
    examples = pathlib.Path(__file__).resolve().parents[2] / "examples"
    topic = bed.unique_topic("example-orders-json")
    datagen = json.loads((examples / "datagen-orders-json.json").read_text())
    example = json.loads((examples / "search" / "orders.json").read_text())
    w = start_worker(SETTINGS)
    for name, config in ((datagen["name"], {**datagen["config"], "topic": topic}),
                         (example["name"], {**example["config"], "topics": topic,
                                            "connection.url": search.url})):
        reply = w.put(f"/connectors/{name}/config", json=config)
        assert reply.status_code == 201, reply.text
    index = topic.lower()
    wait_for(lambda: search.refreshed_count(index) >= 3, what="the orders indexed")
    mapping = search.call("GET", f"/{index}/_mapping")[index]["mappings"]["properties"]
    assert mapping["customer"]["type"] == "text"
    assert mapping["order_id"]["type"] == "long"


class BulkFront:
    """A loopback HTTP server in front of the search node: index requests
    pass through; a _bulk request is counted while it is open, and passed on
    after delay seconds, or never answered when forward is false (a node whose
    writes hang)."""

    def __init__(self, upstream, forward=True, delay=0.0, tls=None):
        self.lock = threading.Lock()
        self.open = self.most = self.bulks = 0
        self.release = threading.Event()  # ends every held request at close
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _relay(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                bulk = "/_bulk" in self.path
                if bulk:
                    with front.lock:
                        front.open += 1
                        front.bulks += 1
                        front.most = max(front.most, front.open)
                    if not forward:
                        front.release.wait(120)
                        self.close_connection = True
                        return
                    front.release.wait(delay)
                try:
                    reply = requests.request(
                        self.command, upstream + self.path, data=body, timeout=60,
                        headers={"Content-Type": self.headers.get("Content-Type",
                                                                  "application/json")})
                finally:
                    if bulk:
                        with front.lock:
                            front.open -= 1
                self.send_response(reply.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.content)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _relay

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        scheme = "http"
        if tls is not None:  # (certificate, key, CA of the clients)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls[0], tls[1])
            context.load_verify_locations(tls[2])
            context.verify_mode = ssl.CERT_REQUIRED
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("in_flight", [1, 4])
def test_bulk_requests_in_flight_at_once_are_bounded(start_worker, bed, search, in_flight):
    total = 3000
    topic = bed.unique_topic(f"searchinflight{in_flight}")
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic, [(i % 2, f"f{i}".encode(), f'{{"i":{i}}}'.encode())
                                   for i in range(total)])
    front = BulkFront(search.url, delay=0.2)
    try:
        w = start_worker(SETTINGS)
        sink(w, f"sinflight{in_flight}", topic, Search(front.url),
             **{"key.ignore": "false", "batch.size": "50",
                "max.in.flight.requests": str(in_flight)})
        wait_for(lambda: search.refreshed_count(topic) == total, timeout=180, interval=1,
                 what="every document through the counting front")
        assert front.bulks >= total // 50
        # the task had as many requests open as it may, never more
        assert front.most == in_flight, (front.most, in_flight)
        assert task_state(w, f"sinflight{in_flight}")["state"] == "RUNNING"
    finally:
        front.close()
    search.call("DELETE", f"/{topic}")


def test_a_bulk_request_without_answer_holds_no_pool_thread(start_worker, bed, search,
                                                             tmp_path):
    # two search tasks whose bulk requests are never answered, two pool
    # threads: a put that waited for its answer (read.timeout.ms: a minute)
    # would leave no thread to the file sink beside them
    front = BulkFront(search.url, forward=False)
    try:
        w = start_worker({**SETTINGS, "task.threads": "2"})
        for name in ("shang1", "shang2"):
            topic = bed.unique_topic(name)
            create_topic(bed, topic, 1)
            produce(bed.bootstrap, topic, [(0, f"k{i}".encode(), f'{{"i":{i}}}'.encode())
                                           for i in range(3000)])
            sink(w, name, topic, Search(front.url),
                 **{"key.ignore": "false", "batch.size": "100",
                    "read.timeout.ms": "60000", "flush.timeout.ms": "600000",
                    "max.buffered.records": "1000"})
        wait_for(lambda: front.open >= 2 * 5, timeout=60,
                 what="both search tasks with max.in.flight.requests bulks open")

        topic = bed.unique_topic("fileside")
        create_topic(bed, topic, 1)
        out = tmp_path / "side.txt"
        reply = w.put("/connectors/fileside/config",
                      json={"connector.class": "FileStreamSink", "topics": topic,
                            "file": str(out), "value.converter":
                                "org.apache.kafka.connect.storage.StringConverter"})
        assert reply.status_code in (200, 201), reply.text
        for batch in range(3):
            produce(bed.bootstrap, topic, [(0, None, f"line{batch}".encode())])
            wait_for(lambda: out.exists() and f"line{batch}" in out.read_text(),
                     timeout=30, what=f"the file sink's record {batch}")
        for name in ("shang1", "shang2"):
            assert task_state(w, name)["state"] == "RUNNING"
        assert w.get("/health").status_code == 200
    finally:
        front.close()


def test_tls_with_pem_stores(start_worker, bed, search, pki, tmp_path):  # noqa: F811
    # OpenSearch's security plugin is not in the bed: a TLS front on loopback
    # (a CA made now, client certificates required) stands before the node
    front = BulkFront(search.url, tls=(pki["server.pem"], pki["server.key"], pki["ca.pem"]))
    keystore = tmp_path / "client-store.pem"
    keystore.write_text(pathlib.Path(pki["client.pem"]).read_text() +
                        pathlib.Path(pki["client.key"]).read_text())
    rogue = tmp_path / "rogue-store.pem"
    rogue.write_text(pathlib.Path(pki["rogue.pem"]).read_text() +
                     pathlib.Path(pki["rogue.key"]).read_text())
    tls = {"elastic.security.protocol": "SSL", "key.ignore": "true",
           "elastic.https.ssl.truststore.location": pki["ca.pem"],
           "elastic.https.ssl.truststore.type": "PEM",
           "elastic.https.ssl.keystore.type": "PEM", "max.retries": "0"}
    try:
        w = start_worker(SETTINGS)
        topic = bed.unique_topic("searchtls")
        create_topic(bed, topic, 1)
        produce(bed.bootstrap, topic, [(0, None, f'{{"i":{i}}}'.encode())
                                       for i in range(100)])
        sink(w, "stls", topic, Search(front.url),
             **{**tls, "elastic.https.ssl.keystore.location": str(keystore)})
        wait_for(lambda: search.refreshed_count(topic) == 100, timeout=60,
                 what="the documents written over TLS")
        assert front.bulks >= 1
        # a client certificate of another CA is refused by the front: the
        # task fails, saying it could not reach the node
        other = bed.unique_topic("searchtlsrogue")
        create_topic(bed, other, 1)
        produce(bed.bootstrap, other, [(0, None, b'{"i":1}')])
        sink(w, "stlsrogue", other, Search(front.url),
             **{**tls, "elastic.https.ssl.keystore.location": str(rogue)})
        state = wait_for(lambda: (task_state(w, "stlsrogue") or {}).get("state") == "FAILED"
                         and task_state(w, "stlsrogue"), timeout=60,
                         what="the task with the rogue certificate failing")
        assert f"cannot reach {front.url}" in state["trace"], state
        # and a trust store without the front's CA refuses the front
        sink(w, "stlsca", other, Search(front.url),
             **{**tls, "elastic.https.ssl.truststore.location": pki["rogue-ca.pem"],
                "elastic.https.ssl.keystore.location": str(keystore)})
        state = wait_for(lambda: (task_state(w, "stlsca") or {}).get("state") == "FAILED"
                         and task_state(w, "stlsca"), timeout=60,
                         what="the task that does not trust the front failing")
        assert f"cannot reach {front.url}" in state["trace"], state
        assert search.count(other.lower()) == 0
    finally:
        front.close()
    search.call("DELETE", f"/{topic}")
