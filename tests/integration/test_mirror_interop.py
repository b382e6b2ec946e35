"""tributary's MirrorMaker 2 connectors beside the real MM2 (connect-mirror, BED_CONNECT_VERSION,
in the Connect peer of connect_peer.py) on the bed's two clusters: the second
(bed.kafka2_bootstrap) the source, the first (the workers' own) the target.

The same MirrorSource, MirrorCheckpoint and MirrorHeartbeat configs run in both, each with
aliases of its own so that their topics do not collide; what each writes is read back with
one decoder (test_mirror's and test_mirror_checkpoint's) and compared field by field, times
excepted. Then the take-over: tributary workers on a stopped Connect's three topics go on
where MM2's MirrorSourceConnector stopped."""
import json
import signal
import struct
import subprocess
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from connect_peer import ConnectDistributed, connect_topics
from kafka_io import read_topic
from test_distributed import agreed_placement
from test_kafka_store import workers_on_connects_topics
from test_mirror import (BYTES, MIRROR, make_topic, produce, read_all, read_offset_syncs,
                         some_records)
from test_mirror_checkpoint import CHECKPOINT, read_checkpoints
from worker import wait_for

pytestmark = pytest.mark.integration

HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
OFFSET_PARTITIONS = 25  # Connect's default for offset.storage.partitions
TRANSLATE = Path(__file__).with_name("RemoteClusterTranslate.java")


def mm2_configs(bed, prefix, source_alias, target_alias):
    """The three connectors' configs, the same for MM2 and tributary but for the aliases."""
    common = {"source.cluster.alias": source_alias, "target.cluster.alias": target_alias,
              "source.cluster.bootstrap.servers": bed.kafka2_bootstrap,
              "target.cluster.bootstrap.servers": bed.bootstrap,
              "replication.policy.class":
                  "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
              "topics": f"{prefix}.*", "groups": f"{prefix}-.*",
              "sync.topic.acls.enabled": "false", "heartbeats.replication.enabled": "false",
              # as MM2's docs for Connect say: Connect's default header converter would
              # turn binary header values into base64 strings (tributary copies them as they
              # are whatever it says)
              "key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES,
              # MM2 reads read_uncommitted unless told (or exactly once), and so copies
              # aborted transactions; tributary reads read_committed always
              "source.consumer.isolation.level": "read_committed",
              "tasks.max": "1"}
    return {
        "source": {**common, "connector.class": MIRROR, "replication.factor": "1",
                   "offset-syncs.topic.replication.factor": "1",
                   "refresh.topics.interval.seconds": "1"},
        "checkpoint": {**common, "connector.class": CHECKPOINT,
                       "checkpoints.topic.replication.factor": "1",
                       "offset-syncs.topic.replication.factor": "1",
                       "emit.checkpoints.interval.seconds": "1",
                       "refresh.groups.interval.seconds": "1",
                       "sync.group.offsets.enabled": "true",
                       "sync.group.offsets.interval.seconds": "1"},
        "heartbeat": {**common, "connector.class": HEARTBEAT,
                      "heartbeats.topic.replication.factor": "1",
                      "emit.heartbeats.interval.seconds": "1"}}


def read_heartbeats(bootstrap, source_alias, target_alias):
    """[(partition, headers, timestamp, version, stamp)]: MM2's Heartbeat records of the two
    aliases in "heartbeats"; key Struct {sourceClusterAlias, targetClusterAlias} (INT16-length
    strings), value INT16 version then INT64 timestamp."""
    key = b"".join(struct.pack(">h", len(a)) + a.encode() for a in (source_alias, target_alias))
    try:
        records = read_all(bootstrap, "heartbeats")
    except KeyError:
        return []  # not made yet
    out = []
    for partition, rs in records.items():
        for k, value, headers, timestamp in rs:
            if k == key:
                assert len(value) == 10, value
                out.append((partition, headers, timestamp, *struct.unpack(">hq", value)))
    return out


def commit_with_metadata(bootstrap, group, topic, offsets):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o, f"md-{group[-4:]}-{p}")
                                 for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def target_committed(bootstrap, group, topic, partitions):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        got = consumer.committed([TopicPartition(topic, p) for p in partitions], timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in got}


def high_watermarks(bootstrap, topic, partitions):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"hw-{uuid.uuid4().hex}"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
                for p in partitions}
    finally:
        consumer.close()


def remote_cluster_translate(bed, pairs):
    """{(alias, group, topic, partition): offset}: what MM2's RemoteClusterUtils
    .translateOffsets reads from the checkpoints of each (source alias, group) on the
    target (RemoteClusterTranslate.java, on the bed's Connect classpath)."""
    args = [a for pair in pairs for a in pair]
    done = subprocess.run(["java", "-cp", f"{bed.facts['BED_CONNECT_LIBS']}/*", str(TRANSLATE),
                           bed.bootstrap, *args],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    out = {}
    for line in done.stdout.splitlines():
        alias, group, topic, partition, offset = line.split()
        out[(alias, group, topic, int(partition))] = int(offset)
    return out


def mirrored(bootstrap, topic, count):
    try:
        return sum(len(r) for r in read_all(bootstrap, topic).values()) >= count
    except KeyError:
        return False  # not made yet


def fail_over(bootstrap, group, remote, start, expected):
    """A consumer of group on the target, from its committed offsets: the values it reads
    of each partition until it has read as many as expected[p] from start[p]."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed"})
    consumer.subscribe([remote])
    first, read = {}, {p: [] for p in expected}

    def caught_up():
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            first.setdefault(message.partition(), message.offset())
            read[message.partition()].append(message.value())
        return all(len(read[p]) >= expected[p] for p in expected)
    try:
        wait_for(caught_up, timeout=60, interval=0, what=f"{group} failed over to {remote}")
    finally:
        consumer.close()
    assert first == {p: o for p, o in start.items() if expected[p]}, (first, start)
    return read


@pytest.fixture
def connect(bed, tmp_path):
    started = []

    def start(topics, group):
        started.append(ConnectDistributed(bed, tmp_path / f"connect{len(started)}", group,
                                          topics, OFFSET_PARTITIONS))
        return started[-1]

    yield start
    for c in started:
        if c.proc.poll() is None:
            c.stop()


def test_mm2_and_tributary_write_the_same(connect, start_worker, bed):
    prefix = f"mmi{uuid.uuid4().hex[:10]}"
    tag = uuid.uuid4().hex[:6]
    # each system its own aliases: remote topics, offset syncs, checkpoints and heartbeats
    # apart, on the same clusters
    aliases = {"mm2": (f"j{tag}", f"tj{tag}"), "tributary": (f"b{tag}", f"tb{tag}")}
    src = bed.kafka2_bootstrap
    plain, txn = f"{prefix}-plain", f"{prefix}-txn"
    make_topic(src, plain, 2)
    make_topic(src, txn, 2)

    def first_round():
        produce(src, plain, some_records(120, 2, "p1", headers=True))
        produce(src, txn, some_records(40, 2, "t1"), transactional_id=f"tx-{prefix}")
        # aborted: its records and markers make the offsets of the remote topic differ
        produce(src, txn, some_records(20, 2, "ab"), transactional_id=f"tx-{prefix}",
                abort=True)
        produce(src, txn, some_records(40, 2, "t2"), transactional_id=f"tx-{prefix}")

    def second_round():
        produce(src, plain, some_records(80, 2, "p2", headers=True, age_s=1800))
        produce(src, txn, some_records(60, 2, "t3", age_s=1800),
                transactional_id=f"tx-{prefix}")
    first_round()

    java = connect(connect_topics(bed, "mmi-connect"), bed.unique_topic("mmi-connect"))
    w = start_worker({"offset.flush.interval.ms": "500"})
    configs = {system: mm2_configs(bed, prefix, *aliases[system]) for system in aliases}

    def create(system, kind):
        name = f"{system}-{kind}-{prefix}"
        if system == "mm2":
            java.create(name, configs[system][kind])
        else:
            r = w.post("/connectors", json={"name": name, "config": configs[system][kind]})
            assert r.status_code == 201, r.text

    def remote(system, topic):
        return f"{aliases[system][0]}.{topic}"

    def copied(count):
        for system in aliases:
            for topic in (plain, txn):
                wait_for(lambda: mirrored(bed.bootstrap, remote(system, topic), count[topic]),
                         timeout=120, interval=0.5,
                         what=f"{count[topic]} records in {remote(system, topic)}")

    for system in aliases:
        create(system, "source")
        create(system, "heartbeat")
    copied({plain: 120, txn: 80})
    second_round()
    copied({plain: 200, txn: 140})

    # remote topic names: <source alias>.<topic> in both, nothing else of the prefix
    names = AdminClient({"bootstrap.servers": bed.bootstrap}).list_topics(timeout=30).topics
    for system in aliases:
        ours = {n for n in names if n.startswith(aliases[system][0] + ".") and prefix in n}
        assert ours == {remote(system, plain), remote(system, txn)}, (system, ours)

    # records: keys, values, headers, partitions and timestamps, in both
    source = {t: read_all(src, t, by_offset=True) for t in (plain, txn)}
    target = {(s, t): read_all(bed.bootstrap, remote(s, t), by_offset=True)
              for s in aliases for t in (plain, txn)}
    for (system, topic), got in target.items():
        want = source[topic]
        assert {p: list(r.values()) for p, r in got.items()} == \
            {p: list(r.values()) for p, r in want.items()}, (system, topic)

    # offset syncs, one decoder for both: every sync maps a source record to the same record
    # on the target, and the last one of each partition is its last record once the source
    # offsets are committed (MM2: a delayed sync goes out with the offset commit)
    def syncs(system, topic):
        return read_offset_syncs(src, f"mm2-offset-syncs.{aliases[system][1]}.internal", topic)

    def at_the_end(system):
        return all(syncs(system, t).get(p, [(-1, -1)])[-1][0] == max(source[t][p])
                   for t in (plain, txn) for p in source[t])
    for system in aliases:
        wait_for(lambda: at_the_end(system), timeout=60, interval=0.5,
                 what=f"{system}'s offset syncs up to the last records")
    all_syncs = {(s, t): syncs(s, t) for s in aliases for t in (plain, txn)}
    for (system, topic), by_partition in all_syncs.items():
        for partition, pairs in by_partition.items():
            for up, down in pairs:
                assert target[(system, topic)][partition][down] == \
                    source[topic][partition][up], (system, topic, partition, up, down)
            assert [u for u, _ in pairs] == sorted(u for u, _ in pairs)

    # groups on the source: part way through the second round, and at the end
    ends = {t: high_watermarks(src, t, (0, 1)) for t in (plain, txn)}
    committed = {f"{prefix}-part": {plain: {0: 85, 1: 75}, txn: {0: 70, 1: 60}},
                 f"{prefix}-whole": ends}
    for group, by_topic in committed.items():
        for topic, offsets in by_topic.items():
            commit_with_metadata(src, group, topic, offsets)
    for system in aliases:
        create(system, "checkpoint")
    # and tributary's checkpoints from MM2's offset syncs (MM2's target alias names them),
    # under a source alias of their own
    crossed = f"x{tag}"
    r = w.post("/connectors", json={"name": f"crossed-checkpoint-{prefix}", "config": {
        **configs["mm2"]["checkpoint"], "source.cluster.alias": crossed,
        "sync.group.offsets.enabled": "false"}})
    assert r.status_code == 201, r.text

    def checkpoints(system, alias=None):
        """{(group, topic without the alias, partition): (upstream, downstream, metadata)}
        of the groups' committed offsets, once all are there."""
        found = {}
        alias = alias or aliases[system][0]
        for group, name, partition, up, down, metadata in read_checkpoints(
                bed.bootstrap, f"{alias}.checkpoints.internal"):
            topic = name.removeprefix(alias + ".")
            if group in committed and up == committed[group].get(topic, {}).get(partition):
                found[(group, topic, partition)] = (up, down, metadata)
        return found if len(found) == 8 else None
    got = {system: wait_for(lambda: checkpoints(system), timeout=120, interval=0.5,
                            what=f"{system}'s checkpoints of both groups")
           for system in aliases}
    assert got["mm2"].keys() == got["tributary"].keys()
    for key in got["mm2"]:
        group, topic, partition = key
        exact = exact_downstream(source[topic][partition], target[("mm2", topic)][partition],
                                 committed[group][topic][partition])
        for system in aliases:
            up, down, metadata = got[system][key]
            # the group's commit metadata as the broker holds it (confluent-kafka commits
            # it with a NUL at its end), in both
            assert metadata == f"md-{group[-4:]}-{partition}\x00", (system, key, metadata)
            # never past the group's next record: a consumer failing over skips nothing
            assert down <= exact, (system, key, down, exact)
            # from one of the system's own syncs at or before the group's offset
            assert any(u <= up and down == d + (u < up)
                       for u, d in all_syncs[(system, topic)][partition]), (system, key)
        if group.endswith("-whole"):  # a group at the end: the same in both
            assert got["mm2"][key][1] == got["tributary"][key][1] == exact, key

    # MM2's own client library reads tributary's checkpoints as it reads MM2's
    pairs = [(aliases[s][0], g) for s in aliases for g in committed]
    read = remote_cluster_translate(bed, pairs)
    for system in aliases:
        alias = aliases[system][0]
        assert {(g, t.removeprefix(alias + "."), p): o
                for (a, g, t, p), o in read.items() if a == alias} == \
            {key: down for key, (_, down, _) in got[system].items()}, system

    # from the same offset syncs, tributary translates every offset as MM2 does
    def translated(alias=None):
        found = checkpoints("mm2", alias) or {}
        return {key: (up, down) for key, (up, down, _) in found.items()}
    try:
        wait_for(lambda: translated(crossed) == translated() and translated(), timeout=60,
                 interval=0.5, what="tributary's checkpoints from MM2's syncs as MM2's")
    except AssertionError:
        print("MM2:", translated(), "tributary:", translated(crossed))
        raise

    # the translated offsets committed to the target's groups (sync.group.offsets), then a
    # consumer of each group failing over there: it reads every record its group had not
    # consumed on the source, after the few the translation repeats
    for system in aliases:
        for group in committed:
            for topic in (plain, txn):
                want = {p: got[system][(group, topic, p)][1] for p in (0, 1)}
                wait_for(lambda: target_committed(bed.bootstrap, group, remote(system, topic),
                                                  (0, 1)) == want,
                         timeout=60, interval=0.5,
                         what=f"{group}'s offsets of {remote(system, topic)} on the target")
    group = f"{prefix}-part"
    for system in aliases:
        for topic in (plain, txn):
            mirror = target[(system, topic)]
            start = {p: got[system][(group, topic, p)][1] for p in (0, 1)}
            expected = {p: sum(1 for o in mirror[p] if o >= start[p]) for p in (0, 1)}
            read = fail_over(bed.bootstrap, group, remote(system, topic), start, expected)
            for p in (0, 1):
                not_consumed = [r[1] for o, r in sorted(source[topic][p].items())
                                if o >= committed[group][topic][p]]
                assert read[p][-len(not_consumed):] == not_consumed, (system, topic, p)

    # heartbeats: the same record in both, but the aliases and the time
    for system in aliases:
        beats = wait_for(lambda: len(read_heartbeats(bed.bootstrap, *aliases[system])) >= 2
                         and read_heartbeats(bed.bootstrap, *aliases[system]),
                         timeout=60, interval=0.5, what=f"{system}'s heartbeats")
        for partition, headers, timestamp, version, stamp in beats:
            assert (partition, headers, version) == (0, [], 0), system
            assert stamp == timestamp, system

    # the source offsets, as each REST API shows them
    def offsets(system):
        name = f"{system}-source-{prefix}"
        body = java.get(f"/connectors/{name}/offsets") if system == "mm2" else \
            w.get(f"/connectors/{name}/offsets").json()
        return sorted((o["partition"]["topic"], o["partition"]["partition"],
                       o["partition"]["cluster"] == aliases[system][0], o["offset"])
                      for o in body["offsets"])
    wait_for(lambda: offsets("mm2") == offsets("tributary"), timeout=60, interval=0.5,
             what="the same source offsets in MM2 and tributary")


def exact_downstream(source, target, upstream):
    """The offset on the target of the first record at or after upstream on the source
    (the end of the target when there is none)."""
    later = [r for o, r in sorted(source.items()) if o >= upstream]
    if not later:
        return max(target) + 1
    return next(o for o, r in sorted(target.items()) if r == later[0])


def assert_taken_over(source, target, committed, mm2_wrote):
    """Each target partition holds the source's records, in order: MM2's, then tributary's
    from the record after MM2's last committed offset. So none is missing, and the only ones
    copied twice are those MM2 copied after its last commit, which MM2 itself would copy
    again when restarted: with w records copied by MM2 and c its committed next offset
    (committed[p]), the partition is source[:w] + source[c:], c <= w. source, target and
    mm2_wrote (the target when MM2 stopped) are read_all's; returns the count copied twice."""
    twice = 0
    for p, records in source.items():
        got = target[p]
        c = committed.get(p, 0)
        w = len(got) - (len(records) - c)
        print(f"partition {p}: MM2 committed {c}, copied {len(mm2_wrote.get(p, []))}; "
              f"{w - c} copied twice")
        assert len(mm2_wrote.get(p, [])) == w, (p, w, len(mm2_wrote.get(p, [])))
        assert c <= w <= len(records), (p, c, w)
        assert got[:w] == records[:w], p  # MM2's, each once
        assert got[w:] == records[c:], p  # tributary's, from MM2's last committed offset
        twice += w - c
    assert sum(len(r) for r in target.values()) == \
        sum(len(r) for r in source.values()) + twice
    return twice


def test_tributary_takes_over_from_a_stopped_mm2(connect, start_worker, bed):
    """MM2's MirrorSourceConnector in Connect copies part of a topic and is killed
    (kill -9, so that it may have copied records after its last offset commit); tributary
    workers on that Connect's three topics and group.id run the same connector from MM2's
    last committed source offsets, within assert_taken_over's bound."""
    prefix = f"mmk{uuid.uuid4().hex[:10]}"
    alias = f"k{uuid.uuid4().hex[:6]}"
    src = bed.kafka2_bootstrap
    topic, remote = f"{prefix}-data", f"{alias}.{prefix}-data"
    make_topic(src, topic, 3)
    produce(src, topic, some_records(3000, 3, "a"))

    topics = connect_topics(bed, "mmk-connect")
    java = connect(topics, bed.unique_topic("mmk-connect"))
    name = f"mm2-takeover-{prefix}"
    config = mm2_configs(bed, prefix, alias, f"tk{alias}")["source"]
    java.create(name, config)
    wait_for(lambda: java.get(f"/connectors/{name}/offsets")["offsets"], timeout=120,
             interval=0.2, what="MM2's first committed source offsets")
    java.proc.send_signal(signal.SIGKILL)
    java.proc.wait(timeout=30)

    # MM2's last committed offsets, as its offsets topic holds them: the last copied record
    committed = {}
    for _, key, value in read_topic(bed, topics["offsets"]):
        connector, partition = json.loads(key)
        if connector == name and value is not None:
            assert set(partition) == {"cluster", "topic", "partition"}, partition
            assert partition["cluster"] == alias and partition["topic"] == topic
            committed[partition["partition"]] = json.loads(value)["offset"] + 1
    assert committed, "MM2 committed no source offset"
    mm2_wrote = read_all(bed.bootstrap, remote)
    # records produced while neither runs: only tributary can copy them
    produce(src, topic, some_records(1500, 3, "b", age_s=1800))
    source = read_all(src, topic)
    total = sum(len(r) for r in source.values())

    workers = workers_on_connects_topics(start_worker, bed, java, topics)
    wait_for(lambda: agreed_placement(workers, [name], {name: 1}), timeout=120,
             what="MM2's connector RUNNING on tributary, as every worker shows")
    assert workers[0].get(f"/connectors/{name}/config").json()["connector.class"] == MIRROR
    wait_for(lambda: mirrored(bed.bootstrap, remote, total), timeout=120, interval=0.5,
             what=f"{total} records in {remote}")
    assert_taken_over(source, read_all(bed.bootstrap, remote), committed, mm2_wrote)
    # tributary's source offsets go on from MM2's, in MM2's form
    last = {p: len(r) - 1 for p, r in source.items()}
    wait_for(lambda: {o["partition"]["partition"]: o["offset"]["offset"] for o in
                      workers[0].get(f"/connectors/{name}/offsets").json()["offsets"]
                      if o["partition"] == {"cluster": alias, "topic": topic,
                                            "partition": o["partition"]["partition"]}}
             == last, timeout=60, interval=0.5, what="tributary's offsets at the end")
