"""Source records whose bytes the plugin lends (bytes_borrowed in tb_plugin.h):
FileStreamSource's lines point into its read buffer and datagen's keys and values
into one buffer per task, both reused by the next poll while the records of the
earlier polls still wait for their delivery reports. Every record must reach Kafka
once, with exactly its bytes: handed to librdkafka as they are (pass-through
converters) or first copied by the runtime (a transform chain)."""
import json
from collections import Counter

import pytest

from kafka_io import create_topic, read_topic
from worker import wait_for

pytestmark = pytest.mark.integration

STRING = "org.apache.kafka.connect.storage.StringConverter"
WORKER = {"key.converter": STRING, "value.converter": STRING,
          "offset.flush.interval.ms": "100"}
RECORDS = 30000
MASK = (1 << 64) - 1
# a chain makes the runtime copy the borrowed bytes before it runs
ROUTED = {"transforms": "route",
          "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
          "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-routed"}

# librdkafka's queue holds fewer records than a poll brings: it is full in the middle
# of most batches, whose rest must wait for the next step, neither lost nor sent twice
QUEUE_FULL = {"producer.override.queue.buffering.max.messages": "100"}


def mix(x):
    """datagen's splitmix64."""
    x = (x + 0x9e3779b97f4a7c15) & MASK
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & MASK
    return x ^ (x >> 31)


def datagen_record(seq, seed=42, task=0):
    """The key and value datagen's orders shape writes for record seq of task."""
    r = mix(seed ^ (task << 40) ^ seq)
    value = (f'{{"seq":{seq},"task":{task},"order_id":{seq},'
             f'"customer":"customer_{r % 500}","item":"item_{(r >> 10) % 100}",'
             f'"quantity":{(r >> 20) % 10 + 1},"price_cents":{(r >> 30) % 100000}}}')
    return str(r % 1000).encode(), value.encode()


def run(worker, bed, config, offset):
    """Creates the connector on a new topic and waits until its offsets record offset:
    every record acknowledged. Returns the topic's records."""
    topic = bed.unique_topic("borrowed")
    config = {**config, "topic": topic}
    assert worker.post("/connectors", json={"name": "c", "config": config}).status_code == 201

    def recorded():
        offsets = worker.get("/connectors/c/offsets").json()["offsets"]
        return bool(offsets) and offsets[0]["offset"] == offset
    wait_for(recorded, timeout=90, what=f"offset {offset} recorded")
    return read_topic(bed, topic + ("-routed" if "transforms" in config else ""))


def numbered_lines(count):
    # lengths differ from line to line: a line read from a reused buffer too late
    # would show another's bytes
    return [f"{i:05d}:" + "abcdefghijklmnopqrstuvw"[:i % 23] * (1 + i % 7)
            for i in range(count)]


def check_lines(records, lines):
    """Every line exactly once, each partition's in file order."""
    got = [value.decode() for _, _, value in records]
    assert Counter(got) == Counter(lines)
    for partition in {p for p, _, _ in records}:
        numbers = [int(v[:5]) for p, _, v in records if p == partition]
        assert numbers == sorted(numbers), "a partition's lines out of file order"


@pytest.mark.parametrize("chain", [{}, ROUTED, QUEUE_FULL],
                         ids=["as-lent", "copied", "queue-full"])
def test_file_lines_arrive_exactly_once_and_intact(start_worker, bed, tmp_path, chain):
    lines = numbered_lines(RECORDS)
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n")
    w = start_worker(WORKER)
    records = run(w, bed, {"connector.class": "FileStreamSource", "file": str(source),
                           **chain}, {"position": source.stat().st_size})
    check_lines(records, lines)


def test_keyless_runs_go_to_the_partitions_in_turn(start_worker, bed, tmp_path):
    """Lines have no key: once a record reached the topic, a run of them (a poll's) goes
    to one partition and the next run to the next partition (source_produce.c). Before
    that, librdkafka's partitioner chooses, so the lines after the first delivery are
    the ones checked: their partitions change in turn, 0, 1, 2, 0, ..."""
    topic, partitions = bed.unique_topic("turns"), 3
    create_topic(bed, topic, partitions)
    lines, first = numbered_lines(RECORDS), 1000
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines[:first]) + "\n")
    w = start_worker(WORKER)
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
    assert w.post("/connectors", json={"name": "c", "config": config}).status_code == 201

    def recorded(size):
        offsets = w.get("/connectors/c/offsets").json()["offsets"]
        return bool(offsets) and offsets[0]["offset"] == {"position": size}
    wait_for(lambda: recorded(source.stat().st_size), timeout=90, what="the first lines")
    with source.open("a") as out:
        out.write("\n".join(lines[first:]) + "\n")
    wait_for(lambda: recorded(source.stat().st_size), timeout=90, what="every line")
    records = read_topic(bed, topic)
    check_lines(records, lines)
    partition_of = {int(v[:5]): p for p, _, v in records}
    turns = [partition_of[first]]
    for number in range(first + 1, RECORDS):
        if partition_of[number] != turns[-1]:
            turns.append(partition_of[number])
    assert len(turns) > 2 * partitions
    assert all(b == (a + 1) % partitions for a, b in zip(turns, turns[1:])), turns


@pytest.mark.parametrize("chain", [{}, ROUTED], ids=["as-lent", "copied"])
def test_datagen_records_arrive_exactly_once_and_intact(start_worker, bed, chain):
    w = start_worker(WORKER)
    records = run(w, bed, {"connector.class": "datagen", "records.per.second": "0",
                           "count": str(RECORDS), **chain}, {"sequence": RECORDS})
    seqs = [json.loads(value)["seq"] for _, _, value in records]
    assert sorted(seqs) == list(range(RECORDS))
    for (_, key, value), seq in zip(records, seqs):
        assert (key, value) == datagen_record(seq)
