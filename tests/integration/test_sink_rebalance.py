"""A sink task's cooperative rebalance (issue 41): the partitions a task keeps are read on
while a member that joins its group is still joining, the task wakes their fetchers after
each rebalance callback (librdkafka pauses them during the callback and does not wake a
broker thread that found them all paused: the task stalled up to a second at every
rebalance, in every worker of a cluster that a worker joined), and no record is lost."""

import pytest

from kafka_io import create_topic, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "100", "log.level": "DEBUG"}


def test_a_kept_partition_is_read_while_a_member_joins_and_its_fetcher_is_woken(
        start_worker, bed, tmp_path):
    from confluent_kafka import Consumer
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("keep")
    name = f"keep-{topic[-8:]}"
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic, [(i % 2, None, f"p{i % 2}-a{i // 2}".encode())
                                   for i in range(20)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "tasks.max": "1"}
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    wait_for(lambda: len(output_lines(out)) == 20, timeout=60, what="the first 20 lines")

    # a member of the sink's group that joins: its first (empty) assignment comes while
    # the group still rebalances, and the group waits for it until its callback returns
    seen = {}

    def on_assign(consumer, partitions):
        if "during" in seen:
            return
        batch = [(p, None, f"p{p}-b{i}".encode()) for p in (0, 1) for i in range(10)]
        produce(bed.bootstrap, topic, batch)

        def one_partition_written():
            lines = set(output_lines(out))
            done = [p for p in (0, 1) if {f"p{p}-b{i}" for i in range(10)} <= lines]
            return done or None
        seen["during"] = (list(partitions), wait_for(
            one_partition_written, timeout=60,
            what="a kept partition's records at the sink while a member joins"))

    joiner = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"connect-{name}",
                       "partition.assignment.strategy": "cooperative-sticky",
                       "enable.auto.commit": False, "session.timeout.ms": 6000,
                       "heartbeat.interval.ms": 500})
    try:
        joiner.subscribe([topic], on_assign=on_assign)
        taken = wait_for(lambda: (joiner.poll(0.1), joiner.assignment())[1] or None,
                         timeout=60, what="the joining member's partition")
    finally:
        joiner.close()
    assigned_during, written = seen["during"]
    assert assigned_during == [], seen  # the member was still joining
    assert [tp.partition for tp in taken] != written, (taken, written)

    # the partition the member held comes back from where the sink left it
    produce(bed.bootstrap, topic, [(i % 2, None, f"p{i % 2}-c{i // 2}".encode())
                                   for i in range(20)])
    expected = {f"p{p}-{run}{i}" for p in (0, 1) for run, n in (("a", 10), ("b", 10),
                                                                   ("c", 10))
                for i in range(n)}
    wait_for(lambda: expected <= set(output_lines(out)), timeout=60,
             what="every record at the sink")
    assert f"[connector:{name}:0] 1 partition(s) kept through the rebalance, fetchers " \
           "woken" in w.logs()
