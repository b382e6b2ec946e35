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
