"""pytest plugin: the Kafka test bed (tests/bed/bed.sh) as the session fixture ``bed``.

The bed is started outside pytest (``tests/bed/bed.sh start DIR``); tests find it through
the environment variable TRIBUTARY_BED_DIR=DIR, whose DIR/bed.json holds the facts.
Load with ``pytest_plugins = ["bedfixture"]`` (tests/integration on sys.path) or ``-p bedfixture``.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import secret_scan

BED_SH = Path(__file__).resolve().parents[1] / "bed" / "bed.sh"


@dataclass(frozen=True)
class Scram:
    user: str
    password: str


@dataclass(frozen=True)
class Bed:
    """Facts of a running bed, and helpers. Fields mirror the BED_* keys of bed.json."""

    dir: str
    bootstrap: str  # PLAINTEXT host:port
    sasl_bootstrap: str  # SASL_SSL host:port (SCRAM-SHA-256 and SCRAM-SHA-512)
    ca: str  # PEM file of the CA that signed the broker certificate
    scram256: Scram
    scram512: Scram
    libs: str  # Kafka lib dir (classpath for Kafka's tools, Connect standalone)
    cluster_id: str
    facts: dict = field(repr=False)  # bed.json as read, including keys not mapped above

    def tool(self, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run a Kafka CLI tool (`bed.sh tool DIR NAME ARGS...`): topics, consumer-groups,
        console-consumer, console-producer, get-offsets, delete-records, configs. Pass
        --bootstrap-server yourself.
        Output is captured as text; raises subprocess.TimeoutExpired after `timeout` s."""
        return subprocess.run(
            [str(BED_SH), "tool", self.dir, name, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def unique_topic(self, prefix: str = "t") -> str:
        """A name no other call returns: tests never share topics (or groups named after them)."""
        return f"{prefix}-{uuid.uuid4().hex}"

    def client_config(self, mechanism: str | None = None) -> dict:
        """librdkafka settings to reach the bed: PLAINTEXT when mechanism is None, else SASL_SSL
        with the bed's user for "SCRAM-SHA-256" or "SCRAM-SHA-512"."""
        if mechanism is None:
            return {"bootstrap.servers": self.bootstrap}
        creds = {"SCRAM-SHA-256": self.scram256, "SCRAM-SHA-512": self.scram512}[mechanism]
        return {
            "bootstrap.servers": self.sasl_bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": mechanism,
            "sasl.username": creds.user,
            "sasl.password": creds.password,
            "ssl.ca.location": self.ca,
        }


def load_bed(bed_dir: str) -> Bed:
    path = Path(bed_dir) / "bed.json"
    facts = json.loads(path.read_text())
    return Bed(
        dir=facts["BED_DIR"],
        bootstrap=facts["BED_BOOTSTRAP"],
        sasl_bootstrap=facts["BED_SASL_BOOTSTRAP"],
        ca=facts["BED_CA"],
        scram256=Scram(facts["BED_SCRAM256_USER"], facts["BED_SCRAM256_PASSWORD"]),
        scram512=Scram(facts["BED_SCRAM512_USER"], facts["BED_SCRAM512_PASSWORD"]),
        libs=facts["BED_KAFKA_LIBS"],
        cluster_id=facts["BED_CLUSTER_ID"],
        facts=facts,
    )


def remember_bed_secrets(bed: Bed) -> None:
    """The bed's passwords must never appear in plain text (secret_scan.py)."""
    secret_scan.remember(bed.scram256.password)
    secret_scan.remember(bed.scram512.password)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs the Kafka test bed (TRIBUTARY_BED_DIR)")


@pytest.fixture(scope="session")
def bed() -> Bed:
    # A missing bed is an error, not a skip: a run that silently skips its integration
    # tests would look green.
    bed_dir = os.environ.get("TRIBUTARY_BED_DIR")
    if not bed_dir:
        pytest.fail(
            "TRIBUTARY_BED_DIR is not set: start the Kafka test bed with "
            "`tests/bed/bed.sh start DIR` and run pytest with TRIBUTARY_BED_DIR=DIR",
            pytrace=False,
        )
    try:
        found = load_bed(bed_dir)
    except (OSError, ValueError, KeyError) as e:
        pytest.fail(
            f"cannot read the Kafka test bed from {bed_dir}/bed.json ({e!r}): "
            f"was `tests/bed/bed.sh start {bed_dir}` run and did it succeed?",
            pytrace=False,
        )
    remember_bed_secrets(found)
    return found
