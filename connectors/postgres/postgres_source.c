/*
 * PostgresConnector - change data capture from PostgreSQL, as Debezium's
 * PostgreSQL connector does it and with its records (docs/postgres-cdc.md).
 *
 * A task starts in its first poll: it reads the stored offset, makes sure
 * of the publication and the slot, and decides on a snapshot per
 * snapshot.mode. A snapshot runs in the transaction whose snapshot the
 * slot's creation exported (pg_snapshot.c), one batch a poll; then the
 * slot streams from its consistent point. The stream is read without
 * blocking: a poll takes what has arrived, decodes it (pgoutput.c) and
 * queues its records (pg_events.c).
 *
 * The slot's confirmed flush position moves only in commit(), which the
 * runtime calls once offsets are recorded, so it never passes a change
 * Kafka has not acknowledged. After a restart the stream resumes from the
 * stored offset: transactions whose commit starts before its lsn_commit (the
 * end of the last commit read, as Debezium stores it), and
 * the stored transaction's changes up to its lsn, are skipped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_catalog.h"
#include "connectors/postgres/tb_pg_config.h"
#include "connectors/postgres/tb_pg_conn.h"
#include "connectors/postgres/tb_pg_envelope.h"
#include "connectors/postgres/tb_pg_events.h"
#include "connectors/postgres/tb_pg_filter.h"
#include "connectors/postgres/tb_pg_lag.h"
#include "connectors/postgres/tb_pg_records.h"
#include "connectors/postgres/tb_pg_relation.h"
#include "connectors/postgres/tb_pg_snapshot.h"
#include "connectors/postgres/tb_pg_transaction.h"
#include "connectors/postgres/tb_pgoutput.h"
#include "connectors/tb_plugin.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.postgres"
#define STATUS_INTERVAL_MS 10000 /* Debezium's status.update.interval.ms */
#define HEARTBEAT_KEY "io.debezium.connector.common.ServerNameKey"
#define HEARTBEAT_VALUE "io.debezium.connector.common.Heartbeat"
#define RECONNECT_MS 1000 /* between attempts after a lost connection */

typedef enum { PHASE_START = 0, PHASE_SNAPSHOT, PHASE_STREAM, PHASE_DONE } phase_t;

/* A topic name that lives until the task stops (records borrow it). */
typedef struct topic {
    struct topic *next;
    char name[];
} topic_t;

typedef struct {
    char *connector;
    int task;
    const tb_task_context_t *ctx;
    tb_pg_options_t o;
    tb_pg_filter_t *filter;
    tb_schema_t *source_schema;
    tb_pg_relations_t relations;
    tb_pg_queue_t queue;
    tb_pg_events_t events;
    tb_pg_transactions_t *transactions; /* NULL: no transaction metadata */
    json_t *partition;                  /* {"server": <topic.prefix>} */
    char run_id[37];                    /* __debezium.context.runId */
    tb_pg_context_t context;            /* its headers' values */
    topic_t *topics;
    PGconn *sql;  /* catalog and snapshot */
    PGconn *repl; /* the slot */
    phase_t phase;
    /* the snapshot */
    tb_pg_snapshot_t *snapshot;
    tb_pg_table_t *tables;
    size_t ntables;
    tb_pg_relation_t **snapshot_relations; /* per table, borrowed from the cache */
    tb_pg_position_t snapshot_position;
    /* the stream */
    uint64_t start_lsn;
    uint64_t last_commit; /* the end of the last commit fully read, or where
                           * the stream started: a commit starting before it
                           * is read already */
    bool commit_known;    /* last_commit is a commit's end (tb_pg_position_t) */
    bool resuming;        /* skip what the stored offset covers */
    int64_t resume_xid;
    uint64_t resume_lsn;
    bool in_transaction;
    bool skip_transaction;
    uint32_t xid;
    int64_t commit_us; /* the transaction's commit time, Unix microseconds */
    uint64_t idle_lsn; /* a keepalive's position with nothing in progress */
    /* acknowledgement */
    uint64_t flushable; /* recorded in the store: may be confirmed */
    uint64_t flushed;   /* last confirmed to the server */
    int64_t status_due_ms;
    bool reply_due;
    /* heartbeats */
    char *heartbeat_topic;
    tb_schema_t *heartbeat_key_schema;
    tb_schema_t *heartbeat_value_schema;
    int64_t heartbeat_due_ms;
    tb_pg_lag_t *lag;
    uint64_t server_lsn; /* the end of WAL the server last told */
    /* polls in a row that found nothing to hand over (the wait's back-off) */
    int idle_polls;
    /* a lost connection: started again from the stored offset */
    bool lost;
    int64_t restart_due_ms;
    tb_pgoutput_msg_t msg;
    /* what was logged of columns of types tributary does not map, once each */
    char **noticed;
    size_t nnoticed;
} pg_source_t;

static const char *intern_topic(pg_source_t *s, const char *name)
{
    for (topic_t *t = s->topics; t != NULL; t = t->next) {
        if (strcmp(t->name, name) == 0) {
            return t->name;
        }
    }
    topic_t *t = malloc(sizeof(*t) + strlen(name) + 1);
    if (t == NULL) {
        return NULL;
    }
    strcpy(t->name, name);
    t->next = s->topics;
    s->topics = t;
    return t->name;
}

static json_t *task_configs(const json_t *config, int max_tasks)
{
    (void)max_tasks; /* one slot, one task, as Debezium's */
    return json_pack("[O]", config);
}

/* Logs what becomes of a column whose type tributary does not map (left
 * out, or written opaque), once per column and fate in the task's life. */
static void column_notice(void *arg, const char *column, const char *what)
{
    pg_source_t *s = arg;
    char line[1024];
    snprintf(line, sizeof(line), "column %s: %s", column, what);
    for (size_t i = 0; i < s->nnoticed; i++) {
        if (strcmp(s->noticed[i], line) == 0) {
            return;
        }
    }
    char **grown = realloc(s->noticed, (s->nnoticed + 1) * sizeof(*grown));
    if (grown != NULL) {
        s->noticed = grown;
        s->noticed[s->nnoticed] = strdup(line);
        s->nnoticed += s->noticed[s->nnoticed] != NULL;
    }
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, s->connector, s->task, "%s", line);
}

/* Debezium's heartbeat key and value schemas, version 1. */
static tb_schema_t *heartbeat_schema(const char *name, const char *field, tb_type_t type)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    if (s == NULL || tb_schema_set_name(s, name) != 0 ||
        tb_schema_add_field(s, field, tb_schema_new(type)) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    tb_schema_set_version(s, true, 1);
    return s;
}

static void task_stop(void *opaque);

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    pg_source_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    s->ctx = ctx;
    s->task = ctx->task;
    s->connector = strdup(ctx->connector);
    if (tb_pg_options_parse(config, &s->o, errstr, errstr_size) != 0 ||
        (s->filter = tb_pg_filter_create(&s->o, errstr, errstr_size)) == NULL) {
        goto fail;
    }
    s->o.stopping = ctx->stopping;
    s->source_schema = tb_pg_source_schema();
    s->lag = tb_pg_lag_create(s->connector, s->task);
    s->partition = json_pack("{s:s}", "server", s->o.prefix);
    if (s->o.extended_headers && tb_pg_run_id(s->run_id) != 0) {
        snprintf(errstr, errstr_size,
                 "no random bytes for the run id of the "
                 "__debezium.context.runId header");
        goto fail;
    }
    s->context = (tb_pg_context_t){.logical_name = s->o.prefix, .run_id = s->run_id};
    if (s->o.transaction_metadata) {
        char topic[600];
        snprintf(topic, sizeof(topic), "%s.%s", s->o.prefix, s->o.transaction_topic);
        if ((s->transactions = tb_pg_transactions_create(topic)) == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            goto fail;
        }
    }
    s->events = (tb_pg_events_t){.queue = &s->queue,
                                 .options = &s->o,
                                 .source_schema = s->source_schema,
                                 .transactions = s->transactions,
                                 .notice = column_notice,
                                 .notice_arg = s};
    if (s->o.heartbeat_ms > 0) {
        char topic[300];
        snprintf(topic, sizeof(topic), "__debezium-heartbeat.%s", s->o.prefix);
        s->heartbeat_topic = strdup(topic);
        s->heartbeat_key_schema =
            heartbeat_schema(HEARTBEAT_KEY, "serverName", TB_TYPE_STRING);
        s->heartbeat_value_schema =
            heartbeat_schema(HEARTBEAT_VALUE, "ts_ms", TB_TYPE_INT64);
    }
    if (s->connector == NULL || s->source_schema == NULL || s->partition == NULL ||
        s->lag == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    *out = s;
    return 0;

fail:
    task_stop(s);
    return -1;
}

/* ---------------------------------------------------------------------
 * Start: offsets, publication, slot, and whether to snapshot
 */

static tb_pg_relation_ctx_t relation_ctx(pg_source_t *s)
{
    return (tb_pg_relation_ctx_t){.prefix = s->o.prefix,
                                  .modes = &s->o.modes,
                                  .filter = s->filter,
                                  .source_schema = s->source_schema,
                                  .notice = column_notice,
                                  .notice_arg = s};
}

/* A relation built from the catalog (for the snapshot, or a table a
 * truncate names before any Relation message), cached. */
static tb_pg_relation_t *catalog_relation(pg_source_t *s, const tb_pg_table_t *t,
                                          char *errstr, size_t errstr_size)
{
    tb_pg_column_info_t *info;
    size_t n;
    if (tb_pg_catalog_columns(s->sql, t->oid, &info, &n, errstr, errstr_size) != 0) {
        return NULL;
    }
    tb_pg_relation_ctx_t rctx = relation_ctx(s);
    tb_pg_relation_t *r =
        tb_pg_relation_build(&rctx, t->oid, t->schema_name, t->table_name, info, n, info,
                             n, errstr, errstr_size);
    tb_pg_column_info_free(info, n);
    if (r == NULL || tb_pg_relations_put(&s->relations, r) != 0) {
        return NULL;
    }
    return r;
}

static bool wants_snapshot(const pg_source_t *s, bool stored, bool stored_complete,
                           bool slot_exists)
{
    switch (s->o.snapshot_mode) {
    case TB_PG_SNAPSHOT_ALWAYS:
        return true;
    case TB_PG_SNAPSHOT_NO_DATA:
        return false;
    case TB_PG_SNAPSHOT_WHEN_NEEDED:
        return !stored || !stored_complete || !slot_exists;
    default: /* initial, initial_only */
        return !stored || !stored_complete;
    }
}

static int begin_snapshot(pg_source_t *s, char *errstr, size_t errstr_size)
{
    char exported[128];
    uint64_t lsn;
    if (tb_pg_slot_create(s->repl, s->o.slot, true, &lsn, exported, sizeof(exported),
                          errstr, errstr_size) != 0) {
        return -1;
    }
    s->snapshot_relations = calloc(s->ntables + 1, sizeof(*s->snapshot_relations));
    if (s->snapshot_relations == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    int64_t xid = -1;
    s->snapshot = tb_pg_snapshot_begin(s->sql, exported, s->tables, s->ntables,
                                       s->o.max_batch, &xid, errstr, errstr_size);
    if (s->snapshot == NULL) {
        return -1;
    }
    for (size_t i = 0; i < s->ntables; i++) {
        s->snapshot_relations[i] =
            catalog_relation(s, &s->tables[i], errstr, errstr_size);
        if (s->snapshot_relations[i] == NULL) {
            return -1;
        }
    }
    s->snapshot_position = (tb_pg_position_t){.lsn = lsn,
                                              .tx_id = xid,
                                              .ts_us = tb_wall_ms() * 1000,
                                              .snapshot = true,
                                              .change_event = true};
    s->start_lsn = s->last_commit = lsn;
    s->commit_known = false;
    s->phase = PHASE_SNAPSHOT;
    char at[32];
    tb_pg_lsn_format(lsn, at, sizeof(at));
    TB_LOG_TASK(TB_LOG_INFO, LOGGER, s->connector, s->task,
                "snapshot of %zu tables begins; the stream follows from %s", s->ntables,
                at);
    return 0;
}

static int start_stream(pg_source_t *s, char *errstr, size_t errstr_size)
{
    char at[32];
    if (tb_pg_stream_start(s->repl, s->o.slot, s->o.publication, s->start_lsn, errstr,
                           errstr_size) != 0) {
        return -1;
    }
    s->phase = PHASE_STREAM;
    s->status_due_ms = tb_monotonic_ms() + STATUS_INTERVAL_MS;
    s->heartbeat_due_ms = tb_monotonic_ms() + s->o.heartbeat_ms;
    tb_pg_lsn_format(s->start_lsn, at, sizeof(at));
    TB_LOG_TASK(TB_LOG_INFO, LOGGER, s->connector, s->task,
                "streaming slot %s of publication %s from %s", s->o.slot,
                s->o.publication, at);
    return 0;
}

static int start(pg_source_t *s, char *errstr, size_t errstr_size)
{
    tb_pg_position_t stored;
    json_t *offset = s->ctx->offset_for(s->ctx->runtime, s->partition);
    bool has_stored = offset != NULL && tb_pg_offset_parse(offset, &stored) == 0;
    json_decref(offset);
    bool complete = has_stored && (!stored.snapshot || stored.last_snapshot);
    uint64_t confirmed;
    /* a task that lost its connection keeps trying to connect; one that never
     * had one fails, telling why */
    if ((s->sql = tb_pg_connect(&s->o, false, errstr, errstr_size)) == NULL ||
        (s->repl = tb_pg_connect(&s->o, true, errstr, errstr_size)) == NULL) {
        return -1;
    }
    s->lost = false;
    if (tb_pg_catalog_tables(s->sql, s->filter, &s->tables, &s->ntables, errstr,
                             errstr_size) != 0 ||
        tb_pg_catalog_publication(s->sql, &s->o, s->tables, s->ntables, errstr,
                                  errstr_size) != 0) {
        return -1;
    }
    int slot = tb_pg_catalog_slot(s->sql, &s->o, &confirmed, errstr, errstr_size);
    if (slot < 0) {
        return -1;
    }
    if (wants_snapshot(s, has_stored, complete, slot == 1)) {
        /* nothing after the slot's position was recorded as read, so a slot
         * made again exports a snapshot the stream continues exactly */
        if (slot == 1 &&
            tb_pg_catalog_drop_slot(s->sql, s->o.slot, errstr, errstr_size) != 0) {
            return -1;
        }
        return begin_snapshot(s, errstr, errstr_size);
    }
    if (s->o.snapshot_mode == TB_PG_SNAPSHOT_INITIAL_ONLY) {
        s->phase = PHASE_DONE;
        return 0;
    }
    if (slot == 0 && has_stored) {
        snprintf(errstr, errstr_size,
                 "slot.name: the replication slot %s no longer exists, so the changes "
                 "since the stored offset are lost; set snapshot.mode=when_needed to "
                 "take a new snapshot",
                 s->o.slot);
        return -1;
    }
    if (slot == 0) {
        if (tb_pg_slot_create(s->repl, s->o.slot, false, &s->start_lsn, NULL, 0, errstr,
                              errstr_size) != 0) {
            return -1;
        }
        s->last_commit = s->start_lsn;
        s->commit_known = false;
    } else if (has_stored) {
        s->last_commit = stored.snapshot ? stored.lsn : stored.lsn_commit;
        s->commit_known = !stored.snapshot;
        s->start_lsn = s->last_commit;
        s->resuming = !stored.snapshot;
        s->resume_xid = stored.tx_id;
        s->resume_lsn = stored.lsn;
    } else {
        s->start_lsn = s->last_commit = confirmed;
        s->commit_known = false;
    }
    s->flushable = s->flushed = s->last_commit;
    return start_stream(s, errstr, errstr_size);
}

/* ---------------------------------------------------------------------
 * The snapshot
 */

static int snapshot_step(pg_source_t *s, char *errstr, size_t errstr_size)
{
    const tb_pg_snapshot_row_t *row;
    int produced = 0;
    while (produced < s->o.max_batch) {
        int rc = tb_pg_snapshot_next(s->snapshot, &row, errstr, errstr_size);
        if (rc < 0) {
            return -1;
        }
        if (rc == 0) {
            tb_pg_snapshot_destroy(s->snapshot);
            s->snapshot = NULL;
            TB_LOG_TASK(TB_LOG_INFO, LOGGER, s->connector, s->task, "snapshot done");
            if (s->o.snapshot_mode == TB_PG_SNAPSHOT_INITIAL_ONLY) {
                s->phase = PHASE_DONE;
                return 0;
            }
            s->flushable = s->flushed = s->last_commit;
            return start_stream(s, errstr, errstr_size);
        }
        tb_pg_relation_t *r = s->snapshot_relations[row->table];
        tb_pg_position_t p = s->snapshot_position;
        p.last_snapshot = strcmp(row->marker, "last") == 0;
        p.ts_us = tb_wall_ms() * 1000;
        tb_pg_change_t change = {
            .op = 'r', .after = row->cells, .nafter = row->ncells, .marker = row->marker};
        const char *topic = intern_topic(s, r->topic);
        if (topic == NULL || tb_pg_event_change(&s->events, r, topic, &change, &p, errstr,
                                                errstr_size) != 0) {
            return -1;
        }
        produced++;
    }
    return 0;
}

/* ---------------------------------------------------------------------
 * The stream
 */

static int on_relation(pg_source_t *s, char *errstr, size_t errstr_size)
{
    const tb_pgoutput_msg_t *m = &s->msg;
    if (!tb_pg_filter_table(s->filter, m->nspname, m->relname)) {
        return 0;
    }
    tb_pg_column_info_t *info = NULL, *columns;
    size_t ninfo = 0;
    if (tb_pg_catalog_columns(s->sql, m->relid, &info, &ninfo, errstr, errstr_size) !=
        0) {
        return -1;
    }
    columns = calloc((size_t)m->ncolumns + 1, sizeof(*columns));
    if (columns == NULL) {
        tb_pg_column_info_free(info, ninfo);
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    for (uint16_t i = 0; i < m->ncolumns; i++) {
        columns[i].name = (char *)m->columns[i].name;
        columns[i].type.oid = m->columns[i].type_oid;
        columns[i].type.typmod = m->columns[i].typmod;
    }
    tb_pg_relation_ctx_t rctx = relation_ctx(s);
    tb_pg_relation_t *r =
        tb_pg_relation_build(&rctx, m->relid, m->nspname, m->relname, columns,
                             m->ncolumns, info, ninfo, errstr, errstr_size);
    free(columns); /* its strings were borrowed from the message */
    tb_pg_column_info_free(info, ninfo);
    if (r == NULL || tb_pg_relations_put(&s->relations, r) != 0) {
        return -1;
    }
    return 0;
}

/* A tuple as cells (borrowing the message). */
static tb_pg_cell_t *cells_of(const tb_pg_tuple_t *t)
{
    tb_pg_cell_t *cells = calloc((size_t)t->count + 1, sizeof(*cells));
    for (uint16_t i = 0; cells != NULL && i < t->count; i++) {
        cells[i].data = t->columns[i].kind == 't' ? t->columns[i].data : NULL;
        cells[i].len = t->columns[i].len;
        cells[i].unchanged = t->columns[i].kind == 'u';
    }
    return cells;
}

/* Whether a change at lsn of the current transaction was read before
 * (it is covered by the stored offset). */
static bool already_read(const pg_source_t *s, uint64_t lsn)
{
    return s->resuming && (int64_t)s->xid == s->resume_xid && lsn <= s->resume_lsn;
}

static int on_change(pg_source_t *s, uint64_t lsn, char *errstr, size_t errstr_size)
{
    const tb_pgoutput_msg_t *m = &s->msg;
    static const char *const types[] = {"INSERT", "UPDATE", "DELETE"};
    tb_pg_relation_t *r = tb_pg_relations_find(&s->relations, m->relid);
    if (r == NULL || s->skip_transaction || already_read(s, lsn)) {
        return 0; /* not captured, or already read */
    }
    int kind = m->kind == TB_PGOUTPUT_INSERT ? 0 : m->kind == TB_PGOUTPUT_UPDATE ? 1 : 2;
    tb_pg_position_t p = {.lsn = lsn,
                          .lsn_commit = s->last_commit,
                          .commit_known = s->commit_known,
                          .tx_id = s->xid,
                          .ts_us = s->commit_us,
                          .message_type = types[kind],
                          .change_event = true};
    tb_pg_cell_t *before = m->old_kind != 0 ? cells_of(&m->old_tuple) : NULL;
    tb_pg_cell_t *after = kind != 2 ? cells_of(&m->new_tuple) : NULL;
    tb_pg_change_t change = {.op = "cud"[kind],
                             .before = before,
                             .nbefore = m->old_tuple.count,
                             .after = after,
                             .nafter = m->new_tuple.count,
                             .marker = "false"};
    const char *topic = intern_topic(s, r->topic);
    int rc = -1;
    if (topic == NULL || (m->old_kind != 0 && before == NULL) ||
        (kind != 2 && after == NULL)) {
        snprintf(errstr, errstr_size, "out of memory");
    } else {
        rc = tb_pg_event_change(&s->events, r, topic, &change, &p, errstr, errstr_size);
    }
    free(before);
    free(after);
    return rc;
}

static int on_truncate(pg_source_t *s, uint64_t lsn, char *errstr, size_t errstr_size)
{
    if (s->skip_transaction || already_read(s, lsn)) {
        return 0;
    }
    tb_pg_position_t p = {.lsn = lsn,
                          .lsn_commit = s->last_commit,
                          .commit_known = s->commit_known,
                          .tx_id = s->xid,
                          .ts_us = s->commit_us,
                          .message_type = "TRUNCATE",
                          .change_event = true};
    for (uint32_t i = 0; i < s->msg.nrelids; i++) {
        tb_pg_relation_t *r = tb_pg_relations_find(&s->relations, s->msg.relids[i]);
        const char *topic = r != NULL ? intern_topic(s, r->topic) : NULL;
        if (r != NULL &&
            (topic == NULL ||
             tb_pg_event_truncate(&s->events, r, topic, &p, errstr, errstr_size) != 0)) {
            return -1;
        }
    }
    return 0;
}

/* The BEGIN record of a transaction to be read. Its offset records no
 * change of it (txId -1), so a restart from it reads the whole
 * transaction again. */
static int transaction_begins(pg_source_t *s, uint64_t lsn, char *errstr,
                              size_t errstr_size)
{
    tb_pg_position_t p = {.lsn = s->last_commit,
                          .lsn_commit = s->last_commit,
                          .tx_id = -1,
                          .ts_us = s->commit_us,
                          .message_type = "BEGIN"};
    if (tb_pg_transactions_begin(s->transactions, &s->queue, s->xid, lsn, s->commit_us,
                                 &p) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

/* The END record, whose offset covers the whole transaction. */
static int transaction_ends(pg_source_t *s, uint64_t lsn, char *errstr,
                            size_t errstr_size)
{
    tb_pg_position_t p = {.lsn = lsn,
                          .lsn_commit = s->last_commit,
                          .tx_id = s->xid,
                          .ts_us = s->commit_us,
                          .message_type = "COMMIT"};
    if (tb_pg_transactions_end(s->transactions, &s->queue, lsn, s->commit_us, &p) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

static int on_message(pg_source_t *s, const tb_pg_frame_t *f, char *errstr,
                      size_t errstr_size)
{
    tb_pgoutput_msg_t *m = &s->msg;
    if (tb_pgoutput_decode(f->data, f->data_len, m, errstr, errstr_size) != 0) {
        return -1;
    }
    switch (m->kind) {
    case TB_PGOUTPUT_BEGIN:
        s->in_transaction = true;
        s->xid = m->xid;
        s->commit_us = m->time_us + TB_PG_EPOCH_OFFSET_US;
        /* its commit (m->lsn) starts before the end of the last one read, or
         * before where the stream started: read already */
        s->skip_transaction = m->lsn < s->last_commit;
        if (s->transactions != NULL && !s->skip_transaction) {
            return transaction_begins(s, f->wal_start, errstr, errstr_size);
        }
        return 0;
    case TB_PGOUTPUT_COMMIT: {
        bool read = !s->skip_transaction && m->lsn >= s->last_commit;
        s->in_transaction = false;
        if (read) { /* Debezium's last commit LSN: the end of the commit */
            s->last_commit = m->end_lsn;
            s->commit_known = true;
            tb_pg_lag_commit(s->lag, m->end_lsn, s->commit_us);
        }
        if (s->resuming && (int64_t)s->xid == s->resume_xid) {
            s->resuming = false; /* past the stored transaction */
        }
        if (s->transactions != NULL && read) {
            return transaction_ends(s, f->wal_start, errstr, errstr_size);
        }
        return 0;
    }
    case TB_PGOUTPUT_RELATION:
        return on_relation(s, errstr, errstr_size);
    case TB_PGOUTPUT_INSERT:
    case TB_PGOUTPUT_UPDATE:
    case TB_PGOUTPUT_DELETE:
        return on_change(s, f->wal_start, errstr, errstr_size);
    case TB_PGOUTPUT_TRUNCATE:
        return on_truncate(s, f->wal_start, errstr, errstr_size);
    default: /* Origin, Type (the catalog tells types), Message */
        return 0;
    }
}

/* Confirms what commit() allowed, when it moved, every status interval,
 * and when the server asks. */
static int send_status(pg_source_t *s, char *errstr, size_t errstr_size)
{
    int64_t now = tb_monotonic_ms();
    if (s->flushable <= s->flushed && !s->reply_due && now < s->status_due_ms) {
        return 0;
    }
    if (s->flushable > s->flushed) {
        s->flushed = s->flushable;
    }
    s->reply_due = false;
    s->status_due_ms = now + STATUS_INTERVAL_MS;
    return tb_pg_stream_status(s->repl, s->flushed, false, errstr, errstr_size);
}

/* A heartbeat record, whose offset lets the slot move on past changes
 * that made no record (other tables, empty transactions). */
static int heartbeat(pg_source_t *s)
{
    if (s->heartbeat_topic == NULL || tb_monotonic_ms() < s->heartbeat_due_ms) {
        return 0;
    }
    s->heartbeat_due_ms = tb_monotonic_ms() + s->o.heartbeat_ms;
    uint64_t position = s->last_commit;
    if (!s->in_transaction && s->queue.count == 0 && s->idle_lsn > position) {
        position = s->idle_lsn;
    }
    tb_pg_position_t p = {.lsn = position,
                          .lsn_commit = position,
                          .tx_id = s->xid != 0 ? (int64_t)s->xid : -1,
                          .ts_us = tb_wall_ms() * 1000};
    tb_value_t *key = tb_value_struct(s->heartbeat_key_schema);
    tb_value_t *value = tb_value_struct(s->heartbeat_value_schema);
    if (key == NULL || value == NULL ||
        tb_value_struct_set(key, "serverName",
                            tb_value_string(s->o.prefix, strlen(s->o.prefix))) != 0 ||
        tb_value_struct_set(value, "ts_ms", tb_value_int(TB_TYPE_INT64, tb_wall_ms())) !=
            0) {
        tb_value_free(key);
        tb_value_free(value);
        return -1;
    }
    return tb_pg_queue_push(&s->queue, s->heartbeat_topic, s->heartbeat_key_schema, key,
                            s->heartbeat_value_schema, value, &p);
}

static int stream_step(pg_source_t *s, size_t max, char *errstr, size_t errstr_size)
{
    char *buf;
    int n;
    while (s->queue.count < max &&
           (n = tb_pg_stream_read(s->repl, &buf, errstr, errstr_size)) > 0) {
        tb_pg_frame_t f;
        int rc =
            tb_pg_frame_parse((const uint8_t *)buf, (size_t)n, &f, errstr, errstr_size);
        if (rc == 0 && f.wal_end > s->server_lsn) {
            s->server_lsn = f.wal_end;
        }
        if (rc == 0 && f.kind == 'w') {
            rc = on_message(s, &f, errstr, errstr_size);
        } else if (rc == 0) { /* keepalive */
            s->reply_due = s->reply_due || f.reply_requested;
            if (!s->in_transaction) {
                s->idle_lsn = f.wal_end;
            }
        }
        PQfreemem(buf);
        if (rc != 0) {
            return -1;
        }
    }
    if (n < 0 && s->queue.count < max) {
        s->lost = n == TB_PG_STREAM_LOST;
        return -1;
    }
    if (heartbeat(s) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    if (send_status(s, errstr, errstr_size) != 0) {
        s->lost = true;
        return -1;
    }
    tb_pg_lag_update(s->lag, s->server_lsn, s->flushed, tb_wall_ms() * 1000);
    return 0;
}

/* A connection that broke, or whose statement got no answer in time. */
static bool connection_bad(PGconn *conn)
{
    return conn != NULL && (PQstatus(conn) == CONNECTION_BAD || tb_pg_gave_up(conn));
}

/* Forgets everything read since the stored offset: the connections, the
 * snapshot, the relations and the records not handed over yet. */
static void reset(pg_source_t *s)
{
    tb_pg_snapshot_destroy(s->snapshot);
    s->snapshot = NULL;
    PQfinish(s->repl);
    PQfinish(s->sql);
    s->repl = s->sql = NULL;
    tb_pg_queue_clear(&s->queue);
    tb_pg_relations_clear(&s->relations);
    tb_pg_tables_free(s->tables, s->ntables);
    s->tables = NULL;
    s->ntables = 0;
    free(s->snapshot_relations);
    s->snapshot_relations = NULL;
    s->resuming = s->in_transaction = s->skip_transaction = false;
    s->phase = PHASE_START;
}

/* After a lost connection (and while the server cannot be reached again)
 * the task starts again from the stored offset, once a second. */
static int lost_connection(pg_source_t *s, const char *reason)
{
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, s->connector, s->task,
                "%s; starting again from the stored offset in %d ms", reason,
                RECONNECT_MS);
    reset(s);
    s->restart_due_ms = tb_monotonic_ms() + RECONNECT_MS;
    return 0;
}

/* How long a poll that found nothing waits: 1 ms after the last records,
 * doubling with each empty poll up to poll.interval.ms. The stream is read
 * as the task polls, so a full wait after a momentary lull (the server
 * decoding the next transaction) would leave the socket's buffer full and
 * the WAL sender blocked for most of it. */
static int64_t idle_wait_ms(pg_source_t *s)
{
    int64_t wait = (int64_t)1 << (s->idle_polls < 20 ? s->idle_polls : 20);
    s->idle_polls++;
    return wait < s->o.poll_interval_ms ? wait : s->o.poll_interval_ms;
}

static int poll(void *opaque, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size)
{
    pg_source_t *s = opaque;
    int rc = 0;
    *count = 0;
    if (max > (size_t)s->o.max_batch) {
        max = (size_t)s->o.max_batch;
    }
    if (s->queue.count == 0) {
        snprintf(errstr, errstr_size, "out of memory"); /* unless a step says more */
        switch (s->phase) {
        case PHASE_START:
            if (tb_monotonic_ms() >= s->restart_due_ms) {
                rc = start(s, errstr, errstr_size);
            }
            break;
        case PHASE_SNAPSHOT:
            rc = snapshot_step(s, errstr, errstr_size);
            break;
        case PHASE_STREAM:
            rc = stream_step(s, max, errstr, errstr_size);
            break;
        case PHASE_DONE:
            break;
        }
    }
    if (rc != 0 && (s->lost || connection_bad(s->sql) || connection_bad(s->repl))) {
        rc = lost_connection(s, errstr);
    }
    if (rc != 0) {
        return -1;
    }
    *count =
        tb_pg_queue_drain(&s->queue, out, max, s->partition, s->ctx->offset_every_record,
                          s->o.extended_headers ? &s->context : NULL);
    if (*count == 0) {
        *wake_ms = s->phase == PHASE_DONE ? -1 : idle_wait_ms(s);
    } else {
        s->idle_polls = 0;
    }
    return 0;
}

/* Offsets were recorded: the slot may confirm up to the commits they
 * cover (sent at the next poll). */
static void commit(void *opaque, const json_t *offsets)
{
    pg_source_t *s = opaque;
    size_t i;
    json_t *entry;
    json_array_foreach (offsets, i, entry) {
        tb_pg_position_t p;
        if (!json_equal(json_object_get(entry, "partition"), s->partition) ||
            tb_pg_offset_parse(json_object_get(entry, "offset"), &p) != 0) {
            continue;
        }
        uint64_t done = p.snapshot ? (p.last_snapshot ? p.lsn : 0) : p.lsn_commit;
        if (done > s->flushable) {
            s->flushable = done;
        }
    }
}

static void task_stop(void *opaque)
{
    pg_source_t *s = opaque;
    if (s == NULL) {
        return;
    }
    tb_pg_snapshot_destroy(s->snapshot);
    PQfinish(s->repl);
    PQfinish(s->sql);
    tb_pg_queue_clear(&s->queue);
    tb_pg_relations_clear(&s->relations);
    tb_pg_tables_free(s->tables, s->ntables);
    free(s->snapshot_relations);
    tb_pgoutput_msg_clear(&s->msg);
    tb_schema_decref(s->source_schema);
    tb_pg_transactions_destroy(s->transactions);
    tb_pg_lag_destroy(s->lag);
    tb_schema_decref(s->heartbeat_key_schema);
    tb_schema_decref(s->heartbeat_value_schema);
    free(s->heartbeat_topic);
    json_decref(s->partition);
    tb_pg_filter_destroy(s->filter);
    tb_pg_options_release(&s->o);
    while (s->topics != NULL) {
        topic_t *next = s->topics->next;
        free(s->topics);
        s->topics = next;
    }
    for (size_t i = 0; i < s->nnoticed; i++) {
        free(s->noticed[i]);
    }
    free(s->noticed);
    free(s->connector);
    free(s);
}

static const char *const aliases[] = {"postgres-cdc", "PostgresConnector", NULL};

const tb_plugin_t tb_postgres_source_plugin = {
    .class_name = "io.debezium.connector.postgresql.PostgresConnector",
    .aliases = aliases,
    .kind = TB_PLUGIN_SOURCE,
    .version = TB_PG_DEBEZIUM_VERSION,
    .config = &tb_pg_config_table,
    .refused_keys = tb_pg_refused_keys,
    .validate = tb_pg_config_validate,
    .task_configs = task_configs,
    .task_start = task_start,
    .poll = poll,
    .commit = commit,
    .task_stop = task_stop,
};
