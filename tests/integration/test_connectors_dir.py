"""Declarative connectors: connectors.dir is applied at start and on SIGHUP;
connectors are created, updated and (with connectors.dir.prune) deleted from
its files, and an invalid file is named in the log without touching the
others."""
import json
import signal

import pytest

from test_distributed import cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration


def datagen(name, topic, rate="5", **extra):
    return {"name": name, "config": {"connector.class": "datagen", "topic": topic,
                                     "records.per.second": rate, **extra}}


def write(folder, filename, doc):
    (folder / filename).write_text(json.dumps(doc))


def reload(w, summary):
    """Sends SIGHUP and waits for the apply's summary line (its count of them)."""
    # the summary's end: a line still being written is not counted
    before = w.logs().count("invalid file(s)")
    w.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: w.logs().count("invalid file(s)") > before, timeout=30,
             what="connectors.dir applied again")
    last = [line for line in w.logs().splitlines() if "invalid file(s)" in line][-1]
    assert summary in last, last


def metric_value(w, name):
    for line in w.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def running(w, name):
    status = w.get(f"/connectors/{name}/status")
    return status.status_code == 200 and [t["state"] for t in status.json()["tasks"]] == \
        ["RUNNING"]


def test_create_update_prune_and_invalid_files(start_worker, bed, tmp_path):
    folder = tmp_path / "connectors"
    folder.mkdir()
    write(folder, "a.json", datagen("a", bed.unique_topic("a")))
    (folder / "b.properties").write_text(
        f"name=b\nconnector.class=datagen\ntopic={bed.unique_topic('b')}\n")
    write(folder, "paused.json", {**datagen("paused", bed.unique_topic("p")),
                                  "initial_state": "PAUSED"})
    write(folder, "c.json", datagen("c", bed.unique_topic("c"), **{"tasks.max": "0"}))
    (folder / "junk.json").write_text('{"name": "junk", "config": {')
    (folder / "notes.txt").write_text("not a connector file")
    (folder / ".hidden.json").write_text("{")
    w = start_worker({"connectors.dir": str(folder), "connectors.dir.prune": "true"})
    assert w.get("/connectors").json() == ["a", "b", "paused"]
    logs = w.logs()
    assert f"connector file {folder}/c.json: connector c left as it is: " in logs
    assert "tasks.max" in logs
    assert f"connector file {folder}/junk.json: line 1" in logs
    assert "3 created, 0 updated, 0 unchanged, 0 deleted, 2 invalid file(s)" in logs
    assert metric_value(w, "tributary_connectors_dir_invalid_files") == 2
    assert "notes.txt" not in logs and ".hidden.json" not in logs
    assert w.get("/connectors/paused/status").json()["connector"]["state"] == "PAUSED"
    wait_for(lambda: running(w, "a"), what="a running")

    # a connector created through the REST API has no file: with the junk file
    # there, nothing is pruned (it may have been that connector's)
    reply = w.put("/connectors/rest/config",
                  json=datagen("rest", bed.unique_topic("r"))["config"])
    assert reply.status_code == 201, reply.text
    reload(w, "0 created, 0 updated, 3 unchanged, 0 deleted, 2 invalid file(s)")
    assert "nothing pruned: a file that cannot be read" in w.logs()
    assert w.get("/connectors").json() == ["a", "b", "paused", "rest"]

    # update b, fix c, remove a and the junk: a goes, the REST one stays (it
    # never came from the directory)
    (folder / "junk.json").unlink()
    (folder / "a.json").unlink()
    (folder / "b.properties").write_text(
        f"name=b\nconnector.class=datagen\ntopic={bed.unique_topic('b2')}\n"
        "records.per.second=7\n")
    write(folder, "c.json", datagen("c", bed.unique_topic("c")))
    reload(w, "1 created, 1 updated, 1 unchanged, 1 deleted, 0 invalid file(s)")
    assert w.get("/connectors").json() == ["b", "c", "paused", "rest"]
    assert w.get("/connectors/b/config").json()["records.per.second"] == "7"
    assert w.get("/connectors/b/config").json()["tributary.connectors.dir.file"] == \
        "b.properties"
    assert "tributary.connectors.dir.file" not in w.get("/connectors/rest/config").json()
    logs = w.logs()
    assert "connector a deleted: it has no file" in logs
    assert "connector rest deleted" not in logs
    assert metric_value(w, "tributary_connectors_dir_invalid_files") == 0
    wait_for(lambda: running(w, "c"), what="c running")


def test_an_unchanged_file_leaves_its_tasks_alone_and_no_prune_keeps_all(
        start_worker, bed, tmp_path):
    folder = tmp_path / "connectors"
    folder.mkdir()
    write(folder, "a.json", datagen("a", bed.unique_topic("a")))
    write(folder, "b.json", datagen("b", bed.unique_topic("b")))
    w = start_worker({"connectors.dir": str(folder)})
    wait_for(lambda: running(w, "a"), what="a running")
    (folder / "b.json").unlink()
    reload(w, "0 created, 0 updated, 1 unchanged, 0 deleted, 0 invalid file(s)")
    assert w.get("/connectors").json() == ["a", "b"], "without prune nothing is deleted"
    assert "config replaced" not in w.logs()
    assert w.get("/connectors/a/status").json()["tasks"][0]["state"] == "RUNNING"


def test_sighup_without_a_directory_keeps_the_worker_running(start_worker):
    w = start_worker()
    w.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "SIGHUP received: worker config reloaded" in w.logs(),
             what="the SIGHUP line")
    assert "connectors.dir" not in w.logs()
    assert w.get("/connectors").status_code == 200


def test_an_unreadable_directory_changes_nothing(start_worker, tmp_path):
    missing = tmp_path / "missing"
    w = start_worker({"connectors.dir": str(missing), "connectors.dir.prune": "true"})
    assert f"cannot read connectors.dir {missing}: No such file or directory" in w.logs()
    assert w.get("/connectors").json() == []


@pytest.mark.parametrize("settings, args, said", [
    ({"connectors.dir.prune": "true"}, [],
     "connectors.dir.prune=true needs connectors.dir"),
])
def test_prune_is_refused_where_it_cannot_be_right(start_worker, tmp_path, settings,
                                                   args, said):
    (tmp_path / "gen.properties").write_text("name=g\nconnector.class=datagen\n")
    w = start_worker(settings, args=[str(tmp_path / a) for a in args],
                     wait_healthy=False, expect_exit=1)
    assert w.proc.wait(timeout=30) == 1
    assert said in w.logs()


def test_three_workers_the_leader_applies(start_worker, bed, tmp_path):
    """Every worker has the directory; the leader applies it once when it leads
    and on SIGHUP, which the others log and leave to it."""
    folder = tmp_path / "connectors"
    folder.mkdir()
    write(folder, "a.json", datagen("a", bed.unique_topic("a")))
    write(folder, "b.json", datagen("b", bed.unique_topic("b")))
    settings = {**cluster_settings(bed, bed.unique_topic("dir")),
                "connectors.dir": str(folder), "connectors.dir.prune": "true"}
    workers = [start_worker(settings) for _ in range(3)]

    def listed(names):
        return all(w.get("/connectors").json() == names for w in workers)
    wait_for(lambda: listed(["a", "b"]), timeout=90, what="a and b on every worker")

    def created(name):
        return sum(w.logs().count(f"connector {name} created from") for w in workers)
    assert created("a") == 1 and created("b") == 1, [w.logs() for w in workers]

    # a connector made through the REST API is never pruned
    reply = workers[0].put("/connectors/rest/config",
                           json=datagen("rest", bed.unique_topic("r"))["config"])
    assert reply.status_code == 201, reply.text
    (folder / "a.json").unlink()
    write(folder, "b.json", datagen("b", bed.unique_topic("b"), rate="9"))
    write(folder, "c.json", datagen("c", bed.unique_topic("c")))
    write(folder, "d.json", datagen("d", bed.unique_topic("d"), **{"tasks.max": "x"}))
    for w in workers:
        w.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: listed(["b", "c", "rest"]), timeout=90,
             what="b, c and rest on every worker")
    wait_for(lambda: all(w.get("/connectors/b/config").json()["records.per.second"] ==
                         "9" for w in workers), timeout=60, what="b updated everywhere")
    # the pass logs each change after the herder made it, and its summary
    # last: the REST views can show the changes before the log has them
    wait_for(lambda: any(f"applied {folder}: 1 created, 1 updated, " in w.logs()
                         for w in workers), timeout=60, what="the SIGHUP pass's summary")
    logs = [w.logs() for w in workers]
    assert sum(log.count("connector a deleted: it has no file") for log in logs) == 1
    assert sum(log.count("connector b updated from") for log in logs) == 1
    assert sum(log.count(f"connector file {folder}/d.json: connector d left as it is")
               for log in logs) == 1
    assert sum("SIGHUP received: connectors.dir is applied by the leader" in log
               for log in logs) == 2, logs
