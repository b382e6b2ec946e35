"""Debezium 3.6.1's PostgresConnector (in the bed's Kafka Connect, its jars resolved by
bench/debezium/resolve) and tributary's, on the same table of the bed's PostgreSQL: the
snapshot, inserts, updates and deletes (REPLICA IDENTITY DEFAULT and FULL) and a truncate
make the same records, key and value (schemas and payloads) and headers, record by record,
once the instance's fields are set aside (normalise())."""
import json
import pathlib
import subprocess
import uuid

import pytest
from confluent_kafka import Consumer

from connect_peer import ConnectDistributed, connect_topics
from worker import wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
JSON = "org.apache.kafka.connect.json.JsonConverter"
PASSWORD_ENV = "TB_TEST_PG_PASSWORD"

# A column of each type the source maps (docs/postgres-cdc.md, Types), a row of values and
# a row of NULLs; but two values Debezium 3.6.1 loses, where tributary keeps them
# (docs/postgres-cdc.md): a column of type name (null in its streamed changes) and a NULL
# in an ltree[] (the whole array null, after a NullPointerException it logs).
SCHEMA = (
    "CREATE EXTENSION hstore; CREATE EXTENSION citext; CREATE EXTENSION ltree",
    "CREATE TYPE mood AS ENUM ('sad', 'happy'); ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy'; "
    "CREATE DOMAIN posint AS integer CHECK (VALUE > 0); "
    "CREATE TABLE alltypes (id int PRIMARY KEY, i2 smallint, i4 integer NOT NULL DEFAULT 7, "
    "i8 bigint, o oid, f4 real, f8 double precision, b boolean, t text, vc varchar(20), "
    "ch char(3), ip inet, net cidr, mac macaddr, mac8 macaddr8, r int4range, "
    "n10 numeric(10,2), n numeric, d date, tm3 time(3), tm6 time(6), ts3 timestamp(3), "
    "ts6 timestamp(6), tstz timestamptz, ttz timetz, iv interval, m money, j json, "
    "jb jsonb, u uuid, x xml, by bytea, e mood, bit1 bit(1), bit8 bit(8), vb bit varying, "
    "pt point, hs hstore, ci citext, lt ltree, dom posint, ia int[], ta text[], "
    "na numeric[], ua uuid[], ea mood[], da date[], tma time[], hsa hstore[], "
    "cia citext[], lta ltree[]); "
    # a key of several types, for the headers of a key change (Connect's text of a key)
    "CREATE TABLE keyed (id int, code text, amount numeric(8,2), raw bytea, note text, "
    "PRIMARY KEY (id, code, amount, raw))",
)
VALUES = (
    "1, -2, 4, 8000000000, 42, 1.5, 2.25, true, 'text', 'varchar', 'abc', "
    "'10.0.0.1', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', '[1,5)', "
    "1234.50, 3.14159, '2024-02-29', '12:34:56.789', '12:34:56.789012', "
    "'2024-02-29 12:34:56.789', '2024-02-29 12:34:56.789012', "
    "'2024-02-29 12:34:56.789+02', '12:34:56+02', '1 year 2 months 3 days 04:05:06.7', "
    "12.34, '{\"a\": [1, 2]}', '{\"b\": {\"c\": null}}', "
    "'6f1a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8', '<a>x</a>', '\\xdeadbeef', 'ok', B'1', "
    "B'10100101', B'101', '(1.5,-2)', 'k=>v, n=>NULL', 'MiXed', 'a.b.c', 5, "
    "'{1,NULL,3}', '{x,NULL}', '{1.5,NULL}', '{6f1a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8}', "
    "'{ok,sad}', '{2024-01-01,NULL}', '{01:02:03}', ARRAY['a=>1'::hstore, NULL], "
    "'{MiXed,NULL}', '{a.b,x.y}'")
NULLS = "2, NULL, 9" + ", NULL" * 48


def resolve_debezium():
    """The plugin directory of Debezium's jars, resolved once into the cache the way
    bench/cdc does; the test fails with Maven's reason when they cannot be."""
    done = subprocess.run([str(ROOT / "bench/debezium/resolve")], capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, f"Debezium's jars could not be resolved:\n{done.stderr}"
    return done.stdout.strip()


def normalise(record):
    """A record (key, value, headers as decoded JSON and text) with the fields that belong
    to the instance, not to the change, set aside; the one place that says which:

    - the envelope's ts_ms, ts_us, ts_ns (when the connector made the record);
    - for snapshot reads only, the source block's ts_*, lsn, txId, xmin and sequence: each
      connector read its own snapshot, at its own slot's consistent point (streamed
      changes come from the same WAL, so there they must be equal);
    - the header __debezium.context.runId (a UUID each task run draws).
    The topic is set aside by the caller (tributary's is renamed by a RegexRouter)."""
    key, value, headers = record
    value = json.loads(json.dumps(value))
    payload = value and value.get("payload")
    if payload:
        for field in ("ts_ms", "ts_us", "ts_ns"):
            if payload.get(field) is not None:
                payload[field] = "<time>"
        source = payload.get("source")
        if source and payload.get("op") == "r":
            for field in ("ts_ms", "ts_us", "ts_ns", "lsn", "txId", "xmin", "sequence"):
                if source.get(field) is not None:
                    source[field] = f"<{field}>"
    headers = [(name, "<run id>" if name == "__debezium.context.runId" else text)
               for name, text in headers]
    return key, value, headers


def differences(ours, theirs, path="record"):
    """The places where two decoded records differ, each as path: ours != theirs."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [d for k in dict.fromkeys([*ours, *theirs])
                for d in differences(ours.get(k, "<absent>"), theirs.get(k, "<absent>"),
                                     f"{path}.{k}")]
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)) \
            and len(ours) == len(theirs):
        return [d for i, (o, t) in enumerate(zip(ours, theirs))
                for d in differences(o, t, f"{path}[{i}]")]
    return [] if ours == theirs else [f"{path}: {ours!r} != {theirs!r}"]


class TopicReader:
    """Every record of one topic, in order, decoded: (key, value, [(header, text)])."""

    def __init__(self, bed, topic):
        self.consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                                  "group.id": f"dbz-{uuid.uuid4().hex}",
                                  "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.consumer.subscribe([topic])
        self.records = []

    def until(self, count, timeout=120):
        def enough():
            message = self.consumer.poll(0.5)
            if message is not None and not message.error():
                decode = lambda b: None if b is None else json.loads(b)  # noqa: E731
                self.records.append((decode(message.key()), decode(message.value()),
                                     [(n, None if v is None else v.decode())
                                      for n, v in message.headers() or []]))
            return len(self.records) >= count
        wait_for(enough, timeout=timeout, interval=0, what=f"{count} records")
        return self.records

    def close(self):
        self.consumer.close()


def connector(bed, db, prefix, slot, publication, **extra):
    """The same keys for both connectors but the slot and publication."""
    return {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "tasks.max": "1",
            "database.hostname": bed.pg.host, "database.port": str(bed.pg.port),
            "database.user": bed.pg.user, "database.password": f"${{env:{PASSWORD_ENV}}}",
            "database.dbname": db, "topic.prefix": prefix, "plugin.name": "pgoutput",
            "slot.name": slot, "publication.name": publication,
            "publication.autocreate.mode": "filtered",
            "table.include.list": "public\\.(alltypes|keyed)", "snapshot.mode": "initial",
            "skipped.operations": "none",
            "key.converter": JSON, "value.converter": JSON,
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true", **extra}


def slot_active(bed, db, slot):
    return bed.pg.sql(f"SELECT active FROM pg_replication_slots WHERE slot_name = '{slot}'",
                      db=db) == [["t"]]


@pytest.fixture
def dbz_db(bed):
    """A fresh database; its slots are dropped once the connectors released them."""
    db = bed.pg.fresh_database("dbz")
    yield db
    for (slot,) in bed.pg.sql("SELECT slot_name FROM pg_replication_slots WHERE "
                              f"database = '{db}'", db=db):
        wait_for(lambda: not slot_active(bed, db, slot), timeout=60,
                 what=f"slot {slot} released")
        bed.pg.sql(f"SELECT pg_drop_replication_slot('{slot}')", db=db)


def test_debezium_and_tributary_write_the_same_records(dbz_db, start_worker, bed, tmp_path):
    plugins = resolve_debezium()
    db = dbz_db
    bed.pg.sql(SCHEMA[0], db=db, superuser=True)
    bed.pg.sql(SCHEMA[1], db=db)
    bed.pg.sql(f"INSERT INTO alltypes VALUES ({VALUES}), ({NULLS}); INSERT INTO keyed "
               "VALUES (1, 'a\"b\\c', 12.50, '\\x00ff', 'n')", db=db)
    prefix = f"dbz{uuid.uuid4().hex[:8]}"
    unique = uuid.uuid4().hex[:12]
    env = {PASSWORD_ENV: bed.pg.password}

    connect = ConnectDistributed(
        bed, tmp_path / "connect", f"dbz-{unique}", connect_topics(bed, "dbz"), 1,
        plugins=[plugins],
        properties={"config.providers": "env", "config.providers.env.class":
                    "org.apache.kafka.common.config.provider.EnvVarConfigProvider"},
        env=env)
    w = start_worker({"offset.flush.interval.ms": "100"}, env=env)
    # Debezium's records, then tributary's (renamed), of each table
    readers = {table: (TopicReader(bed, f"{prefix}.public.{table}"),
                       TopicReader(bed, f"{prefix}-tb.public.{table}"))
               for table in ("alltypes", "keyed")}
    try:
        connect.create("debezium", connector(bed, db, prefix, f"d_{unique}", f"d_{unique}"))
        response = w.post("/connectors", json={"name": "tributary", "config": connector(
            bed, db, prefix, f"t_{unique}", f"t_{unique}",
            **{"transforms": "rename",
               "transforms.rename.type": "org.apache.kafka.connect.transforms.RegexRouter",
               "transforms.rename.regex": f"{prefix}\\.(.*)",
               "transforms.rename.replacement": f"{prefix}-tb.$1"})})
        assert response.status_code == 201, response.text

        # both snapshots read, both slots streaming: the changes below are in both streams
        expected = {"alltypes": 2, "keyed": 1}
        for table, pair in readers.items():
            for reader in pair:
                reader.until(expected[table])
        for slot in (f"d_{unique}", f"t_{unique}"):
            wait_for(lambda: slot_active(bed, db, slot), timeout=120,
                     what=f"slot {slot} streaming")

        bed.pg.sql("INSERT INTO alltypes (id, i4, t) VALUES (3, 33, 'three'); "
                   "UPDATE alltypes SET t = 'changed', ea = '{happy}' WHERE id = 1; "
                   "UPDATE alltypes SET id = 4 WHERE id = 3; "
                   "DELETE FROM alltypes WHERE id = 2", db=db)
        # c, u, d + tombstone + c (the key change), d + tombstone
        expected["alltypes"] += 7
        bed.pg.sql("ALTER TABLE alltypes REPLICA IDENTITY FULL", db=db)
        bed.pg.sql("UPDATE alltypes SET b = false, hs = 'z=>y' WHERE id = 1; "
                   "DELETE FROM alltypes WHERE id = 4", db=db)
        expected["alltypes"] += 3  # u, d + tombstone
        bed.pg.sql("TRUNCATE alltypes", db=db)
        expected["alltypes"] += 1  # t
        bed.pg.sql("UPDATE keyed SET code = 'x', amount = 0.01", db=db)
        expected["keyed"] += 3  # d + tombstone + c

        records = {table: [reader.until(expected[table]) for reader in pair]
                   for table, pair in readers.items()}
        theirs = records["alltypes"][0]
        assert [v and v["payload"]["op"] for _, v, _ in theirs] == [
            "r", "r", "c", "u", "d", None, "c", "d", None, "u", "d", None, "t"]
        # the key change's delete and tombstone name the new key, its create the old
        assert [h[0] for _, _, h in theirs[4:7]] == [
            ("__debezium.newkey", '{"id":4}')] * 2 + [("__debezium.oldkey", '{"id":3}')]
        assert [h[0][1] for _, _, h in records["keyed"][0][1:]] == [
            '{"id":1,"code":"x","amount":0.01,"raw":"AP8="}'] * 2 + [
            '{"id":1,"code":"a\\"b\\\\c","amount":12.50,"raw":"AP8="}']
        diff = [d for table, (theirs, ours) in records.items()
                for index, (o, t) in enumerate(zip(ours, theirs))
                for d in differences(normalise(o), normalise(t), f"{table} record {index}")]
        assert not diff, "tributary's != Debezium's:\n" + "\n".join(diff)
        for table, (theirs, ours) in records.items():
            assert len(ours) == len(theirs), table
            # and nothing more than Debezium wrote
            message = readers[table][1].consumer.poll(1)
            assert message is None or message.error(), message.value()
    finally:
        for pair in readers.values():
            for reader in pair:
                reader.close()
        connect.request("DELETE", "/connectors/debezium")
        connect.stop()
