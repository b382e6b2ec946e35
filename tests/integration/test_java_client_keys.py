"""Kafka's Java client keys, as Kafka Connect users write them, in overrides:
every key of ProducerConfig, ConsumerConfig and AdminClientConfig (read from the
test bed's kafka-clients jar: Kafka 4.4, or 3.9) is accepted with a valid value;
the ones tributary manages are refused with the reason; translated keys reach
librdkafka (sasl.jaas.config, a PEM trust store and max.poll.records against
the bed's SASL_SSL listener)."""
import re
import subprocess

import pytest

import secret_scan
from kafka_io import create_topic, produce
from worker import output_lines, wait_for

pytestmark = pytest.mark.integration

# Prints "<role>\t<key>\t<default>" for every key; <null> where there is none.
KEYS_JAVA = r"""
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.admin.AdminClientConfig;

public class Keys {
    static String text(Object value) {
        if (value instanceof Class) return ((Class<?>) value).getName();
        if (value instanceof List) {
            List<String> items = new ArrayList<>();
            for (Object item : (List<?>) value) items.add(text(item));
            return String.join(",", items);
        }
        return String.valueOf(value);
    }
    static void dump(String role, ConfigDef def) {
        for (ConfigDef.ConfigKey key : def.configKeys().values()) {
            String value = key.hasDefault() && key.defaultValue != null
                ? text(key.defaultValue) : "<null>";
            System.out.println(role + "\t" + key.name + "\t" + value);
        }
    }
    public static void main(String[] args) {
        dump("producer", ProducerConfig.configDef());
        dump("consumer", ConsumerConfig.configDef());
        dump("admin", AdminClientConfig.configDef());
    }
}
"""

# What tributary manages and refuses in overrides, on purpose.
MANAGED = {"producer": {"transactional.id"},
           "consumer": {"enable.auto.commit"},
           "admin": set()}
# What would send the connector's credentials to another cluster: refused
# unless the worker's allowlist names it (docs/SECURITY.md).
OTHER_CLUSTER = {role: {"bootstrap.servers"} for role in ("producer", "consumer", "admin")}
STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "offset.flush.interval.ms": "200"}


@pytest.fixture(scope="module")
def java_keys(bed, tmp_path_factory):
    """{role: {key: default or None}} from the bed's kafka-clients jar."""
    folder = tmp_path_factory.mktemp("keys")
    (folder / "Keys.java").write_text(KEYS_JAVA)
    classpath = f"{bed.libs}/*"
    subprocess.run(["javac", "-cp", classpath, "Keys.java"], cwd=folder, check=True,
                   timeout=120)
    listing = subprocess.run(["java", "-cp", f"{classpath}:.", "Keys"], cwd=folder,
                             check=True, capture_output=True, text=True,
                             timeout=120).stdout
    keys = {"producer": {}, "consumer": {}, "admin": {}}
    for line in listing.splitlines():
        role, key, default = line.split("\t")
        keys[role][key] = None if default == "<null>" else default
    assert len(keys["producer"]) > 60 and len(keys["consumer"]) > 60
    return keys


@pytest.fixture
def references(tmp_path, bed):
    """A secrets file, and ${file:} references to the values put in it."""
    path = tmp_path / "secrets.properties"
    values = {}

    def ref(name, value):
        values[name] = value
        path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        path.chmod(0o600)
        return f"${{file:{path}:{name}}}"
    return ref


def scram_jaas(bed):
    return ("org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{bed.scram512.user}" password="{bed.scram512.password}";')


def valid_values(bed, ref, tmp_path):
    """Valid values for the keys that have no default, and for those whose
    default would contradict the rest (a SASL_SSL client of the bed)."""
    return {
        "bootstrap.servers": bed.sasl_bootstrap,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": ref("jaas", scram_jaas(bed)),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": bed.ca,
        "ssl.truststore.certificates": ref("trusted", "-----BEGIN CERTIFICATE-----"),
        "ssl.truststore.password": ref("truststore", secret_scan.new_secret("truststore")),
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(tmp_path / "client.p12"),
        "ssl.keystore.password": ref("keystore", secret_scan.new_secret("keystore")),
        "ssl.keystore.key": ref("key", "-----BEGIN PRIVATE KEY-----"),
        "ssl.keystore.certificate.chain": ref("chain", "-----BEGIN CERTIFICATE-----"),
        "ssl.key.password": ref("keypass", secret_scan.new_secret("key password")),
        "ssl.cipher.suites": "ECDHE-RSA-AES256-GCM-SHA384",
        "ssl.engine.factory.class":
            "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory",
        "ssl.provider": "SunJSSE",
        "ssl.secure.random.implementation": "SHA1PRNG",
        "sasl.kerberos.service.name": "kafka",
        "sasl.client.callback.handler.class":
            "org.apache.kafka.common.security.authenticator.SaslClientCallbackHandler",
        "sasl.login.class": "org.apache.kafka.common.security.authenticator.DefaultLogin",
        "sasl.login.callback.handler.class":
            "org.apache.kafka.common.security.authenticator."
            "AbstractLogin$DefaultLoginCallbackHandler",
        "sasl.login.connect.timeout.ms": "10000",
        "sasl.login.read.timeout.ms": "10000",
        "sasl.oauthbearer.expected.audience": "kafka",
        "sasl.oauthbearer.expected.issuer": "https://issuer.invalid",
        "sasl.oauthbearer.jwks.endpoint.url": "https://issuer.invalid/jwks",
        "sasl.oauthbearer.token.endpoint.url": "https://issuer.invalid/token",
        "sasl.oauthbearer.scope": "kafka",
        "sasl.oauthbearer.client.credentials.client.id": "tributary",
        "sasl.oauthbearer.client.credentials.client.secret":
            ref("client_secret", secret_scan.new_secret("client secret")),
        "sasl.oauthbearer.assertion.claim.aud": "kafka",
        "sasl.oauthbearer.assertion.claim.iss": "https://issuer.invalid",
        "sasl.oauthbearer.assertion.claim.sub": "tributary",
        "sasl.oauthbearer.assertion.file": str(tmp_path / "assertion.jwt"),
        "sasl.oauthbearer.assertion.private.key.file": str(tmp_path / "assertion.pem"),
        "sasl.oauthbearer.assertion.private.key.passphrase":
            ref("passphrase", secret_scan.new_secret("assertion key")),
        "sasl.oauthbearer.assertion.template.file": str(tmp_path / "template.json"),
        "security.providers": "",
        "group.id": "java-keys",
        "group.instance.id": "java-keys-0",
        "group.remote.assignor": "uniform",
        "transactional.id": "java-keys-txn",
        "partitioner.class": "org.apache.kafka.clients.producer.internals.DefaultPartitioner",
        "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
    }


def refused_keys(message, prefix):
    """{key: reason line} of a 400's message, for keys under prefix."""
    found = {}
    for line in message.splitlines():
        match = re.search(re.escape(prefix) + r"([a-z0-9.]+)", line)
        if match:
            found[match.group(1)] = line
    return found


def test_every_java_client_key_is_accepted_as_an_override(start_worker, bed, tmp_path,
                                                          java_keys, references,
                                                          capsys):
    w = start_worker(STRINGS)
    values = valid_values(bed, references, tmp_path)
    topic = bed.unique_topic("javakeys")
    connectors = {
        "source": ({"connector.class": "datagen", "topic": topic},
                   ["producer", "admin"]),
        "sink": ({"connector.class": "FileStreamSink", "topics": topic,
                  "file": str(tmp_path / "out.txt")},
                 ["consumer", "admin"]),
    }
    treated = {}
    for name, (base, roles) in connectors.items():
        config = dict(base)
        for role in roles:
            for key, default in java_keys[role].items():
                value = values.get(key, default)
                assert value is not None, f"no valid value for {role} key {key}"
                config[f"{role}.override.{key}"] = value
        body = {"name": name, "config": config, "initial_state": "STOPPED"}
        reply = w.post("/connectors", json=body)
        assert reply.status_code == 400, reply.text  # the managed keys
        message = reply.json()["message"]
        for role in roles:
            prefix = f"{role}.override."
            refused = refused_keys(message, prefix)
            managed = {k for k, line in refused.items() if "managed by tributary" in line}
            elsewhere = {k for k, line in refused.items()
                         if "to another cluster" in line}
            assert set(refused) == managed | elsewhere, message
            assert managed == MANAGED[role], message
            assert elsewhere == OTHER_CLUSTER[role], message
            treated[role] = (sorted(managed), sorted(elsewhere))
            for key in managed | elsewhere:
                del config[prefix + key]
        reply = w.post("/connectors", json=body)
        assert reply.status_code == 201, reply.text
    with capsys.disabled():
        for role, (managed, elsewhere) in treated.items():
            print(f"\n{role}: {len(java_keys[role])} Java keys; managed (refused): "
                  f"{managed}; another cluster (refused without the allowlist): "
                  f"{elsewhere}")
    logs = w.logs()
    assert "producer.override.max.block.ms' is accepted and has no effect" in logs
    assert "consumer.override.key.deserializer' is accepted and has no effect" in logs


def test_translated_keys_reach_librdkafka(start_worker, bed, tmp_path, references):
    # the sink reaches the SASL_SSL listener through an override of
    # bootstrap.servers, which the allowlist must name with every key it sets
    allowlist = ("bootstrap.servers,security.protocol,sasl.mechanism,sasl.jaas.config,"
                 "ssl.truststore.type,ssl.truststore.location,max.poll.records,"
                 "fetch.max.wait.ms")
    w = start_worker({**STRINGS, "connector.client.config.override.allowlist": allowlist})
    topic = bed.unique_topic("translated")
    create_topic(bed, topic, 1)
    produce(bed.bootstrap, topic, [(0, None, f"r{i}".encode()) for i in range(30)])
    out = tmp_path / "out.txt"
    secure = {"bootstrap.servers": bed.sasl_bootstrap, "security.protocol": "SASL_SSL",
              "sasl.mechanism": "SCRAM-SHA-512",
              "sasl.jaas.config": references("jaas", scram_jaas(bed)),
              "ssl.truststore.type": "PEM", "ssl.truststore.location": bed.ca,
              "max.poll.records": "3", "fetch.max.wait.ms": "100"}
    sink = {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            **{f"consumer.override.{k}": v for k, v in secure.items()}}
    reply = w.post("/connectors", json={"name": "bounded", "config": sink})
    assert reply.status_code == 201, reply.text
    wait_for(lambda: len(output_lines(out)) >= 30, what="30 records over SCRAM via JAAS")

    prefix = 'tributary_task_batches_total{connector="bounded",task="0"} '
    batches = [float(line[len(prefix):]) for line in w.get("/metrics").text.splitlines()
               if line.startswith(prefix)]
    assert batches and batches[0] >= 10, batches  # 30 records, at most 3 a batch


@pytest.mark.parametrize("key,value,expected", [
    ("producer.override.linger.ms", "5000000",
     "Invalid value 5000000 for configuration producer.override.linger.ms: "
     "Value must be no more than 900000"),
    ("producer.override.buffer.memory", "-1",
     "Invalid value -1 for configuration producer.override.buffer.memory: "
     "Not a non-negative number of type LONG"),
    ("producer.override.ssl.truststore.location", "/etc/kafka/truststore.jks",
     "producer.override.ssl.truststore.location is a JKS store"),
    ("producer.override.sasl.jaas.config",
     "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;",
     "sasl.kerberos.keytab"),
])
def test_bad_java_values_are_400_naming_the_key_written(start_worker, bed, key, value,
                                                        expected):
    # literal values allowed, so that sasl.jaas.config is read at validation
    worker = start_worker({"secrets.literal.allowed": "true"})
    config = {"connector.class": "datagen", "topic": bed.unique_topic("bad"), key: value}
    reply = worker.post("/connectors", json={"name": "bad", "config": config})
    assert reply.status_code == 400
    message = reply.json()["message"]
    assert expected in message
    assert "queue.buffering" not in message and "ssl.ca.location is" not in message
