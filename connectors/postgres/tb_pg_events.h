/*
 * tb_pg_events.h - change events as Debezium writes them: a row's insert
 * (c), update (u), delete (d, then a tombstone when tombstones.on.delete),
 * snapshot read (r) or table truncate (t) into the key and envelope
 * records of its table's topic, honouring skipped.operations. An update
 * that changes the primary key is, as in Debezium, a delete of the old key
 * (and its tombstone) and a create of the new one. With transaction
 * metadata every streamed envelope (not a tombstone, not a snapshot row)
 * counts as one event of its transaction.
 */
#ifndef TB_PG_EVENTS_H
#define TB_PG_EVENTS_H

#include <stddef.h>

#include "connectors/postgres/tb_pg_config.h"
#include "connectors/postgres/tb_pg_records.h"
#include "connectors/postgres/tb_pg_relation.h"
#include "connectors/postgres/tb_pg_transaction.h"

/* What every event needs. Borrowed. */
typedef struct {
    tb_pg_queue_t *queue;
    const tb_pg_options_t *options;
    tb_schema_t *source_schema;
    /* provide.transaction.metadata: counts the streamed events and gives
     * them their transaction block; NULL: the block is null */
    tb_pg_transactions_t *transactions;
    /* logs once what a record goes without (as tb_pg_relation_ctx_t's) */
    void (*notice)(void *arg, const char *column, const char *what);
    void *notice_arg;
} tb_pg_events_t;

/* One row change of r, whose records go to topic (which outlives them).
 * before/after are the old and new tuples' cells (NULL: none; old may
 * hold only the key columns); marker is the snapshot field ("false" while
 * streaming). Returns 0, or -1 with errstr naming the column that cannot
 * be read. */
typedef struct {
    char op; /* 'c', 'u', 'd' or 'r' */
    const tb_pg_cell_t *before;
    size_t nbefore;
    const tb_pg_cell_t *after;
    size_t nafter;
    const char *marker;
} tb_pg_change_t;

int tb_pg_event_change(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                       const char *topic, const tb_pg_change_t *change,
                       const tb_pg_position_t *position, char *errstr,
                       size_t errstr_size);

/* A truncate of r. Returns 0, or -1 on no memory. */
int tb_pg_event_truncate(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                         const char *topic, const tb_pg_position_t *position,
                         char *errstr, size_t errstr_size);

#endif
