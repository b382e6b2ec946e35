/*
 * tb_pg_records.h - the records the PostgreSQL source has made and not
 * yet handed to the runtime, and the source offsets they carry, in
 * Debezium's form: partition {"server": <topic.prefix>}, offset
 * {"lsn", "lsn_proc", "lsn_commit", "txId", "ts_usec", "messageType"}
 * while streaming, {"lsn", "txId", "ts_usec", "snapshot",
 * "last_snapshot_record", "snapshot_completed"} while snapshotting.
 *
 * A change can make several records (a delete and its tombstone; a
 * truncate of many tables), more than a poll may take: they wait here.
 * The offset JSON is made only for the records that carry one.
 */
#ifndef TB_PG_RECORDS_H
#define TB_PG_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"

/* Where a record leaves the source; its offset. */
typedef struct {
    uint64_t lsn;             /* the change's LSN; a snapshot's consistent point */
    uint64_t lsn_commit;      /* every transaction whose commit starts before here is
                               * done; 0 none */
    bool commit_known;        /* lsn_commit is the end of a commit read (Debezium's
                               * last commit LSN), not a starting position */
    int64_t tx_id;            /* -1: none */
    int64_t ts_us;            /* the commit's (or snapshot's) time, Unix microseconds */
    const char *message_type; /* "INSERT", ...; NULL: none (static storage) */
    bool snapshot;            /* a snapshot record's offset */
    bool last_snapshot;       /* the snapshot's last record */
    bool change_event;        /* a change event (or its tombstone), read in the
                               * snapshot or the stream: the context headers go
                               * with it */
} tb_pg_position_t;

/* Debezium's __debezium.context.* headers (3.4+, extended.headers.enabled):
 * connectorLogicalName (topic.prefix), taskId ("0"), connectorName
 * ("postgresql") and runId (a UUID of this run of the task), in that order,
 * on each change event and tombstone, snapshot reads included; not on
 * transaction metadata or heartbeats, as Debezium 3.6.1 does (checked
 * against it on the bed). Strings borrowed. */
typedef struct {
    const char *logical_name;
    const char *run_id;
} tb_pg_context_t;

/* A new UUID as Debezium 3.6.1 makes a run id, version 7 (the Unix time in
 * ms, then random bits), as text into out[37]; -1 when the system gives no
 * random bytes. */
int tb_pg_run_id(char out[37]);

typedef struct {
    tb_source_record_t record;
    tb_pg_position_t position;
    bool context_done; /* the context headers were added */
} tb_pg_queued_t;

typedef struct {
    tb_pg_queued_t *items;
    size_t head;
    size_t count;
    size_t cap;
} tb_pg_queue_t;

/* Queues a typed record for topic (borrowed, must outlive the record):
 * key and value schemas get a new reference, key and value are stolen.
 * Returns 0, or -1 on no memory (both values freed). */
int tb_pg_queue_push(tb_pg_queue_t *q, const char *topic, tb_schema_t *key_schema,
                     tb_value_t *key, tb_schema_t *value_schema, tb_value_t *value,
                     const tb_pg_position_t *position);

/* Gives each record queued after the first from ones a header name (static
 * storage) holding text (copied), before the context headers. -1 on no
 * memory. */
int tb_pg_queue_tag(tb_pg_queue_t *q, size_t from, const char *name, const char *text);

/* Moves up to max queued records to out; the last moved (or each, with
 * every) gets partition (a new reference) and its offset, and each
 * change event the headers of context (NULL: none). Returns the count
 * moved, or 0 with nothing moved when headers cannot be made (no memory). */
size_t tb_pg_queue_drain(tb_pg_queue_t *q, tb_source_record_t *out, size_t max,
                         json_t *partition, bool every, const tb_pg_context_t *context);

/* Frees every queued record. */
void tb_pg_queue_clear(tb_pg_queue_t *q);

/* The offset of position, a new object. */
json_t *tb_pg_offset_json(const tb_pg_position_t *position);

/* Reads a stored offset back: 0, or -1 when it is not one of ours. */
int tb_pg_offset_parse(const json_t *offset, tb_pg_position_t *position);

#endif
