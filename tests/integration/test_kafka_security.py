"""Kafka client security: SASL_SSL with SCRAM against the test bed's second
listener, secrets from ${env:} and ${file:}, refusal of configurations that
are weaker than they look (before any byte reaches a broker), and literal
secrets kept out of the store. That no secret of these tests appears in any log,
response or store is checked at the end of the session (secret_scan.py)."""
import os
import pathlib
import socket

import pytest

import secret_scan
from kafka_io import create_topic, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "offset.flush.interval.ms": "200"}

# Connectors of these tests reach the SASL_SSL listener (or an untouched
# socket) through an override of bootstrap.servers, which the worker must
# name in its allowlist; the allowlist then lists every key they override.
OTHER_CLUSTER = {"connector.client.config.override.allowlist": ",".join([
    "bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.username",
    "sasl.password", "ssl.ca.location", "ssl.certificate.location",
    "enable.ssl.certificate.verification", "ssl.endpoint.identification.algorithm"])}


@pytest.fixture
def scram_file(tmp_path, bed):
    path = tmp_path / "secrets.properties"
    path.write_text(f"scram512={bed.scram512.password}\n")
    path.chmod(0o600)
    return path


def test_worker_and_tasks_over_sasl_ssl_scram_256_from_env(start_worker, bed, tmp_path):
    settings = {**STRINGS, "bootstrap.servers": bed.sasl_bootstrap,
                "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.username": bed.scram256.user,
                "sasl.password": "${env:TB_TEST_SCRAM256}", "ssl.ca.location": bed.ca}
    w = start_worker(settings, env={"TB_TEST_SCRAM256": bed.scram256.password})
    assert w.get("/").json()["kafka_cluster_id"] == bed.cluster_id
    topic = bed.unique_topic("sasl256")
    source = {"connector.class": "datagen", "topic": topic, "count": "30",
              "records.per.second": "0"}
    out = tmp_path / "out.txt"
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out)}
    assert w.post("/connectors", json={"name": "src", "config": source}).status_code == 201
    assert w.post("/connectors", json={"name": "snk", "config": sink}).status_code == 201
    wait_for(lambda: len(output_lines(out)) >= 30, what="30 records through SASL_SSL")
    w.get("/connectors?expand=info&expand=status")


def test_connector_overrides_over_scram_512_from_file(start_worker, bed, tmp_path,
                                                      scram_file):
    w = start_worker({**STRINGS, **OTHER_CLUSTER})  # the worker itself on PLAINTEXT
    topic = bed.unique_topic("sasl512")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{i}".encode()) for i in range(10)])
    secure = {"bootstrap.servers": bed.sasl_bootstrap, "security.protocol": "SASL_SSL",
              "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": bed.scram512.user,
              "sasl.password": f"${{file:{scram_file}:scram512}}",
              "ssl.ca.location": bed.ca}
    out = tmp_path / "out.txt"
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            **{f"consumer.override.{k}": v for k, v in secure.items()}}
    reply = w.post("/connectors", json={"name": "s512", "config": sink})
    assert reply.status_code == 201, reply.text
    assert reply.json()["config"]["consumer.override.sasl.password"].startswith("${file:")
    wait_for(lambda: len(output_lines(out)) >= 10, what="10 records over SCRAM-SHA-512")


def test_wrong_password_fails_the_task_naming_authentication(start_worker, bed, tmp_path):
    w = start_worker({**STRINGS, **OTHER_CLUSTER, "task.restart.backoff.initial.ms": "0"},
                     env={"TB_TEST_WRONG": secret_scan.new_secret("wrong")})
    secure = {"bootstrap.servers": bed.sasl_bootstrap, "security.protocol": "SASL_SSL",
              "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": bed.scram256.user,
              "sasl.password": "${env:TB_TEST_WRONG}", "ssl.ca.location": bed.ca}
    config = {"connector.class": "datagen", "topic": bed.unique_topic("wrong"),
              **{f"producer.override.{k}": v for k, v in secure.items()}}
    assert w.post("/connectors", json={"name": "wrong", "config": config}).status_code == 201

    def failed():
        tasks = w.get("/connectors/wrong/status").json()["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_for(failed, timeout=60, what="the task to fail")
    assert "authentication" in task["trace"].lower()


@pytest.fixture
def untouched_socket():
    """A listening socket a refused config names as its bootstrap server:
    nothing may ever connect to it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    yield f"127.0.0.1:{server.getsockname()[1]}"
    try:
        connection, _ = server.accept()
        connection.close()
        pytest.fail("a refused configuration connected to its bootstrap server")
    except socket.timeout:
        pass
    finally:
        server.close()


LITERAL_SECRET = secret_scan.new_secret("literal")  # refused, and scanned for

REFUSALS = [
    ("credentials without SASL",
     {"sasl.username": "u", "sasl.password": "${env:HOME}"},
     "SASL credentials are set but security.protocol is PLAINTEXT"),
    ("CA with plaintext",
     {"security.protocol": "PLAINTEXT", "ssl.ca.location": "/etc/ssl/certs/ca.pem"},
     "ssl.ca.location is set but security.protocol is PLAINTEXT"),
    ("client certificate with SASL_PLAINTEXT",
     {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.username": "u", "sasl.password": "${env:HOME}",
      "ssl.certificate.location": "/tmp/c.pem"},
     "ssl.certificate.location is set but security.protocol is SASL_PLAINTEXT"),
    ("mechanism without SASL",
     {"sasl.mechanism": "SCRAM-SHA-256"},
     "a SASL mechanism is set but security.protocol is PLAINTEXT"),
    ("literal secret",
     {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "u",
      "sasl.password": LITERAL_SECRET},
     "consumer.override.sasl.password holds a literal secret"),
]


@pytest.mark.parametrize("name,overrides,message", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_weaker_than_it_looks_is_refused(start_worker, untouched_socket, name, overrides,
                                         message):
    # a worker that refuses literal secrets, as its operator may choose
    worker = start_worker({**OTHER_CLUSTER, "secrets.literal.allowed": "false"})
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/refused",
              "consumer.override.bootstrap.servers": untouched_socket,
              **{f"consumer.override.{k}": v for k, v in overrides.items()}}
    reply = worker.post("/connectors", json={"name": "refused", "config": config})
    assert reply.status_code == 400
    assert message in reply.json()["message"]
    assert "security.protocol" in reply.json()["message"] or "literal" in message
    validate = worker.put("/connector-plugins/FileStreamSink/config/validate",
                                 json={**config, "name": "refused"})
    assert validate.json()["error_count"] >= 1
    assert worker.get("/connectors").json() == []


def test_no_override_can_weaken_the_workers_transport(start_worker, bed, untouched_socket):
    settings = {"bootstrap.servers": bed.sasl_bootstrap, "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": bed.scram256.user,
                "sasl.password": "${env:TB_TEST_SCRAM256}", "ssl.ca.location": bed.ca,
                **OTHER_CLUSTER}
    w = start_worker(settings, env={"TB_TEST_SCRAM256": bed.scram256.password})
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/weak",
              "consumer.override.bootstrap.servers": untouched_socket,
              "consumer.override.security.protocol": "PLAINTEXT"}
    reply = w.post("/connectors", json={"name": "weak", "config": config})
    assert reply.status_code == 400
    assert "consumer.override.security.protocol" in reply.json()["message"]
    # an explicit PLAINTEXT override without a mechanism is refused all the
    # same: the worker's SASL credentials would still go with it, in clear
    plain = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/plain",
             "consumer.override.bootstrap.servers": bed.bootstrap,
             "consumer.override.security.protocol": "PLAINTEXT",
             "consumer.override.sasl.mechanism": None}
    plain = {k: v for k, v in plain.items() if v is not None}
    assert "SASL credentials" in w.post(
        "/connectors", json={"name": "plain", "config": plain}).json()["message"]


def test_override_policy_none_refuses_overrides(start_worker):
    w = start_worker({"connector.client.config.override.policy": "None"})
    config = {"connector.class": "datagen", "topic": "t",
              "producer.override.linger.ms": "5"}
    reply = w.post("/connectors", json={"name": "p", "config": config})
    assert reply.status_code == 400
    assert ("producer.override.linger.ms is not allowed by the worker's "
            "connector.client.config.override.policy") in reply.json()["message"]


def test_override_policy_allowlist_takes_only_the_listed_keys(start_worker):
    w = start_worker({"connector.client.config.override.policy": "Allowlist",
                      "connector.client.config.override.allowlist": "linger.ms"})
    listed = {"connector.class": "datagen", "topic": "t", "count": "1",
              "producer.override.linger.ms": "5"}
    assert w.post("/connectors", json={"name": "listed", "config": listed}
                  ).status_code == 201
    other = {**listed, "producer.override.acks": "1"}
    reply = w.post("/connectors", json={"name": "other", "config": other})
    assert reply.status_code == 400
    assert ("producer.override.acks is not allowed by the worker's "
            "connector.client.config.override.policy: "
            "connector.client.config.override.allowlist does not name acks"
            ) in reply.json()["message"]


def test_override_policy_allowlist_empty_allows_no_override(start_worker):
    w = start_worker({"connector.client.config.override.policy": "Allowlist"})
    assert ("connector.client.config.override.policy=Allowlist with an empty "
            "connector.client.config.override.allowlist") in w.logs()
    config = {"connector.class": "datagen", "topic": "t",
              "producer.override.linger.ms": "5"}
    reply = w.post("/connectors", json={"name": "p", "config": config})
    assert reply.status_code == 400
    assert "producer.override.linger.ms is not allowed" in reply.json()["message"]


def test_allowed_literal_secrets_stay_out_of_the_store(start_worker, bed, tmp_path):
    w = start_worker({**STRINGS, **OTHER_CLUSTER, "secrets.literal.allowed": "true"})
    topic = bed.unique_topic("literal")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, b"one"), (0, None, b"two")])
    secure = {"bootstrap.servers": bed.sasl_bootstrap, "security.protocol": "SASL_SSL",
              "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": bed.scram256.user,
              "sasl.password": bed.scram256.password, "ssl.ca.location": bed.ca}
    out = tmp_path / "out.txt"
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            **{f"consumer.override.{k}": v for k, v in secure.items()}}
    reply = w.post("/connectors", json={"name": "lit", "config": sink})
    assert reply.status_code == 201, reply.text
    shown = reply.json()["config"]["consumer.override.sasl.password"]
    assert shown.startswith("${file:") and shown.endswith(":lit.consumer.override.sasl.password}")
    wait_for(lambda: output_lines(out) == ["one", "two"], what="the records over SASL_SSL")
    store = pathlib.Path(w.settings["offset.storage.file.filename"])
    secrets_file = pathlib.Path(f"{store}.secrets")
    assert oct(secrets_file.stat().st_mode & 0o777) == "0o600"
    assert bed.scram256.password in secrets_file.read_text()
    w.stop()  # the store's WAL is folded into the file
    assert bed.scram256.password.encode() not in store.read_bytes()


def test_bootstrap_servers_override_needs_the_allowlist(worker, untouched_socket):
    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/other",
              "consumer.override.bootstrap.servers": untouched_socket}
    reply = worker.post("/connectors", json={"name": "other", "config": config})
    assert reply.status_code == 400
    assert ("consumer.override.bootstrap.servers would send the connector's credentials "
            "to another cluster") in reply.json()["message"]


TLS_DOWNGRADES = [("security.protocol", "SASL_PLAINTEXT"),
                  ("enable.ssl.certificate.verification", "false"),
                  ("ssl.endpoint.identification.algorithm", "none")]


@pytest.mark.parametrize("key,value", TLS_DOWNGRADES, ids=[k for k, _ in TLS_DOWNGRADES])
def test_no_override_turns_the_workers_tls_off(start_worker, bed, key, value):
    settings = {"bootstrap.servers": bed.sasl_bootstrap, "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": bed.scram256.user,
                "sasl.password": "${env:TB_TEST_SCRAM256}", "ssl.ca.location": bed.ca}
    env = {"TB_TEST_SCRAM256": bed.scram256.password}
    config = {"connector.class": "datagen", "topic": bed.unique_topic("downgrade"),
              f"producer.override.{key}": value}
    w = start_worker(settings, env=env)
    reply = w.post("/connectors", json={"name": "down", "config": config})
    assert reply.status_code == 400
    assert f"producer.override.{key}" in reply.json()["message"]
    assert "connector.client.security.downgrade.allowed" in reply.json()["message"]
    allowed = start_worker({**settings, "connector.client.security.downgrade.allowed": "true"},
                           env=env)
    reply = allowed.post("/connectors", json={"name": "down", "config": config})
    assert "downgrade.allowed" not in reply.text
    # a plain-text protocol still meets the worker's CA: refused for that alone
    assert reply.status_code == (400 if key == "security.protocol" else 201), reply.text
