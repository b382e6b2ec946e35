"""Kafka -> S3 sink against moto's S3 server on loopback (signature checks
on): Confluent's object names and formats, flush.size, multipart uploads,
exactly once across kill -9, the time-based partitioners, and a bucket that
refuses."""
import gzip
import json
import re
import signal

import pytest
from confluent_kafka import Producer

from kafka_io import create_topic
from s3_server import MotoS3, RefusingProxy
from worker import wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"offset.flush.interval.ms": "500",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"}

NAME = re.compile(r"^topics/(?P<topic>[^/]+)/(?P<dir>.+)/(?P=topic)\+(?P<part>\d+)\+"
                  r"(?P<start>\d{10})\.(?P<ext>[a-z.]+)$")


@pytest.fixture
def moto(tmp_path):
    server = MotoS3(str(tmp_path))
    yield server
    server.close()


def produce_many(bootstrap, topic, partitions, per_partition, value=None, timestamp=None):
    """per_partition records to each partition: {"p": p, "n": n} as JSON, or
    value(p, n); timestamp(p, n) gives the Kafka timestamp (ms)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50,
                         "queue.buffering.max.messages": 500000})
    for n in range(per_partition):
        for p in range(partitions):
            body = value(p, n) if value else json.dumps({"p": p, "n": n}).encode()
            extra = {"timestamp": timestamp(p, n)} if timestamp else {}
            producer.produce(topic, value=body, partition=p, **extra)
        if n % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def s3_sink(w, moto, name, topic, bucket, url=None, **extra):
    config = {"connector.class": "io.confluent.connect.s3.S3SinkConnector",
              "topics": topic, "s3.bucket.name": bucket, "s3.region": "us-east-1",
              "store.url": url or moto.url,
              "aws.access.key.id": "${env:TEST_S3_ACCESS_KEY}",
              "aws.secret.access.key": "${env:TEST_S3_SECRET_KEY}",
              "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
              "s3.retry.backoff.ms": "20", "retry.backoff.ms": "200", **extra}
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def credentials(moto):
    return {"TEST_S3_ACCESS_KEY": moto.access_key, "TEST_S3_SECRET_KEY": moto.secret_key}


def objects(moto, bucket, topic):
    """{key: match} of every object of topic, each name as Confluent's."""
    found = {}
    for key in moto.keys(bucket, f"topics/{topic}/"):
        m = NAME.match(key)
        assert m, f"unexpected object name {key}"
        found[key] = m
    return found


def json_records(moto, bucket, topic):
    """[(key, record)] of every JSON object of topic."""
    out = []
    for key in sorted(objects(moto, bucket, topic)):
        out.extend((key, json.loads(line))
                   for line in moto.read(bucket, key).decode().splitlines())
    return out


def count_records(moto, bucket, topic, reader):
    try:
        return sum(len(reader(moto.read(bucket, k))) for k in objects(moto, bucket, topic))
    except Exception:  # an object listed but being replaced
        return -1


def json_lines(body):
    return body.decode().splitlines()


def assert_exactly_once(records, partitions, per_partition):
    seen = [(r["p"], r["n"]) for _, r in records]
    assert len(seen) == len(set(seen)), "a record was written twice"
    assert sorted(seen) == [(p, n) for p in range(partitions) for n in range(per_partition)]


def test_200000_records_as_json_and_bytes(start_worker, bed, moto):
    """Every record in exactly one object, named as Confluent names them,
    flush.size records each, in offset order; ByteArrayFormat with gzip and
    a separator of its own reads back the Kafka bytes (a separator is
    trimmed, as Connect trims every string value)."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3many")
    create_topic(bed, topic, 4)
    produce_many(bed.bootstrap, topic, 4, 50000)
    json_bucket, bytes_bucket = moto.bucket("json-out"), moto.bucket("bytes-out")
    s3_sink(w, moto, "s3json", topic, json_bucket, **{"flush.size": "5000"})
    s3_sink(w, moto, "s3bytes", topic, bytes_bucket, **{
        "flush.size": "10000",
        "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "format.bytearray.separator": "||", "s3.compression.type": "gzip"})

    wait_for(lambda: count_records(moto, json_bucket, topic, json_lines) == 200000,
             timeout=300, interval=1, what="200000 records as JSON")
    records = json_records(moto, json_bucket, topic)
    assert_exactly_once(records, 4, 50000)
    names = objects(moto, json_bucket, topic)
    assert len(names) == 40
    for key, m in names.items():
        p, start = int(m["part"]), int(m["start"])
        assert m["dir"] == f"partition={p}" and m["ext"] == "json"
        body = [json.loads(line) for line in moto.read(json_bucket, key).splitlines()]
        # offsets are the record numbers: each object holds flush.size records
        # from its start offset, in order
        assert body == [{"p": p, "n": n} for n in range(start, start + 5000)]

    def gunzip_lines(body):
        text = gzip.decompress(body).decode()
        assert text.endswith("||")
        return text[:-2].split("||")
    wait_for(lambda: count_records(moto, bytes_bucket, topic, gunzip_lines) == 200000,
             timeout=300, interval=1, what="200000 records as bytes")
    names = objects(moto, bytes_bucket, topic)
    assert len(names) == 20
    seen = set()
    for key, m in names.items():
        assert m["ext"] == "bin.gz"
        for line in gunzip_lines(moto.read(bytes_bucket, key)):
            seen.add((json.loads(line)["p"], json.loads(line)["n"]))
    assert len(seen) == 200000
    assert moto.multipart_uploads(json_bucket) == []


def test_a_large_object_is_a_multipart_upload(start_worker, bed, moto):
    """An object larger than s3.part.size goes up in parts, and is visible
    only once complete; one smaller is a single PutObject."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3big")
    create_topic(bed, topic, 1)
    filler = "x" * 200000
    produce_many(bed.bootstrap, topic, 1, 62,
                 value=lambda p, n: json.dumps({"p": p, "n": n, "f": filler}).encode())
    bucket = moto.bucket("big-out")
    s3_sink(w, moto, "s3big", topic, bucket, **{"flush.size": "60",
                                                "s3.part.size": "5242880"})
    wait_for(lambda: objects(moto, bucket, topic), timeout=120, interval=0.5,
             what="the large object")
    key = f"topics/{topic}/partition=0/{topic}+0+0000000000.json"
    assert list(objects(moto, bucket, topic)) == [key]
    head = moto.s3.head_object(Bucket=bucket, Key=key)
    assert head["ETag"].endswith('-3"'), head["ETag"]  # 5 MiB + 5 MiB + the rest
    lines = moto.read(bucket, key).decode().splitlines()
    assert [json.loads(line)["n"] for line in lines] == list(range(60))
    assert head["Metadata"] == {"tributary-group-start": "0"}

