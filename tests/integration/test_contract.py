"""Checks that keep the documentation true: every route the server has is in
openapi.yaml and the reverse, and docs/configuration.md is what the binary
generates."""
import os
import pathlib
import re
import subprocess

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def binary_output(*args):
    return subprocess.run([os.environ["TRIBUTARY_BIN"], *args], check=True,
                          capture_output=True, text=True, timeout=30).stdout


def test_openapi_lists_exactly_the_served_routes():
    served = set(binary_output("--routes").split("\n")) - {""}
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    documented = set()
    for path, operations in spec["paths"].items():
        template = re.sub(r"\{[^}]+\}", "{}", path)
        for method in operations:
            if method in {"get", "put", "post", "patch", "delete"}:
                documented.add(f"{method.upper()} {template}")
    assert served, "the binary listed no routes"
    assert served - documented == set(), "served but not in openapi.yaml"
    assert documented - served == set(), "in openapi.yaml but not served"


def test_configuration_reference_is_current():
    generated = binary_output("--config-reference")
    committed = (ROOT / "docs" / "configuration.md").read_text()
    assert committed == generated, (
        "docs/configuration.md is stale: run "
        "`build/release/tributary --config-reference > docs/configuration.md`")


def connect_keys(*classes):
    """Connect 3.9's keys of these config classes (tests/data, made from the
    bed's jars by tests/data/ConnectKeys.java)."""
    lines = (ROOT / "tests" / "data" / "connect-3.9-keys.txt").read_text().splitlines()
    return {line.split()[1] for line in lines
            if line and not line.startswith("#") and line.split()[0] in classes}


def reference_rows(section):
    """{first cell: row cells} of one table of --config-reference."""
    text = binary_output("--config-reference")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_every_connect_worker_key_has_a_decision():
    decisions = reference_rows("Kafka Connect worker keys")
    prefixes = [name[:-1] for name in decisions if name.endswith(".*")]
    keys = connect_keys("StandaloneConfig", "DistributedConfig")
    assert len(keys) > 100, "the key list lost its worker keys"
    missing = {k for k in keys
               if k not in decisions and not any(k.startswith(p) for p in prefixes)}
    assert missing == set(), "Connect worker keys with no decision in tributary"
    implemented = {name for name, cells in decisions.items() if cells[2] == "implemented"
                   and not name.endswith(".*")}
    worker_table = set(reference_rows("Worker"))
    assert implemented - worker_table == set(), "implemented but not a worker key"


def test_every_connect_connector_key_is_defined():
    keys = (connect_keys("ConnectorConfig", "SinkConnectorConfig")
            | connect_keys("SourceConnectorConfig"))
    defined = set()
    for section in ("Connector (all)", "Connector (sink)", "Connector (source)"):
        defined |= set(reference_rows(section))
    assert keys - defined == set(), "Connect connector keys tributary does not define"
