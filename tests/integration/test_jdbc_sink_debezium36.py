"""Debezium 3.6's JDBC sink keys beside 3.0's (io.debezium.connector.jdbc.
JdbcSinkConnector): collection.name.format and its 3.0 name table.name.format,
the keys refused by name, and connection.restart.on.errors against the bed's
PostgreSQL when the sink's session is terminated."""
import uuid

import pytest

from kafka_io import create_topic, produce
from test_jdbc_sink import (JSON, KEY, ROW, SETTINGS, debezium_event, envelope, metric,
                            pg_or_skip, pg_rows, pg_worker, sqlite_rows, task_state)
from worker import wait_for

pytestmark = pytest.mark.integration

DEBEZIUM = "io.debezium.connector.jdbc.JdbcSinkConnector"


def debezium_records(first, count):
    """Change events of ids first .. first + count - 1, keyed by id."""
    return [(0, envelope(KEY, {"id": i}),
             debezium_event("c", None, {"id": i, "name": f"n{i}"}))
            for i in range(first, first + count)]


def dbz_config(topic, url, **extra):
    return {"connector.class": DEBEZIUM, "topics": topic, "connection.url": url,
            "key.converter": JSON, "value.converter": JSON,
            "insert.mode": "upsert", "primary.key.mode": "record_key",
            "schema.evolution": "basic", **extra}


def test_collection_name_format_wins_over_its_30_name(start_worker, bed, tmp_path):
    """3.6's collection.name.format names the table, over 3.0's table.name.format
    when both are given (as Debezium's Configuration reads its aliases); 3.0's name
    alone still names it."""
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("srv.inv.fmt")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, debezium_records(0, 3))
    both, old = str(tmp_path / "both.db"), str(tmp_path / "old.db")
    for name, db, extra in (
            ("dbz36both", both, {"collection.name.format": "new_${topic}",
                                 "table.name.format": "old_${topic}"}),
            ("dbz36old", old, {"table.name.format": "old_${topic}",
                               "database.time_zone": "Europe/Paris"})):
        reply = w.post("/connectors", json={"name": name,
                                            "config": dbz_config(topic, f"jdbc:sqlite:{db}",
                                                                 **extra)})
        assert reply.status_code == 201, reply.text
    table = topic.replace(".", "_")
    for db, prefix in ((both, "new_"), (old, "old_")):
        wait_for(lambda: sqlite_rows(db, f'SELECT id FROM "{prefix}{table}" ORDER BY id')
                 == [(0,), (1,), (2,)], timeout=60, what=f"the rows in {prefix}{table}")
    assert sqlite_rows(both, f'SELECT id FROM "old_{table}"') is None  # no such table


def test_field_include_and_exclude_lists_choose_the_columns(start_worker, bed,
                                                            tmp_path):
    """field.exclude.list leaves its fields out; field.include.list writes only its
    own, an entry topic:field counting for that topic only."""
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("srv.inv.cols")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, debezium_records(0, 3))
    excluded, included = str(tmp_path / "ex.db"), str(tmp_path / "in.db")
    for name, db, extra in (
            ("dbz36ex", excluded, {"field.exclude.list": "name"}),
            ("dbz36in", included, {"field.include.list":
                                   f"other.topic:name, {topic}:id"})):
        reply = w.post("/connectors", json={
            "name": name, "config": dbz_config(topic, f"jdbc:sqlite:{db}", **extra)})
        assert reply.status_code == 201, reply.text
    table = topic.replace(".", "_")
    for db in (excluded, included):
        wait_for(lambda: sqlite_rows(db, f'SELECT * FROM "{table}" ORDER BY id')
                 == [(0,), (1,), (2,)], timeout=60, what="the rows, id only")
    reply = w.put(f"/connector-plugins/{DEBEZIUM}/config/validate", json={
        **dbz_config(topic, f"jdbc:sqlite:{excluded}"), "name": "dbz36both",
        "field.exclude.list": "name", "field.include.list": "id"})
    assert errors_of(reply) == {"field.exclude.list": [
        "Cannot define both field.exclude.list and field.include.list. Please specify "
        "only one."]}


def sourced_event(op, after, source):
    """A change event of ROW rows with a source block of text fields."""
    row = {**ROW, "optional": True, "name": "srv.inv.cust.Value"}
    block = {"type": "struct", "name": "io.debezium.connector.postgresql.Source",
             "optional": False,
             "fields": [{"field": f, "type": "string", "optional": False}
                        for f in source]}
    schema = {"type": "struct", "name": "srv.inv.cust.Envelope", "optional": False,
              "fields": [{**row, "field": "before"}, {**row, "field": "after"},
                         {**block, "field": "source"},
                         {"field": "op", "type": "string", "optional": False}]}
    return envelope(schema, {"before": None, "after": after, "source": source, "op": op})


def test_collection_name_format_takes_the_source_block(start_worker, bed, tmp_path):
    """${source.<field>} in collection.name.format names each event's table from its
    source block, as Debezium's default collection naming does; the tombstone after
    a delete is skipped (it has no source block), a flat record without one goes
    to the dead letter path with the reason."""
    w = start_worker(SETTINGS)
    topic = bed.unique_topic("srv.src")
    db = str(tmp_path / "src.db")
    create_topic(bed, topic, 1)
    key = lambda i: envelope(KEY, {"id": i})  # noqa: E731
    block = lambda table: {"schema": "inv", "table": table}  # noqa: E731
    produce(bed.bootstrap, topic, [
        (0, key(1), sourced_event("c", {"id": 1, "name": "a"}, block("cust"))),
        (0, key(2), sourced_event("c", {"id": 2, "name": "b"}, block("orders"))),
        (0, key(3), sourced_event("c", {"id": 3, "name": "c"}, block("cust"))),
        (0, key(3), sourced_event("d", None, block("cust"))),
        (0, key(3), None),  # the tombstone after the delete
        (0, key(4), envelope(ROW, {"id": 4, "name": "flat"})),
        (0, key(5), sourced_event("c", {"id": 5, "name": "e"}, block("orders"))),
    ])
    config = dbz_config(topic, f"jdbc:sqlite:{db}", **{
        "delete.enabled": "true", "errors.tolerance": "all", "errors.log.enable": "true",
        "collection.name.format": "${source.schema}_${source.table}"})
    reply = w.post("/connectors", json={"name": "dbz36src", "config": config})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: sqlite_rows(db, 'SELECT id FROM "inv_orders" ORDER BY id')
             == [(2,), (5,)], timeout=60, what="the rows of inv.orders")
    assert sqlite_rows(db, 'SELECT id FROM "inv_cust" ORDER BY id') == [(1,)]
    wait_for(lambda: "but the record is not a Debezium change event" in w.logs(),
             timeout=30, what="the flat record's reason logged")
    assert task_state(w, "dbz36src")[0] == "RUNNING"


def errors_of(reply):
    """The keys of a validation's answer that have errors, and their messages."""
    assert reply.status_code == 200, reply.status_code
    return {c["value"]["name"]: c["value"]["errors"] for c in reply.json()["configs"]
            if c["value"]["errors"]}


def test_debezium_36_keys_refused_by_name(start_worker, bed, tmp_path):
    """hibernate.* (Debezium's ORM), collection.table.format (declared by 3.6, read by
    nothing) other than its default, and a bad connection.restart.on.errors are each
    refused on their own key; 3.6's defaults pass."""
    w = start_worker(SETTINGS)
    url = f"jdbc:sqlite:{tmp_path / 'v.db'}"
    validate = f"/connector-plugins/{DEBEZIUM}/config/validate"
    good = dbz_config("t", url, **{"name": "dbz36v",
                                   "collection.table.format": "${table}",
                                   "connection.restart.on.errors": "true",
                                   "connection.provider":
                                       "org.hibernate.agroal.internal.AgroalConnectionProvider",
                                   "flush.max.retries": "3",
                                   "flush.retry.delay.ms": "100",
                                   "use.time.zone": "+02:00",
                                   "dialect.postgres.unnest.insert.enabled": "true"})
    assert errors_of(w.put(validate, json=good)) == {}
    bad = {**good, "hibernate.dialect": "org.hibernate.dialect.PostgreSQLDialect",
           "collection.table.format": "${schema}_${table}",
           "connection.restart.on.errors": "sometimes"}
    errors = errors_of(w.put(validate, json=bad))
    assert set(errors) == {"hibernate.dialect", "collection.table.format",
                           "connection.restart.on.errors"}, errors
    assert errors["hibernate.dialect"] == [
        f"hibernate.dialect is a key of {DEBEZIUM} that tributary does not implement; "
        "remove it"]
    assert "does not read it" in errors["collection.table.format"][0]
    reply = w.post("/connectors", json={"name": "dbz36bad",
                                        "config": {**bad, "name": "dbz36bad"}})
    assert reply.status_code == 400 and "hibernate.dialect" in reply.text, reply.text


def pg_debezium_case(start_worker, bed, name, worker=None, **extra):
    """A worker, a fresh database and a Debezium sink into it whose session has its
    own application_name, holding the first 100 rows."""
    pg = pg_or_skip(bed)
    w = pg_worker(start_worker, bed, **(worker or {}))
    db = pg.fresh_database(f"dbz{name}")
    topic = bed.unique_topic(f"srv.dbz.{name}")
    app = f"tb-{name}-{uuid.uuid4().hex[:8]}"
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, debezium_records(0, 100))
    config = dbz_config(topic, f"{pg.jdbc_url(db)}?ApplicationName={app}", **{
        "connection.username": pg.user,
        "connection.password": "${env:JDBC_PG_PASSWORD}", **extra})
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text
    table = topic.replace(".", "_")
    count = f'SELECT count(*), count(DISTINCT id) FROM "{table}"'
    wait_for(lambda: pg_rows(pg, db, count) == [["100", "100"]], timeout=60,
             what="the first 100 rows")
    return pg, w, db, topic, app, count, config


def terminate(pg, app):
    """Ends the sink's session, found by its application_name; how many it ended."""
    ended = pg.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                   f"WHERE application_name = '{app}'", superuser=True)
    return int(ended[0][0])


def test_restart_on_errors_reopens_a_terminated_session_and_loses_nothing(
        start_worker, bed):
    """connection.restart.on.errors=true: each time the sink's session is terminated
    while records flow, the next batch meets the lost connection, a new one is opened
    and the batch written again after flush.retry.delay.ms: every row once, the task
    running, the loss logged once per outage."""
    pg, w, db, topic, app, count, _ = pg_debezium_case(
        start_worker, bed, "dbzrestart", **{"connection.restart.on.errors": "true",
                                            "flush.retry.delay.ms": "200"})
    for round_ in range(3):
        assert terminate(pg, app) == 1
        first = 100 * (round_ + 1)
        produce(bed.bootstrap, topic, debezium_records(first, 100))
        total = str(first + 100)
        wait_for(lambda: pg_rows(pg, db, count) == [[total, total]], timeout=60,
                 what=f"{total} rows, each once")
    task = "[connector:dbzrestart:0]"
    lost = [line for line in w.logs().splitlines()
            if task in line and "failed, retrying in 200 ms (flush.retry.delay.ms" in line]
    assert len(lost) == 3, "\n".join(lost)  # one per outage, not one per try
    assert not [line for line in w.logs().splitlines()
                if task in line and "task failed" in line]
    assert task_state(w, "dbzrestart")[0] == "RUNNING"
    assert metric(w, "tributary_jdbc_retries_total", "dbzrestart") >= 1
    assert metric(w, "tributary_jdbc_rows_written_total", "dbzrestart") == 400
    assert pg.password not in w.logs()


def test_without_restart_on_errors_a_terminated_session_fails_the_task(start_worker,
                                                                       bed):
    """connection.restart.on.errors=false (Debezium's default): the lost connection
    fails the task, naming the key; nothing after the committed rows is written, and
    a restart with the key set writes the rest, each once."""
    pg, w, db, topic, app, count, config = pg_debezium_case(
        start_worker, bed, "dbznorestart",
        worker={"task.restart.backoff.initial.ms": "0"})  # no automatic restart
    assert terminate(pg, app) == 1
    produce(bed.bootstrap, topic, debezium_records(100, 100))
    wait_for(lambda: task_state(w, "dbznorestart")[0] == "FAILED", timeout=60,
             what="the task failed")
    trace = task_state(w, "dbznorestart")[1]
    assert "the connection was lost, and connection.restart.on.errors=false" in trace
    assert "flush.max.retries=5" in trace
    assert pg_rows(pg, db, count) == [["100", "100"]]
    assert pg.password not in w.logs()
    reply = w.put("/connectors/dbznorestart/config",
                  json={**config, "connection.restart.on.errors": "true"})
    assert reply.status_code == 200, reply.text  # restarts the task
    wait_for(lambda: pg_rows(pg, db, count) == [["200", "200"]], timeout=60,
             what="the rest written once the key is set")
