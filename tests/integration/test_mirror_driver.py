"""`tributary --mirror mm2.properties`: MirrorMaker 2's dedicated mode from MM2's own
properties file, on the bed's two clusters (the second, bed.kafka2_bootstrap, the source).
A flow A->B replicates a topic (records, headers, timestamps), writes heartbeats and
checkpoints under MM2's names, keeps its worker's store in the target's topics MM2's
dedicated mode names (mm2-configs.<source>.internal, ...), and after kill -9 goes on from
there without copying a record twice; it also goes on where the real MM2's dedicated driver,
killed, stopped. A bad file fails naming the key and its line."""
import json
import os
import re
import signal
import struct
import subprocess
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from test_mirror import assert_same, make_topic, produce, read_all, some_records, \
    wait_mirrored
from test_mirror_checkpoint import consume_and_commit, read_checkpoints
from test_mirror_interop import assert_taken_over, mirrored
from worker import wait_for

pytestmark = pytest.mark.integration

SANITIZER = ("AddressSanitizer", "LeakSanitizer", "runtime error:")


class Driver:
    """A tributary --mirror process, its output in a log file."""

    def __init__(self, folder, properties, args=()):
        self.log_path = os.path.join(folder, f"mirror-{uuid.uuid4().hex[:8]}.log")
        binary = os.environ.get("TRIBUTARY_BIN")
        assert binary, "TRIBUTARY_BIN is not set: run the suite through scripts/test"
        env = {**os.environ, "TMPDIR": str(folder)}
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen([binary, "--mirror", str(properties), *args],
                                         stdout=log, stderr=subprocess.STDOUT, env=env,
                                         cwd=folder)

    def logs(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def workers(self):
        """The pids of the driver's workers."""
        with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
            return [int(p) for p in f.read().split()]

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=120)
        return self.proc.returncode


@pytest.fixture
def drivers():
    started = []
    yield started
    for d in started:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(timeout=30)


def mm2_properties(bed, path, source, target, prefix):
    path.write_text(f"""# MirrorMaker 2, dedicated mode
clusters = {source}, {target}
{source}.bootstrap.servers = {bed.kafka2_bootstrap}
{target}.bootstrap.servers = {bed.bootstrap}
{source}->{target}.enabled = true
{source}->{target}.topics = {prefix}.*
{source}->{target}.groups = {prefix}-.*
{target}->{source}.topics = {prefix}.*
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
config.storage.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
refresh.topics.interval.seconds = 1
refresh.groups.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
emit.heartbeats.interval.seconds = 1
{target}.offset.flush.interval.ms = 100
""")
    return path


def latest_offsets(bootstrap, topic, connector):
    """{(topic, partition): offset}: the last source offsets of connector in Connect's
    offsets topic (key [connector, partition], value {"offset"})."""
    found = {}
    for records in read_all(bootstrap, topic).values():
        for key, value, _, _ in records:
            name, partition = json.loads(key)
            if name == connector and value is not None:
                found[(partition["topic"], partition["partition"])] = \
                    json.loads(value)["offset"]
    return found


def heartbeats_of(bootstrap, source, target):
    """The heartbeats' timestamps of source->target in MM2's format: key {sourceClusterAlias,
    targetClusterAlias} as INT16-length strings, value INT16 version 0 then INT64."""
    out = []
    for records in read_all(bootstrap, "heartbeats").values():
        for key, value, _, _ in records:
            (n,) = struct.unpack_from(">h", key)
            (m,) = struct.unpack_from(">h", key, 2 + n)
            if (key[2:2 + n].decode(), key[4 + n:4 + n + m].decode()) == (source, target):
                version, stamp = struct.unpack(">hq", value)
                assert version == 0
                out.append(stamp)
    return out


def test_dedicated_mode_replicates_and_goes_on_after_kill(bed, tmp_path, drivers):
    prefix = f"mmd{uuid.uuid4().hex[:10]}"
    source, target = f"s{uuid.uuid4().hex[:6]}", f"t{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{source}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 2)
    produce(src, topic, some_records(60, 2, "a", headers=True))
    # the flow back is not enabled: heartbeats only, none of its topics copied
    back = f"{prefix}-back"
    make_topic(bed.bootstrap, back, 1)
    produce(bed.bootstrap, back, some_records(5, 1, "back"))
    properties = mm2_properties(bed, tmp_path / "mm2.properties", source, target, prefix)
    d = Driver(tmp_path, properties)
    drivers.append(d)
    try:
        wait_mirrored(bed, topic, remote)
    except AssertionError:
        print(d.logs()[-8000:])
        raise
    assert_same(read_all(src, topic), read_all(bed.bootstrap, remote), topic)
    assert "2 flow(s)" in d.logs()  # and the flow back, for its heartbeats

    # the worker's store is MM2's dedicated mode's: its group's topics on the target
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"x-{prefix}"})
    topics = consumer.list_topics(timeout=30).topics
    consumer.close()
    for kind in ("configs", "offsets", "status"):
        assert f"mm2-{kind}.{source}.internal" in topics
    configs = read_all(bed.bootstrap, f"mm2-configs.{source}.internal")
    keys = {k.decode() for rs in configs.values() for k, _, _, _ in rs if k}
    for name in ("MirrorSourceConnector", "MirrorCheckpointConnector",
                 "MirrorHeartbeatConnector"):
        assert f"connector-{name}" in keys, keys

    # heartbeats and checkpoints under MM2's names
    wait_for(lambda: heartbeats_of(bed.bootstrap, source, target), timeout=60,
             interval=0.5, what="heartbeats of the flow")
    wait_for(lambda: heartbeats_of(src, target, source), timeout=60,
             interval=0.5, what="heartbeats of the flow back")
    group = f"{prefix}-g"
    consume_and_commit(src, topic, group, {0: 30, 1: 30})
    wait_for(lambda: any(c[0] == group and c[1] == remote and c[3] == 30
                         for c in read_checkpoints(bed.bootstrap,
                                                   f"{source}.checkpoints.internal")),
             timeout=90, interval=0.5, what=f"{group}'s checkpoints")

    # kill -9 once the offsets of every record copied are stored: nothing is copied twice
    ends = {(topic, p): len(rs) - 1 for p, rs in read_all(src, topic).items()}
    offsets_topic = f"mm2-offsets.{source}.internal"
    wait_for(lambda: {k: o for k, o in latest_offsets(
                 bed.bootstrap, offsets_topic, "MirrorSourceConnector").items()
                 if k[0] == topic} == ends,
             timeout=60, interval=0.5, what="the offsets of the last records stored")
    workers = d.workers()
    assert len(workers) == 2
    d.stop(signal.SIGKILL)
    wait_for(lambda: not any(os.path.exists(f"/proc/{p}") and
                             open(f"/proc/{p}/stat").read().split()[2] != "Z"
                             for p in workers),
             timeout=30, interval=0.2, what="the worker gone with the driver")
    produce(src, topic, some_records(40, 2, "b", headers=True))
    d = Driver(tmp_path, properties)
    drivers.append(d)
    try:
        wait_mirrored(bed, topic, remote)
    except AssertionError:
        print(d.logs()[-8000:])
        raise
    assert_same(read_all(src, topic), read_all(bed.bootstrap, remote), topic)
    assert d.stop() == 0
    logs = d.logs()
    assert not any(s in logs for s in SANITIZER), logs[-4000:]
    # the flow back ran its heartbeats all along, and copied nothing
    consumer = Consumer({"bootstrap.servers": src, "group.id": f"x-{prefix}"})
    assert f"{target}.{back}" not in consumer.list_topics(timeout=30).topics
    consumer.close()
    # its files (the worker's, with the clusters' credentials) are removed at the stop
    files = re.search(r"files in (\S+)", logs).group(1)
    assert files.startswith(str(tmp_path)) and not os.path.exists(files)


def test_takes_over_from_a_stopped_dedicated_mm2(bed, tmp_path, drivers):
    """The real MM2's dedicated driver (BED_CONNECT_VERSION's MirrorMaker) copies a topic
    from the same properties file and is killed (kill -9: it may have copied records after
    its last offset commit); tributary --mirror goes on from MM2's last committed offsets in
    mm2-offsets.<source>.internal, within assert_taken_over's bound."""
    prefix = f"mmt{uuid.uuid4().hex[:10]}"
    source, target = f"s{uuid.uuid4().hex[:6]}", f"t{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{source}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 3)
    produce(src, topic, some_records(3000, 3, "a"))
    properties = mm2_properties(bed, tmp_path / "mm2.properties", source, target, prefix)
    offsets_topic = f"mm2-offsets.{source}.internal"

    def committed():
        """MM2's next offset of each partition of topic, as its offsets topic holds them."""
        try:
            found = latest_offsets(bed.bootstrap, offsets_topic, "MirrorSourceConnector")
        except KeyError:
            return {}  # not made yet
        return {p: o + 1 for (t, p), o in found.items() if t == topic}

    log = tmp_path / "mm2.log"
    with open(tmp_path / "mm2.out", "w") as out:
        mm2 = subprocess.Popen(
            ["java", "-Xms128M", "-Xmx512M", bed.facts["BED_CONNECT_LOG_OPTION"],
             f"-Dtributary.connect.log={log}", "-cp", f"{bed.facts['BED_CONNECT_LIBS']}/*",
             "org.apache.kafka.connect.mirror.MirrorMaker", str(properties)],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        wait_for(committed, timeout=240, interval=0.5,
                 what="MM2's first committed source offsets")
    except AssertionError:
        print(log.read_text(errors="replace")[-8000:] if log.exists() else "no MM2 log")
        raise
    finally:
        mm2.kill()
        mm2.wait(timeout=30)
    at_stop = committed()
    mm2_wrote = read_all(bed.bootstrap, remote)
    # records produced while neither runs: only tributary can copy them
    produce(src, topic, some_records(1500, 3, "b", age_s=1800))
    source_records = read_all(src, topic)
    total = sum(len(r) for r in source_records.values())

    d = Driver(tmp_path, properties)
    drivers.append(d)
    try:
        wait_for(lambda: mirrored(bed.bootstrap, remote, total), timeout=180, interval=0.5,
                 what=f"{total} records in {remote}")
    except AssertionError:
        print(d.logs()[-8000:])
        raise
    assert_taken_over(source_records, read_all(bed.bootstrap, remote), at_stop, mm2_wrote)
    # tributary's offsets go on from MM2's in the same topic, in MM2's form
    last = {p: len(r) for p, r in source_records.items()}
    wait_for(lambda: committed() == last, timeout=60, interval=0.5,
             what="tributary's offsets at the end")
    assert d.stop() == 0
    logs = d.logs()
    assert not any(s in logs for s in SANITIZER), logs[-4000:]
    # the tasks MM2 left in the configs topic start: their target.cluster.* keys hold the
    # target's worker keys (offset.flush.interval.ms), which MM2's clients leave out
    assert "task failed" not in logs, logs[-4000:]


def run_bad(tmp_path, text, *args):
    path = tmp_path / "mm2.properties"
    path.write_text(text)
    d = Driver(tmp_path, path, args)
    code = d.proc.wait(timeout=60)
    return code, d.logs()


def test_a_bad_properties_file_names_the_key_and_line(bed, tmp_path):
    head = (f"clusters = a, b\n"
            f"a.bootstrap.servers = {bed.kafka2_bootstrap}\n"
            f"b.bootstrap.servers = {bed.bootstrap}\n")
    code, logs = run_bad(tmp_path, head + "# a flow\na->b.enabled = yes\n"
                         "a->c.topics = x\n")
    assert code == 1, logs
    assert "mm2.properties:5: a->b.enabled: yes is not true or false" in logs
    assert "mm2.properties:6: a->c.topics: a->c is not a flow" in logs

    code, logs = run_bad(tmp_path, "clusters = a, b\n"
                         f"a.bootstrap.servers = {bed.kafka2_bootstrap}\n"
                         "a->b.enabled = true\n")
    assert code == 1, logs
    assert "mm2.properties: b.bootstrap.servers: is not set" in logs

    code, logs = run_bad(tmp_path, head + "a->b.enabled = true\n"
                         "a->b.sync.topic.acls.enabled = true\n")
    assert code == 1, logs
    assert "mm2.properties:5: a->b.sync.topic.acls.enabled:" in logs

    code, logs = run_bad(tmp_path, head + "a->b.enabled = true\n", "--clusters", "c")
    assert code == 1, logs
    assert "--clusters names c" in logs

    code, logs = run_bad(tmp_path, "\n" + head.replace("a, b", "a, b, a"))
    assert code == 1, logs
    assert "mm2.properties:2: clusters: a is named twice" in logs

    code, logs = run_bad(tmp_path, "a.bootstrap.servers = x:1\n")
    assert code == 1, logs
    assert "mm2.properties: clusters: is not set" in logs
    for text in (logs,):
        assert not any(s in text for s in SANITIZER), text


def task_workers(bootstrap, status_topic, connector=""):
    """{task: worker_id} of connector's RUNNING tasks (every connector's when ""), as the
    flow's status topic says in the last record of each task's latest generation
    (Connect's records: key status-task-<connector>-<n>, value {state, worker_id,
    generation})."""
    found = {}
    for records in read_all(bootstrap, status_topic).values():
        for key, value, _, _ in records:
            name = (key or b"").decode()
            if name.startswith(f"status-task-{connector}") and value:
                state = json.loads(value)
                generation = state.get("generation", 0)
                if name not in found or generation >= found[name][0]:
                    found[name] = (generation, state.get("worker_id")
                                   if state.get("state") == "RUNNING" else None)
    return {k: w for k, (_, w) in found.items() if w is not None}


def test_two_nodes_share_the_flows_and_survive_a_kill(bed, tmp_path, drivers):
    """Two tributary --mirror nodes on the same file (dedicated.mode.enable.internal.rest
    set, as MM2's nodes need it) form one cluster per flow: the source connector's tasks
    run on both, and after kill -9 of one node the other takes its tasks and copies every
    record (at-least-once: a record may be copied twice only before the kill); a node
    started later takes a share of the tasks."""
    prefix = f"mmn{uuid.uuid4().hex[:10]}"
    source, target = f"s{uuid.uuid4().hex[:6]}", f"t{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-data", f"{source}.{prefix}-data"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 4)
    produce(src, topic, some_records(200, 4, "a", headers=True))
    properties = mm2_properties(bed, tmp_path / "mm2.properties", source, target, prefix)
    with open(properties, "a") as f:
        f.write("dedicated.mode.enable.internal.rest = true\n"
                "tasks.max = 4\n")
    nodes = []
    for n in range(2):
        folder = tmp_path / f"node{n}"
        folder.mkdir()
        nodes.append(Driver(folder, properties))
        drivers.append(nodes[-1])
    status_topic = f"mm2-status.{source}.internal"
    try:
        wait_mirrored(bed, topic, remote)
        wait_for(lambda: len(set(task_workers(bed.bootstrap, status_topic,
                                              "MirrorSourceConnector").values())) == 2,
                 timeout=120, interval=1, what="the source tasks on both nodes")
    except AssertionError:
        for d in nodes:
            print(d.logs()[-6000:])
        raise
    assert_same(read_all(src, topic), read_all(bed.bootstrap, remote), topic)
    before = task_workers(bed.bootstrap, status_topic, "MirrorSourceConnector")
    at_kill = read_all(src, topic)

    # kill -9 of the first node (its workers die with it), records produced after
    nodes[0].stop(signal.SIGKILL)
    produce(src, topic, some_records(200, 4, "b", headers=True))
    want = read_all(src, topic)
    total = sum(len(r) for r in want.values())
    try:
        wait_for(lambda: mirrored(bed.bootstrap, remote, total), timeout=120, interval=0.5,
                 what=f"{total} records in {remote}")
        wait_for(lambda: len(set(task_workers(bed.bootstrap, status_topic,
                                              "MirrorSourceConnector").values())) == 1
                 and len(task_workers(bed.bootstrap, status_topic,
                                      "MirrorSourceConnector")) == len(before),
                 timeout=60, interval=1, what="every source task on the node left")
    except AssertionError:
        print(nodes[1].logs()[-8000:])
        raise
    def hashable(records):
        return [(k, v, tuple(h), ts) for k, v, h, ts in records]

    got = read_all(bed.bootstrap, remote)
    for p, records in want.items():
        # every record, in order once repeats are left out; the ones produced after the
        # kill exactly once
        copied, records = hashable(got[p]), hashable(records)
        assert list(dict.fromkeys(copied)) == records, f"{remote} [{p}]: not the source's"
        for r in records[len(at_kill[p]):]:
            assert copied.count(r) == 1, f"{remote} [{p}]: {r} copied twice after the kill"

    # a node started later joins: the tasks spread again, and nothing is lost
    folder = tmp_path / "node2"
    folder.mkdir()
    nodes.append(Driver(folder, properties))
    drivers.append(nodes[-1])
    produce(src, topic, some_records(200, 4, "c", headers=True))
    want = read_all(src, topic)
    total = sum(len(r) for r in want.values())
    try:
        wait_for(lambda: len(set(task_workers(bed.bootstrap, status_topic).values())) == 2,
                 timeout=120, interval=1, what="tasks on the node that joined")
        wait_for(lambda: mirrored(bed.bootstrap, remote, total), timeout=120, interval=0.5,
                 what=f"{total} records in {remote}")
    except AssertionError:
        print(nodes[2].logs()[-8000:])
        raise
    got = read_all(bed.bootstrap, remote)
    for p, records in want.items():
        assert list(dict.fromkeys(hashable(got[p]))) == hashable(records), \
            f"{remote} [{p}]: not the source's"
    for d in nodes[1:]:
        assert d.stop() == 0
        logs = d.logs()
        assert not any(s in logs for s in SANITIZER), logs[-4000:]
