#!/usr/bin/env python3
"""The formats scenario of bench/run: encode and decode throughput of the Schema Registry
formats (Avro, Protobuf, JSON Schema), tributary's converters beside confluent-kafka's
own serializers, on the same JSON values and the same registry.

Run by bench/harness.py with the test venv's Python (it needs confluent-kafka and the
test registry of tests/registry/); see bench/README.md, "Formats". Prints one JSON line
per (format, system):

  {"format", "system", "records", "encode_seconds", "encode_cpu_seconds",
   "decode_seconds", "decode_cpu_seconds", "value_bytes", "encoded_bytes",
   "registry_requests"}

For both systems a value is JSON text in and JSON text out: encoding parses it and
serializes it, decoding deserializes and writes JSON text, as a connector's records
would go. Before timing, every sample is checked to come back equal to itself.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "registry"))

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.schema_registry.json_schema import (JSONDeserializer,  # noqa: E402
                                                          JSONSerializer)
from confluent_kafka.schema_registry.protobuf import (ProtobufDeserializer,  # noqa: E402
                                                       ProtobufSerializer)
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402
from google.protobuf import descriptor_pb2, descriptor_pool, json_format  # noqa: E402
from google.protobuf import message_factory  # noqa: E402

from registry import TestRegistry  # noqa: E402

SAMPLES = 4096  # as bench_formats.c
# format -> (tributary's converter class, registry schema type, schema file)
FORMATS = {
    "avro": ("io.confluent.connect.avro.AvroConverter", "AVRO", "payment.avsc"),
    "protobuf": ("io.confluent.connect.protobuf.ProtobufConverter", "PROTOBUF",
                 "payment.proto"),
    "json_schema": ("io.confluent.connect.json.JsonSchemaConverter", "JSON",
                    "payment.schema.json"),
}
# Confluent's serializers with the converters' settings: the subject's latest schema.
LATEST = {"auto.register.schemas": False, "use.latest.version": True}


def same(a, b) -> bool:
    """JSON equality where numbers compare by value and a numeric string equals its
    number (Protobuf's JSON mapping quotes 64-bit integers)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, str) and isinstance(b, (int, float)) and not isinstance(b, bool):
        a, b = b, a
    if isinstance(a, (int, float)) and isinstance(b, str):
        try:
            return a == float(b)
        except ValueError:
            return False
    return a == b


def payment_class(work: Path):
    """The Payment message class, compiled from payment.proto by protoc."""
    out = work / "payment.pb"
    subprocess.run(["protoc", f"-I{HERE}", f"--descriptor_set_out={out}", "payment.proto"],
                   check=True)
    files = descriptor_pb2.FileDescriptorSet()
    files.ParseFromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    pool.Add(files.file[0])
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("bench.Payment"))


def confluent_codec(fmt: str, client, schema_text: str, work: Path):
    """(encode, decode): JSON text -> framed bytes -> JSON text, through confluent-kafka."""
    if fmt == "avro":
        serializer = AvroSerializer(client, schema_text, conf=LATEST)
        deserializer = AvroDeserializer(client)
        return (lambda text, ctx: serializer(json.loads(text), ctx),
                lambda data, ctx: json.dumps(deserializer(data, ctx)))
    if fmt == "protobuf":
        payment = payment_class(work)
        serializer = ProtobufSerializer(payment, client,
                                        conf={"use.deprecated.format": False, **LATEST})
        deserializer = ProtobufDeserializer(payment, conf={"use.deprecated.format": False})
        return (lambda text, ctx: serializer(json_format.Parse(text, payment()), ctx),
                lambda data, ctx: json_format.MessageToJson(
                    deserializer(data, ctx), preserving_proto_field_name=True,
                    always_print_fields_with_no_presence=True, indent=None))
    serializer = JSONSerializer(schema_text, client, conf=LATEST)
    deserializer = JSONDeserializer(None, schema_registry_client=client)
    return (lambda text, ctx: serializer(json.loads(text), ctx),
            lambda data, ctx: json.dumps(deserializer(data, ctx)))


def measure_confluent(fmt, client, schema_text, topic, samples, records, work):
    encode, decode = confluent_codec(fmt, client, schema_text, work)
    ctx = SerializationContext(topic, MessageField.VALUE)
    encoded = []
    for i, text in enumerate(samples):
        data = encode(text, ctx)
        back = decode(data, ctx)
        if not same(json.loads(text), json.loads(back)):
            raise SystemExit(f"formats: confluent-kafka {fmt}: value {i} came back "
                             f"different:\n  in:  {text}\n  out: {back}")
        encoded.append(data)

    def timed(step, inputs):
        wall, cpu = time.monotonic(), time.thread_time()
        for i in range(records):
            step(inputs[i % len(inputs)], ctx)
        return time.monotonic() - wall, time.thread_time() - cpu

    encode_seconds, encode_cpu = timed(encode, samples)
    decode_seconds, decode_cpu = timed(decode, encoded)
    return {"records": records, "encode_seconds": encode_seconds,
            "encode_cpu_seconds": encode_cpu, "decode_seconds": decode_seconds,
            "decode_cpu_seconds": decode_cpu,
            "value_bytes": sum(map(len, samples)) / len(samples),
            "encoded_bytes": sum(map(len, encoded)) / len(encoded)}


def measure_tributary(program, converter, settings, topic, input_file, records):
    argv = [program, "-c", converter, "-t", topic, "-i", str(input_file), "-n", str(records)]
    for key, value in settings.items():
        argv += ["-s", f"{key}={value}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"formats: {' '.join(argv)} failed ({done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    del result["converter"]
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bench-formats", required=True, help="the bench_formats program")
    p.add_argument("--input", required=True, help="JSON values, one per line")
    p.add_argument("--records", type=int, required=True, help="per loop, for tributary")
    p.add_argument("--peer-records", type=int, required=True,
                   help="per loop, for confluent-kafka (slower: fewer are enough)")
    args = p.parse_args()

    with open(args.input) as f:
        samples = [line.rstrip("\n") for _, line in zip(range(SAMPLES), f) if line.strip()]
    registry = TestRegistry().start()
    try:
        client = SchemaRegistryClient({"url": registry.url})
        with tempfile.TemporaryDirectory() as tmp:
            rows = [{"format": "json", "system": "tributary", "registry_requests": 0,
                     **measure_tributary(args.bench_formats,
                                         "org.apache.kafka.connect.json.JsonConverter",
                                         {"schemas.enable": "false"}, "bench-json",
                                         args.input, args.records)}]
            for fmt, (converter, schema_type, schema_file) in FORMATS.items():
                topic = f"bench-{fmt.replace('_', '-')}"
                schema_text = (HERE / schema_file).read_text()
                client.register_schema(f"{topic}-value", Schema(schema_text, schema_type))
                settings = {"schema.registry.url": registry.url,
                            "auto.register.schemas": "false", "use.latest.version": "true"}
                before = registry.count("")
                figures = measure_tributary(args.bench_formats, converter, settings, topic,
                                            args.input, args.records)
                rows.append({"format": fmt, "system": "tributary",
                             "registry_requests": registry.count("") - before, **figures})
                before = registry.count("")
                figures = measure_confluent(fmt, client, schema_text, topic, samples,
                                            args.peer_records, Path(tmp))
                rows.append({"format": fmt, "system": "confluent-kafka",
                             "registry_requests": registry.count("") - before, **figures})
    finally:
        registry.stop()
    for entry in rows:
        print(json.dumps(entry), flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
