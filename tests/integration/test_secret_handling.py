"""Secrets a connector config carries: every secret-bearing key (Kafka client
keys under any prefix, the HTTP sink's credential headers and http.auth.*,
the registry converters' auth keys) hidden in responses and moved out of the
store; references checked against the worker's config.providers; config
errors that log no value; the secrets file cleaned when a connector goes; and
connector names that survive the ${file:path:key} syntax. The suite's scan
(secret_scan.py) reads every response, log and store for the secrets made
here."""
import json
import os
import pathlib
import resource
import signal
import urllib.parse

import pytest

import secret_scan
from worker import wait_for

pytestmark = pytest.mark.integration

LITERAL = {"secrets.literal.allowed": "true"}  # the default
REFUSING = {"secrets.literal.allowed": "false"}  # the operator's choice


def secrets_file_of(w):
    return pathlib.Path(w.settings["offset.storage.file.filename"] + ".secrets")


def store_bytes(w):
    w.stop()  # the WAL is folded into the store
    return pathlib.Path(w.settings["offset.storage.file.filename"]).read_bytes()


def sink(**extra):
    return {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/tb-secret-out",
            **extra}


# keys librdkafka takes; the Java ones (sasl.jaas.config, ssl.keystore.key,
# ssl.truststore.password) are secret-typed as well (tests/unit/test_secret.c)
SECRET_KEYS = ["consumer.override.ssl.key.pem", "consumer.override.ssl.keystore.password",
               "producer.override.ssl.key.password",
               "value.converter.basic.auth.user.info", "key.converter.bearer.auth.token"]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_keys_are_hidden_and_kept_out_of_the_store(start_worker, key):
    w = start_worker(LITERAL)
    secret = secret_scan.new_secret("literal")
    config = sink(**{key: secret})
    reply = w.post("/connectors", json={"name": "c1", "config": config})
    assert reply.status_code == 201, reply.text
    shown = w.get("/connectors/c1/config").json()[key]
    assert shown.startswith("${file:") and shown.endswith(f":c1.{key}}}")
    assert secret in secrets_file_of(w).read_text()
    assert secret.encode() not in store_bytes(w)


JAVA_KEYS = ["consumer.override.sasl.jaas.config", "admin.override.ssl.keystore.key",
             "producer.override.ssl.truststore.password"]


def test_literal_secret_keys_are_refused_when_the_worker_refuses_them(start_worker):
    worker = start_worker(REFUSING)
    secret = secret_scan.new_secret("literal")
    for key in SECRET_KEYS + JAVA_KEYS:
        reply = worker.post("/connectors", json={"name": "c2", "config": sink(**{key: secret})})
        assert reply.status_code == 400, key
        assert secret not in reply.text
        # librdkafka refuses the Java keys first, naming them
        assert key in reply.json()["message"]
        if key in SECRET_KEYS:
            assert f"{key} holds a literal secret" in reply.json()["message"]


def test_credential_headers_are_hidden_and_kept_out_of_the_store(start_worker):
    w = start_worker(LITERAL)
    token = secret_scan.new_secret("bearer")
    key = secret_scan.new_secret("apikey")
    config = {"connector.class": "HttpSink", "topics": "t", "http.url": "http://127.0.0.1:9/",
              "http.headers": f"Authorization: Bearer {token}|X-Tenant: blue|X-API-Key: {key}"}
    reply = w.post("/connectors", json={"name": "h", "config": config})
    assert reply.status_code == 201, reply.text
    headers = w.get("/connectors/h/config").json()["http.headers"]
    assert "X-Tenant: blue" in headers
    assert "Authorization: ${file:" in headers and "X-API-Key: ${file:" in headers
    validated = w.put("/connector-plugins/HttpSink/config/validate",
                      json={**config, "name": "h"}).json()
    assert validated["error_count"] == 0
    assert token in secrets_file_of(w).read_text()
    assert token.encode() not in store_bytes(w) and key.encode() not in store_bytes(w)


def test_literal_credential_header_is_refused_when_the_worker_refuses_it(start_worker):
    worker = start_worker(REFUSING)
    token = secret_scan.new_secret("bearer")
    config = {"connector.class": "HttpSink", "topics": "t", "http.url": "http://127.0.0.1:9/",
              "http.headers": f"Authorization: Bearer {token}"}
    reply = worker.post("/connectors", json={"name": "h", "config": config})
    assert reply.status_code == 400
    assert "http.headers holds a literal secret" in reply.json()["message"]
    shown = worker.put("/connector-plugins/HttpSink/config/validate",
                       json={**config, "name": "h"}).json()
    assert shown["error_count"] == 1  # and the scan checks the echoed value


def test_http_auth_keys(worker):
    base = {"connector.class": "HttpSink", "topics": "t", "http.url": "http://127.0.0.1:9/"}
    reply = worker.post("/connectors", json={"name": "a", "config": {
        **base, "http.auth.type": "bearer"}})
    assert reply.status_code == 400
    assert "http.auth.type=bearer needs http.auth.token" in reply.json()["message"]
    reply = worker.post("/connectors", json={"name": "a", "config": {
        **base, "http.auth.type": "bearer", "http.auth.token": "${env:TB_TEST_TOKEN}",
        "http.headers": "Authorization: ${env:TB_TEST_TOKEN}"}})
    assert reply.status_code == 400
    assert "http.headers sets Authorization" in reply.json()["message"]
    reply = worker.post("/connectors", json={"name": "a", "config": {
        **base, "http.auth.type": "basic", "http.auth.user": "u",
        "http.auth.password": "${env:TB_TEST_TOKEN}"}})
    assert reply.status_code == 201, reply.text


def forbidden_references(w, tmp_path):
    store = w.settings["offset.storage.file.filename"]
    return [
        ("http.auth.token", f"${{file:{store}.secrets:other.http.auth.token}}",
         "only its own entries"),
        ("http.auth.token", f"${{file:{store}:k}}", "data directory"),
        ("http.headers", f"X-API-Key: ${{file:{pathlib.Path(store).parent}/x:k}}",
         "data directory"),
        ("http.auth.token", "${env:TRIBUTARY_SASL_PASSWORD}", "worker's own configuration"),
    ]


def test_references_cannot_reach_the_workers_files(worker, tmp_path):
    base = {"connector.class": "HttpSink", "topics": "t", "http.url": "http://127.0.0.1:9/",
            "http.auth.type": "bearer", "http.auth.token": "${env:TB_TEST_TOKEN}"}
    for key, reference, why in forbidden_references(worker, tmp_path):
        config = {**base, key: reference}
        reply = worker.post("/connectors", json={"name": "ref", "config": config})
        assert reply.status_code == 400, (key, reply.text)
        message = reply.json()["message"]
        assert f"{key}: the reference" in message and why in message, message
        shown = worker.put("/connector-plugins/HttpSink/config/validate",
                           json={**config, "name": "ref"}).json()
        errors = [c["value"] for c in shown["configs"] if c["value"]["errors"]]
        assert shown["error_count"] == 1, errors
    assert worker.get("/connectors").json() == []


def test_the_workers_own_files_and_variables_are_never_reachable(start_worker, bed,
                                                                 tmp_path):
    """The worker's properties file, what its config names (a reference's
    file and variable, the REST credentials, the TLS key) are refused to
    every connector, whatever the allowlists say: as a reference (through a
    symbolic link or ".." too) and as a file connector's path; and again
    when a task starts, for a link swapped in later."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "worker-secrets.properties").write_text("key=k3y\n")
    (own / "rest.credentials").write_text("# none\n")
    (own / "tls.key").write_text("not a key\n")
    (tmp_path / "sub").mkdir()
    w = start_worker({
        "offset.storage.file.filename": str(tmp_path / "data" / "store.db"),
        "config.providers.file.param.allowed.paths": str(tmp_path),
        "file.allowed.dirs": str(tmp_path),
        "listeners.https.ssl.key.password": f"${{file:{own}/worker-secrets.properties:key}}",
        "rest.auth.credentials.file": str(own / "rest.credentials"),
        "listeners.https.ssl.key.location": str(own / "tls.key"),
        "value.converter.basic.auth.user.info": "${env:TB_WORKER_ONLY}",
    }, env={"TB_WORKER_ONLY": "w0rker", "TB_ANY": "any"}, directory=tmp_path / "w")
    properties = tmp_path / "w" / "worker.properties"
    (tmp_path / "to-worker").symlink_to(properties)
    base = {"connector.class": "HttpSink", "topics": bed.unique_topic("own"),
            "http.url": "http://127.0.0.1:9/", "http.auth.type": "bearer"}
    refused = [f"${{file:{properties}:listeners}}",
               f"${{file:{tmp_path}/to-worker:listeners}}",
               f"${{file:{tmp_path}/sub/../w/worker.properties:listeners}}",
               f"${{file:{own}/worker-secrets.properties:key}}",
               f"${{file:{own}/rest.credentials:x}}",
               f"${{file:{own}/tls.key:x}}",
               "${env:TB_WORKER_ONLY}"]
    for reference in refused:
        reply = w.post("/connectors", json={"name": "own", "config": {
            **base, "http.auth.token": reference}})
        assert reply.status_code == 400, (reference, reply.text)
        message = reply.json()["message"]
        assert "http.auth.token: the reference" in message and "worker's own" in message, \
            message
    for path in (properties, tmp_path / "to-worker", own / "tls.key"):
        reply = w.post("/connectors", json={"name": "own", "config": {
            "connector.class": "FileStreamSource", "topic": bed.unique_topic("own"),
            "file": str(path)}})
        assert reply.status_code == 400, (path, reply.text)
        assert "worker's own files" in reply.json()["message"], reply.text
    # what the worker's config does not name stays reachable
    (tmp_path / "token.properties").write_text("k=t0ken\n")
    link = tmp_path / "token-link"
    link.symlink_to(tmp_path / "token.properties")
    reply = w.post("/connectors", json={"name": "own", "config": {
        **base, "http.auth.token": f"${{file:{link}:k}}", "http.headers": "X-A: ${env:TB_ANY}"}})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: w.get("/connectors/own/status").json()["tasks"][0]["state"]
             == "RUNNING", what="the task running")
    link.unlink()
    link.symlink_to(properties)
    assert w.post("/connectors/own/tasks/0/restart").status_code in (200, 202, 204)
    task = wait_for(lambda: (t := w.get("/connectors/own/status").json()["tasks"][0])
                    ["state"] == "FAILED" and t, what="the task failed")
    assert "worker's own files" in task["trace"], task


def test_no_core_dump_unless_the_operator_asks(start_worker, tmp_path):
    """A core file holds the worker's resolved secrets: by default the worker
    is not dumpable (SIGABRT writes no core), core.dumps.enable=true makes it
    dumpable again. The kernel's own core files are the evidence; the
    sanitizers' core limit is lifted for it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if hard == 0:
        pytest.skip("core files are limited to 0 bytes here (ulimit -c)")
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    try:
        cores = {}
        for enabled in ("true", "false"):
            folder = tmp_path / f"dumps-{enabled}"
            w = start_worker({"core.dumps.enable": enabled},
                             env={"ASAN_OPTIONS": "disable_coredump=0:detect_leaks=0"},
                             directory=folder, expect_exit=-signal.SIGABRT)
            state = "enabled" if enabled == "true" else "disabled (the process is not"
            assert f"core dumps {state}" in w.logs()
            w.proc.send_signal(signal.SIGABRT)
            assert w.proc.wait(timeout=60) == -signal.SIGABRT
            cores[enabled] = list(folder.glob("core*"))
            for core in cores[enabled]:
                core.unlink()
        if not cores["true"]:
            pytest.skip("this machine writes no core file of a dumpable process "
                        f"(kernel.core_pattern {pathlib.Path('/proc/sys/kernel/core_pattern').read_text().strip()!r})")
        assert cores["false"] == []
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def rss_bytes(w):
    with open(f"/proc/{w.proc.pid}/status") as f:
        line = next(line for line in f if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_reference_to_a_special_file_is_refused_and_harmless(worker, bed, tmp_path,
                                                              special):
    """${file:} reads regular files only (bounded, opened without blocking):
    /dev/zero would grow the worker without end and a FIFO would hold a pool
    thread for ever. Refused at validation, naming the key, and again when a
    task resolves a file swapped in later; the worker stays up and small."""
    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)
    base = {"connector.class": "HttpSink", "topics": bed.unique_topic("special"),
            "http.url": "http://127.0.0.1:9/", "http.auth.type": "bearer"}
    reply = worker.post("/connectors", json={"name": "z", "config": {
        **base, "http.auth.token": f"${{file:{special}:k}}"}})
    assert reply.status_code == 400, reply.text
    message = reply.json()["message"]
    assert "http.auth.token: the reference" in message and "regular file" in message, message
    # a regular file when the connector is created, the special one when it restarts
    token = tmp_path / "token.properties"
    token.write_text("k=t0ken\n")
    link = tmp_path / "token-link"
    link.symlink_to(token)
    reply = worker.post("/connectors", json={"name": "z", "config": {
        **base, "http.auth.token": f"${{file:{link}:k}}"}})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: worker.get("/connectors/z/status").json()["tasks"][0]["state"]
             == "RUNNING", what="the task running")
    link.unlink()
    link.symlink_to(special)
    assert worker.post("/connectors/z/tasks/0/restart").status_code in (200, 202, 204)
    task = wait_for(lambda: (t := worker.get("/connectors/z/status").json()["tasks"][0])
                    ["state"] == "FAILED" and t, what="the task failed")
    assert "not a regular file" in task["trace"], task
    assert worker.get("/").status_code == 200
    assert rss_bytes(worker) < 1 << 30


def test_config_providers_limit_references(start_worker, tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    w = start_worker({"config.providers": "file",
                      "config.providers.file.param.allowed.paths": str(allowed)})
    base = {"connector.class": "HttpSink", "topics": "t", "http.url": "http://127.0.0.1:9/",
            "http.auth.type": "bearer"}
    refused = [("${env:HOME}", "does not name env"),
               (f"${{file:{tmp_path}/elsewhere:k}}", "allowed.paths")]
    for reference, why in refused:
        reply = w.post("/connectors", json={"name": "p", "config": {
            **base, "http.auth.token": reference}})
        assert reply.status_code == 400 and why in reply.json()["message"], reply.text
    reply = w.post("/connectors", json={"name": "p", "config": {
        **base, "http.auth.token": f"${{file:{allowed}/s.properties:k}}"}})
    assert reply.status_code == 201, reply.text


def test_no_error_response_echoes_a_secret(worker):
    """Validation without connector.class named the whole config in its 400
    (Connect does); a malformed body got jansson's quote of where it stopped,
    which can be a secret's first bytes. Neither echoes a value now."""
    secret = secret_scan.new_secret("echo")
    reply = worker.put("/connector-plugins/HttpSink/config/validate",
                       json={"name": "e", "http.auth.token": secret})
    assert reply.status_code == 400
    assert "contains no connector type" in reply.json()["message"]
    assert secret not in reply.text
    for body in (f'{{"http.auth.token": "{secret}', f'{{"http.auth.token": {secret}}}'):
        for call in (lambda: worker.post("/connectors", data=body),
                     lambda: worker.put("/connector-plugins/HttpSink/config/validate",
                                        data=body),
                     lambda: worker.put("/connectors/e/config", data=body)):
            reply = call()
            assert reply.status_code == 400, reply.text
            assert "Malformed JSON at line 1" in reply.json()["message"], reply.text
            assert secret not in reply.text and "near '" not in reply.text, reply.text


def test_a_config_without_class_logs_no_value(worker):
    secret = secret_scan.new_secret("noclass")
    reply = worker.put("/connectors/nc/config", json={"sasl.password": secret, "topics": "t"})
    assert reply.status_code == 400
    assert "connector.class is missing" in reply.json()["message"]
    worker.stop()
    assert secret not in worker.logs()


def test_a_connector_file_without_class_logs_no_value(start_worker, tmp_path):
    secret = secret_scan.new_secret("noclass-file")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"name": "nc", "config": {"http.auth.token": secret}}))
    w = start_worker(args=[str(path)], wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=60) == 1
    logs = w.logs()
    assert "connector.class is missing" in logs
    assert secret not in logs


def resolves(w, reference, secret):
    """True when reference, as ${file:path:key}, names secret in the
    worker's secrets file, as the task's resolution reads it."""
    inner = reference[len("${file:"):-1]
    path, key = inner.rsplit(":", 1)
    assert path == str(secrets_file_of(w))
    lines = secrets_file_of(w).read_text().splitlines()
    return f"{key}={secret}" in lines


@pytest.mark.parametrize("name", ["a:b", "a/b c", "é.ü", "a.b"])
def test_odd_names_keep_their_secrets_and_lose_them_on_delete(start_worker, name):
    w = start_worker(LITERAL)
    key = "consumer.override.sasl.password"
    secret = secret_scan.new_secret("named")
    # a connector whose name is a prefix of another's must not lose its entries
    keep = secret_scan.new_secret("kept")
    sasl = {"consumer.override.security.protocol": "SASL_PLAINTEXT",
            "consumer.override.sasl.mechanism": "PLAIN",
            "consumer.override.sasl.username": "u"}
    assert w.post("/connectors", json={"name": "a", "config": sink(**sasl, **{key: keep}),
                                       "initial_state": "STOPPED"}).status_code == 201
    reply = w.post("/connectors", json={"name": name, "config": sink(**sasl, **{key: secret}),
                                        "initial_state": "STOPPED"})
    assert reply.status_code == 201, reply.text
    path = "/connectors/" + urllib.parse.quote(name, safe="")
    assert resolves(w, w.get(path + "/config").json()[key], secret)
    assert w.delete(path).status_code == 204
    assert secret not in secrets_file_of(w).read_text()
    assert resolves(w, w.get("/connectors/a/config").json()[key], keep)


@pytest.mark.parametrize("action", [None, "RESTART", "none"])
def test_reload_action_restart_is_logged_once_for_references(start_worker, bed, action):
    """tributary does not watch referenced secrets: config.action.reload=restart
    (Connect's default) says so once when the tasks start."""
    w = start_worker(env={"TB_RELOAD_TOKEN": "token"})
    config = {"connector.class": "HttpSink", "topics": bed.unique_topic("reload"),
              "http.url": "http://127.0.0.1:9/", "http.auth.type": "basic",
              "http.auth.user": "u", "http.auth.password": "${env:TB_RELOAD_TOKEN}"}
    if action is not None:
        config["config.action.reload"] = action
    reply = w.post("/connectors", json={"name": "reload", "config": config})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: w.get("/connectors/reload/status").json()["tasks"],
             what="the task")
    lines = [line for line in w.logs().splitlines()
             if "config.action.reload=restart" in line]
    if action == "none":
        assert lines == []
    else:
        assert len(lines) == 1 and "[connector:reload" in lines[0], lines
        assert "token" not in lines[0]
