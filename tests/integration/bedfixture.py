"""pytest plugin: the test bed (tests/bed/bed.sh: Kafka, PostgreSQL and OpenSearch) as the session fixture
``bed``.

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
class Postgres:
    """The bed's PostgreSQL 15 server (tests/bed/postgres.sh): wal_level=logical,
    scram-sha-256 on 127.0.0.1. `user` may log in, replicate and create databases; it owns
    `db`. `superuser` is the server's administrator."""

    host: str
    port: int
    db: str
    user: str
    password: str
    superuser: str
    superpassword: str
    bin: str  # the server's bin directory (psql, pg_dump, ...)

    def jdbc_url(self, db: str | None = None) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{db or self.db}"

    def sql(self, statement: str, db: str | None = None, superuser: bool = False,
            timeout: float = 60) -> list[list[str | None]]:
        """Run SQL with psql and return the rows of its last statement, every value as text
        (None for NULL). Raises RuntimeError naming psql's message when a statement fails."""
        user, password = (self.superuser, self.superpassword) if superuser else (
            self.user, self.password)
        null = "\\N-null"
        done = subprocess.run(
            [f"{self.bin}/psql", "-X", "-q", "-A", "-t", "-F", "\t", "-P", f"null={null}",
             "-v", "ON_ERROR_STOP=1", "-h", self.host, "-p", str(self.port), "-U", user,
             "-d", db or self.db, "-c", statement],
            capture_output=True, text=True, timeout=timeout, check=False,
            env={**os.environ, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "10"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed on {statement!r}: {done.stderr.strip()}")
        return [[None if v == null else v for v in line.split("\t")]
                for line in done.stdout.splitlines()]

    def fresh_database(self, prefix: str = "t") -> str:
        """A new empty database owned by `user`: tests never share one."""
        name = f"{prefix}_{uuid.uuid4().hex[:16]}"
        self.sql(f'CREATE DATABASE "{name}"')
        return name


@dataclass(frozen=True)
class OpenSearch:
    """The bed's single OpenSearch node (tests/bed/opensearch.sh): plain HTTP on 127.0.0.1, no
    security plugin. `pid` is the node's JVM: a test that freezes it (SIGSTOP) must carry
    ``@pytest.mark.disrupts("opensearch")``."""

    url: str  # http://127.0.0.1:port
    version: str
    pid: int


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
    kafka2_bootstrap: str  # the second cluster (its own KRaft node): PLAINTEXT host:port
    kafka2_cluster_id: str
    pg: Postgres
    # None for a bed started by a bed.sh older than its OpenSearch node.
    opensearch: OpenSearch | None
    facts: dict = field(repr=False)  # bed.json as read, including keys not mapped above

    def tool(self, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run a Kafka CLI tool (`bed.sh tool DIR NAME ARGS...`): topics, consumer-groups,
        console-consumer, console-producer, get-offsets, delete-records, configs,
        transactions. Pass
        --bootstrap-server yourself.
        Output is captured as text; raises subprocess.TimeoutExpired after `timeout` s."""
        return subprocess.run(
            [str(BED_SH), "tool", self.dir, name, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def consumer_groups(self, *args: str) -> subprocess.CompletedProcess:
        """kafka-consumer-groups against the bed's PLAINTEXT listener. Its admin calls get
        30 s, not the tool's default 5 s: on a machine loaded by tests running in parallel
        the tool's own JVM can take longer than that to reach the broker."""
        return self.tool("consumer-groups", "--bootstrap-server", self.bootstrap,
                         "--timeout", "30000", *args)

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
        kafka2_bootstrap=facts["BED_KAFKA2_BOOTSTRAP"],
        kafka2_cluster_id=facts["BED_KAFKA2_CLUSTER_ID"],
        pg=Postgres(
            host=facts["BED_PG_HOST"],
            port=int(facts["BED_PG_PORT"]),
            db=facts["BED_PG_DB"],
            user=facts["BED_PG_USER"],
            password=facts["BED_PG_PASSWORD"],
            superuser=facts["BED_PG_SUPERUSER"],
            superpassword=facts["BED_PG_SUPERPASSWORD"],
            bin=facts["BED_PG_BIN"],
        ),
        opensearch=OpenSearch(
            url=facts["BED_OPENSEARCH_URL"],
            version=facts["BED_OPENSEARCH_VERSION"],
            pid=int(facts["BED_OPENSEARCH_PID"]),
        ) if "BED_OPENSEARCH_URL" in facts else None,
        facts=facts,
    )


def remember_bed_secrets(bed: Bed) -> None:
    """The bed's passwords must never appear in plain text (secret_scan.py)."""
    secret_scan.remember(bed.scram256.password)
    secret_scan.remember(bed.scram512.password)
    secret_scan.remember(bed.pg.password)
    secret_scan.remember(bed.pg.superpassword)


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
