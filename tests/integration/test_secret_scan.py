"""The secrets scan itself (secret_scan.py): that it finds what it must, in responses
and in files, and that the suite's requests and workers are wired to it."""
import secrets

import pytest
import requests

import secret_scan

pytestmark = pytest.mark.integration


def test_a_planted_secret_is_found_in_text_and_files(tmp_path):
    scan = secret_scan.Scan()
    secret = secrets.token_urlsafe(18)
    scan.remember(secret)
    scan.check_text("a clean response", '{"config":{"sasl.password":"${env:X}"}}')
    (tmp_path / "clean.log").write_text("nothing to see\n")
    (tmp_path / "store.db").write_bytes(b"SQLite format 3\0" + secret.encode() + b"\0")
    scan.keep_files("worker", tmp_path / "clean.log", tmp_path / "store.db",
                    tmp_path / "missing-wal")
    assert scan.findings() == []
    assert scan.scan_files() == 2  # the missing one is skipped
    scan.check_text("a leaky response", f"password={secret}")
    found = scan.findings()
    assert len(found) == 2, found
    assert found[0].startswith(f"worker {tmp_path / 'store.db'}: a secret of 24 characters")
    assert found[1].startswith("a leaky response: ")
    assert secret not in "".join(found), "a finding must not repeat the secret"


def test_the_suite_scans_every_response_and_every_worker(start_worker):
    hooks = requests.Session().hooks["response"]
    assert any(h.__name__ == "_scan_response" for h in hooks), hooks
    w = start_worker()
    kept = [str(path) for _, path in secret_scan.SUITE.files()]
    store = w.settings["offset.storage.file.filename"]
    assert {w.log_path, store, f"{store}-wal"} <= set(kept)
