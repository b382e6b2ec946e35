"""Lag on transactional topics read with read_committed: once the connector
is caught up, Kafka's own kafka-consumer-groups reports lag 0 for its group,
even where commit markers and aborted records take offsets (the position
rule), including a partition that never delivered a record. And lag before
the first commit: what waits since the partition's start, never 0."""
import pytest

from kafka_io import create_topic, group_lag, produce
from worker import wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms": "200"}


def test_caught_up_transactional_topic_shows_no_lag(start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("txn")
    create_topic(bed, topic, 3)
    # partition 0: one committed transaction of one record;
    # partition 1: only aborted transactions; partition 2: nothing at all
    produce(bed.bootstrap, topic, [(0, None, b"committed")], transactional_id=f"{topic}-a")
    produce(bed.bootstrap, topic, [(1, None, b"aborted-1"), (1, None, b"aborted-2")],
            transactional_id=f"{topic}-b", abort=True)
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
              "consumer.override.isolation.level": "read_committed"}
    assert w.post("/connectors", json={"name": "txn", "config": config}).status_code == 201
    wait_for(lambda: out.exists() and out.read_text() == "committed\n",
             what="the committed record")

    def no_lag():
        lags = {k: v for k, v in group_lag(bed, "connect-txn").items() if k[0] == topic}
        return len(lags) == 3 and all(lag == 0 for lag in lags.values()) and lags
    lags = wait_for(no_lag, timeout=60, interval=1, what="lag 0 on every partition")
    assert lags == {(topic, 0): 0, (topic, 1): 0, (topic, 2): 0}
    assert out.read_text() == "committed\n", "aborted records are never written"
    offsets = {o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"]
               for o in w.get("/connectors/txn/offsets").json()["offsets"]}
    # past the commit marker (offset 1) and past both aborted records and
    # their abort marker (offset 2); partition 2 never moved, so, as in
    # Connect, it has no offset (its group offset keeps its lag at 0)
    assert offsets == {0: 2, 1: 3}


def partition_gauge(w, name, topic, family):
    """The value of family{connector=name,topic,partition="0"}, or None."""
    sample = f'{family}{{connector="{name}",topic="{topic}",partition="0"}} '
    for line in w.get("/metrics").text.splitlines():
        if line.startswith(sample):
            return float(line[len(sample):])
    return None


def test_lag_before_the_first_commit_counts_from_the_start(start_worker, bed, tmp_path):
    """No flush for the test's length: the records are read (the file sink
    writes them at its flush) but nothing is committed, so all 20 still count
    as lag (end - start offset), not 0."""
    w = start_worker({**SETTINGS, "offset.flush.interval.ms": "600000"})
    topic = bed.unique_topic("lag0")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{n}".encode()) for n in range(20)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out)}
    assert w.post("/connectors", json={"name": "lag0", "config": config}).status_code == 201
    for family in ("position", "end_offset"):
        wait_for(lambda: partition_gauge(w, "lag0", topic,
                                         f"tributary_sink_partition_{family}") == 20,
                 timeout=60, interval=0.2, what=f"{family} 20")
    wait_for(lambda: partition_gauge(w, "lag0", topic,
                                     "tributary_sink_partition_lag") == 20,
             timeout=30, interval=0.2, what="lag 20 before the first commit")
    assert w.get("/connectors/lag0/offsets").json()["offsets"] == []
