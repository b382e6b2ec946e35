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

# minutes for two tests (each builds tributary): a parallel run starts it first
pytestmark = [pytest.mark.integration, pytest.mark.long]

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
    run_tour(["./scripts/run"], tmp_path)


def test_a_build_of_the_file_plugins_alone_links_no_libpq_and_runs_the_tour(tmp_path):
    """TB_WITH_<NAME> leaves a plugin out with the libraries only it needs
    (CMakeLists.txt, tb_plugin): with the file connectors alone (and datagen,
    which needs nothing), the binary links no libpq, lists only those plugins
    and runs the tour."""
    build = ROOT / "build" / "file-only"
    switches = ["-DTB_WITH_HTTP=OFF", "-DTB_WITH_JDBC=OFF", "-DTB_WITH_POSTGRES=OFF"]
    for command in (["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DTB_TESTS=OFF", *switches],
                    ["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2),
                     "--target", "tributary"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    binary = build / "tributary"
    # the link line, since the linker drops a library it was given but no
    # symbol needs (--as-needed): the build must not ask for libpq at all
    link_line = (build / "CMakeFiles" / "tributary.dir" / "link.txt").read_text()
    assert "librdkafka" in link_line, link_line
    assert "libpq" not in link_line and "-lpq" not in link_line, link_line
    libraries = subprocess.run(["ldd", str(binary)], capture_output=True, text=True,
                               check=True).stdout
    assert "libpq" not in libraries, libraries
    assert "libpq" in subprocess.run(["ldd", os.environ["TRIBUTARY_BIN"]],
                                     capture_output=True, text=True).stdout
    listed = subprocess.run([str(binary), "--config-reference"], capture_output=True,
                            text=True, timeout=60).stdout
    assert "FileStreamSink" in listed and "JdbcSinkConnector" not in listed
    run_tour([str(binary), "--dev"], tmp_path)


def run_tour(command, tmp_path):
    """Starts command (a dev mode worker) on a free port and runs the README's
    tour against it."""
    url = f"http://127.0.0.1:{free_port()}"
    orders = tmp_path / "orders.txt"
    log = open(tmp_path / "run.log", "w")
    # the store in a directory of its own: file connectors may not write
    # where the store lives, and the tour's sink writes into tmp_path
    (tmp_path / "data").mkdir()
    store = tmp_path / "data" / "t.db"
    env = {**os.environ, "TRIBUTARY_LISTENERS": url,
           "TRIBUTARY_OFFSET_STORAGE_FILE_FILENAME": str(store)}
    run = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                           env=env, start_new_session=True)
    try:
        def serving():
            assert run.poll() is None, (f"{command[0]} exited with {run.returncode}:\n"
                                        + (tmp_path / "run.log").read_text())
            return requests.get(url + "/health", timeout=2).status_code == 200
        wait_for(serving, timeout=600, interval=0.5, what=f"{command[0]} to serve /health")
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
