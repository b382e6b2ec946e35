"""Reading what tributary wrote, with the independent confluent-kafka client."""
import json
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from worker import wait_for

# Producer settings for a test that reads records back by offset: without idempotence a
# retried batch (a slow broker, a loaded machine) can land after the next one, and the
# records of a partition then stand in another order than they were sent.
IN_ORDER = {"enable.idempotence": True}


def unwrap(value):
    """The payload of a JsonConverter envelope (whose schema must be a
    struct), or the value itself."""
    if isinstance(value, dict) and set(value) == {"schema", "payload"}:
        assert value["schema"]["type"] == "struct", value["schema"]
        return value["payload"]
    return value


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 (the Java client's default partitioner), as unsigned 32 bits."""
    m, h = 0x5BD1E995, (0x9747B28C ^ len(data)) & 0xFFFFFFFF
    whole = len(data) & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    rest = data[whole:]
    if len(rest) == 3:
        h ^= rest[2] << 16
    if len(rest) >= 2:
        h ^= rest[1] << 8
    if rest:
        h = ((h ^ rest[0]) * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    return h ^ (h >> 15)


def java_partition(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def create_topic(bed, topic, partitions):
    result = bed.tool("topics", "--bootstrap-server", bed.bootstrap, "--create",
                      "--topic", topic, "--partitions", str(partitions))
    assert result.returncode == 0, result.stderr


def produce(bootstrap, topic, records, transactional_id=None, abort=False):
    """Produces (partition, key, value) records, or (partition, key, value, headers,
    timestamp) ones (headers: a list of (name, bytes) or None; timestamp: ms, or None for
    now); with transactional_id, in one transaction that is committed, or aborted when
    abort is set."""
    config = {"bootstrap.servers": bootstrap, **IN_ORDER}
    if transactional_id:
        config["transactional.id"] = transactional_id
    producer = Producer(config)
    if transactional_id:
        producer.init_transactions(30)
        producer.begin_transaction()
    for partition, key, value, *rest in records:
        headers, timestamp = (*rest, None, None)[:2]
        producer.produce(topic, value=value, key=key, partition=partition,
                         headers=headers, timestamp=timestamp or 0)
    # written to the log first: an abort would otherwise just drop them
    assert producer.flush(30) == 0
    if transactional_id:
        (producer.abort_transaction if abort else producer.commit_transaction)(30)


def group_lag(bed, group):
    """{(topic, partition): lag} as kafka-consumer-groups reports it; {} for a
    group that does not exist. Any other failure of the tool fails the test."""
    result = bed.consumer_groups("--describe", "--group", group)
    output = result.stdout + result.stderr
    if f"Consumer group '{group}' does not exist." in output:
        return {}
    assert result.returncode == 0, f"kafka-consumer-groups failed: {output}"
    lags = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0] == group:
            lag = fields[5]
            lags[(fields[1], int(fields[2]))] = None if lag == "-" else int(lag)
    return lags


def read_raw(bootstrap, topic, until, timeout=60.0, isolation="read_uncommitted",
             decode=bytes):
    """Reads topic from the beginning, decode(value) for each record, until
    until(values) is true or the deadline passes; returns the values read
    (check them: on timeout they are what had arrived)."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
        "isolation.level": isolation})
    consumer.subscribe([topic])
    values = []
    deadline = time.monotonic() + timeout
    try:
        while not until(values) and time.monotonic() < deadline:
            # until() sees each batch, not each record: it may look at every value read,
            # which per record is quadratic (3000 JSON records: 17 s of CPU)
            values.extend(decode(message.value()) for message in consumer.consume(1000, 0.5)
                          if not message.error())
    finally:
        consumer.close()
    return values


def read_values(bootstrap, topic, until, timeout=60.0, isolation="read_uncommitted"):
    """read_raw, decoding JSON values (JsonConverter envelopes unwrapped)."""
    return read_raw(bootstrap, topic, until, timeout, isolation,
                    decode=lambda value: unwrap(json.loads(value)))


def sequences(values, task=0):
    return [v["seq"] for v in values if v["task"] == task]


def read_topic(bed, topic):
    """Every record of a topic from its start to its end now, as (partition, key, value)
    with key and value bytes (value None for a tombstone), in each partition's order."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap, "group.id": "unused",
                         "enable.auto.commit": False})
    try:
        meta = consumer.list_topics(topic, timeout=30).topics[topic]
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                for p in meta.partitions}
        wanted = {p: hi for p, (lo, hi) in ends.items() if hi > lo}
        consumer.assign([TopicPartition(topic, p, lo) for p, (lo, hi) in ends.items()])
        records, done = [], {p: -1 for p in wanted}

        def caught_up():
            for m in consumer.consume(100, timeout=0.5):
                if m.error() is None:
                    records.append((m.partition(), m.key(), m.value()))
                    done[m.partition()] = m.offset()
            return all(done[p] >= hi - 1 for p, hi in wanted.items())

        wait_for(caught_up, timeout=30, what=f"the end of {topic}")
        return records
    finally:
        consumer.close()


def offsets_records(bed, topic, connector):
    """The connector's records of the offsets topic, read_committed to the
    end: {partition text: (offset, key bytes)}; a tombstone removes one."""
    records = {}
    for _, key, value in read_committed_to_end(bed, [topic]):
        name, partition = json.loads(key)
        text = json.dumps(partition, sort_keys=True)
        if name == connector and value is None:
            records.pop(text, None)
        elif name == connector:
            records[text] = (json.loads(value), key)
    return records


def task_record_key(connector, task):
    return json.dumps([connector, {"tributary.exactly.once.task": task}],
                      separators=(",", ":")).encode()


def tombstone(bed, topic, key):
    """Deletes one record of the offsets topic, in the partition Java's
    partitioner gives its key, as an operator's tool would."""
    producer = Producer({"bootstrap.servers": bed.bootstrap,
                         "partitioner": "murmur2_random"})
    producer.produce(topic, key=key, value=None)
    assert producer.flush(30) == 0


STRINGS = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
           "value.converter": "org.apache.kafka.connect.storage.StringConverter"}


def zombie_producer(bed, transactional_id, topic):
    """A transactional producer of transactional_id (fencing its other producers) with an
    open transaction holding one record of topic, {"zombie":true}: a zombie of a task."""
    zombie = Producer({"bootstrap.servers": bed.bootstrap,
                       "transactional.id": transactional_id})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, value=b'{"zombie":true}')
    assert zombie.flush(30) == 0
    return zombie


def read_committed_to_end(bed, topics, timestamps=False):
    """Every committed record of topics' partitions, read_committed, up to
    the ends they had when the call began: [(topic, key bytes, value
    bytes)], in each partition's order; with timestamps, (topic, key, value,
    timestamp in ms)."""
    consumer = Consumer({"bootstrap.servers": bed.bootstrap,
                         "group.id": f"rc-{uuid.uuid4().hex}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    tps = [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics
           for p in consumer.list_topics(t, timeout=30).topics[t].partitions]
    consumer.assign(tps)
    ends = {(tp.topic, tp.partition): consumer.get_watermark_offsets(tp, timeout=30)[1]
            for tp in tps}
    records = []

    def at_end():
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            record = (message.topic(), message.key(), message.value())
            records.append(record + (message.timestamp()[1],) if timestamps else record)
        positions = consumer.position([TopicPartition(t, p) for t, p in ends])
        return all(ends[(p.topic, p.partition)] == 0 or p.offset >= ends[(p.topic, p.partition)]
                   for p in positions)
    try:
        wait_for(at_end, timeout=60, interval=0, what=f"the end of {topics}")
    finally:
        consumer.close()
    return records
