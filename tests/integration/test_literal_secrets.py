"""Configs written for Connect, passwords literal, run unchanged on a default worker
(docs/SECURITY.md, "Literal secrets"): Debezium's PostgresConnector and Confluent's
JdbcSinkConnector on the bed's PostgreSQL, standalone and distributed. Their passwords are
never stored as given: standalone they go to the owner-only <store>.secrets file;
distributed they are sealed (AES-256-GCM) in the config topic under the workers'
secrets.encryption.key. The config topic's bytes and every file of every worker are read
for the password. The suite's scan (secret_scan.py) reads every response and log for it."""
import base64
import json
import pathlib
import secrets
import signal
import stat
import uuid

import pytest

from kafka_io import create_topic, produce, read_topic
from test_distributed import cluster_settings
from test_jdbc_sink import rows_of
from test_postgres_cdc import Reader, cdc_db, payload, slot_of  # noqa: F401 (a fixture)
from worker import wait_for

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
WARNING = "secrets written literally"


def debezium_config(bed, db, prefix):
    """Debezium's documented PostgresConnector config, with the bed's facts: the password
    literal. slot.name keeps tests on one server apart; the bed's user may not publish all
    tables (publication.autocreate.mode=filtered publishes the listed ones)."""
    return {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": bed.pg.host, "database.port": str(bed.pg.port),
            "database.user": bed.pg.user, "database.password": bed.pg.password,
            "database.dbname": db, "topic.prefix": prefix, "plugin.name": "pgoutput",
            "table.include.list": "public.items",
            "slot.name": f"s_{uuid.uuid4().hex[:20]}",
            "publication.autocreate.mode": "filtered"}


def jdbc_config(bed, db, topic):
    """Confluent's JdbcSinkConnector quickstart config, the password literal."""
    return {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "tasks.max": "1", "topics": topic,
            "connection.url": bed.pg.jdbc_url(db), "connection.user": bed.pg.user,
            "connection.password": bed.pg.password, "auto.create": "true",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": JSON, "value.converter.schemas.enable": "true"}


def create(w, name, config):
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def running(w, name):
    status = w.get(f"/connectors/{name}/status").json()
    tasks = status.get("tasks", [])
    assert not tasks or tasks[0]["state"] != "FAILED", tasks[0].get("trace")
    return bool(tasks) and tasks[0]["state"] == "RUNNING"


def run_both(bed, w, source_db, sink_db):
    """Creates both connectors through w and sees each move records: a change of the
    source table reaches its topic, records of a topic reach the sink's table. Returns
    their configs by name."""
    bed.pg.sql("CREATE TABLE items (id int PRIMARY KEY, name text); "
               "INSERT INTO items VALUES (1, 'one')", db=source_db)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    topic = bed.unique_topic("jdbc")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, v) for v in rows_of([(1, "a"), (2, "b")])])
    configs = {"pg": debezium_config(bed, source_db, prefix),
               "jdbc": jdbc_config(bed, sink_db, topic)}
    for name, config in configs.items():
        create(w, name, config)
    reader = Reader(bed, f"{prefix}.public.items")
    try:
        reader.until(1)
        wait_for(lambda: slot_of(bed, source_db, "active") == "t", timeout=90,
                 what="the slot streaming")
        bed.pg.sql("INSERT INTO items VALUES (2, 'two')", db=source_db)
        records = reader.until(2)
    finally:
        reader.close()
    assert [payload(v)["after"]["id"] for _, _, v in records] == [1, 2]

    def copied():
        try:
            return bed.pg.sql(f'SELECT id, name FROM "{topic}" ORDER BY id', db=sink_db)
        except RuntimeError:  # not created yet
            return None
    wait_for(lambda: copied() == [["1", "a"], ["2", "b"]], timeout=90,
             what="the sink's rows")
    wait_for(lambda: running(w, "pg") and running(w, "jdbc"), what="both tasks RUNNING")
    return configs


def hidden_everywhere(w):
    """Every REST reader shows the passwords as [hidden]."""
    for name, key in [("pg", "database.password"), ("jdbc", "connection.password")]:
        assert w.get(f"/connectors/{name}/config").json()[key] == "[hidden]"
        assert w.get(f"/connectors/{name}").json()["config"][key] == "[hidden]"
        for task in w.get(f"/connectors/{name}/tasks").json():
            assert task["config"][key] == "[hidden]"


def files_holding(directory, secret, skip=()):
    """The files under directory whose bytes hold secret."""
    return [str(p) for p in pathlib.Path(directory).rglob("*")
            if p.is_file() and p.name not in skip and secret.encode() in p.read_bytes()]


def warnings_of(workers, name):
    return [line for w in workers for line in w.logs().splitlines()
            if WARNING in line and f"[connector:{name}" in line]


def test_literal_passwords_run_standalone_and_stay_in_the_secrets_file(cdc_db, start_worker,
                                                                        bed):
    w = start_worker()  # a default worker
    run_both(bed, w, cdc_db, bed.pg.fresh_database("copy"))
    hidden_everywhere(w)
    assert len(warnings_of([w], "pg")) == 1 and len(warnings_of([w], "jdbc")) == 1
    assert "database.password" in warnings_of([w], "pg")[0]
    secrets_file = pathlib.Path(w.settings["offset.storage.file.filename"] + ".secrets")
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    w.stop()  # the WAL is folded into the store
    assert files_holding(w.dir, bed.pg.password) == [str(secrets_file)]


def key_file(tmp_path, name="keys.properties"):
    path = tmp_path / name
    path.write_text(f"key={base64.b64encode(secrets.token_bytes(32)).decode()}\n")
    return path


def distributed_settings(bed, group, keys):
    return {**cluster_settings(bed, group), "value.converter": JSON,
            "secrets.encryption.key": f"${{file:{keys}:key}}"}


def test_literal_passwords_run_distributed_sealed_in_the_config_topic(cdc_db, start_worker,
                                                                       bed, tmp_path):
    group = bed.unique_topic("cluster")
    settings = distributed_settings(bed, group, key_file(tmp_path))
    workers = [start_worker(settings) for _ in range(2)]
    configs = run_both(bed, workers[1], cdc_db, bed.pg.fresh_database("copy"))
    for w in workers:
        hidden_everywhere(w)
    assert len(warnings_of(workers, "pg")) == 1 and len(warnings_of(workers, "jdbc")) == 1
    # the same config written again keeps its sealed value (a new nonce would make new
    # task configs and restart the task)
    reply = workers[0].put("/connectors/jdbc/config", json=configs["jdbc"])
    assert reply.status_code == 200, reply.text
    replaced = [line for w in workers for line in w.logs().splitlines()
                if "[connector:jdbc" in line and "config replaced;" in line]
    assert len(replaced) == 1 and "1 task(s) unchanged, 0 (re)started" in replaced[0], replaced
    records = read_topic(bed, f"{group}-configs")
    sealed = {json.loads(v)["properties"]["connection.password"] for _, k, v in records
              if k == b"connector-jdbc"}
    assert len(sealed) == 1
    # read from the topic and given to another connector, or another key, it is refused
    stolen = sealed.pop()
    for name, key in [("thief", "http.auth.token"), ("jdbc", "http.auth.token")]:
        reply = workers[0].put(f"/connectors/{name}/config", json={
            "connector.class": "HttpSink", "topics": "t", "http.url": "http://127.0.0.1:9/",
            "http.auth.type": "bearer", key: stolen})
        assert reply.status_code == 400, reply.text
        assert (f"{key}: a sealed secret is refused: it was sealed for "
                "jdbc.connection.password") in reply.json()["message"]
    raw = b"".join((k or b"") + (v or b"") for _, k, v in records)
    leaked = bed.pg.password.encode() in raw  # not in the assertion: it would show it
    assert not leaked, "the password is in the config topic in plain text"
    assert b"${sealed:v1:" in raw
    for w in workers:
        w.stop()
        assert files_holding(w.dir, bed.pg.password) == []


def test_a_distributed_worker_without_a_key_refuses_literals_naming_it(start_worker, bed):
    w = start_worker(cluster_settings(bed, bed.unique_topic("cluster")))
    assert "secrets.encryption.key is not set" in w.logs()
    reply = w.post("/connectors", json={"name": "jdbc", "config": jdbc_config(
        bed, "nodb", bed.unique_topic("t"))})
    assert reply.status_code == 400
    message = reply.json()["message"]
    assert "connection.password holds a literal secret" in message
    assert "set the worker's secrets.encryption.key" in message


def test_a_worker_with_another_key_fails_the_task_naming_the_key(start_worker, bed,
                                                                  tmp_path):
    group = bed.unique_topic("cluster")
    first = start_worker(distributed_settings(bed, group, key_file(tmp_path, "a")))
    token = bed.pg.password  # a secret the scan knows
    create(first, "h", {"connector.class": "HttpSink", "topics": bed.unique_topic("t"),
                        "http.url": "http://127.0.0.1:9/", "http.auth.type": "bearer",
                        "http.auth.token": token})
    wait_for(lambda: running(first, "h"), timeout=90, what="the task RUNNING")
    other = start_worker(distributed_settings(bed, group, key_file(tmp_path, "b")))
    first.stop(signal.SIGTERM)

    def failed():
        tasks = other.get("/connectors/h/status").json()["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]["trace"]
    trace = wait_for(failed, timeout=90, what="the task FAILED on the other worker")
    assert "h.http.auth.token was sealed under another secrets.encryption.key" in trace
    leaked = token in trace
    assert not leaked, "the trace shows the secret"


@pytest.mark.parametrize("value, expected", [
    ("c2VjcmV0", "must be a ${file:/path:key} or ${env:NAME} reference"),
    ("${env:TB_TEST_SHORT_KEY}", "openssl rand -base64 32"),
    ("${env:TB_TEST_NO_SUCH_KEY}", "no such variable"),
])
def test_a_worker_refuses_an_unusable_key(start_worker, bed, value, expected):
    settings = {**cluster_settings(bed, bed.unique_topic("cluster")),
                "secrets.encryption.key": value}
    w = start_worker(settings, env={"TB_TEST_SHORT_KEY": "c2hvcnQ="}, wait_healthy=False,
                     expect_exit=1)
    wait_for(lambda: w.proc.poll() is not None, timeout=60, what="the worker to exit")
    assert w.proc.returncode == 1
    assert "refusing to start: secrets.encryption.key: " in w.logs()
    assert expected in w.logs()


def test_a_worker_that_refuses_literals_keeps_todays_message(start_worker, bed):
    w = start_worker({"secrets.literal.allowed": "false"})
    reply = w.post("/connectors", json={"name": "jdbc", "config": jdbc_config(
        bed, "nodb", bed.unique_topic("t"))})
    assert reply.status_code == 400
    assert ("connection.password holds a literal secret, which is refused: use "
            "${env:NAME} or ${file:/path:key} (or set the worker's "
            "secrets.literal.allowed=true)") in reply.json()["message"]
