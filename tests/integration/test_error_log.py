"""errors.log.enable logs each tolerated failure with the record's
coordinates; errors.log.include.messages adds its key and value, as Connect's
log reporter adds the record."""
import pytest

from kafka_io import create_topic, produce
from worker import wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"}


@pytest.mark.parametrize("include", [True, False], ids=["messages", "coordinates"])
def test_failed_record_log_line(start_worker, bed, tmp_path, include):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("errlog")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic,
            [(0, b"k0", b'{"n":0}'), (0, b"k\x01", b'not "json"'), (0, b"k2", b'{"n":2}')])
    config = {"connector.class": "FileStreamSink", "topics": topic,
              "file": str(tmp_path / "out.txt"), "errors.tolerance": "all",
              "errors.log.enable": "true",
              "errors.log.include.messages": str(include).lower()}
    reply = w.post("/connectors", json={"name": "errlog", "config": config})
    assert reply.status_code == 201, reply.text

    def logged():
        return [line for line in w.logs().splitlines()
                if f"record {topic}-0 at offset 1" in line]
    line = wait_for(logged, what="the failed record's log line")[0]
    assert "skipped in stage VALUE_CONVERTER" in line, line
    shown = f'record {topic}-0 at offset 1 (key "k\\x01", value "not \\x22json\\x22")'
    if include:
        assert shown in line, line
    else:
        assert "(key" not in line and "json" not in line.split("skipped")[0], line
