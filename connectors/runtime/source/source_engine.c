/*
 * The source engine: polls the plugin, produces its records through
 * librdkafka, and records a source offset only once that record and every
 * earlier record of the task were acknowledged (at-least-once with no gaps
 * across a crash).
 *
 * Produced records are numbered; their source offsets wait in a ring indexed
 * by that number until their delivery reports arrive. The ring's head moves
 * over acknowledged records in order and folds their offsets into the set to
 * record at the next flush. A record Kafka refused stops the head for good
 * unless errors.tolerance=all lets it go (counted, logged, and sent to the
 * dead letter queue when one is configured): the task fails, and its
 * restart sends the record again.
 *
 * In transactions (exactly.once.support=required, or requested on a worker
 * with exactly.once.source.support=enabled), each polled batch instead goes to
 * Kafka in one transaction together with the source offsets it reaches,
 * written to the offsets topic (source_transactions.c): the records and
 * their offsets are committed atomically, and a restarted task fences its
 * predecessor (init_transactions) and resumes exactly after the last
 * committed batch.
 *
 * This file starts, steps and stops the engine; source_engine_internal.h
 * lists the files of the other parts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/source/source_engine_internal.h"
#include "connectors/runtime/source/tb_upsert.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

void tb_source_free_record(tb_source_record_t *record)
{
    if (!record->bytes_borrowed) {
        free(record->key);
        free(record->value);
    }
    /* most records have no Connect data and no headers: no calls for them */
    if (record->key_schema != NULL || record->key_data != NULL ||
        record->value_schema != NULL || record->value_data != NULL) {
        tb_schema_decref(record->key_schema);
        tb_value_free(record->key_data);
        tb_schema_decref(record->value_schema);
        tb_value_free(record->value_data);
    }
    json_decref(record->source_partition);
    json_decref(record->source_offset);
    if (record->headers != NULL && !record->bytes_borrowed) {
        tb_headers_free(record->headers, record->header_count);
    }
    memset(record, 0, sizeof(*record));
}

/* Starts the plugin: an exactly-once task's once the offsets its
 * predecessors committed are known. */
int tb_source_start_plugin(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    if (tb_task_start_plugin(engine->env, &engine->ctx, &engine->plugin_task, errstr,
                             errstr_size) != 0) {
        engine->plugin_task = NULL;
        return -1;
    }
    if (engine->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", engine->failure);
        return -1;
    }
    if (engine->transactional &&
        tb_source_txn_started(engine, errstr, errstr_size) != 0) {
        return -1;
    }
    return 0;
}

static int source_start(const tb_task_env_t *env, void **out, char *errstr,
                        size_t errstr_size)
{
    source_engine_t *engine = calloc(1, sizeof(*engine));
    json_t *props = tb_client_props_resolved(env->client, TB_CLIENT_PRODUCER,
                                             env->connector_config, errstr, errstr_size);
    const tb_connector_settings_t *settings = &env->framework;
    char client_id[300];

    engine->env = env;
    if (props == NULL) {
        free(engine);
        return -1;
    }
    engine->ctx = (tb_task_context_t){.connector = env->connector,
                                      .task = env->id,
                                      .offset_for = tb_source_stored_offset,
                                      .runtime = engine};
    engine->retry = tb_task_retry_from(settings);
    engine->tolerate_errors = settings->errors_tolerance == TB_ERRORS_TOLERANCE_ALL;
    engine->ring = calloc(RING_SIZE, sizeof(*engine->ring));
    engine->committable = json_object();
    engine->topics = json_object();
    engine->error_series = json_object();
    tb_task_metrics_take(&engine->metrics, env->connector, env->id, 0);
    tb_source_metrics_take(&engine->source_metrics, env->connector, env->id);
    engine->last_flush_ms = tb_monotonic_ms();
    snprintf(client_id, sizeof(client_id), "connector-producer-%s-%d", env->connector,
             env->id);
    json_object_set_new(props, "client.id", json_string(client_id));
    if (json_object_get(props, "enable.idempotence") == NULL) {
        json_object_set_new(props, "enable.idempotence", json_string("true"));
    }
    if (strcmp(settings->write_mode, "upsert") == 0) {
        engine->primary_key = settings->primary_key;
    }
    const char *header = settings->message_id_header;
    engine->message_id_header = header != NULL && header[0] != '\0' ? header : NULL;
    engine->transactional =
        tb_connector_config_transactional(settings, env->exactly_once_available);
    engine->ctx.offset_every_record =
        engine->message_id_header != NULL || engine->transactional;
    if (engine->transactional &&
        tb_source_txn_setup(engine, props, errstr, errstr_size) != 0) {
        goto fail;
    }
    engine->key_converter = tb_task_converter_create(env, "key", errstr, errstr_size);
    engine->value_converter =
        engine->key_converter != NULL
            ? tb_task_converter_create(env, "value", errstr, errstr_size)
            : NULL;
    if (engine->value_converter == NULL ||
        tb_task_dlq_create(env, &engine->dlq, errstr, errstr_size) != 0 ||
        tb_task_chain_create(env, &engine->chain, errstr, errstr_size) != 0) {
        goto fail;
    }
    tb_task_describe(env, &engine->metrics, engine->key_converter,
                     engine->value_converter, engine->chain);
    engine->bytes_as_polled = engine->primary_key == NULL && engine->chain == NULL &&
                              tb_converter_passthrough(engine->key_converter) &&
                              tb_converter_passthrough(engine->value_converter);
    if (tb_source_producer_open(engine, props, errstr, errstr_size) != 0 ||
        (engine->transactional &&
         tb_source_txn_producer_ready(engine, errstr, errstr_size) != 0)) {
        goto fail;
    }
    /* an exactly-once task starts its plugin in its steps, once fenced and
     * its offsets read (source_transactions.c) */
    if (!engine->transactional &&
        tb_source_start_plugin(engine, errstr, errstr_size) != 0) {
        goto fail;
    }
    json_decref(props);
    *out = engine;
    return 0;

fail:
    json_decref(props);
    tb_source_engine.stop(engine);
    return -1;
}

/* Replaces *data by what converter makes of it (nothing to do for a
 * pass-through converter). A typed side (schema, typed_data: the plugin's
 * or the chain's, both released unless the converter asks to be tried
 * again) is written by the converter's typed form instead. Returns
 * -1 with errstr on failure. */
static int convert(tb_converter_t *converter, const char *topic, tb_data_kind_t kind,
                   bool typed, tb_schema_t **schema, tb_value_t **typed_data, void **data,
                   size_t *len, char *errstr, size_t errstr_size)
{
    void *out = NULL;
    size_t out_len = 0;
    if (!typed && tb_converter_passthrough(converter)) {
        return 0;
    }
    int rc = typed ? tb_converter_from_typed(converter, topic, *schema, *typed_data, &out,
                                             &out_len, errstr, errstr_size)
                   : tb_converter_from_plugin_topic(converter, topic, kind, *data, *len,
                                                    &out, &out_len, errstr, errstr_size);
    if (typed && rc != TB_RESULT_RETRY) { /* else kept for the next attempt */
        tb_schema_decref(*schema);
        tb_value_free(*typed_data);
        *schema = NULL;
        *typed_data = NULL;
    }
    if (rc != 0) {
        return rc;
    }
    free(*data);
    *data = out;
    *len = out_len;
    return 0;
}

void tb_source_count_polled(source_engine_t *engine)
{
    size_t bytes = 0;
    for (size_t i = 0; i < engine->batch_len; i++) {
        bytes += engine->batch[i].key_len + engine->batch[i].value_len;
    }
    tb_series_add(engine->metrics.batches, 1);
    tb_series_observe(engine->metrics.batch_records, (double)engine->batch_len);
    tb_series_add(engine->metrics.records_read, (double)engine->batch_len);
    tb_series_add(engine->metrics.bytes, (double)bytes);
}

/* A converter that cannot convert now (TB_RESULT_RETRY): the record
 * waits for the next attempt under errors.retry.*, or its retries are spent
 * (reason then says so too). */
static bool wait_for_converter(source_engine_t *engine, const char *stage,
                               const tb_source_record_t *record, char *reason,
                               size_t reason_size)
{
    int64_t delay = tb_task_retry_next(&engine->retry, reason, reason_size);
    if (delay < 0) {
        return false;
    }
    tb_task_metrics_retry(&engine->metrics);
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector, engine->env->id,
                "stage %s cannot convert a record for topic %s now, trying again in "
                "%lld ms: %s",
                stage, record->topic, (long long)delay, reason);
    engine->retry_at_ms = tb_monotonic_ms() + delay;
    return true;
}

/* A copy of the n bytes at data, NUL-terminated (NULL for NULL). */
static void *copy_bytes(const void *data, size_t n)
{
    char *copy = data != NULL ? malloc(n + 1) : NULL;
    if (copy != NULL) {
        memcpy(copy, data, n);
        copy[n] = '\0';
    }
    return copy;
}

/* Makes a record's borrowed key, value and headers its own, for the steps
 * that free what they replace (upsert, transforms, converters). */
static void own_bytes(tb_source_record_t *record)
{
    if (record->bytes_borrowed) {
        record->key = copy_bytes(record->key, record->key_len);
        record->value = copy_bytes(record->value, record->value_len);
        if (record->headers != NULL) {
            record->headers = tb_headers_copy(record->headers, record->header_count, 0);
            record->header_count = record->headers != NULL ? record->header_count : 0;
        }
        record->bytes_borrowed = false;
    }
}

/* Reshapes (upsert) and converts a polled record's key and value. A record
 * that cannot be fails the task, or with errors.tolerance=all is skipped and
 * logged (its source offset still advances once earlier records are
 * acknowledged). A converter that asks to try again later makes it WAIT,
 * with what was done kept in engine->reshaped and engine->done. */
static disposition_t prepare_record(source_engine_t *engine, tb_source_record_t *record)
{
    char reason[512];
    const char *stage = NULL;
    bool *done = engine->done;
    bool *typed = engine->typed;
    bool reshaped = engine->reshaped;
    engine->reshaped = true;
    own_bytes(record);
    if (!reshaped) {
        typed[TB_SIDE_KEY] = typed[TB_SIDE_VALUE] = record->typed;
    }
    if (!reshaped && engine->primary_key != NULL) {
        tb_upsert_result_t result =
            tb_upsert_apply(engine->primary_key, record, reason, sizeof(reason));
        if (result == TB_UPSERT_SKIP) {
            return SKIP;
        }
        if (result == TB_UPSERT_INVALID) {
            stage = "TRANSFORMATION";
        }
    }
    int rc = 0;
    const char *failed_class = NULL;
    if (!reshaped && stage == NULL && engine->chain != NULL) {
        tb_converter_t *const converters[2] = {engine->key_converter,
                                               engine->value_converter};
        tb_transform_failure_t failure;
        rc = tb_source_transform(engine->chain, converters, record, typed, &failure);
        if (rc == TB_RESULT_DROPPED) {
            return SKIP; /* filtered out */
        }
        if (rc == -1) {
            stage = failure.stage;
            failed_class = failure.class_name;
            snprintf(reason, sizeof(reason), "%.400s (%s)", failure.reason, failed_class);
        }
    }
    if (stage == NULL && !done[TB_SIDE_KEY]) {
        rc = convert(engine->key_converter, record->topic, record->key_kind,
                     typed[TB_SIDE_KEY], &record->key_schema, &record->key_data,
                     &record->key, &record->key_len, reason, sizeof(reason));
        done[TB_SIDE_KEY] = rc == 0;
        stage = rc != 0 ? "KEY_CONVERTER" : NULL;
    }
    if (stage == NULL && !done[TB_SIDE_VALUE]) {
        rc = convert(engine->value_converter, record->topic, record->value_kind,
                     typed[TB_SIDE_VALUE], &record->value_schema, &record->value_data,
                     &record->value, &record->value_len, reason, sizeof(reason));
        done[TB_SIDE_VALUE] = rc == 0;
        stage = rc != 0 ? "VALUE_CONVERTER" : NULL;
    }
    if (stage == NULL) {
        return PRODUCE;
    }
    /* not the record's fault (the schema registry did not answer) */
    if (rc == TB_RESULT_RETRY &&
        wait_for_converter(engine, stage, record, reason, sizeof(reason))) {
        return WAIT;
    }
    tb_task_metrics_record_error(&engine->metrics);
    tb_series_add(engine->metrics.records_dropped, engine->tolerate_errors ? 1 : 0);
    if (engine->tolerate_errors) {
        TB_LOG_TASK(
            TB_LOG_WARN, "tributary.task", engine->env->connector, engine->env->id,
            "a record for topic %s skipped in stage %s (errors.tolerance=all): %s",
            record->topic, stage, reason);
        return SKIP;
    }
    if (engine->failure[0] == '\0') {
        snprintf(engine->failure, sizeof(engine->failure),
                 "a record of task %s-%d for topic %s failed in stage %s: %s",
                 engine->env->connector, engine->env->id, record->topic, stage, reason);
    }
    return FAILED;
}

int64_t tb_source_prepare_batch(source_engine_t *engine)
{
    int64_t wait = engine->retry_at_ms - tb_monotonic_ms();
    if (engine->prepared < engine->batch_len && wait > 0) {
        return wait;
    }
    while (engine->prepared < engine->batch_len) {
        tb_source_record_t *record = &engine->batch[engine->prepared];
        if (engine->bytes_as_polled && !record->typed) {
            engine->disposition[engine->prepared++] = PRODUCE; /* nothing to change */
            continue;
        }
        disposition_t disposition = prepare_record(engine, record);
        if (disposition == WAIT) {
            wait = engine->retry_at_ms - tb_monotonic_ms();
            return wait > 0 ? wait : 1;
        }
        engine->disposition[engine->prepared++] = disposition;
        engine->reshaped = engine->done[TB_SIDE_KEY] = engine->done[TB_SIDE_VALUE] =
            false;
        tb_task_retry_reset(&engine->retry);
    }
    return 0;
}

static int64_t source_step(void *opaque, bool paused, char *errstr, size_t errstr_size)
{
    source_engine_t *engine = opaque;
    int64_t flush_due = engine->last_flush_ms + engine->env->offset_flush_interval_ms;
    int64_t wake_ms = -1;

    if (engine->transactional) {
        return tb_source_transactional_step(engine, paused, errstr, errstr_size);
    }
    tb_source_serve_reports(engine);
    tb_source_count_delivered(engine);
    if (engine->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", engine->failure);
        return TB_TASK_STEP_FAILED;
    }
    tb_source_advance_head(engine);
    if (tb_monotonic_ms() >= flush_due &&
        tb_source_flush_offsets(engine, errstr, errstr_size) != 0) {
        return TB_TASK_STEP_FAILED;
    }
    flush_due = engine->last_flush_ms + engine->env->offset_flush_interval_ms;
    int64_t until_flush = flush_due - tb_monotonic_ms() + 1;
    if (paused) {
        return until_flush;
    }
    if (!tb_source_produce_batch(engine)) {
        return until_flush < 100 ? until_flush : 100; /* wait for room */
    }
    /* records whose conversion waits for its retry */
    int64_t wait = tb_source_prepare_batch(engine);
    if (engine->batch_len > 0) {
        tb_source_produce_batch(engine);
        return wait > 0 ? (wait < until_flush ? wait : until_flush) : TB_POOL_RUN_AGAIN;
    }
    size_t room = RING_SIZE - (size_t)(engine->next_seq - engine->head_seq);
    size_t max = room < POLL_BATCH ? room : POLL_BATCH;
    if (engine->env->plugin->poll != NULL && max > 0) {
        int64_t started = tb_monotonic_us();
        if (engine->env->plugin->poll(engine->plugin_task, engine->batch, max,
                                      &engine->batch_len, &wake_ms, errstr,
                                      errstr_size) != 0) {
            return TB_TASK_STEP_FAILED;
        }
        tb_series_observe(engine->metrics.batch_seconds,
                          (double)(tb_monotonic_us() - started) / 1e6);
    }
    bool polled = engine->batch_len > 0;
    if (polled) {
        tb_source_count_polled(engine);
        wait = tb_source_prepare_batch(engine);
        tb_source_produce_batch(engine);
    }
    /* the records just produced count from now on, as in Connect from their
     * poll */
    tb_active_records_set(&engine->source_metrics.in_flight,
                          (double)(engine->next_seq - engine->head_seq));
    if (polled) {
        return wait > 0 ? (wait < until_flush ? wait : until_flush) : TB_POOL_RUN_AGAIN;
    }
    if (wake_ms < 0 || wake_ms > until_flush) {
        return until_flush;
    }
    return wake_ms > 0 ? wake_ms : 1;
}

static void source_stop(void *opaque)
{
    source_engine_t *engine = opaque;
    char errstr[512];
    if (engine == NULL) {
        return;
    }
    /* the flush and the producer's destroy share the stop's bound; an
     * exactly-once task's open transaction is aborted by the next instance,
     * so it is not flushed */
    int64_t deadline_ms = tb_monotonic_ms() + engine->env->shutdown_timeout_ms;
    if (engine->lane != NULL) {
        /* its own records only: the shared producer goes on for the others */
        tb_source_shared_wait(engine, deadline_ms);
    } else if (engine->rk != NULL && !engine->transactional) {
        engine->served_us =
            tb_monotonic_us(); /* the flush's reports: timed at its start */
        rd_kafka_flush(engine->rk, (int)engine->env->shutdown_timeout_ms);
    }
    if (engine->rk != NULL && !engine->transactional) {
        tb_source_count_delivered(engine);
        tb_source_advance_head(engine);
        if (tb_source_flush_offsets(engine, errstr, sizeof(errstr)) != 0) {
            TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", engine->env->connector,
                        engine->env->id, "recording offsets at stop failed: %s", errstr);
        }
        if (engine->next_seq > engine->head_seq) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector,
                        engine->env->id,
                        "the offsets of the last %llu records are not recorded (one "
                        "was refused, or not acknowledged within "
                        "task.shutdown.graceful.timeout.ms); they will be sent again",
                        (unsigned long long)(engine->next_seq - engine->head_seq));
        }
    }
    if (engine->plugin_task != NULL) {
        engine->env->plugin->task_stop(engine->plugin_task);
    }
    tb_source_txn_destroy(engine); /* an open transaction is aborted by the next */
    for (size_t i = engine->batch_pos; i < engine->batch_len; i++) {
        tb_source_free_record(&engine->batch[i]);
    }
    if (engine->rkt != NULL) {
        rd_kafka_topic_destroy(engine->rkt);
    }
    bool destroyed = engine->lane != NULL ? tb_source_shared_leave(engine, deadline_ms)
                     : engine->rk != NULL
                         ? tb_source_producer_destroy(engine, deadline_ms)
                         : true;
    if (!destroyed) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector,
                    engine->env->id,
                    "destroying the producer was cut short after "
                    "task.shutdown.graceful.timeout.ms=%lld ms: librdkafka still waits "
                    "for a broker that does not answer, and finishes the destroy in the "
                    "background",
                    engine->env->shutdown_timeout_ms);
    }
    tb_dlq_destroy(engine->dlq, deadline_ms);
    for (uint64_t seq = engine->head_seq; engine->ring != NULL && seq < engine->next_seq;
         seq++) {
        json_decref(engine->ring[seq % RING_SIZE].partition);
        json_decref(engine->ring[seq % RING_SIZE].offset);
    }
    free(engine->ring);
    tb_converter_destroy(engine->key_converter);
    tb_converter_destroy(engine->value_converter);
    tb_chain_destroy(engine->chain);
    json_decref(engine->committable);
    json_decref(engine->topics);
    json_decref(engine->last_partition);
    free(engine->last_key);
    const char *name;
    json_t *held;
    json_object_foreach (engine->error_series, name, held) {
        tb_series_release((tb_series_t *)(intptr_t)json_integer_value(held));
    }
    json_decref(engine->error_series);
    tb_task_metrics_release(&engine->metrics);
    tb_source_metrics_release(&engine->source_metrics);
    free(engine);
}

/* An exactly-once task has started once its transactions are initialised
 * and its plugin runs (txn_initialised); any other when start returns. */
static bool source_started(const void *opaque)
{
    const source_engine_t *engine = opaque;
    return engine->plugin_task != NULL;
}

const tb_task_engine_t tb_source_engine = {
    .start = source_start,
    .step = source_step,
    .stop = source_stop,
    .started = source_started,
};
