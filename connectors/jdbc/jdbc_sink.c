/*
 * jdbc_sink.c - the JDBC sink plugin (Confluent's
 * io.confluent.connect.jdbc.JdbcSinkConnector): records with a struct
 * value become rows of PostgreSQL or SQLite tables, each put() in one
 * transaction with its offsets (tb_jdbc.h says how that makes it
 * exactly-once).
 *
 * put() writes everything it is given before it returns: nothing is
 * buffered, so flush() and close() have nothing to do. A record that cannot
 * be a row, or that the database refuses, goes to record_failed before its
 * transaction commits, and under errors.tolerance=none the put stops there
 * (jdbc_writer.c says how). A lost connection (or a serialization conflict)
 * is retried: put() returns TB_RESULT_RETRY after asking the runtime to
 * wait retry.backoff.ms, at most max.retries times in a row; the retry
 * connects again and writes the same records, none of them twice.
 * Debezium's keys name the two flush.retry.delay.ms and flush.max.retries,
 * and retry a connection lost while writing only with
 * connection.restart.on.errors=true: else it fails the task.
 *
 * Connecting holds no pool thread for long (jdbc_connect.c): task_start,
 * open() and put() each take one bounded step of it; while it is not done,
 * open() and put() return TB_RESULT_RETRY, and the runtime asks again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"
#include "core/tb_log.h"

#define LOGGER "tributary.task"

typedef struct {
    const tb_task_context_t *ctx;
    tb_jdbc_settings_t settings;
    tb_jdbc_writer_t writer; /* its conn is NULL while disconnected */
    tb_jdbc_connecting_t connecting;
    tb_jdbc_kafka_schemas_t kafka;
    tb_jdbc_metrics_t metrics;
    tb_jdbc_outage_t outage; /* failed tries since the last that worked */
    int retries_left;
    tb_jdbc_row_t *rows;
    size_t row_cap;
} jdbc_task_t;

/* How long one step of connecting may hold the caller's thread. */
#define CONNECT_STEP_MS 200

/* One step of connecting, when not connected, then makes sure of the
 * offsets table; PENDING (*wait_ms: when to ask again) until connected. */
static tb_jdbc_rc_t connect_step(jdbc_task_t *t, int64_t *wait_ms, char *errstr,
                                 size_t errstr_size)
{
    tb_jdbc_writer_t *w = &t->writer;
    if (w->conn != NULL) {
        return TB_JDBC_OK;
    }
    tb_jdbc_rc_t rc = tb_jdbc_connect_step(&t->connecting, CONNECT_STEP_MS, &w->conn,
                                           wait_ms, errstr, errstr_size);
    if (rc != TB_JDBC_OK) {
        return rc;
    }
    tb_jdbc_ddl_forget(&w->tables); /* the tables may have changed meanwhile */
    rc = tb_jdbc_offsets_prepare(w, errstr, errstr_size);
    if (rc != TB_JDBC_OK) {
        w->dialect->disconnect(w->conn);
        w->conn = NULL;
        return rc;
    }
    char connected[1200];
    snprintf(connected, sizeof(connected),
             "writing to %s (%s), offsets in its table " TB_JDBC_OFFSETS_TABLE,
             t->settings.shown_url, w->dialect->name);
    if (!tb_jdbc_outage_over(&t->outage, connected)) {
        TB_LOG_TASK(TB_LOG_INFO, LOGGER, t->ctx->connector, t->ctx->task, "%s",
                    connected);
    }
    return TB_JDBC_OK;
}

static void disconnect(jdbc_task_t *t)
{
    t->writer.dialect->disconnect(t->writer.conn);
    t->writer.conn = NULL;
}

static json_t *jdbc_task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_array_append_new(list, json_deep_copy(config));
    }
    return list;
}

static void jdbc_task_stop(void *opaque)
{
    jdbc_task_t *t = opaque;
    if (t == NULL) {
        return;
    }
    if (t->writer.dialect != NULL) {
        disconnect(t);
    }
    tb_jdbc_connecting_cancel(&t->connecting);
    tb_jdbc_writer_clear(&t->writer);
    tb_jdbc_metrics_release(&t->metrics);
    tb_schema_decref(t->kafka.topic);
    tb_schema_decref(t->kafka.partition);
    tb_schema_decref(t->kafka.offset);
    free(t->rows);
    tb_jdbc_settings_clear(&t->settings);
    free(t);
}

typedef int (*settings_init_fn)(tb_jdbc_settings_t *settings, const json_t *config,
                                char *errstr, size_t errstr_size);

static int task_start(const tb_task_context_t *ctx, const json_t *config,
                      settings_init_fn settings_init, void **out, char *errstr,
                      size_t errstr_size)
{
    jdbc_task_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    t->ctx = ctx;
    if (settings_init(&t->settings, config, errstr, errstr_size) != 0) {
        goto fail;
    }
    t->settings.stopping = ctx->stopping;
    t->writer = (tb_jdbc_writer_t){.dialect = t->settings.url.kind == TB_JDBC_POSTGRES
                                                  ? &tb_jdbc_postgres
                                                  : &tb_jdbc_sqlite,
                                   .settings = &t->settings,
                                   .connector = ctx->connector,
                                   .ctx = ctx,
                                   .metrics = &t->metrics};
    tb_jdbc_metrics_take(&t->metrics, ctx->connector, ctx->task);
    tb_jdbc_outage_init(&t->outage, ctx->connector, ctx->task);
    t->kafka = (tb_jdbc_kafka_schemas_t){.topic = tb_schema_new(TB_TYPE_STRING),
                                         .partition = tb_schema_new(TB_TYPE_INT32),
                                         .offset = tb_schema_new(TB_TYPE_INT64)};
    t->retries_left = t->settings.max_retries;
    if (t->kafka.topic == NULL || t->kafka.partition == NULL || t->kafka.offset == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    /* the first step: a reachable server with wrong credentials fails the
     * task at once; an unreachable one is tried again by open() and put() */
    tb_jdbc_connecting_init(&t->connecting, t->writer.dialect, &t->settings, ctx->limits,
                            ctx->connector, ctx->task);
    int64_t wait_ms;
    tb_jdbc_rc_t rc = connect_step(t, &wait_ms, errstr, errstr_size);
    if (rc == TB_JDBC_FATAL || rc == TB_JDBC_LOST) {
        goto fail;
    }
    *out = t;
    return 0;

fail:
    jdbc_task_stop(t);
    return -1;
}

/* After a failed put: a retriable failure is retried (the runtime waits
 * retry.backoff.ms and puts the same records again) until max.retries in a
 * row are spent, each retry told to the outage (which logs what the
 * operator needs) and an empty errstr to the runtime. A connection lost
 * while writing is retriable only when the settings reconnect. Returns
 * what put() returns. */
static int after_failure(jdbc_task_t *t, tb_jdbc_rc_t rc, const char *what, char *errstr,
                         size_t errstr_size)
{
    const tb_jdbc_settings_t *s = &t->settings;
    bool writing = t->writer.conn != NULL; /* not connecting */
    char reason[1024];
    snprintf(reason, sizeof(reason), "%s", errstr);
    if (rc == TB_JDBC_FATAL) {
        snprintf(errstr, errstr_size, "%s %s failed: %s", what, s->shown_url, reason);
        return -1;
    }
    disconnect(t);
    if (rc == TB_JDBC_LOST && writing && !s->reconnect) {
        snprintf(errstr, errstr_size,
                 "%s %s failed: the connection was lost, and "
                 "connection.restart.on.errors=false does not open it again (true "
                 "would, retrying up to %s=%d times): %s",
                 what, s->shown_url, s->retries_key, s->max_retries, reason);
        return -1;
    }
    if (t->retries_left <= 0) {
        snprintf(errstr, errstr_size, "%s %s failed and %s=%d retries are spent: %s",
                 what, s->shown_url, s->retries_key, s->max_retries, reason);
        return -1;
    }
    t->retries_left--;
    tb_series_add(t->metrics.retries, 1);
    t->ctx->retry_after(t->ctx->runtime, s->retry_backoff_ms);
    snprintf(errstr, errstr_size,
             "%s %s failed, retrying in %lld ms (%s; %d of %s=%d left): %s", what,
             s->shown_url, (long long)s->retry_backoff_ms, s->backoff_key,
             t->retries_left, s->retries_key, s->max_retries, reason);
    tb_jdbc_outage_failed(&t->outage, errstr);
    errstr[0] = '\0';
    return TB_RESULT_RETRY;
}

/* Builds the rows of records into t->rows (*n of them); a record that
 * cannot be a row goes to the writer's failures, in their order. -1 on no
 * memory. */
static int build_rows(jdbc_task_t *t, const tb_sink_record_t *records, size_t count,
                      size_t *n)
{
    char reason[512];
    *n = 0;
    t->writer.failure_count = 0;
    if (count > t->row_cap) {
        tb_jdbc_row_t *grown = realloc(t->rows, count * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        t->rows = grown;
        t->row_cap = count;
    }
    for (size_t i = 0; i < count; i++) {
        int built = tb_jdbc_row_build(&t->settings, &t->kafka, &records[i], &t->rows[*n],
                                      reason, sizeof(reason));
        if (built == 0) {
            t->rows[(*n)++].record = i;
        } else if (built == -1 && tb_jdbc_writer_fail(&t->writer, i, reason) != 0) {
            return -1;
        } /* 1: writes nothing, and is done with */
    }
    return 0;
}

static int jdbc_put(void *opaque, const tb_sink_record_t *records, size_t count,
                    char *errstr, size_t errstr_size)
{
    jdbc_task_t *t = opaque;
    tb_jdbc_writer_t *w = &t->writer;
    size_t n = 0;
    int64_t wait_ms = 0;
    tb_jdbc_rc_t rc = connect_step(t, &wait_ms, errstr, errstr_size);
    if (rc == TB_JDBC_PENDING) {
        /* not a failure: max.retries is not spent on it, and only the
         * outage's notices are logged, not each step */
        tb_jdbc_outage_failed(&t->outage, errstr);
        errstr[0] = '\0';
        t->ctx->retry_after(t->ctx->runtime, wait_ms);
        return TB_RESULT_RETRY;
    }
    if (rc == TB_JDBC_OK && build_rows(t, records, count, &n) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        rc = TB_JDBC_FATAL;
    } else if (rc == TB_JDBC_OK) {
        rc = tb_jdbc_write(w, records, count, t->rows, n, errstr, errstr_size);
    }
    for (size_t i = 0; i < n; i++) {
        tb_jdbc_row_clear(&t->rows[i]);
    }
    if (rc != TB_JDBC_OK && rc != TB_JDBC_STOPPED) {
        return after_failure(t, rc, "writing to", errstr, errstr_size);
    }
    t->retries_left = t->settings.max_retries;
    if (w->skipped > 0) {
        TB_LOG_TASK(TB_LOG_INFO, LOGGER, t->ctx->connector, t->ctx->task,
                    "%zu records were written before (their offsets are in the table) "
                    "and were not written again",
                    w->skipped);
    }
    return rc == TB_JDBC_OK ? 0 : -1;
}

/* The offsets the table holds for the partitions opened. */
static int jdbc_open(void *opaque, tb_sink_partition_t *partitions, size_t count,
                     char *errstr, size_t errstr_size)
{
    jdbc_task_t *t = opaque;
    int64_t wait_ms;
    tb_jdbc_rc_t rc = connect_step(t, &wait_ms, errstr, errstr_size);
    if (rc == TB_JDBC_PENDING) {
        return TB_RESULT_RETRY; /* the runtime opens them again, with backoff */
    }
    if (rc == TB_JDBC_OK) {
        rc = tb_jdbc_offsets_read(&t->writer, partitions, count, errstr, errstr_size);
    }
    if (rc == TB_JDBC_OK) {
        return 0;
    }
    /* the runtime opens the partitions again later, with its own backoff */
    char reason[1024];
    snprintf(reason, sizeof(reason), "%s", errstr);
    snprintf(errstr, errstr_size, "reading the offsets table of %s failed: %s",
             t->settings.shown_url, reason);
    if (rc == TB_JDBC_FATAL) {
        return -1;
    }
    disconnect(t);
    return TB_RESULT_RETRY;
}

/* An operator's change of the offsets: made in the offsets table, since
 * open() takes each partition's start from there. */
static int alter_offsets(const tb_sink_offsets_change_t *change,
                         settings_init_fn settings_init, char *errstr, size_t errstr_size)
{
    tb_jdbc_settings_t settings = {0};
    tb_jdbc_rc_t rc = TB_JDBC_FATAL;
    char reason[1024] = "";
    if (settings_init(&settings, change->config, errstr, errstr_size) != 0) {
        tb_jdbc_settings_clear(&settings);
        return -1;
    }
    tb_jdbc_writer_t w = {.dialect = settings.url.kind == TB_JDBC_POSTGRES
                                         ? &tb_jdbc_postgres
                                         : &tb_jdbc_sqlite,
                          .settings = &settings,
                          .connector = change->connector};
    w.conn = tb_jdbc_connect_blocking(w.dialect, &settings, change->limits, &rc, reason,
                                      sizeof(reason));
    if (w.conn != NULL) {
        rc = tb_jdbc_offsets_prepare(&w, reason, sizeof(reason));
    }
    if (rc == TB_JDBC_OK) {
        rc = tb_jdbc_offsets_change(&w, change->offsets, reason, sizeof(reason));
    }
    if (rc != TB_JDBC_OK) {
        snprintf(errstr, errstr_size, "changing the offsets table of %s failed: %s",
                 settings.shown_url, reason);
    } else {
        TB_LOG_TASK(TB_LOG_INFO, LOGGER, change->connector, -1,
                    "offsets %s in the table " TB_JDBC_OFFSETS_TABLE " of %s",
                    change->offsets != NULL ? "altered" : "reset", settings.shown_url);
    }
    w.dialect->disconnect(w.conn);
    tb_jdbc_writer_clear(&w);
    tb_jdbc_settings_clear(&settings);
    return rc == TB_JDBC_OK ? 0 : -1;
}

static int jdbc_alter_offsets(const tb_sink_offsets_change_t *change, char *errstr,
                              size_t errstr_size)
{
    return alter_offsets(change, tb_jdbc_settings_init, errstr, errstr_size);
}

static int debezium_alter_offsets(const tb_sink_offsets_change_t *change, char *errstr,
                                  size_t errstr_size)
{
    return alter_offsets(change, tb_jdbc_debezium_settings_init, errstr, errstr_size);
}

static int jdbc_task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                           char *errstr, size_t errstr_size)
{
    return task_start(ctx, config, tb_jdbc_settings_init, out, errstr, errstr_size);
}

static int debezium_task_start(const tb_task_context_t *ctx, const json_t *config,
                               void **out, char *errstr, size_t errstr_size)
{
    return task_start(ctx, config, tb_jdbc_debezium_settings_init, out, errstr,
                      errstr_size);
}

static const char *const jdbc_sink_aliases[] = {"jdbc-sink", "JdbcSink", NULL};

const tb_plugin_t tb_jdbc_sink_plugin = {
    .class_name = "io.confluent.connect.jdbc.JdbcSinkConnector",
    .aliases = jdbc_sink_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "0.1.0",
    .config = &tb_jdbc_sink_table,
    .validate = tb_jdbc_sink_validate,
    .task_configs = jdbc_task_configs,
    .task_start = jdbc_task_start,
    .typed = true,
    .open = jdbc_open,
    .alter_offsets = jdbc_alter_offsets,
    .put = jdbc_put,
    .task_stop = jdbc_task_stop,
};

static const char *const debezium_aliases[] = {"debezium-jdbc-sink", NULL};

/* Debezium's keys over the same engine (jdbc_debezium.c). */
const tb_plugin_t tb_jdbc_debezium_plugin = {
    .class_name = "io.debezium.connector.jdbc.JdbcSinkConnector",
    .aliases = debezium_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "0.1.0",
    .config = &tb_jdbc_debezium_table,
    .validate = tb_jdbc_debezium_validate,
    .refused_keys = tb_jdbc_debezium_refused_keys,
    .task_configs = jdbc_task_configs,
    .task_start = debezium_task_start,
    .typed = true,
    .open = jdbc_open,
    .alter_offsets = debezium_alter_offsets,
    .put = jdbc_put,
    .task_stop = jdbc_task_stop,
};
