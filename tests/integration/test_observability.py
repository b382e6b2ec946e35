"""Observability: the /metrics page checked by promtool and scraped by a real
Prometheus server, HTTP request metrics by route template, lag equal to what
Kafka's kafka-consumer-groups reports on transactional topics, and JSON logs
whose levels change at run time."""
import json
import os
import re
import subprocess
from urllib.parse import quote

import pytest

from kafka_io import create_topic, group_lag, produce
from prometheus_server import prometheus, query
from worker import wait_for

pytestmark = pytest.mark.integration

PROMTOOL = "/usr/bin/promtool"
STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "offset.flush.interval.ms": "200"}
# The route templates of the REST API, as the http metrics label them.
ROUTES = {
    "/", "/health", "/metrics", "/connectors", "/connectors/{connector}",
    "/connectors/{connector}/config", "/connectors/{connector}/status",
    "/connectors/{connector}/tasks", "/connectors/{connector}/tasks-config",
    "/connectors/{connector}/tasks/{task}/status",
    "/connectors/{connector}/tasks/{task}/restart", "/connectors/{connector}/restart",
    "/connectors/{connector}/pause", "/connectors/{connector}/resume",
    "/connectors/{connector}/stop", "/connectors/{connector}/topics",
    "/connectors/{connector}/topics/reset", "/connectors/{connector}/offsets",
    "/connector-plugins", "/connector-plugins/{plugin}/config",
    "/connector-plugins/{plugin}/config/validate", "/admin/loggers",
    "/admin/loggers/{logger}", "unmatched",
}

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def unescape(value):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def parse(page):
    """[(name, {label: value}, value)] of every sample line of page."""
    found = []
    for line in page.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, labels, value = match.groups()
        found.append((name, {k: unescape(v) for k, v in LABEL.findall(labels or "")},
                      float(value)))
    return found


def series(page, name, **labels):
    """Values of the samples of name whose labels include labels."""
    return [value for n, have, value in parse(page)
            if n == name and all(have.get(k) == v for k, v in labels.items())]


def promtool_check(page):
    assert os.access(PROMTOOL, os.X_OK), (
        f"{PROMTOOL} not found: scripts/install-deps test (Debian package prometheus)")
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=page,
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"{check.stdout}{check.stderr}\n--- page:\n{page}"


def file_sink(topic, out, **extra):
    return {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            **extra}


def datagen(topic, count):
    return {"connector.class": "datagen", "topic": topic, "count": str(count),
            "records.per.second": "0"}


def wait_until(condition, what, timeout, interval):
    """wait_for(condition), whose timeout error also shows what condition
    last saw (condition stores it in condition.last)."""
    condition.last = None
    try:
        return wait_for(condition, timeout=timeout, interval=interval, what=what)
    except AssertionError as error:
        raise AssertionError(f"{error}; last seen: {condition.last!r}") from None


def create(w, name, config):
    reply = w.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def test_page_with_sink_and_source_passes_promtool_and_labels_route_templates(
        start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic = bed.unique_topic("obs")
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic, [(i % 2, None, f"r{i}".encode()) for i in range(20)])
    out = tmp_path / "out.txt"
    sink = bed.unique_topic("sink")  # so is its group, connect-<name>
    create(w, sink, file_sink(topic, out))
    create(w, "gen", datagen(bed.unique_topic("gen"), 200))
    weird = 'wëird name/with?x=1&"quote"'
    create(w, weird, datagen(bed.unique_topic("weird"), 10))
    wait_for(lambda: out.exists() and len(out.read_text().splitlines()) == 20,
             what="the sink to write every record")
    quoted = quote(weird, safe="")
    for path in (f"/connectors/{quoted}/status", f"/connectors/{quoted}/config",
                 f"/connectors/{quoted}/tasks/0/status", f"/connectors/{sink}/status",
                 f"/connectors/{quoted}/no/such/thing"):
        w.get(path)
    assert w.get(f"/connectors/{quoted}/status").status_code == 200
    assert w.get("/connectors/nope/status").status_code == 404
    assert w.delete("/health").status_code == 405
    assert w.get("/connector-plugins/FileStreamSink/config").status_code == 200

    def caught_up():
        page = w.get("/metrics").text
        written = series(page, "tributary_task_records_written_total",
                         connector="gen", task="0")
        return written == [200] and page
    page = wait_for(caught_up, timeout=60, what="datagen's 200 records acknowledged")
    promtool_check(page)

    routes = {labels["route"] for name, labels, _ in parse(page)
              if name.startswith("tributary_http_request")}
    assert routes <= ROUTES, routes - ROUTES
    assert not any("wëird" in route or "nope" in route or sink in route
                   for route in routes)
    assert "unmatched" in routes

    def count(route, method, status):
        return series(page, "tributary_http_requests_total", route=route,
                      method=method, status=status)
    assert count("/connectors/{connector}/status", "GET", "200") == [3]
    assert count("/connectors/{connector}/status", "GET", "404") == [1]
    assert sum(series(page, "tributary_http_requests_total",
                      route="/connectors/{connector}/tasks/{task}/status")) == 1
    assert count("/connectors", "POST", "201") == [3]
    assert count("/health", "DELETE", "405") == [1]
    assert count("/connector-plugins/{plugin}/config", "GET", "200") == [1]
    assert count("unmatched", "GET", "404") == [1]
    timed = series(page, "tributary_http_request_seconds_count",
                   route="/connectors/{connector}/status", method="GET")
    assert timed == [4]
    # the store's write transactions are timed, by operation
    assert series(page, "tributary_store_write_seconds_count",
                  operation="connector_put") == [3]

    def offsets_stored():
        return series(w.get("/metrics").text, "tributary_store_write_seconds_count",
                      operation="offsets_put")[0] >= 1
    wait_for(offsets_stored, what="an offsets_put transaction")

    # the worker's own client reports the bed's broker as up (every 5 s)
    def broker_up():
        return series(w.get("/metrics").text, "tributary_kafka_broker_up")
    assert wait_for(broker_up, timeout=30, what="tributary_kafka_broker_up") == [1]


def test_prometheus_scrapes_lag_and_delivered(start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic = bed.unique_topic("scraped")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{i}".encode()) for i in range(30)])
    out = tmp_path / "out.txt"
    sink = bed.unique_topic("sink")
    create(w, sink, file_sink(topic, out))
    create(w, "gen", datagen(bed.unique_topic("gen"), 200))
    with prometheus(tmp_path, f"127.0.0.1:{w.port}") as base:
        lag_query = (f'tributary_sink_partition_lag{{connector="{sink}",topic="{topic}",'
                     f'partition="0"}}')

        def lag_zero():
            found = lag_zero.last = query(base, lag_query)
            return found is not None and list(found.values()) == [0] and found
        wait_until(lag_zero, "Prometheus to see lag 0", timeout=90, interval=0.5)

        written_query = 'tributary_task_records_written_total{connector="gen",task="0"}'

        def delivered():
            found = delivered.last = query(base, written_query)
            return found is not None and list(found.values()) == [200] and found
        found = wait_until(delivered, "Prometheus to see the 200 delivered records",
                           timeout=90, interval=0.5)
        labels = dict(next(iter(found)))
        assert labels["job"] == "tributary"
        assert labels["instance"] == f"127.0.0.1:{w.port}"
        # and the scrape itself stays healthy
        assert list(query(base, 'up{job="tributary"}').values()) == [1]
    assert len(out.read_text().splitlines()) == 30


def consumer_group(bed, group):
    """{(topic, partition): (current offset or None, lag or None)} as
    kafka-consumer-groups --describe reports them."""
    result = bed.consumer_groups("--describe", "--group", group)
    rows = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0] == group:
            current, lag = fields[3], fields[5]
            rows[(fields[1], int(fields[2]))] = (
                None if current == "-" else int(current), None if lag == "-" else int(lag))
    return rows


def test_lag_on_a_transactional_topic_equals_kafka_consumer_groups(
        start_worker, bed, tmp_path):
    w = start_worker(STRINGS)
    topic = bed.unique_topic("txnlag")
    create_topic(bed, topic, 3)
    # partition 0: one committed transaction; partition 1: an aborted one;
    # partition 2: nothing at all
    produce(bed.bootstrap, topic, [(0, None, b"committed")], transactional_id=f"{topic}-a")
    produce(bed.bootstrap, topic, [(1, None, b"aborted-1"), (1, None, b"aborted-2")],
            transactional_id=f"{topic}-b", abort=True)
    out = tmp_path / "out.txt"
    name = topic  # its group, connect-<topic>, is this test's own
    create(w, name, file_sink(topic, out,
                               **{"consumer.override.isolation.level": "read_committed"}))
    wait_for(lambda: out.exists() and out.read_text() == "committed\n",
             what="the committed record")

    def agree():
        kafka = {p: row for (t, p), row in consumer_group(bed, f"connect-{name}").items()
                 if t == topic}
        page = w.get("/metrics").text
        ours = {}
        for p in range(3):
            lag = series(page, "tributary_sink_partition_lag", connector=name,
                         topic=topic, partition=str(p))
            committed = series(page, "tributary_sink_partition_committed_offset",
                               connector=name, topic=topic, partition=str(p))
            ours[p] = (committed[0] if committed else None, lag[0] if lag else None)
        agree.last = {"kafka-consumer-groups": kafka, "tributary": ours}
        if len(kafka) == 3 and all(row[1] == 0 for row in kafka.values()) and \
                ours == kafka:
            return ours
        return None
    agreed = wait_until(agree, "tributary's committed offsets and lag to equal Kafka's",
                        timeout=90, interval=1)
    # past the commit marker, past the aborted records and their marker, and 0
    assert agreed == {0: (2, 0), 1: (3, 0), 2: (0, 0)}
    assert group_lag(bed, f"connect-{name}") == {(topic, 0): 0, (topic, 1): 0,
                                                (topic, 2): 0}


def json_lines(w):
    lines = []
    for line in w.logs().splitlines():
        if line.strip():
            entry = json.loads(line)  # every line is one JSON object
            assert isinstance(entry, dict), line
            lines.append(entry)
    return lines


def test_json_logs_and_runtime_levels(start_worker, bed, tmp_path):
    w = start_worker({**STRINGS, "log.format": "json"})
    topic = bed.unique_topic("logs")
    create_topic(bed, topic, 1)
    create(w, topic, file_sink(topic, tmp_path / "out.txt"))

    def task_lines():  # a sink task logs its group and where each partition starts
        return [e for e in json_lines(w) if e.get("connector") == topic and "task" in e]
    found = wait_for(task_lines, what="a JSON line of the sink task")
    assert all(e["task"] == 0 for e in found)
    for entry in json_lines(w):
        assert {"time", "level", "logger", "message"} <= set(entry), entry
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])
        assert entry["level"] in {"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"}
        assert entry["logger"].startswith("tributary.")
    assert any(e.get("connector") == topic and "task" not in e for e in json_lines(w)), \
        "connector lines name the connector without a task"

    w.get("/connectors")
    assert not any(e["level"] == "DEBUG" and e["logger"] == "tributary.http"
                   for e in json_lines(w)), "no DEBUG line at the default level"
    reply = w.put("/admin/loggers/tributary.http", json={"level": "DEBUG"})
    assert reply.status_code == 200, reply.text
    assert "tributary.http" in reply.json()
    w.get("/connectors")

    def debug_lines():
        return [e for e in json_lines(w)
                if e["level"] == "DEBUG" and e["logger"] == "tributary.http"]
    lines = wait_for(debug_lines, timeout=10, what="a DEBUG line of tributary.http")
    assert any("GET /connectors -> 200" in e["message"] for e in lines), lines


def test_connect_names_show_tributary_values(start_worker, bed, tmp_path):
    """Kafka Connect's JMX names (as a JMX exporter spells them) carry the same
    values as tributary's own series, and the worker counts its connectors
    and tasks."""
    w = start_worker(STRINGS)
    topic = bed.unique_topic("cm")
    create_topic(bed, topic, 2)
    produce(bed.bootstrap, topic, [(i % 2, None, f"r{i}".encode()) for i in range(30)])
    out = tmp_path / "out.txt"
    sink = bed.unique_topic("cmsink")
    create(w, sink, file_sink(topic, out))
    create(w, "cmgen", datagen(bed.unique_topic("cmgen"), 40))

    def moved():
        page = w.get("/metrics").text
        moved.last = [series(page, name, connector=connector, task="0")
                      for name in ("tributary_task_records_read_total",
                                   "tributary_task_records_written_total")
                      for connector in (sink, "cmgen")]
        return moved.last == [[30], [40], [30], [40]] and page
    page = wait_until(moved, "30 records sunk, 40 sourced", timeout=60, interval=0.2)
    promtool_check(page)

    def same(connect, tributary, connector):
        mine = series(page, tributary, connector=connector, task="0")
        assert series(page, connect, connector=connector, task="0") == mine, connect
        return mine
    prefix = "kafka_connect_sink_task_metrics_"
    assert same(prefix + "sink_record_read_total", "tributary_task_records_read_total",
                sink) == [30]
    assert same(prefix + "sink_record_send_total",
                "tributary_task_records_written_total", sink) == [30]
    prefix = "kafka_connect_source_task_metrics_"
    assert same(prefix + "source_record_poll_total",
                "tributary_task_records_read_total", "cmgen") == [40]
    assert same(prefix + "source_record_write_total",
                "tributary_task_records_written_total", "cmgen") == [40]
    assert same(prefix + "source_record_active_count",
                "tributary_source_in_flight_records", "cmgen") == [0]
    for name in (sink, "cmgen"):
        assert same("kafka_connect_task_error_metrics_total_records_skipped",
                    "tributary_task_records_dropped_total", name) == [0]
        assert same("kafka_connect_task_error_metrics_deadletterqueue_produce_requests",
                    "tributary_task_records_dlq_total", name) == [0]
    assert series(page, "kafka_connect_connector_task_metrics_status", connector=sink,
                  task="0", status="running") == [1]
    assert series(page, "kafka_connect_connector_task_metrics_status", connector=sink,
                  task="0", status="failed") == [0]
    assert series(page, "kafka_connect_connector_metrics_status", connector=sink,
                  status="running") == [1]
    assert series(page, "kafka_connect_connect_worker_metrics_connector_count") == [2]
    assert series(page, "kafka_connect_connect_worker_metrics_task_count") == [2]

    assert w.delete("/connectors/cmgen").status_code == 204

    def counted_again():
        page = w.get("/metrics").text
        return (series(page, "kafka_connect_connect_worker_metrics_connector_count"),
                series(page, "kafka_connect_connect_worker_metrics_task_count"),
                series(page, "kafka_connect_source_task_metrics_source_record_poll_total",
                       connector="cmgen"))
    wait_for(lambda: counted_again() == ([1], [1], []), timeout=30,
             what="the deleted source no longer counted nor served")


def test_task_tags_and_chain_groups_of_connect_4_1(start_worker, bed, tmp_path):
    """KIP-891: each task's connector-task-metrics strings (connector, task and
    converter classes and versions) and its chain's connector-transform-metrics
    and connector-predicate-metrics, as Strimzi serves strings (1, labelled with
    the value); gone with the task."""
    w = start_worker(STRINGS)
    topic = bed.unique_topic("tags")
    create_topic(bed, topic, 1)
    sink = bed.unique_topic("tagsink")
    smt = "org.apache.kafka.connect.transforms."
    create(w, sink, file_sink(topic, tmp_path / "out.txt", **{
        "transforms": "route", "transforms.route.type": smt + "RegexRouter",
        "transforms.route.regex": "x", "transforms.route.replacement": "y",
        "transforms.route.predicate": "tomb",
        "predicates": "tomb", "predicates.tomb.type": smt + "predicates.RecordIsTombstone",
        "header.converter": "StringConverter"}))
    plugin = next(p for p in w.get("/connector-plugins").json()
                  if p["class"].endswith("FileStreamSinkConnector")
                  or p["class"].endswith("FileStreamSink"))
    connect_version = w.get("/").json()["version"]
    task = "kafka_connect_connector_task_"

    def tagged():
        page = w.get("/metrics").text
        tagged.last = series(page, task + "connector_class", connector=sink, task="0",
                             connector_class=plugin["class"])
        return tagged.last == [1] and page
    page = wait_until(tagged, "the sink task's tags", timeout=60, interval=0.2)
    promtool_check(page)
    expected = {"connector_version": plugin["version"], "connector_type": "sink",
                "task_class": plugin["class"], "task_version": plugin["version"],
                "key_converter_class": "org.apache.kafka.connect.storage.StringConverter",
                "key_converter_version": connect_version,
                "value_converter_class": "org.apache.kafka.connect.storage.StringConverter",
                "value_converter_version": connect_version,
                "header_converter_class": "org.apache.kafka.connect.storage.StringConverter",
                "header_converter_version": connect_version}
    for attribute, value in expected.items():
        assert series(page, task + attribute, connector=sink, task="0",
                      **{attribute: value}) == [1], attribute
    assert series(page, "kafka_connect_connector_transform_transform_class",
                  connector=sink, task="0", transform="route",
                  transform_class=smt + "RegexRouter") == [1]
    assert series(page, "kafka_connect_connector_transform_transform_version",
                  connector=sink, task="0", transform="route",
                  transform_version=connect_version) == [1]
    assert series(page, "kafka_connect_connector_predicate_predicate_class",
                  connector=sink, task="0", predicate="tomb",
                  predicate_class=smt + "predicates.RecordIsTombstone") == [1]
    assert series(page, "kafka_connect_connector_predicate_predicate_version",
                  connector=sink, task="0", predicate="tomb",
                  predicate_version=connect_version) == [1]


def test_a_task_without_its_own_header_converter_is_tagged_with_the_workers(
        start_worker, bed, tmp_path):
    bytes_class = "org.apache.kafka.connect.converters.ByteArrayConverter"
    w = start_worker({**STRINGS, "header.converter": bytes_class})
    topic = bed.unique_topic("wtags")
    create_topic(bed, topic, 1)
    sink = bed.unique_topic("wtagsink")
    create(w, sink, file_sink(topic, tmp_path / "out.txt"))
    wait_until(lambda: series(w.get("/metrics").text,
                              "kafka_connect_connector_task_header_converter_class",
                              connector=sink, task="0",
                              header_converter_class=bytes_class) == [1],
               "the worker's header converter as the task's tag", timeout=60, interval=0.2)

    assert w.delete(f"/connectors/{sink}").status_code == 204
    wait_for(lambda: f'connector="{sink}"' not in w.get("/metrics").text, timeout=30,
             what="the deleted sink's tags gone")


def test_connect_windows_errors_and_startups(start_worker, bed, tmp_path):
    """The rest of Connect's task, error and worker names: rates, averages,
    maxima and shares over the last minute, the error totals of a sink that
    tolerates bad records, its partitions, and the startups (a task that
    cannot create its dead letter queue fails to start)."""
    w = start_worker({**STRINGS, "task.restart.backoff.initial.ms": "0"})
    topic = bed.unique_topic("cw")
    create_topic(bed, topic, 2)
    records = [(i % 2, None, b"not json" if i % 6 == 0 else b'{"n":%d}' % i)
               for i in range(30)]
    bad = sum(1 for _, _, value in records if value == b"not json")
    produce(bed.bootstrap, topic, records)
    out = tmp_path / "out.txt"
    sink = bed.unique_topic("cwsink")
    create(w, sink, file_sink(
        topic, out, **{"value.converter": "org.apache.kafka.connect.json.JsonConverter",
                       "value.converter.schemas.enable": "false",
                       "errors.tolerance": "all", "errors.log.enable": "true",
                       "errors.deadletterqueue.topic.name": bed.unique_topic("cwdlq"),
                       "errors.deadletterqueue.topic.replication.factor": "1"}))
    create(w, "cwgen", datagen(bed.unique_topic("cwgen"), 40))
    create(w, "cwbroken", file_sink(
        topic, tmp_path / "never.txt", **{
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": bed.unique_topic("cwnodlq"),
            "errors.deadletterqueue.topic.replication.factor": "3"}))
    wait_for(lambda: w.get("/connectors/cwbroken/status").json()["tasks"][0]["state"]
             == "FAILED", timeout=60, what="the task without its DLQ to fail")

    def moved():
        page = w.get("/metrics").text
        moved.last = [series(page, "tributary_task_records_written_total",
                             connector=c, task="0") for c in (sink, "cwgen")]
        moved.last.append(series(page, "tributary_task_records_dlq_total",
                                  connector=sink, task="0"))
        return moved.last == [[30 - bad], [40], [bad]] and page
    wait_until(moved, "the good records sunk, the bad in the DLQ, 40 sourced",
               timeout=60, interval=0.2)

    def committed():
        """Each task committed, the sink every record it read (its active
        records back to 0)."""
        page = w.get("/metrics").text
        return all(series(page, "tributary_task_offset_commits_total", connector=c,
                          task="0", result="success") >= [1]
                   for c in (sink, "cwgen")) and series(
            page, "tributary_sink_active_records", connector=sink, task="0") == [0] and page
    page = wait_for(committed, timeout=30, what="every record's offset committed")
    promtool_check(page)

    def one(name, connector=None, **labels):
        if connector is not None:
            labels.update(connector=connector, task="0")
        found = series(page, name, **labels)
        assert len(found) == 1, (name, labels, found)
        return found[0]

    task = "kafka_connect_connector_task_metrics_"
    errors = "kafka_connect_task_error_metrics_"
    for c, batch_bound in ((sink, 30 - bad), ("cwgen", 512)):
        assert 0 < one(task + "offset_commit_avg_time_seconds", c) <= one(
            task + "offset_commit_max_time_seconds", c)
        assert one(task + "offset_commit_success_percentage", c) == 1
        assert one(task + "offset_commit_failure_percentage", c) == 0
        assert 1 <= one(task + "batch_size_avg", c) <= one(
            task + "batch_size_max", c) <= batch_bound
        assert one(errors + "total_retries", c) == 0
        assert one(errors + "deadletterqueue_produce_failures", c) == 0
    assert one(errors + "total_record_errors", sink) == bad
    assert one(errors + "total_record_failures", sink) == bad
    assert one(errors + "total_records_skipped", sink) == bad
    assert one(errors + "total_errors_logged", sink) == bad
    assert one(errors + "deadletterqueue_produce_requests", sink) == bad
    assert one(errors + "last_error_timestamp", sink) > 1.7e12  # ms since the epoch
    assert one(errors + "total_record_errors", "cwgen") == 0
    assert one(errors + "last_error_timestamp", "cwgen") == 0

    prefix = "kafka_connect_sink_task_metrics_"
    assert one(prefix + "partition_count", sink) == 2
    assert one(prefix + "offset_commit_completion_total", sink) == one(
        "tributary_task_offset_commits_total", sink, result="success")
    assert one(prefix + "offset_commit_completion_rate", sink) > 0
    assert one(prefix + "offset_commit_skip_total", sink) == 0
    assert one(prefix + "offset_commit_skip_rate", sink) == 0
    assert 0 < one(prefix + "sink_record_read_rate", sink) <= 30
    assert 0 < one(prefix + "sink_record_send_rate", sink) <= 30 - bad
    assert 0 < one(prefix + "put_batch_avg_time_seconds", sink) <= one(
        prefix + "put_batch_max_time_seconds", sink)
    # read, then committed within the minute: from 1 to the 30 read, back to 0
    assert one(prefix + "sink_record_active_count", sink) == 0
    assert 0 < one(prefix + "sink_record_active_count_avg", sink) <= one(
        prefix + "sink_record_active_count_max", sink) <= 30
    assert one(prefix + "sink_record_active_count_max", sink) == one(
        "kafka_connect_sink_task_sink_record_active_count_max", sink)
    prefix = "kafka_connect_source_task_metrics_"
    assert 0 < one(prefix + "source_record_poll_rate", "cwgen") <= 40
    assert 0 < one(prefix + "source_record_write_rate", "cwgen") <= 40
    assert 0 < one(prefix + "poll_batch_avg_time_seconds", "cwgen") <= one(
        prefix + "poll_batch_max_time_seconds", "cwgen")
    assert 0 <= one(prefix + "source_record_active_count_avg", "cwgen") <= one(
        prefix + "source_record_active_count_max", "cwgen") <= 40

    worker = "kafka_connect_connect_worker_metrics_"
    for kind, failed in (("connector", 0), ("task", 1)):
        assert one(f"{worker}{kind}_startup_attempts_total") == 3
        assert one(f"{worker}{kind}_startup_success_total") == 3 - failed
        assert one(f"{worker}{kind}_startup_failure_total") == failed
        assert one(f"{worker}{kind}_startup_success_percentage") == (3 - failed) / 3
        assert one(f"{worker}{kind}_startup_failure_percentage") == failed / 3

    # a pause and a resume start nothing
    for action, state in (("pause", "PAUSED"), ("resume", "RUNNING")):
        assert w.put(f"/connectors/{sink}/{action}").status_code == 202
        wait_for(lambda: w.get(f"/connectors/{sink}/status").json()["tasks"][0]["state"]
                 == state, timeout=30, what=f"the sink's task {state}")
    page = w.get("/metrics").text
    for kind in ("connector", "task"):
        assert one(f"{worker}{kind}_startup_attempts_total") == 3
