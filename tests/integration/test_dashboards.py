"""Dashboards: Debian's Prometheus scrapes a live worker, and every panel query of
the shipped Grafana dashboard (deploy/grafana/tributary.json) and the listed
queries of Strimzi's stock Kafka Connect dashboard return series."""
import json
import pathlib

import pytest

from kafka_io import create_topic, produce
from prometheus_server import prometheus, query
from test_distributed import cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration

DASHBOARD = pathlib.Path(__file__).resolve().parents[2] / "deploy/grafana/tributary.json"

# Strimzi's stock Connect dashboard (strimzi-kafka-connect.json), its Connect
# panels' queries with the Kubernetes selectors (strimzi_io_*, namespace) left
# out and kubernetes_pod_name read as instance. Not listed: the Kafka Java
# clients' connection and byte counts, the JVM's and the container's panels,
# which tributary does not have; and "Connector Tasks with Issues", the same
# counts as "Connector Task State" filtered by != 0 (empty while all is well).
STRIMZI_QUERIES = [
    "sum(kafka_connect_worker_connector_count)",
    "sum(kafka_connect_worker_task_count)",
    "sum(kafka_connect_coordinator_assigned_connectors) by (instance)",
    "sum(kafka_connect_coordinator_assigned_tasks) by (instance)",
    "sum(kafka_connect_worker_rebalance_rebalancing)",
    "sum(kafka_connect_worker_connector_running_task_count)",
    "sum(kafka_connect_worker_connector_paused_task_count)",
    "sum(kafka_connect_worker_connector_failed_task_count)",
    "sum(kafka_connect_worker_connector_unassigned_task_count)",
    "sum(kafka_connect_worker_connector_destroyed_task_count)",
    "sum(kafka_connect_connector_status"
    " * on(connector) group_left(connector_class) kafka_connect_connector_connector_class"
    " * on(connector) group_left(connector_version)"
    " kafka_connect_connector_connector_version"
    " * on(connector) group_left(connector_type) kafka_connect_connector_connector_type)"
    " by (connector, status, connector_class, instance, connector_version, connector_type)",
    "sum(kafka_connect_task_error_total_record_failures"
    " * on(connector, task) group_left(status) kafka_connect_connector_task_status)"
    " by (connector, status, instance, task)",
]


def dashboard_queries():
    """Every panel query of the shipped dashboard, its Grafana variables given
    the values that select everything."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [(panel["title"], target["expr"].replace("$instance", ".+")
             .replace("$__rate_interval", "30s"))
            for panel in panels for target in panel.get("targets", [])]


def test_every_dashboard_query_returns_series(start_worker, bed, tmp_path):
    queries = dashboard_queries()
    assert len(queries) >= 20
    group = bed.unique_topic("dash")
    w = start_worker(cluster_settings(bed, group))
    topic = bed.unique_topic("dash-in")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{i}".encode()) for i in range(20)])
    for name, config in [
            ("dash-sink", {"connector.class": "FileStreamSink", "topics": topic,
                           "file": str(tmp_path / "out.txt")}),
            ("dash-gen", {"connector.class": "datagen", "topic": bed.unique_topic("dash-g"),
                          "records.per.second": "20"})]:
        reply = w.put(f"/connectors/{name}/config", json=config)
        assert reply.status_code == 201, reply.text
    for name in ("dash-sink", "dash-gen"):
        wait_for(lambda: [t["state"] for t in w.get(
            f"/connectors/{name}/status").json()["tasks"]] == ["RUNNING"],
            timeout=60, what=f"{name} running")
    expected = [("dashboard: " + title, expr) for title, expr in queries] + \
        [("strimzi", expr) for expr in STRIMZI_QUERIES]
    with prometheus(tmp_path, f"127.0.0.1:{w.port}") as base:
        def empty():
            """The queries that return no series yet (all, while Prometheus
            does not answer)."""
            missing = []
            for what, expr in expected:
                found = query(base, expr)
                if not found:
                    missing.append((what, expr))
            empty.last = missing
            return missing
        # rates need two scrapes in their window, the sink's lag a fetch
        try:
            wait_for(lambda: not empty(), timeout=90, interval=1,
                     what="every query to return series")
        except AssertionError:
            pytest.fail("queries without series: " + json.dumps(empty.last, indent=1))
