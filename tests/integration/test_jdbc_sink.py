"""Kafka -> the JDBC sink (Confluent's keys) into SQLite files and the bed's
PostgreSQL: insert, upsert and update with every pk.mode, deletes from
tombstones, auto.create and auto.evolve, JsonConverter with schemas, a bad
record to the DLQ, and exactly-once through kill -9."""
import json
import os
import signal
import sqlite3

import pytest
from confluent_kafka import Consumer

from kafka_io import create_topic, produce
from worker import wait_for

pytestmark = pytest.mark.integration

SETTINGS = {"offset.flush.interval.ms": "500"}
JSON = "org.apache.kafka.connect.json.JsonConverter"


def schema_of(fields, name="row"):
    """A Connect struct schema of (name, type, optional[, logical name[, params]])."""
    out = []
    for f in fields:
        field = {"field": f[0], "type": f[1], "optional": f[2]}
        if len(f) > 3:
            field["name"] = f[3]
        if len(f) > 4:
            field["parameters"] = f[4]
        out.append(field)
    return {"type": "struct", "name": name, "optional": False, "fields": out}


ROW = schema_of([("id", "int32", False), ("name", "string", True)])
KEY = schema_of([("id", "int32", False)], "key")


def envelope(schema, payload):
    return json.dumps({"schema": schema, "payload": payload}).encode()


def rows_of(ids_names):
    return [envelope(ROW, {"id": i, "name": n}) for i, n in ids_names]


def sink(w, name, topic, url, **extra):
    config = {"connector.class": "jdbc-sink", "topics": topic, "connection.url": url,
              "key.converter": JSON, "value.converter": JSON,
              "auto.create": "true", **extra}
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def sqlite_rows(path, sql):
    if not os.path.exists(path):
        return None
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return None  # the table is not created yet


def task_state(w, name):
    reply = w.get(f"/connectors/{name}/status")
    tasks = reply.json().get("tasks", []) if reply.status_code == 200 else []
    return (tasks[0]["state"], tasks[0].get("trace", "")) if tasks else (None, "")


# ---- SQLite ----------------------------------------------------------------

def test_sqlite_insert_creates_the_table_and_writes_each_row_once(start_worker, bed,
                                                                  tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("jdbcins")
    db = str(tmp_path / "target.db")
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic,
            [(i % 2, None, v) for i, v in enumerate(rows_of((i, f"n{i}")
                                                           for i in range(50)))])
    sink(w, "jins", topic, f"jdbc:sqlite:{db}")
    query = f'SELECT id, name FROM "{topic}" ORDER BY id'
    wait_for(lambda: (sqlite_rows(db, query) or []).__len__() >= 50, timeout=60,
             what="50 rows")
    assert sqlite_rows(db, query) == [(i, f"n{i}") for i in range(50)]
    # the offsets of both partitions are in the database, with the rows
    stored = sqlite_rows(db, 'SELECT topic, kafka_partition, next_offset FROM '
                             '"__tributary_sink_offsets" WHERE connector = \'jins\' '
                             'ORDER BY kafka_partition')
    assert stored == [(topic, 0, 25), (topic, 1, 25)]


def test_sqlite_upsert_by_record_key_and_delete_by_tombstone(start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("jdbcups")
    db = str(tmp_path / "target.db")
    create_topic(bed, topic, 1)
    key = lambda i: envelope(KEY, {"id": i})  # noqa: E731
    records = [(0, key(i), envelope(ROW, {"id": i, "name": f"a{i}"})) for i in range(10)]
    # the same keys again in one batch: one statement cannot touch a row twice
    records += [(0, key(i), envelope(ROW, {"id": i, "name": f"b{i}"})) for i in range(5)]
    records += [(0, key(1), envelope(ROW, {"id": 1, "name": "c1"}))]
    records += [(0, key(9), None), (0, key(8), None)]
    produce(bed.bootstrap, topic, records)
    sink(w, "jups", topic, f"jdbc:sqlite:{db}", **{
        "insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true"})
    query = f'SELECT id, name FROM "{topic}" ORDER BY id'
    expected = [(0, "b0"), (1, "c1"), (2, "b2"), (3, "b3"), (4, "b4"), (5, "a5"),
                (6, "a6"), (7, "a7")]
    wait_for(lambda: sqlite_rows(db, query) == expected, timeout=60,
             what="the upserted rows without the deleted ones")


def test_sqlite_evolves_the_table_when_the_schema_gains_a_field(start_worker, bed,
                                                                tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("jdbcevo")
    db = str(tmp_path / "target.db")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, v) for v in rows_of([(1, "one")])])
    sink(w, "jevo", topic, f"jdbc:sqlite:{db}", **{"auto.evolve": "true"})
    wait_for(lambda: sqlite_rows(db, f'SELECT id FROM "{topic}"') == [(1,)], timeout=60,
             what="the first row")
    wider = schema_of([("id", "int32", False), ("name", "string", True),
                       ("price", "bytes", True, "org.apache.kafka.connect.data.Decimal",
                        {"scale": "2"}),
                       ("day", "int32", True, "org.apache.kafka.connect.data.Date"),
                       ("at", "int64", True, "org.apache.kafka.connect.data.Timestamp")])
    # 12345 unscaled at scale 2, base64 of 0x3039; 19000 days; ms since the epoch
    produce(bed.bootstrap, topic, [(0, None, envelope(wider, {
        "id": 2, "name": "two", "price": "MDk=", "day": 19000, "at": 1700000000123}))])
    query = f'SELECT id, name, price, day, at FROM "{topic}" ORDER BY id'
    wait_for(lambda: sqlite_rows(db, query) == [
        (1, "one", None, None, None),
        (2, "two", 123.45, "2022-01-08", "2023-11-14 22:13:20.123")], timeout=60,
        what="the row of the wider schema in the evolved table")


def test_sqlite_without_auto_evolve_fails_naming_the_missing_field(start_worker, bed,
                                                                   tmp_path):
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("jdbcnoevo")
    db = str(tmp_path / "target.db")
    create_topic(bed, topic, 1)
    wider = schema_of([("id", "int32", False), ("name", "string", True),
                       ("extra", "string", True)])
    produce(bed.bootstrap, topic,
            [(0, None, v) for v in rows_of([(1, "one")]) +
             [envelope(wider, {"id": 2, "name": "two", "extra": "x"})]])
    sink(w, "jnoevo", topic, f"jdbc:sqlite:{db}")
    state = wait_for(lambda: task_state(w, "jnoevo")[0] == "FAILED" and
                     task_state(w, "jnoevo"), timeout=60, what="the task to fail")
    assert "is missing fields (extra) and auto-evolution is disabled" in state[1]
    # the first row is written only when it came in an earlier put: a put is
    # one transaction, and its DDL is checked before it begins
    assert sqlite_rows(db, f'SELECT id FROM "{topic}"') in ([], [(1,)])


def test_sqlite_bad_records_go_to_the_dlq_with_their_reason(start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    topic, dlq = bed.unique_topic("jdbcbad"), bed.unique_topic("jdbcdlq")
    db = str(tmp_path / "target.db")
    create_topic(bed, topic, 1)
    nameless = schema_of([("id", "int32", False), ("name", "string", False)])
    records = rows_of([(i, f"n{i}") for i in range(5)])
    records.append(b'{"schema":null,"payload":{"id":99}}')  # no struct schema
    records += rows_of([(i, f"n{i}") for i in range(5, 10)])
    produce(bed.bootstrap, topic, [(0, None, v) for v in records])
    # the table exists with name NOT NULL; a null name violates it
    with sqlite3.connect(db) as conn:
        conn.execute(f'CREATE TABLE "{topic}" (id INTEGER NOT NULL, name TEXT NOT NULL)')
    produce(bed.bootstrap, topic, [(0, None, envelope(
        {**nameless, "fields": [nameless["fields"][0],
                                {"field": "name", "type": "string", "optional": True}]},
        {"id": 100, "name": None}))])
    sink(w, "jbad", topic, f"jdbc:sqlite:{db}", **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})
    query = f'SELECT id FROM "{topic}" ORDER BY id'
    wait_for(lambda: sqlite_rows(db, query) == [(i,) for i in range(10)], timeout=60,
             what="the ten good rows")
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": f"g-{dlq}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([dlq])
    found = {}

    def two():
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            found[m.offset()] = (m.value(), dict(m.headers() or []))
        return len(found) >= 2
    wait_for(two, timeout=60, what="two records in the DLQ")
    consumer.close()
    (v1, h1), (v2, h2) = found[0], found[1]
    assert v1 == b'{"schema":null,"payload":{"id":99}}'
    assert h1["__connect.errors.stage"] == b"TASK_PUT"
    assert b"struct with a schema" in h1["__connect.errors.exception.message"]
    assert json.loads(v2)["payload"] == {"id": 100, "name": None}
    assert b"NOT NULL" in h2["__connect.errors.exception.message"]
    assert task_state(w, "jbad")[0] == "RUNNING"


def test_validation_speaks_confluents_messages_and_hides_the_password(start_worker):
    w = start_worker(SETTINGS)
    config = {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
              "topics": "t",
              "connection.url": "jdbc:postgresql://db:5432/x?password=s3cret&bogus=1",
              "insert.mode": "merge", "delete.enabled": "true", "pk.mode": "kafka"}
    reply = w.put("/connector-plugins/JdbcSinkConnector/config/validate", json=config)
    assert reply.status_code == 200, reply.text
    errors = {c["value"]["name"]: c["value"]["errors"] for c in reply.json()["configs"]
              if c["value"]["errors"]}
    assert errors["insert.mode"] == [
        "Invalid value merge for configuration insert.mode: Invalid enumerator"]
    assert errors["delete.enabled"] == [
        "Primary key mode must be 'record_key' when delete support is enabled"]
    assert "'bogus' is not supported" in errors["connection.url"][0]
    # the message hides it (the value is echoed as written, as Connect does)
    assert "s3cret" not in json.dumps(errors)
    assert "password=[hidden]" in errors["connection.url"][0]
    assert "s3cret" not in w.logs()


# ---- PostgreSQL ------------------------------------------------------------

def pg_or_skip(bed):
    pg = getattr(bed, "pg", None)
    if pg is None:
        pytest.skip("the bed has no PostgreSQL")
    return pg


def pg_worker(start_worker, bed, **settings):
    """A worker that has the bed's password in its environment, where the
    connectors' ${env:...} reference finds it (a literal secret is refused)."""
    return start_worker({**SETTINGS, **settings}, env={"JDBC_PG_PASSWORD": bed.pg.password})


def pg_sink(w, bed, name, topic, db, **extra):
    sink(w, name, topic, bed.pg.jdbc_url(db), **{
        "connection.user": bed.pg.user, "connection.password": "${env:JDBC_PG_PASSWORD}",
        **extra})


def pg_rows(pg, db, sql):
    try:
        return pg.sql(sql, db=db)
    except Exception:  # noqa: BLE001 - the table is not there yet
        return None


def test_postgres_insert_upsert_update_with_every_pk_mode(start_worker, bed):
    pg = pg_or_skip(bed)
    w = pg_worker(start_worker, bed)
    db = pg.fresh_database("jdbcmodes")
    key = lambda i: envelope(KEY, {"id": i})  # noqa: E731
    first = [(0, key(i), envelope(ROW, {"id": i, "name": f"a{i}"})) for i in range(6)]
    again = [(0, key(i), envelope(ROW, {"id": i, "name": f"b{i}"})) for i in range(3)]
    cases = [
        ("insert", "none", "", first + again, 9),
        ("insert", "kafka", "", first + again, 9),
        ("upsert", "record_key", "", first + again, 6),
        ("upsert", "record_value", "id", first + again, 6),
        ("update", "record_value", "id", again, 3),
    ]
    for n, (mode, pk, fields, records, count) in enumerate(cases):
        topic = bed.unique_topic(f"pgm{n}")
        create_topic(bed, topic, 1)
        if mode == "update":  # update needs the rows to be there
            pg.sql(f'CREATE TABLE "{topic}" (id INT PRIMARY KEY, name TEXT)', db=db)
            pg.sql(f"INSERT INTO \"{topic}\" VALUES (0, 'x'), (1, 'x'), (2, 'x')", db=db)
        produce(bed.bootstrap, topic, records)
        pg_sink(w, bed, f"pgm{n}", topic, db, **{"insert.mode": mode, "pk.mode": pk,
                                                 "pk.fields": fields})
        wait_for(lambda: (pg_rows(pg, db, f'SELECT count(*) FROM "{topic}"') or
                          [["0"]])[0][0] == str(count) and
                 (pg_rows(pg, db, f'SELECT name FROM "{topic}" WHERE id = 0') or
                  [[None]])[-1][0] in ("b0",) + (("a0",) if mode == "insert" else ()),
                 timeout=60, what=f"{mode} with pk.mode={pk}")
        if mode != "insert":
            assert pg.sql(f'SELECT id, name FROM "{topic}" WHERE id < 3 ORDER BY id',
                          db=db) == [["0", "b0"], ["1", "b1"], ["2", "b2"]]
        if pk == "kafka":
            assert pg.sql(f'SELECT count(DISTINCT __connect_offset) FROM "{topic}"',
                          db=db) == [["9"]]
