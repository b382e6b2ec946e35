"""REST between the workers of a cluster (server/tb_forward.h): forwarded requests are signed
with the session key the leader keeps in the config topic (Connect's "session-key" record), and
a request that only says it was forwarded is refused; the URL a worker advertises
(rest.advertised.*) is the one the others forward to; a connector's restart with its tasks
restarts each task on the worker that runs it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import threading
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from kafka_io import create_topic, produce
from test_distributed import agreed_placement, cluster_settings, leader_of, worker_id
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

# the file's sink connector: its consumer group, connect-<name>, is its own while other
# test files run beside it on the bed
SINK = f"sink-{uuid.uuid4().hex[:8]}"

REFUSED = "Refused a request forwarded by another worker"


def config_records(bed, topic):
    """[(key, value as JSON or None)] of the config topic, from its start to its end now."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                         "group.id": f"reader-{uuid.uuid4().hex}",
                         "enable.auto.commit": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, low)])
        records, position = [], low
        while position < high:
            message = consumer.poll(1.0)
            if message is None or message.error():
                continue
            value = message.value()
            records.append((message.key().decode(), json.loads(value) if value else None))
            position = message.offset() + 1
        return records
    finally:
        consumer.close()


def session_key(bed, topic):
    """The newest session key's bytes, or None."""
    keys = [value for key, value in config_records(bed, topic) if key == "session-key"]
    return base64.b64decode(keys[-1]["key"]) if keys else None


def signature(key, method, path, body, query=None):
    """What server/tb_request_signature.h signs, computed independently."""
    text = (f"{method}\n{path}\n"
            f"{json.dumps(query or {}, separators=(',', ':'), sort_keys=True)}\n").encode()
    return base64.b64encode(hmac.new(key, text + body, hashlib.sha256).digest()).decode()


def sink_config(bed, tmp_path, name):
    return {"connector.class": "FileStreamSink", "topics": bed.unique_topic("t"),
            "file": str(tmp_path / f"{name}.txt")}


def test_a_forwarded_request_needs_the_session_keys_signature(start_worker, bed, tmp_path):
    group = bed.unique_topic("cluster")
    settings = cluster_settings(bed, group)
    workers = [start_worker(settings) for _ in range(2)]
    leader = wait_for(lambda: leader_of(workers), timeout=60, what="a leader")
    follower = next(w for w in workers if w is not leader)
    topic = settings["config.storage.topic"]
    key = wait_for(lambda: session_key(bed, topic), timeout=60,
                   what="the leader's session key in the config topic")
    assert len(key) == 32  # HmacSHA256's digest size, inter.worker.key.size unset
    wait_for(lambda: "session key of HmacSHA256 (256 bits)" in follower.logs(), timeout=30,
             what="the follower reading the session key")

    body = json.dumps({"name": "intruder",
                       "config": sink_config(bed, tmp_path, "intruder")}).encode()
    valid = signature(key, "POST", "/connectors", body)
    forged = {
        "the forwarded header alone": {"X-Tributary-Forwarded": "yes"},
        "a signature of another key": {
            "X-Tributary-Forwarded": "yes",
            "X-Connect-Authorization": signature(b"x" * 32, "POST", "/connectors", body),
            "X-Connect-Request-Signature-Algorithm": "HmacSHA256"},
        "the right signature at another path": {
            "X-Connect-Authorization": valid,
            "X-Connect-Request-Signature-Algorithm": "HmacSHA256"},
        "an algorithm this worker does not verify with": {
            "X-Tributary-Forwarded": "yes", "X-Connect-Authorization": valid,
            "X-Connect-Request-Signature-Algorithm": "HmacSHA512"},
    }
    for what, headers in forged.items():
        path = "/connectors/intruder/restart" if "another path" in what else "/connectors"
        reply = follower.post(path, data=body,
                              headers={"Content-Type": "application/json", **headers})
        assert reply.status_code == 403, (what, reply.text)
        assert reply.json()["message"].startswith(REFUSED), (what, reply.text)
        assert "no session key yet" not in reply.text, (what, reply.text)
    assert follower.logs().count("which says another worker forwarded it") == len(forged)

    # a request signed with the session key is answered where it arrives
    signed = json.dumps({"name": "signed", "config": sink_config(bed, tmp_path, "signed")})
    reply = follower.post("/connectors", data=signed.encode(), headers={
        "Content-Type": "application/json", "X-Tributary-Forwarded": "yes",
        "X-Connect-Authorization": signature(key, "POST", "/connectors", signed.encode()),
        "X-Connect-Request-Signature-Algorithm": "HmacSHA256"})
    assert reply.status_code == 201, reply.text
    assert reply.headers["Location"] == follower.url + "/connectors/signed"
    # and a write without the header goes to the leader, signed by the follower
    reply = follower.post("/connectors",
                          json={"name": "forwarded",
                                "config": sink_config(bed, tmp_path, "forwarded")})
    assert reply.status_code == 201, reply.text
    assert reply.headers["Location"] == leader.url + "/connectors/forwarded"

    keys = {key for key, _ in config_records(bed, topic)}
    assert {"connector-signed", "connector-forwarded"} <= keys, keys
    assert not any("intruder" in k for k in keys), keys
    # neither the key nor a signature is ever logged
    encoded = base64.b64encode(key).decode()
    for w in workers:
        assert encoded not in w.logs() and valid not in w.logs()


def test_the_leader_rotates_the_session_key_and_forwarding_goes_on(start_worker, bed,
                                                                    tmp_path):
    group = bed.unique_topic("cluster")
    settings = {**cluster_settings(bed, group), "inter.worker.key.ttl.ms": "1500",
                "inter.worker.key.size": "512"}
    workers = [start_worker(settings) for _ in range(2)]
    topic = settings["config.storage.topic"]
    keys = wait_for(lambda: (lambda k: k if len(k) >= 3 else None)(
        [v for key, v in config_records(bed, topic) if key == "session-key"]), timeout=60,
        what="three session keys, one per inter.worker.key.ttl.ms")
    assert len({k["key"] for k in keys}) == len(keys)  # each one new
    assert all(len(base64.b64decode(k["key"])) == 64 for k in keys)
    assert [k["creation-timestamp"] for k in keys] == sorted(
        k["creation-timestamp"] for k in keys)
    leader = wait_for(lambda: leader_of(workers), timeout=60, what="a leader")
    follower = next(w for w in workers if w is not leader)
    for i in range(3):  # forwarded across rotations
        reply = follower.post("/connectors", json={
            "name": f"c{i}", "config": sink_config(bed, tmp_path, f"c{i}")})
        assert reply.status_code == 201, reply.text


class Relay:
    """A TCP relay from a port of its own to target_port, counting the connections it
    carried: stands for what a worker advertises (a load balancer, a NAT)."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.server.accept()
            self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            sink.close()


def test_the_others_forward_to_the_advertised_url(start_worker, bed, tmp_path):
    group = bed.unique_topic("cluster")
    settings = cluster_settings(bed, group)
    port = free_port()
    relay = Relay(port)
    # the first worker to join leads; it listens on port and advertises the relay's
    first = start_worker({**settings, "listeners": f"http://127.0.0.1:{port}",
                          "rest.advertised.host.name": "127.0.0.1",
                          "rest.advertised.port": str(relay.port),
                          "rest.advertised.listener": "http"}, wait_healthy=False)
    first.url = f"http://127.0.0.1:{port}"
    first.wait_healthy()
    wait_for(lambda: leader_of([first]), timeout=60, what="the first worker leading")
    second = start_worker(settings)
    assert relay.connections == 0
    reply = second.post("/connectors", json={"name": "one",
                                             "config": sink_config(bed, tmp_path, "one")})
    assert reply.status_code == 201, reply.text
    assert relay.connections >= 1  # the write went through the advertised port
    status = wait_for(lambda: (lambda s: s if s["tasks"] else None)(
        second.get("/connectors/one/status").json()), timeout=60, what="its task")
    shown = {status["connector"]["worker_id"], status["tasks"][0]["worker_id"]}
    assert shown <= {f"127.0.0.1:{relay.port}", worker_id(second)}, shown


def test_a_connector_restart_with_its_tasks_restarts_each_on_its_worker(start_worker, bed,
                                                                        tmp_path):
    group = bed.unique_topic("cluster")
    # a failed task stays FAILED until restarted by hand
    settings = {**cluster_settings(bed, group), "task.restart.backoff.initial.ms": "0"}
    workers = [start_worker(settings) for _ in range(3)]
    by_id = {worker_id(w): w for w in workers}
    data = bed.unique_topic("data")
    create_topic(bed, data, 3)
    config = {"connector.class": "FileStreamSink", "topics": data,
              "file": str(tmp_path / "out.txt"), "tasks.max": "3",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
    reply = workers[0].post("/connectors", json={"name": SINK, "config": config})
    assert reply.status_code == 201, reply.text
    placed = wait_for(lambda: (lambda p: p if p and len(set(p.values())) == 3 else None)(
        agreed_placement(workers, [SINK], {SINK: 3})), timeout=90,
        what="one task RUNNING on each worker")
    owner = by_id[workers[0].get(f"/connectors/{SINK}/status").json()["connector"]["worker_id"]]

    def restarts(task):
        """How often task was restarted, as the worker running it counts."""
        w = by_id[placed[(SINK, task)]]
        return w.get(f"/connectors/{SINK}/tasks/{task}/status").json().get("restarts", 0)

    def failures(task):
        """How often task failed, as the log of the worker running it says."""
        w = by_id[placed[(SINK, task)]]
        return w.logs().count(f"[connector:{SINK}:{task}] task failed")

    def connector_restarts():
        return owner.logs().count(f"[connector:{SINK}] restarting")

    # Connect's answer: 202 with every instance to restart shown RESTARTING where it runs;
    # each worker restarts the task it runs, and the owner the connector
    for round, w in enumerate(workers, start=1):
        reply = w.post(f"/connectors/{SINK}/restart", params={"includeTasks": "true"})
        assert reply.status_code == 202, reply.text
        body = reply.json()
        assert body["name"] == SINK and body["type"] == "sink", body
        assert body["connector"] == {"state": "RESTARTING", "worker_id": worker_id(owner),
                                     "version": "3.9.0"}
        assert [(t["id"], t["state"], t["worker_id"], t["version"])
                for t in body["tasks"]] == [
            (n, "RESTARTING", placed[(SINK, n)], "3.9.0") for n in range(3)], body
        wait_for(lambda: [restarts(n) for n in range(3)] == [round] * 3
                 and connector_restarts() == round, timeout=30,
                 what=f"restart {round} of each task on its own worker")
    assert agreed_placement(workers, [SINK], {SINK: 3}) or wait_for(
        lambda: agreed_placement(workers, [SINK], {SINK: 3}) == placed, timeout=30,
        what="every task RUNNING again where it ran")

    # onlyFailed with nothing failed restarts nothing and shows nothing RESTARTING
    reply = workers[1].post(f"/connectors/{SINK}/restart",
                            params={"includeTasks": "true", "onlyFailed": "true"})
    assert reply.status_code == 202, reply.text
    assert {t["state"] for t in reply.json()["tasks"]} == {"RUNNING"}, reply.text
    assert reply.json()["connector"]["state"] == "RUNNING", reply.text
    # a plain connector restart after it: 204, and once the owner carried it out, it has
    # carried out the onlyFailed request before it too (one config topic, read in order)
    assert workers[2].post(f"/connectors/{SINK}/restart").status_code == 204
    wait_for(lambda: connector_restarts() == 4, timeout=30, what="the connector's restart")
    assert [restarts(n) for n in range(3)] == [3, 3, 3]

    # A record that is not JSON fails the task that reads its partition. A failed task's
    # consumer leaves the group, as Connect's does, so the partition moves on and the next
    # task to hold it fails too: the failed tasks are a set that grows for a while.
    produce(bed.bootstrap, data, [(0, None, b"not json")])

    def failed():
        states = [[t["state"] for t in w.get(f"/connectors/{SINK}/status").json()["tasks"]]
                  for w in workers]
        return states[0] if "FAILED" in states[0] and all(
            s == states[0] for s in states) else None
    states = wait_for(failed, timeout=60, what="a task FAILED, as every worker shows")
    broken = [n for n in range(3) if states[n] == "FAILED"]
    reply = workers[0].post(f"/connectors/{SINK}/restart",
                            params={"includeTasks": "true", "onlyFailed": "true"})
    assert reply.status_code == 202, reply.text
    assert reply.json()["connector"]["state"] == "RUNNING", reply.text
    shown = [t["state"] for t in reply.json()["tasks"]]
    assert all(shown[n] == "RESTARTING" for n in broken), (broken, reply.text)
    assert set(shown) <= {"RESTARTING", "RUNNING", "FAILED"}, reply.text
    # the failed tasks restart, each on its own worker (and fail again on the record)
    wait_for(lambda: all(restarts(n) == 4 for n in broken), timeout=30,
             what="the failed tasks' restarts")
    assert workers[1].post(f"/connectors/{SINK}/restart").status_code == 204
    wait_for(lambda: connector_restarts() == 5, timeout=30, what="the connector's restart")
    # a task the onlyFailed request restarted had failed: one failed after the look above
    # (the record's partition moved to it) rightly restarts too; one never failed does not
    counts = [restarts(n) for n in range(3)]
    assert all(counts[n] == 4 for n in broken), (broken, counts)
    assert all(counts[n] == 3 or (counts[n] == 4 and failures(n) > 0)
               for n in range(3)), (counts, [failures(n) for n in range(3)])
