"""REST API security: rest.auth basic and bearer, HTTPS listeners with client
certificates, the refusal to serve other hosts unauthenticated, admin.listeners
and CORS.

Every secret (passwords, token secrets, the key password) and every
certificate is made at run time; nothing secret is committed."""
import base64
import hashlib
import os
import re
import secrets
import subprocess

import pytest
import requests

import secret_scan
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

BINARY = os.environ.get("TRIBUTARY_BIN", "")


def hash_secret(secret):
    """The credentials-file hash of secret, from `tributary --hash-password`."""
    done = subprocess.run([BINARY, "--hash-password"], input=secret + "\n",
                          capture_output=True, text=True, timeout=30, check=True)
    return done.stdout.strip()


def wait_up(w, url=None, **kw):
    """Polls url/health (w.url by default) until it answers 200, passing kw
    (auth=, verify=, headers=) to requests."""
    url = url or w.url

    def up():
        assert w.proc.poll() is None, (
            f"tributary exited with {w.proc.returncode}:\n{w.logs()}")
        try:
            return requests.get(url + "/health", timeout=5, **kw).status_code == 200
        except requests.ConnectionError:
            return False
    wait_for(up, timeout=60, what=f"{url}/health to answer 200")


def routes():
    """(method, path) of every route the binary serves, {} filled in: the
    connector "sample", task 0, plugin/logger "sample"."""
    out = subprocess.run([BINARY, "--routes"], capture_output=True, text=True,
                         check=True, timeout=30).stdout
    result = []
    for line in out.splitlines():
        method, template = line.split(" ", 1)
        path = template.replace("{}", "sample", 1).replace("{}", "0")
        result.append((method, path))
    assert len(result) > 10
    return result


# The probes, answered without credentials (test_probes.py).
PROBES = {("GET", "/health"), ("GET", "/health/live")}


def call(url, method, path, **kw):
    body = {} if method in ("POST", "PUT", "PATCH") else None
    return requests.request(method, url + path, json=body, timeout=30, **kw)


def answer(reply):
    """What a reply says, for comparing two workers: its status, and its JSON
    body, or the type of any other body (/metrics values differ)."""
    kind = reply.headers.get("Content-Type", "")
    return reply.status_code, reply.json() if kind.startswith("application/json") else kind


class BearerAuth(requests.auth.AuthBase):
    def __init__(self, token):
        self.token = token

    def __call__(self, request):
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


@pytest.fixture
def credentials(tmp_path):
    """Starts auth'd workers: returns start(mode) -> (worker, good auth,
    wrong auth, password)."""
    def make(mode):
        secret, other = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
        secret_scan.remember(secret)
        secret_scan.remember(other)
        name = "alice" if mode == "basic" else "ci-bot"
        path = tmp_path / f"{mode}.credentials"
        path.write_text(f"# made by the test\n{name}:{hash_secret(secret)}\n"
                        f"other:{hash_secret(other)}\n")
        # the wrong passwords are secrets too: a log line must not show them
        secret_scan.remember(secret + "x")
        secret_scan.remember(secret[:-1])
        if mode == "basic":
            return path, (name, secret), (name, secret + "x"), secret
        return (path, BearerAuth(f"{name}.{secret}"),
                BearerAuth(f"{name}.{secret[:-1]}"), secret)
    return make


@pytest.mark.parametrize("mode", ["basic", "bearer"])
def test_every_route_needs_credentials(start_worker, credentials, mode):
    path, good, wrong, secret = credentials(mode)
    w = start_worker({"rest.auth": mode, "rest.auth.credentials.file": str(path),
                      "log.level": "DEBUG"}, wait_healthy=False)
    open_worker = start_worker({"log.level": "DEBUG"})  # the same routes, no auth
    wait_up(w, auth=good)
    # verified once (/health, a probe, checks none): passes while the client
    # backs off below
    assert call(w.url, "GET", "/", auth=good).status_code == 200
    challenge = f'{mode.capitalize()} realm="tributary"'

    for method, route in routes():
        for auth in (None, wrong):
            reply = call(w.url, method, route, auth=auth)
            if (method, route) in PROBES:  # answered whatever the credentials
                assert reply.status_code in (200, 503), (method, route, reply.text)
                continue
            # wrong credentials again and again: the client backs off (429)
            refused = (401,) if auth is None else (401, 429)
            assert reply.status_code in refused, (method, route, reply.text)
            body = reply.json()
            assert body["error_code"] == reply.status_code and body["message"], body
            if reply.status_code == 401:
                assert reply.headers["WWW-Authenticate"] == challenge
    # the other scheme is no credential either
    other = (("alice", secret) if mode == "bearer" else BearerAuth(f"alice.{secret}"))
    assert call(w.url, "GET", "/connectors", auth=other).status_code == 401

    with requests.Session() as session:  # verified once: no PBKDF2 again
        session.auth = good
        root = session.get(w.url + "/", timeout=30)
        assert root.status_code == 200 and root.json()["version"]
        listed = session.get(w.url + "/connectors", timeout=30)
        assert listed.status_code == 200 and listed.json() == []
        # with credentials, every route answers what it answers with no auth
        # configured at all (a 404 for the missing connector, a 400 for the
        # empty body, ...): the credentials were taken, not just not refused
        for method, route in routes():
            reply = session.request(method, w.url + route, timeout=30,
                                    json={} if method in ("POST", "PUT", "PATCH")
                                    else None)
            unguarded = call(open_worker.url, method, route)
            assert answer(reply) == answer(unguarded), (method, route, reply.text)

    w.stop()
    assert secret not in w.logs()


def test_unauthenticated_request_body_is_not_read(start_worker, credentials):
    path, good, _, _ = credentials("basic")
    w = start_worker({"rest.auth": "basic", "rest.auth.credentials.file": str(path)},
                     wait_healthy=False)
    wait_up(w, auth=good)
    big = b"{" + b" " * (512 * 1024) + b"}"
    reply = requests.post(w.url + "/connectors", data=big, timeout=30,
                          headers={"Content-Type": "application/json"})
    assert reply.status_code == 401
    assert requests.get(w.url + "/", auth=good, timeout=30).status_code == 200


def test_hash_password_prints_a_salted_pbkdf2_hash():
    secret = secrets.token_urlsafe(16)
    first, second = hash_secret(secret), hash_secret(secret)
    assert first != second  # a salt of its own each time
    match = re.fullmatch(r"pbkdf2-sha256\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)",
                         first)
    assert match, first
    iterations = int(match[1])
    salt, digest = base64.b64decode(match[2]), base64.b64decode(match[3])
    assert iterations >= 100000 and len(salt) >= 16
    assert hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, iterations) == digest
    empty = subprocess.run([BINARY, "--hash-password"], input="", capture_output=True,
                           text=True, timeout=30)
    assert empty.returncode == 1 and "no secret" in empty.stderr


def test_malformed_credentials_file_stops_the_worker(start_worker, tmp_path):
    path = tmp_path / "bad.credentials"
    path.write_text(f"alice:{hash_secret('x' * 12)}\n\nbob:not-a-hash\n")
    w = start_worker({"rest.auth": "basic", "rest.auth.credentials.file": str(path)},
                     wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=60) == 1
    assert f"rest.auth.credentials.file {path} line 3: the hash is not" in w.logs()
    assert "not-a-hash" not in w.logs()


def test_auth_without_credentials_file_stops_the_worker(start_worker):
    w = start_worker({"rest.auth": "bearer"}, wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=60) == 1
    assert "rest.auth=bearer needs rest.auth.credentials.file" in w.logs()


@pytest.fixture
def pki(tmp_path):
    """A CA, a server certificate for 127.0.0.1 (key also encrypted with a
    fresh password), a client certificate, and a client certificate of
    another CA; all made by openssl now."""
    d = tmp_path / "pki"
    d.mkdir()

    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True,
                       timeout=60)

    def ca(name):
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
            f"{name}.key", "-out", f"{name}.pem", "-days", "1", "-subj", f"/CN={name}")

    def leaf(name, ca_name, ext):
        ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
            f"{name}.csr", "-subj", f"/CN={name}")
        (d / f"{name}.ext").write_text(ext)
        ssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca_name}.pem", "-CAkey",
            f"{ca_name}.key", "-CAcreateserial", "-out", f"{name}.pem", "-days", "1",
            "-extfile", f"{name}.ext")

    ca("ca")
    ca("rogue-ca")
    leaf("server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    leaf("client", "ca", "extendedKeyUsage=clientAuth\n")
    leaf("rogue", "rogue-ca", "extendedKeyUsage=clientAuth\n")
    password = secrets.token_urlsafe(12)
    secret_scan.remember(password)
    ssl("pkcs8", "-topk8", "-in", "server.key", "-out", "server.enc.key", "-v2",
        "aes-256-cbc", "-passout", f"pass:{password}")
    files = {name: str(d / name) for name in os.listdir(d)}
    files["password"] = password
    return files


def https_settings(pki, port, **extra):
    return {"listeners": f"https://127.0.0.1:{port}",
            "listeners.https.ssl.certificate.location": pki["server.pem"],
            "listeners.https.ssl.key.location": pki["server.key"], **extra}


def curl(*args):
    done = subprocess.run(["curl", "-sS", *args], capture_output=True, text=True,
                          timeout=30)
    secret_scan.check_text(f"the output of curl {' '.join(args)}", done.stdout)
    return done


def test_https_listener_with_curl_cacert(start_worker, pki, bed):
    port = free_port()
    w = start_worker(https_settings(pki, port), wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    wait_up(w, verify=pki["ca.pem"])

    done = curl("--cacert", pki["ca.pem"], "-f", w.url + "/")
    assert done.returncode == 0, done.stderr
    assert '"kafka_cluster_id"' in done.stdout
    untrusted = curl(w.url + "/")  # the system CAs do not know ours
    assert untrusted.returncode != 0
    created = requests.post(w.url + "/connectors", verify=pki["ca.pem"], timeout=30,
                            json={"name": "tls", "config": {
                                "connector.class": "datagen",
                                "topic": bed.unique_topic("tls")}})
    assert created.status_code == 201, created.text
    assert created.headers["Location"] == f"{w.url}/connectors/tls"


def test_https_key_with_password(start_worker, pki):
    port = free_port()
    w = start_worker(https_settings(pki, port, **{
        "listeners.https.ssl.key.location": pki["server.enc.key"],
        "listeners.https.ssl.key.password": pki["password"]}), wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    wait_up(w, verify=pki["ca.pem"])
    assert curl("--cacert", pki["ca.pem"], "-f", w.url + "/connectors").returncode == 0
    w.stop()
    assert pki["password"] not in w.logs()

    bad = start_worker(https_settings(pki, free_port(), **{
        "listeners.https.ssl.key.location": pki["server.enc.key"],
        "listeners.https.ssl.key.password": pki["password"] + "x"}),
        wait_healthy=False, expect_exit=1)
    assert bad.proc.wait(timeout=60) == 1
    assert "is listeners.https.ssl.key.password its password?" in bad.logs()


@pytest.mark.parametrize("kind", ["env", "file"])
def test_https_key_password_from_a_reference(start_worker, pki, tmp_path, kind):
    secrets_file = tmp_path / "listener.properties"
    secrets_file.write_text(f"key={pki['password']}\n")
    reference = ("${env:TB_TEST_KEY_PASSWORD}" if kind == "env"
                 else f"${{file:{secrets_file}:key}}")
    port = free_port()
    w = start_worker(https_settings(pki, port, **{
        "listeners.https.ssl.key.location": pki["server.enc.key"],
        "listeners.https.ssl.key.password": reference}),
        env={"TB_TEST_KEY_PASSWORD": pki["password"]}, wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    wait_up(w, verify=pki["ca.pem"])
    assert curl("--cacert", pki["ca.pem"], "-f", w.url + "/connectors").returncode == 0


def test_https_listener_needs_certificate_and_key(start_worker):
    w = start_worker({"listeners": f"https://127.0.0.1:{free_port()}"},
                     wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=60) == 1
    assert "listeners.https.ssl.certificate.location" in w.logs()


@pytest.mark.parametrize("mode", ["requested", "required"])
def test_client_certificates(start_worker, pki, mode):
    port = free_port()
    w = start_worker(https_settings(pki, port, **{
        "listeners.https.ssl.client.auth": mode,
        "listeners.https.ssl.ca.location": pki["ca.pem"]}), wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    client = ("--cert", pki["client.pem"], "--key", pki["client.key"])
    rogue = ("--cert", pki["rogue.pem"], "--key", pki["rogue.key"])
    wait_up(w, verify=pki["ca.pem"], cert=(pki["client.pem"], pki["client.key"]))

    def status(*args):
        done = curl("--cacert", pki["ca.pem"], "-o", "/dev/null", "-w", "%{http_code}",
                    *args, w.url + "/connectors")
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert status(*client) == "200"
    assert status(*rogue) == "401"
    assert status() == ("200" if mode == "requested" else "401")


def test_non_loopback_bind_without_auth_is_refused(start_worker):
    for listeners in (f"http://0.0.0.0:{free_port()}", f"http://:{free_port()}"):
        w = start_worker({"listeners": listeners}, wait_healthy=False, expect_exit=1)
        assert w.proc.wait(timeout=60) == 1
        lines = [line for line in w.logs().splitlines() if "refusing to start" in line]
        assert len(lines) == 1, w.logs()
        assert "rest.auth" in lines[0] and "rest.allow.unauthenticated.remote" in lines[0]
        assert listeners in lines[0]

    admin = start_worker({"admin.listeners": f"http://0.0.0.0:{free_port()}"},
                         wait_healthy=False, expect_exit=1)
    assert admin.proc.wait(timeout=60) == 1
    assert "rest.allow.unauthenticated.remote" in admin.logs()


def listening_addresses(port):
    """The local addresses of every listening TCP socket on port, read from
    the kernel (/proc/net/tcp and tcp6), as "a.b.c.d" or IPv6 hex."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    if len(address) == 8:  # IPv4, little-endian
                        found.add(".".join(str(b) for b in bytes.fromhex(address)[::-1]))
                    else:
                        found.add(address)
    return found


def test_default_listener_is_loopback_only(worker):
    assert listening_addresses(int(worker.url.rsplit(":", 1)[1])) == {"127.0.0.1"}


def test_non_loopback_bind_allowed_explicitly(start_worker):
    port = free_port()
    w = start_worker({"listeners": f"http://0.0.0.0:{port}",
                      "rest.allow.unauthenticated.remote": "true"}, wait_healthy=False)
    w.url = f"http://127.0.0.1:{port}"
    wait_up(w)
    assert listening_addresses(port) == {"0.0.0.0"}, "it must listen on every interface"


def test_admin_endpoints_on_the_listeners_by_default(worker):
    assert worker.get("/admin/loggers").status_code == 200


def test_admin_listeners_move_the_admin_endpoints(start_worker):
    admin_url = f"http://127.0.0.1:{free_port()}"
    w = start_worker({"admin.listeners": admin_url})
    assert w.get("/admin/loggers").status_code == 404
    assert w.get("/admin/loggers/root").status_code == 404
    assert w.get("/connectors").status_code == 200
    assert requests.get(admin_url + "/admin/loggers", timeout=10).status_code == 200
    reply = requests.put(admin_url + "/admin/loggers/tributary.http", timeout=10,
                         json={"level": "DEBUG"})
    assert reply.status_code == 200
    assert requests.get(admin_url + "/connectors", timeout=10).status_code == 404
    assert requests.get(admin_url + "/", timeout=10).status_code == 404


def test_admin_listeners_empty_disables_the_admin_endpoints(start_worker):
    w = start_worker({"admin.listeners": ""})
    for path in ("/admin/loggers", "/admin/loggers/root"):
        reply = w.get(path)
        assert reply.status_code == 404
        assert reply.json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    assert w.put("/admin/loggers/root", json={"level": "DEBUG"}).status_code == 404
    assert w.get("/connectors").status_code == 200


def test_an_over_long_path_is_refused_never_cut(worker):
    """A path of 4 096 bytes or more answers 414: cut to 4 095 bytes, the
    DELETE of .../offsets of a connector named near that length was a DELETE
    of the connector itself."""
    name = "n" * (4095 - len("/connectors/"))
    reply = worker.post("/connectors", json={"name": name, "initial_state": "STOPPED",
                                             "config": {"connector.class": "FileStreamSink",
                                                        "topics": "t", "file": "/tmp/tb-long"}})
    assert reply.status_code == 201, reply.text
    reply = worker.delete(f"/connectors/{name}/offsets")
    assert reply.status_code == 414, reply.text
    assert reply.json()["error_code"] == 414
    assert worker.get(f"/connectors/{name}").status_code == 200
    assert worker.get("/connectors").json() == [name]


PREFLIGHT = {"Origin": "http://ui.example", "Access-Control-Request-Method": "PUT"}


def test_cors_off_by_default(worker):
    reply = worker.get("/", headers={"Origin": "http://ui.example"})
    assert reply.status_code == 200
    assert not any(h.lower().startswith("access-control-") for h in reply.headers)
    reply = requests.options(worker.url + "/connectors", headers=PREFLIGHT, timeout=10)
    assert reply.status_code in (404, 405)
    assert "Access-Control-Allow-Origin" not in reply.headers


def test_cors_when_configured(start_worker, credentials):
    path, good, _, _ = credentials("basic")
    w = start_worker({"access.control.allow.origin": "http://other.example, "
                                                     "http://ui.example",
                      "access.control.allow.methods": "GET,PUT,DELETE",
                      "rest.auth": "basic", "rest.auth.credentials.file": str(path)},
                     wait_healthy=False)
    wait_up(w, auth=good)

    # a preflight carries no credentials and needs none
    reply = requests.options(w.url + "/connectors/x/pause", headers=PREFLIGHT,
                             timeout=10)
    assert reply.status_code == 204
    assert reply.headers["Access-Control-Allow-Origin"] == "http://ui.example"
    assert reply.headers["Access-Control-Allow-Methods"] == "GET,PUT,DELETE"
    assert "Authorization" in reply.headers["Access-Control-Allow-Headers"]
    assert reply.headers["Access-Control-Allow-Credentials"] == "true"

    reply = requests.get(w.url + "/connectors", auth=good, timeout=10,
                         headers={"Origin": "http://ui.example"})
    assert reply.status_code == 200
    assert reply.headers["Access-Control-Allow-Origin"] == "http://ui.example"
    assert reply.headers["Vary"] == "Origin"
    # a 401 is readable by the page, so it can ask for credentials
    reply = requests.get(w.url + "/connectors", timeout=10,
                         headers={"Origin": "http://ui.example"})
    assert reply.status_code == 401
    assert reply.headers["Access-Control-Allow-Origin"] == "http://ui.example"

    # other origins get nothing, and their preflight is an ordinary request
    evil = {**PREFLIGHT, "Origin": "http://evil.example"}
    reply = requests.options(w.url + "/connectors", headers=evil, timeout=10)
    assert reply.status_code == 401
    assert "Access-Control-Allow-Origin" not in reply.headers
    reply = requests.get(w.url + "/connectors", auth=good, timeout=10,
                         headers={"Origin": "http://evil.example"})
    assert "Access-Control-Allow-Origin" not in reply.headers


def test_cors_any_origin(start_worker):
    w = start_worker({"access.control.allow.origin": "*"})
    reply = w.get("/", headers={"Origin": "http://anywhere.example"})
    assert reply.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in reply.headers
    reply = requests.options(w.url + "/connectors", headers=PREFLIGHT, timeout=10)
    assert reply.status_code == 204
    assert reply.headers["Access-Control-Allow-Methods"] == "GET,POST,HEAD"


def tls_handshake(port, ca, version, ciphers=None):
    """Whether a TLS handshake of exactly version (ssl.TLSVersion) succeeds.
    The client itself allows every version and cipher (security level 0),
    so that only the server can refuse."""
    import socket
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(ca)
    context.set_ciphers(ciphers or "ALL:@SECLEVEL=0")
    context.minimum_version = context.maximum_version = version
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                return tls.version()
    except (ssl.SSLError, ConnectionError):
        return None


def test_tls_1_2_is_the_minimum(start_worker, pki):
    import ssl
    port = free_port()
    w = start_worker(https_settings(pki, port), wait_healthy=False)
    w.url = f"https://127.0.0.1:{port}"
    wait_up(w, verify=pki["ca.pem"])
    assert tls_handshake(port, pki["ca.pem"], ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    assert tls_handshake(port, pki["ca.pem"], ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    assert tls_handshake(port, pki["ca.pem"], ssl.TLSVersion.TLSv1_1) is None
    assert tls_handshake(port, pki["ca.pem"], ssl.TLSVersion.TLSv1) is None
    # TLS 1.2 without forward secrecy (RSA key exchange) is refused too
    assert tls_handshake(port, pki["ca.pem"], ssl.TLSVersion.TLSv1_2,
                         ciphers="AES128-SHA256:AES256-GCM-SHA384:@SECLEVEL=0") is None


def closed_by_server(sock):
    """Whether the server closed sock (reads what it sent until then)."""
    import socket
    sock.settimeout(0.1)
    try:
        while True:
            if sock.recv(4096) == b"":
                return True
    except socket.timeout:
        return False
    except ConnectionError:
        return True


def test_connections_per_client_are_limited(start_worker):
    import socket
    w = start_worker({"rest.connections.per.client.max": "2", "rest.threads": "1"})

    def hold_two():
        held = [socket.create_connection(("127.0.0.1", w.port)) for _ in range(2)]
        for sock in held:  # a request begun and not finished holds its connection
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        if all(not closed_by_server(s) for s in held):
            return held
        # The start-up health check's connection still counts until the server
        # has seen it closed: try again with two fresh ones.
        for sock in held:
            sock.close()
        return None

    held = wait_for(hold_two, what="two held")
    extra = socket.create_connection(("127.0.0.1", w.port))
    extra.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    wait_for(lambda: closed_by_server(extra), what="the third connection to be closed")
    extra.close()
    for sock in held:
        sock.close()
    wait_for(lambda: w.get("/health").status_code == 200, what="the API after they close")


def test_idle_connections_are_closed(start_worker):
    import socket
    w = start_worker({"rest.connection.timeout.ms": "1000"})
    idle = socket.create_connection(("127.0.0.1", w.port))
    stalled = socket.create_connection(("127.0.0.1", w.port))
    stalled.sendall(b"GET /health HTTP/1.1\r\n")
    # well within the old fixed 30 s: the setting is what closes them
    wait_for(lambda: closed_by_server(idle) and closed_by_server(stalled), timeout=20,
             what="the idle connections to be closed")
    idle.close()
    stalled.close()
    assert w.get("/health").status_code == 200


def request_from(source, w, path, user, password):
    """GET path with Basic credentials over a connection from source (an
    address of 127.0.0.0/8); returns (status, body)."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", w.port, timeout=30,
                                            source_address=(source, 0))
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        connection.request("GET", path, headers={"Authorization": f"Basic {token}"})
        reply = connection.getresponse()
        body = reply.read().decode()
    finally:
        connection.close()
    secret_scan.check_text(f"the response to GET {path}", body)
    return reply.status, body


def auth_metric(body, series):
    for line in body.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[1])
    return 0.0


def test_failed_basic_auth_backs_off_without_pbkdf2(start_worker, tmp_path):
    users = {name: secret_scan.new_secret(f"{name}-password")
             for name in ("alice", "bob", "carol")}
    wrong = secret_scan.new_secret("wrong-password")
    path = tmp_path / "basic.credentials"
    path.write_text("".join(f"{name}:{hash_secret(secret)}\n"
                            for name, secret in users.items()))
    w = start_worker({"rest.auth": "basic", "rest.auth.credentials.file": str(path)},
                     wait_healthy=False)
    wait_up(w, auth=("alice", users["alice"]))

    def metrics():
        status, body = request_from("127.0.0.1", w, "/metrics", "alice", users["alice"])
        assert status == 200, body
        return (auth_metric(body, "tributary_rest_auth_hashes_total"),
                auth_metric(body, 'tributary_rest_auth_failures_total{reason="throttled"}'))

    hashes_before, _ = metrics()  # alice's header is verified: no PBKDF2 to read them
    for _ in range(5):
        assert request_from("127.0.0.1", w, "/", "alice", wrong)[0] == 401
    assert metrics()[0] == hashes_before + 5
    answers = [request_from("127.0.0.1", w, "/", "alice", wrong)[0] for _ in range(30)]
    hashes_after, throttled = metrics()
    # refused unverified while backing off (1 s, then doubling): however slow
    # the requests, few of them can have cost a PBKDF2
    assert answers.count(401) == hashes_after - hashes_before - 5
    assert answers.count(401) <= 4 and answers.count(429) >= 26, answers
    assert throttled == answers.count(429)
    status, body = request_from("127.0.0.1", w, "/", "alice", wrong)
    assert status in (401, 429)
    if status == 429:
        assert "Too many failed authentication attempts" in body, body
    # another client is not locked out, and its own failures are its own
    assert request_from("127.0.0.2", w, "/", "bob", users["bob"])[0] == 200
    assert request_from("127.0.0.2", w, "/", "bob", wrong)[0] == 401
    # the backing-off client: a header verified before passes at once, and
    # new right credentials once the backoff is over
    assert request_from("127.0.0.1", w, "/", "alice", users["alice"])[0] == 200
    wait_for(lambda: request_from("127.0.0.1", w, "/", "carol", users["carol"])[0] == 200,
             timeout=60, what="carol's first request after the backoff")
