"""The CDC source's arrays of enums and of the hstore, citext and ltree extensions'
types, and the columns of types Debezium does not know (include.unknown.datatypes),
on the bed's real PostgreSQL 15 and Kafka: the exact values and schemas JsonConverter
writes, as Debezium 3.0.7 writes them, in the snapshot and in the stream."""
import uuid

import pytest

from test_postgres_cdc import cdc_db  # noqa: F401 (the fixture)
from test_postgres_cdc import (connector_config, payload, snapshot_then_stream,
                               start_cdc_worker, start_connector)

pytestmark = pytest.mark.integration

TABLE = (
    "CREATE EXTENSION hstore; CREATE EXTENSION citext; CREATE EXTENSION ltree; "
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); "
    "CREATE TABLE odd (id int PRIMARY KEY, moods mood[] NOT NULL, hs hstore[], "
    "cis citext[], lts ltree[], doc tsvector, q tsquery, at pg_lsn, "
    "snap txid_snapshot, ivs interval[])")
ROW = ("{id}, '{{ok,happy}}', ARRAY['name=>1, color=>2'::hstore, NULL], '{{MiXed,NULL}}', "
       "'{{top.sci,a.b}}', 'fat cat', 'fat & cat', '0/16B3748', '10:20:10,14,15', "
       "'{{1 day}}'")
# what Debezium writes for the mapped arrays, whatever include.unknown.datatypes
# (an hstore's pairs in the order of Debezium's Java HashMap, by String.hashCode())
ARRAYS = {"moods": ["ok", "happy"], "hs": ["{\"color\":\"2\",\"name\":\"1\"}", None],
          "cis": ["MiXed", None], "lts": ["top.sci", "a.b"]}
ARRAY_SCHEMAS = {
    # an enum array's items are required, as Debezium's converter builds them
    "moods": {"type": "array", "optional": False, "field": "moods", "items": {
        "type": "string", "optional": False, "name": "io.debezium.data.Enum",
        "version": 1, "parameters": {"allowed": "sad,ok,happy"}}},
    "hs": {"type": "array", "optional": True, "field": "hs", "items": {
        "type": "string", "optional": True, "name": "io.debezium.data.Json",
        "version": 1}},
    "cis": {"type": "array", "optional": True, "field": "cis", "items": {
        "type": "string", "optional": True}},
    "lts": {"type": "array", "optional": True, "field": "lts", "items": {
        "type": "string", "optional": True, "name": "io.debezium.data.Ltree",
        "version": 1}},
}
# include.unknown.datatypes=true: the bytes of the server's text (base64 in JSON)
UNKNOWN = {"doc": "J2NhdCcgJ2ZhdCc=",   # 'cat' 'fat'
           "q": "J2ZhdCcgJiAnY2F0Jw==",  # 'fat' & 'cat'
           "at": "MC8xNkIzNzQ4",         # 0/16B3748
           "snap": "MTA6MjA6MTAsMTQsMTU="}  # 10:20:10,14,15


@pytest.mark.parametrize("include", [False, True])
def test_extension_arrays_and_unknown_types(cdc_db, start_worker, bed, include):
    db = cdc_db
    bed.pg.sql(TABLE, db=db, superuser=True)
    bed.pg.sql(f"ALTER TABLE odd OWNER TO {bed.pg.user}; "
               "INSERT INTO odd VALUES (" + ROW.format(id=1) + ")", db=db, superuser=True)
    prefix = f"p{uuid.uuid4().hex[:8]}"
    w = start_cdc_worker(start_worker, bed)
    start_connector(w, "cdc", connector_config(
        bed, db, prefix, **{"include.unknown.datatypes": str(include).lower()}))
    records = snapshot_then_stream(bed, db, f"{prefix}.public.odd",
                                   "INSERT INTO odd VALUES (" + ROW.format(id=2) + ")")
    unknown = UNKNOWN if include else {}
    for (_, _, value), row_id in zip(records, (1, 2)):  # the snapshot's and the stream's
        assert payload(value)["after"] == {"id": row_id, **ARRAYS, **unknown}
        fields = {f["field"]: f for f in value["schema"]["fields"][1]["fields"]}
        assert {name: fields[name] for name in ARRAY_SCHEMAS} == ARRAY_SCHEMAS
        # interval[]: Debezium maps no array of it, whatever the key
        assert list(fields) == ["id", *ARRAYS, *unknown]
        for name in unknown:  # binary.handling.mode's schema, no name
            assert fields[name] == {"type": "bytes", "optional": True, "field": name}
    # each column left out or written opaque is logged once
    logs = w.logs()
    for column in ["ivs", *UNKNOWN]:
        line = f"column public.odd.{column}: type "
        assert logs.count(line) == 1, (column, logs.count(line))
    assert ("written as the bytes of its text" in logs) == include
