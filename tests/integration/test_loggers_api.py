"""/admin/loggers: levels readable and changeable at run time, with an effect
on what the worker logs."""
import pytest

from worker import wait_for

pytestmark = pytest.mark.integration


def test_list_shows_root(worker):
    loggers = worker.get("/admin/loggers").json()
    assert loggers["root"] == {"level": "INFO", "last_modified": None}
    assert list(loggers) == sorted(loggers)


def test_list_shows_every_known_logger_as_connect_4_does(worker):
    """Connect 4.0 (KAFKA-9366) lists every logger it knows, not only those
    set explicitly; each with its effective level."""
    loggers = worker.get("/admin/loggers").json()
    known = {"tributary.api", "tributary.cluster", "tributary.config",
             "tributary.herder", "tributary.http", "tributary.rest", "tributary.store",
             "tributary.task", "tributary.worker"}
    assert known <= set(loggers)
    assert all(loggers[name] == {"level": "INFO", "last_modified": None}
               for name in known)
    assert worker.put("/admin/loggers/tributary", json={"level": "WARN"}).status_code == 200
    assert worker.put("/admin/loggers/tributary.http",
                      json={"level": "DEBUG"}).status_code == 200
    loggers = worker.get("/admin/loggers").json()
    assert loggers["root"]["level"] == "INFO"
    assert loggers["tributary.http"]["level"] == "DEBUG"
    assert isinstance(loggers["tributary.http"]["last_modified"], int)
    assert loggers["tributary.cluster"]["level"] == "WARN"
    assert list(loggers) == sorted(loggers)


def test_put_changes_levels_and_logging(worker):
    assert "tributary.http GET /connectors" not in worker.logs()
    reply = worker.put("/admin/loggers/tributary.http", json={"level": "debug"})
    assert reply.status_code == 200
    assert reply.json() == ["tributary.http"]
    worker.get("/connectors")
    wait_for(lambda: "GET /connectors -> 200" in worker.logs(),
             what="a DEBUG line from tributary.http")
    one = worker.get("/admin/loggers/tributary.http").json()
    assert one["level"] == "DEBUG"
    assert isinstance(one["last_modified"], int) and one["last_modified"] > 0
    inherited = worker.get("/admin/loggers/tributary.store").json()
    assert inherited == {"level": "INFO", "last_modified": None}

    reply = worker.put("/admin/loggers/tributary", json={"level": "WARN"})
    affected = reply.json()
    assert "tributary" in affected and "tributary.http" in affected
    assert affected == sorted(affected)
    assert worker.get("/admin/loggers/tributary.http").json()["level"] == "WARN"


def test_cluster_scope_answers_204(worker):
    reply = worker.put("/admin/loggers/tributary.store?scope=cluster",
                       json={"level": "ERROR"})
    assert reply.status_code == 204
    assert worker.get("/admin/loggers/tributary.store").json()["level"] == "ERROR"


def test_errors(worker):
    assert worker.get("/admin/loggers/org.nothing").json() == {
        "error_code": 404, "message": "Logger org.nothing not found."}
    reply = worker.put("/admin/loggers/root", json={"lvl": "INFO"})
    assert reply.status_code == 400
    assert reply.json()["message"] == (
        "Desired 'level' parameter was not specified in request.")
    reply = worker.put("/admin/loggers/root", json={"level": "LOUD"})
    assert reply.status_code == 404
    assert reply.json()["message"] == "invalid log level 'LOUD'."
