"""The README's run command, then its tour, as written: a newcomer's first five
minutes must work. The README names port 8083 and /tmp/tributary-orders.txt; the
test runs the same commands on a free port and a file of its own, so that two
runs on one machine never meet."""
import os
import pathlib
import re
import signal
import subprocess

import pytest
import requests

import secret_scan
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
README_URL = "http://127.0.0.1:8083"
README_ORDERS = "/tmp/tributary-orders.txt"


def tour_commands(url, orders):
    """The tour block of the README, pointed at url and orders."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- tour:start -->\n```sh\n(.*?)```\n<!-- tour:end -->", readme,
                      re.S)
    assert block, "the README has no tour block"
    tour = block.group(1)
    assert README_URL in tour and README_ORDERS in tour, "the tour's port or file moved"
    return tour.replace(README_URL, url).replace(README_ORDERS, str(orders))


def test_readme_run_command_and_tour(tmp_path):
    assert "    ./scripts/run\n" in (ROOT / "README.md").read_text()
    url = f"http://127.0.0.1:{free_port()}"
    orders = tmp_path / "orders.txt"
    log = open(tmp_path / "run.log", "w")
    # the store in a directory of its own: file connectors may not write
    # where the store lives, and the tour's sink writes into tmp_path
    (tmp_path / "data").mkdir()
    store = tmp_path / "data" / "t.db"
    env = {**os.environ, "TRIBUTARY_LISTENERS": url,
           "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME": str(store)}
    run = subprocess.Popen(["./scripts/run"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                           env=env, start_new_session=True)
    try:
        def serving():
            assert run.poll() is None, (f"./scripts/run exited with {run.returncode}:\n"
                                        + (tmp_path / "run.log").read_text())
            return requests.get(url + "/health", timeout=2).status_code == 200
        wait_for(serving, timeout=600, interval=0.5, what="./scripts/run to serve /health")
        assert "DEV MODE" in (tmp_path / "run.log").read_text()
        tour = subprocess.run(["bash", "-c", tour_commands(url, orders)],
                              capture_output=True, text=True, timeout=120)
        out = tour.stdout
        secret_scan.check_text("the tour's output", out + tour.stderr)
        assert tour.returncode == 0, tour.stderr
        assert '"name":"orders"' in out and '"name":"orders-file"' in out
        assert '"state":"PAUSED"' in out
        assert "have been reset successfully" in out
        assert "tributary_task_records_read_total" in out
        wait_for(lambda: len(orders.read_text().splitlines()) > 5,
                 timeout=60, what="orders in the file")
    finally:
        secret_scan.keep_files("the tour's worker", tmp_path / "run.log", store)
        os.killpg(run.pid, signal.SIGTERM)
        assert run.wait(timeout=60) == 0, (tmp_path / "run.log").read_text()
