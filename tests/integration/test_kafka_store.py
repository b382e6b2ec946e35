"""The Kafka store (store/kafka/tb_store_kafka.h): tributary's store kept in Kafka Connect's three
internal topics, in Connect's formats. Driven through build/<dir>/kafka_store_tool (one JSON
command per line, tests/programs/kafka_store_tool.c) next to $TRIBUTARY_BIN; the topics are read back
with confluent-kafka, and Kafka Connect distributed, run from the bed's Connect jars, is the peer
that must read what the store writes and be read by it."""
import json
import os
import subprocess
from pathlib import Path

import pytest
import requests
from confluent_kafka import Producer

from confluent_kafka import Consumer, TopicPartition

from connect_peer import FILE_SINK, FILE_SOURCE, ConnectDistributed
from kafka_io import create_topic, java_partition, produce, read_raw, read_topic
from test_distributed import agreed_placement, cluster_settings
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

TOOL = Path(os.environ.get("TRIBUTARY_BIN", "build/test/tributary")).parent / "kafka_store_tool"
OFFSET_PARTITIONS = 25  # Connect's default for offset.storage.partitions


class StoreTool:
    """One kafka_store_tool process: the store opened on three topics."""

    def __init__(self, bed, topics, partitions=OFFSET_PARTITIONS, worker_id="tb-test:8083",
                 generation=0):
        assert TOOL.exists(), f"{TOOL} is built with the test build"
        self.proc = subprocess.Popen(
            [str(TOOL), "--bootstrap", bed.bootstrap, "--config-topic", topics["config"],
             "--offsets-topic", topics["offsets"], "--status-topic", topics["status"],
             "--partitions", str(partitions), "--worker-id", worker_id,
             "--generation", str(generation), "--timeout-ms", "30000"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def reply(self, op, **args):
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"kafka_store_tool ended: {self.proc.stderr.read()}"
        return json.loads(line)

    def call(self, op, **args):
        """The reply to a command that must succeed, without its "ok"."""
        reply = self.reply(op, **args)
        assert reply.pop("ok"), reply["error"]
        return reply

    def fail(self, op, **args):
        """The error of a command that must fail."""
        reply = self.reply(op, **args)
        assert not reply["ok"], reply
        return reply["error"]

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0
        err = self.proc.stderr.read()
        assert "Sanitizer" not in err and "runtime error" not in err, err
        return err


@pytest.fixture
def topics(bed):
    prefix = bed.unique_topic("kstore")
    return {"config": f"{prefix}-config", "offsets": f"{prefix}-offsets",
            "status": f"{prefix}-status"}


@pytest.fixture
def open_store(bed, topics):
    tools = []

    def start(**kwargs):
        tools.append(StoreTool(bed, topics, **kwargs))
        return tools[-1]

    yield start
    for tool in tools:
        if tool.proc.poll() is None:
            tool.close()


def latest(records):
    """key -> (partition, value) of the last record of each key."""
    return {key: (partition, value) for partition, key, value in records}


# ---- the store alone ----

def test_round_trip_reopen_and_tombstones(open_store, bed, topics):
    a = open_store(worker_id="w1:8083", generation=7)
    tasks = [{"task.class": "T", "file": "/in/0"}, {"task.class": "T", "file": "/in/1"}]
    a.call("put", name="c1", config={"connector.class": FILE_SOURCE, "file": "/in"},
           target="PAUSED", tasks=tasks)
    a.call("put", name="c2", config={"connector.class": FILE_SOURCE}, target="STOPPED",
           tasks=[])
    a.call("status_put", name="c1", task=-1, state="RUNNING")
    a.call("status_put", name="c1", task=1, state="FAILED", trace="boom\nat line 2")
    a.call("status_put", name="c2", task=-1, state="STOPPED")
    a.call("offsets_put", name="c1", offsets=[
        {"partition": {"filename": "/in/0"}, "offset": {"position": 42}},
        {"partition": {"filename": "/in/1"}, "offset": {"position": 7}}])
    a.call("offsets_put", name="c1", offsets=[{"partition": {"filename": "/in/1"},
                                               "offset": None}])
    a.call("delete", name="c2")
    a.close()

    b = open_store()
    assert b.call("load")["connectors"] == [
        {"name": "c1", "config": {"connector.class": FILE_SOURCE, "file": "/in"},
         "target": "PAUSED", "tasks": tasks}]
    assert b.call("status_get", name="c1")["status"] == {
        "connector": {"state": "RUNNING", "worker_id": "w1:8083", "generation": 7},
        "tasks": {"1": {"state": "FAILED", "trace": "boom\nat line 2", "worker_id": "w1:8083",
                        "generation": 7}}}
    assert b.call("offsets_get", name="c1")["offsets"] == [
        {"partition": {"filename": "/in/0"}, "offset": {"position": 42}}]
    assert b.call("offsets_get", name="c2")["offsets"] == []
    assert b.fail("status_get", name="c2") == "no status for connector c2"

    config = read_topic(bed, topics["config"])
    assert [(k.decode(), v) for _, k, v in config] == [
        ("target-state-c1", b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        ("connector-c1", b'{"properties":{"connector.class":"%s","file":"/in"}}'
         % FILE_SOURCE.encode()),
        ("task-c1-0", b'{"properties":{"file":"/in/0","task.class":"T"}}'),
        ("task-c1-1", b'{"properties":{"file":"/in/1","task.class":"T"}}'),
        ("commit-c1", b'{"tasks":2}'),
        ("target-state-c2", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        ("connector-c2", b'{"properties":{"connector.class":"%s"}}' % FILE_SOURCE.encode()),
        ("connector-c2", None),  # the tombstones of a deleted connector
        ("target-state-c2", None)]
    # Kafka's own console consumer shows the same records (4.x renamed its --property, and
    # names the old one deprecated on stdout)
    option = "--property" if bed.facts["BED_KAFKA_VERSION"].startswith("3.") \
        else "--formatter-property"
    shown = bed.tool("console-consumer", "--bootstrap-server", bed.bootstrap, "--topic",
                     topics["config"], "--from-beginning", "--max-messages", str(len(config)),
                     option, "print.key=true", option, "key.separator=|", timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        f"{k.decode()}|{'null' if v is None else v.decode()}" for _, k, v in config]
    status = latest(read_topic(bed, topics["status"]))
    assert status[b"status-connector-c1"][1] == (
        b'{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":7}')
    assert status[b"status-connector-c2"][1] is None
    offsets = latest(read_topic(bed, topics["offsets"]))
    assert offsets[b'["c1",{"filename":"/in/0"}]'][1] == b'{"position":42}'
    assert offsets[b'["c1",{"filename":"/in/1"}]'][1] is None


def test_unchanged_put_writes_nothing_and_pause_writes_only_the_target(open_store, bed,
                                                                       topics):
    s = open_store()
    row = {"name": "c", "config": {"connector.class": FILE_SOURCE}, "tasks": [{"k": "v"}]}
    s.call("put", target="STARTED", **row)
    s.call("put", target="STARTED", **row)
    s.call("put", target="PAUSED", **row)
    keys = [k.decode() for _, k, _ in read_topic(bed, topics["config"])]
    assert keys == ["target-state-c", "connector-c", "task-c-0", "commit-c",
                    "target-state-c"]
    # Connect's task configs are maps of strings: anything else is refused, not written
    assert s.fail("put", **{**row, "tasks": [{"k": 1}]}) == (
        "store: put connector 'c': task config 0 value of 'k' is not a string")


def test_refresh_reports_what_other_writers_changed(open_store):
    reader = open_store()
    writer = open_store()
    assert reader.call("refresh")["changed"] == []
    writer.call("put", name="b", config={"connector.class": FILE_SOURCE}, tasks=[])
    writer.call("put", name="a", config={"connector.class": FILE_SOURCE}, tasks=[{"x": "1"}])
    writer.call("status_put", name="a", task=-1, state="RUNNING")
    writer.call("offsets_put", name="a", offsets=[{"partition": {"p": 1},
                                                   "offset": {"o": 2}}])
    assert reader.call("refresh")["changed"] == ["b", "a"]
    assert [c["name"] for c in reader.call("load")["connectors"]] == ["a", "b"]
    assert reader.call("status_get", name="a")["status"]["connector"]["state"] == "RUNNING"
    assert reader.call("offsets_get", name="a")["offsets"] == [
        {"partition": {"p": 1}, "offset": {"o": 2}}]
    assert reader.call("refresh")["changed"] == []

    reader.call("put", name="c", config={"connector.class": FILE_SOURCE}, tasks=[])
    assert reader.call("refresh")["changed"] == []  # its own write is no news
    writer.call("delete", name="b")
    writer.call("put", name="a", config={"connector.class": FILE_SOURCE}, target="PAUSED",
                tasks=[{"x": "1"}])
    assert reader.call("refresh")["changed"] == ["b", "a"]
    assert [(c["name"], c["target"]) for c in reader.call("load")["connectors"]] == [
        ("a", "PAUSED"), ("c", "STARTED")]


def test_fencing_records_as_connect_writes_and_reads_them(open_store, bed, topics):
    """KIP-618's tasks-fencing-<c> {"task-count":N}: task configs committed after a
    connector's last one wait for a fencing ("pending"), as Connect's reader decides; a
    record another writer (Connect's leader, here a plain producer) wrote is read."""
    store = open_store()
    assert store.call("fencing_get", name="a")["fencing"] == {"task_count": -1,
                                                               "pending": False}
    store.call("put", name="a", config={"connector.class": FILE_SOURCE},
               tasks=[{"x": "1"}, {"x": "2"}])
    assert store.call("fencing_get", name="a")["fencing"] == {"task_count": -1,
                                                               "pending": True}
    store.call("fencing_put", name="a", count=2)
    assert store.call("fencing_get", name="a")["fencing"] == {"task_count": 2,
                                                               "pending": False}
    assert latest(read_topic(bed, topics["config"]))[b"tasks-fencing-a"] == (
        0, b'{"task-count":2}')

    producer = Producer({"bootstrap.servers": bed.bootstrap})
    for key, value in ((b"task-a-0", b'{"properties":{"x":"3"}}'),
                       (b"commit-a", b'{"tasks":1}')):
        producer.produce(topics["config"], key=key, value=value)
    assert producer.flush(30) == 0
    store.call("refresh")
    assert store.call("fencing_get", name="a")["fencing"] == {"task_count": 2,
                                                               "pending": True}
    producer.produce(topics["config"], key=b"tasks-fencing-a", value=b'{"task-count":1}')
    assert producer.flush(30) == 0
    store.call("refresh")
    assert store.call("fencing_get", name="a")["fencing"] == {"task_count": 1,
                                                               "pending": False}
    reopened = open_store()
    assert reopened.call("fencing_get", name="a")["fencing"] == {"task_count": 1,
                                                                  "pending": False}


def test_a_status_from_a_newer_generation_of_another_worker_is_kept(open_store):
    new = open_store(worker_id="new:8083", generation=5)
    new.call("status_put", name="c", task=0, state="RUNNING")
    old = open_store(worker_id="old:8083", generation=4)
    old.call("status_put", name="c", task=0, state="UNASSIGNED")  # a zombie's last word
    old.call("status_put", name="c", task=-1, state="RUNNING")  # nobody's newer: written
    assert new.call("refresh")["changed"] == []
    status = new.call("status_get", name="c")["status"]
    assert status["tasks"]["0"] == {"state": "RUNNING", "worker_id": "new:8083",
                                    "generation": 5}
    assert status["connector"]["worker_id"] == "old:8083"
    new.call("status_put", name="c", task=-1, state="FAILED", trace="t")  # newer than old's
    assert new.call("status_get", name="c")["status"]["connector"]["state"] == "FAILED"


def test_topics_are_created_compacted_with_the_configured_partitions(open_store, bed,
                                                                     topics):
    open_store(partitions=3).close()
    for role, partitions in (("config", 1), ("offsets", 3), ("status", 3)):
        described = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--describe",
                             "--topic", topics[role])
        assert described.returncode == 0, described.stderr
        assert f"PartitionCount: {partitions}\t" in described.stdout
        assert "cleanup.policy=compact" in described.stdout


@pytest.mark.parametrize("role, extra, message", [
    ("config", ["--config", "cleanup.policy=compact"], "config.storage.topic '{}': refused: has 2 partitions; it must have "
                   "exactly one"),
    ("status", ["--config", "cleanup.policy=delete"],
     "status.storage.topic '{}': refused: has cleanup.policy=delete; an internal topic "
     "must have cleanup.policy=compact"),
])
def test_topics_connect_would_refuse_are_refused(bed, topics, role, extra, message):
    created = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--create", "--topic",
                       topics[role], "--partitions", "2", *extra)
    assert created.returncode == 0, created.stderr
    tool = StoreTool(bed, topics)
    assert tool.proc.wait(timeout=60) == 2
    assert message.format(topics[role]) in tool.proc.stderr.read()


def test_no_automatic_creation_refuses_missing_internal_topics(start_worker, bed):
    group = bed.unique_topic("nocreate")
    settings = {**cluster_settings(bed, group),
                "internal.topics.automatic.creation.enable": "false"}
    w = start_worker(settings, wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=60) == 1
    logs = w.logs()
    assert "internal.topics.automatic.creation.enable is false and these internal " \
           "topics do not exist: " \
           f"{group}-configs (config.storage.topic), {group}-offsets " \
           f"(offset.storage.topic), {group}-status (status.storage.topic), " \
           f"{group}.tributary-cluster (group.id)" in logs
    listed = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    assert group not in listed.stdout  # nothing was created
    # once an administrator created them, the worker takes them as they are
    for topic, partitions in ((f"{group}-configs", 1), (f"{group}-offsets", 3),
                              (f"{group}-status", 2), (f"{group}.tributary-cluster", 1)):
        created = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--create",
                           "--topic", topic, "--partitions", str(partitions),
                           "--config", "cleanup.policy=compact")
        assert created.returncode == 0, created.stderr
    start_worker(settings)


def test_offset_keys_land_where_javas_partitioner_puts_them(open_store, bed, topics):
    s = open_store()
    partitions = [{"filename": f"/data/file-{i}.txt"} for i in range(40)]
    s.call("offsets_put", name="src", offsets=[
        {"partition": p, "offset": {"position": i}} for i, p in enumerate(partitions)])
    records = read_topic(bed, topics["offsets"])
    assert len(records) == 40
    used = set()
    for partition, key, _ in records:
        assert partition == java_partition(key, OFFSET_PARTITIONS), key
        used.add(partition)
    assert len(used) > 10  # spread, not all in one partition


def test_a_partition_written_again_reuses_the_key_bytes_it_was_read_with(open_store, bed,
                                                                         topics):
    """A Java connector's partition map may serialise its keys in any order (a HashMap's):
    the store writes that partition again under the very key it read, so the record lands in
    the same partition and compaction replaces it."""
    from confluent_kafka import Producer
    open_store().close()  # creates the topics
    java_key = b'["src",{"table":"t","db":"d"}]'  # not sorted
    producer = Producer({"bootstrap.servers": bed.bootstrap})
    producer.produce(topics["offsets"], key=java_key, value=b'{"lsn":1}',
                     partition=java_partition(java_key, OFFSET_PARTITIONS))
    assert producer.flush(30) == 0

    s = open_store()
    assert s.call("offsets_get", name="src")["offsets"] == [
        {"partition": {"db": "d", "table": "t"}, "offset": {"lsn": 1}}]
    s.call("offsets_put", name="src", offsets=[{"partition": {"db": "d", "table": "t"},
                                                "offset": {"lsn": 2}}])
    s.call("offsets_put", name="src", offsets=[{"partition": {"db": "e", "table": "t"},
                                                "offset": {"lsn": 9}}])
    records = [(p, k, v) for p, k, v in read_topic(bed, topics["offsets"])]
    assert (java_partition(java_key, OFFSET_PARTITIONS), java_key, b'{"lsn":1}') in records
    assert (java_partition(java_key, OFFSET_PARTITIONS), java_key, b'{"lsn":2}') in records
    assert any(k == b'["src",{"db":"e","table":"t"}]' for _, k, _ in records)  # a new one


# ---- Kafka Connect distributed (the bed's BED_CONNECT_VERSION) on the same topics ----

@pytest.fixture
def connect(bed, topics, tmp_path):
    started = []
    group = bed.unique_topic("kstore-connect")

    def start():
        started.append(ConnectDistributed(bed, tmp_path / f"connect{len(started)}", group,
                                          topics, OFFSET_PARTITIONS))
        return started[-1]

    yield start
    for c in started:
        if c.proc.poll() is None:
            c.stop()


def test_reads_what_connect_wrote_and_connect_reads_what_it_writes(connect, open_store, bed,
                                                                    topics, tmp_path):
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\ntwo\nthree\n")
    config = {"connector.class": FILE_SOURCE, "file": str(source_file),
              "topic": bed.unique_topic("kstore-lines"), "tasks.max": "1"}
    partition = {"filename": str(source_file)}
    end = {"position": len(source_file.read_bytes())}

    java = connect()

    java.create("fsrc", config)
    wait_for(lambda: java.get("/connectors/fsrc/offsets")["offsets"] == [
        {"partition": partition, "offset": end}], timeout=60, what="Connect's source offset")
    assert requests.put(f"{java.url}/connectors/fsrc/pause", timeout=30).status_code == 202
    wait_for(lambda: java.get("/connectors/fsrc/status")["connector"]["state"] == "PAUSED",
             timeout=60, what="the connector paused")
    java_config = java.get("/connectors/fsrc/config")
    java_tasks = [t["config"] for t in java.get("/connectors/fsrc/tasks")]
    java.stop()

    # Connect's records, read by the store
    ours = open_store(worker_id="tb:1")
    loaded = ours.call("load")["connectors"]
    assert loaded == [{"name": "fsrc", "config": java_config, "target": "PAUSED",
                       "tasks": java_tasks}]
    assert ours.call("offsets_get", name="fsrc")["offsets"] == [
        {"partition": partition, "offset": end}]
    status = ours.call("status_get", name="fsrc")["status"]
    # a stopping Connect worker marks what it ran UNASSIGNED
    assert status["connector"]["state"] == "UNASSIGNED"
    assert status["connector"]["worker_id"] == f"127.0.0.1:{java.port}"
    assert status["connector"]["generation"] >= 1
    assert status["tasks"]["0"]["state"] == "UNASSIGNED"

    # the store's records, read by Connect: a connector of its own, and fsrc's offset moved
    mine = {"connector.class": FILE_SOURCE, "file": str(source_file), "name": "tbsrc",
            "topic": config["topic"], "tasks.max": "1"}
    ours.call("put", name="tbsrc", config=mine, target="STOPPED",
              tasks=[{**mine, "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask"}])
    ours.call("offsets_put", name="tbsrc", offsets=[{"partition": partition,
                                                     "offset": {"position": 4}}])
    ours.call("offsets_put", name="fsrc", offsets=[{"partition": partition,
                                                    "offset": {"position": 8}}])
    ours.close()

    # the same key as Connect's, hence the same partition: compaction keeps the newest
    fsrc_key = json.dumps(["fsrc", partition], separators=(",", ":")).encode()
    placed = [(p, v) for p, k, v in read_topic(bed, topics["offsets"]) if k == fsrc_key]
    assert {p for p, _ in placed} == {java_partition(fsrc_key, OFFSET_PARTITIONS)}
    # Connect may have committed a line's offset before the end; the store's is the newest
    values = [v for _, v in placed]
    assert json.dumps(end).replace(" ", "").encode() in values
    assert values[-1] == b'{"position":8}'
    status_keys = {k: v for _, k, v in read_topic(bed, topics["status"])}
    # Connect's order, as ours; Connect 4.1 and later add the connector's optional version
    assert list(json.loads(status_keys[b"status-connector-fsrc"])) in (
        ["state", "trace", "worker_id", "generation"],
        ["state", "trace", "worker_id", "generation", "version"])

    java = connect()
    wait_for(lambda: sorted(requests.get(f"{java.url}/connectors", timeout=30).json()) == [
        "fsrc", "tbsrc"], timeout=60, what="Connect to list both connectors")
    assert java.get("/connectors/tbsrc/config") == mine
    wait_for(lambda: java.get("/connectors/tbsrc/status")["connector"]["state"] == "STOPPED",
             timeout=60, what="our connector STOPPED in Connect")
    assert java.get("/connectors/tbsrc/offsets")["offsets"] == [
        {"partition": partition, "offset": {"position": 4}}]
    assert java.get("/connectors/fsrc/offsets")["offsets"] == [
        {"partition": partition, "offset": {"position": 8}}]
    java.stop()


def workers_on_connects_topics(start_worker, bed, java, topics, count=2):
    """tributary workers in the group and on the three topics of the stopped Connect java."""
    settings = {**cluster_settings(bed, java.group),
                "config.storage.topic": topics["config"],
                "offset.storage.topic": topics["offsets"],
                "status.storage.topic": topics["status"],
                "offset.storage.partitions": str(OFFSET_PARTITIONS),
                "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
    return [start_worker(settings) for _ in range(count)]


def test_a_tributary_cluster_goes_on_where_a_stopped_connect_cluster_left_off(
        connect, start_worker, bed, topics, tmp_path):
    """docs/OPERATIONS.md, "Taking over from Kafka Connect": Connect's FileStreamSource is
    continued by tributary workers on Connect's three topics and group.id from Connect's
    last committed source offset. Connect commits offsets periodically, at least once: the
    lines it wrote after its last commit are written again, so the topic must hold every line,
    in order, each once, except that the lines between Connect's last committed offset and
    the last line Connect wrote may appear twice (once from each)."""
    source_file = tmp_path / "in.txt"
    lines = [f"line-{i:05d}" for i in range(3000)]
    source_file.write_text("".join(f"{line}\n" for line in lines))
    topic = bed.unique_topic("takeover")
    config = {"connector.class": FILE_SOURCE, "file": str(source_file), "topic": topic,
              "tasks.max": "1", "batch.size": "100"}
    partition = {"filename": str(source_file)}

    java = connect()

    java.create("fsrc", config)
    wait_for(lambda: java.get("/connectors/fsrc/offsets")["offsets"], timeout=60,
             what="Connect's first committed source offset")
    java_config = java.get("/connectors/fsrc/config")
    java.stop()

    # Connect's last committed offset, as its offsets topic holds it
    key = json.dumps(["fsrc", partition], separators=(",", ":")).encode()
    committed = [json.loads(v) for _, k, v in read_topic(bed, topics["offsets"]) if k == key]
    position = committed[-1]["position"]
    ends = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines) + 1)]
    assert position in ends, position  # an offset after a whole line
    resumed_at = ends.index(position)  # the first line after Connect's last commit
    # lines appended while no worker runs: only tributary can write them
    more = [f"more-{i:05d}" for i in range(500)]
    with source_file.open("a") as f:
        f.write("".join(f"{line}\n" for line in more))
    everything = lines + more

    workers = workers_on_connects_topics(start_worker, bed, java, topics)
    placed = wait_for(lambda: agreed_placement(workers, ["fsrc"], {"fsrc": 1}), timeout=60,
                      what="Connect's connector RUNNING on tributary, as every worker shows")
    assert set(placed.values()) <= {w.url.removeprefix("http://") for w in workers}
    assert workers[1].get("/connectors/fsrc/config").json() == java_config

    values = read_raw(bed.bootstrap, topic, lambda v: v[-1:] == [everything[-1]],
                      timeout=60, decode=lambda value: value.decode())
    connect_wrote = len(values) - (len(everything) - resumed_at)
    print(f"Connect committed {resumed_at} lines, wrote {connect_wrote}; "
          f"{connect_wrote - resumed_at} written twice")
    assert resumed_at <= connect_wrote <= len(lines), (resumed_at, len(values))
    assert values[:connect_wrote] == everything[:connect_wrote]  # Connect's, each once
    assert values[connect_wrote:] == everything[resumed_at:]  # tributary's, from the offset
    end = {"position": len(source_file.read_bytes())}
    wait_for(lambda: workers[0].get("/connectors/fsrc/offsets").json()["offsets"] == [
        {"partition": partition, "offset": end}], timeout=60,
        what="tributary's offset at the end of the file")
    # the workers sign with the session key Connect's leader wrote, still fresh
    keys = [json.loads(v) for _, k, v in read_topic(bed, topics["config"])
            if k == b"session-key"]
    assert len(keys) == 1 and keys[0]["algorithm"] == "HmacSHA256", keys
    assert f"created at {keys[0]['creation-timestamp']} ms is in use" in workers[0].logs()


def committed_offset(bed, group, topic):
    """The offset group has committed on partition 0 of topic, or None."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": group})
    try:
        offset = consumer.committed([TopicPartition(topic, 0)], timeout=30)[0].offset
        return offset if offset >= 0 else None
    finally:
        consumer.close()


def test_a_tributary_cluster_continues_a_stopped_connect_clusters_sink(
        connect, start_worker, bed, topics, tmp_path):
    """docs/OPERATIONS.md, "Taking over from Kafka Connect", for a sink: Connect's
    FileStreamSink commits its consumer group's offsets (group connect-<name>); tributary
    workers on Connect's topics run the same connector in the same group, so they start at
    Connect's last committed offset. The file gets every record, in order: Connect's, then
    tributary's from that offset, so that only the records between Connect's last commit
    and the last one it wrote may be written twice."""
    topic = bed.unique_topic("takeover-sink")
    create_topic(bed, topic, 1)
    records = [f"rec-{i:05d}" for i in range(3000)]
    produce(bed.bootstrap, topic, [(0, None, r.encode()) for r in records])
    sink_file = tmp_path / "out.txt"
    config = {"connector.class": FILE_SINK, "file": str(sink_file), "topics": topic,
              "tasks.max": "1"}

    java = connect()
    java.create("fsink", config)
    wait_for(lambda: committed_offset(bed, "connect-fsink", topic) == len(records),
             timeout=60, what="Connect's sink to commit every record")
    java.stop()
    committed = committed_offset(bed, "connect-fsink", topic)
    connect_wrote = output_lines(sink_file)
    assert connect_wrote == records  # Connect's own sink, for the comparison below
    # records produced while no worker runs: only tributary can write them
    more = [f"more-{i:05d}" for i in range(500)]
    produce(bed.bootstrap, topic, [(0, None, r.encode()) for r in more])

    workers = workers_on_connects_topics(start_worker, bed, java, topics)
    wait_for(lambda: agreed_placement(workers, ["fsink"], {"fsink": 1}), timeout=60,
             what="Connect's sink RUNNING on tributary, as every worker shows")
    everything = records + more

    def written_to_the_end():
        lines = output_lines(sink_file)
        return lines if lines[-1:] == [everything[-1]] else None
    lines = wait_for(written_to_the_end, timeout=60, what="tributary to write the last record")
    assert lines == connect_wrote + everything[committed:]
    assert committed == len(records)  # so nothing was written twice
    wait_for(lambda: committed_offset(bed, "connect-fsink", topic) == len(everything),
             timeout=60, what="tributary to commit in Connect's group")
