"""The suite-wide secrets scan: no secret a test made may appear in plain text in
anything tributary wrote or answered.

Tests and fixtures register every secret they make (`remember`): the bed's SCRAM
passwords, REST credentials, key passwords. Every response body a test receives
through requests is checked as it arrives against the secrets known then (a secret
is registered when it is made, before any request can carry it; conftest.py installs
the hook); every worker's log and store are listed (`keep_files`) and read at the
end of the session by conftest.py's `secret_scan_at_the_end`, which fails the run on
any finding.

Not scanned: the files the tests themselves write (worker.properties, secret files)
and the owner-only `<store>.secrets` file, where a standalone tributary keeps literal
secrets by design (secrets.literal.allowed; test_literal_secrets.py checks that nothing
else holds them, nor a distributed worker's config topic).
"""
import secrets
import threading
from pathlib import Path


class Scan:
    def __init__(self):
        self._lock = threading.Lock()
        self._secrets = set()
        self._files = []  # (what, path) to read at the end
        self._findings = []  # "where: which secret" texts

    def remember(self, secret):
        """Registers a secret that must never appear in plain text."""
        if secret:
            with self._lock:
                self._secrets.add(secret)

    def check_text(self, where, text):
        """Records a finding for each known secret in text."""
        with self._lock:
            known = list(self._secrets)
        for secret in known:
            if secret in text:
                with self._lock:
                    self._findings.append(
                        f"{where}: a secret of {len(secret)} characters "
                        f"starting {secret[:2]!r}")

    def keep_files(self, what, *paths):
        """Lists files to read at the end (missing ones are skipped then)."""
        with self._lock:
            self._files.extend((what, Path(p)) for p in paths)

    def files(self):
        with self._lock:
            return list(self._files)

    def scan_files(self):
        """Reads every listed file and checks it; returns how many were read."""
        read = 0
        for what, path in self.files():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            read += 1
            self.check_text(f"{what} {path}", data.decode("latin-1"))
        return read

    def findings(self):
        with self._lock:
            return list(self._findings)


SUITE = Scan()  # the session's scan
remember = SUITE.remember


def new_secret(what):
    """A fresh random secret named what (a wrong password, a literal one, a
    token), registered before any request can carry it."""
    secret = f"{what}-{secrets.token_urlsafe(12)}"
    remember(secret)
    return secret

check_text = SUITE.check_text
keep_files = SUITE.keep_files
