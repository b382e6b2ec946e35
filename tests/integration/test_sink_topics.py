"""Kafka -> FileStreamSink: which topics and partitions a sink reads as they
change under it. topics.regex picks up existing and newly created topics whose
whole name matches, new partitions of a subscribed topic are read from their
start, auto.offset.reset=none stops a partition with nothing to start from, and records
deleted at the start of a partition before they were read (while the connector
was stopped, or paused) are skipped once, logged, without failing the task."""
import json

import pytest
from confluent_kafka.admin import AdminClient

from kafka_io import create_topic, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "offset.flush.interval.ms": "200"}

SINK_CLASS = "org.apache.kafka.connect.file.FileStreamSinkConnector"

# librdkafka notices new topics and partitions at its periodic metadata
# refresh; the engine leaves topic.metadata.refresh.interval.ms at its
# default of 5 minutes, so the tests shorten it through the override policy.
FAST_METADATA = {"consumer.override.topic.metadata.refresh.interval.ms": "1000"}

# a topic seen by librdkafka's refresh, a rebalance, and the records read:
# generous, the CI machine has 2 loaded cores
DISCOVERY_TIMEOUT = 90




def records(tag, partition, first, count):
    """(partition, key, value) records valued "<tag>:<partition>:<n>"."""
    return [(partition, None, f"{tag}:{partition}:{n}".encode())
            for n in range(first, first + count)]


def by_partition(path):
    """{(tag, partition): [n, ...]} in file order."""
    seen = {}
    for line in output_lines(path):
        tag, partition, n = line.rsplit(":", 2)
        seen.setdefault((tag, int(partition)), []).append(int(n))
    return seen


def file_sink(w, name, path, **extra):
    config = {"connector.class": SINK_CLASS, "file": str(path), **FAST_METADATA, **extra}
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def stored_offsets(w, name):
    """{(topic, partition): offset} from the offsets API."""
    reply = w.get(f"/connectors/{name}/offsets")
    assert reply.status_code == 200, reply.text
    return {(o["partition"]["kafka_topic"], o["partition"]["kafka_partition"]):
            o["offset"]["kafka_offset"] for o in reply.json()["offsets"]}


def assert_running(w, name):
    status = w.get(f"/connectors/{name}/status").json()
    assert status["connector"]["state"] == "RUNNING", status
    assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status
    assert all(t.get("restarts", 0) == 0 for t in status["tasks"]), status


def partition_count(bed, topic):
    admin = AdminClient({"bootstrap.servers": bed.bootstrap})
    metadata = admin.list_topics(topic, timeout=10).topics.get(topic)
    return 0 if metadata is None or metadata.error else len(metadata.partitions)


def skipped_by_retention(w, name, topic):
    """tributary_sink_records_skipped_total{reason="retention"} of topic-0, or None."""
    sample = (f'tributary_sink_records_skipped_total{{connector="{name}",task="0",'
              f'topic="{topic}",partition="0",reason="retention"}} ')
    for line in w.get("/metrics").text.splitlines():
        if line.startswith(sample):
            return float(line[len(sample):])
    return None


def delete_records(bed, folder, topic, partition, before):
    """Deletes the records of topic-partition below offset `before` with Kafka's
    kafka-delete-records and an offset JSON file written in folder."""
    spec = folder / f"delete-{topic}-{partition}.json"
    with open(spec, "w") as f:
        json.dump({"version": 1, "partitions": [
            {"topic": topic, "partition": partition, "offset": before}]}, f)
    result = bed.tool("delete-records", "--bootstrap-server", bed.bootstrap,
                      "--offset-json-file", spec)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"partition: {topic}-{partition}\tlow_watermark: {before}" in result.stdout, (
        result.stdout + result.stderr)


def test_topics_regex_reads_matching_topics_and_new_ones(start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    prefix = bed.unique_topic("rx")
    first, second, late = f"{prefix}-a", f"{prefix}-b", f"{prefix}-late"
    # contains a match but does not start with one: Connect matches the
    # whole name, so this one is not read
    other = f"x{prefix}-c"
    create_topic(bed, first, 2)
    create_topic(bed, second, 1)
    create_topic(bed, other, 1)
    produce(bed.bootstrap, first, records("a", 0, 0, 30) + records("a", 1, 0, 20))
    produce(bed.bootstrap, second, records("b", 0, 0, 25))
    produce(bed.bootstrap, other, records("other", 0, 0, 10))

    out = tmp_path / "out.txt"
    file_sink(w, "rx", out, **{"topics.regex": f"{prefix}-.*"})
    existing = {("a", 0): list(range(30)), ("a", 1): list(range(20)),
                ("b", 0): list(range(25))}
    wait_for(lambda: by_partition(out) == existing, timeout=DISCOVERY_TIMEOUT,
             interval=0.2, what="every record of the matching topics, in order")

    # a matching topic created while the connector runs is picked up
    create_topic(bed, late, 2)
    produce(bed.bootstrap, late, records("late", 0, 0, 15) + records("late", 1, 0, 12))
    # and what the old topics get afterwards goes on from where it was
    produce(bed.bootstrap, first, records("a", 1, 20, 5))
    expected = {**existing, ("a", 1): list(range(25)), ("late", 0): list(range(15)),
                ("late", 1): list(range(12))}
    wait_for(lambda: by_partition(out) == expected, timeout=DISCOVERY_TIMEOUT,
             interval=0.2, what=f"the records of {late}, created after the connector")
    assert f"partition {late}-0 starts at offset 0 (reset)" in w.logs()

    wait_for(lambda: stored_offsets(w, "rx") == {
        (first, 0): 30, (first, 1): 25, (second, 0): 25, (late, 0): 15, (late, 1): 12},
        timeout=30, what="the offsets of every matching partition recorded")
    assert not any(tag == "other" for tag, _ in by_partition(out)), "non-matching topic"
    assert other not in w.logs()
    # GET /connectors/{name}/topics: the topics it read, found through the regex
    reply = w.get("/connectors/rx/topics")
    assert reply.status_code == 200, reply.text
    assert sorted(reply.json()["rx"]["topics"]) == sorted([first, second, late])
    assert_running(w, "rx")


def test_topics_regex_matches_the_whole_name(start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    prefix = bed.unique_topic("rxfull")
    wanted, longer = f"{prefix}-orders", f"{prefix}-orders-dlq"
    create_topic(bed, wanted, 1)
    create_topic(bed, longer, 1)
    produce(bed.bootstrap, wanted, records("orders", 0, 0, 5))
    produce(bed.bootstrap, longer, records("dlq", 0, 0, 5))
    out = tmp_path / "out.txt"
    # Connect: Pattern.matcher(topic).matches(), so only the exact name
    file_sink(w, "rxfull", out, **{"topics.regex": f"{prefix}-(orders|payments)"})
    wait_for(lambda: by_partition(out).get(("orders", 0)) == list(range(5)),
             timeout=DISCOVERY_TIMEOUT, interval=0.2, what="the records of the match")
    wait_for(lambda: stored_offsets(w, "rxfull").get((wanted, 0)) == 5, timeout=30,
             what="the match's offset recorded")
    assert ("dlq", 0) not in by_partition(out), f"{longer} does not match as a whole"
    assert (longer, 0) not in stored_offsets(w, "rxfull")


def test_new_partitions_of_a_subscribed_topic_are_read(start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic = bed.unique_topic("grow")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, records("g", 0, 0, 20))
    out = tmp_path / "out.txt"
    file_sink(w, "grow", out, topics=topic)
    wait_for(lambda: by_partition(out) == {("g", 0): list(range(20))}, timeout=60,
             interval=0.2, what="the records of partition 0")

    altered = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--alter",
                       "--topic", topic, "--partitions", "3")
    assert altered.returncode == 0, altered.stderr
    wait_for(lambda: partition_count(bed, topic) == 3, timeout=30, interval=0.2,
             what="the broker to report 3 partitions")
    produce(bed.bootstrap, topic,
            records("g", 1, 0, 15) + records("g", 2, 0, 10) + records("g", 0, 20, 5))
    expected = {("g", 0): list(range(25)), ("g", 1): list(range(15)),
                ("g", 2): list(range(10))}
    wait_for(lambda: by_partition(out) == expected, timeout=DISCOVERY_TIMEOUT,
             interval=0.2, what="the records of the new partitions 1 and 2")
    for partition in (1, 2):
        assert f"partition {topic}-{partition} starts at offset 0 (reset)" in w.logs()

    # records that arrive later on a new partition follow on it
    produce(bed.bootstrap, topic, records("g", 2, 10, 5))
    expected[("g", 2)] = list(range(15))
    wait_for(lambda: by_partition(out) == expected, timeout=60, interval=0.2,
             what="later records of partition 2")
    wait_for(lambda: stored_offsets(w, "grow") == {(topic, 0): 25, (topic, 1): 15,
                                                   (topic, 2): 15},
             timeout=30, what="the offsets of the three partitions recorded")
    assert_running(w, "grow")


# tributary resolves the start of a partition itself (sink_start.c): a
# stored offset below the log start continues at the log start whatever
# auto.offset.reset says; that setting only decides for a partition with no
# offset at all. (Kafka Connect hands the out-of-range offset to its
# consumer: latest would jump to the end and lose records 8 to 12, none
# would fail the task. tributary accepts =none, which stops only a partition
# with no offset at all: test_reset_none_stops_a_partition_with_no_offset.)
@pytest.mark.parametrize("reset", [None, "latest"])
def test_records_deleted_while_stopped_are_skipped_once(start_worker, bed, tmp_path,
                                                        reset):
    w = start_worker(STRINGS)
    topic = bed.unique_topic("gap")
    create_topic(bed, topic, 1)
    out = tmp_path / "out.txt"
    extra = {} if reset is None else {"consumer.override.auto.offset.reset": reset}
    file_sink(w, "gap", out, topics=topic, **extra)
    # assigned (at 0, the end of the empty partition, with either policy)
    # before anything is produced
    wait_for(lambda: f"partition {topic}-0 starts at offset 0 (reset)" in w.logs(),
             timeout=60, what="the partition to be assigned")
    produce(bed.bootstrap, topic, records("r", 0, 0, 5))
    wait_for(lambda: by_partition(out) == {("r", 0): list(range(5))}, timeout=60,
             interval=0.2, what="the first 5 records")
    wait_for(lambda: stored_offsets(w, "gap") == {(topic, 0): 5}, timeout=30,
             what="offset 5 recorded")
    assert w.put("/connectors/gap/stop").status_code == 204
    wait_for(lambda: w.get("/connectors/gap/status").json()["connector"]["state"]
             == "STOPPED", timeout=30, what="the connector to stop")

    # while it is stopped: offsets 5..9 are written, 5..7 deleted (the log
    # now starts at 8, past the stored 5), 10..12 written
    produce(bed.bootstrap, topic, records("r", 0, 5, 5))
    delete_records(bed, tmp_path, topic, 0, 8)
    produce(bed.bootstrap, topic, records("r", 0, 10, 3))
    assert stored_offsets(w, "gap") == {(topic, 0): 5}

    assert w.put("/connectors/gap/resume").status_code == 202
    expected = {("r", 0): list(range(5)) + list(range(8, 13))}
    wait_for(lambda: by_partition(out) == expected, timeout=60, interval=0.2,
             what="records 8 to 12, the ones still in the log")
    wait_for(lambda: stored_offsets(w, "gap") == {(topic, 0): 13}, timeout=30,
             what="offset 13 recorded")
    skipped = (f"partition {topic}-0 starts at offset 8 (stored): offsets 5 to 7 were "
               "deleted by retention before they were read; continuing at 8")
    assert w.logs().count(skipped) == 1, w.logs()
    assert skipped_by_retention(w, "gap", topic) == 3

    # it keeps going
    produce(bed.bootstrap, topic, records("r", 0, 13, 2))
    expected[("r", 0)] += [13, 14]
    wait_for(lambda: by_partition(out) == expected, timeout=60, interval=0.2,
             what="records 13 and 14")
    assert_running(w, "gap")
    assert w.logs().count("deleted by retention") == 1


def test_records_deleted_while_paused_are_skipped_once(start_worker, bed, tmp_path):
    """The task keeps running: librdkafka reports the offset out of range on resume,
    and the engine decides as at start, logs the range once and reads on."""
    w = start_worker(STRINGS)
    topic = bed.unique_topic("gaprun")
    create_topic(bed, topic, 1)
    out = tmp_path / "out.txt"
    file_sink(w, "gaprun", out, topics=topic)
    produce(bed.bootstrap, topic, records("r", 0, 0, 5))
    wait_for(lambda: by_partition(out) == {("r", 0): list(range(5))}, timeout=60,
             interval=0.2, what="the first 5 records")
    assert w.put("/connectors/gaprun/pause").status_code == 202
    wait_for(lambda: w.get("/connectors/gaprun/status").json()["tasks"][0]["state"]
             == "PAUSED", timeout=30, what="the task to pause")

    produce(bed.bootstrap, topic, records("r", 0, 5, 5))
    delete_records(bed, tmp_path, topic, 0, 8)
    assert w.put("/connectors/gaprun/resume").status_code == 202
    expected = {("r", 0): list(range(5)) + [8, 9]}
    wait_for(lambda: by_partition(out) == expected, timeout=60, interval=0.2,
             what="records 8 and 9, the ones still in the log")
    skipped = (f"partition {topic}-0: offsets 5 to 7 were deleted by retention before "
               "they were read; continuing at 8")
    wait_for(lambda: skipped in w.logs(), timeout=30, what="the skipped range logged")
    assert skipped_by_retention(w, "gaprun", topic) == 3
    produce(bed.bootstrap, topic, records("r", 0, 10, 2))
    expected[("r", 0)] += [10, 11]
    wait_for(lambda: by_partition(out) == expected, timeout=60, interval=0.2,
             what="records 10 and 11")
    wait_for(lambda: stored_offsets(w, "gaprun") == {(topic, 0): 12}, timeout=30,
             what="offset 12 recorded")
    assert w.logs().count("deleted by retention") == 1
    assert_running(w, "gaprun")


def test_reset_none_stops_a_partition_with_no_offset(start_worker, bed, tmp_path):
    """Kafka's auto.offset.reset=none (librdkafka has no such value): accepted, and a
    partition with no stored or committed offset is stopped, not guessed."""
    w = start_worker(STRINGS)
    topic = bed.unique_topic("none")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, records("none", 0, 0, 3))
    out = tmp_path / "out.txt"
    file_sink(w, "none", out, topics=topic,
              **{"consumer.override.auto.offset.reset": "none"})
    wait_for(lambda: f"partition {topic}-0 stopped: no stored or committed offset and "
             "auto.offset.reset=none" in w.logs(), timeout=DISCOVERY_TIMEOUT,
             what="the partition stopped for want of an offset")
    metrics = w.get("/metrics").text
    assert (f'tributary_sink_partition_stopped{{connector="none",topic="{topic}",'
            f'partition="0",reason="no offset to start from"}} 1') in metrics
    assert output_lines(out) == []
    bad = w.put("/connector-plugins/FileStreamSink/config/validate", json={
        "connector.class": "FileStreamSink", "topics": topic, "file": str(out),
        "consumer.override.auto.offset.reset": "sometimes"}).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in bad["configs"]}
    assert errors["consumer.override.auto.offset.reset"] == [
        "Invalid value sometimes for configuration consumer.override.auto.offset.reset: "
        "String must be one of: latest, earliest, none"]


def test_topics_and_offsets_show_only_what_records_went_through(start_worker, bed,
                                                                 tmp_path):
    """As Connect 3.9 shows them: a sink's topic is listed once a record was
    read from it, not when it is subscribed, and a partition has an offset
    once a record of it was written, not when it is assigned."""
    w = start_worker(STRINGS)
    topic = bed.unique_topic("used")
    create_topic(bed, topic, 2)
    out = tmp_path / "out.txt"
    file_sink(w, "used", out, topics=topic)
    wait_for(lambda: f"partition {topic}-1 starts at offset 0" in w.logs(),
             timeout=DISCOVERY_TIMEOUT, what="both partitions assigned")
    assert w.get("/connectors/used/topics").json() == {"used": {"topics": []}}
    assert w.get("/connectors/used/offsets").json() == {"offsets": []}

    produce(bed.bootstrap, topic, records("u", 0, 0, 1))
    wait_for(lambda: stored_offsets(w, "used") == {(topic, 0): 1}, timeout=30,
             what="the offset of the partition that had a record")
    assert w.get("/connectors/used/topics").json() == {"used": {"topics": [topic]}}
    # partition 1 was flushed with it, and still has nothing to show
    assert stored_offsets(w, "used") == {(topic, 0): 1}
