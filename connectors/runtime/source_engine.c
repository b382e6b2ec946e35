/*
 * The source engine: polls the plugin, produces its records through
 * librdkafka, and records a source offset only once that record and every
 * earlier record of the task were acknowledged (at-least-once with no gaps
 * across a crash).
 *
 * Produced records are numbered; their source offsets wait in a ring indexed
 * by that number until their delivery reports arrive. The ring's head moves
 * over acknowledged records in order and folds their offsets into the set to
 * record at the next flush.
 */
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/runtime/tb_task_engine.h"
#include "connectors/runtime/tb_task_metrics.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define RING_SIZE 65536 /* records in flight per task */
#define POLL_BATCH 512  /* records asked of the plugin per step */

typedef struct {
    json_t *partition;
    json_t *offset;
    int64_t produced_us; /* when it went to librdkafka, for the latency */
    bool delivered;
} in_flight_t;

typedef struct {
    const tb_task_env_t *env;
    tb_task_context_t ctx; /* the plugin may keep a pointer to it */
    void *plugin_task;
    rd_kafka_t *rk;
    tb_converter_t *key_converter;
    tb_converter_t *value_converter;
    bool tolerate_errors;
    in_flight_t *ring;
    uint64_t next_seq;   /* number of the next record produced */
    uint64_t head_seq;   /* oldest record not yet folded into committable */
    json_t *committable; /* canonical partition text -> {partition, offset} */
    json_t *topics;      /* topics written to: name -> true */
    tb_source_record_t batch[POLL_BATCH];
    bool unconvertible[POLL_BATCH]; /* batch[i] failed its converters */
    size_t batch_len;
    size_t batch_pos;
    int64_t last_flush_ms;
    char failure[1024]; /* a failure that fails the task */
    tb_task_metrics_t metrics;
    tb_source_metrics_t source_metrics;
    json_t *error_series; /* delivery error name -> its counter (a pointer) */
} source_engine_t;

static void free_record(tb_source_record_t *record)
{
    free(record->key);
    free(record->value);
    json_decref(record->source_partition);
    json_decref(record->source_offset);
    memset(record, 0, sizeof(*record));
}

/* Counts a delivery error under its librdkafka name; the counter of each
 * name met is held until the task stops. */
static void count_delivery_error(source_engine_t *engine, rd_kafka_resp_err_t err)
{
    const char *name = rd_kafka_err2name(err);
    json_t *held = json_object_get(engine->error_series, name);
    tb_series_t *series;
    if (held == NULL) {
        series = tb_source_metrics_delivery_errors(engine->env->connector,
                                                   engine->env->id, name);
        json_object_set_new(engine->error_series, name,
                            json_integer((json_int_t)(intptr_t)series));
    } else {
        series = (tb_series_t *)(intptr_t)json_integer_value(held);
    }
    tb_series_add(series, 1);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    source_engine_t *engine = opaque;
    uint64_t seq = (uint64_t)(uintptr_t)msg->_private;
    in_flight_t *entry = &engine->ring[seq % RING_SIZE];
    (void)rk;
    tb_series_observe(engine->source_metrics.produce_seconds,
                      (double)(tb_monotonic_us() - entry->produced_us) / 1e6);
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        tb_series_add(engine->metrics.records_written, 1);
    } else {
        count_delivery_error(engine, msg->err);
    }
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char *topic = rd_kafka_topic_name(msg->rkt);
        if (!engine->tolerate_errors && engine->failure[0] == '\0') {
            snprintf(engine->failure, sizeof(engine->failure),
                     "delivery of record %llu of task %s-%d to topic %s failed: %s",
                     (unsigned long long)seq, engine->env->connector, engine->env->id,
                     topic, rd_kafka_err2str(msg->err));
        } else {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector,
                        engine->env->id,
                        "delivery of a record to topic %s failed: %s; skipped "
                        "(errors.tolerance=all)",
                        topic, rd_kafka_err2str(msg->err));
        }
    }
    entry->delivered = true;
}

/* librdkafka calls this when its queue goes from empty to non-empty: a
 * delivery report waits, so the task has work. */
static void on_queue_event(rd_kafka_t *rk, void *opaque)
{
    const tb_task_env_t *env = opaque;
    (void)rk;
    env->wake(env->task);
}

/* Folds acknowledged records, oldest first, into the offsets to record. */
static void advance_head(source_engine_t *engine)
{
    while (engine->head_seq < engine->next_seq) {
        in_flight_t *entry = &engine->ring[engine->head_seq % RING_SIZE];
        if (!entry->delivered) {
            break;
        }
        if (entry->partition != NULL) {
            char *key = json_dumps(entry->partition, JSON_COMPACT | JSON_SORT_KEYS);
            json_object_set_new(engine->committable, key,
                                json_pack("{s:o, s:o}", "partition", entry->partition,
                                          "offset", entry->offset));
            free(key);
        } else {
            json_decref(entry->offset);
        }
        memset(entry, 0, sizeof(*entry));
        engine->head_seq++;
    }
}

static int flush_offsets(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    const char *key;
    json_t *entry;
    engine->last_flush_ms = tb_monotonic_ms();
    if (json_object_size(engine->committable) == 0) {
        return 0;
    }
    json_t *offsets = json_array();
    json_object_foreach (engine->committable, key, entry) {
        json_array_append(offsets, entry);
    }
    int rc = tb_store_offsets_put(engine->env->store, engine->env->connector, offsets,
                                  errstr, errstr_size);
    json_decref(offsets);
    if (rc == 0) {
        json_object_clear(engine->committable);
    }
    return rc;
}

/* The stored offset of one source partition, for the plugin at start. */
static json_t *stored_offset(void *runtime, const json_t *partition)
{
    const tb_task_env_t *env = runtime;
    char errstr[256];
    json_t *offsets =
        tb_store_offsets_get(env->store, env->connector, errstr, sizeof(errstr));
    json_t *found = NULL;
    size_t i;
    json_t *entry;
    json_array_foreach (offsets, i, entry) {
        if (json_equal(json_object_get(entry, "partition"), (json_t *)partition)) {
            found = json_incref(json_object_get(entry, "offset"));
        }
    }
    json_decref(offsets);
    return found;
}

static int source_start(const tb_task_env_t *env, void **out, char *errstr,
                        size_t errstr_size)
{
    source_engine_t *engine = calloc(1, sizeof(*engine));
    rd_kafka_conf_t *conf = NULL;
    json_t *props = json_deep_copy(env->kafka_props);
    const char *tolerance =
        json_string_value(json_object_get(env->connector_config, "errors.tolerance"));
    char client_id[300];

    engine->env = env;
    engine->ctx = (tb_task_context_t){.connector = env->connector,
                                      .task = env->id,
                                      .offset_for = stored_offset,
                                      .runtime = (void *)env};
    engine->tolerate_errors = tolerance != NULL && strcmp(tolerance, "all") == 0;
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
    engine->key_converter = tb_task_converter_create(env, "key", errstr, errstr_size);
    engine->value_converter =
        engine->key_converter != NULL
            ? tb_task_converter_create(env, "value", errstr, errstr_size)
            : NULL;
    if (engine->value_converter == NULL) {
        goto fail;
    }
    conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        goto fail;
    }
    rd_kafka_conf_set_opaque(conf, engine);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    engine->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (engine->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    rd_kafka_queue_t *main_queue = rd_kafka_queue_get_main(engine->rk);
    rd_kafka_queue_cb_event_enable(main_queue, on_queue_event, (void *)env);
    rd_kafka_queue_destroy(main_queue);
    if (env->plugin->task_start(&engine->ctx, env->config, &engine->plugin_task, errstr,
                                errstr_size) != 0) {
        goto fail;
    }
    json_decref(props);
    *out = engine;
    return 0;

fail:
    json_decref(props);
    engine->plugin_task = NULL;
    tb_source_engine.stop(engine);
    return -1;
}

/* Replaces *data by what converter makes of it (nothing to do for a
 * pass-through converter). Returns -1 with errstr on failure. */
static int convert(tb_converter_t *converter, tb_data_kind_t kind, void **data,
                   size_t *len, char *errstr, size_t errstr_size)
{
    void *out = NULL;
    size_t out_len = 0;
    if (tb_converter_passthrough(converter)) {
        return 0;
    }
    if (tb_converter_from_plugin(converter, kind, *data, *len, &out, &out_len, errstr,
                                 errstr_size) != 0) {
        return -1;
    }
    free(*data);
    *data = out;
    *len = out_len;
    return 0;
}

/* Converts a polled record's key and value. A record that cannot be
 * converted fails the task, or with errors.tolerance=all is skipped and
 * logged (its source offset still advances once earlier records are
 * acknowledged). Returns false when the record must not be produced. */
static bool convert_record(source_engine_t *engine, tb_source_record_t *record)
{
    char reason[512];
    const char *stage = NULL;
    if (convert(engine->key_converter, record->key_kind, &record->key, &record->key_len,
                reason, sizeof(reason)) != 0) {
        stage = "KEY_CONVERTER";
    } else if (convert(engine->value_converter, record->value_kind, &record->value,
                       &record->value_len, reason, sizeof(reason)) != 0) {
        stage = "VALUE_CONVERTER";
    }
    if (stage == NULL) {
        return true;
    }
    if (engine->tolerate_errors) {
        TB_LOG_TASK(
            TB_LOG_WARN, "tributary.task", engine->env->connector, engine->env->id,
            "a record for topic %s skipped in stage %s (errors.tolerance=all): %s",
            record->topic, stage, reason);
    } else if (engine->failure[0] == '\0') {
        snprintf(engine->failure, sizeof(engine->failure),
                 "a record of task %s-%d for topic %s failed in stage %s: %s",
                 engine->env->connector, engine->env->id, record->topic, stage, reason);
    }
    return false;
}

static void count_polled(source_engine_t *engine)
{
    size_t bytes = 0;
    for (size_t i = 0; i < engine->batch_len; i++) {
        bytes += engine->batch[i].key_len + engine->batch[i].value_len;
    }
    tb_series_add(engine->metrics.batches, 1);
    tb_series_add(engine->metrics.records_read, (double)engine->batch_len);
    tb_series_add(engine->metrics.bytes, (double)bytes);
}

/* Produces the polled records not yet handed to librdkafka. Returns false
 * when librdkafka's queue or the ring is full. */
static bool produce_batch(source_engine_t *engine)
{
    while (engine->batch_pos < engine->batch_len) {
        tb_source_record_t *record = &engine->batch[engine->batch_pos];
        if (engine->next_seq - engine->head_seq >= RING_SIZE) {
            return false;
        }
        uint64_t seq = engine->next_seq;
        if (engine->unconvertible[engine->batch_pos]) {
            /* skipped, or the task fails at its next step: it keeps its place
             * in the ring so that offsets stay in order */
            in_flight_t *skipped = &engine->ring[seq % RING_SIZE];
            skipped->partition = record->source_partition;
            skipped->offset = record->source_offset;
            skipped->delivered = engine->tolerate_errors;
            record->source_partition = record->source_offset = NULL;
            free_record(record);
            engine->next_seq++;
            engine->batch_pos++;
            continue;
        }
        if (json_object_get(engine->topics, record->topic) == NULL) {
            json_object_set_new(engine->topics, record->topic, json_true());
            engine->env->topic_used(engine->env->topic_opaque, engine->env->connector,
                                    record->topic);
        }
        rd_kafka_resp_err_t err =
            rd_kafka_producev(engine->rk, RD_KAFKA_V_TOPIC(record->topic),
                              RD_KAFKA_V_PARTITION(record->partition),
                              RD_KAFKA_V_KEY(record->key, record->key_len),
                              RD_KAFKA_V_VALUE(record->value, record->value_len),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_FREE),
                              RD_KAFKA_V_OPAQUE((void *)(uintptr_t)seq), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return false;
        }
        in_flight_t *entry = &engine->ring[seq % RING_SIZE];
        entry->produced_us = tb_monotonic_us();
        entry->partition = record->source_partition;
        entry->offset = record->source_offset;
        record->source_partition = NULL;
        record->source_offset = NULL;
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            /* not queued: librdkafka did not take the value */
            entry->delivered = engine->tolerate_errors;
            if (engine->tolerate_errors) {
                TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector,
                            engine->env->id,
                            "producing a record to topic %s failed: %s; skipped "
                            "(errors.tolerance=all)",
                            record->topic, rd_kafka_err2str(err));
            } else {
                snprintf(engine->failure, sizeof(engine->failure),
                         "producing a record of task %s-%d to topic %s failed: %s",
                         engine->env->connector, engine->env->id, record->topic,
                         rd_kafka_err2str(err));
            }
            free(record->value);
        }
        record->value = NULL;
        free_record(record);
        engine->next_seq++;
        engine->batch_pos++;
    }
    engine->batch_len = engine->batch_pos = 0;
    return true;
}

static int64_t source_step(void *opaque, bool paused, char *errstr, size_t errstr_size)
{
    source_engine_t *engine = opaque;
    int64_t flush_due = engine->last_flush_ms + engine->env->offset_flush_interval_ms;
    int64_t wake_ms = -1;

    rd_kafka_poll(engine->rk, 0);
    if (engine->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", engine->failure);
        return TB_TASK_STEP_FAILED;
    }
    advance_head(engine);
    if (tb_monotonic_ms() >= flush_due &&
        flush_offsets(engine, errstr, errstr_size) != 0) {
        return TB_TASK_STEP_FAILED;
    }
    flush_due = engine->last_flush_ms + engine->env->offset_flush_interval_ms;
    int64_t until_flush = flush_due - tb_monotonic_ms() + 1;
    if (paused) {
        return until_flush;
    }
    if (!produce_batch(engine)) {
        return until_flush < 100 ? until_flush : 100; /* wait for room */
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
    tb_series_set(engine->source_metrics.in_flight,
                  (double)(engine->next_seq - engine->head_seq));
    if (engine->batch_len > 0) {
        count_polled(engine);
        for (size_t i = 0; i < engine->batch_len; i++) {
            engine->unconvertible[i] = !convert_record(engine, &engine->batch[i]);
        }
        produce_batch(engine);
        return TB_POOL_RUN_AGAIN;
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
    if (engine->rk != NULL) {
        rd_kafka_flush(engine->rk, (int)engine->env->shutdown_timeout_ms);
        advance_head(engine);
        if (flush_offsets(engine, errstr, sizeof(errstr)) != 0) {
            TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", engine->env->connector,
                        engine->env->id, "recording offsets at stop failed: %s", errstr);
        }
        if (engine->next_seq > engine->head_seq) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector,
                        engine->env->id,
                        "%llu records were not acknowledged within "
                        "task.shutdown.graceful.timeout.ms; they will be sent again",
                        (unsigned long long)(engine->next_seq - engine->head_seq));
        }
    }
    if (engine->plugin_task != NULL) {
        engine->env->plugin->task_stop(engine->plugin_task);
    }
    for (size_t i = engine->batch_pos; i < engine->batch_len; i++) {
        free_record(&engine->batch[i]);
    }
    if (engine->rk != NULL) {
        rd_kafka_destroy(engine->rk);
    }
    for (uint64_t seq = engine->head_seq; engine->ring != NULL && seq < engine->next_seq;
         seq++) {
        json_decref(engine->ring[seq % RING_SIZE].partition);
        json_decref(engine->ring[seq % RING_SIZE].offset);
    }
    free(engine->ring);
    tb_converter_destroy(engine->key_converter);
    tb_converter_destroy(engine->value_converter);
    json_decref(engine->committable);
    json_decref(engine->topics);
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

const tb_task_engine_t tb_source_engine = {
    .start = source_start,
    .step = source_step,
    .stop = source_stop,
};
