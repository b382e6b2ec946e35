"""Debian's Prometheus server on loopback, scraping a worker, and its query
API."""
import contextlib
import json
import os
import subprocess

import requests

from worker import free_port

PROMETHEUS = "/usr/bin/prometheus"


@contextlib.contextmanager
def prometheus(tmp_path, target, jobs=None):
    """A Prometheus server scraping target every second, on a free loopback
    port; yields its base URL, and stops it at the end. jobs maps a job name
    to the labels its scrape adds (as a Kubernetes pod monitor or a static
    config of a stock stack would); by default one job, tributary."""
    assert os.access(PROMETHEUS, os.X_OK), (
        f"{PROMETHEUS} not found: scripts/install-deps test (Debian package prometheus)")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
        + "".join(
            f"  - job_name: {json.dumps(job)}\n    static_configs:\n"
            f"      - targets: ['{target}']\n        labels: {json.dumps(labels)}\n"
            for job, labels in (jobs or {"tributary": {}}).items()))
    (tmp_path / "tsdb").mkdir()
    log = open(tmp_path / "prometheus.log", "w")
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


def query(base, promql):
    """The instant vector of promql as {frozenset(labels): value}, or None
    while Prometheus does not answer."""
    try:
        reply = requests.get(f"{base}/api/v1/query", params={"query": promql}, timeout=5)
    except requests.ConnectionError:
        return None
    if reply.status_code != 200:
        return None
    body = reply.json()
    assert body["status"] == "success", body
    return {frozenset(r["metric"].items()): float(r["value"][1])
            for r in body["data"]["result"]}
