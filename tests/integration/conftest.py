import pytest

from worker import Worker

pytest_plugins = ["bedfixture"]


@pytest.fixture
def start_worker(tmp_path, bed):
    """Starts tributary workers against the test bed; each is stopped at the
    end of the test, which fails if a worker did not exit cleanly (exit 0,
    no sanitizer report)."""
    workers = []

    def start(settings=None, env=None, args=(), wait_healthy=True, directory=None,
              expect_exit=0):
        folder = directory or tmp_path / f"worker{len(workers)}"
        folder.mkdir(exist_ok=True)
        merged = {"bootstrap.servers": bed.bootstrap, **(settings or {})}
        worker = Worker(str(folder), merged, env=env, args=args)
        worker.expect_exit = expect_exit
        workers.append(worker)
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
