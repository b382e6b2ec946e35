"""REST connections before authentication: a listener holds at most
rest.connections.max, a client (an IPv4 address, an IPv6 /64) at most
rest.connections.per.client.max, and a connection whose request headers do not
arrive within rest.request.header.timeout.ms is closed, however many bytes it
trickles. 2 000 connections from several loopback addresses sending one header
byte a second do not keep an authenticated client from its answer."""
import secrets
import select
import socket
import time

import pytest
import requests

import secret_scan
from test_rest_security import hash_secret
from worker import wait_for

pytestmark = pytest.mark.integration

REQUEST = b"GET /connectors HTTP/1.1\r\nHost: tributary\r\nAccept: */*\r\n" * 4


def closed_by_server(sock):
    """Whether the server closed sock, a non-blocking socket."""
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class Tricklers:
    """Connections from source addresses that send their request one byte per
    call of step(); each is dropped once the server closed it."""

    def __init__(self, port, sources, per_source):
        self.open = []
        for source in sources:
            for _ in range(per_source):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                                source_address=(source, 0))
                sock.setblocking(False)
                self.open.append(sock)
        self.count = len(self.open)
        self.sent = 0

    def step(self):
        byte = REQUEST[self.sent:self.sent + 1]
        self.sent += 1
        still = []
        for sock in self.open:
            try:
                if closed_by_server(sock):
                    raise ConnectionError
                sock.send(byte)
                still.append(sock)
            except OSError:
                sock.close()
        self.open = still

    def close(self):
        for sock in self.open:
            sock.close()


@pytest.fixture
def alice(tmp_path):
    """A credentials file with one user: (path, (user, password))."""
    secret = secrets.token_urlsafe(18)
    secret_scan.remember(secret)
    path = tmp_path / "basic.credentials"
    path.write_text(f"alice:{hash_secret(secret)}\n")
    return path, ("alice", secret)


def test_trickled_headers_from_2000_connections_starve_no_one(start_worker, alice):
    path, auth = alice
    w = start_worker({"rest.auth": "basic", "rest.auth.credentials.file": str(path),
                      "rest.request.header.timeout.ms": "3000"}, wait_healthy=False)
    wait_for(lambda: requests.get(w.url + "/connectors", auth=auth,
                                  timeout=1).status_code == 200, what="the worker up")
    tricklers = Tricklers(w.port, [f"127.0.0.{n}" for n in range(2, 6)], 500)
    try:
        deadline = time.monotonic() + 25  # the test ends itself
        while tricklers.open and time.monotonic() < deadline:
            tricklers.step()  # one byte a second each
            reply = requests.get(w.url + "/connectors", auth=auth, timeout=1)
            assert reply.status_code == 200, reply.text
            time.sleep(1)
        # each was closed (beyond its client's 128 at once, or at the header
        # deadline) though it sent a byte every second
        assert not tricklers.open, f"{len(tricklers.open)} of 2000 still open"
        assert tricklers.sent < len(REQUEST)
    finally:
        tricklers.close()
    logs = w.logs()
    assert "did not arrive within rest.request.header.timeout.ms=3000" in logs, logs
    assert "beyond rest.connections.per.client.max=128" in logs


def test_a_full_listener_takes_the_next_connection_once_one_closes(start_worker):
    w = start_worker({"rest.connections.max": "8", "rest.threads": "1",
                      "rest.request.header.timeout.ms": "2000"})
    wait_for(lambda: requests.get(w.url + "/health", timeout=1).status_code == 200,
             what="the worker's first health check to be reaped")
    tricklers = Tricklers(w.port, ["127.0.0.2"], 8)
    waiting = socket.create_connection(("127.0.0.1", w.port), timeout=5)
    try:
        waiting.sendall(b"GET /health HTTP/1.1\r\nHost: tributary\r\n\r\n")
        tricklers.step()
        # the eight hold the listener: the ninth waits in the backlog
        assert select.select([waiting], [], [], 0.5)[0] == []
        assert len(tricklers.open) == 8
        # until the header deadline closes them, though they trickle on (a
        # byte a second keeps rest.connection.timeout.ms from closing them)
        deadline = time.monotonic() + 20
        while not select.select([waiting], [], [], 1)[0] and time.monotonic() < deadline:
            tricklers.step()
        waiting.settimeout(5)
        assert waiting.recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        waiting.close()
        tricklers.close()
