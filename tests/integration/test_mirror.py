"""MirrorMaker 2's MirrorSourceConnector on the bed's two clusters: the second cluster
(bed.kafka2_bootstrap) is the source, the worker's own cluster the target. The remote
topics hold exactly the source's records, partition by partition: keys, values, headers
and timestamps, committed transactions only; topics and partitions made while the
connector runs are found; with exactly once, kill -9 of the worker repeats nothing."""
import json
import signal
import struct
import time
import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

from kafka_io import produce
from test_observability import promtool_check
from worker import wait_for

pytestmark = pytest.mark.integration

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
MIRROR = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
EOS = {"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "100",
       "task.restart.backoff.initial.ms": "0", "offset.storage.replication.factor": "1"}


def mirror_config(bed, prefix, alias, **extra):
    return {"connector.class": MIRROR, "source.cluster.alias": alias,
            "target.cluster.alias": "tgt",
            "source.cluster.bootstrap.servers": bed.kafka2_bootstrap,
            "target.cluster.bootstrap.servers": bed.bootstrap,
            "topics": f"{prefix}.*", "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "refresh.topics.interval.seconds": "1",
            "key.converter": BYTES, "value.converter": BYTES, **extra}


def make_topic(bootstrap, topic, partitions, config=None):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})])[topic].result(30)


def read_all(bootstrap, topic, by_offset=False):
    """{partition: [(key, value, headers, timestamp)]}: every committed record of topic
    up to the ends its partitions had when the call began; with by_offset, each partition's
    records in a dict by their offsets."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rd-{uuid.uuid4().hex}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
    tps = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions]
    consumer.assign(tps)
    ends = {tp.partition: consumer.get_watermark_offsets(tp, timeout=30)[1] for tp in tps}
    records = {p: [] for p in partitions}

    def at_end():
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            record = (message.key(), message.value(), message.headers() or [],
                      message.timestamp()[1])
            records[message.partition()].append((message.offset(), record) if by_offset
                                                else record)
        positions = consumer.position([TopicPartition(topic, p) for p in ends])
        return all(ends[p.partition] == 0 or p.offset >= ends[p.partition] for p in positions)
    try:
        wait_for(at_end, timeout=60, interval=0, what=f"the end of {topic}")
    finally:
        consumer.close()
    return {p: dict(r) for p, r in records.items()} if by_offset else records


def assert_same(source, target, topic):
    for partition in source:
        got, want = target.get(partition, []), source[partition]
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"{topic} [{partition}] record {i}: {g!r} != {w!r}"
        assert len(got) == len(want), f"{topic} [{partition}]: {len(got)} != {len(want)}"
    assert len(target) == len(source), f"{topic}: partitions {len(target)} != {len(source)}"


def count_all(bootstrap, topic):
    try:
        return sum(len(r) for r in read_all(bootstrap, topic).values())
    except KeyError:
        return 0  # not there yet


def wait_mirrored(bed, topic, remote):
    """Waits until remote holds as many records as topic, then returns both."""
    source = read_all(bed.kafka2_bootstrap, topic)
    total = sum(len(r) for r in source.values())
    wait_for(lambda: count_all(bed.bootstrap, remote) >= total, timeout=90,
             interval=0.5, what=f"{total} records in {remote}")
    return source, read_all(bed.bootstrap, remote)


def some_records(n, partitions, tag, headers=False, age_s=3600):
    """Records with timestamps of the last hour (older ones the broker's retention would
    delete at once)."""
    base_ts = int(time.time() * 1000) - age_s * 1000
    out = []
    for i in range(n):
        key = None if i % 7 == 3 else f"{tag}-k{i % 5}".encode()
        value = None if i % 11 == 5 else bytes([i % 256, 0, 255]) + f"{tag}-{i}".encode()
        hdrs = [("h1", f"v{i}".encode()), ("h1", b""), ("bin", bytes([0, 1, i % 256]))] \
            if headers and i % 2 == 0 else None
        out.append((i % partitions, key, value, hdrs, base_ts + i * 1000))
    return out


def test_mirror_copies_four_topics_exactly(start_worker, bed):
    prefix = f"mm{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    compacted, txn, headed, later = (f"{prefix}-compacted", f"{prefix}-txn",
                                     f"{prefix}-headers", f"{prefix}-later")
    src = bed.kafka2_bootstrap
    make_topic(src, compacted, 2, {"cleanup.policy": "compact", "retention.ms": "12345678"})
    make_topic(src, txn, 3)
    make_topic(src, headed, 2)
    produce(src, compacted, [r for r in some_records(60, 2, "c") if r[1] is not None])
    produce(src, txn, some_records(40, 3, "t1"), transactional_id=f"tx-{prefix}")
    produce(src, txn, some_records(30, 3, "aborted"), transactional_id=f"tx-{prefix}",
            abort=True)
    produce(src, txn, some_records(20, 3, "t2"), transactional_id=f"tx-{prefix}")
    produce(src, headed, some_records(50, 2, "h", headers=True))

    w = start_worker()
    name = f"mirror-{prefix}"
    assert w.post("/connectors", json={"name": name,
                                       "config": mirror_config(bed, prefix, alias)}
                  ).status_code == 201
    for topic in (compacted, txn, headed):
        source, target = wait_mirrored(bed, topic, f"{alias}.{topic}")
        assert_same(source, target, topic)
    # the last one, headed, was produced with headers: they are there to compare
    assert any(headers for records in source.values() for _, _, headers, _ in records)
    assert not any(b"aborted" in (v or b"") for r in target.values() for _, v, _, _ in r)

    # the remote topic got the source topic's configs
    admin = AdminClient({"bootstrap.servers": bed.bootstrap})
    resource = ConfigResource("topic", f"{alias}.{compacted}")
    configs = admin.describe_configs([resource])[resource].result(30)
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].value == "12345678"

    # a topic made while running, and partitions added to another
    make_topic(src, later, 3)
    produce(src, later, some_records(30, 3, "l", headers=True))
    source_admin = AdminClient({"bootstrap.servers": src})
    source_admin.create_partitions([NewPartitions(headed, 4)])[headed].result(30)
    produce(src, headed, some_records(40, 4, "h2", headers=True, age_s=1800))
    for topic in (later, headed):
        source, target = wait_mirrored(bed, topic, f"{alias}.{topic}")
        assert len(source) == len(target)
        assert_same(source, target, topic)
    status = w.get(f"/connectors/{name}/status").json()
    assert status["tasks"][0]["state"] == "RUNNING", status

    # MM2's source offsets: {"cluster","partition","topic"} -> {"offset"}
    offsets = w.get(f"/connectors/{name}/offsets").json()["offsets"]
    by_partition = {(o["partition"]["topic"], o["partition"]["partition"]): o for o in offsets}
    entry = by_partition[(headed, 0)]
    assert entry["partition"] == {"cluster": alias, "partition": 0, "topic": headed}
    assert set(entry["offset"]) == {"offset"}


def test_mirror_exactly_once_across_kill(start_worker, bed, tmp_path):
    prefix = f"mme{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 3)
    offsets_topic = bed.unique_topic("mm-offsets")
    settings = {**EOS, "offset.storage.topic": offsets_topic}
    folder = tmp_path / "w"
    folder.mkdir()
    w = start_worker(settings, directory=folder)
    name = f"mirror-{prefix}"
    config = mirror_config(bed, prefix, alias, **{"exactly.once.support": "required"})
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    remote = f"{alias}.{topic}"
    produced = 0
    for round_ in range(3):
        batch = [(i % 3, f"k{produced + i}".encode(), f"v{produced + i}".encode(), None,
                  int(time.time() * 1000) - 3_600_000 + i) for i in range(3000)]
        produce(src, topic, batch)
        produced += len(batch)
        wait_for(lambda: count_all(bed.bootstrap, remote) > produced - 2000, timeout=90,
                 interval=0.2, what=f"round {round_} under way")
        w.stop(signal.SIGKILL)
        w = start_worker(settings, directory=folder)
    source, target = wait_mirrored(bed, topic, remote)
    assert target == source
    values = [v for r in target.values() for _, v, _, _ in r]
    assert len(values) == len(set(values)) == produced
    # offset syncs follow the commits: each maps a source record to that record among
    # the target's committed ones (never to one of a transaction the kills aborted), up to
    # the last record of each partition
    source = read_all(src, topic, by_offset=True)
    target = read_all(bed.bootstrap, remote, by_offset=True)
    syncs_topic = "mm2-offset-syncs.tgt.internal"
    last = {p: max(source[p]) for p in source}
    wait_for(lambda: {p: s[-1][0] for p, s in
                      read_offset_syncs(src, syncs_topic, topic).items()} == last,
             timeout=60, interval=0.5, what="offset syncs up to the last records")
    for partition, pairs in read_offset_syncs(src, syncs_topic, topic).items():
        for upstream, downstream in pairs:
            assert target[partition].get(downstream) == source[partition][upstream], \
                (partition, upstream, downstream)


def test_mirror_refuses_acl_sync_and_names_its_keys(worker):
    body = {"name": f"mm-validate-{uuid.uuid4().hex[:8]}", "connector.class": MIRROR,
            "source.cluster.bootstrap.servers": "127.0.0.1:1",
            "target.cluster.bootstrap.servers": "127.0.0.1:1",
            "sync.topic.acls.enabled": "true",
            "replication.policy.class": "com.example.MyPolicy"}
    r = worker.put("/connector-plugins/MirrorSourceConnector/config/validate", json=body)
    assert r.status_code == 200, r.text
    errors = {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"]
              if c["value"]["errors"]}
    assert "tributary does not copy topic ACLs" in " ".join(errors["sync.topic.acls.enabled"])
    assert "custom ReplicationPolicy" in " ".join(errors["replication.policy.class"])
    # MM2's default is true: a config that leaves it out is accepted
    del body["sync.topic.acls.enabled"]
    body["replication.policy.class"] = "IdentityReplicationPolicy"
    r = worker.put("/connector-plugins/MirrorSourceConnector/config/validate", json=body)
    assert r.json()["error_count"] == 0, r.text


@pytest.mark.parametrize("plugin", ["MirrorSourceConnector", "MirrorHeartbeatConnector",
                                    "MirrorCheckpointConnector"])
def test_every_mirror_connector_checks_its_aliases_and_separator(worker, plugin):
    body = {"name": f"mm-names-{uuid.uuid4().hex[:8]}", "connector.class": plugin,
            "source.cluster.bootstrap.servers": "127.0.0.1:1",
            "target.cluster.bootstrap.servers": "127.0.0.1:1",
            "source.cluster.alias": "s" * 40000, "replication.policy.separator": ""}
    r = worker.put(f"/connector-plugins/{plugin}/config/validate", json=body)
    assert r.status_code == 200, r.text
    errors = {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"]
              if c["value"]["errors"]}
    assert "longer than MirrorMaker 2's records can hold" in \
        " ".join(errors["source.cluster.alias"]), errors
    assert "must not be empty" in " ".join(errors["replication.policy.separator"]), errors
    assert "target.cluster.alias" not in errors


def test_mirror_heartbeats_in_mm2_format(start_worker, bed):
    """MirrorHeartbeatConnector writes MM2's heartbeat records to "heartbeats" on the
    worker's cluster: key Struct {sourceClusterAlias, targetClusterAlias} (INT16-length
    strings), value INT16 version 0 then INT64 timestamp, that timestamp the record's."""
    src, tgt = f"hs{uuid.uuid4().hex[:8]}", f"ht{uuid.uuid4().hex[:8]}"
    worker = start_worker({"offset.flush.interval.ms": "100"})
    name = f"mm-heartbeat-{src}"
    config = {"connector.class": "MirrorHeartbeatConnector", "source.cluster.alias": src,
              "target.cluster.alias": tgt,
              "source.cluster.bootstrap.servers": bed.kafka2_bootstrap,
              "target.cluster.bootstrap.servers": bed.bootstrap,
              "emit.heartbeats.interval.seconds": "1",
              "heartbeats.topic.replication.factor": "1",
              # not a connection key: left out, as MM2 leaves it out, and said so
              "target.cluster.client.id": f"{src}-client",
              "key.converter": BYTES, "value.converter": BYTES}
    assert worker.post("/connectors", json={"name": name, "config": config}).status_code == 201
    key = struct.pack(">h", len(src)) + src.encode() + struct.pack(">h", len(tgt)) + tgt.encode()

    def ours():
        try:
            records = read_all(bed.bootstrap, "heartbeats")
        except KeyError:
            return []  # not made yet
        return [(p, r) for p, rs in records.items() for r in rs if r[0] == key]
    try:
        wait_for(lambda: len(ours()) >= 2, timeout=60, interval=0.5, what="two heartbeats")
    except AssertionError:
        print(worker.logs()[-4000:])
        raise
    beats = ours()
    for partition, (_, value, headers, timestamp) in beats:
        assert partition == 0 and headers == []
        version, at = struct.unpack(">hq", value)
        assert version == 0 and at == timestamp
    stamps = [r[3] for _, r in beats]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert "target.cluster.client.id left out of the client: under target.cluster.* only " \
        "the connection keys" in worker.logs()

    admin = AdminClient({"bootstrap.servers": bed.bootstrap})
    assert len(admin.list_topics("heartbeats", timeout=30).topics["heartbeats"].partitions) == 1
    resource = ConfigResource("topic", "heartbeats")
    assert admin.describe_configs([resource])[resource].result(30)[
        "cleanup.policy"].value == "compact"
    want = [{"partition": {"sourceClusterAlias": src, "targetClusterAlias": tgt},
             "offset": {"offset": 0}}]
    wait_for(lambda: worker.get(f"/connectors/{name}/offsets").json()["offsets"] == want,
             timeout=30, interval=0.2, what="the heartbeat's source offset")

    # emit.heartbeats.enabled=false: no task, as in MM2
    off = f"{name}-off"
    assert worker.post("/connectors", json={"name": off, "config": {
        **config, "emit.heartbeats.enabled": "false"}}).status_code == 201
    wait_for(lambda: worker.get(f"/connectors/{off}/status").json()["connector"]["state"]
             == "RUNNING", timeout=30, interval=0.2, what=f"{off} running")
    assert worker.get(f"/connectors/{off}/status").json()["tasks"] == []


def test_mirror_tasks_split_the_partitions(start_worker, bed):
    """With tasks.max=3, each task copies the partitions whose hash falls to it: every
    record is copied once, by three running tasks."""
    prefix = f"mmt{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-six"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 6)
    produce(src, topic, some_records(240, 6, "s", headers=True))
    w = start_worker()
    name = f"mirror-{prefix}"
    config = mirror_config(bed, prefix, alias, **{"tasks.max": "3"})
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    source, target = wait_mirrored(bed, topic, f"{alias}.{topic}")
    assert_same(source, target, topic)
    tasks = w.get(f"/connectors/{name}/status").json()["tasks"]
    assert [t["state"] for t in tasks] == ["RUNNING"] * 3, tasks


def read_offset_syncs(bootstrap, syncs_topic, topic):
    """{partition: [(upstream, downstream)]}: MM2's OffsetSync records of topic, in order;
    key Struct {topic STRING, partition INT32}, value {upstreamOffset, offset} INT64."""
    out = {}
    for key, value, _, _ in [r for rs in read_all(bootstrap, syncs_topic).values()
                             for r in rs]:
        (n,) = struct.unpack_from(">h", key)
        if key[2:2 + n].decode() != topic:
            continue
        (partition,) = struct.unpack_from(">i", key, 2 + n)
        assert len(key) == 2 + n + 4 and len(value) == 16
        out.setdefault(partition, []).append(struct.unpack(">qq", value))
    return out


def test_mirror_writes_mm2_offset_syncs(start_worker, bed):
    """Offset syncs in MM2's format go to mm2-offset-syncs.<target>.internal on the source
    cluster (offset-syncs.topic.location=source): each maps a source record's offset to the
    offset of the same record in the remote topic. An aborted transaction first makes the
    two offsets differ (its records and markers are not copied)."""
    prefix = f"mms{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 2)
    produce(src, topic, some_records(20, 2, "aborted"), transactional_id=f"tx-{prefix}",
            abort=True)
    w = start_worker({"offset.flush.interval.ms": "100"})
    name = f"mirror-{prefix}"
    config = mirror_config(bed, prefix, alias, **{"offset.lag.max": "10"})
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    for round_ in range(3):
        produce(src, topic, some_records(50, 2, f"r{round_}", headers=True))
    source, target = wait_mirrored(bed, topic, f"{alias}.{topic}")
    assert_same(source, target, topic)
    source = read_all(src, topic, by_offset=True)
    target = read_all(bed.bootstrap, f"{alias}.{topic}", by_offset=True)
    syncs_topic = "mm2-offset-syncs.tgt.internal"
    last = {p: max(source[p]) for p in source}
    wait_for(lambda: {p: s[-1][0] for p, s in
                      read_offset_syncs(src, syncs_topic, topic).items()} == last,
             timeout=60, interval=0.5, what="offset syncs up to the last records")
    syncs = read_offset_syncs(src, syncs_topic, topic)
    for partition, pairs in syncs.items():
        assert pairs[0][0] > pairs[0][1]  # the aborted records' offsets upstream only
        for upstream, downstream in pairs:
            assert target[partition][downstream] == source[partition][upstream]
    admin = AdminClient({"bootstrap.servers": src})
    assert len(admin.list_topics(syncs_topic, timeout=30).topics[syncs_topic].partitions) == 1

    # MM2's partition metrics, as a JMX exporter names them (times in seconds)
    def metrics():
        found = {}
        text = w.get("/metrics").text
        promtool_check(text)  # the new names pass Prometheus' lint
        for line in text.splitlines():
            if line.startswith("tributary_mirror_record_age_seconds_count{"):
                labels, value = line[line.index("{") + 1:].rsplit("} ", 1)
                found[("age_observed", labels)] = float(value)
            elif line.startswith("kafka_connect_mirror_source_connector_"):
                name, rest = line.split("{", 1)
                labels, value = rest.rsplit("} ", 1)
                found[(name[len("kafka_connect_mirror_source_connector_"):], labels)] = \
                    float(value)
        return found
    page = metrics()
    for partition in source:
        labels = (f'source="{alias}",target="tgt",topic="{alias}.{topic}",'
                  f'partition="{partition}"')
        byte_count = sum(len(r[1] or b"") for r in source[partition].values())
        assert page[("byte_count", labels)] == byte_count
        # every record copied is counted once Kafka acknowledged it (the last offset
        # sync follows the last acknowledgement); the rates are over at least 30 s
        assert page[("record_count", labels)] == len(source[partition])
        assert 0 < page[("record_rate", labels)] <= len(source[partition]) / 30
        assert 0 < page[("byte_rate", labels)] <= byte_count / 30
        # the records are an hour old, one second apart: the ages of the last minute
        # spread, and so do the latencies of the batches' last records
        for time_ in ("record_age_seconds", "replication_latency_seconds"):
            last = page[(time_, labels)]
            low, mean, high = (page[(f"{time_}_{k}", labels)]
                               for k in ("min", "avg", "max"))
            assert 3000 < low <= mean <= high, (time_, low, mean, high)
            assert low <= last <= high, (time_, low, last, high)
        age = [page[(f"record_age_seconds_{k}", labels)] for k in ("min", "avg", "max")]
        assert age[0] < age[1] < age[2]
        # each record read is observed once: the ages a poll gathers per partition
        # are published together
        assert page[("age_observed", labels)] == len(source[partition])
    resource = ConfigResource("topic", syncs_topic)
    assert admin.describe_configs([resource])[resource].result(30)[
        "cleanup.policy"].value == "compact"
