"""MirrorMaker 2's MirrorCheckpointConnector on the bed's two clusters (the second,
bed.kafka2_bootstrap, the source; the worker's own the target): a group's committed offsets
on the source are translated through the offset syncs into offsets of the remote topic and
written as MM2's Checkpoint records to <source alias>.checkpoints.internal; with
sync.group.offsets.enabled they are committed to the target's group of the same name, from
which a consumer resumes on the target without skipping a record it had not consumed on the
source, with no more duplicates than the offset syncs' granularity makes."""
import struct
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from test_mirror import (BYTES, EOS, make_topic, mirror_config, produce, read_all,
                         read_offset_syncs, some_records, wait_mirrored)
from worker import wait_for

pytestmark = pytest.mark.integration

CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"


def checkpoint_config(bed, prefix, alias, **extra):
    return {"connector.class": CHECKPOINT, "source.cluster.alias": alias,
            "target.cluster.alias": "tgt",
            "source.cluster.bootstrap.servers": bed.kafka2_bootstrap,
            "target.cluster.bootstrap.servers": bed.bootstrap,
            "topics": f"{prefix}.*", "groups": f"{prefix}-.*",
            "emit.checkpoints.interval.seconds": "1",
            "refresh.groups.interval.seconds": "1",
            "checkpoints.topic.replication.factor": "1",
            "key.converter": BYTES, "value.converter": BYTES, **extra}


def read_checkpoints(bootstrap, topic):
    """[(group, topic, partition, upstream, downstream, metadata)]: MM2's Checkpoint
    records in order; key Struct {group, topic STRING, partition INT32}, value INT16
    version 0 then {upstreamOffset INT64, offset INT64, metadata STRING}."""
    out = []
    try:
        records = read_all(bootstrap, topic)
    except KeyError:
        return out  # not made yet
    for key, value, headers, _ in [r for rs in records.values() for r in rs]:
        (n,) = struct.unpack_from(">h", key)
        group = key[2:2 + n].decode()
        (m,) = struct.unpack_from(">h", key, 2 + n)
        name = key[4 + n:4 + n + m].decode()
        (partition,) = struct.unpack_from(">i", key, 4 + n + m)
        assert len(key) == 8 + n + m
        version, upstream, downstream, k = struct.unpack_from(">hqqh", value)
        assert version == 0 and len(value) == 20 + k and headers == []
        out.append((group, name, partition, upstream, downstream, value[20:].decode()))
    return out


def consume_and_commit(bootstrap, topic, group, upto):
    """Group reads topic's partitions from their beginning up to offsets upto
    ({partition: offset}) and commits them, with metadata."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in upto])
    seen = {p: 0 for p in upto}

    def done():
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            p = message.partition()
            seen[p] = max(seen[p], message.offset() + 1)
            if seen[p] >= upto[p]:
                consumer.pause([TopicPartition(topic, p)])
        return all(seen[p] >= upto[p] for p in upto)
    wait_for(done, timeout=60, interval=0, what=f"{group} consuming {topic}")
    consumer.commit(offsets=[TopicPartition(topic, p, o, f"m{p}") for p, o in upto.items()],
                    asynchronous=False)
    consumer.close()


def test_checkpoints_translate_offsets_and_a_consumer_fails_over(start_worker, bed):
    prefix = f"mmc{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-data"
    remote = f"{alias}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 2)
    w = start_worker({"offset.flush.interval.ms": "100"})
    mirror = mirror_config(bed, prefix, alias, **{"offset.lag.max": "10"})
    assert w.post("/connectors", json={"name": f"mm-{prefix}", "config": mirror}
                  ).status_code == 201
    # two rounds, copied one after the other: syncs in each
    for round_ in range(2):
        produce(src, topic, some_records(100, 2, f"r{round_}"))
        wait_mirrored(bed, topic, remote)

    # a group that consumed part of each partition, another the whole topic
    part, whole = f"{prefix}-part", f"{prefix}-whole"
    # (past the first offset sync of each partition, written at the end of the first
    # batch copied: before it, offsets are not translated, as in MM2)
    committed = {part: {0: 70, 1: 55}, whole: {0: 100, 1: 100}}
    for group, upto in committed.items():
        consume_and_commit(src, topic, group, upto)

    config = checkpoint_config(bed, prefix, alias, **{
        "sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"})
    name = f"mm-checkpoint-{prefix}"
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    checkpoints_topic = f"{alias}.checkpoints.internal"

    def latest():
        found = {}
        for group, name_, partition, up, down, metadata in read_checkpoints(
                bed.bootstrap, checkpoints_topic):
            if group in committed and up == committed[group][partition]:
                found[(group, partition)] = (name_, down, metadata)
        # the group at the end waits for the sync of the last record, written with the
        # source offsets' commit (the offsets are the source's: no record was left out)
        at_end = all(found.get((whole, p), (0, 0))[1] >= 100 for p in (0, 1))
        return found if len(found) == 4 and at_end else None
    try:
        checkpoints = wait_for(latest, timeout=90, interval=0.5,
                               what="the checkpoints of both groups")
    except AssertionError:
        print(w.logs()[-6000:])
        raise

    source = read_all(src, topic, by_offset=True)
    target = read_all(bed.bootstrap, remote, by_offset=True)
    syncs = read_offset_syncs(src, "mm2-offset-syncs.tgt.internal", topic)
    translated, sync_used = {}, {}
    for (group, partition), (name_, down, metadata) in checkpoints.items():
        up = committed[group][partition]
        # the commit metadata as the broker holds it: confluent-kafka commits a NUL after it
        assert name_ == remote and metadata == f"m{partition}\x00"
        # where the group's next record is on the target: never past it
        wanted = [o for o, r in target[partition].items()
                  if up < len(source[partition]) and r == source[partition][up]]
        next_on_target = wanted[0] if wanted else max(target[partition]) + 1
        assert down <= next_on_target, (group, partition, down, next_on_target)
        # and from an offset sync at or before the group's offset: the records between
        # that sync and the group's offset are the only ones read twice
        base = [u for u, d in syncs[partition] if u <= up and down == d + (u < up)]
        assert base, f"{down} is not translated from an offset sync at or before {up}"
        translated[(group, partition)] = down
        sync_used[(group, partition)] = max(base)
    # MM2's checkpoint-latency-ms of each group's partition, as a JMX exporter names it (in
    # seconds, as tributary serves every Connect time in ms)
    # and its -min, -avg, -max over the last minute
    def latencies(suffix=""):
        found = {}
        start = ("kafka_connect_mirror_checkpoint_connector_checkpoint_latency_seconds"
                 f"{suffix}{{")
        for line in w.get("/metrics").text.splitlines():
            if line.startswith(start):
                labels, value = line[line.index("{") + 1:].rsplit("} ", 1)
                found[labels] = float(value)
        return found
    page = wait_for(lambda: len(latencies()) >= 4 and latencies(), timeout=30,
                    interval=0.5, what="the checkpoint latencies")
    low, mean, high = (latencies(f"_{k}") for k in ("min", "avg", "max"))
    for group, partition in checkpoints:
        labels = (f'source="{alias}",target="tgt",group="{group}",topic="{remote}",'
                  f'partition="{partition}"')
        assert page[labels] >= 0, page
        assert 0 <= low[labels] <= mean[labels] <= high[labels], (low, mean, high)
    # a group at the end of the topic goes on at the end of the remote topic
    for partition in (0, 1):
        assert translated[(whole, partition)] == max(target[partition]) + 1

    # sync.group.offsets: the target's groups (none there yet) get the translated offsets
    def target_committed(group):
        consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": group})
        try:
            got = consumer.committed([TopicPartition(remote, p) for p in (0, 1)], timeout=10)
        finally:
            consumer.close()
        return {tp.partition: tp.offset for tp in got}
    for group in committed:
        want = {p: translated[(group, p)] for p in (0, 1)}
        wait_for(lambda: target_committed(group) == want, timeout=60, interval=0.5,
                 what=f"{group}'s offsets synced to the target")

    # a consumer of the group fails over to the target: it reads every record the group
    # had not consumed on the source, and the duplicates the syncs allow only
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": part,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.subscribe([remote])
    first, read = {}, {0: [], 1: []}

    def caught_up():
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            first.setdefault(message.partition(), message.offset())
            read[message.partition()].append(message.value())
        return all(len(read[p]) >= len(target[p]) - translated[(part, p)] for p in (0, 1))
    try:
        wait_for(caught_up, timeout=60, interval=0, what="the failed-over consumer")
    finally:
        consumer.close()
    for partition in (0, 1):
        up = committed[part][partition]
        assert first[partition] == translated[(part, partition)]
        not_consumed = [source[partition][o][1] for o in sorted(source[partition]) if o >= up]
        assert read[partition][-len(not_consumed):] == not_consumed
        # read twice: the records after the sync used, before the group's offset
        duplicates = len(read[partition]) - len(not_consumed)
        used = sync_used[(part, partition)]
        assert duplicates == (up - used - 1 if used < up else 0)
        assert read[partition][:duplicates] == [source[partition][o][1]
                                                 for o in range(used + 1, up)]


def test_checkpoint_connector_refuses_what_mm2_refuses(worker):
    body = {"name": f"mm-cp-validate-{uuid.uuid4().hex[:8]}", "connector.class": CHECKPOINT,
            "source.cluster.bootstrap.servers": "127.0.0.1:1",
            "target.cluster.bootstrap.servers": "127.0.0.1:1",
            "emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false",
            "group.filter.class": "com.example.MyGroupFilter"}
    r = worker.put("/connector-plugins/MirrorCheckpointConnector/config/validate", json=body)
    assert r.status_code == 200, r.text
    errors = {c["value"]["name"]: " ".join(c["value"]["errors"]) for c in r.json()["configs"]
              if c["value"]["errors"]}
    assert "emit.checkpoints.enabled=false" in errors["emit.checkpoints.enabled"]
    assert "without offset syncs" in errors["emit.offset-syncs.enabled"]
    assert "custom filter class" in errors["group.filter.class"]
    for key in ("emit.checkpoints.enabled", "emit.offset-syncs.enabled", "group.filter.class"):
        del body[key]
    r = worker.put("/connector-plugins/MirrorCheckpoint/config/validate", json=body)
    assert r.json()["error_count"] == 0, r.text


def commit_on(bootstrap, group, topic, offsets):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()],
                        asynchronous=False)
    finally:
        consumer.close()


def committed_on(bootstrap, group, topic):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        consumer.close()


def test_group_offsets_synced_to_idle_groups_only(start_worker, bed):
    """sync.group.offsets: a group the target does not know gets the translated offset, an
    empty one behind it is moved forward, an empty one ahead is never moved back, and one
    with an active member is left alone until the member leaves."""
    prefix = f"mmg{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{alias}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1)
    produce(src, topic, some_records(100, 1, "g"))
    w = start_worker({"offset.flush.interval.ms": "100"})
    assert w.post("/connectors", json={"name": f"mm-{prefix}", "config": mirror_config(
        bed, prefix, alias)}).status_code == 201
    wait_mirrored(bed, topic, remote)
    groups = {g: f"{prefix}-{g}" for g in ("new", "behind", "ahead", "active")}
    for group in groups.values():
        consume_and_commit(src, topic, group, {0: 100})
    commit_on(bed.bootstrap, groups["behind"], remote, {0: 10})
    commit_on(bed.bootstrap, groups["ahead"], remote, {0: 150})
    active = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": groups["active"],
                       "enable.auto.commit": False})
    try:
        active.subscribe([remote])
        wait_for(lambda: (active.poll(0.2), active.assignment())[1], timeout=60,
                 interval=0, what="the active member's assignment")
        active.commit(offsets=[TopicPartition(remote, 0, 5)], asynchronous=False)
        config = checkpoint_config(bed, prefix, alias, **{
            "sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"})
        name = f"mm-checkpoint-{prefix}"
        assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
        for g in ("new", "behind"):
            wait_for(lambda: committed_on(bed.bootstrap, groups[g], remote) == 100,
                     timeout=90, interval=0.5, what=f"{g} synced to 100")
        wait_for(lambda: "has active members there" in w.logs(), timeout=30, interval=0.5,
                 what="the active group skipped")
        assert committed_on(bed.bootstrap, groups["ahead"], remote) == 150
        assert committed_on(bed.bootstrap, groups["active"], remote) == 5
    finally:
        active.close()
    wait_for(lambda: committed_on(bed.bootstrap, groups["active"], remote) == 100,
             timeout=60, interval=0.5, what="the group synced once its member left")
    assert committed_on(bed.bootstrap, groups["ahead"], remote) == 150


def test_a_restarted_task_goes_on_from_its_checkpoints(start_worker, bed):
    """A task reads its checkpoints back when it starts: a group whose offset did not move
    gets no second checkpoint after a restart (MM2 writes one only when it moved)."""
    prefix = f"mmr{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{alias}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1)
    produce(src, topic, some_records(100, 1, "r"))
    w = start_worker({"offset.flush.interval.ms": "100"})
    assert w.post("/connectors", json={"name": f"mm-{prefix}", "config": mirror_config(
        bed, prefix, alias)}).status_code == 201
    wait_mirrored(bed, topic, remote)
    still, later = f"{prefix}-still", f"{prefix}-later"
    consume_and_commit(src, topic, still, {0: 100})
    name = f"mm-checkpoint-{prefix}"
    assert w.post("/connectors", json={"name": name, "config": checkpoint_config(
        bed, prefix, alias)}).status_code == 201
    checkpoints_topic = f"{alias}.checkpoints.internal"

    def of(group):
        return [c for c in read_checkpoints(bed.bootstrap, checkpoints_topic)
                if c[0] == group]
    wait_for(lambda: any(c[3:5] == (100, 100) for c in of(still)), timeout=90,
             interval=0.5, what=f"{still}'s checkpoint")
    before = of(still)

    r = w.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false")
    assert r.status_code in (200, 202, 204), r.text
    wait_for(lambda: w.logs().count(f"back from {checkpoints_topic}") >= 2, timeout=30,
             interval=0.2, what="the task's checkpoints read back again")
    # a group that commits after the restart: its checkpoint shows a round went by
    consume_and_commit(src, topic, later, {0: 100})
    wait_for(lambda: of(later), timeout=90, interval=0.5, what=f"{later}'s checkpoint")
    wait_for(lambda: any(c[3:5] == (100, 100) for c in of(later)), timeout=30,
             interval=0.5, what=f"{later}'s last checkpoint")
    assert of(still) == before


def test_checkpoints_start_before_the_offset_syncs_exist(start_worker, bed):
    """A checkpoint connector made before any offset sync is written (its aliases new, no
    offset-syncs topic yet) says so once, and checkpoints once the syncs come."""
    prefix = f"mmb{uuid.uuid4().hex[:10]}"
    alias, target = f"src{uuid.uuid4().hex[:6]}", f"tgt{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{alias}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1)
    produce(src, topic, some_records(100, 1, "b"))
    group = f"{prefix}-early"
    consume_and_commit(src, topic, group, {0: 100})
    w = start_worker({"offset.flush.interval.ms": "100"})
    config = checkpoint_config(bed, prefix, alias, **{"target.cluster.alias": target})
    assert w.post("/connectors", json={"name": f"mm-checkpoint-{prefix}", "config": config}
                  ).status_code == 201
    syncs_topic = f"mm2-offset-syncs.{target}.internal"
    wait_for(lambda: f"topic {syncs_topic} does not exist" in w.logs(),
             timeout=30, interval=0.5, what="the missing offset syncs told")
    assert w.post("/connectors", json={"name": f"mm-{prefix}", "config": mirror_config(
        bed, prefix, alias, **{"target.cluster.alias": target})}).status_code == 201
    wait_for(lambda: any(c[0] == group and c[3:5] == (100, 100)
                         for c in read_checkpoints(bed.bootstrap,
                                                   f"{alias}.checkpoints.internal")),
             timeout=90, interval=0.5, what=f"{group}'s checkpoint")
    assert w.logs().count(f"topic {syncs_topic} does not exist") == 1


def test_offset_syncs_on_the_target(start_worker, bed):
    """offset-syncs.topic.location=target: the syncs go to mm2-offset-syncs.<source
    alias>.internal on the target (MM2 names the topic after the other cluster), and the
    checkpoints read them there."""
    prefix = f"mmt{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{alias}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1)
    produce(src, topic, some_records(100, 1, "t"))
    group = f"{prefix}-g"
    consume_and_commit(src, topic, group, {0: 100})
    w = start_worker({"offset.flush.interval.ms": "100"})
    location = {"offset-syncs.topic.location": "target"}
    assert w.post("/connectors", json={"name": f"mm-{prefix}", "config": mirror_config(
        bed, prefix, alias, **location)}).status_code == 201
    assert w.post("/connectors", json={"name": f"mm-checkpoint-{prefix}", "config":
                                       checkpoint_config(bed, prefix, alias, **location)}
                  ).status_code == 201
    wait_for(lambda: any(c[0] == group and c[3:5] == (100, 100)
                         for c in read_checkpoints(bed.bootstrap,
                                                   f"{alias}.checkpoints.internal")),
             timeout=90, interval=0.5, what=f"{group}'s checkpoint")
    syncs = read_offset_syncs(bed.bootstrap, f"mm2-offset-syncs.{alias}.internal", topic)
    assert syncs[0][-1] == (99, 99)


def test_checkpoints_behind_an_exactly_once_source(start_worker, bed):
    """With exactly once the offset syncs follow the target's commits (each after the
    transaction that holds its record): they map source records to committed records of the
    remote topic, whose offsets the transactions' markers spread out, and the checkpoints
    translate through them as without exactly once."""
    prefix = f"mmx{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{alias}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1)
    produce(src, topic, some_records(20, 1, "aborted"), transactional_id=f"tx-{prefix}",
            abort=True)
    produce(src, topic, some_records(100, 1, "x"))
    w = start_worker({**EOS, "offset.storage.topic": bed.unique_topic("mmx-offsets")})
    mirror = mirror_config(bed, prefix, alias, **{"offset.lag.max": "10",
                                                  "exactly.once.support": "required"})
    assert w.post("/connectors", json={"name": f"mm-{prefix}", "config": mirror}
                  ).status_code == 201
    wait_mirrored(bed, topic, remote)
    source = read_all(src, topic, by_offset=True)[0]
    target = read_all(bed.bootstrap, remote, by_offset=True)[0]
    end = max(source) + 1
    mid, whole = f"{prefix}-mid", f"{prefix}-whole"
    committed = {mid: 80, whole: end}
    for group, up in committed.items():
        consume_and_commit(src, topic, group, {0: up})
    assert w.post("/connectors", json={"name": f"mm-checkpoint-{prefix}", "config":
                                       checkpoint_config(bed, prefix, alias)}
                  ).status_code == 201

    def latest():
        found = {c[0]: c[4] for c in read_checkpoints(bed.bootstrap,
                                                      f"{alias}.checkpoints.internal")
                 if c[0] in committed and c[3] == committed[c[0]]}
        return found if found.get(whole) == max(target) + 1 and mid in found else None
    try:
        checkpoints = wait_for(latest, timeout=90, interval=0.5,
                               what="the checkpoints of both groups")
    except AssertionError:
        print(w.logs()[-6000:])
        raise
    syncs = read_offset_syncs(src, "mm2-offset-syncs.tgt.internal", topic)[0]
    for upstream, downstream in syncs:
        assert target.get(downstream) == source[upstream], (upstream, downstream)
    for group, down in checkpoints.items():
        up = committed[group]
        assert [u for u, d in syncs if u <= up and down == d + (u < up)], (group, down)
        if up < end:  # never past the group's next record on the target
            assert down <= [o for o, r in target.items() if r == source[up]][0]
