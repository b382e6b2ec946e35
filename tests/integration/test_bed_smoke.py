"""Smoke tests of the test bed itself: each Kafka listener and SCRAM mechanism carries a
record, bad credentials are refused, and Kafka's own tools see what clients did."""

from __future__ import annotations

import dataclasses
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer

import secret_scan

pytestmark = pytest.mark.integration

DEADLINE_S = 30  # bound on every wait below; a healthy bed answers in well under a second


def produce_one(conf: dict, topic: str, key: bytes, value: bytes) -> None:
    delivered = []
    producer = Producer({**conf, "message.timeout.ms": DEADLINE_S * 1000})
    producer.produce(
        topic, key=key, value=value, on_delivery=lambda err, msg: delivered.append(err)
    )
    assert producer.flush(DEADLINE_S + 5) == 0, "record not delivered in time"
    assert delivered == [None], f"delivery failed: {delivered}"


def consume_one(conf: dict, topic: str, group: str):
    """First record of `topic` for a new group; its offset is committed before returning."""
    consumer = Consumer(
        {
            **conf,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, f"consumer error: {msg.error()}"
            consumer.commit(message=msg, asynchronous=False)
            return msg
        pytest.fail(f"no record from {topic} within {DEADLINE_S}s")
    finally:
        consumer.close()


def roundtrip(conf: dict, topic: str) -> None:
    key, value = b"k-" + topic.encode(), b"v-" + topic.encode()
    produce_one(conf, topic, key, value)
    msg = consume_one(conf, topic, f"{topic}-group")
    assert msg.topic() == topic
    assert msg.key() == key
    assert msg.value() == value


def test_plaintext_roundtrip(bed):
    roundtrip(bed.client_config(), bed.unique_topic("smoke-plain"))


def test_second_cluster_is_another_cluster(bed):
    # A topic made on the second cluster is not seen by the first: two clusters, not two
    # listeners of one.
    topic = bed.unique_topic("smoke-kafka2")
    roundtrip({"bootstrap.servers": bed.kafka2_bootstrap}, topic)
    assert bed.kafka2_cluster_id != bed.cluster_id
    listed = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    assert topic not in listed.stdout.split()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_ssl_roundtrip(bed, mechanism):
    # Host name verification stays on (librdkafka's default): the certificate's SAN must
    # cover the advertised 127.0.0.1.
    conf = {**bed.client_config(mechanism), "ssl.endpoint.identification.algorithm": "https"}
    roundtrip(conf, bed.unique_topic("smoke-" + mechanism.lower()))


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_scram_password_is_refused(bed, mechanism):
    errors = []
    conf = {
        **bed.client_config(mechanism),
        "sasl.password": secret_scan.new_secret("wrong"),
        "error_cb": errors.append,
    }
    producer = Producer(conf)
    producer.produce(bed.unique_topic("smoke-badauth"), value=b"x")
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and not any(
        e.code() == KafkaError._AUTHENTICATION for e in errors
    ):
        producer.poll(0.2)
    auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert auth, f"no authentication error within {DEADLINE_S}s; errors seen: {errors}"
    assert "authentication" in auth[0].str().lower()
    producer.purge()  # drop the undeliverable record instead of waiting for its timeout


def test_consumer_groups_tool_sees_committed_group(bed):
    topic = bed.unique_topic("smoke-groups")
    group = f"{topic}-group"
    conf = bed.client_config()
    produce_one(conf, topic, b"k", b"v")
    consume_one(conf, topic, group)  # commits offset 1

    listed = bed.consumer_groups("--list")
    assert listed.returncode == 0, listed.stderr
    assert group in listed.stdout.split()

    described = bed.consumer_groups("--describe", "--group", group)
    assert described.returncode == 0, described.stderr
    # Row: GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
    rows = [line.split() for line in described.stdout.splitlines()]
    row = next((r for r in rows if len(r) >= 6 and r[0] == group and r[1] == topic), None)
    assert row is not None, described.stdout
    assert row[2:5] == ["0", "1", "1"], described.stdout


def test_postgres_serves_the_bed_user(bed):
    pg = bed.pg
    assert pg.sql("SHOW wal_level") == [["logical"]]
    assert pg.sql("SELECT current_user, rolreplication, rolcreatedb, rolsuper FROM pg_roles"
                  " WHERE rolname = current_user") == [[pg.user, "t", "t", "f"]]
    db = pg.fresh_database("smoke")
    pg.sql("CREATE TABLE t (id int PRIMARY KEY, note text); INSERT INTO t VALUES (1, NULL)", db=db)
    assert pg.sql("SELECT id, note FROM t", db=db) == [["1", None]]
    # a logical slot with pgoutput, as the CDC source makes one
    slot = f"smoke_{db[-8:]}"
    pg.sql(f"SELECT pg_create_logical_replication_slot('{slot}', 'pgoutput')", db=db)
    pg.sql(f"SELECT pg_drop_replication_slot('{slot}')", db=db)


def test_postgres_refuses_a_wrong_password(bed):
    wrong = dataclasses.replace(bed.pg, password="not-" + bed.pg.password)
    with pytest.raises(RuntimeError, match="password authentication failed"):
        wrong.sql("SELECT 1")


def test_opensearch_indexes_and_finds_a_document(bed):
    """The bed's OpenSearch node is the version it names, has the HTTP module and
    analysis-common (a custom analyzer with asciifolding), and serves _bulk."""
    import json
    import urllib.request
    import uuid

    assert bed.opensearch is not None, "this bed has no OpenSearch node: restart it with bed.sh"
    url = bed.opensearch.url

    def call(method, path, body=None, ctype="application/json"):
        req = urllib.request.Request(url + path, data=body, method=method,
                                     headers={"Content-Type": ctype})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)

    assert call("GET", "/")["version"]["number"] == bed.opensearch.version
    index = f"smoke-{uuid.uuid4().hex}"
    settings = {"settings": {"analysis": {"analyzer": {"folded": {
        "type": "custom", "tokenizer": "standard", "filter": ["lowercase", "asciifolding"]}}}},
        "mappings": {"properties": {"t": {"type": "text", "analyzer": "folded"}}}}
    call("PUT", f"/{index}", json.dumps(settings).encode())
    bulk = (json.dumps({"index": {"_index": index, "_id": "1"}}) + "\n"
            + json.dumps({"t": "Ærøskøbing Café"}) + "\n").encode()
    assert not call("POST", "/_bulk?refresh=true", bulk, "application/x-ndjson")["errors"]
    found = call("POST", f"/{index}/_search",
                 json.dumps({"query": {"match": {"t": "cafe"}}}).encode())
    assert [h["_id"] for h in found["hits"]["hits"]] == ["1"]
    call("DELETE", f"/{index}")
