"""Reading what tributary wrote, with the independent confluent-kafka client."""
import json
import time
import uuid

from confluent_kafka import Consumer


def read_values(bootstrap, topic, until, timeout=60.0, isolation="read_uncommitted"):
    """Reads topic from the beginning, decoding JSON values, until until(values)
    is true or the deadline passes; returns the values read."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "isolation.level": isolation})
    consumer.subscribe([topic])
    values = []
    deadline = time.monotonic() + timeout
    try:
        while not until(values) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            values.append(json.loads(message.value()))
    finally:
        consumer.close()
    return values


def sequences(values, task=0):
    return [v["seq"] for v in values if v["task"] == task]
