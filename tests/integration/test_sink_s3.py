"""Kafka -> S3 sink against moto's S3 server on loopback (signature checks
on): Confluent's object names and formats, flush.size, multipart uploads,
exactly once across kill -9, the time-based partitioners, and a bucket that
refuses."""
import gzip
import json
import re
import secrets
import signal
import threading
import time

import pytest
from confluent_kafka import Producer

import secret_scan
from kafka_io import IN_ORDER, create_topic
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
    value(p, n); timestamp(p, n) gives the Kafka timestamp (ms). Idempotent,
    and every delivery checked: under load a retried batch neither lands
    twice nor out of order, and none is lost unseen, so that the tests can
    take a record's offset for its number."""
    producer = Producer({"bootstrap.servers": bootstrap, **IN_ORDER, "linger.ms": 50,
                         "queue.buffering.max.messages": 500000})
    failed = []

    def delivered(err, msg):
        if err is not None:
            failed.append(err)
    for n in range(per_partition):
        for p in range(partitions):
            body = value(p, n) if value else json.dumps({"p": p, "n": n}).encode()
            extra = {"timestamp": timestamp(p, n)} if timestamp else {}
            producer.produce(topic, value=body, partition=p, on_delivery=delivered,
                             **extra)
        if n % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    assert failed == [], failed[:3]


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
    page = w.get("/metrics").text
    assert 'tributary_s3_objects_total{connector="s3json",task="0"} 40' in page, page
    assert 'tributary_s3_objects_total{connector="s3bytes",task="0"} 20' in page
    assert re.search(r'tributary_s3_requests_total\{connector="s3json",task="0"\} '
                     r'(4[4-9]|[5-9]\d)\b', page)  # 40 PUTs and a list and head for each
    assert re.search(r'tributary_s3_buffered_bytes\{connector="s3json",task="0"\} \d', page)


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



def put_count(moto, bucket):
    """The objects moto was asked to write so far (PutObject and
    CompleteMultipartUpload), from its request log."""
    text = moto.logs()
    return (text.count(f'"PUT /{bucket}/topics/') +
            len(re.findall(rf'"POST /{bucket}/topics/[^ ]*\?uploadId=', text)))


def test_kill_9_three_times_writes_every_record_once(start_worker, bed, moto, tmp_path):
    """kill -9 while records arrive and objects are being written, three
    times: no duplicate, none missing, no partial object visible. Records are
    produced at a pace, so that offset flushes (every 500 ms) fall while
    groups are open. FieldPartitioner makes groups of three objects (n % 3),
    so a kill can fall between the objects of a group. Then a new connector
    on the same bucket (no stored offset, no group offset) resumes where the
    bucket says, writing nothing again."""
    folder = tmp_path / "killed"
    env = credentials(moto)
    w = start_worker(SETTINGS, env=env, directory=folder)
    topic = bed.unique_topic("s3kill")
    create_topic(bed, topic, 4)
    bucket = moto.bucket("killed-out")
    # the broker's smallest session: a killed worker's partitions move on soon
    config = {"flush.size": "700", "partitioner.class": "FieldPartitioner",
              "partition.field.name": "g",
              "consumer.override.session.timeout.ms": "6000"}
    s3_sink(w, moto, "s3kill", topic, bucket, **config)
    per_partition = 10000
    produced = [0]

    def paced():
        for start in range(0, per_partition, 250):
            produce_many(bed.bootstrap, topic, 4, 250,
                         value=lambda p, n: json.dumps({"p": p, "n": start + n,
                                                        "g": (start + n) % 3}).encode())
            produced[0] = 4 * (start + 250)
            time.sleep(0.4)  # pacing: about 2000 records a second
    producer = threading.Thread(target=paced)
    producer.start()
    try:
        for _ in range(3):
            # the worker writes again, then a few more records arrive: the kill
            # falls while groups are open, after offset flushes
            seen = len(objects(moto, bucket, topic))
            wait_for(lambda: len(objects(moto, bucket, topic)) > seen, timeout=120,
                     interval=0.05, what="an object written")
            mark = produced[0]
            wait_for(lambda: produced[0] >= mark + 2000 or not producer.is_alive(),
                     timeout=60, what="more records")
            w.stop(signal.SIGKILL)
            w = start_worker(SETTINGS, env=env, directory=folder)
    finally:
        producer.join(timeout=120)
    # 14 groups of 700 in each partition; the last 200 records stay in an
    # open group, as in Confluent's
    committed = 14 * 700
    total = 4 * committed
    try:
        wait_for(lambda: count_records(moto, bucket, topic, json_lines) == total,
                 timeout=120, interval=1, what=f"{total} records")
    except AssertionError:
        pass  # the comparison below names what is missing or twice
    records = json_records(moto, bucket, topic)
    assert_exactly_once(records, 4, committed)
    for key, r in records:
        assert f"/g={r['g']}/" in key
    assert moto.multipart_uploads(bucket) == []

    # a connector with no offsets anywhere resumes where the bucket says
    assert w.delete("/connectors/s3kill").status_code == 204
    written = put_count(moto, bucket)
    s3_sink(w, moto, "s3again", topic, bucket, **config)
    for p in range(4):
        wait_for(lambda: f"[connector:s3again:0] partition {topic}-{p} resumes at offset "
                         f"{committed} from the bucket" in w.logs(), timeout=60,
                 what=f"partition {p} resuming from the bucket")
    produce_many(bed.bootstrap, topic, 4, 500,
                 value=lambda p, n: json.dumps({"p": p, "n": per_partition + n,
                                                "g": n % 3}).encode())
    wait_for(lambda: count_records(moto, bucket, topic, json_lines) == total + 2800,
             timeout=120, interval=1, what="the new records")
    assert_exactly_once(json_records(moto, bucket, topic), 4, per_partition + 500)
    # one group of 700 (three objects) for each partition, nothing written again
    assert put_count(moto, bucket) == written + 12


HOUR = 3600000
BASE = 1767225600000  # 2026-01-01T00:00:00Z


def test_time_based_partitioners_write_records_where_their_time_says(start_worker, bed,
                                                                    moto):
    """HourlyPartitioner with the Record extractor: records spanning five
    hours land in their hour's directory, rotated by rotate.interval.ms;
    TimeBasedPartitioner with RecordField and a path.format of its own in
    two-hour directories; DailyPartitioner with Wallclock in today's."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3time")
    create_topic(bed, topic, 2)
    # 100 records in each of five hours, then one at hour 7 that closes the
    # last of them (its own group stays open)
    times = [BASE + h * HOUR + i * 30000 for h in range(5) for i in range(100)]
    times.append(BASE + 7 * HOUR)
    producer = Producer({"bootstrap.servers": bed.bootstrap, **IN_ORDER})
    for n, t in enumerate(times):
        for p in range(2):
            producer.produce(topic, partition=p, timestamp=t,
                             value=json.dumps({"p": p, "n": n, "at": t}).encode())
    assert producer.flush(30) == 0
    hourly, field, daily = (moto.bucket(b) for b in ("hourly-out", "field-out", "daily-out"))
    common = {"flush.size": "100000", "rotate.interval.ms": str(HOUR), "locale": "en-US",
              "timezone": "UTC"}
    s3_sink(w, moto, "s3hourly", topic, hourly, **common, **{
        "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
        "timestamp.extractor": "Record"})
    s3_sink(w, moto, "s3field", topic, field, **common, **{
        "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
        "partition.duration.ms": str(2 * HOUR), "path.format": "'dt'=YYYY-MM-dd/'hh'=HH",
        "timestamp.extractor": "RecordField", "timestamp.field": "at"})
    before = time.gmtime()
    s3_sink(w, moto, "s3daily", topic, daily, **{
        "flush.size": "501", "locale": "en-US", "timezone": "UTC",
        "partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner"})

    wait_for(lambda: count_records(moto, hourly, topic, json_lines) == 1000, timeout=120,
             interval=0.5, what="five hours of records")
    by_dir = {}
    for key, r in json_records(moto, hourly, topic):
        by_dir.setdefault(NAME.match(key)["dir"], []).append((r["p"], r["n"]))
    assert sorted(by_dir) == [f"year=2026/month=01/day=01/hour=0{h}" for h in range(5)]
    for h in range(5):
        assert sorted(by_dir[f"year=2026/month=01/day=01/hour=0{h}"]) == [
            (p, n) for p in range(2) for n in range(h * 100, h * 100 + 100)]

    # RecordField (rotate.interval.ms measures the field's time too), in
    # two-hour directories: two objects in each of the first two
    wait_for(lambda: count_records(moto, field, topic, json_lines) == 1000, timeout=120,
             interval=0.5, what="five hours of records")
    by_dir = {}
    for key, r in json_records(moto, field, topic):
        by_dir.setdefault(NAME.match(key)["dir"], set()).add(r["n"] // 100)
    assert by_dir == {"dt=2026-01-01/hh=00": {0, 1}, "dt=2026-01-01/hh=02": {2, 3},
                      "dt=2026-01-01/hh=04": {4}}
    assert len(objects(moto, field, topic)) == 2 * 5

    wait_for(lambda: count_records(moto, daily, topic, json_lines) == 1002, timeout=120,
             interval=0.5, what="the records of today")
    after = time.gmtime()
    days = {time.strftime("year=%Y/month=%m/day=%d", t) for t in (before, after)}
    assert {NAME.match(key)["dir"] for key in objects(moto, daily, topic)} <= days


def refused(verdicts):
    """A refuse() for RefusingProxy answering object writes (PUT, POST) from
    the verdicts iterator, then forwarding."""
    lock = threading.Lock()

    def refuse(method, path):
        if method not in ("PUT", "POST") or "/topics/" not in path:
            return None
        with lock:
            return next(verdicts, None)
    return refuse


def test_a_bucket_that_refuses_is_retried_and_nothing_is_lost(start_worker, bed, moto):
    """503 SlowDown and connections reset: retried per s3.part.retries and
    s3.retry.backoff.ms; when a request's retries are spent the task waits
    retry.backoff.ms and tries again. Every record lands once; the log names
    the bucket and the key, never a credential (the suite's secret scan reads
    the log)."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3refuse")
    create_topic(bed, topic, 2)
    produce_many(bed.bootstrap, topic, 2, 3000)
    bucket = moto.bucket("refusing-out")
    slow = ("status", 503, "SlowDown")
    # a refusal, a reset, one of each then a success; then five in a row,
    # more than s3.part.retries=2 allows: the task waits and tries again
    verdicts = iter([slow, None, ("reset",), None, slow, ("reset",), None] + [slow] * 5)
    proxy = RefusingProxy(moto.port, refused(verdicts))
    try:
        s3_sink(w, moto, "s3refuse", topic, bucket, url=proxy.url, **{
            "flush.size": "500", "s3.part.retries": "2", "s3.retry.backoff.ms": "10",
            "retry.backoff.ms": "300"})
        wait_for(lambda: count_records(moto, bucket, topic, json_lines) == 6000,
                 timeout=120, interval=0.5, what="6000 records")
        assert_exactly_once(json_records(moto, bucket, topic), 2, 3000)
        outcomes = [what for _, _, what in proxy.seen]
        assert outcomes.count("status") == 7 and outcomes.count("reset") == 2
        log = w.logs()
        assert re.search(r"S3 PutObject of s3://refusing-out/topics/" + topic +
                         r"/partition=\d/" + topic + r"\+\d\+\d{10}\.json failed: "
                         r"HTTP 503 SlowDown: refused by the test proxy", log), log
        assert moto.secret_key not in log
        assert "task failed" not in log  # the runtime retried the put, no restart
    finally:
        proxy.close()


def test_a_bucket_that_denies_access_fails_the_task_naming_it(start_worker, bed, moto):
    """403 AccessDenied is not retried: the task fails with the bucket and the
    key in its trace, no credential; restarted once access is back, it writes
    every record once."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3denied")
    create_topic(bed, topic, 1)
    produce_many(bed.bootstrap, topic, 1, 1000)
    bucket = moto.bucket("denied-out")
    denying = [True]
    proxy = RefusingProxy(moto.port, lambda method, path: (
        ("status", 403, "AccessDenied") if denying[0] and method == "PUT" else None))
    try:
        s3_sink(w, moto, "s3denied", topic, bucket, url=proxy.url, **{"flush.size": "250"})

        def failed():
            tasks = w.get("/connectors/s3denied/status").json()["tasks"]
            return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
        task = wait_for(failed, timeout=60, what="the task to fail")
        assert (f"S3 PutObject of s3://denied-out/topics/{topic}/partition=0/"
                f"{topic}+0+0000000000.json failed: HTTP 403 AccessDenied") in task["trace"]
        assert moto.access_key not in task["trace"]
        assert moto.secret_key not in task["trace"]
        assert objects(moto, bucket, topic) == {}
        denying[0] = False
        assert w.post("/connectors/s3denied/tasks/0/restart").status_code in (200, 202, 204)
        wait_for(lambda: count_records(moto, bucket, topic, json_lines) == 1000,
                 timeout=60, interval=0.5, what="1000 records")
        assert_exactly_once(json_records(moto, bucket, topic), 1, 1000)
    finally:
        proxy.close()


def test_scheduled_rotation_commits_an_idle_partitions_objects(start_worker, bed, moto):
    """rotate.schedule.interval.ms commits open objects at the wall clock's
    boundaries, also when no record comes after them (offset flushes check
    it), where flush.size would never be reached."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3sched")
    create_topic(bed, topic, 2)
    produce_many(bed.bootstrap, topic, 2, 150)
    bucket = moto.bucket("sched-out")
    s3_sink(w, moto, "s3sched", topic, bucket, **{
        "flush.size": "100000", "rotate.schedule.interval.ms": "1000", "timezone": "UTC"})
    wait_for(lambda: count_records(moto, bucket, topic, json_lines) == 300, timeout=60,
             interval=0.5, what="the records rotated by the schedule")
    assert_exactly_once(json_records(moto, bucket, topic), 2, 150)


def avro_envelope(p, n, with_note):
    fields = [{"field": "p", "type": "int32"}, {"field": "n", "type": "int64"},
              {"field": "at", "type": "int64", "optional": False,
               "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
              {"field": "name", "type": "string", "optional": True}]
    payload = {"p": p, "n": n, "at": BASE + n, "name": None if n % 2 else f"o{n}"}
    if with_note:
        fields.append({"field": "note", "type": "string", "optional": True})
        payload["note"] = "v2"
    schema = {"type": "struct", "name": "shop.Order", "optional": False, "fields": fields}
    return json.dumps({"schema": schema, "payload": payload}).encode()


def test_avro_format_writes_object_container_files(start_worker, bed, moto):
    """AvroFormat: each object an Avro object container file (deflate) that
    fastavro reads, the values' Connect schema as an Avro record; a record
    of another schema rotates the objects first."""
    import fastavro
    import io
    w = start_worker({**SETTINGS, "value.converter.schemas.enable": "true"},
                     env=credentials(moto))
    topic = bed.unique_topic("s3avro")
    create_topic(bed, topic, 2)
    produce_many(bed.bootstrap, topic, 2, 1000,
                 value=lambda p, n: avro_envelope(p, n, with_note=n >= 500))
    bucket = moto.bucket("avro-out")
    s3_sink(w, moto, "s3avro", topic, bucket, **{
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "avro.codec": "deflate", "flush.size": "300"})

    def read_all():
        out = {}
        for key in objects(moto, bucket, topic):
            reader = fastavro.reader(io.BytesIO(moto.read(bucket, key)))
            out[key] = (reader.writer_schema, list(reader), reader.metadata)
        return out
    # 300 + 200 (rotated by the new schema) + 300; 200 stay open
    wait_for(lambda: sum(len(r) for _, r, _ in read_all().values()) == 1600,
             timeout=120, interval=0.5, what="1600 records as Avro")
    files = read_all()
    starts = sorted((int(NAME.match(k)["part"]), int(NAME.match(k)["start"]))
                    for k in files)
    assert starts == [(p, s) for p in range(2) for s in (0, 300, 500)]
    seen = []
    for key, (schema, records, metadata) in files.items():
        assert NAME.match(key)["ext"] == "avro"
        assert metadata["avro.codec"] == "deflate"
        assert schema["type"] == "record" and schema["name"] == "shop.Order"
        names = [f["name"] for f in schema["fields"]]
        start = int(NAME.match(key)["start"])
        assert names == ["p", "n", "at", "name"] + (["note"] if start >= 500 else [])
        for r in records:
            seen.append((r["p"], r["n"]))
            assert r["at"].timestamp() * 1000 == BASE + r["n"]
            assert r["name"] == (None if r["n"] % 2 else f"o{r['n']}")
    assert sorted(seen) == [(p, n) for p in range(2) for n in range(800)]


def test_config_is_checked_and_what_is_not_built_refused_by_name(start_worker):
    """Validation names the Parquet codecs and the keys of Confluent's sink
    that tributary does not build; store.url is one of the URLs the worker's
    http.sink.allowed.hosts limits."""
    w = start_worker({"http.sink.allowed.hosts": "localhost"})
    config = {"connector.class": "S3SinkConnector", "topics": "t",
              "s3.bucket.name": "b", "flush.size": "10",
              "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
              "parquet.codec": "lz4", "s3.proxy.url": "http://proxy:3128", "store.url": "http://127.0.0.1:9"}
    reply = w.put("/connector-plugins/S3SinkConnector/config/validate", json=config)
    assert reply.status_code == 200, reply.text
    errors = {c["value"]["name"]: c["value"]["errors"] for c in reply.json()["configs"]
              if c["value"]["errors"]}
    assert "format.class" not in errors, errors
    assert any("parquet.codec lz4 is not built" in e for e in errors["parquet.codec"]), errors
    assert "s3.proxy.url" in errors, errors
    assert any("http.sink.allowed.hosts" in e for e in errors["store.url"]), errors


def test_more_open_objects_than_the_memory_bound_fails_naming_it(start_worker, bed, moto):
    """s3.buffer.max.bytes bounds what a task sets aside for the objects it
    writes at once (s3.part.size each): FieldPartitioner opening a fourth
    directory under a bound of three fails the task with a message naming
    the key, the bucket and the sizes; nothing is written or lost."""
    w = start_worker(SETTINGS, env=credentials(moto))
    topic = bed.unique_topic("s3bound")
    create_topic(bed, topic, 1)
    produce_many(bed.bootstrap, topic, 1, 100,
                 value=lambda p, n: json.dumps({"p": p, "n": n, "g": n % 5}).encode())
    bucket = moto.bucket("bound-out")
    s3_sink(w, moto, "s3bound", topic, bucket, **{
        "flush.size": "1000", "partitioner.class": "FieldPartitioner",
        "partition.field.name": "g", "s3.part.size": "5242880",
        "s3.buffer.max.bytes": str(3 * 5242880)})

    def failed():
        tasks = w.get("/connectors/s3bound/status").json()["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_for(failed, timeout=60, what="the task to fail")
    assert (f"s3://bound-out: writing 4 objects at once would set aside 20971520 bytes, "
            f"over s3.buffer.max.bytes 15728640") in task["trace"], task["trace"]
    assert objects(moto, bucket, topic) == {}
    assert moto.multipart_uploads(bucket) == []


def test_a_web_identity_is_exchanged_with_sts_for_the_key_pair(start_worker, bed, moto,
                                                                tmp_path):
    """With no keys in the connector or the environment, the sink reads
    AWS_WEB_IDENTITY_TOKEN_FILE, exchanges it with STS's
    AssumeRoleWithWebIdentity for AWS_ROLE_ARN (at AWS_ENDPOINT_URL_STS) and
    signs with the temporary key pair and its session token, which moto
    checks against the role. A token file that cannot be read is named (the
    token never is) and the task tries again, as for a bucket it cannot read."""
    role = moto.web_identity_role("s3-sink-role")
    bucket = moto.bucket("wi-out")
    token = tmp_path / "token"
    token.write_text(f"eyJhbGciOiJSUzI1NiJ9.e30.{secrets.token_urlsafe(24)}\n")
    secret_scan.remember(token.read_text().strip())
    env = {"AWS_ACCESS_KEY_ID": "", "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
           "AWS_ROLE_ARN": role,
           "AWS_ROLE_SESSION_NAME": "wi-test", "AWS_ENDPOINT_URL_STS": moto.url}
    w = start_worker(SETTINGS, env=env)
    topic = bed.unique_topic("s3wi")
    create_topic(bed, topic, 2)
    produce_many(bed.bootstrap, topic, 2, 500)
    config = {"connector.class": "io.confluent.connect.s3.S3SinkConnector",
              "topics": topic, "s3.bucket.name": bucket, "s3.region": "us-east-1",
              "store.url": moto.url, "flush.size": "250",
              "format.class": "io.confluent.connect.s3.format.json.JsonFormat"}
    moto.unchecked(1)  # the task's AssumeRoleWithWebIdentity: no other request till then
    reply = w.post("/connectors", json={"name": "s3wi", "config": config})
    assert reply.status_code == 201, reply.text
    committed = re.compile(r'^tributary_s3_objects_total\{connector="s3wi".*\} 4$', re.M)
    wait_for(lambda: committed.search(w.get("/metrics").text), timeout=120,
             what="four objects written with the web identity's key pair")
    assert_exactly_once(json_records(moto, bucket, topic), 2, 500)

    token.unlink()  # a restarted task exchanges the token anew
    reply = w.post("/connectors/s3wi/restart?includeTasks=true")
    assert reply.status_code in (200, 202, 204), reply.text
    # as with any bucket it cannot read yet, the task waits and tries again
    wait_for(lambda: f"the web identity token file {token} (AWS_WEB_IDENTITY_TOKEN_FILE) "
             "cannot be read; trying again with backoff" in w.logs(), timeout=60,
             what="the task to say its token file cannot be read")
