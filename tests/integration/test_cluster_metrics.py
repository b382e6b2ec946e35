"""A distributed worker's metrics of its cluster (docs/OPERATIONS.md, "Monitoring"): who
leads, what each worker was given, and each rebalance counted and timed, under tributary's
names and Kafka Connect's connect-worker-rebalance-metrics names, checked by promtool on a
real cluster whose sink tasks move when a third worker joins."""

from __future__ import annotations

import math
import uuid

import pytest

from kafka_io import create_topic
from test_distributed import agreed_placement, cluster_settings, worker_id
from test_observability import parse, promtool_check, series
from worker import wait_for

pytestmark = pytest.mark.integration

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

REBALANCE = "kafka_connect_connect_worker_rebalance_metrics_"
TASKS = 6  # three a worker on two, two a worker once a third joins


def one(page, name, **labels):
    values = series(page, name, **labels)
    assert len(values) == 1, (name, labels, values)
    return values[0]


def settled(workers):
    """Every worker's page once no rebalance is under way and all run the same epoch."""
    pages = [w.get("/metrics").text for w in workers]
    epochs = {one(p, "tributary_cluster_assignment_epoch") for p in pages}
    busy = sum(one(p, "tributary_cluster_rebalancing") for p in pages)
    return pages if len(epochs) == 1 and busy == 0 else None


def every_task_reads(workers):
    """Whether each sink task holds one partition: its consumer group formed."""
    held = [v for w in workers
            for v in series(w.get("/metrics").text, "tributary_sink_task_partitions")]
    return sorted(held) == [1] * TASKS


def check_rebalance_metrics(page, url_of_leader):
    promtool_check(page)
    completed = one(page, "tributary_cluster_rebalances_total")
    assert completed >= 1
    # Connect's names carry tributary's values
    assert one(page, REBALANCE + "completed_rebalances_total") == completed
    assert one(page, REBALANCE + "epoch") == one(page, "tributary_cluster_assignment_epoch")
    assert one(page, REBALANCE + "rebalancing") == 0
    # one time observed per completed rebalance
    assert one(page, "tributary_cluster_rebalance_seconds_count") == completed
    total = one(page, "tributary_cluster_rebalance_seconds_sum")
    longest = one(page, REBALANCE + "rebalance_max_time_seconds")
    mean = one(page, REBALANCE + "rebalance_avg_time_seconds")
    assert 0 < mean <= longest <= total, (mean, longest, total)
    since = one(page, REBALANCE + "time_since_last_rebalance_seconds")
    assert 0 <= since < math.inf
    assert one(page, "tributary_cluster_last_rebalance_timestamp_seconds") > 0
    # leader-name: one series, the leader's URL as its label
    names = [labels for name, labels, value in parse(page)
             if name == REBALANCE + "leader_name" and value == 1]
    assert names == [{"leader_name": url_of_leader}], names


def test_rebalances_are_counted_timed_and_named_as_connect_names_them(start_worker, bed,
                                                                      tmp_path):
    settings = cluster_settings(bed, bed.unique_topic("cmetrics"))
    workers = [start_worker(settings) for _ in range(2)]
    data = bed.unique_topic("data")
    create_topic(bed, data, TASKS)
    # an eager assignor, the sink's own: a group that assigns eagerly revokes every
    # partition at a rebalance, the pause the metric times (the default,
    # cooperative-sticky, lets a task that stays keep reading: no pause to time)
    sink = {"connector.class": "FileStreamSink", "topics": data,
            "file": str(tmp_path / "out.txt"), "tasks.max": str(TASKS),
            "consumer.override.partition.assignment.strategy":
                "org.apache.kafka.clients.consumer.RoundRobinAssignor"}
    reply = workers[0].post("/connectors", json={"name": SINK, "config": sink})
    assert reply.status_code == 201, reply.text
    before = wait_for(lambda: agreed_placement(workers, [SINK], {SINK: TASKS}),
                      timeout=90, what="six tasks RUNNING on two workers")
    pages = wait_for(lambda: settled(workers), timeout=30, what="the cluster settled")
    counted = [one(p, "tributary_cluster_rebalances_total") for p in pages]
    wait_for(lambda: every_task_reads(workers), timeout=60,
             what="the sink's consumer group giving each task its partition")

    workers.append(start_worker(settings))
    after = wait_for(lambda: (lambda p: p if p and len(set(p.values())) == 3 else None)(
        agreed_placement(workers, [SINK], {SINK: TASKS})), timeout=90,
        what="the tasks spread over three workers")
    pages = wait_for(lambda: settled(workers), timeout=30, what="the cluster settled")

    leaders = [w for w, p in zip(workers, pages) if one(p, "tributary_cluster_leader") == 1]
    assert len(leaders) == 1
    for page in pages:
        check_rebalance_metrics(page, leaders[0].url)
    # the join was one more completed rebalance on each worker that was there
    for page, earlier in zip(pages, counted):
        assert one(page, "tributary_cluster_rebalances_total") > earlier
    # what each worker was given, summed over the cluster
    assert sum(one(p, "tributary_cluster_assigned", kind="task") for p in pages) == TASKS
    assert sum(one(p, "tributary_cluster_assigned", kind="connector") for p in pages) == 1
    # a task that stayed was not stopped, but its consumer group rebalanced: that pause
    stayed = [unit for unit in before if after[unit] == before[unit]]
    assert stayed, (before, after)
    owners = {worker_id(w): w for w in workers}

    def paused(connector, task):
        page = owners[after[(connector, task)]].get("/metrics").text
        labels = {"connector": connector, "task": str(task)}
        return (one(page, "tributary_sink_rebalance_pause_seconds_count", **labels) >= 1
                and one(page, "tributary_sink_rebalance_pause_seconds_sum", **labels) > 0)
    for unit in stayed:
        wait_for(lambda: paused(*unit), timeout=30,
                 what=f"the pause of {unit} at its group's rebalance")
