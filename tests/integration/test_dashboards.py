"""Dashboards: Debian's Prometheus scrapes a live worker, and every panel query of
the shipped Grafana dashboard (deploy/grafana/tributary.json) and the listed
Connect panel queries of Strimzi's and Confluent's stock Kafka Connect
dashboards return series, their selectors unchanged (the labels they select on
are added by the scrape, as Strimzi's pod monitor and Confluent's Prometheus
config add them)."""
import json
import pathlib

import pytest

from kafka_io import create_topic, produce
from prometheus_server import prometheus, query
from test_distributed import cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration

DASHBOARD = pathlib.Path(__file__).resolve().parents[2] / "deploy/grafana/tributary.json"

# What the scrape adds: Strimzi's pod monitor the Kubernetes labels, the
# Confluent stack's Prometheus config its job, env and kafka_connect_cluster_id.
# One job, so each series is there once, as each connector's info series is in
# a cluster (the stock queries join on connector alone).
JOBS = {"kafka-connect": {
    "strimzi_io_kind": "KafkaConnect", "strimzi_io_cluster": "dash", "namespace": "kafka",
    "kubernetes_pod_name": "dash-connect-0", "pod": "dash-connect-0",
    "container": "dash-connect",
    "env": "dev", "kafka_connect_cluster_id": "cluster1"}}


def strimzi(metric, namespace=False):
    """metric under the selector Strimzi's dashboard puts on it, its variables
    (namespace, cluster name) set to the scrape's labels."""
    scope = 'namespace="kafka",' if namespace else ""
    return f'{metric}{{{scope}strimzi_io_kind=~"KafkaConnect.*",strimzi_io_cluster="dash"}}'


# Strimzi's stock Connect dashboards, for its JMX exporter rules
# (strimzi-kafka-connect.json) and for its metrics reporter (the same
# dashboard over the reporter's names): their Connect panels' queries, then
# their variables'. Not listed: the Kafka Java clients' connection and byte
# counts and the JVM's panels, which tributary does not have. "Connector
# Tasks with Issues" shows a state's count where it is not 0: the test has a
# paused and a failed task, no unassigned or destroyed one, so those two are
# asked without "!= 0".
TASK_STATES = ("running", "paused", "failed", "unassigned", "destroyed")
EXPORTER_NAMES = {
    "worker": "kafka_connect_worker_", "coordinator": "kafka_connect_coordinator_",
    "rebalancing": "kafka_connect_worker_rebalance_rebalancing",
    "status": "kafka_connect_connector_status",
    "class": "kafka_connect_connector_connector_class",
    "version": "kafka_connect_connector_connector_version",
    "type": "kafka_connect_connector_connector_type",
    "failures": "kafka_connect_task_error_total_record_failures",
    "task_status": "kafka_connect_connector_task_status",
}
REPORTER_NAMES = {
    "worker": "kafka_connect_connect_worker_metrics_",
    "coordinator": "kafka_connect_connect_coordinator_metrics_",
    "rebalancing": "kafka_connect_connect_worker_rebalance_metrics_rebalancing",
    "status": "kafka_connect_connector_metrics_status_info",
    "class": "kafka_connect_connector_metrics_connector_class_info",
    "version": "kafka_connect_connector_metrics_connector_version_info",
    "type": "kafka_connect_connector_metrics_connector_type_info",
    "failures": "kafka_connect_task_error_metrics_total_record_failures",
    "task_status": "kafka_connect_connector_task_metrics_status_info",
}


def strimzi_queries(n):
    """The queries of Strimzi's dashboard over the names n."""
    return [
        f"sum({strimzi(n['worker'] + 'connector_count')})",
        f"sum({strimzi(n['worker'] + 'task_count')})",
        f"sum({strimzi(n['coordinator'] + 'assigned_connectors')}) by (kubernetes_pod_name)",
        f"sum({strimzi(n['rebalancing'])})",
        f"sum({strimzi(n['coordinator'] + 'assigned_tasks')}) by (kubernetes_pod_name)",
        *[f"sum({strimzi(n['worker'] + f'connector_{state}_task_count', True)})"
          f" by (connector){' != 0' if state in ('paused', 'failed') else ''}"
          for state in TASK_STATES[1:]],
        *[f"sum({strimzi(n['worker'] + f'connector_{state}_task_count')})"
          for state in TASK_STATES],
        f"sum({strimzi(n['status'])}"
        f" * on(connector) group_left(connector_class) {n['class']}{{}}"
        f" * on (connector) group_left(connector_version) {n['version']}{{}}"
        f" * on (connector) group_left(connector_type) {n['type']}{{}})"
        " by (connector, status, connector_class, kubernetes_pod_name, connector_version,"
        " connector_type)",
        f"sum({strimzi(n['failures'])}"
        f" * on(connector, task) group_left(status) {n['task_status']}{{}})"
        " by (connector, status, kubernetes_pod_name, task)",
        'sum(rate(process_cpu_seconds_total{namespace="kafka",pod=~"dash-connect-.+",'
        'container="dash-connect"}[5m])) by (pod)',
        f'{n["worker"]}connector_count{{strimzi_io_kind=~"KafkaConnect.*"}}',
        f'{n["worker"]}connector_count{{namespace="kafka", strimzi_io_kind=~"KafkaConnect.*"}}',
    ]


def confluent(metric, extra="", connector=True, cluster=True):
    """metric under the selector Confluent's dashboard puts on it, its
    variables set: env to the scrape's, the others to all (instance,
    cluster id and connector are multi-value variables with "All")."""
    scope = 'job="kafka-connect", env="dev",instance=~".+"'
    scope += ',kafka_connect_cluster_id=~".+"' if cluster else ""
    scope += ',connector=~".+"' if connector else ""
    return f"{metric}{{{scope}{extra}}}"


# Confluent's stock Connect dashboard (jmx-monitoring-stacks,
# kafka-connect-cluster.json for JMX exporter 1.x): its panels' queries, then
# its variables'. Its panels of times in ms (..._time_ms, _ms) query names
# that the worker serves with metrics.milliseconds.names only, which this
# test's worker sets. Not listed, as tributary does not serve them
# (docs/OPERATIONS.md says why): the worker's Java client network metrics
# (kafka_connect_connect_metrics_*) and the JVM's.
WORKER = "kafka_connect_connect_worker_metrics_"
CONFLUENT_QUERIES = [
    *[f"sum({confluent(f'{WORKER}connector_{state}_task_count')})"
      for state in ("total",) + TASK_STATES],
    *[f"sum by (connector) ({confluent(f'{WORKER}connector_{state}_task_count')})"
      for state in ("total",) + TASK_STATES],
    *["sum (" + confluent("kafka_connect_connector_metrics", f',status="{status}"') + ")"
      for status in ("running", "stopped", "paused")],
    "sum (" + confluent("kafka_connect_connector_metrics", ',status!=""') + ") by (status) ",
    *[confluent("kafka_connect_connector_metrics", f',{label}!=""')
      for label in ("status", "connector_type", "connector_version", "connector_class")],
    'rate(process_cpu_seconds_total{job="kafka-connect",env="dev",'
    'kafka_connect_cluster_id=~".+",instance=~".+"}[5m])',
    confluent("kafka_connect_app", ',client_id!="",start_time_ms!=""', connector=False),
    confluent("kafka_connect_app", ',client_id!="",version!=""', connector=False),
    *[f"sum by (instance) ({confluent(WORKER + name, connector=False, cluster=False)})"
      for name in ("connector_count", "connector_startup_success_total",
                   "connector_startup_failure_total", "task_count",
                   "task_startup_success_total", "task_startup_failure_total")],
    confluent("kafka_connect_connect_worker_rebalance_metrics_completed_rebalances",
              connector=False) + " >= 0",
    *[confluent(f"kafka_connect_connector_task_metrics_{name}")
      for name in ("batch_size_avg", "batch_size_max", "offset_commit_success_percentage",
                   "running_ratio")],
    *[confluent(f"kafka_connect_task_error_metrics_{name}")
      for name in ("total_record_failures", "total_record_errors", "total_records_skipped",
                   "total_errors_logged", "total_retries",
                   "deadletterqueue_produce_requests", "deadletterqueue_produce_failures")],
    *[confluent(f"kafka_connect_source_task_metrics_{name}", ',task!=""')
      for name in ("source_record_write_rate", "source_record_poll_rate")],
    *[confluent(f"kafka_connect_sink_task_metrics_{name}", ',task!=""')
      for name in ("sink_record_read_rate", "sink_record_send_rate",
                   "offset_commit_completion_rate", "offset_commit_skip_rate",
                   "partition_count", "put_batch_avg_time_ms")],
    *[confluent(f"kafka_connect_source_task_metrics_{name}", ',task!=""')
      for name in ("poll_batch_avg_time_ms", "poll_batch_max_time_ms",
                   "source_record_active_count_avg", "source_record_active_count_max")],
    *[confluent(f"kafka_connect_sink_task_metrics_{name}", ',task!=""')
      for name in ("sink_record_active_count_avg", "sink_record_active_count_max")],
    confluent("kafka_connect_connector_task_metrics_offset_commit_avg_time_ms"),
    *[confluent(f"kafka_connect_connect_worker_rebalance_metrics_{name}", connector=False)
      for name in ("rebalance_avg_time_ms", "time_since_last_rebalance_ms")],
    "kafka_connect_app",
    'kafka_connect_app{job="kafka-connect", env="dev",kafka_connect_cluster_id=~".+"}',
    'kafka_connect_connector_task_metrics_pause_ratio{job="kafka-connect", env="dev",'
    'kafka_connect_cluster_id=~".+"}',
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
    w = start_worker({**cluster_settings(bed, group), "metrics.milliseconds.names": "true"})
    topic = bed.unique_topic("dash-in")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{i}".encode()) for i in range(20)])
    generator = {"connector.class": "datagen", "topic": bed.unique_topic("dash-g"),
                 "records.per.second": "20"}
    # a running sink and source, a paused and a stopped connector, and a task
    # that fails (its file's directory is missing): every state a panel counts
    for name, config, action, tasks in [
            ("dash-sink", {"connector.class": "FileStreamSink", "topics": topic,
                           "file": str(tmp_path / "out.txt")}, None, ["RUNNING"]),
            ("dash-gen", generator, None, ["RUNNING"]),
            ("dash-paused", generator, "pause", ["PAUSED"]),
            ("dash-stopped", generator, "stop", []),
            ("dash-failed", {"connector.class": "FileStreamSink", "topics": topic,
                             "file": str(tmp_path / "missing" / "out.txt")},
             None, ["FAILED"])]:
        reply = w.put(f"/connectors/{name}/config", json=config)
        assert reply.status_code == 201, reply.text
        if action is not None:
            wait_for(lambda: w.get(f"/connectors/{name}/status").json()["tasks"],
                     timeout=60, what=f"{name}'s task")
            reply = w.put(f"/connectors/{name}/{action}")
            assert reply.status_code in (202, 204), reply.text
        wait_for(lambda: [t["state"] for t in w.get(
            f"/connectors/{name}/status").json()["tasks"]] == tasks,
            timeout=60, what=f"{name}'s tasks {tasks}")
    expected = [("dashboard: " + title, expr) for title, expr in queries] + \
        [("strimzi", expr) for expr in strimzi_queries(EXPORTER_NAMES)] + \
        [("strimzi metrics reporter", expr) for expr in strimzi_queries(REPORTER_NAMES)] + \
        [("confluent", expr) for expr in CONFLUENT_QUERIES]
    with prometheus(tmp_path, f"127.0.0.1:{w.port}", JOBS) as base:
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
