"""The probes: GET /health (KIP-1017 readiness) and GET /health/live
(liveness) answer without credentials whatever rest.auth says; with the broker
unreachable the worker is live (200) and not ready (503), so a Kubernetes
liveness probe never restarts a worker that only waits for Kafka."""
import secrets

import pytest
import requests

import secret_scan
from test_rest_security import hash_secret
from worker import free_port, wait_for

pytestmark = pytest.mark.integration


def test_live_without_a_broker_and_without_credentials(start_worker, tmp_path):
    secret = secrets.token_urlsafe(18)
    secret_scan.remember(secret)
    path = tmp_path / "basic.credentials"
    path.write_text(f"alice:{hash_secret(secret)}\n")
    w = start_worker({"bootstrap.servers": f"127.0.0.1:{free_port()}",
                      "rest.auth": "basic", "rest.auth.credentials.file": str(path)},
                     wait_healthy=False)

    def live():
        reply = requests.get(w.url + "/health/live", timeout=1)
        return reply.status_code == 200 and reply.json() == {"status": "live"}
    wait_for(live, what="GET /health/live to answer 200 without credentials")

    ready = requests.get(w.url + "/health", timeout=1)
    assert ready.status_code == 503, ready.text
    assert ready.json()["status"] == "starting"
    # wrong credentials on a probe are not even looked at
    wrong = requests.get(w.url + "/health/live", auth=("alice", secret + "x"), timeout=1)
    assert wrong.status_code == 200
    # every other route still needs them
    assert requests.get(w.url + "/connectors", timeout=1).status_code == 401
    assert requests.get(w.url + "/", timeout=1).status_code == 401
    assert requests.get(w.url + "/metrics", timeout=1).status_code == 401
    assert requests.get(w.url + "/connectors", auth=("alice", secret),
                        timeout=5).status_code in (200, 503)
