import collections
import os

import pytest
import requests

import secret_scan
from worker import Worker

pytest_plugins = ["bedfixture"]

# The bed's shared servers a test may stop, freeze (SIGSTOP) or reconfigure: such a test
# carries @pytest.mark.disrupts(server, ...) (tests/pytest.ini).
DISRUPTABLE = ("kafka", "postgres", "opensearch", "kafka2")


def pytest_collection_modifyitems(config, items):
    """A disrupts marker must name the servers it disrupts, each one of DISRUPTABLE: a
    misspelt name would still run apart, but say nothing true about the test.

    In a parallel run (scripts/test: --dist loadfile --no-loadscope-reorder) the workers
    take whole files in this order: files marked long first, then by their number of
    tests, most first, so that no file of minutes starts when the others are done."""
    for item in items:
        for mark in item.iter_markers("disrupts"):
            unknown = [s for s in mark.args if s not in DISRUPTABLE]
            if not mark.args or unknown or mark.kwargs:
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.disrupts({', '.join(map(repr, mark.args))}) must name one "
                    f"or more of {', '.join(map(repr, DISRUPTABLE))}"
                    + (f", not {', '.join(map(repr, unknown))}" if unknown else ""))
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        tests = collections.Counter(item.path for item in items)
        items.sort(key=lambda item: (item.get_closest_marker("long") is None,
                                     -tests[item.path]))  # stable: a file stays in order


def _scan_response(response, *args, **kwargs):
    """requests' response hook: the body of every response any test receives."""
    if not kwargs.get("stream"):
        secret_scan.check_text(f"the response to {response.request.method} "
                               f"{response.url}", response.text)


_session_init = requests.Session.__init__


def _session_with_scan(self, *args, **kwargs):
    _session_init(self, *args, **kwargs)
    self.hooks["response"].append(_scan_response)


# requests.get() and the like make a Session per call: every one gets the hook
requests.Session.__init__ = _session_with_scan


@pytest.fixture(scope="session", autouse=True)
def secret_scan_at_the_end():
    """Fails the run when a secret the tests made appears in plain text in a
    response, a worker's log or a worker's store (secret_scan.py). The bed's
    passwords are known from the start, also to tests that do not use the bed."""
    from bedfixture import load_bed, remember_bed_secrets  # a plugin: imported by then
    bed_dir = os.environ.get("TRIBUTARY_BED_DIR")
    if bed_dir:
        try:
            remember_bed_secrets(load_bed(bed_dir))
        except (OSError, ValueError, KeyError):
            pass  # the bed fixture reports it to the tests that need the bed
    yield
    secret_scan.SUITE.scan_files()
    found = secret_scan.SUITE.findings()
    assert not found, "secrets in plain text:\n" + "\n".join(found)


@pytest.fixture
def start_worker(tmp_path, bed):
    """Starts tributary workers against the test bed; each is stopped at the
    end of the test, which fails if a worker did not exit cleanly (exit 0,
    no sanitizer report). A setting of None leaves that key out of the
    worker file ({"bootstrap.servers": None}: a worker that names no
    broker)."""
    workers = []

    def start(settings=None, env=None, args=(), wait_healthy=True, directory=None,
              expect_exit=0):
        folder = directory or tmp_path / f"worker{len(workers)}"
        folder.mkdir(exist_ok=True)
        merged = {key: value
                  for key, value in {"bootstrap.servers": bed.bootstrap,
                                     **(settings or {})}.items()
                  if value is not None}
        worker = Worker(str(folder), merged, env=env, args=args)
        worker.expect_exit = expect_exit
        workers.append(worker)
        store = worker.settings["offset.storage.file.filename"]
        secret_scan.keep_files("the worker files", worker.log_path, store, f"{store}-wal")
        return worker.start(wait_healthy=wait_healthy)

    yield start
    for worker in workers:
        code = worker.stop()
        logs = worker.logs()
        assert "Sanitizer" not in logs, logs
        assert code in (worker.expect_exit, None, -9), f"exit code {code}:\n{logs}"


@pytest.fixture
def worker(start_worker):
    return start_worker()
