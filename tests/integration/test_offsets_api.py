"""/connectors/{c}/offsets for a source connector: read in any state; alter
and reset only when STOPPED; the connector resumes from what was set."""
import pytest

from kafka_io import read_values, sequences
from worker import wait_for

pytestmark = pytest.mark.integration

STOP_FIRST = ("Connectors must be in the STOPPED state before their offsets can be "
              "modified. This can be done for the specified connector by issuing a "
              "'PUT' request to the '/connectors/{}/stop' endpoint")


def stored_sequence(w, name):
    offsets = w.get(f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"]["sequence"] if offsets else None


def test_source_offsets_lifecycle(start_worker, bed):
    w = start_worker({"offset.flush.interval.ms": "100"})
    topic = bed.unique_topic("offsets")
    config = {"connector.class": "datagen", "topic": topic, "records.per.second": "200"}
    assert w.post("/connectors", json={"name": "o", "config": config}).status_code == 201
    wait_for(lambda: (stored_sequence(w, "o") or 0) >= 20, what="offsets to be stored")
    assert w.get("/connectors/o/offsets").json()["offsets"][0]["partition"] == {"task": 0}

    new = {"offsets": [{"partition": {"task": 0}, "offset": {"sequence": 100000}}]}
    reply = w.patch("/connectors/o/offsets", json=new)
    assert reply.status_code == 400
    assert reply.json()["message"] == STOP_FIRST.format("o")
    assert w.delete("/connectors/o/offsets").json()["message"] == STOP_FIRST.format("o")

    assert w.put("/connectors/o/stop").status_code == 204
    reply = w.patch("/connectors/o/offsets", json={"offsets": []})
    assert reply.status_code == 400
    assert reply.json()["message"] == (
        "Partitions / offsets need to be provided for an alter offsets request")
    bad = {"offsets": [{"partition": {"task": 0}, "offset": {"sequence": [1]}}]}
    assert w.patch("/connectors/o/offsets", json=bad).status_code == 400
    # a malformed body: 400 naming where it breaks (Connect 3.9 and 4.x: 500)
    reply = w.patch("/connectors/o/offsets", data='{"offsets": [',
                    headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["message"].startswith("Malformed JSON at line 1")
    reply = w.patch("/connectors/o/offsets", json=new)
    assert reply.status_code == 200
    assert reply.json() == {"message": (
        "The Connect framework-managed offsets for this connector have been altered "
        "successfully. However, if this connector manages offsets externally, they "
        "will need to be manually altered in the system that the connector uses.")}
    assert stored_sequence(w, "o") == 100000

    assert w.put("/connectors/o/resume").status_code == 202
    values = read_values(bed.bootstrap, topic,
                         lambda vs: any(s >= 100000 for s in sequences(vs)))
    assert 100000 in sequences(values), "the task resumed from the altered offset"

    assert w.put("/connectors/o/stop").status_code == 204
    reply = w.delete("/connectors/o/offsets")
    assert reply.status_code == 200
    assert "have been reset successfully" in reply.json()["message"]
    assert w.get("/connectors/o/offsets").json() == {"offsets": []}
    assert w.patch("/connectors/none/offsets", json=new).status_code == 404


def test_sink_offsets_alter_and_reset_move_the_group(start_worker, bed, tmp_path):
    from kafka_io import create_topic, group_lag, produce
    w = start_worker({"offset.flush.interval.ms": "100",
                      "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    topic = bed.unique_topic("sinkoff")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"v{i}".encode()) for i in range(10)])
    out = tmp_path / "out.txt"
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out)}
    assert w.post("/connectors", json={"name": "so", "config": config}).status_code == 201
    wait_for(lambda: w.get("/connectors/so/offsets").json()["offsets"][:1] == [
        {"partition": {"kafka_partition": 0, "kafka_topic": topic},
         "offset": {"kafka_offset": 10}}], what="offset 10")
    assert w.put("/connectors/so/stop").status_code == 204

    bad = {"offsets": [{"partition": {"topic": topic}, "offset": {"kafka_offset": 1}}]}
    reply = w.patch("/connectors/so/offsets", json=bad)
    assert reply.status_code == 400
    assert reply.json()["message"] == ("The partition for a sink connector offset must "
                                       "contain the keys 'kafka_topic' and "
                                       "'kafka_partition'")
    # numeric strings are accepted, as Connect accepts them
    back = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": "0"},
                         "offset": {"kafka_offset": "4"}}]}
    reply = w.patch("/connectors/so/offsets", json=back)
    assert reply.status_code == 200, reply.text
    assert group_lag(bed, "connect-so")[(topic, 0)] == 6, "the group moved back too"
    assert w.put("/connectors/so/resume").status_code == 202
    wait_for(lambda: out.exists() and len(out.read_text().splitlines()) == 16,
             what="records 4..9 written again")
    assert out.read_text().splitlines()[10:] == [f"v{i}" for i in range(4, 10)]

    assert w.put("/connectors/so/stop").status_code == 204
    assert w.delete("/connectors/so/offsets").status_code == 200
    assert w.get("/connectors/so/offsets").json() == {"offsets": []}
    assert (topic, 0) not in group_lag(bed, "connect-so") or \
        group_lag(bed, "connect-so")[(topic, 0)] is None, "the group's offset is gone"
