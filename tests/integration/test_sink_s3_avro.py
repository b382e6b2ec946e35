"""Kafka -> S3 sink with AvroFormat at the issue's scale against moto's S3
server on loopback: 200 000 records over 4 partitions, every record in
exactly one Avro object container file, named as Confluent names them,
flush.size records each, read back by fastavro."""
import io

import pytest

from kafka_io import create_topic
from test_sink_s3 import (BASE, NAME, SETTINGS, avro_envelope, credentials,  # noqa: F401
                          moto, objects, produce_many, s3_sink)
from worker import wait_for

# about two minutes for one test (200 000 records through the sink)
pytestmark = [pytest.mark.integration, pytest.mark.long]

AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"


def test_200000_records_as_avro(start_worker, bed, moto):
    """Every record in exactly one object, each object an Avro object
    container file (deflate) of flush.size records from its start offset,
    in order, named <topic>+<partition>+<start, 10 digits>.avro in
    partition=<p>; nothing left half uploaded."""
    import fastavro
    w = start_worker({**SETTINGS, "value.converter.schemas.enable": "true"},
                     env=credentials(moto))
    topic = bed.unique_topic("s3avromany")
    create_topic(bed, topic, 4)
    produce_many(bed.bootstrap, topic, 4, 50000,
                 value=lambda p, n: avro_envelope(p, n, with_note=False))
    bucket = moto.bucket("avro-many")
    s3_sink(w, moto, "s3avromany", topic, bucket, **{
        "format.class": AVRO, "avro.codec": "deflate", "flush.size": "5000"})

    def committed():
        page = w.get("/metrics").text
        return 'tributary_s3_objects_total{connector="s3avromany",task="0"} 40' in page
    wait_for(committed, timeout=600, interval=1, what="40 Avro objects")
    names = objects(moto, bucket, topic)
    assert len(names) == 40
    seen = set()
    for key, m in names.items():
        p, start = int(m["part"]), int(m["start"])
        assert m["dir"] == f"partition={p}" and m["ext"] == "avro", key
        assert key == f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.avro"
        reader = fastavro.reader(io.BytesIO(moto.read(bucket, key)))
        assert reader.metadata["avro.codec"] == "deflate"
        assert reader.writer_schema["name"] == "shop.Order"
        rows = list(reader)
        # offsets are the record numbers: flush.size records from the start
        assert [(r["p"], r["n"]) for r in rows] == [(p, n)
                                                   for n in range(start, start + 5000)]
        assert all(r["at"].timestamp() * 1000 == BASE + r["n"] for r in rows)
        seen.update((r["p"], r["n"]) for r in rows)
    assert len(seen) == 200000
    assert moto.multipart_uploads(bucket) == []
