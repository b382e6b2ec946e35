"""MirrorMaker 2's sync of topic configs on the bed's two clusters (the second one,
bed.kafka2_bootstrap, the source): every sync.topic.configs.interval.seconds the remote
topics get the configs set on their source topics, lose those no longer set there, and
never get those config.properties.exclude names; with sync.topic.configs.enabled=false a
remote topic keeps the configs it was made with."""
import uuid

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,
                                   ConfigResource, ConfigSource)

from kafka_io import produce
from test_mirror import make_topic, mirror_config, some_records, wait_mirrored
from worker import wait_for

pytestmark = pytest.mark.integration


def set_on_topic(bootstrap, topic):
    """The configs set on topic itself (name -> value); none while it does not exist."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource("topic", topic)
    try:
        configs = admin.describe_configs([resource])[resource].result(30)
    except KafkaException:
        return {}
    return {name: entry.value for name, entry in configs.items()
            if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def alter_topic(bootstrap, topic, set_configs=None, delete=()):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = [ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
               for name, value in (set_configs or {}).items()]
    entries += [ConfigEntry(name, None, incremental_operation=AlterConfigOpType.DELETE)
                for name in delete]
    resource = ConfigResource("topic", topic, incremental_configs=entries)
    admin.incremental_alter_configs([resource])[resource].result(30)


def test_mirror_syncs_topic_configs(start_worker, bed):
    """A change of retention.ms, a config set and one deleted on the source topic reach the
    remote topic within the interval, with two tasks (the one that copies partition 0 syncs
    it); the excluded config set with them does not, and records go on being copied."""
    prefix = f"mmc{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-t", f"{alias}.{prefix}-t"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 3, {"retention.ms": "12345678", "retention.bytes": "987654321"})
    w = start_worker()
    config = mirror_config(bed, prefix, alias, **{
        "tasks.max": "2", "sync.topic.configs.interval.seconds": "1",
        "config.properties.exclude": r"max\.message\.bytes, min\.insync\.replicas"})
    name = f"mirror-{prefix}"
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    wait_for(lambda: set_on_topic(bed.bootstrap, remote).get("retention.ms") == "12345678",
             timeout=60, interval=0.5, what=f"{remote} made with the source's configs")
    assert set_on_topic(bed.bootstrap, remote)["retention.bytes"] == "987654321"

    alter_topic(src, topic, {"retention.ms": "23456789", "segment.ms": "3456789",
                             "max.message.bytes": "2000000"}, delete=["retention.bytes"])
    want = {"retention.ms": "23456789", "segment.ms": "3456789"}
    got = wait_for(lambda: (lambda c: c if c == want else None)(
        set_on_topic(bed.bootstrap, remote)), timeout=60, interval=0.5,
        what=f"{remote} with {want} alone set")
    assert "max.message.bytes" not in got and "retention.bytes" not in got

    produce(src, topic, some_records(30, 3, "c"))
    wait_mirrored(bed, topic, remote)
    tasks = w.get(f"/connectors/{name}/status").json()["tasks"]
    assert [t["state"] for t in tasks] == ["RUNNING"] * 2, tasks
    assert any(f"configs of topic {remote} on cluster tgt synced" in line
               for line in w.logs().splitlines())


def test_mirror_does_not_sync_topic_configs_when_disabled(start_worker, bed):
    """With sync.topic.configs.enabled=false, remote topics are made with their source
    topics' configs (as MM2 makes them) and keep them: a change on the source stays
    there while two topics made after it are found and made one refresh after another."""
    prefix = f"mmd{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-t", f"{alias}.{prefix}-t"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1, {"retention.ms": "12345678"})
    w = start_worker()
    config = mirror_config(bed, prefix, alias, **{
        "sync.topic.configs.enabled": "false", "sync.topic.configs.interval.seconds": "1"})
    assert w.post("/connectors", json={"name": f"mirror-{prefix}",
                                       "config": config}).status_code == 201
    wait_for(lambda: set_on_topic(bed.bootstrap, remote).get("retention.ms") == "12345678",
             timeout=60, interval=0.5, what=f"{remote} made with the source's configs")

    alter_topic(src, topic, {"retention.ms": "23456789", "segment.ms": "3456789"})
    for later in ("a", "b"):
        make_topic(src, f"{prefix}-{later}", 1, {"retention.ms": "7654321"})
        wait_for(lambda: set_on_topic(bed.bootstrap, f"{alias}.{prefix}-{later}").get(
            "retention.ms") == "7654321", timeout=60, interval=0.5,
            what=f"{alias}.{prefix}-{later} made")
    assert set_on_topic(bed.bootstrap, remote) == {"retention.ms": "12345678"}


def test_mirror_topic_configs_use_source_defaults(start_worker, bed):
    """use.defaults.from=source (MM2's DefaultConfigPropertyFilter): the remote topic gets
    the source's defaults as configs of its own; another value is refused, naming it."""
    prefix = f"mms{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    topic, remote = f"{prefix}-t", f"{alias}.{prefix}-t"
    src = bed.kafka2_bootstrap
    make_topic(src, topic, 1)
    w = start_worker()
    config = mirror_config(bed, prefix, alias, **{"use.defaults.from": "elsewhere"})
    r = w.put("/connector-plugins/MirrorSourceConnector/config/validate", json=config)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"]}
    assert errors["use.defaults.from"], errors["use.defaults.from"]
    config["use.defaults.from"] = "source"
    assert w.post("/connectors", json={"name": f"mirror-{prefix}",
                                       "config": config}).status_code == 201
    admin = AdminClient({"bootstrap.servers": src})
    resource = ConfigResource("topic", topic)
    want = admin.describe_configs([resource])[resource].result(30)["segment.bytes"].value
    wait_for(lambda: set_on_topic(bed.bootstrap, remote).get("segment.bytes") == want,
             timeout=60, interval=0.5, what=f"{remote} with the source's segment.bytes")


def test_mirror_topic_config_sync_failure_logged_once(start_worker, bed):
    """A source topic deleted while copied: the sync cannot read its configs, logged once
    naming it however many intervals pass, while the other topic's configs go on being
    synced and the task runs."""
    prefix = f"mmf{uuid.uuid4().hex[:10]}"
    alias = f"src{uuid.uuid4().hex[:6]}"
    gone, kept = f"{prefix}-gone", f"{prefix}-kept"
    src = bed.kafka2_bootstrap
    make_topic(src, gone, 1)
    make_topic(src, kept, 1)
    w = start_worker()
    config = mirror_config(bed, prefix, alias, **{"sync.topic.configs.interval.seconds": "1"})
    name = f"mirror-{prefix}"
    assert w.post("/connectors", json={"name": name, "config": config}).status_code == 201
    target = AdminClient({"bootstrap.servers": bed.bootstrap})
    wait_for(lambda: {f"{alias}.{gone}", f"{alias}.{kept}"} <= set(
        target.list_topics(timeout=30).topics), timeout=60, interval=0.5,
        what="the remote topics made")
    source = AdminClient({"bootstrap.servers": src})
    source.delete_topics([gone])[gone].result(30)
    failure = f"cannot read the configs of topic {gone} on cluster {alias}"
    wait_for(lambda: failure in w.logs(), timeout=60, interval=0.5, what=failure)

    for value in ("23456789", "34567890"):
        alter_topic(src, kept, {"retention.ms": value})
        wait_for(lambda: set_on_topic(bed.bootstrap, f"{alias}.{kept}").get(
            "retention.ms") == value, timeout=60, interval=0.5,
            what=f"{alias}.{kept} with retention.ms={value}")
    assert w.logs().count(failure) == 1
    tasks = w.get(f"/connectors/{name}/status").json()["tasks"]
    assert [t["state"] for t in tasks] == ["RUNNING"], tasks
