"""Helpers of the registry integration tests (tests/integration/test_registry_*.py):
the test registry as a fixture, Confluent's serializers against it, and readers of
what tributary wrote."""
import json
import os
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext

from registry import TestRegistry
from worker import output_lines, wait_for

AVRO = "io.confluent.connect.avro.AvroConverter"
PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
JSON_SCHEMA = "io.confluent.connect.json.JsonSchemaConverter"
STRATEGY = "io.confluent.kafka.serializers.subject."


@pytest.fixture
def registry():
    """A test registry on a free loopback port, for one test."""
    server = TestRegistry().start()
    yield server
    server.stop()


def client(registry):
    return SchemaRegistryClient({"url": registry.url})


def context(topic, key=False):
    return SerializationContext(topic, MessageField.KEY if key else MessageField.VALUE)


def produce(bed, topic, records):
    """Produces (key bytes, value bytes) pairs to partition 0, in order."""
    producer = Producer({"bootstrap.servers": bed.bootstrap})
    for key, value in records:
        producer.produce(topic, key=key, value=value, partition=0)
    assert producer.flush(30) == 0


def consume(bed, topic, count, timeout=60):
    """The first count messages of topic (partition order)."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                         "group.id": f"reader-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                got.append(message)
    finally:
        consumer.close()
    assert len(got) >= count, f"{len(got)} of {count} messages in {topic}"
    return got




def proto_classes(text, file_name, names, pool=None):
    """The message classes of full names in the .proto text, compiled with
    protoc (Debian's protobuf-compiler) as file_name into pool (the protobuf
    package's default pool when None, which holds the well-known types once
    their _pb2 modules are imported)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    pool = pool if pool is not None else descriptor_pool.Default()
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"tbproto-{os.getpid()}")
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, file_name), "w") as f:
        f.write(text)
    out = os.path.join(tmp, file_name + ".pb")
    subprocess.run(["protoc", f"-I{tmp}", "-I/usr/include", f"--descriptor_set_out={out}",
                    file_name], check=True, cwd=tmp)
    files = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        files.ParseFromString(f.read())
    pool.Add(files.file[0])
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
            for name in names]


def json_lines(path, count, timeout=60):
    wait_for(lambda: len(output_lines(path)) >= count, timeout=timeout, what=f"{count} lines")
    return [json.loads(line) for line in output_lines(path)]


def converters(cls, registry, **settings):
    """Connector settings naming cls for keys and values, pointed at registry."""
    config = {"key.converter": cls, "value.converter": cls}
    for side in ("key", "value"):
        config[f"{side}.converter.schema.registry.url"] = registry.url
        for name, value in settings.items():
            config[f"{side}.converter.{name}"] = value
    return config


def create(worker, name, config):
    reply = worker.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 201, reply.text


def file_sink(worker, name, topic, path, **config):
    create(worker, name, {"connector.class": "FileStreamSink", "topics": topic,
                          "file": str(path), **config})


def task_state(worker, name):
    tasks = worker.get(f"/connectors/{name}/status").json().get("tasks", [])
    return tasks[0] if tasks else {}


def dlq_headers(message):
    return {k: v.decode() for k, v in message.headers() or []}
