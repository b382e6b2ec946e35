"""Reload without a restart (server/tb_reload.h): SIGHUP and POST
/admin/reload read the worker file again and apply the https listeners'
renewed certificate, log.level and the secrets behind references; every
other key that changed is named as needing a restart.

Certificates and secrets are made at test time."""
import json
import os
import signal
import socket
import ssl
import subprocess

import pytest
import requests

from kafka_io import create_topic, produce
from test_rest_security import https_settings, pki, wait_up  # noqa: F401 (fixture)
from worker import free_port, output_lines, wait_for

pytestmark = pytest.mark.integration

STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "offset.flush.interval.ms": "200"}


def restarts(w, connector):
    for line in w.get("/metrics", **getattr(w, "kw", {})).text.splitlines():
        if line.startswith(f'tributary_task_restarts_total{{connector="{connector}",'
                           'task="0"} '):
            return float(line.rsplit(" ", 1)[1])
    return None


def serial_seen(port, ca):
    """The serial number (hex, lower case) of the certificate a new TLS
    connection to 127.0.0.1:port gets."""
    context = ssl.create_default_context(cafile=ca)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            der = tls.getpeercert(binary_form=True)
    done = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"],
                          input=der, capture_output=True, check=True, timeout=30)
    return done.stdout.decode().strip().split("=", 1)[1].lower()


def renew(pki_dir, name="server"):
    """Signs a new certificate for the server's key, in place."""
    subprocess.run(["openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem",
                    "-CAkey", "ca.key", "-CAcreateserial", "-out", f"{name}.pem",
                    "-days", "2", "-extfile", f"{name}.ext"],
                   cwd=pki_dir, check=True, capture_output=True, timeout=60)


def sighup(w, count_before):
    w.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: w.logs().count("worker config reloaded") > count_before, timeout=30,
             what="the reload's summary")


def test_sighup_renews_the_certificate_and_a_running_sink_goes_on(start_worker, pki,
                                                                   bed, tmp_path):
    port = free_port()
    w = start_worker({**STRINGS, **https_settings(pki, port)}, wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    w.kw = {"verify": pki["ca.pem"]}
    wait_up(w, verify=pki["ca.pem"])
    topic = bed.unique_topic("tls-reload")
    create_topic(bed, topic, 1)
    out = tmp_path / "out.txt"
    sink = bed.unique_topic("tls-sink")  # its group, connect-<name>, is its own
    reply = requests.post(w.url + "/connectors", verify=pki["ca.pem"], timeout=30,
                          json={"name": sink, "config": {
                              "connector.class": "FileStreamSink", "topics": topic,
                              "file": str(out)}})
    assert reply.status_code == 201, reply.text
    produce(bed.bootstrap, topic, [(0, None, f"a{i}".encode()) for i in range(100)])
    wait_for(lambda: len(output_lines(out)) == 100, timeout=60, what="100 lines")

    old = serial_seen(port, pki["ca.pem"])
    # a connection opened before the reload, kept alive across it
    session = requests.Session()
    assert session.get(w.url + "/", verify=pki["ca.pem"], timeout=10).ok
    renew(os.path.dirname(pki["server.pem"]))
    sighup(w, 0)
    new = serial_seen(port, pki["ca.pem"])
    assert new != old
    assert f"https certificate serial {new}" in w.logs()
    assert session.get(w.url + "/connectors", verify=pki["ca.pem"], timeout=10).ok

    produce(bed.bootstrap, topic, [(0, None, f"b{i}".encode()) for i in range(100)])
    wait_for(lambda: len(output_lines(out)) == 200, timeout=60, what="200 lines")
    assert output_lines(out) == [f"a{i}" for i in range(100)] + \
        [f"b{i}" for i in range(100)]
    assert restarts(w, sink) == 0
    status = requests.get(w.url + f"/connectors/{sink}/status", verify=pki["ca.pem"],
                          timeout=10).json()
    assert [t["state"] for t in status["tasks"]] == ["RUNNING"]


def test_a_bad_certificate_changes_nothing(start_worker, pki):
    port = free_port()
    w = start_worker(https_settings(pki, port), wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    wait_up(w, verify=pki["ca.pem"])
    old = serial_seen(port, pki["ca.pem"])
    # the client's certificate is not the server key's
    with open(pki["client.pem"]) as src, open(pki["server.pem"], "w") as dst:
        dst.write(src.read())
    w.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "cannot reload" in w.logs(), what="the refusal")
    assert f"listeners.https.ssl.key.location {pki['server.key']} is not the key of " \
        "the certificate" in w.logs()
    assert serial_seen(port, pki["ca.pem"]) == old


def test_post_admin_reload_reports_what_needs_a_restart(start_worker):
    admin_port = free_port()
    w = start_worker({"admin.listeners": f"http://127.0.0.1:{admin_port}",
                      "log.level": "INFO"})
    admin = f"http://127.0.0.1:{admin_port}"
    # not an admin listener: no admin rights there
    assert w.post("/admin/reload").status_code == 404
    reply = requests.post(admin + "/admin/reload", timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"applied": [], "restart_required": [],
                            "tasks_restarted": []}

    properties = os.path.join(w.dir, "worker.properties")
    with open(properties, "a") as f:
        f.write("log.level=DEBUG\nlog.format=json\nrest.threads=3\ntask.threads=5\n")
    reply = requests.post(admin + "/admin/reload", timeout=30)
    assert reply.status_code == 200, reply.text
    assert reply.json()["applied"] == ["log.format", "log.level"]
    summary = [line for line in w.logs().splitlines()
               if "worker config reloaded" in line][-1]
    assert json.loads(summary)["level"] == "INFO", summary
    assert reply.json()["restart_required"] == ["rest.threads", "task.threads"]
    assert requests.get(admin + "/admin/loggers/root", timeout=10).json()["level"] == \
        "DEBUG"
    assert "applied only by a restart, the worker keeps the values it started with: " \
        "rest.threads, task.threads" in w.logs()

    with open(properties, "a") as f:
        f.write("rest.threads=many\n")
    reply = requests.post(admin + "/admin/reload", timeout=30)
    assert reply.status_code == 400, reply.text
    assert "rest.threads" in reply.json()["message"]
    assert "nothing reloaded" in w.logs()


def test_post_admin_reload_needs_credentials(start_worker, tmp_path):
    from test_rest_security import hash_secret
    creds = tmp_path / "users"
    creds.write_text(f"admin:{hash_secret('s3cret-admin')}\n")
    w = start_worker({"rest.auth": "basic", "rest.auth.credentials.file": str(creds)},
                     wait_healthy=False)
    wait_up(w, auth=("admin", "s3cret-admin"))
    assert w.post("/admin/reload").status_code == 401
    assert w.post("/admin/reload", auth=("admin", "wrong")).status_code == 401
    assert "worker config reloaded" not in w.logs()
    reply = w.post("/admin/reload", auth=("admin", "s3cret-admin"))
    assert reply.status_code == 200, reply.text


def test_a_changed_secret_restarts_only_the_tasks_that_use_it(start_worker, bed,
                                                              tmp_path):
    secrets_file = tmp_path / "secrets" / "sink.properties"
    secrets_file.parent.mkdir()
    secrets_file.write_text("token=first\n")
    w = start_worker({**STRINGS, "config.providers": "file",
                      "config.providers.file.param.allowed.paths":
                          str(secrets_file.parent)})
    topic = bed.unique_topic("secret-reload")
    create_topic(bed, topic, 1)
    # unique names: each sink's group, connect-<name>, is its own on the bed
    uses, plain, kept = (bed.unique_topic(n) for n in ("uses", "plain", "kept"))
    for name, extra in [(uses, {"sink.token": f"${{file:{secrets_file}:token}}"}),
                        (plain, {}),
                        (kept, {"sink.token": f"${{file:{secrets_file}:token}}",
                                "config.action.reload": "none"})]:
        reply = w.post("/connectors", json={"name": name, "config": {
            "connector.class": "FileStreamSink", "topics": topic,
            "file": str(tmp_path / f"{name}.txt"), **extra}})
        assert reply.status_code == 201, reply.text
    for name in (uses, plain, kept):
        wait_for(lambda: restarts(w, name) == 0, what=f"{name} running")

    sighup(w, 0)  # nothing changed: nothing restarts
    assert all(restarts(w, name) == 0 for name in (uses, plain, kept))
    secrets_file.write_text("token=second\n")
    reply = w.post("/admin/reload")
    assert reply.status_code == 200, reply.text
    assert reply.json()["tasks_restarted"] == [f"{uses}-0"]
    wait_for(lambda: restarts(w, uses) == 1, what="uses restarted")
    assert restarts(w, plain) == 0 and restarts(w, kept) == 0
    produce(bed.bootstrap, topic, [(0, None, b"after")])
    wait_for(lambda: output_lines(tmp_path / f"{uses}.txt") == ["after"], timeout=60,
             what="the restarted sink writing")
    assert "second" not in w.logs()


def test_the_reference_policy_changes_live(start_worker, bed, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "s.properties").write_text("token=t\n")
    w = start_worker({"config.providers": "file",
                      "config.providers.file.param.allowed.paths": str(first)})
    names = {n: bed.unique_topic(n) for n in ("old", "new", "other")}

    def put(name, folder):
        name = names[name]
        return w.put(f"/connectors/{name}/config", json={
            "connector.class": "FileStreamSink", "topics": bed.unique_topic(name),
            "file": str(tmp_path / f"{name}.txt"),
            "sink.token": f"${{file:{folder}/s.properties:token}}"})

    assert put("old", first).status_code == 201
    refused = put("new", second)
    assert refused.status_code == 400 and "sink.token" in refused.text, refused.text
    properties = os.path.join(w.dir, "worker.properties")
    with open(properties) as f:
        text = f.read().replace(f"allowed.paths={first}", f"allowed.paths={second}")
    with open(properties, "w") as f:
        f.write(text)
    reply = w.post("/admin/reload")
    assert reply.status_code == 200, reply.text
    assert reply.json()["applied"] == ["config.providers.file.param.allowed.paths"]
    assert reply.json()["restart_required"] == []
    assert put("new", second).status_code == 201
    assert put("other", first).status_code == 400
    assert f"[connector:{names['old']}]" in [
        line for line in w.logs().splitlines()
        if "now refuse this connector's config" in line][0]
    assert w.get(f"/connectors/{names['old']}/status").status_code == 200
