"""At-least-once sources of equal producer properties share one producer
(connector.producer.sharing.enabled, on by default); one with other properties
(a producer.override) gets another. Each task's delivery reports reach that
task only: its records, its offsets, its refused records (dead letter queue,
metrics). A task that stops leaves the others producing."""
import re

import pytest

from test_delivery_failures import (REASON, SETTINGS, big_line_file,
                                    create_limited_topic, file_source, metric,
                                    read_messages, stored_position, values)
from worker import wait_for

pytestmark = pytest.mark.integration

SHARED = "tributary_source_shared_producer_tasks"


def shared_tasks(w):
    """The tasks on each shared producer: {client.id: tasks}."""
    found = {}
    for line in w.get("/metrics").text.splitlines():
        m = re.match(SHARED + r'\{producer="([^"]+)"\} (\S+)$', line)
        if m:
            found[m.group(1)] = float(m.group(2))
    return found


def lines_file(tmp_path, name, count, start=0):
    lines = [f"{name}-line-{i}" for i in range(start, start + count)]
    path = tmp_path / f"{name}.txt"
    with path.open("a") as f:
        f.write("".join(line + "\n" for line in lines))
    return path, lines


def wait_complete(w, bed, name, topic, path, lines):
    """Every line of path in topic, and the task's offset at the file's end."""
    wait_for(lambda: stored_position(w, name) == path.stat().st_size, timeout=60,
             what=f"{name}'s offset at the end of its file")
    got = values(read_messages(bed, topic, lambda ms: set(lines) <= set(values(ms))))
    assert set(lines) <= set(got)


def test_equal_settings_share_one_producer_other_settings_get_another(
        start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    ta, tb, tc = (bed.unique_topic(p) for p in ("sha", "shb", "shc"))
    pa, la = lines_file(tmp_path, "a", 50)
    pb, lb = lines_file(tmp_path, "b", 50)
    pc, lc = lines_file(tmp_path, "c", 50)
    file_source(w, "sha", ta, pa)
    file_source(w, "shb", tb, pb)
    file_source(w, "shc", tc, pc, **{"producer.override.linger.ms": "7"})

    wait_for(lambda: sorted(shared_tasks(w).values()) == [1.0, 2.0], timeout=60,
             what="two tasks on one producer, the overridden one on another")
    for name, topic, path, lines in (("sha", ta, pa, la), ("shb", tb, pb, lb),
                                     ("shc", tc, pc, lc)):
        wait_complete(w, bed, name, topic, path, lines)

    # one task stops: the producer goes on for the other
    assert w.delete("/connectors/sha").status_code == 204
    wait_for(lambda: sorted(shared_tasks(w).values()) == [1.0, 1.0], timeout=60,
             what="one task left on the shared producer")
    pb, more = lines_file(tmp_path, "b", 50, start=50)
    wait_complete(w, bed, "shb", tb, pb, lb + more)
    assert "shared producer" in w.logs()


def test_sharing_off_gives_each_task_its_own(start_worker, bed, tmp_path):
    w = start_worker({**SETTINGS, "connector.producer.sharing.enabled": "false"})
    topic = bed.unique_topic("unshared")
    path, lines = lines_file(tmp_path, "u", 20)
    file_source(w, "unshared", topic, path)
    wait_complete(w, bed, "unshared", topic, path, lines)
    assert shared_tasks(w) == {}


def test_a_refused_record_reaches_its_own_task_only(start_worker, bed, tmp_path):
    w = start_worker(SETTINGS)
    bad, good, dlq = (bed.unique_topic(p) for p in ("shbad", "shgood", "shdlq"))
    create_limited_topic(bed, bad)
    bad_path, bad_lines = big_line_file(tmp_path)
    good_path, good_lines = lines_file(tmp_path, "good", 200)
    file_source(w, "good", good, good_path, **{"errors.tolerance": "all"})
    file_source(w, "bad", bad, bad_path, **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1"})

    wait_for(lambda: list(shared_tasks(w).values()) == [2.0], timeout=60,
             what="both tasks on one producer")
    wait_complete(w, bed, "good", good, good_path, good_lines)
    wait_for(lambda: stored_position(w, "bad") == bad_path.stat().st_size, timeout=60,
             what="the offset past the refused record")
    sent = metric(w, "tributary_task_records_dlq_total", "bad")
    assert sent >= 1
    dead = values(read_messages(bed, dlq, lambda ms: len(ms) >= sent))
    assert bad_lines[19] in dead
    assert metric(w, "tributary_source_delivery_errors_total", "bad") >= 1
    for family in ("tributary_task_records_dlq_total", "tributary_task_records_dropped_total",
                   "tributary_source_delivery_errors_total"):
        assert metric(w, family, "good") == 0, family
    refusals = [line for line in w.logs().splitlines() if "Kafka refused record" in line]
    assert refusals and all(bad in line and REASON in line for line in refusals)


def test_a_final_error_of_the_shared_producer_fails_every_task_on_it(
        start_worker, bed, tmp_path):
    """Failed authentication is the producer's, not a record's: both tasks on it fail."""
    wrong = {**bed.client_config("SCRAM-SHA-256"), "sasl.password": "not-the-password"}
    w = start_worker({**SETTINGS, "connector.client.config.override.allowlist":
                      ",".join(wrong)})
    overrides = {f"producer.override.{k}": v for k, v in wrong.items()}
    topic = bed.unique_topic("shauth")
    for name in ("autha", "authb"):
        path, _ = lines_file(tmp_path, name, 5)
        file_source(w, name, topic, path, **overrides)

    def failed(name):
        tasks = w.get(f"/connectors/{name}/status").json().get("tasks", [])
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]["trace"]
    for name in ("autha", "authb"):
        trace = wait_for(lambda: failed(name), timeout=60, what=f"{name}-0 FAILED")
        assert "connector-producer-shared-" in trace and "uthentication" in trace, trace
