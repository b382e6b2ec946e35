"""A database that stops answering without closing its sockets freezes nothing
but its own connectors: two JDBC sinks and a CDC source reach the bed's
PostgreSQL through a proxy that the test freezes (freezable_proxy.py; the bed's
server itself is shared and never stopped), next to a datagen -> FileStreamSink
pipeline on the same worker and pool.

While the proxy is frozen the FileStreamSink keeps writing; /health, GET
/connectors and /metrics answer within 1 s (the client's timeout); a sink's
statement gives up after socketTimeout and its put is retried. After the thaw
nothing is lost. Frozen again, with bounds far longer than the test, DELETE of
each database connector answers within task.shutdown.graceful.timeout.ms plus
1 s per task: a stopping task's wait on the database ends at its next slice."""
import json
import uuid

import pytest
import requests

from freezable_proxy import FreezableProxy
from kafka_io import create_topic, produce, read_values
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
GRACE_MS = 2000
SETTINGS = {"offset.flush.interval.ms": "300",
            "task.shutdown.graceful.timeout.ms": str(GRACE_MS)}
ROW = {"type": "struct", "name": "row", "optional": False,
       "fields": [{"field": "id", "type": "int32", "optional": False}]}
# one task each: a DELETE stops it, then answers
DELETE_BOUND_S = GRACE_MS / 1000 + 1


def rows(ids):
    return [(0, None, json.dumps({"schema": ROW, "payload": {"id": i}}).encode())
            for i in ids]


def jdbc_config(bed, proxy, db, topic, socket_timeout_s):
    url = (f"jdbc:postgresql://127.0.0.1:{proxy.port}/{db}"
           f"?socketTimeout={socket_timeout_s}&connectTimeout=3")
    return {"connector.class": "jdbc-sink", "topics": topic, "connection.url": url,
            "connection.user": bed.pg.user,
            "connection.password": "${env:TB_TEST_PG_PASSWORD}",
            "key.converter": JSON, "value.converter": JSON, "auto.create": "true",
            "max.retries": "1000", "retry.backoff.ms": "200"}


def cdc_config(bed, proxy, db, prefix, slot, timeout_ms):
    return {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": "127.0.0.1", "database.port": str(proxy.port),
            "database.user": bed.pg.user,
            "database.password": "${env:TB_TEST_PG_PASSWORD}", "database.dbname": db,
            "database.query.timeout.ms": str(timeout_ms), "topic.prefix": prefix,
            "plugin.name": "pgoutput", "slot.name": slot,
            "table.include.list": "public.src", "publication.autocreate.mode": "filtered"}


def create(w, name, config):
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def table_ids(bed, db, table):
    try:
        found = bed.pg.sql(f'SELECT id FROM "{table}" ORDER BY id', db=db)
    except RuntimeError:
        return []  # not created yet
    return [int(r[0]) for r in found]


def cdc_ids(bed, topic, count):
    """The ids of the source's records (at least once: a set)."""
    values = read_values(bed.bootstrap, topic, lambda vs: len(vs) >= count, timeout=90)
    return {v["after"]["id"] for v in values}


def answers_at_once(w):
    """/health, GET /connectors and /metrics, each within the client's 1 s."""
    for path in ("/health", "/connectors", "/metrics"):
        reply = requests.get(w.url + path, timeout=1)
        assert reply.status_code == 200, (path, reply.text)


@pytest.fixture
def proxy(bed):
    p = FreezableProxy(bed.pg.host, bed.pg.port)
    yield p
    p.close()


@pytest.fixture
def db(bed):
    name = bed.pg.fresh_database("silent")
    yield name
    slots = bed.pg.sql(f"SELECT slot_name FROM pg_replication_slots "
                       f"WHERE database = '{name}'", db=name)
    for (slot,) in slots:
        wait_for(lambda: bed.pg.sql(f"SELECT active FROM pg_replication_slots WHERE "
                                    f"slot_name = '{slot}'", db=name) != [["t"]],
                 what=f"slot {slot} released")
        bed.pg.sql(f"SELECT pg_drop_replication_slot('{slot}')", db=name)


def test_a_silent_database_holds_only_its_own_connectors(bed, proxy, db, start_worker,
                                                         tmp_path):
    w = start_worker(SETTINGS, env={"TB_TEST_PG_PASSWORD": bed.pg.password})
    bed.pg.sql("CREATE TABLE src (id int PRIMARY KEY)", db=db)
    bed.pg.sql("INSERT INTO src SELECT generate_series(1, 5)", db=db)
    generated, sinks = bed.unique_topic("silent-gen"), []
    for n in (1, 2):
        topic = bed.unique_topic(f"silent-jdbc{n}")
        create_topic(bed, topic, 1)
        produce(bed.bootstrap, topic, rows(range(20)))
        sinks.append((f"jdbc{n}", topic))
    prefix = f"silent{uuid.uuid4().hex[:8]}"
    slot = f"s_{uuid.uuid4().hex[:20]}"
    out = tmp_path / "out.txt"
    create(w, "gen", {"connector.class": "datagen", "topic": generated,
                      "records.per.second": "50"})
    create(w, "file", {"connector.class": "FileStreamSink", "topics": generated,
                       "file": str(out)})
    for name, topic in sinks:
        create(w, name, jdbc_config(bed, proxy, db, topic, 3))
    create(w, "cdc", cdc_config(bed, proxy, db, prefix, slot, 3000))
    for name, topic in sinks:
        wait_for(lambda: table_ids(bed, db, topic) == list(range(20)), timeout=60,
                 what=f"{name}'s first rows")
    assert cdc_ids(bed, f"{prefix}.public.src", 5) == set(range(1, 6))

    # silent: the sinks' statements get no answer, the source's stream nothing
    proxy.freeze()
    for name, topic in sinks:
        produce(bed.bootstrap, topic, rows(range(20, 40)))
    bed.pg.sql("INSERT INTO src SELECT generate_series(6, 10)", db=db)
    written = len(output_lines(out))

    def gave_up(name):
        return any(f"[connector:{name}:0]" in line and
                   "no answer from the server within socketTimeout=3 s" in line
                   for line in w.logs().splitlines())

    def gave_up_and_wrote_on():
        answers_at_once(w)
        return (all(gave_up(name) for name, _ in sinks) and
                len(output_lines(out)) > written + 100)
    wait_for(gave_up_and_wrote_on, timeout=30, interval=0.2,
             what="each sink's statement to give up while the file sink writes on")
    for _ in range(10):  # and still, a while later
        answers_at_once(w)

    proxy.thaw()
    for name, topic in sinks:
        wait_for(lambda: table_ids(bed, db, topic) == list(range(40)), timeout=60,
                 what=f"{name}'s rows after the thaw, each once")
    assert cdc_ids(bed, f"{prefix}.public.src", 10) == set(range(1, 11))

    # silent again, with bounds longer than the test: a task waiting on the
    # database is stopped within a slice
    for name, topic in sinks:
        reply = w.put(f"/connectors/{name}/config",
                      json=jdbc_config(bed, proxy, db, topic, 600))
        assert reply.status_code == 200, reply.text
    reply = w.put("/connectors/cdc/config",
                  json=cdc_config(bed, proxy, db, prefix, slot, 600000))
    assert reply.status_code == 200, reply.text
    for name, topic in sinks:
        produce(bed.bootstrap, topic, rows([40]))
        wait_for(lambda: table_ids(bed, db, topic)[-1:] == [40], timeout=60,
                 what=f"{name} reconfigured and writing")
    proxy.freeze()
    for name, topic in sinks:
        produce(bed.bootstrap, topic, rows([41]))
    # the source restarts: its new task waits on a connect that gets no answer
    assert w.post("/connectors/cdc/restart?includeTasks=true").status_code in (202, 204)
    written = len(output_lines(out))
    wait_for(lambda: answers_at_once(w) or len(output_lines(out)) > written + 100,
             timeout=30, what="the file sink to write on during the second silence")
    for name in ("jdbc1", "jdbc2", "cdc"):
        reply = requests.delete(f"{w.url}/connectors/{name}", timeout=DELETE_BOUND_S)
        assert reply.status_code == 204, reply.text
        answers_at_once(w)
    proxy.thaw()
    lines = len(output_lines(out))
    wait_for(lambda: len(output_lines(out)) > lines, what="the file sink writing on")
