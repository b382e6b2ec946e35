"""Distributed mode (docs/OPERATIONS.md, "Running a cluster"): workers whose config sets
group.id share their connectors through Kafka. Three workers on one machine, each on its own
port and data directory: connectors created through different workers, every worker's status
agreeing on who runs what, writes forwarded to the leader, and a kill -9 whose tasks run on the
others within the session timeout plus scheduled.rebalance.max.delay.ms plus FAILOVER_BOUND_S,
with no record missing at the sink or in the source's topic."""

from __future__ import annotations

import signal
import threading
import time
import uuid

import pytest
import requests

from kafka_io import create_topic, read_raw
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

SESSION_MS = 6000  # the broker's group.min.session.timeout.ms
DELAY_MS = 3000  # scheduled.rebalance.max.delay.ms
# After the session and the grace: the leader's next tick (250 ms), its publication, every
# worker's read of it and the tasks' start, with room for a loaded machine.
FAILOVER_BOUND_S = 20
SINK_TASKS = 3
TB_FORWARD_WAIT_S = 90  # rest.request.timeout.ms's default: how long a write waits for a leader


def cluster_settings(bed, group):
    return {
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "3",
        "status.storage.partitions": "2",
        "session.timeout.ms": str(SESSION_MS),
        "heartbeat.interval.ms": "1000",
        "scheduled.rebalance.max.delay.ms": str(DELAY_MS),
        # the sink tasks' own group notices a dead consumer as soon
        "consumer.session.timeout.ms": str(SESSION_MS),
        "consumer.heartbeat.interval.ms": "1000",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.flush.interval.ms": "200",
    }


def placement(worker, names, tasks):
    """{(connector, task): worker_id} as worker shows it once every connector and every one
    of its `tasks[name]` tasks is RUNNING; None before."""
    shown = {}
    for name in names:
        status = worker.get(f"/connectors/{name}/status").json()
        if status["connector"]["state"] != "RUNNING" or len(status["tasks"]) != tasks[name]:
            return None
        for task in status["tasks"]:
            if task["state"] != "RUNNING":
                return None
            shown[(name, task["id"])] = task["worker_id"]
    return shown


def agreed_placement(workers, names, tasks):
    """The placement every worker shows, when they all show the same one."""
    views = [placement(w, names, tasks) for w in workers]
    return views[0] if views[0] and all(v == views[0] for v in views) else None


def worker_id(worker):
    return worker.url.removeprefix("http://")


class Traffic:
    """Produces r000000, r000001, ... (8 bytes a line at the file sink, so that its
    buffered writes from several processes never split a record) until stopped."""

    def __init__(self, bootstrap, topic):
        from confluent_kafka import Producer
        self.producer = Producer({"bootstrap.servers": bootstrap})
        self.topic = topic
        self.sent = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping.is_set():
            for _ in range(50):
                self.producer.produce(self.topic, value=f"r{self.sent:06d}".encode())
                self.sent += 1
            self.producer.poll(0)
            self.stopping.wait(0.05)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=30)
        assert self.producer.flush(30) == 0
        return self.sent


def test_three_workers_share_tasks_and_a_killed_workers_tasks_move(start_worker, bed,
                                                                    tmp_path):
    group = bed.unique_topic("cluster")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings) for _ in range(3)]
    data = bed.unique_topic("data")
    create_topic(bed, data, SINK_TASKS)
    produced = bed.unique_topic("produced")
    out = tmp_path / "out.txt"
    source_file = tmp_path / "in.txt"
    lines = [f"line-{i}" for i in range(2000)]
    source_file.write_text("\n".join(lines) + "\n")

    # created through different workers: the writes reach the leader
    sink = {"connector.class": "FileStreamSink", "topics": data, "file": str(out),
            "tasks.max": str(SINK_TASKS)}
    reply = workers[0].post("/connectors", json={"name": SINK, "config": sink})
    assert reply.status_code == 201, reply.text
    source = {"connector.class": "FileStreamSource", "topic": produced,
              "file": str(source_file), "batch.size": "50"}
    reply = workers[1].post("/connectors", json={"name": "source", "config": source})
    assert reply.status_code == 201, reply.text
    # reads answer from each worker's view, which follows the config topic
    wait_for(lambda: workers[2].get("/connectors").json() == [SINK, "source"],
             timeout=30, what="the third worker knowing both connectors")

    names, tasks = [SINK, "source"], {SINK: SINK_TASKS, "source": 1}
    before = wait_for(lambda: agreed_placement(workers, names, tasks), timeout=90,
                      what="every worker showing the same placement, all RUNNING")
    per_worker = {w: sum(1 for v in before.values() if v == w) for w in set(before.values())}
    # balanced: no worker above the ceiling of its share of 4 tasks over 3 workers
    assert set(before.values()) <= {worker_id(w) for w in workers}
    assert len(per_worker) >= 2 and max(per_worker.values()) <= 2, before

    traffic = Traffic(bed.bootstrap, data)
    wait_for(lambda: len(output_lines(out)) >= 500, timeout=60, what="records at the sink")
    victim = max(workers, key=lambda w: per_worker.get(worker_id(w), 0))
    survivors = [w for w in workers if w is not victim]
    victim.stop(signal.SIGKILL)
    killed_at = time.monotonic()
    with source_file.open("a") as f:
        f.write("appended-0\nappended-1\n")  # the source goes on with its file

    bound = SESSION_MS / 1000 + DELAY_MS / 1000 + FAILOVER_BOUND_S
    after = wait_for(lambda: (lambda p: p if p and worker_id(victim) not in p.values()
                              else None)(agreed_placement(survivors, names, tasks)),
                     timeout=bound, what="the killed worker's tasks running elsewhere")
    moved = time.monotonic() - killed_at
    assert set(after.values()) <= {worker_id(w) for w in survivors}
    # tasks that ran on a survivor stay where they ran
    for unit, owner in before.items():
        if owner != worker_id(victim):
            assert after[unit] == owner, (unit, before, after)
    print(f"failover: {moved:.1f} s (bound {bound:.0f} s)")

    sent = traffic.stop()
    expected = {f"r{i:06d}" for i in range(sent)}
    wait_for(lambda: expected <= set(output_lines(out)), timeout=120,
             what=f"all {sent} records at the sink")
    assert not expected - set(output_lines(out))

    wanted = set(lines) | {"appended-0", "appended-1"}
    got = read_raw(bed.bootstrap, produced, lambda values: wanted <= set(values),
                   timeout=90, decode=lambda value: value.decode())
    assert not wanted - set(got), "source records missing from the topic"


def test_writes_through_any_worker_reach_the_leader(start_worker, bed, tmp_path):
    group = bed.unique_topic("cluster")
    workers = [start_worker(cluster_settings(bed, group)) for _ in range(2)]
    # the leader answers for every worker: its validation, its conflict
    bad = {"connector.class": "FileStreamSink", "topics": "t", "tasks.max": "zero"}
    for w in workers:
        reply = w.post("/connectors", json={"name": "bad", "config": bad})
        assert reply.status_code == 400, reply.text
    good = {"connector.class": "FileStreamSink", "topics": bed.unique_topic("t"),
            "file": str(tmp_path / "one.txt"), "tasks.max": "2"}
    leader = wait_for(lambda: leader_of(workers), timeout=60, what="a leader")
    follower = next(w for w in workers if w is not leader)
    reply = follower.post("/connectors", json={"name": "one", "config": good})
    assert reply.status_code == 201, reply.text
    assert reply.headers["Location"] == leader.url + "/connectors/one", reply.headers
    # the follower may not have read the new config yet; the leader has
    reply = follower.post("/connectors", json={"name": "one", "config": good})
    assert reply.status_code == 409, reply.text
    placed = wait_for(lambda: agreed_placement(workers, ["one"], {"one": 2}), timeout=60,
                      what="its tasks RUNNING")
    assert len(set(placed.values())) == 2, placed  # so one runs on a worker that does not lead
    # a task's restart reaches the worker that runs it, from any worker
    for w in workers:
        for task in (0, 1):
            reply = w.post(f"/connectors/one/tasks/{task}/restart")
            assert reply.status_code == 204, reply.text
    # a connector's restart leaves its status to the worker running its instance
    owner = leader.get("/connectors/one/status").json()["connector"]["worker_id"]
    assert follower.post("/connectors/one/restart").status_code == 204
    assert leader.get("/connectors/one/status").json()["connector"]["worker_id"] == owner
    # the metrics say who leads and what each worker was given
    def metric(w, line_start):
        lines = [l for l in w.get("/metrics").text.splitlines() if l.startswith(line_start)]
        return float(lines[0].split()[-1])
    assert sum(metric(w, "tributary_cluster_leader ") for w in workers) == 1
    assert metric(leader, "tributary_cluster_leader ") == 1
    assert sum(metric(w, 'tributary_cluster_assigned{kind="task"}') for w in workers) == 2
    assert all(metric(w, "tributary_cluster_rebalances_total ") >= 1 for w in workers)
    # a new config reaches every worker; the task that goes stops where it ran
    reply = follower.put("/connectors/one/config", json={**good, "tasks.max": "1"})
    assert reply.status_code == 200, reply.text
    wait_for(lambda: agreed_placement(workers, ["one"], {"one": 1}), timeout=60,
             what="every worker showing the one task left RUNNING")
    assert workers[1].put("/connectors/one/pause").status_code == 202
    wait_for(lambda: all(w.get("/connectors/one/status").json()["connector"]["state"]
                         == "PAUSED" for w in workers), timeout=60,
             what="every worker showing the pause")
    assert workers[0].delete("/connectors/one").status_code == 204
    wait_for(lambda: all(w.get("/connectors").json() == [] for w in workers), timeout=60,
             what="every worker forgetting the deleted connector")


def test_joining_workers_take_tasks_and_the_tasks_that_stay_keep_running(start_worker, bed,
                                                                          tmp_path):
    group = bed.unique_topic("cluster")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings) for _ in range(2)]
    data = bed.unique_topic("data")
    create_topic(bed, data, 4)
    sink = {"connector.class": "FileStreamSink", "topics": data,
            "file": str(tmp_path / "out.txt"), "tasks.max": "4"}
    reply = workers[1].post("/connectors", json={"name": SINK, "config": sink})
    assert reply.status_code == 201, reply.text
    before = wait_for(lambda: agreed_placement(workers, [SINK], {SINK: 4}),
                      timeout=90, what="four tasks RUNNING on two workers")
    assert sorted(before.values()).count(worker_id(workers[0])) == 2, before

    workers += [start_worker(settings) for _ in range(2)]
    after = wait_for(lambda: (lambda p: p if p and len(set(p.values())) == 4 else None)(
        agreed_placement(workers, [SINK], {SINK: 4})), timeout=90,
        what="one task on each of four workers")
    stayed = [unit for unit in before if after[unit] == before[unit]]
    assert len(stayed) == 2, (before, after)
    # a task that stays is started once, when it was first assigned, and never again
    for unit in stayed:
        owner = next(w for w in workers if worker_id(w) == after[unit])
        starts = owner.logs().count(f"[connector:{SINK}:{unit[1]}] starting on this worker")
        assert starts == 1, (unit, owner.logs())


@pytest.mark.parametrize("change, expected", [
    ({"config.storage.topic": None}, "config.storage.topic is required in distributed mode"),
    ({"rest.advertised.listener": "https"},
     "rest.advertised.listener names a scheme that no listener of listeners has"),
    ({"rest.advertised.host.name": "host/path"},
     "rest.advertised.host.name \"host/path\" is not a host name"),
    ({"rest.advertised.port": "0"}, "rest.advertised.port 0 is no port"),
    ({"inter.worker.signature.algorithm": "HmacSHA512"},
     "inter.worker.verification.algorithms must include inter.worker.signature.algorithm"),
    ({"inter.worker.key.size": "100"}, "inter.worker.key.size"),
])
def test_a_distributed_worker_refuses_what_it_cannot_honour(start_worker, bed, change,
                                                            expected):
    settings = {**cluster_settings(bed, bed.unique_topic("cluster")), **change}
    w = start_worker(settings, wait_healthy=False, expect_exit=1)
    wait_for(lambda: w.proc.poll() is not None, timeout=60, what="the worker to exit")
    assert w.proc.returncode == 1
    assert expected in w.logs()


def test_a_distributed_worker_takes_no_connector_file(start_worker, bed, tmp_path):
    connector = tmp_path / "c.properties"
    connector.write_text("name=c\nconnector.class=FileStreamSink\ntopics=t\n")
    w = start_worker(cluster_settings(bed, bed.unique_topic("cluster")),
                     args=(str(connector),), wait_healthy=False, expect_exit=1)
    wait_for(lambda: w.proc.poll() is not None, timeout=60, what="the worker to exit")
    assert "created through the REST API, not named on the command line" in w.logs()


def leader_of(workers):
    """The worker whose log says it leads now (the group's latest view)."""
    def leads(w):
        views = [line for line in w.logs().splitlines() if "tributary.cluster group " in line]
        return bool(views) and views[-1].endswith("(this worker)")
    leading = [w for w in workers if leads(w)]
    return leading[0] if len(leading) == 1 else None


def test_a_write_while_the_leader_is_dead_waits_for_the_next_one(start_worker, bed,
                                                                   tmp_path):
    group = bed.unique_topic("cluster")
    workers = [start_worker(cluster_settings(bed, group)) for _ in range(2)]
    leader = wait_for(lambda: leader_of(workers), timeout=60, what="a leader")
    survivor = next(w for w in workers if w is not leader)
    leader.stop(signal.SIGKILL)
    # the survivor still names the dead leader until its session expires: the write
    # is retried until the survivor leads, and lands, without a 409 or a 5xx
    config = {"connector.class": "FileStreamSink", "topics": bed.unique_topic("t"),
              "file": str(tmp_path / "out.txt")}
    reply = requests.post(survivor.url + "/connectors", timeout=TB_FORWARD_WAIT_S + 10,
                          json={"name": "late", "config": config})
    assert reply.status_code == 201, reply.text
    assert leader_of([survivor]) is survivor
    wait_for(lambda: placement(survivor, ["late"], {"late": 1}), timeout=60,
             what="the connector running on the survivor")


def test_a_rolling_restart_under_traffic_loses_nothing(start_worker, bed, tmp_path):
    group = bed.unique_topic("cluster")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings, directory=tmp_path / f"w{i}") for i in range(3)]
    data = bed.unique_topic("data")
    create_topic(bed, data, SINK_TASKS)
    out = tmp_path / "out.txt"
    sink = {"connector.class": "FileStreamSink", "topics": data, "file": str(out),
            "tasks.max": str(SINK_TASKS)}
    reply = workers[2].post("/connectors", json={"name": SINK, "config": sink})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: agreed_placement(workers, [SINK], {SINK: SINK_TASKS}),
             timeout=90, what="the sink RUNNING everywhere")
    traffic = Traffic(bed.bootstrap, data)
    bound = DELAY_MS / 1000 + FAILOVER_BOUND_S
    for i in range(3):
        assert workers[i].stop() == 0  # leaves the group at once
        workers[i] = start_worker(settings, directory=tmp_path / f"w{i}")
        live = {worker_id(w) for w in workers}
        wait_for(lambda: (lambda p: p if p and set(p.values()) <= live else None)(
            agreed_placement(workers, [SINK], {SINK: SINK_TASKS})),
            timeout=bound, what=f"every task RUNNING on a live worker after restart {i}")
    sent = traffic.stop()
    expected = {f"r{i:06d}" for i in range(sent)}
    wait_for(lambda: expected <= set(output_lines(out)), timeout=120,
             what=f"all {sent} records at the sink")


def partition_starts(worker, connector):
    """[(task, partition)] for each assignment of a partition to one of the connector's
    tasks on the worker (its "starts at" log lines), in order."""
    import re
    pattern = re.compile(rf"\[connector:{re.escape(connector)}:(\d+)\] partition (\S+) starts at")
    return [(int(m.group(1)), m.group(2)) for m in pattern.finditer(worker.logs())]


def held_partitions(worker, connector):
    """{partition: (task, starts)}: the partitions the worker's tasks of connector hold now
    (their gauges), each with the task that started it last and how often that task did."""
    import re
    page = worker.get("/metrics").text
    held = set(re.findall(rf'^tributary_sink_partition_position{{connector="{connector}",'
                          rf'topic="([^"]+)",partition="(\d+)"}}', page, re.M))
    starts = partition_starts(worker, connector)
    holders = {}
    for topic, partition in held:
        name = f"{topic}-{partition}"
        task = next(t for t, p in reversed(starts) if p == name)
        holders[name] = (task, starts.count((task, name)))
    return holders


def test_cooperative_sink_groups_keep_partitions_through_joins_and_leaves(start_worker, bed,
                                                                          tmp_path):
    """Sink groups assign cooperative-sticky (librdkafka 2.0.2's aborted the process when a
    member that never got an assignment closed; 2.3.0 fixed it). Two sinks on one topic of
    four partitions: "coop" with six tasks, so two members have none (the old abort), and
    "coopfull" with four, one partition each, so the tasks that move hold some. A worker
    joins, tasks spread to it, and it leaves again: no worker aborts, no record is lost, and
    a task that stays on its worker the whole time keeps the partition it held through every
    rebalance: never taken from it and given again (as an eager group does at each one, and
    as librdkafka does when an offset commit meets the group rejoining)."""
    group = bed.unique_topic("coop")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings, directory=tmp_path / f"w{i}") for i in range(2)]
    data = bed.unique_topic("data")
    partitions = 4
    tasks = {"coop": 6, "coopfull": 4}
    create_topic(bed, data, partitions)
    for name, tasks_max in tasks.items():
        sink = {"connector.class": "FileStreamSink", "topics": data,
                "file": str(tmp_path / f"{name}.txt"), "tasks.max": str(tasks_max)}
        reply = workers[0].post("/connectors", json={"name": name, "config": sink})
        assert reply.status_code == 201, reply.text
    traffic = Traffic(bed.bootstrap, data)
    names = list(tasks)
    before = wait_for(lambda: agreed_placement(workers, names, tasks), timeout=90,
                      what="the sinks RUNNING on two workers")

    def settled(name):
        """[held_partitions] of each worker once each partition is held by a task of its
        own (the tasks that started first took them all, the others' joins spread them)."""
        held = [held_partitions(w, name) for w in workers]
        holders = [task for h in held for task, _ in h.values()]
        ok = sum(map(len, held)) == partitions and len(set(holders)) == len(holders)
        return held if ok else None

    held = {name: wait_for(lambda: settled(name), timeout=60,
                           what=f"every partition held by a task of {name} of its own")
            for name in names}

    joiner = start_worker(settings, directory=tmp_path / "w2")
    everyone = [*workers, joiner]
    bound = DELAY_MS / 1000 + FAILOVER_BOUND_S
    spread = wait_for(lambda: (lambda p: p if p and worker_id(joiner) in p.values() else None)(
        agreed_placement(everyone, names, tasks)), timeout=bound + 60,
        what="some of the sinks' tasks on the joining worker")
    assert joiner.stop() == 0  # leaves the group at once
    after = wait_for(lambda: (lambda p: p if p and worker_id(joiner) not in p.values()
                              else None)(agreed_placement(workers, names, tasks)),
                     timeout=bound + 60, what="the sinks' tasks back on the two workers")
    sent = traffic.stop()
    expected = {f"r{i:06d}" for i in range(sent)}
    for name in names:
        wait_for(lambda: expected <= set(output_lines(tmp_path / f"{name}.txt")),
                 timeout=120, what=f"all {sent} records at the sink {name}")

    assert all(w.proc.poll() is None for w in workers), "a worker exited"
    for worker in workers:
        assert "lost with the consumer's group membership" not in worker.logs()
    kept = moved = 0
    for name in names:
        for worker, then in zip(workers, held[name]):
            now = held_partitions(worker, name)
            for partition, (task, count) in then.items():
                if before[(name, task)] == spread[(name, task)] == after[(name, task)]:
                    assert worker.logs().count(f"[connector:{name}:{task}] starting ") == 1
                    kept += now.get(partition) == (task, count)
                else:
                    moved += 1
    # a task that stays may give up the partition it held for one a moving task let go
    # (the assignor balances the current owners), but not every one of them does
    assert kept > 0, f"no partition stayed with its task: {before}, {spread}"
    assert moved > 0, f"no task with a partition moved: {before}, {spread}"


def test_an_exactly_once_source_survives_the_kill_of_its_worker(start_worker, bed):
    """KIP-618 in a cluster: each task's transactional producer (id
    <group.id>-<connector>-<task>) writes its records and their source
    offsets, as records of the offsets topic, in one transaction; the task
    restarted on another worker fences its predecessor and resumes from
    the offsets topic: nothing missing, nothing twice, read_committed."""
    import json

    from kafka_io import offsets_records
    group = bed.unique_topic("eoscluster")
    settings = {**cluster_settings(bed, group), "exactly.once.source.support": "enabled",
                "task.restart.backoff.initial.ms": "0"}
    workers = [start_worker(settings) for _ in range(3)]
    topic = bed.unique_topic("eosdata")
    per_task, tasks_max = 2500, 2
    source = {"connector.class": "datagen", "topic": topic, "tasks.max": str(tasks_max),
              "count": str(per_task * tasks_max), "records.per.second": "250",
              "exactly.once.support": "required",
              "exactly.once.transaction.max.records": "50",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
    reply = workers[0].post("/connectors", json={"name": "eosd", "config": source})
    assert reply.status_code == 201, reply.text
    names, tasks = ["eosd"], {"eosd": tasks_max}
    before = wait_for(lambda: agreed_placement(workers, names, tasks), timeout=90,
                      what="the exactly-once tasks RUNNING")

    def sequence(task):
        offsets = offsets_records(bed, f"{group}-offsets", "eosd")
        return offsets.get(json.dumps({"task": task}), ({},))[0].get("sequence", 0)
    wait_for(lambda: sequence(0) > 500, timeout=60, what="task 0's committed offsets")
    victim = next(w for w in workers if worker_id(w) == before[("eosd", 0)])
    survivors = [w for w in workers if w is not victim]
    victim.stop(signal.SIGKILL)
    bound = SESSION_MS / 1000 + DELAY_MS / 1000 + FAILOVER_BOUND_S
    wait_for(lambda: (lambda p: p if p and worker_id(victim) not in p.values()
                      else None)(agreed_placement(survivors, names, tasks)),
             timeout=bound, what="the killed worker's task running elsewhere")

    wait_for(lambda: all(sequence(t) == per_task for t in range(tasks_max)), timeout=90,
             what="every task's last offset in the offsets topic")
    values = read_raw(bed.bootstrap, topic,
                      lambda vs: len(vs) >= per_task * tasks_max, timeout=90,
                      isolation="read_committed", decode=json.loads)
    for task in range(tasks_max):
        got = sorted(v["seq"] for v in values if v["task"] == task)
        assert got == list(range(per_task)), f"task {task}: each record exactly once"
    assert len(values) == per_task * tasks_max
    listed = bed.tool("transactions", "--bootstrap-server", bed.bootstrap, "list")
    assert listed.returncode == 0, listed.stderr
    assert f"{group}-eosd-0" in listed.stdout and f"{group}-eosd-1" in listed.stdout
