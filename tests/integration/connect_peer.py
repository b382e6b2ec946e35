"""Kafka Connect distributed, run from the bed's Connect jars (BED_CONNECT_VERSION, with the
FileStream plugins), as the peer tests compare tributary with: test_kafka_store.py on shared
internal topics, test_rest_differential.py answer for answer."""
import os
import signal
import subprocess
import time

import requests

from worker import free_port, wait_for

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def connect_topics(bed, prefix):
    """Three unique internal topic names."""
    unique = bed.unique_topic(prefix)
    return {"config": f"{unique}-config", "offsets": f"{unique}-offsets",
            "status": f"{unique}-status"}


def momentary_conflict(response):
    """Connect's 409 while its group rebalances or its leader is unknown, which a client
    retries; not "already exists"."""
    return response.status_code == 409 and "already exists" not in response.text


class ConnectDistributed:
    """connect-distributed from the bed's jars, on a free loopback REST port."""

    def __init__(self, bed, folder, group, topics, offset_partitions, plugins=(),
                 properties=None, env=None):
        """plugins: more directories for plugin.path; properties: more worker settings;
        env: more environment variables for the JVM (what an env: config provider reads)."""
        self.group = group
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        folder.mkdir(parents=True, exist_ok=True)
        props = folder / "worker.properties"
        props.write_text("\n".join([
            f"bootstrap.servers={bed.bootstrap}", f"group.id={group}",
            f"config.storage.topic={topics['config']}",
            f"offset.storage.topic={topics['offsets']}",
            f"status.storage.topic={topics['status']}",
            "config.storage.replication.factor=1", "offset.storage.replication.factor=1",
            "status.storage.replication.factor=1",
            f"offset.storage.partitions={offset_partitions}",
            "key.converter=org.apache.kafka.connect.storage.StringConverter",
            "value.converter=org.apache.kafka.connect.storage.StringConverter",
            "offset.flush.interval.ms=500",
            f"listeners=http://127.0.0.1:{self.port}", "rest.advertised.host.name=127.0.0.1",
            f"rest.advertised.port={self.port}",
            "plugin.path=" + ",".join([bed.facts["BED_CONNECT_PLUGINS"], *plugins]),
            *(f"{key}={value}" for key, value in (properties or {}).items())]) + "\n")
        self.log = folder / "connect.log"
        # The bed's Connect for the FileStream connectors (4.3.1 beside a 4.4 broker), with
        # its own logging configuration (log4j2 or reload4j), into self.log.
        self.proc = subprocess.Popen(
            ["java", "-Xms128M", "-Xmx512M", bed.facts["BED_CONNECT_LOG_OPTION"],
             f"-Dtributary.connect.log={self.log}", "-cp", f"{bed.facts['BED_CONNECT_LIBS']}/*",
             "org.apache.kafka.connect.cli.ConnectDistributed", str(props)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})})
        try:
            wait_for(lambda: requests.get(f"{self.url}/connectors",
                                          timeout=5).status_code == 200,
                     timeout=120, what="Connect's REST API")
        except AssertionError:
            self.proc.kill()  # no fixture knows of a peer that never answered
            self.proc.wait()
            raise

    def request(self, method, path, timeout=60, **kwargs):
        """The response to a request, sent again while Connect answers a momentary 409
        (its first rebalance), for at most timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            response = requests.request(method, self.url + path, timeout=60, **kwargs)
            if not momentary_conflict(response) or time.monotonic() > deadline:
                return response
            time.sleep(0.2)

    def create(self, name, config):
        """Creates a connector, past the 409s Connect answers while its first rebalance
        runs."""
        r = self.request("POST", "/connectors", json={"name": name, "config": config})
        assert r.status_code in (201, 409), r.text
        assert r.status_code == 201 or "already exists" in r.text, r.text

    def get(self, path):
        response = requests.get(self.url + path, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
