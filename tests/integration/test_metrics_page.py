"""GET /metrics: the Prometheus text page, checked by Prometheus' own promtool."""
import math
import os
import re
import subprocess
import time

import pytest

from worker import wait_for

pytestmark = pytest.mark.integration

PROMTOOL = "/usr/bin/promtool"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def samples(page):
    """{"name{labels}": value} of every sample line of page."""
    found = {}
    for line in page.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            found[series] = float(value)
    return found


def test_metrics_answers_200_in_prometheus_text_format(worker):
    reply = worker.get("/metrics")
    assert reply.status_code == 200
    assert reply.headers["Content-Type"] == CONTENT_TYPE
    assert reply.text.endswith("\n")


def test_promtool_accepts_the_page(worker):
    # Missing promtool is an error, not a skip: a skipped check looks green.
    assert os.access(PROMTOOL, os.X_OK), (
        f"{PROMTOOL} not found: scripts/install-deps test (Debian package prometheus)")
    page = worker.get("/metrics").text
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=page,
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"{check.stdout}{check.stderr}\n--- page:\n{page}"


def test_families_are_sorted_and_described_once(worker):
    page = worker.get("/metrics").text
    helps = [line.split(" ")[2] for line in page.splitlines()
             if line.startswith("# HELP ")]
    types = [line.split(" ")[2] for line in page.splitlines()
             if line.startswith("# TYPE ")]
    assert helps == sorted(set(helps))
    assert types == helps


def test_build_info_names_the_version_and_commit(worker):
    commit = worker.get("/").json()["commit"]
    page = worker.get("/metrics").text
    info = [s for s in samples(page) if s.startswith("tributary_build_info{")]
    assert len(info) == 1, page
    assert re.fullmatch(r'tributary_build_info\{version="\d+\.\d+\.\d+",commit="'
                        + re.escape(commit) + r'"\}', info[0])
    assert samples(page)[info[0]] == 1


def test_app_info_has_the_client_id_of_connect_4_2(worker):
    """Connect's app-info with its client-id tag (KIP-1120): the worker's id,
    the Connect version and commit GET / shows, and the start time."""
    root = worker.get("/").json()
    values = samples(worker.get("/metrics").text)
    version = [s for s in values if s.startswith("kafka_connect_app_info_version{")]
    assert len(version) == 1, version
    match = re.fullmatch(r'kafka_connect_app_info_version\{client_id="([^"]+)",'
                         r'version="([^"]+)"\}', version[0])
    assert match and match.group(2) == root["version"], version
    client_id = match.group(1)
    assert re.fullmatch(r"[^:]+:\d+", client_id), client_id  # host:port, as Connect's
    assert values[version[0]] == 1
    assert values[f'kafka_connect_app_info_commit_id{{client_id="{client_id}",'
                  f'commit_id="{root["commit"]}"}}'] == 1
    started = values[f'kafka_connect_app_info_start_time_seconds{{client_id="{client_id}"}}']
    assert time.time() - 600 < started <= time.time() + 1


def test_process_metrics_describe_this_process(worker):
    values = samples(worker.get("/metrics").text)
    assert values["process_resident_memory_bytes"] > 0
    assert values["process_virtual_memory_bytes"] >= values["process_resident_memory_bytes"]
    assert values["process_cpu_seconds_total"] >= 0
    assert 0 < values["process_open_fds"] <= values["process_max_fds"]
    # The worker started within the last few minutes, and has been up since then.
    assert time.time() - 600 < values["process_start_time_seconds"] <= time.time() + 1
    assert 0 <= values["tributary_uptime_seconds"] < 600


def test_uptime_grows_and_start_time_holds(worker):
    first = samples(worker.get("/metrics").text)

    def later():
        now = samples(worker.get("/metrics").text)
        grew = now["tributary_uptime_seconds"] > first["tributary_uptime_seconds"]
        return now if grew else None

    second = wait_for(later, timeout=10, what="tributary_uptime_seconds to grow")
    assert second["process_start_time_seconds"] == first["process_start_time_seconds"]


# Connect's times that /metrics serves in seconds (their _seconds names), a
# source task's and the worker's: with metrics.milliseconds.names, also in ms
# under Connect's _ms names.
CONNECT_TIMES = [
    "kafka_connect_source_task_metrics_poll_batch_max_time",
    "kafka_connect_source_task_metrics_poll_batch_avg_time",
    "kafka_connect_connector_task_metrics_offset_commit_max_time",
    "kafka_connect_connector_task_metrics_offset_commit_avg_time",
    "kafka_connect_app_info_start_time",
]


def page_with_a_source(start_worker, bed, settings):
    """The /metrics page of a worker started with settings, once its datagen
    source task has polled."""
    w = start_worker(settings)
    name = bed.unique_topic("ms-gen")
    reply = w.put(f"/connectors/{name}/config",
                  json={"connector.class": "datagen", "topic": name,
                        "records.per.second": "50"})
    assert reply.status_code == 201, reply.text
    polled = f'kafka_connect_source_task_metrics_poll_batch_max_time_seconds{{connector="{name}",'

    def after_a_poll():
        page = w.get("/metrics").text
        longest = [v for key, v in samples(page).items() if key.startswith(polled)]
        return page if longest and not math.isnan(longest[0]) else None
    return wait_for(after_a_poll, timeout=60, what="the source task's first poll")


def test_connect_times_in_ms_only_with_metrics_milliseconds_names(start_worker, bed):
    off = page_with_a_source(start_worker, bed, None)
    families = [line.split(" ")[2] for line in off.splitlines() if line.startswith("# TYPE ")]
    assert [f for f in families if f.endswith("_ms")] == []
    assert all(f"{name}_seconds" in families for name in CONNECT_TIMES), families
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=off,
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"{check.stdout}{check.stderr}"

    on = samples(page_with_a_source(start_worker, bed,
                                    {"metrics.milliseconds.names": "true"}))
    for name in CONNECT_TIMES:
        # each series of the _seconds family, under the _ms name, in ms, on one page
        seconds = {key[len(name) + len("_seconds"):]: value for key, value in on.items()
                   if key.startswith(name + "_seconds")}
        ms = {key[len(name) + len("_ms"):]: value for key, value in on.items()
              if key.startswith(name + "_ms")}
        assert seconds and ms.keys() == seconds.keys(), (name, seconds, ms)
        for labels, value in seconds.items():
            assert (math.isnan(value) and math.isnan(ms[labels])) or \
                ms[labels] == value * 1000, (name, labels, value, ms[labels])
