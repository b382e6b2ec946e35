"""PostgreSQL -> Kafka with tributary's Debezium-compatible CDC source, on the
bed's real PostgreSQL 15 and Kafka: the snapshot and the stream meet, every
operation makes Debezium's records, filters and ALTER TABLE apply, and a
kill -9 loses nothing."""
import json
import signal
import time
import uuid

import pytest
from confluent_kafka import Consumer

from worker import wait_for

pytestmark = pytest.mark.integration

WORKER = {"offset.flush.interval.ms": "100"}


def start_cdc_worker(start_worker, bed, directory=None):
    """A worker that knows the database password from its environment."""
    return start_worker(WORKER, env={"TB_TEST_PG_PASSWORD": bed.pg.password},
                        directory=directory)


def connector_config(bed, db, prefix, **extra):
    return {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": bed.pg.host, "database.port": str(bed.pg.port),
            "database.user": bed.pg.user, "database.password": "${env:TB_TEST_PG_PASSWORD}",
            "database.dbname": db, "topic.prefix": prefix, "plugin.name": "pgoutput",
            "slot.name": f"s_{uuid.uuid4().hex[:20]}",
            "publication.autocreate.mode": "filtered", **extra}


class Reader:
    """Reads (key, value) pairs of JSON records (None for a null) from topics, from
    the beginning, across calls."""

    def __init__(self, bed, *topics):
        self.consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                                  "group.id": f"r-{uuid.uuid4().hex}",
                                  "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.consumer.subscribe(list(topics))
        self.records = []

    def until(self, count, timeout=90):
        def enough():
            message = self.consumer.poll(0.5)
            if message is not None and not message.error():
                decode = lambda b: None if b is None else json.loads(b)  # noqa: E731
                self.records.append((message.topic(), decode(message.key()),
                                     decode(message.value())))
            return len(self.records) >= count
        wait_for(enough, timeout=timeout, interval=0, what=f"{count} records")
        return self.records

    def close(self):
        self.consumer.close()


def payload(record):
    return None if record is None else record["payload"]


def start_connector(w, name, config):
    response = w.post("/connectors", json={"name": name, "config": config})
    assert response.status_code == 201, response.text


def running(w, name):
    status = w.get(f"/connectors/{name}/status").json()
    tasks = status.get("tasks", [])
    assert not tasks or tasks[0]["state"] != "FAILED", tasks[0].get("trace")
    return bool(tasks) and tasks[0]["state"] == "RUNNING"


def test_snapshot_then_stream_writes_debeziums_records(start_worker, bed):
    db = bed.pg.fresh_database("cdc")
    bed.pg.sql("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, "
               "price numeric(10,2)); INSERT INTO items VALUES (1, 'one', 1.50), "
               "(2, 'two', NULL)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.public.items"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(bed, db, prefix))
    reader = Reader(bed, topic)
    try:
        snapshot = reader.until(2)
        assert [payload(v)["op"] for _, _, v in snapshot] == ["r", "r"]
        _, key, value = snapshot[0]
        assert key == {"schema": {"type": "struct", "fields": [
            {"type": "int32", "optional": False, "field": "id"}], "optional": False,
            "name": f"{prefix}.public.items.Key"}, "payload": {"id": 1}}
        assert value["schema"]["name"] == f"{prefix}.public.items.Envelope"
        assert value["schema"]["version"] == 2
        first = payload(value)
        assert first["after"] == {"id": 1, "name": "one", "price": "AJY="}  # 150, scale 2
        assert first["before"] is None
        source = first["source"]
        assert (source["connector"], source["name"], source["db"], source["schema"],
                source["table"]) == ("postgresql", prefix, db, "public", "items")
        assert [payload(v)["source"]["snapshot"] for _, _, v in snapshot] == ["first", "last"]

        wait_for(lambda: running(w, "cdc"), what="the task running")
        bed.pg.sql("INSERT INTO items VALUES (3, 'three', 3); "
                   "UPDATE items SET name = 'uno' WHERE id = 1; DELETE FROM items WHERE id = 2",
                   db=db)
        records = reader.until(6)[2:]
        ops = [(payload(k)["id"], payload(v) and payload(v)["op"]) for _, k, v in records]
        assert ops == [(3, "c"), (1, "u"), (2, "d"), (2, None)]
        update = payload(records[1][2])
        assert update["before"] is None  # REPLICA IDENTITY DEFAULT sends no old row
        assert update["after"]["name"] == "uno"
        assert update["source"]["snapshot"] == "false"
        assert update["source"]["txId"] > 0 and update["source"]["lsn"] > 0
        delete = payload(records[2][2])
        assert delete["before"]["id"] == 2 and delete["after"] is None
    finally:
        reader.close()
