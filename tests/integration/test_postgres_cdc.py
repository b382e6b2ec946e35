"""PostgreSQL -> Kafka with tributary's Debezium-compatible CDC source, on the
bed's real PostgreSQL 15 and Kafka: the snapshot and the stream meet, every
operation makes Debezium's records, filters and ALTER TABLE apply, and a
kill -9 loses nothing (and, exactly-once, repeats nothing)."""
import json
import pathlib
import signal
import time
import uuid

import pytest
from confluent_kafka import Consumer

from kafka_io import read_committed_to_end
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


@pytest.fixture
def cdc_db(bed):
    """A fresh database; its replication slots are dropped at the end, once the
    workers (set up after this fixture, so stopped before) released them."""
    db = bed.pg.fresh_database("cdc")
    yield db
    query = f"SELECT slot_name FROM pg_replication_slots WHERE database = '{db}'"
    for (slot,) in bed.pg.sql(query, db=db):
        wait_for(lambda: bed.pg.sql(f"SELECT active FROM pg_replication_slots WHERE "
                                    f"slot_name = '{slot}'", db=db) != [["t"]],
                 what=f"slot {slot} released")
        bed.pg.sql(f"SELECT pg_drop_replication_slot('{slot}')", db=db)


class Reader:
    """Reads (topic, key, value) of JSON records (None for a null) from topics, from
    the beginning, across calls; each record once, though a topic created later
    makes the consumer start its partitions again."""

    def __init__(self, bed, *topics):
        self.consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                                  "group.id": f"r-{uuid.uuid4().hex}",
                                  "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.consumer.subscribe(list(topics))
        self.records = []
        self.headers = []  # each record's [(name, value bytes)], beside records
        self.seen = set()

    def until(self, count, timeout=90):
        def enough():
            message = self.consumer.poll(0.5)
            if message is None or message.error():
                return len(self.records) >= count
            where = (message.topic(), message.partition(), message.offset())
            if where not in self.seen:
                self.seen.add(where)
                decode = lambda b: None if b is None else json.loads(b)  # noqa: E731
                self.records.append((message.topic(), decode(message.key()),
                                     decode(message.value())))
                self.headers.append(message.headers() or [])
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


def test_snapshot_then_stream_writes_debeziums_records(cdc_db, start_worker, bed):
    db = cdc_db
    bed.pg.sql("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, "
               "price numeric(10,2)); INSERT INTO items VALUES (1, 'one', 1.50), "
               "(2, 'two', NULL); CREATE TABLE zeta (id int PRIMARY KEY); "
               "INSERT INTO zeta VALUES (1), (2)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.public.items"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(bed, db, prefix))
    zeta = Reader(bed, f"{prefix}.public.zeta")
    try:
        # Debezium's snapshot markers: the tables in order, and their rows
        assert [payload(v)["source"]["snapshot"] for _, _, v in zeta.until(2)] == [
            "first_in_data_collection", "last"]
    finally:
        zeta.close()
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
        assert [payload(v)["source"]["snapshot"] for _, _, v in snapshot] == [
            "first", "last_in_data_collection"]

        wait_for(lambda: running(w, "cdc"), what="the task running")
        bed.pg.sql("INSERT INTO items VALUES (3, 'three', 3); "
                   "UPDATE items SET name = 'uno' WHERE id = 1; DELETE FROM items WHERE id = 2",
                   db=db)
        records = reader.until(6)[2:]
        ops = [(payload(k)["id"], payload(v) and payload(v)["op"]) for _, k, v in records]
        assert ops == [(3, "c"), (1, "u"), (2, "d"), (2, None)]
        # Debezium 3.6's context headers: on each event and tombstone, snapshot reads
        # included, with one run id (a UUID version 7, as Debezium's)
        run_id = reader.headers[0][3][1]
        assert len(run_id) == 36 and run_id.count(b"-") == 4 and run_id[14:15] == b"7"
        assert reader.headers[:6] == [[
            ("__debezium.context.connectorLogicalName", prefix.encode()),
            ("__debezium.context.taskId", b"0"),
            ("__debezium.context.connectorName", b"postgresql"),
            ("__debezium.context.runId", run_id)]] * 6
        # Debezium 3.6's source block: a versioned schema, with the origin fields
        source_schema = next(f for f in records[0][2]["schema"]["fields"]
                             if f["field"] == "source")
        assert source_schema["version"] == 1
        assert [(f["field"], f["type"], f["optional"])
                for f in source_schema["fields"][-2:]] == [
            ("origin", "string", True), ("origin_lsn", "int64", True)]
        created = payload(records[0][2])["source"]
        assert (created["version"], created["origin"], created["origin_lsn"]) == (
            "3.6.1.Final", None, None)
        update = payload(records[1][2])
        assert update["before"] is None  # REPLICA IDENTITY DEFAULT sends no old row
        assert update["after"]["name"] == "uno"
        assert update["source"]["snapshot"] == "false"
        assert update["source"]["txId"] > 0 and update["source"]["lsn"] > 0
        delete = payload(records[2][2])
        assert delete["before"]["id"] == 2 and delete["after"] is None

        # Debezium's source.sequence: [last commit's end LSN, the change's LSN], with
        # null while no commit was read since the snapshot
        sequences = [payload(v)["source"]["sequence"] for _, _, v in snapshot[:2] + records[:3]]
        lsns = [payload(v)["source"]["lsn"] for _, _, v in snapshot[:2] + records[:3]]
        assert sequences == [json.dumps([None, str(lsn)], separators=(",", ":"))
                             for lsn in lsns]
        bed.pg.sql("INSERT INTO items VALUES (4, 'four', 4)", db=db)
        fourth = payload(reader.until(7)[6][2])["source"]
        bed.pg.sql("CREATE EXTENSION pg_walinspect", db=db, superuser=True)
        first = update["source"]
        commit_end = bed.pg.sql(
            "SELECT end_lsn - '0/0'::pg_lsn FROM pg_get_wal_records_info("
            f"'0/0'::pg_lsn + {first['lsn']}, pg_current_wal_flush_lsn()) "
            f"WHERE xid = {first['txId']} AND record_type = 'COMMIT'", db=db,
            superuser=True)[0][0]
        assert fourth["sequence"] == f'["{commit_end}","{fourth["lsn"]}"]'
    finally:
        reader.close()


def test_full_identity_truncate_filters_and_alter_table(cdc_db, start_worker, bed):
    db = cdc_db
    bed.pg.sql("CREATE SCHEMA inv; CREATE TABLE inv.full_rows (id int PRIMARY KEY, v text); "
               "ALTER TABLE inv.full_rows REPLICA IDENTITY FULL; "
               "CREATE TABLE inv.skipped (id int PRIMARY KEY); "
               "CREATE TABLE public.other (id int PRIMARY KEY)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(
        bed, db, prefix, **{"schema.include.list": "inv", "table.exclude.list": "inv\\.skip.*",
                            "skipped.operations": "none", "snapshot.mode": "no_data"}))
    topic = f"{prefix}.inv.full_rows"
    reader = Reader(bed, topic, f"{prefix}.inv.skipped", f"{prefix}.public.other")
    try:
        # publication.autocreate.mode=filtered publishes only the captured table
        wait_for(lambda: bed.pg.sql("SELECT schemaname || '.' || tablename FROM "
                                    "pg_publication_tables", db=db) == [["inv.full_rows"]],
                 what="the publication")
        wait_for(lambda: bed.pg.sql("SELECT active FROM pg_replication_slots WHERE "
                                    f"database = '{db}'", db=db)
                 == [["t"]], what="the slot streaming")
        bed.pg.sql("INSERT INTO inv.full_rows VALUES (1, 'a'); "
                   "INSERT INTO inv.skipped VALUES (1); INSERT INTO public.other VALUES (1); "
                   "UPDATE inv.full_rows SET v = 'b'; "
                   "ALTER TABLE inv.full_rows ADD COLUMN n int NOT NULL DEFAULT 7; "
                   "UPDATE inv.full_rows SET v = 'c'; "
                   "ALTER TABLE inv.full_rows ALTER COLUMN n TYPE bigint; "
                   "UPDATE inv.full_rows SET v = 'd'; TRUNCATE inv.full_rows", db=db)
        records = reader.until(5)
        assert {t for t, _, _ in records} == {topic}
        values = [payload(v) for _, _, v in records]
        assert [v["op"] for v in values] == ["c", "u", "u", "u", "t"]
        assert values[1]["before"] == {"id": 1, "v": "a"}  # REPLICA IDENTITY FULL
        assert values[1]["after"] == {"id": 1, "v": "b"}
        # the records after the ALTER TABLE carry the new column and schema
        assert values[2]["before"] == {"id": 1, "v": "b", "n": 7}
        assert values[2]["after"] == {"id": 1, "v": "c", "n": 7}
        after_fields = records[2][2]["schema"]["fields"][1]["fields"]
        assert [f["field"] for f in after_fields] == ["id", "v", "n"]
        assert after_fields[2]["default"] == 7  # the column's default, as Debezium's
        assert after_fields[2]["type"] == "int32"
        retyped = records[3][2]["schema"]["fields"][1]["fields"][2]
        assert retyped["type"] == "int64" and values[3]["after"]["n"] == 7
        assert records[4][1] is None and values[4]["before"] is None
        assert values[4]["source"]["table"] == "full_rows"
    finally:
        reader.close()


def test_kill_9_mid_stream_loses_nothing(cdc_db, start_worker, bed, tmp_path):
    db = cdc_db
    bed.pg.sql("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)", db=db)
    bed.pg.sql("INSERT INTO counter SELECT g, 0 FROM generate_series(1, 50) g", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.public.counter"
    folder = tmp_path / "w"
    config = connector_config(bed, db, prefix)
    w = start_cdc_worker(start_worker, bed, directory=folder)
    start_connector(w, "cdc", config)
    reader = Reader(bed, topic)
    rounds, updates = 3, 40
    try:
        reader.until(50)  # the snapshot
        for r in range(1, rounds + 1):
            wait_for(lambda: running(w, "cdc"), what="the task running")
            for i in range(1, updates + 1):  # one transaction each
                bed.pg.sql(f"UPDATE counter SET n = n + 1 WHERE id = {i}", db=db)

            def stored():
                offsets = w.get("/connectors/cdc/offsets").json()["offsets"]
                return offsets and "lsn_commit" in offsets[0]["offset"]
            wait_for(stored, what="a streamed change recorded")
            w.stop(signal.SIGKILL)
            w = start_cdc_worker(start_worker, bed, directory=folder)
        wait_for(lambda: running(w, "cdc"), what="the task running")
        bed.pg.sql("UPDATE counter SET n = -1 WHERE id = 50", db=db)
        # the last change is read after every earlier one (one partition, commit order)
        def last_read():
            records = reader.until(len(reader.records) + 1, timeout=180)
            return payload(records[-1][1])["id"] == 50
        wait_for(last_read, timeout=180, interval=0, what="the last change")
        records = reader.records
        offsets = w.get("/connectors/cdc/offsets").json()["offsets"]
        assert offsets[0]["partition"] == {"server": prefix}
        assert set(offsets[0]["offset"]) >= {"lsn", "lsn_proc", "lsn_commit", "txId",
                                             "ts_usec"}
    finally:
        reader.close()
    # at least once, in order per key: every row's counter climbs by one, and
    # a change may repeat after a kill but none is missing
    seen = {}
    for _, key, value in records[50:]:
        after = payload(value)["after"]
        seen.setdefault(payload(key)["id"], []).append(after["n"])
    for i in range(1, updates + 1):
        distinct = list(dict.fromkeys(seen[i]))
        assert distinct == list(range(1, rounds + 1)), (i, seen[i])
    assert seen[50] == [-1]
    # the slot confirmed only what was recorded, and got there
    confirmed = bed.pg.sql("SELECT confirmed_flush_lsn IS NOT NULL FROM pg_replication_slots "
                           f"WHERE slot_name = '{config['slot.name']}'", db=db)
    assert confirmed == [["t"]]


def test_kill_9_mid_stream_under_exactly_once_writes_each_change_once(
        cdc_db, start_worker, bed, tmp_path):
    """exactly.once.support=required: the changes of two tables go to their two
    topics and their offset to the offsets topic in one transaction; after
    each kill -9 the task resumes from the committed offset, so read_committed
    shows every change once."""
    db = cdc_db
    for table in ("ca", "cb"):
        bed.pg.sql(f"CREATE TABLE {table} (id int PRIMARY KEY, n int NOT NULL)", db=db)
        bed.pg.sql(f"INSERT INTO {table} SELECT g, 0 FROM generate_series(1, 20) g", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topics = [f"{prefix}.public.ca", f"{prefix}.public.cb"]
    folder = tmp_path / "w"
    settings = {**WORKER, "exactly.once.source.support": "enabled",
                "offset.storage.topic": f"offsets-{prefix}",
                "offset.storage.replication.factor": "1"}

    def start():
        return start_worker(settings, env={"TB_TEST_PG_PASSWORD": bed.pg.password},
                            directory=folder)
    config = connector_config(bed, db, prefix, **{"exactly.once.support": "required"})
    w = start()
    start_connector(w, "cdceos", config)
    reader = Reader(bed, *topics)  # librdkafka's default: read_committed
    rounds = 3
    try:
        reader.until(40)  # the snapshots
        for r in range(1, rounds + 1):
            wait_for(lambda: running(w, "cdceos"), what="the task running")
            for i in range(1, 21):  # one transaction each, alternating tables
                bed.pg.sql(f"UPDATE {'ca' if i % 2 else 'cb'} SET n = n + 1 "
                           f"WHERE id = {i}", db=db)
            bed.pg.sql(f"UPDATE ca SET n = n + 1 WHERE id > 10 AND id % 2 = 1", db=db)

            def stored():
                offsets = w.get("/connectors/cdceos/offsets").json()["offsets"]
                return offsets and "lsn_commit" in offsets[0]["offset"]
            wait_for(stored, what="a streamed change committed")
            w.stop(signal.SIGKILL)
            w = start()
        wait_for(lambda: running(w, "cdceos"), what="the task running")
        bed.pg.sql("UPDATE cb SET n = -1 WHERE id = 20", db=db)

        def last_read():
            reader.until(len(reader.records) + 1, timeout=120)
            return any(t == topics[1] and payload(v)["after"]["n"] == -1
                       for t, _, v in reader.records[40:] if v is not None)
        wait_for(last_read, timeout=120, interval=0, what="the last change")
    finally:
        reader.close()
    # everything committed up to now (the last change came after all others)
    decode = lambda b: None if b is None else json.loads(b)  # noqa: E731
    records = [(t, decode(k), decode(v)) for t, k, v in read_committed_to_end(bed, topics)]
    records = [r for r in records if r[2] is not None]
    snapshot = [(t, payload(k)["id"]) for t, k, v in records
                if payload(v)["op"] == "r"]
    assert sorted(snapshot) == sorted((t, i) for t in topics for i in range(1, 21))
    seen = {}
    for topic, key, value in records:
        if payload(value)["op"] != "u":
            continue
        seen.setdefault((topic, payload(key)["id"]), []).append(payload(value)["after"]["n"])
    for i in range(1, 21):
        topic = topics[0] if i % 2 else topics[1]
        # every change once: n climbs by one a round (twice for ca's odd ids above 10)
        steps = 2 if topic == topics[0] and i > 10 else 1
        expected = list(range(1, rounds * steps + 1))
        if (topic, i) == (topics[1], 20):
            expected.append(-1)
        assert seen[(topic, i)] == expected, (topic, i, seen[(topic, i)])


TYPES_TABLE = (
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); "
    "CREATE DOMAIN positive AS int CHECK (VALUE > 0); "
    "CREATE TABLE typed (id int PRIMARY KEY, i2 smallint, i8 bigint, f4 real, "
    "f8 double precision, b boolean, dec numeric(10,2), var numeric, t text, "
    "vc varchar(10), c char(3), d date, tm time, tm3 time(3), ts timestamp, "
    "ts3 timestamp(3), tz timestamptz, j json, jb jsonb, u uuid, raw bytea, "
    "ints int[], texts text[], m mood, iv interval, mo money, ttz timetz, dm positive, "
    "bt bit(3), b1 bit(1), vb varbit, vb5 varbit(5), pt point, hs hstore, ci citext, "
    "lt ltree)")
# the extensions' types have no fixed OID: created by the superuser in each database
EXTENSIONS = "CREATE EXTENSION hstore; CREATE EXTENSION citext; CREATE EXTENSION ltree"
TYPES_ROW = ("{id}, 7, 9000000000, 1.5, 2.25, true, 123.45, 1.005, 'text', 'vc', 'ab', "
             "'2024-01-02', '10:00:00.5', '10:00:00.5', '2024-01-02 03:04:05.123456', "
             "'2024-01-02 03:04:05.123', '2024-01-02 05:04:05.123456+02', '{{\"a\": 1}}', "
             "'{{\"b\": [1, 2]}}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff10', "
             "'{{1,NULL,3}}', '{{\"a b\",c}}', 'ok', "
             "'1 year 2 mons 3 days 04:05:06.5', 1234.56, '10:00:00.5+02', 5, "
             "B'101', B'1', B'1011001011', B'0', '(1.5,-2)', '\"a\"=>\"1\", \"b\"=>NULL', "
             "'MiXed', 'top.sci'")
COMMON = {"i2": 7, "i8": 9000000000, "f4": 1.5, "f8": 2.25, "b": True, "t": "text",
          "vc": "vc", "c": "ab ", "d": 19724, "tz": "2024-01-02T03:04:05.123456Z",
          "j": "{\"a\": 1}", "jb": "{\"b\": [1, 2]}",
          "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "ints": [1, None, 3],
          "texts": ["a b", "c"], "m": "ok", "ts3": 1704164645123,
          "iv": 37091106500000, "ttz": "08:00:00.5Z", "dm": 5,
          # Debezium's Bits: bit 0 is the last digit, little-endian bytes up to
          # the highest bit set; a single bit is a boolean
          "bt": "BQ==", "b1": True, "vb": "ywI=", "vb5": "",
          "pt": {"x": 1.5, "y": -2.0, "wkb": "AQEAAAAAAAAAAAD4PwAAAAAAAADA", "srid": None},
          "hs": "{\"a\":\"1\",\"b\":null}", "ci": "MiXed", "lt": "top.sci"}
MODES = {
    "precise-adaptive-bytes": (
        {}, {"dec": "MDk=", "var": {"scale": 3, "value": "A+0="}, "tm": 36000500000,
             "tm3": 36000500, "ts": 1704164645123456, "raw": "AP8Q", "mo": "AeJA"}),
    "double-connect-base64": (
        {"decimal.handling.mode": "double", "time.precision.mode": "connect",
         "binary.handling.mode": "base64", "hstore.handling.mode": "map"},
        {"dec": 123.45, "var": 1.005, "tm": 36000500, "tm3": 36000500, "ts": 1704164645123,
         "raw": "AP8Q", "mo": 1234.56, "hs": {"a": "1", "b": None}}),
    "string-microseconds-hex": (
        {"decimal.handling.mode": "string", "time.precision.mode": "adaptive_time_microseconds",
         "binary.handling.mode": "hex"},
        {"dec": "123.45", "var": "1.005", "tm": 36000500000, "tm3": 36000500000,
         "ts": 1704164645123456, "raw": "00ff10", "mo": "1234.56"}),
}
SCHEMA_NAMES = {
    "precise-adaptive-bytes": {"dec": "org.apache.kafka.connect.data.Decimal",
                               "var": "io.debezium.data.VariableScaleDecimal",
                               "d": "io.debezium.time.Date", "tm": "io.debezium.time.MicroTime",
                               "tm3": "io.debezium.time.Time",
                               "ts": "io.debezium.time.MicroTimestamp",
                               "ts3": "io.debezium.time.Timestamp"},
    "double-connect-base64": {"dec": None, "hs": None, "d": "org.apache.kafka.connect.data.Date",
                              "tm": "org.apache.kafka.connect.data.Time",
                              "ts": "org.apache.kafka.connect.data.Timestamp"},
    "string-microseconds-hex": {"dec": None, "tm3": "io.debezium.time.MicroTime"},
}


def snapshot_then_stream(bed, db, topic, insert):
    """The records of a table's one snapshot row, then of the row `insert` makes once
    the slot streams."""
    reader = Reader(bed, topic)
    try:
        reader.until(1)
        wait_for(lambda: bed.pg.sql("SELECT active FROM pg_replication_slots WHERE "
                                    f"database = '{db}'", db=db) == [["t"]],
                 what="the slot streaming")
        bed.pg.sql(insert, db=db)
        return reader.until(2)
    finally:
        reader.close()


@pytest.mark.parametrize("mode", list(MODES))
def test_types_under_handling_modes(cdc_db, start_worker, bed, mode):
    db = cdc_db
    bed.pg.sql(EXTENSIONS, db=db, superuser=True)
    bed.pg.sql(TYPES_TABLE + "; INSERT INTO typed VALUES (" + TYPES_ROW.format(id=1) + ")",
               db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    settings, expected = MODES[mode]
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(bed, db, prefix, **settings))
    records = snapshot_then_stream(bed, db, f"{prefix}.public.typed",
                                   "INSERT INTO typed VALUES (" + TYPES_ROW.format(id=2) + ")")
    want = {**COMMON, **expected}
    for (_, _, value), row_id in zip(records, (1, 2)):  # the snapshot's and the stream's
        after = payload(value)["after"]
        assert after == {"id": row_id, **want}, after
    fields = {f["field"]: f for f in records[1][2]["schema"]["fields"][1]["fields"]}
    for column, name in {"jb": "io.debezium.data.Json", "u": "io.debezium.data.Uuid",
                         "tz": "io.debezium.time.ZonedTimestamp", "m": "io.debezium.data.Enum",
                         "bt": "io.debezium.data.Bits", "b1": None,
                         "pt": "io.debezium.data.geometry.Point", "hs": "io.debezium.data.Json",
                         "ci": None, "lt": "io.debezium.data.Ltree",
                         **SCHEMA_NAMES[mode]}.items():
        assert fields[column].get("name") == name, (column, fields[column])
    assert fields["m"]["parameters"] == {"allowed": "sad,ok,happy"}
    assert fields["ints"]["type"] == "array"
    assert (fields["bt"]["type"], fields["bt"]["parameters"]) == ("bytes", {"length": "3"})
    assert fields["vb"]["parameters"] == {"length": "2147483647"}  # unbounded, as Debezium's
    assert fields["b1"]["type"] == "boolean"
    assert [f["field"] for f in fields["pt"]["fields"]] == ["x", "y", "wkb", "srid"]
    assert fields["hs"]["type"] == ("map" if "map" in settings.values() else "string")


def slot_of(bed, db, column):
    rows = bed.pg.sql(f"SELECT {column} FROM pg_replication_slots WHERE database = '{db}'",
                      db=db, superuser=True)
    return rows[0][0] if rows else None


def test_lost_connection_resumes_and_heartbeats_move_the_slot(cdc_db, start_worker, bed):
    db = cdc_db
    bed.pg.sql("CREATE TABLE quiet (id int PRIMARY KEY); CREATE TABLE busy (id int)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(
        bed, db, prefix, **{"table.include.list": "public.quiet",
                            "heartbeat.interval.ms": "200", "snapshot.mode": "no_data"}))
    reader = Reader(bed, f"{prefix}.public.quiet", f"__debezium-heartbeat.{prefix}")
    try:
        wait_for(lambda: slot_of(bed, db, "active") == "t", what="the slot streaming")
        # the server drops the replication connection: the task connects again
        bed.pg.sql("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                   f"WHERE database = '{db}'", db=db, superuser=True)
        wait_for(lambda: slot_of(bed, db, "active") == "t", what="the slot streaming again")
        bed.pg.sql("INSERT INTO quiet VALUES (1)", db=db)
        wait_for(lambda: any(t.endswith(".quiet") for t, _, _ in reader.until(1)),
                 what="the insert after the reconnection")
        assert running(w, "cdc")
        # changes the slot does not capture: heartbeats still move its position
        bed.pg.sql("INSERT INTO busy SELECT generate_series(1, 1000)", db=db)
        wal = bed.pg.sql("SELECT pg_current_wal_lsn()", db=db)[0][0]
        wait_for(lambda: bed.pg.sql(f"SELECT confirmed_flush_lsn >= '{wal}' FROM "
                                    f"pg_replication_slots WHERE database = '{db}'",
                                    db=db) == [["t"]],
                 timeout=60, what="the slot's flush position past the busy table's changes")
        # the slot's lag, in bytes and seconds, on the metrics page
        def lag(unit):
            for line in w.get("/metrics").text.splitlines():
                if line.startswith(f'tributary_postgres_slot_lag_{unit}{{connector="cdc"'):
                    return float(line.split()[-1])
            return None
        busy_wal = int(bed.pg.sql(f"SELECT pg_current_wal_lsn() - '{wal}'", db=db)[0][0])
        wait_for(lambda: lag("bytes") is not None and lag("bytes") < busy_wal + 65536,
                 what="the slot's lag in bytes")
        assert lag("seconds") is not None and lag("seconds") >= 0
        beats = [(k, v) for t, k, v in reader.until(len(reader.records) + 2)
                 if t.startswith("__debezium-heartbeat")]
        assert beats and payload(beats[0][0]) == {"serverName": prefix}
        assert beats[0][0]["schema"]["name"] == "io.debezium.connector.common.ServerNameKey"
        assert beats[0][1]["schema"]["name"] == "io.debezium.connector.common.Heartbeat"
        assert beats[0][0]["schema"]["version"] == beats[0][1]["schema"]["version"] == 1
        assert set(payload(beats[0][1])) == {"ts_ms"}
    finally:
        reader.close()


def test_dropped_slot_is_reported(cdc_db, start_worker, bed, tmp_path):
    db = cdc_db
    bed.pg.sql("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "w"
    config = connector_config(bed, db, prefix)
    w = start_cdc_worker(start_worker, bed, directory=folder)
    start_connector(w, "cdc", config)
    reader = Reader(bed, f"{prefix}.public.t")
    try:
        reader.until(1)
        wait_for(lambda: w.get("/connectors/cdc/offsets").json()["offsets"],
                 what="the snapshot recorded")
    finally:
        reader.close()
    w.stop(signal.SIGKILL)
    wait_for(lambda: slot_of(bed, db, "active") == "f", what="the slot released")
    bed.pg.sql(f"SELECT pg_drop_replication_slot('{config['slot.name']}')", db=db)
    w = start_cdc_worker(start_worker, bed, directory=folder)

    def failed():
        tasks = w.get("/connectors/cdc/status").json().get("tasks", [])
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]["trace"]
    trace = wait_for(failed, what="the task failed")
    assert f"the replication slot {config['slot.name']} no longer exists" in trace
    assert "snapshot.mode=when_needed" in trace


def test_the_example_connector_runs(cdc_db, start_worker, bed):
    example = json.loads((pathlib.Path(__file__).resolve().parents[2] / "examples" /
                          "postgres-cdc" / "inventory.json").read_text())
    db = cdc_db
    bed.pg.sql("CREATE TABLE orders (id int PRIMARY KEY, total numeric(8,2)); "
               "CREATE TABLE customers (id int PRIMARY KEY, name text); "
               "CREATE TABLE audit (id int); INSERT INTO orders VALUES (1, 9.99)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    config = {**example["config"], "database.hostname": bed.pg.host,
              "database.port": str(bed.pg.port), "database.user": bed.pg.user,
              "database.dbname": db, "topic.prefix": prefix,
              "slot.name": f"s_{uuid.uuid4().hex[:20]}"}
    w = start_worker(WORKER, env={"INVENTORY_DB_PASSWORD": bed.pg.password})
    start_connector(w, example["name"], config)
    reader = Reader(bed, f"{prefix}.public.orders", f"{prefix}.public.customers")
    try:
        reader.until(1)
        wait_for(lambda: slot_of(bed, db, "active") == "t", what="the slot streaming")
        bed.pg.sql("INSERT INTO customers VALUES (1, 'Ada'); INSERT INTO audit VALUES (1)",
                   db=db)
        records = reader.until(2)
    finally:
        reader.close()
    assert [(t.split(".")[-1], payload(v)["op"]) for t, _, v in records] == [
        ("orders", "r"), ("customers", "c")]


JDBC_SINK = "io.debezium.connector.jdbc.JdbcSinkConnector"


def test_cdc_to_jdbc_sink_copies_the_tables(cdc_db, start_worker, bed):
    """PostgreSQL -> CDC -> Kafka -> the JDBC sink -> a second database: the
    copy ends equal to the source, deletes included."""
    w = start_cdc_worker(start_worker, bed)
    if JDBC_SINK not in [p["class"] for p in w.get("/connector-plugins").json()]:
        pytest.skip("this build has no JDBC sink")
    db, copy = cdc_db, bed.pg.fresh_database("copy")
    bed.pg.sql("CREATE TABLE items (id int PRIMARY KEY, name text); "
               "INSERT INTO items SELECT g, 'n' || g FROM generate_series(1, 20) g", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    start_connector(w, "cdc", connector_config(bed, db, prefix))
    sink = {"connector.class": JDBC_SINK, "topics": f"{prefix}.public.items",
            "connection.url": f"jdbc:postgresql://{bed.pg.host}:{bed.pg.port}/{copy}",
            "connection.username": bed.pg.user,
            "connection.password": "${env:TB_TEST_PG_PASSWORD}",
            "insert.mode": "upsert", "primary.key.mode": "record_key",
            "delete.enabled": "true", "schema.evolution": "basic"}
    start_connector(w, "copy", sink)
    table = f"{prefix}_public_items"
    wait_for(lambda: slot_of(bed, db, "active") == "t", what="the slot streaming")
    bed.pg.sql("UPDATE items SET name = 'changed' WHERE id <= 5; DELETE FROM items "
               "WHERE id > 15; INSERT INTO items VALUES (100, 'new')", db=db)
    rows = "SELECT id, name FROM {} ORDER BY id"

    def equal():
        try:
            return bed.pg.sql(rows.format(f'"{table}"'), db=copy) == bed.pg.sql(
                rows.format("items"), db=db)
        except RuntimeError:  # the sink has not created the table yet
            return False
    wait_for(equal, timeout=90, what="the copy equal to the source")


def test_snapshot_rows_across_fetches_and_tables(cdc_db, start_worker, bed):
    """The snapshot hands rows out of the fetched results (not copies of them): with
    two rows a fetch, each row keeps its values and marker across fetches, an empty
    table and the change of table."""
    db = cdc_db
    bed.pg.sql("CREATE TABLE a1 (id int PRIMARY KEY, note text); CREATE TABLE a2 "
               "(id int PRIMARY KEY); CREATE TABLE a3 (id int PRIMARY KEY, note text); "
               "INSERT INTO a1 VALUES (1, 'one'), (2, NULL), (3, 'three'); "
               "INSERT INTO a3 VALUES (7, 'seven'), (8, 'eight'), (9, NULL)", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(
        bed, db, prefix, **{"max.batch.size": "2", "max.queue.size": "4",
                            "snapshot.mode": "initial_only"}))
    reader = Reader(bed, f"{prefix}.public.a1", f"{prefix}.public.a3")
    try:
        rows = [(t.rsplit(".", 1)[1], payload(v)["after"], payload(v)["source"]["snapshot"])
                for t, _, v in reader.until(6)]
    finally:
        reader.close()
    assert sorted(rows, key=lambda r: r[1]["id"]) == [
        ("a1", {"id": 1, "note": "one"}, "first"),
        ("a1", {"id": 2, "note": None}, "true"),
        ("a1", {"id": 3, "note": "three"}, "last_in_data_collection"),
        ("a3", {"id": 7, "note": "seven"}, "first_in_data_collection"),
        ("a3", {"id": 8, "note": "eight"}, "true"),
        ("a3", {"id": 9, "note": None}, "last")]


def test_kill_9_mid_snapshot_takes_it_again(cdc_db, start_worker, bed, tmp_path):
    db = cdc_db
    rows = 30000
    bed.pg.sql("CREATE TABLE big (id int PRIMARY KEY); "
               f"INSERT INTO big SELECT generate_series(1, {rows})", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "w"
    config = connector_config(bed, db, prefix, **{"max.batch.size": "50",
                                                  "max.queue.size": "100"})
    w = start_cdc_worker(start_worker, bed, directory=folder)
    start_connector(w, "cdc", config)

    def snapshot_offset():
        offsets = w.get("/connectors/cdc/offsets").json()["offsets"]
        return offsets[0]["offset"] if offsets else None
    wait_for(lambda: snapshot_offset() is not None, interval=0.05,
             what="part of the snapshot recorded")
    assert snapshot_offset()["last_snapshot_record"] is False, "killed too late"
    w.stop(signal.SIGKILL)
    w = start_cdc_worker(start_worker, bed, directory=folder)
    wait_for(lambda: (snapshot_offset() or {}).get("last_snapshot_record"), timeout=180,
             what="the snapshot taken again, to its end")
    bed.pg.sql(f"INSERT INTO big VALUES ({rows + 1})", db=db)
    reader = Reader(bed, f"{prefix}.public.big")
    try:
        def streamed():
            records = reader.until(len(reader.records) + 1, timeout=180)
            return payload(records[-1][2])["op"] == "c"
        wait_for(streamed, timeout=180, interval=0, what="the insert after the snapshot")
    finally:
        reader.close()
    ids = [payload(k)["id"] for _, k, _ in reader.records]
    # every row at least once, the insert once and after all of the second snapshot
    assert set(ids) == set(range(1, rows + 2))
    assert ids.count(rows + 1) == 1
    assert [payload(v)["source"]["snapshot"] for _, _, v in reader.records].count("last") == 1


def test_transaction_metadata_begin_end_and_orders(cdc_db, start_worker, bed):
    """provide.transaction.metadata: each streamed transaction is a BEGIN, its change
    events with their orders, and an END with the counts, as Debezium 3.0 writes them."""
    db = cdc_db
    bed.pg.sql("CREATE TABLE a (id int PRIMARY KEY, v text); "
               "CREATE TABLE b (id int PRIMARY KEY); INSERT INTO a VALUES (0, 'snap')", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(
        bed, db, prefix, **{"provide.transaction.metadata": "true"}))
    tx_topic, a_topic, b_topic = (f"{prefix}.transaction", f"{prefix}.public.a",
                                  f"{prefix}.public.b")
    reader = Reader(bed, tx_topic, a_topic, b_topic)
    try:
        snapshot = reader.until(1)
        assert payload(snapshot[0][2])["transaction"] is None  # a snapshot row has none
        wait_for(lambda: running(w, "cdc"), what="the task running")
        bed.pg.sql("BEGIN; INSERT INTO a VALUES (1, 'x'); INSERT INTO b VALUES (1); "
                   "UPDATE a SET v = 'y' WHERE id = 1; DELETE FROM b WHERE id = 1; "
                   "INSERT INTO a VALUES (2, 'z'); COMMIT", db=db)
        bed.pg.sql("INSERT INTO b VALUES (5)", db=db)
        # 1 snapshot row; BEGIN, 5 changes, a tombstone, END; BEGIN, 1 change, END
        records = reader.until(12)
    finally:
        reader.close()
    markers = [(k, v) for t, k, v in records if t == tx_topic]
    assert [payload(v)["status"] for _, v in markers] == ["BEGIN", "END", "BEGIN", "END"]
    begin_key, begin = markers[0]
    assert begin_key["schema"] == {
        "type": "struct", "optional": False, "version": 1,
        "name": "io.debezium.connector.common.TransactionMetadataKey",
        "fields": [{"type": "string", "optional": False, "field": "id"}]}
    assert begin["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"
    assert begin["schema"]["version"] == 1
    assert [f["field"] for f in begin["schema"]["fields"]] == [
        "status", "id", "event_count", "data_collections", "ts_ms"]
    collection = begin["schema"]["fields"][3]
    assert collection["optional"] and collection["items"]["name"] == "event.collection"
    assert [f["field"] for f in collection["items"]["fields"]] == [
        "data_collection", "event_count"]
    # the tables' topics are read in any order between them: in the stream's order
    changes = sorted(((t, payload(v)) for t, _, v in records
                      if t != tx_topic and v is not None and payload(v)["op"] != "r"),
                     key=lambda change: change[1]["source"]["lsn"])
    first = [v for _, v in changes[:5]]
    xid = first[0]["source"]["txId"]

    def at(lsn):  # Debezium's PostgreSQL id: the xid and the LSN of each record's message
        return f"{xid}:{lsn}"
    # PostgreSQL 15 sends the Begin with the first change's LSN
    begin_id = at(first[0]["source"]["lsn"])
    assert payload(begin_key) == {"id": begin_id}
    assert payload(begin) == {"status": "BEGIN", "id": begin_id, "event_count": None,
                              "data_collections": None,
                              "ts_ms": first[0]["source"]["ts_ms"]}
    assert [(t.rsplit(".", 1)[1], v["op"], v["transaction"]) for t, v in changes[:5]] == [
        (table, op, {"id": at(v["source"]["lsn"]), "total_order": total,
                     "data_collection_order": order})
        for (table, op, total, order), (_, v) in zip(
            [("a", "c", 1, 1), ("b", "c", 2, 1), ("a", "u", 3, 2), ("b", "d", 4, 2),
             ("a", "c", 5, 3)], changes[:5])]
    end_key, end = markers[1]
    end_id = payload(end)["id"]  # the Commit's LSN: past the last change
    assert end_id.startswith(f"{xid}:") and int(end_id.split(":")[1]) > first[4]["source"]["lsn"]
    assert payload(end_key) == {"id": end_id}
    assert payload(end) == {
        "status": "END", "id": end_id, "event_count": 5,
        "data_collections": [{"data_collection": "public.a", "event_count": 3},
                             {"data_collection": "public.b", "event_count": 2}],
        "ts_ms": first[0]["source"]["ts_ms"]}
    a_record = next(v for t, _, v in records if t == a_topic)
    block_schema = next(f for f in a_record["schema"]["fields"] if f["field"] == "transaction")
    assert (block_schema["name"], block_schema["version"]) == ("event.block", 1)
    # the next transaction counts from one again
    second = changes[5][1]
    assert second["transaction"]["total_order"] == 1
    assert payload(markers[3][1])["event_count"] == 1
    assert payload(markers[3][1])["data_collections"] == [
        {"data_collection": "public.b", "event_count": 1}]


def terminate_walsender(bed, db):
    """Ends the replication connections to db (its slot need not be active yet)."""
    ended = bed.pg.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       f"WHERE backend_type = 'walsender' AND datname = '{db}'",
                       db=db, superuser=True)
    assert ended == [["t"]], ended


def eos_cdc(start_worker, bed, db, prefix, **extra):
    """An exactly-once worker running connector "cdceos" on db: the worker."""
    settings = {**WORKER, "exactly.once.source.support": "enabled",
                "offset.storage.topic": f"offsets-{prefix}",
                "offset.storage.replication.factor": "1"}
    w = start_worker(settings, env={"TB_TEST_PG_PASSWORD": bed.pg.password})
    start_connector(w, "cdceos", connector_config(
        bed, db, prefix, **{"exactly.once.support": "required", **extra}))
    return w


def committed_ops(bed, topic):
    """(op, id, n) of every record read_committed shows in topic, in order."""
    decode = lambda b: None if b is None else json.loads(b)  # noqa: E731
    return [(payload(v)["op"], payload(v)["after"]["id"], payload(v)["after"]["n"])
            for _, _, v in ((t, k, decode(v)) for t, k, v in
                            read_committed_to_end(bed, [topic]))
            if v is not None]


def test_lost_connection_under_exactly_once_resumes_from_the_last_transaction(
        cdc_db, start_worker, bed):
    """The server drops the replication connection of an exactly-once task that
    started before its snapshot: the task connects again and resumes from its
    last committed transaction (not from where it started, which would take
    the snapshot again), so read_committed shows every change once."""
    db = cdc_db
    bed.pg.sql("CREATE TABLE ce (id int PRIMARY KEY, n int NOT NULL); "
               "INSERT INTO ce SELECT g, 0 FROM generate_series(1, 20) g", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.public.ce"
    w = eos_cdc(start_worker, bed, db, prefix)
    reader = Reader(bed, topic)
    try:
        reader.until(20)  # the snapshot
        wait_for(lambda: slot_of(bed, db, "active") == "t", what="the slot streaming")
        bed.pg.sql("UPDATE ce SET n = 1 WHERE id <= 10", db=db)
        reader.until(30)
        streams = w.logs().count("streaming slot")
        terminate_walsender(bed, db)
        wait_for(lambda: w.logs().count("streaming slot") > streams,
                 what="the slot streaming again")
        bed.pg.sql("UPDATE ce SET n = 1 WHERE id > 10", db=db)
        reader.until(40)
        assert running(w, "cdceos")
    finally:
        reader.close()
    ops = committed_ops(bed, topic)
    assert sorted(ops) == sorted([("r", i, 0) for i in range(1, 21)] +
                                 [("u", i, 1) for i in range(1, 21)]), ops


def test_lost_connection_during_an_exactly_once_snapshot_repeats_nothing(
        cdc_db, start_worker, bed):
    """The replication connection dropped while the snapshot is read: the rows
    committed before are not written again, read_committed shows each once."""
    db = cdc_db
    rows = 20000
    bed.pg.sql("CREATE TABLE cs (id int PRIMARY KEY, n int NOT NULL); "
               f"INSERT INTO cs SELECT g, 0 FROM generate_series(1, {rows}) g", db=db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.public.cs"
    w = eos_cdc(start_worker, bed, db, prefix,
                **{"max.batch.size": "50", "max.queue.size": "100"})

    def snapshot_offset():
        offsets = w.get("/connectors/cdceos/offsets").json()["offsets"]
        return offsets[0]["offset"] if offsets else None
    wait_for(lambda: snapshot_offset() is not None, interval=0.05,
             what="part of the snapshot committed")
    assert snapshot_offset()["last_snapshot_record"] is False, "dropped too late"
    terminate_walsender(bed, db)
    wait_for(lambda: (snapshot_offset() or {}).get("last_snapshot_record"), timeout=180,
             what="the snapshot to its end")
    bed.pg.sql(f"INSERT INTO cs VALUES ({rows + 1}, 1)", db=db)
    wait_for(lambda: (snapshot_offset() or {}).get("lsn_commit"), timeout=120,
             what="the insert committed")
    ops = committed_ops(bed, topic)
    assert sorted(i for op, i, _ in ops if op == "r") == list(range(1, rows + 1))
    assert [i for op, i, _ in ops if op == "c"] == [rows + 1]
