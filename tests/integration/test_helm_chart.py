"""The Helm chart (deploy/helm/tributary) run without Kubernetes: Helm 4 renders it
(scripts/install-chart-tools builds it), and the worker file, environment, probes and
mounts of the rendered StatefulSet start a real worker against the bed, as a pod would
run them. The mounts are laid out as the kubelet lays out ConfigMap and Secret volumes
(each file a link through ..data), under a folder of the test instead of /etc/tributary
and /var/lib/tributary; the listener binds loopback instead of every interface. The
chart's lint, render and schema check are scripts/check-chart."""
import base64
import json
import pathlib
import re
import secrets
import subprocess
import uuid

import pytest
import yaml

import secret_scan
from test_rest_security import hash_secret
from worker import free_port, wait_for

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "tributary"
NAMESPACE = "connect"


@pytest.fixture(scope="module")
def helm():
    tools = subprocess.run([str(ROOT / "scripts" / "install-chart-tools")], check=True,
                           capture_output=True, text=True, timeout=1800).stdout.strip()
    return str(pathlib.Path(tools) / "helm")


def render(helm, release, values, *files):
    """The manifests helm template renders, by kind and name; fails with Helm's error."""
    done = subprocess.run([helm, "template", release, str(CHART), "--namespace", NAMESPACE,
                           *[a for f in files for a in ("-f", str(CHART / f))],
                           "-f", "-"], input=json.dumps(values), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return {(doc["kind"], doc["metadata"]["name"]): doc
            for doc in yaml.safe_load_all(done.stdout) if doc}


def render_error(helm, values, *files):
    done = subprocess.run([helm, "template", "t", str(CHART),
                           *[a for f in files for a in ("-f", str(CHART / f))],
                           "-f", "-"], input=json.dumps(values), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0, done.stdout
    return done.stderr


def project(folder, files):
    """A ConfigMap or Secret volume as the kubelet writes it: the files in a timestamped
    folder, ..data linking to it, and each name a link through ..data."""
    data = folder / "..2026_12_07_15_00_00.000000001"
    data.mkdir(parents=True)
    (folder / "..data").symlink_to(data.name)
    for name, text in files.items():
        (data / name).write_text(text)
        (folder / name).symlink_to(f"..data/{name}")


def expand(value, env):
    """Kubernetes' $(VAR) expansion of a container's env value."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)),
                  value)


def dockerfile_env():
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"(\w+)=(\S+)", line[4:]))
    return env


class Pod:
    """What the kubelet would start for pod <statefulset>-<ordinal>: the image's ENV, the
    container's env (downward API and $(VAR) resolved), the worker file from the ConfigMap,
    and its volumes projected under root."""

    def __init__(self, manifests, release, root, secret_data, ordinal=0):
        sts = manifests[("StatefulSet", release)]
        spec = sts["spec"]["template"]["spec"]
        self.container = spec["containers"][0]
        self.name = f"{release}-{ordinal}"
        self.root = root
        volumes = {v["name"]: v for v in spec["volumes"]}
        self.mounts = {}
        for mount in self.container["volumeMounts"]:
            path = root / mount["mountPath"].lstrip("/")
            volume = volumes.get(mount["name"], {})
            if "configMap" in volume:
                data = manifests[("ConfigMap", volume["configMap"]["name"])]["data"]
                if "subPath" in mount:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(data[mount["subPath"]])
                else:
                    project(path, data)
            elif "secret" in volume:
                project(path, secret_data[volume["secret"]["secretName"]])
            else:  # emptyDir, or the volume claim "data"
                path.mkdir(parents=True, exist_ok=True)
            self.mounts[mount["mountPath"]] = path

    def path(self, value):
        """value with each mount path the pod sees replaced by where it lies here (in
        one pass: the folders here are under /tmp, a mount of the pod too)."""
        mounted = sorted(self.mounts, key=len, reverse=True)
        pattern = "(" + "|".join(map(re.escape, mounted)) + ")(?![-.\\w])"
        return re.sub(pattern, lambda m: str(self.mounts[m.group(1)]), value)

    def worker_file(self):
        path = self.root / self.container["args"][0].lstrip("/")
        return {key: self.path(value) for key, value in
                (line.split("=", 1) for line in path.read_text().splitlines()
                 if line and not line.startswith("#"))}

    def env(self, listener):
        env = dict(dockerfile_env())
        downward = {"metadata.name": self.name, "metadata.namespace": NAMESPACE}
        for var in self.container["env"]:
            if "valueFrom" in var:
                env[var["name"]] = downward[var["valueFrom"]["fieldRef"]["fieldPath"]]
            else:
                env[var["name"]] = self.path(expand(var["value"], env))
        assert env["TRIBUTARY_LISTENERS"] == "http://0.0.0.0:8083"
        env["TRIBUTARY_LISTENERS"] = listener
        return {k: v for k, v in env.items() if k.startswith("TRIBUTARY_")}

    def probe(self, kind):
        probe = self.container[kind]["httpGet"]
        assert probe["port"] == "rest" and probe["scheme"] == "HTTP"
        return probe["path"]


def start_pod(start_worker, pod):
    """The worker as the pod runs it; its REST API on a loopback port of its own."""
    port = free_port()
    listener = f"http://127.0.0.1:{port}"
    settings = pod.worker_file()
    settings["listeners"] = listener
    w = start_worker(settings, env=pod.env(listener), wait_healthy=False,
                     directory=pod.root)
    w.port, w.url = port, listener
    return w


def answers(w, path, status, **kw):
    def check():
        assert w.proc.poll() is None, w.logs()
        try:
            return w.get(path, **kw).status_code == status
        except OSError:
            return False
    wait_for(check, timeout=90, what=f"GET {path} to answer {status}")


def datagen(name, topic):
    return json.dumps({"name": name, "config": {"connector.class": "datagen",
                                                "topic": topic, "records.per.second": "5"}})


def test_the_rendered_cluster_worker_runs_with_its_secrets_and_connectors(
        helm, start_worker, bed, tmp_path):
    release = f"tributary-{uuid.uuid4().hex[:8]}"
    password = secrets.token_urlsafe(18)
    seal = base64.b64encode(secrets.token_bytes(32)).decode()
    secret_scan.remember(password)
    secret_scan.remember(seal)
    topic = bed.unique_topic("chart")
    values = {
        "worker": {
            "bootstrap.servers": bed.bootstrap,
            # the bed has one broker
            "config.storage.replication.factor": 1,
            "offset.storage.replication.factor": 1,
            "status.storage.replication.factor": 1,
            "rest.auth": "basic",
            "rest.auth.credentials.file": "/etc/tributary/secrets/rest/credentials",
            "secrets.encryption.key":
                "${file:/etc/tributary/secrets/seal/keys.properties:seal}",
        },
        "secretMounts": [{"name": "rest", "secretName": "rest-users"},
                         {"name": "seal", "secretName": "seal-key"}],
        "connectors": {"orders.json": datagen("chart-orders", topic)},
    }
    manifests = render(helm, release, values)
    secret_data = {
        "rest-users": {"credentials": f"admin:{hash_secret(password)}\n"},
        "seal-key": {"keys.properties": f"seal={seal}\n"},
    }
    pod = Pod(manifests, release, tmp_path / "pod", secret_data)
    w = start_pod(start_worker, pod)

    # the probes answer without the credentials the rest of the API wants
    answers(w, pod.probe("livenessProbe"), 200)
    answers(w, pod.probe("readinessProbe"), 200)
    assert w.get("/connectors").status_code == 401
    auth = ("admin", password)

    def running():
        status = w.get("/connectors/chart-orders/status", auth=auth)
        return status.status_code == 200 and \
            [t["state"] for t in status.json()["tasks"]] == ["RUNNING"]
    wait_for(running, timeout=90, what="the connector of the chart's connectors to run")
    status = w.get("/connectors/chart-orders/status", auth=auth).json()
    # the worker_id is the pod's name in the headless service, which the others reach
    headless = f"{release}-workers"
    assert ("Service", headless) in manifests
    assert status["tasks"][0]["worker_id"] == \
        f"{release}-0.{headless}.{NAMESPACE}.svc.cluster.local:{w.port}"
    assert "refuse" not in w.logs().lower(), w.logs()


def test_the_rendered_standalone_worker_runs_a_connector(helm, start_worker, bed, tmp_path):
    release = f"tributary-{uuid.uuid4().hex[:8]}"
    manifests = render(helm, release, {"worker": {"bootstrap.servers": bed.bootstrap}},
                       "values-standalone.yaml")
    assert ("PodDisruptionBudget", release) not in manifests
    pod = Pod(manifests, release, tmp_path / "pod", {})
    settings = pod.worker_file()
    assert "group.id" not in settings
    w = start_pod(start_worker, pod)
    answers(w, pod.probe("livenessProbe"), 200)
    answers(w, pod.probe("readinessProbe"), 200)
    created = w.post("/connectors", data=datagen("chart-alone", bed.unique_topic("chart")),
                     headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text

    def running():
        status = w.get("/connectors/chart-alone/status")
        return status.status_code == 200 and \
            [t["state"] for t in status.json()["tasks"]] == ["RUNNING"]
    wait_for(running, timeout=60, what="the standalone worker's connector to run")
    # its store is on the data volume
    assert (pod.mounts["/var/lib/tributary"] / "tributary.db").exists()


def test_the_chart_refuses_values_that_cannot_run_naming_the_key(helm):
    assert "replicas: 3 with mode standalone" in render_error(
        helm, {"replicas": 3}, "values-standalone.yaml")
    assert "group.id is set with mode standalone" in render_error(
        helm, {"worker": {"bootstrap.servers": "k:9092", "group.id": "g"}},
        "values-standalone.yaml")
    assert "bootstrap.servers" in render_error(helm, {"worker": {"bootstrap.servers": ""}})
    assert "notes.txt" in render_error(helm, {"connectors": {"notes.txt": "x"}})
    assert "mode" in render_error(helm, {"mode": "cluster"})


def test_the_worker_file_writes_values_as_the_worker_reads_them(helm):
    manifests = render(helm, "tributary", {"worker": {
        "bootstrap.servers": "k:9092", "scheduled.rebalance.max.delay.ms": 3000000,
        "offset.flush.timeout.ms": 2.5, "exactly.once.source.support": True}})
    lines = manifests[("ConfigMap", "tributary")]["data"]["worker.properties"].splitlines()
    assert "scheduled.rebalance.max.delay.ms=3000000" in lines
    assert "offset.flush.timeout.ms=2.5" in lines
    assert "exactly.once.source.support=true" in lines


def test_the_service_monitor_scrapes_each_worker_once(helm):
    release = "tributary"
    manifests = render(helm, release, {"serviceMonitor": {"enabled": True}})
    monitor = manifests[("ServiceMonitor", release)]
    selector = monitor["spec"]["selector"]["matchLabels"]
    chosen = [name for (kind, name), doc in manifests.items() if kind == "Service" and
              selector.items() <= doc["metadata"]["labels"].items()]
    assert chosen == [f"{release}-workers"]
    ports = [p["name"] for p in manifests[("Service", chosen[0])]["spec"]["ports"]]
    assert monitor["spec"]["endpoints"][0]["port"] in ports
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
