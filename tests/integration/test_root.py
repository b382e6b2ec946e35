"""GET / and GET /health, with Kafka Connect's exact shapes."""
import re
import signal
import socket
import time

import pytest

from worker import wait_for

pytestmark = pytest.mark.integration


def test_root_reports_version_commit_and_cluster_id(worker, bed):
    reply = worker.get("/")
    assert reply.status_code == 200
    body = reply.json()
    assert set(body) == {"version", "commit", "kafka_cluster_id"}
    assert body["version"] == "3.9.0"
    assert re.fullmatch(r"[0-9a-f]{12}|unknown", body["commit"])
    assert body["kafka_cluster_id"] == bed.cluster_id


def test_health_is_healthy_once_started(worker):
    reply = worker.get("/health")
    assert reply.status_code == 200
    assert reply.json() == {
        "status": "healthy",
        "message": "Worker has completed startup and is ready to handle requests.",
    }


def test_health_is_starting_while_kafka_is_unreachable(start_worker):
    from worker import free_port
    dead = f"127.0.0.1:{free_port()}"
    w = start_worker({"bootstrap.servers": dead}, wait_healthy=False)
    reply = wait_for(lambda: _answer(w, "/health"), what="an answer from /health")[0]
    assert reply.status_code == 503
    body = reply.json()
    assert body["status"] == "starting"
    assert body["message"].startswith("Worker is still starting up.")
    assert dead in body["message"]
    assert w.get("/").json()["kafka_cluster_id"] is None


def _answer(w, path):
    """(response,) once the worker answers; a tuple, since a 503 response is
    falsy."""
    import requests
    try:
        return (w.get(path),)
    except requests.ConnectionError:
        return None


def test_unknown_path_and_wrong_method(worker):
    reply = worker.get("/no/such/path")
    assert reply.status_code == 404
    assert reply.json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    reply = worker.delete("/health")
    assert reply.status_code == 405
    assert reply.json()["error_code"] == 405


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stops_cleanly_on_signal(worker, sig):
    assert worker.stop(sig) == 0
    assert "received; stopping" in worker.logs()
    assert "stopped" in worker.logs()


def test_a_request_on_a_connection_opened_before_the_stop_is_answered(worker):
    """A client that connected before the stop and sends its request just after it (a
    load balancer took the worker out between the two) gets its answer: the stopping
    worker waits a moment for a connection's first request, then exits."""
    client = socket.create_connection(("127.0.0.1", worker.port), timeout=10)
    time.sleep(0.2)  # accepted by the worker
    worker.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: "for the first request of 1 open connection" in worker.logs(),
             what="the drain to wait for the connection's request")
    client.sendall(b"GET /health HTTP/1.1\r\nHost: w\r\nConnection: close\r\n\r\n")
    reply = b""
    while chunk := client.recv(4096):
        reply += chunk
    client.close()
    assert reply.startswith(b"HTTP/1.1 200"), reply
    assert worker.proc.wait(timeout=30) == 0


def test_environment_overrides_the_worker_file(start_worker, bed, tmp_path):
    from worker import free_port
    port = free_port()
    w = start_worker({"bootstrap.servers": "127.0.0.1:1"},
                     env={"TRIBUTARY_BOOTSTRAP_SERVERS": bed.bootstrap,
                          "TRIBUTARY_LISTENERS": f"http://127.0.0.1:{port}"},
                     wait_healthy=False)
    w.url = f"http://127.0.0.1:{port}"
    w.wait_healthy()
    assert w.get("/").json()["kafka_cluster_id"] == bed.cluster_id


def test_invalid_worker_config_names_the_key(start_worker):
    w = start_worker({"task.threads": "zero"}, wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    assert ("Invalid value zero for configuration task.threads: "
            "Not a number of type INT") in w.logs()
