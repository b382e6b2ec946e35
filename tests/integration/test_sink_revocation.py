"""Partitions revoked while a sink task's batch waits for its retry (delivery
issue item 15): the task that loses them does not write their pending
records, nothing is lost (the member that takes them over writes them), and
the partitions it keeps are read again. Against the real broker; the put is
held by the FileStreamSink's test seam (TB_FILE_SINK_HOLD, builds with
TB_TEST_SEAMS)."""
import pytest

from kafka_io import create_topic, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

HOLD = ".hold"


def test_revoked_partitions_pending_records_are_left_to_their_new_owner(
        start_worker, bed, tmp_path):
    w = start_worker({"offset.flush.interval.ms": "200"}, env={"TB_FILE_SINK_HOLD": HOLD})
    topic, group = bed.unique_topic("revoke"), bed.unique_topic("revoke-group")
    create_topic(bed, topic, 2)
    # only partition 0 has records: whatever batch the first member holds is
    # of partition 0
    earlier = [f"p0-{n}" for n in range(40)]
    produce(bed.bootstrap, topic, [(0, None, r.encode()) for r in earlier])
    held_out, heir_out = tmp_path / "revoked.txt", tmp_path / "heir.txt"
    hold = tmp_path / f"revoked.txt{HOLD}"
    hold.touch()

    # retries every 20 ms: the held member's next put (of nothing, once the
    # revocation dropped its batch) comes before its new assignment, which
    # must then be read although librdkafka kept it paused
    def sink(name, out):
        config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
                  "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                  "consumer.override.group.id": group,
                  "errors.retry.timeout": "300000", "errors.retry.delay.max.ms": "20"}
        reply = w.post("/connectors", json={"name": name, "config": config})
        assert reply.status_code == 201, reply.text

    # the first member reads both partitions; its put is held, the batch pending
    sink("revoked", held_out)
    wait_for(lambda: "[connector:revoked:0] retriable failure: test seam: a put of"
             in w.logs(), timeout=60, what="the first member's put held")
    # a second member joins. The round-robin assignor orders members by id,
    # which starts with the client id (connector-consumer-<name>-<task>):
    # "heir" comes first and takes partition 0, "revoked" keeps partition 1
    sink("heir", heir_out)
    wait_for(lambda: output_lines(heir_out) == earlier, timeout=60,
             what="the second member writing partition 0")
    hold.unlink()
    later = [f"p1-{n}" for n in range(10)]
    produce(bed.bootstrap, topic, [(1, None, r.encode()) for r in later])
    wait_for(lambda: len(output_lines(held_out)) >= len(later), timeout=60,
             what="the first member writing the partition it kept")
    # the first member wrote none of the records it held of partition 0
    assert output_lines(held_out) == later
    assert output_lines(heir_out) == earlier
    status = w.get("/connectors/revoked/status").json()
    assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status
