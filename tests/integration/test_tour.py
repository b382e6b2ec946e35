"""The README's run command, then its tour, exactly as written: a newcomer's
first five minutes must work."""
import os
import pathlib
import re
import signal
import subprocess

import pytest
import requests

from worker import wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
ORDERS = pathlib.Path("/tmp/tributary-orders.txt")


def tour_commands():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- tour:start -->\n```sh\n(.*?)```\n<!-- tour:end -->", readme,
                      re.S)
    assert block, "the README has no tour block"
    return block.group(1)


def healthy():
    try:
        return requests.get("http://127.0.0.1:8083/health", timeout=2).status_code == 200
    except requests.ConnectionError:
        return False


def test_readme_run_command_and_tour(tmp_path):
    assert "    ./scripts/run\n" in (ROOT / "README.md").read_text()
    ORDERS.unlink(missing_ok=True)
    log = open(tmp_path / "run.log", "w")
    env = {**os.environ, "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME": str(tmp_path / "t.db")}
    run = subprocess.Popen(["./scripts/run"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                           env=env, start_new_session=True)
    try:
        wait_for(healthy, timeout=600, interval=0.5, what="./scripts/run to serve /health")
        assert "DEV MODE" in (tmp_path / "run.log").read_text()
        tour = subprocess.run(["bash", "-c", tour_commands()], capture_output=True,
                              text=True, timeout=120)
        out = tour.stdout
        assert tour.returncode == 0, tour.stderr
        assert '"name":"orders"' in out and '"name":"orders-file"' in out
        assert '"state":"PAUSED"' in out
        assert "have been reset successfully" in out
        assert "tributary_task_records_read_total" in out
        wait_for(lambda: ORDERS.exists() and len(ORDERS.read_text().splitlines()) > 5,
                 timeout=60, what="orders in the file")
    finally:
        os.killpg(run.pid, signal.SIGTERM)
        assert run.wait(timeout=60) == 0, (tmp_path / "run.log").read_text()
