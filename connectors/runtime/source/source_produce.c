/*
 * The source engine's producer: an idempotent librdkafka producer whose
 * delivery reports mark records done in the ring (source_offsets.c), and
 * the records Kafka refuses, failed or let go by errors.tolerance=all
 * (counted, logged, and sent to the dead letter queue when one is
 * configured).
 */
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_kafka_reaper.h"
#include "connectors/runtime/source/source_engine_internal.h"
#include "connectors/runtime/source/tb_upsert.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

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

/* A record Kafka refused, or that librdkafka would not queue (record is
 * borrowed; its offset is -1: it was never written). With
 * errors.tolerance=none the task fails naming it. With all it is counted,
 * logged, and sent to the dead letter queue when one is configured.
 * Returns whether the record is done with, so that its offset and the ones
 * after it may be recorded. */
static bool let_go_refused(source_engine_t *engine, uint64_t seq,
                           const tb_sink_record_t *record, rd_kafka_resp_err_t err)
{
    const tb_task_env_t *env = engine->env;
    const char *reason = rd_kafka_err2str(err);
    char errstr[512];
    tb_task_metrics_record_error(&engine->metrics);
    if (!engine->tolerate_errors) {
        if (engine->failure[0] == '\0') {
            snprintf(engine->failure, sizeof(engine->failure),
                     "Kafka refused record %llu of task %s-%d (%zu bytes of key and "
                     "value) for topic %s partition %d: %s; it is not skipped "
                     "(errors.tolerance=none): its source offset is not recorded and "
                     "the task's restart sends it again",
                     (unsigned long long)seq, env->connector, env->id,
                     record->key_len + record->value_len, record->topic,
                     (int)record->partition, reason);
        }
        return false;
    }
    tb_series_add(engine->metrics.records_dropped, 1);
    tb_dlq_context_t context = {.connector = env->connector,
                                .task = env->id,
                                .stage = "KAFKA_PRODUCE",
                                .class_name = env->plugin->class_name,
                                .reason = reason};
    if (engine->dlq != NULL &&
        tb_dlq_send(engine->dlq, record, &context, errstr, sizeof(errstr)) != 0) {
        tb_series_add(engine->metrics.dlq_failures, 1);
        if (engine->failure[0] == '\0') {
            snprintf(engine->failure, sizeof(engine->failure),
                     "Kafka refused record %llu of task %s-%d for topic %s (%s), and "
                     "the %s",
                     (unsigned long long)seq, env->connector, env->id, record->topic,
                     reason, errstr);
        }
        return false;
    }
    if (engine->dlq != NULL) {
        tb_series_add(engine->metrics.records_dlq, 1);
    }
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", env->connector, env->id,
                "Kafka refused record %llu (%zu bytes of key and value) for topic %s "
                "partition %d: %s; skipped (errors.tolerance=all), %s",
                (unsigned long long)seq, record->key_len + record->value_len,
                record->topic, (int)record->partition, reason,
                engine->dlq != NULL ? "sent to the dead letter queue"
                                    : "no dead letter queue is configured");
    return true;
}

tb_sink_record_t tb_source_refused_record(const rd_kafka_message_t *msg,
                                          tb_header_t **headers)
{
    rd_kafka_headers_t *hdrs = NULL;
    tb_header_t *h = NULL;
    size_t count = 0;
    if (rd_kafka_message_headers(msg, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        h = calloc(rd_kafka_header_cnt(hdrs), sizeof(*h));
    }
    while (h != NULL &&
           rd_kafka_header_get_all(hdrs, count, &h[count].name, &h[count].value,
                                   &h[count].value_len) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        count++;
    }
    *headers = h;
    return (tb_sink_record_t){.topic = rd_kafka_topic_name(msg->rkt),
                              .partition = msg->partition,
                              .offset = -1,
                              .timestamp = rd_kafka_message_timestamp(msg, NULL),
                              .key = msg->key,
                              .key_len = msg->key_len,
                              .value = msg->payload,
                              .value_len = msg->len,
                              .headers = h,
                              .header_count = count};
}

/* Observes the run of reports of one latency in the histogram. */
static void observe_run(source_engine_t *engine)
{
    tb_series_observe_many(engine->source_metrics.produce_seconds,
                           (double)engine->run_latency_us / 1e6, engine->run_count);
    engine->run_count = 0;
}

void tb_source_count_delivered(source_engine_t *engine)
{
    observe_run(engine);
    tb_series_add(engine->metrics.records_written, (double)engine->acknowledged);
    engine->acknowledged = 0;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    source_engine_t *engine = opaque;
    (void)rk;
    if (engine->transactional) {
        /* the transaction's commit acknowledges its records, or fails; a
         * record's opaque is its index in batch plus one (0: an offset) */
        uintptr_t index = (uintptr_t)msg->_private;
        if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            count_delivery_error(engine, msg->err);
            engine->txn_delivery_failed = true;
        } else if (index > 0 && index <= POLL_BATCH) {
            engine->txn_written_partition[index - 1] = msg->partition;
            engine->txn_written_offset[index - 1] = msg->offset;
        }
        return;
    }
    tb_header_t *headers = NULL;
    tb_sink_record_t refused;
    tb_source_report_t report = {.err = msg->err,
                                 .partition = msg->partition,
                                 .offset = msg->offset,
                                 .rkt = msg->rkt};
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        refused = tb_source_refused_record(msg, &headers);
        report.refused = &refused;
    }
    tb_source_apply_report(engine, (uint64_t)(uintptr_t)msg->_private, &report);
    free(headers);
}

void tb_source_apply_report(source_engine_t *engine, uint64_t seq,
                            const tb_source_report_t *report)
{
    in_flight_t *entry = &engine->ring[seq % RING_SIZE];
    int64_t latency_us = engine->served_us - entry->produced_us;
    engine->awaiting--;
    if (latency_us != engine->run_latency_us) {
        observe_run(engine);
        engine->run_latency_us = latency_us;
    }
    engine->run_count++;
    if (report->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        engine->acknowledged++;
        entry->delivered = true;
        engine->rkt_delivered |= report->rkt == engine->rkt;
        if (entry->partition != NULL && engine->plugin_task != NULL &&
            engine->env->plugin->record_written != NULL) {
            engine->env->plugin->record_written(engine->plugin_task, entry->partition,
                                                entry->offset, report->partition,
                                                report->offset);
        }
        return;
    }
    count_delivery_error(engine, report->err);
    entry->delivered = let_go_refused(engine, seq, report->refused, report->err);
}

void tb_source_serve_reports(source_engine_t *engine)
{
    if (engine->lane != NULL) {
        tb_source_shared_serve(engine);
        return;
    }
    engine->served_us = tb_monotonic_us();
    rd_kafka_poll(engine->rk, 0);
}

/* librdkafka's errors are mostly transient and retried by itself; failed
 * authentication and fatal errors are not, and fail the task. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    source_engine_t *engine = opaque;
    (void)rk;
    if (tb_kafka_error_is_final(err) && engine->failure[0] == '\0') {
        snprintf(engine->failure, sizeof(engine->failure), "Kafka: %s", reason);
    }
}

/* librdkafka calls this when its queue goes from empty to non-empty: a
 * delivery report waits, so the task has work. */
static void on_queue_event(rd_kafka_t *rk, void *opaque)
{
    const tb_task_env_t *env = opaque;
    (void)rk;
    env->wake(env->task);
}

/* Whether librdkafka's partitioner puts records without a key in a partition
 * of its choosing (one for a while, or each at random), as Java's does: then
 * the runtime may choose that partition itself (produce_run). */
static bool spreads_keyless(const char *partitioner)
{
    static const char *const spreading[] = {"murmur2_random", "consistent_random",
                                            "fnv1a_random", "random"};
    for (size_t i = 0; partitioner != NULL && i < sizeof(spreading) / sizeof(*spreading);
         i++) {
        if (strcmp(partitioner, spreading[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* The task's own producer, its delivery reports, errors and queue event
 * routed to engine. NULL with errstr. */
static rd_kafka_t *producer_create(source_engine_t *engine, json_t *props, char *errstr,
                                   size_t errstr_size)
{
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        return NULL;
    }
    rd_kafka_conf_set_opaque(conf, engine);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_queue_t *main_queue = rd_kafka_queue_get_main(rk);
    rd_kafka_queue_cb_event_enable(main_queue, on_queue_event, (void *)engine->env);
    rd_kafka_queue_destroy(main_queue);
    return rk;
}

int tb_source_producer_open(source_engine_t *engine, json_t *props, char *errstr,
                            size_t errstr_size)
{
    engine->spread_keyless =
        spreads_keyless(json_string_value(json_object_get(props, "partitioner")));
    /* at-least-once tasks of equal producer properties share one when the
     * worker allows it (source_shared.c) */
    if (!engine->transactional && engine->env->client->producers_shared) {
        return tb_source_shared_join(engine, props, errstr, errstr_size);
    }
    engine->rk = producer_create(engine, props, errstr, errstr_size);
    return engine->rk != NULL ? 0 : -1;
}

bool tb_source_producer_destroy(source_engine_t *engine, int64_t deadline_ms)
{
    rd_kafka_t *rk = engine->rk;
    engine->rk = NULL;
    /* a destroy cut short goes on after the task is freed: from here on,
     * librdkafka's threads never call into it (the disable waits for a
     * call under way) */
    rd_kafka_queue_t *main_queue = rd_kafka_queue_get_main(rk);
    rd_kafka_queue_cb_event_enable(main_queue, NULL, NULL);
    rd_kafka_queue_destroy(main_queue);
    return tb_kafka_destroy_within(rk, 0, deadline_ms);
}

/* The Kafka headers of record: the ones its chain left, then its message id
 * when message.id.header is set. NULL when it has none, so that a record
 * without headers costs no headers object. */
static rd_kafka_headers_t *record_headers(const source_engine_t *engine,
                                          const tb_source_record_t *record)
{
    size_t count = record->header_count + (engine->message_id_header != NULL ? 1 : 0);
    if (count == 0) {
        return NULL;
    }
    rd_kafka_headers_t *headers = rd_kafka_headers_new(count);
    for (size_t i = 0; i < record->header_count; i++) {
        const tb_header_t *h = &record->headers[i];
        rd_kafka_header_add(headers, h->name, -1, h->value, (ssize_t)h->value_len);
    }
    if (engine->message_id_header != NULL) {
        char id[65];
        tb_message_id(engine->env->connector, record->source_partition,
                      record->source_offset, id);
        rd_kafka_header_add(headers, engine->message_id_header, -1, id, 64);
    }
    return headers;
}

/* librdkafka's handle of topic, kept for the next record: producing by a
 * topic's name looks the handle up under librdkafka's lock for every record.
 * A record's topic string stays as it is while the task runs (the plugin's,
 * or one a routing transform keeps), so the pointer the handle was last
 * asked for names it without comparing the text. NULL when librdkafka
 * refuses the name. */
static rd_kafka_topic_t *topic_handle(source_engine_t *engine, const char *topic)
{
    if (topic == engine->rkt_topic) {
        return engine->rkt;
    }
    if (engine->rkt == NULL || strcmp(rd_kafka_topic_name(engine->rkt), topic) != 0) {
        if (engine->rkt != NULL) {
            rd_kafka_topic_destroy(engine->rkt);
        }
        engine->rkt = rd_kafka_topic_new(engine->rk, topic, NULL);
        engine->rkt_delivered = false;
        engine->rkt_next_partition = 0;
    }
    engine->rkt_topic = engine->rkt != NULL ? topic : NULL;
    return engine->rkt;
}

/* Hands one record to librdkafka (flags: F_FREE or F_COPY) with its
 * headers (record_headers) and timestamp: the record's own, else
 * timestamp_ms (0: librdkafka reads the clock). */
rd_kafka_resp_err_t tb_source_produce_record(source_engine_t *engine,
                                             tb_source_record_t *record, int flags,
                                             int64_t timestamp_ms, void *opaque)
{
    rd_kafka_topic_t *rkt = topic_handle(engine, record->topic);
    if (rkt == NULL) {
        return RD_KAFKA_RESP_ERR__INVALID_ARG; /* what producing by its name answers */
    }
    rd_kafka_headers_t *headers = record_headers(engine, record);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        engine->rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(record->partition),
        RD_KAFKA_V_KEY(record->key, record->key_len),
        RD_KAFKA_V_VALUE(record->value, record->value_len), RD_KAFKA_V_MSGFLAGS(flags),
        RD_KAFKA_V_TIMESTAMP(record->timestamp > 0 ? record->timestamp : timestamp_ms),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && headers != NULL) {
        rd_kafka_headers_destroy(headers); /* not taken on failure */
    }
    return err;
}

/* The opaque of record seq: its number, or on a shared producer its lane
 * too (source_shared.c). */
static void *record_opaque(const source_engine_t *engine, uint64_t seq)
{
    return engine->lane != NULL ? tb_source_shared_opaque(engine->lane, seq)
                                : (void *)(uintptr_t)seq;
}

/* Numbers record in the ring as handed to librdkafka at now_us, which
 * answered err (on success it keeps a value given with F_FREE), and lets go
 * of what the record held: the next record is next. */
static void settle(source_engine_t *engine, tb_source_record_t *record,
                   rd_kafka_resp_err_t err, int flags, int64_t now_us)
{
    uint64_t seq = engine->next_seq;
    in_flight_t *entry = &engine->ring[seq % RING_SIZE];
    entry->produced_us = now_us;
    entry->partition = record->source_partition;
    entry->offset = record->source_offset;
    record->source_partition = NULL;
    record->source_offset = NULL;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        /* not queued: librdkafka did not take the value */
        count_delivery_error(engine, err);
        tb_sink_record_t refused = {.topic = record->topic,
                                    .partition = record->partition,
                                    .offset = -1,
                                    .timestamp = -1,
                                    .key = record->key,
                                    .key_len = record->key_len,
                                    .value = record->value,
                                    .value_len = record->value_len,
                                    .headers = record->headers,
                                    .header_count = record->header_count};
        entry->delivered = let_go_refused(engine, seq, &refused, err);
    } else {
        engine->awaiting++;
        if (flags == RD_KAFKA_MSG_F_FREE) {
            record->value = NULL; /* librdkafka's now */
        }
    }
    tb_source_free_record(record);
    engine->next_seq++;
    engine->batch_pos++;
}

/* How many records from batch_pos on librdkafka takes in one
 * rd_kafka_produce_batch call (a third cheaper per record than one
 * rd_kafka_producev each): records to produce, to the first one's topic,
 * without headers or a timestamp of their own (librdkafka 2.0.2's batch
 * call takes neither) and with no
 * partition of their own (in that call, a record for a partition that does
 * not exist would never be freed), as many as the ring has room for. 0 when
 * the first is not one. */
static size_t run_length(const source_engine_t *engine)
{
    const tb_source_record_t *first = &engine->batch[engine->batch_pos];
    size_t room = RING_SIZE - (size_t)(engine->next_seq - engine->head_seq);
    size_t n = 0;
    if (engine->message_id_header != NULL) {
        return 0;
    }
    while (engine->batch_pos + n < engine->prepared && n < room) {
        const tb_source_record_t *r = &engine->batch[engine->batch_pos + n];
        if (engine->disposition[engine->batch_pos + n] != PRODUCE ||
            r->header_count > 0 || r->timestamp > 0 ||
            r->partition != RD_KAFKA_PARTITION_UA ||
            (r->topic != first->topic && strcmp(r->topic, first->topic) != 0)) {
            break;
        }
        n++;
    }
    return n;
}

/* The partition a run of n records from batch_pos goes to: librdkafka's
 * partitioner's choice for each (UA), or, for records without a key where
 * that choice is any partition, the next partition in turn. librdkafka 2.0.2
 * spends as much on choosing a keyless record's partition as on the rest
 * of taking it; Java's producer too puts a batch's worth of such records in
 * one partition, then moves to another. The turn starts once a record
 * reached the topic: by then librdkafka knows its partitions, and refuses
 * at once a partition past the last (produce_run starts over at 0). */
static int32_t run_partition(const source_engine_t *engine, size_t n)
{
    if (!engine->spread_keyless || !engine->rkt_delivered) {
        return RD_KAFKA_PARTITION_UA;
    }
    const tb_source_record_t *records = &engine->batch[engine->batch_pos];
    for (size_t i = 0; i < n; i++) {
        if (records[i].key != NULL) {
            return RD_KAFKA_PARTITION_UA;
        }
    }
    return engine->rkt_next_partition;
}

/* Hands the run of n records from batch_pos to librdkafka in one call, for
 * partition, each copied (librdkafka frees a value it was given on some
 * failures of that call, which would then be freed twice); their CreateTime
 * is the call's. engine->run[i].err tells what became of record i. */
static void hand_over(source_engine_t *engine, rd_kafka_topic_t *rkt, int32_t partition,
                      size_t n)
{
    const tb_source_record_t *records = &engine->batch[engine->batch_pos];
    for (size_t i = 0; i < n; i++) {
        engine->run[i] = (rd_kafka_message_t){
            .err = rkt != NULL ? RD_KAFKA_RESP_ERR_NO_ERROR
                               : RD_KAFKA_RESP_ERR__INVALID_ARG, /* as by name */
            .payload = (void *)records[i].value,
            .len = records[i].value_len,
            .key = (void *)records[i].key,
            .key_len = records[i].key_len,
            ._private = record_opaque(engine, engine->next_seq + i)};
    }
    if (rkt != NULL) {
        rd_kafka_produce_batch(rkt, partition, RD_KAFKA_MSG_F_COPY, engine->run, (int)n);
    }
}

/* Produces the run of n records from batch_pos and settles them. Returns
 * false when librdkafka's queue is full: the records from the first it
 * refused on wait for the next step. */
static bool produce_run(source_engine_t *engine, size_t n, int64_t now_us)
{
    tb_source_record_t *records = &engine->batch[engine->batch_pos];
    rd_kafka_topic_t *rkt = topic_handle(engine, records[0].topic);
    int32_t partition = run_partition(engine, n);
    hand_over(engine, rkt, partition, n);
    if (partition > 0 && engine->run[0].err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
        partition = 0; /* past the last partition, nothing taken: the turn starts over */
        hand_over(engine, rkt, partition, n);
    }
    if (partition != RD_KAFKA_PARTITION_UA) {
        engine->rkt_next_partition = partition + 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (engine->run[i].err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return false;
        }
        settle(engine, &records[i], engine->run[i].err, RD_KAFKA_MSG_F_COPY, now_us);
    }
    return true;
}

/* Produces the polled records not yet handed to librdkafka that have their
 * disposition. Returns false when librdkafka's queue or the ring is full. */
bool tb_source_produce_batch(source_engine_t *engine)
{
    /* a batch is produced within microseconds: its records share the time
     * they went to librdkafka, and their CreateTime */
    int64_t now_us = tb_monotonic_us();
    int64_t timestamp_ms = tb_wall_ms();
    while (engine->batch_pos < engine->prepared) {
        tb_source_record_t *record = &engine->batch[engine->batch_pos];
        if (engine->next_seq - engine->head_seq >= RING_SIZE) {
            return false;
        }
        if (engine->disposition[engine->batch_pos] != PRODUCE) {
            /* not written: it keeps its place in the ring so that offsets
             * stay in order; a failed one holds them back */
            in_flight_t *skipped = &engine->ring[engine->next_seq % RING_SIZE];
            skipped->partition = record->source_partition;
            skipped->offset = record->source_offset;
            skipped->delivered = engine->disposition[engine->batch_pos] == SKIP;
            record->source_partition = record->source_offset = NULL;
            tb_source_free_record(record);
            engine->next_seq++;
            engine->batch_pos++;
            continue;
        }
        if (record->topic != engine->last_topic &&
            json_object_get(engine->topics, record->topic) == NULL) {
            json_object_set_new(engine->topics, record->topic, json_true());
            engine->env->topic_used(engine->env->topic_opaque, engine->env->connector,
                                    record->topic);
        }
        engine->last_topic = record->topic; /* a run's records share it */
        size_t run = run_length(engine);
        if (run > 0) {
            if (!produce_run(engine, run, now_us)) {
                return false;
            }
            continue;
        }
        /* a value the runtime owns is handed over, a borrowed one copied */
        int flags = record->bytes_borrowed ? RD_KAFKA_MSG_F_COPY : RD_KAFKA_MSG_F_FREE;
        rd_kafka_resp_err_t err = tb_source_produce_record(
            engine, record, flags, timestamp_ms, record_opaque(engine, engine->next_seq));
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return false;
        }
        settle(engine, record, err, flags, now_us);
    }
    if (engine->batch_pos == engine->batch_len) {
        engine->batch_len = engine->batch_pos = engine->prepared = 0;
    }
    return true;
}
