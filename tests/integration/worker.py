"""Starts and stops a real tributary process for a test.

A Worker runs the binary named by $TRIBUTARY_BIN with a worker.properties
written from the given settings, on a free loopback port, with its store and
logs under a temporary folder. Waits are bounded polls, never bare sleeps.
"""
import os
import signal
import socket
import subprocess
import time

import requests


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# What a condition may raise while the state it waits for is not there yet: a
# response without the field, a file half written, a metric not yet served, a
# worker not yet listening. Anything else (an AssertionError above all) is a
# real failure and ends the wait at once.
NOT_YET = (LookupError, ValueError, TypeError, OSError, requests.RequestException)


def wait_for(condition, timeout=30.0, interval=0.05, what="condition"):
    """Polls condition() until it returns a truthy value; returns it. A
    condition that raises one of NOT_YET counts as false; on timeout the last
    such error is named."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = condition()
        except NOT_YET as e:
            value, last_error = None, e
        if value:
            return value
        if time.monotonic() > deadline:
            detail = f" (last: {last_error!r})" if last_error is not None else ""
            raise AssertionError(f"timed out after {timeout}s waiting for {what}{detail}")
        time.sleep(interval)


def output_lines(path):
    """The complete lines of a file a connector writes: none while it does not
    exist, and not the last one while it is still being written."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return text[:text.rfind("\n") + 1].splitlines()


class Worker:
    def __init__(self, directory, settings, env=None, args=()):
        self.dir = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.settings = {
            "listeners": self.url,
            "offset.storage.file.filename": os.path.join(directory, "store.db"),
            **settings,
        }
        self.env = env or {}
        self.args = list(args)
        self.log_path = os.path.join(directory, "tributary.log")
        self.proc = None

    def write_properties(self):
        path = os.path.join(self.dir, "worker.properties")
        with open(path, "w") as f:
            for key, value in self.settings.items():
                f.write(f"{key}={value}\n")
        return path

    def start(self, wait_healthy=True):
        binary = os.environ.get("TRIBUTARY_BIN")
        assert binary, "TRIBUTARY_BIN is not set: run the suite through scripts/test"
        env = {**os.environ, **self.env}
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [binary, self.write_properties(), *self.args],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.dir)
        if wait_healthy:
            self.wait_healthy()
        return self

    def wait_healthy(self, timeout=60):
        def healthy():
            assert self.proc.poll() is None, (
                f"tributary exited with {self.proc.returncode}:\n{self.logs()}")
            try:
                return requests.get(self.url + "/health", timeout=2).status_code == 200
            except requests.ConnectionError:
                return False
        wait_for(healthy, timeout=timeout, what="/health to answer 200")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops the process; returns its exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"tributary did not stop within {timeout}s")
        self.log.close()
        return code

    def logs(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def get(self, path, **kw):
        return requests.get(self.url + path, timeout=10, **kw)

    def post(self, path, **kw):
        return requests.post(self.url + path, timeout=10, **kw)

    def put(self, path, **kw):
        return requests.put(self.url + path, timeout=10, **kw)

    def patch(self, path, **kw):
        return requests.patch(self.url + path, timeout=10, **kw)

    def delete(self, path, **kw):
        return requests.delete(self.url + path, timeout=10, **kw)
