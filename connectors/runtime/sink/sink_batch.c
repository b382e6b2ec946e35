/*
 * The sink engine's batch: messages already waiting are taken without
 * waiting for more, stale ones (below the offset a partition expects)
 * dropped, keys and values converted and transformed, and the batch put to
 * the plugin; a record that cannot be follows errors.tolerance (the task
 * fails naming it, or it is counted, logged and sent to the dead letter
 * queue).
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/runtime/sink/sink_engine_internal.h"
#include "connectors/runtime/task/tb_dlq.h"
#include "connectors/runtime/task/tb_record_log.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

/* Applies errors.tolerance to a record that cannot be written: with none,
 * the task fails naming it; with all, it is counted, logged and sent to the
 * dead letter queue. */
static void handle_failed(sink_engine_t *e, const tb_sink_record_t *record,
                          const char *stage, const char *class_name, const char *reason)
{
    char errstr[512];
    tb_task_metrics_record_error(&e->metrics);
    if (!e->tolerate_errors) {
        if (e->failure[0] == '\0') {
            snprintf(e->failure, sizeof(e->failure),
                     "record %s-%d at offset %lld failed in stage %s: %s", record->topic,
                     (int)record->partition, (long long)record->offset, stage, reason);
        }
        return;
    }
    tb_series_add(e->metrics.records_dropped, 1);
    if (e->log_errors) {
        char described[2048];
        tb_record_log_describe(record, e->log_messages, described, sizeof(described));
        tb_series_add(e->metrics.errors_logged, 1);
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "%s skipped in stage %s (errors.tolerance=all): %s", described, stage,
                    reason);
    }
    tb_dlq_context_t context = {.connector = e->env->connector,
                                .task = e->env->id,
                                .stage = stage,
                                .class_name = class_name,
                                .reason = reason};
    if (e->dlq == NULL) {
        return;
    }
    if (tb_dlq_send(e->dlq, record, &context, errstr, sizeof(errstr)) == 0) {
        tb_series_add(e->metrics.records_dlq, 1);
        return;
    }
    tb_series_add(e->metrics.dlq_failures, 1);
    if (e->failure[0] == '\0') {
        snprintf(e->failure, sizeof(e->failure), "%s", errstr);
    }
}

void tb_sink_record_failed(void *runtime, const tb_sink_record_t *record,
                           const char *reason)
{
    sink_engine_t *e = runtime;
    handle_failed(e, record, "TASK_PUT", e->env->plugin->class_name, reason);
}

int tb_sink_failed_delivered(void *runtime, char *errstr, size_t errstr_size)
{
    sink_engine_t *e = runtime;
    if (e->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", e->failure);
        return -1;
    }
    if (e->dlq == NULL) {
        return 0;
    }
    if (tb_dlq_flush(e->dlq, (int)e->env->shutdown_timeout_ms, errstr, errstr_size) !=
        0) {
        snprintf(e->failure, sizeof(e->failure), "%s", errstr);
        return -1;
    }
    return 0;
}

void tb_sink_wake(void *runtime)
{
    sink_engine_t *e = runtime;
    atomic_store(&e->plugin_woken, true);
    e->env->wake(e->env->task);
}

void tb_sink_retry_after(void *runtime, int64_t ms)
{
    ((sink_engine_t *)runtime)->plugin_retry_ms = ms > 0 ? ms : 1;
}

/* Whether records are built through transformed[] (the chain's, or a
 * typed plugin's): otherwise transformed[] is never set nor read. */
static bool builds_transformed(const sink_engine_t *e)
{
    return e->chain != NULL || e->env->plugin->typed;
}

static void release_record(sink_engine_t *e, size_t i)
{
    bool headers_transformed = false;
    if (builds_transformed(e)) {
        headers_transformed = e->transformed[i].headers_owned;
        tb_record_release(&e->transformed[i]);
    }
    if (!headers_transformed) {
        free((void *)e->records[i].headers);
    }
    if (e->key_owned[i]) {
        free((void *)e->records[i].key);
    }
    if (e->value_owned[i]) {
        free((void *)e->records[i].value);
    }
}

void tb_sink_release_batch(sink_engine_t *e)
{
    for (size_t i = 0; i < e->batch_len; i++) {
        release_record(e, i);
        rd_kafka_message_destroy(e->batch[i]);
    }
    e->batch_len = e->converted = 0;
}

/* Reads the headers of msg into a new array (names and values point into
 * msg). */
static tb_header_t *headers_of(rd_kafka_message_t *msg, size_t *count)
{
    rd_kafka_headers_t *headers = NULL;
    *count = 0;
    /* most records have none: no allocation then */
    if (rd_kafka_message_headers(msg, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_header_cnt(headers) == 0) {
        return NULL;
    }
    size_t n = rd_kafka_header_cnt(headers);
    tb_header_t *out = calloc(n, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        rd_kafka_header_get_all(headers, i, &out[i].name, &out[i].value,
                                &out[i].value_len);
    }
    *count = n;
    return out;
}

/* Converts data with converter into *out (a pass-through converter hands
 * data over as it is). */
static int convert(tb_converter_t *converter, const void *data, size_t len,
                   const void **out, size_t *out_len, bool *owned, char *reason,
                   size_t reason_size)
{
    *out = data;
    *out_len = len;
    *owned = false;
    if (tb_converter_passthrough(converter)) {
        return 0;
    }
    return tb_converter_to_plugin(converter, data, len, out, out_len, owned, reason,
                                  reason_size);
}

/* Runs the chain on records[i] (read from msg): 0 it goes on, with the
 * sides the chain changed already in plugin form (converted),
 * TB_RESULT_DROPPED it was
 * filtered out, -1 it failed in *stage, TB_RESULT_RETRY the converter
 * the chain read through asks to be tried again (*stage names it). */
static int transform(sink_engine_t *e, size_t i, rd_kafka_message_t *msg,
                     bool converted[2], const char **stage, const char **failed_class,
                     char *reason, size_t reason_size)
{
    tb_sink_record_t *r = &e->records[i];
    tb_header_t *read = (tb_header_t *)r->headers;
    tb_converter_t *const converters[2] = {e->key_converter, e->value_converter};
    tb_transform_failure_t failure;
    e->transformed[i] = (tb_record_t){.topic = r->topic,
                                      .partition = r->partition,
                                      .offset = r->offset,
                                      .timestamp = r->timestamp,
                                      .headers = read,
                                      .header_count = r->header_count,
                                      .key = {.bytes = msg->key, .len = msg->key_len},
                                      .value = {.bytes = msg->payload, .len = msg->len}};
    int rc = tb_sink_transform(e->chain, converters, &e->transformed[i], r,
                               !e->env->plugin->typed, converted, &failure);
    e->key_owned[i] = converted[TB_SIDE_KEY];
    e->value_owned[i] = converted[TB_SIDE_VALUE];
    if (e->transformed[i].headers_owned) {
        free(read); /* the record holds copies now */
    }
    if (rc == -1 || rc == TB_RESULT_RETRY) {
        *stage = failure.stage;
        *failed_class = failure.class_name;
        snprintf(reason, reason_size, "%s", failure.reason);
    }
    return rc;
}

/* For a typed plugin: types both sides of records[i] (read from msg)
 * through the converters, unless the chain did already; a side the chain
 * did not change keeps msg's bytes as its text form. 0, or -1 or
 * TB_RESULT_RETRY with *stage. */
static int type_record(sink_engine_t *e, size_t i, rd_kafka_message_t *msg,
                       const bool converted[2], const char **stage,
                       const char **failed_class, char *reason, size_t reason_size)
{
    tb_sink_record_t *r = &e->records[i];
    tb_converter_t *const converters[2] = {e->key_converter, e->value_converter};
    tb_transform_failure_t failure;
    if (e->chain == NULL) {
        e->transformed[i] =
            (tb_record_t){.topic = r->topic,
                          .partition = r->partition,
                          .offset = r->offset,
                          .timestamp = r->timestamp,
                          .headers = (tb_header_t *)r->headers,
                          .header_count = r->header_count,
                          .key = {.bytes = msg->key, .len = msg->key_len},
                          .value = {.bytes = msg->payload, .len = msg->len}};
    }
    if (!converted[TB_SIDE_KEY]) {
        r->key = msg->key;
        r->key_len = msg->key_len;
    }
    if (!converted[TB_SIDE_VALUE]) {
        r->value = msg->payload;
        r->value_len = msg->len;
    }
    int rc = tb_sink_type(converters, &e->transformed[i], r, &failure);
    if (rc != 0) {
        *stage = failure.stage;
        *failed_class = failure.class_name;
        snprintf(reason, reason_size, "%s", failure.reason);
    }
    return rc;
}

/* A converter that cannot convert now (TB_RESULT_RETRY): holds the
 * partitions until the next attempt under errors.retry.*, or says that the
 * retries are spent (reason then says so too). */
static bool wait_for_converter(sink_engine_t *e, const char *stage,
                               const rd_kafka_message_t *msg, char *reason,
                               size_t reason_size)
{
    int64_t delay = tb_task_retry_next(&e->retry, reason, reason_size);
    if (delay < 0) {
        return false;
    }
    tb_task_metrics_retry(&e->metrics);
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                "stage %s cannot convert record %s-%d at offset %lld now, trying again "
                "in %lld ms: %s",
                stage, rd_kafka_topic_name(msg->rkt), (int)msg->partition,
                (long long)msg->offset, (long long)delay, reason);
    tb_sink_set_held(e, true);
    e->retry_at_ms = tb_monotonic_ms() + delay;
    return true;
}

/* Fills records[i] from batch[i] through the converters and the chain,
 * from first on. A record that cannot be converted or transformed goes to
 * the error path and out of the batch. Returns whether a converter asked
 * to try again later: that record and the ones after it then wait,
 * unconverted, from e->converted on (wait_for_converter). */
static bool convert_batch(sink_engine_t *e, size_t first)
{
    size_t kept = first;
    if (first >= e->batch_len) {
        return false;
    }
    for (size_t i = first; i < e->batch_len; i++) {
        rd_kafka_message_t *msg = e->batch[i];
        tb_sink_record_t *r = &e->records[kept];
        char reason[512];
        rd_kafka_timestamp_type_t ts_type;
        *r = (tb_sink_record_t){.topic = rd_kafka_topic_name(msg->rkt),
                                .original_topic = rd_kafka_topic_name(msg->rkt),
                                .partition = msg->partition,
                                .offset = msg->offset,
                                .timestamp = rd_kafka_message_timestamp(msg, &ts_type)};
        if (e->read_headers) {
            r->headers = headers_of(msg, &r->header_count);
        }
        e->key_owned[kept] = e->value_owned[kept] = false;
        const char *stage = NULL;
        const char *failed_class = NULL;
        bool converted[2] = {false, false};
        int rc = e->chain != NULL ? transform(e, kept, msg, converted, &stage,
                                              &failed_class, reason, sizeof(reason))
                                  : 0;
        if (rc == TB_RESULT_DROPPED) { /* filtered out: done with, as if written */
            release_record(e, kept);
            rd_kafka_message_destroy(msg);
            continue;
        }
        if (stage == NULL && e->env->plugin->typed) {
            rc = type_record(e, kept, msg, converted, &stage, &failed_class, reason,
                             sizeof(reason));
        } else if (stage == NULL && !converted[TB_SIDE_KEY] &&
                   (rc = convert(e->key_converter, msg->key, msg->key_len, &r->key,
                                 &r->key_len, &e->key_owned[kept], reason,
                                 sizeof(reason))) != 0) {
            stage = "KEY_CONVERTER";
        } else if (stage == NULL && !converted[TB_SIDE_VALUE] &&
                   (rc = convert(e->value_converter, msg->payload, msg->len, &r->value,
                                 &r->value_len, &e->value_owned[kept], reason,
                                 sizeof(reason))) != 0) {
            stage = "VALUE_CONVERTER";
        }
        /* rc is no longer transform's: 1 here is a converter's retry */
        if (rc == TB_RESULT_RETRY &&
            wait_for_converter(e, stage, msg, reason, sizeof(reason))) {
            /* not the record's fault (the schema registry did not answer) */
            release_record(e, kept);
            size_t waiting = e->batch_len - i;
            memmove(&e->batch[kept], &e->batch[i], waiting * sizeof(e->batch[0]));
            for (size_t j = kept; j < kept + waiting; j++) {
                e->records[j] = (tb_sink_record_t){0};
                e->transformed[j] = (tb_record_t){0};
                e->key_owned[j] = e->value_owned[j] = false;
            }
            e->converted = kept;
            e->batch_len = kept + waiting;
            return true;
        }
        tb_task_retry_reset(&e->retry);
        if (stage != NULL) {
            if (strcmp(stage, "TRANSFORMATION") != 0) {
                tb_series_add(stage[0] == 'K' ? e->metrics.key_conversion_errors
                                              : e->metrics.value_conversion_errors,
                              1);
            }
            tb_sink_record_t raw = *r;
            raw.topic = rd_kafka_topic_name(msg->rkt); /* as read, not as routed */
            raw.key = msg->key;
            raw.key_len = msg->key_len;
            raw.value = msg->payload;
            raw.value_len = msg->len;
            const tb_converter_t *failed =
                stage[0] == 'K' ? e->key_converter : e->value_converter;
            handle_failed(e, &raw, stage,
                          failed_class != NULL ? failed_class
                                               : tb_converter_class_name(failed),
                          reason);
            release_record(e, kept);
            rd_kafka_message_destroy(msg);
            continue;
        }
        e->batch[kept++] = msg;
    }
    e->batch_len = e->converted = kept;
    return false;
}

bool tb_sink_convert_waiting(sink_engine_t *e)
{
    return convert_batch(e, e->converted);
}

/* Hands the pending batch to the plugin. Returns 0 when it was taken (or
 * is empty), TB_RESULT_RETRY, or -1 with errstr. */
int tb_sink_put_batch(sink_engine_t *e, char *errstr, size_t errstr_size)
{
    bool woken = atomic_exchange(&e->plugin_woken, false);
    if (e->batch_len == 0) {
        return woken ? e->env->plugin->put(e->plugin_task, e->records, 0, errstr,
                                           errstr_size)
                     : 0;
    }
    int64_t started = tb_monotonic_us();
    int rc = e->env->plugin->put(e->plugin_task, e->records, e->batch_len, errstr,
                                 errstr_size);
    tb_series_observe(e->metrics.batch_seconds,
                      (double)(tb_monotonic_us() - started) / 1e6);
    if (rc == -1) {
        size_t n = (size_t)snprintf(NULL, 0, "%s", errstr);
        snprintf(errstr + (n < errstr_size ? n : errstr_size - 1),
                 errstr_size - (n < errstr_size ? n : errstr_size - 1),
                 " (writing records of %s-%d from offset %lld)", e->records[0].topic,
                 (int)e->records[0].partition, (long long)e->records[0].offset);
    }
    if (rc != 0) {
        return rc;
    }
    part_run_t run = {0};
    for (size_t i = 0; i < e->batch_len; i++) {
        /* offsets are the original partition's, whatever the chain routed */
        partition_t *p = tb_sink_part_of(e, &run, e->batch[i]);
        if (p != NULL) {
            p->written_next = e->records[i].offset + 1;
        }
    }
    tb_series_add(e->metrics.batches, 1);
    tb_series_observe(e->metrics.batch_records, (double)e->batch_len);
    tb_series_add(e->metrics.records_written, (double)e->batch_len);
    tb_sink_release_batch(e);
    return 0;
}

/* Collects up to batch_max messages already waiting into the pending batch,
 * without waiting for more: the task runs again at once while messages
 * keep coming (sink_step), so a batch takes no time to form. */
void tb_sink_consume(sink_engine_t *e)
{
    size_t first = e->batch_len;
    size_t bytes = 0;
    rd_kafka_message_t *msgs[BATCH_MAX];
    part_run_t run = {0};
    ssize_t n = rd_kafka_consume_batch_queue(e->queue, 0, msgs, e->batch_max);
    for (ssize_t i = 0; i < n; i++) {
        rd_kafka_message_t *msg = msgs[i];
        partition_t *p = msg->err ? NULL : tb_sink_part_of(e, &run, msg);
        if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && msg->rkt != NULL) {
            tb_sink_handle_out_of_range(e, rd_kafka_topic_name(msg->rkt), msg->partition);
            run = (part_run_t){0}; /* it may have added a partition */
        } else if (msg->err && msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                        "consumer: %s", rd_kafka_message_errstr(msg));
        }
        /* paused or held: dropped, read again after the seek on resume */
        if (p == NULL || p->stopped || e->paused || e->held ||
            msg->offset < p->expected) {
            if (p != NULL && msg->offset >= p->expected) {
                p->position_exact = false;
            }
            rd_kafka_message_destroy(msg);
            continue;
        }
        p->expected = msg->offset + 1;
        p->position_exact = true;
        /* topic tracking, as in Connect: a topic a record was read from;
         * told once per run of the same topic in a batch */
        if (e->batch_len == 0 || e->batch[e->batch_len - 1]->rkt != msg->rkt) {
            e->env->topic_used(e->env->topic_opaque, e->env->connector, p->topic);
        }
        e->batch[e->batch_len++] = msg;
        bytes += msg->len + msg->key_len;
    }
    tb_series_add(e->metrics.records_read, (double)(e->batch_len - first));
    tb_series_add(e->metrics.bytes, (double)bytes);
    if (e->batch_len > first) {
        tb_sink_count_active(e);
    }
    convert_batch(e, first);
}

/* Drops the pending records of p, revoked while they wait for a retry:
 * its new owner reads them. */
void tb_sink_drop_pending(sink_engine_t *e, const partition_t *p)
{
    size_t kept = 0, converted = 0;
    for (size_t i = 0; i < e->batch_len; i++) {
        /* by the partition read from, whatever the chain routed */
        if (e->batch[i]->partition == p->partition &&
            strcmp(rd_kafka_topic_name(e->batch[i]->rkt), p->topic) == 0) {
            release_record(e, i);
            rd_kafka_message_destroy(e->batch[i]);
            continue;
        }
        converted += i < e->converted;
        e->batch[kept] = e->batch[i];
        e->records[kept] = e->records[i];
        e->key_owned[kept] = e->key_owned[i];
        e->value_owned[kept] = e->value_owned[i];
        e->transformed[kept] = e->transformed[i]; /* what records[kept] points into */
        kept++;
    }
    e->batch_len = kept;
    e->converted = converted;
}
