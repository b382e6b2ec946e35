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
 * Kafka in one transaction together with the task's progress marker
 * (tb_progress_marker.h): the records and the source offsets they reach are
 * committed atomically, and a restarted task fences its predecessor
 * (init_transactions) and resumes exactly after the last committed batch.
 */
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_group_offsets.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_progress_marker.h"
#include "connectors/runtime/tb_connector_config.h"
#include "connectors/runtime/tb_task_engine.h"
#include "connectors/runtime/tb_task_metrics.h"
#include "connectors/runtime/tb_task_retry.h"
#include "connectors/runtime/tb_task_transforms.h"
#include "connectors/runtime/tb_upsert.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define RING_SIZE 65536 /* records in flight per task */
#define POLL_BATCH 512  /* records asked of the plugin per step */
/* A transactional call holds a pool thread for at most TXN_STEP_MS a step;
 * one that has no answer yet is attempted again at a later step, for up to
 * TXN_TIMEOUT_MS in all. */
#define TXN_STEP_MS 500
#define TXN_WARN_MS 5000 /* a call unanswered this long is logged */
#define TXN_TIMEOUT_MS 30000
#define TXN_ABORTS 10 /* aborted attempts in a row before the task fails */

/* The transactional call an exactly-once task has under way. */
typedef enum {
    TXN_CALL_NONE = 0, /* between transactions */
    TXN_CALL_INIT,     /* init_transactions: fences the predecessors */
    TXN_CALL_OFFSETS,  /* send_offsets_to_transaction: the progress marker */
    TXN_CALL_COMMIT,
    TXN_CALL_ABORT,
} txn_call_t;

typedef struct {
    json_t *partition;
    json_t *offset;
    int64_t produced_us; /* when it went to librdkafka, for the latency */
    bool delivered;      /* done with: acknowledged, or let go by errors.tolerance */
} in_flight_t;

/* The headers a produced record can carry: its message id at most. */
#define RECORD_HEADERS 1

/* What becomes of a polled record. Only a record that failed without
 * errors.tolerance=all holds its source offset back. */
typedef enum {
    PRODUCE = 0,
    SKIP,   /* not written by design (an update_before row) or tolerated */
    FAILED, /* failed: the task fails before its offset is recorded */
    WAIT,   /* a converter asked to try again later (not a final disposition) */
} disposition_t;

typedef struct {
    const tb_task_env_t *env;
    tb_task_context_t ctx; /* the plugin may keep a pointer to it */
    void *plugin_task;
    rd_kafka_t *rk;
    tb_converter_t *key_converter;
    tb_converter_t *value_converter;
    tb_chain_t *chain; /* NULL: no transforms */
    bool tolerate_errors;
    tb_dlq_t *dlq; /* records Kafka refused, with errors.tolerance=all; or NULL */
    in_flight_t *ring;
    uint64_t next_seq;      /* number of the next record produced */
    uint64_t head_seq;      /* oldest record not yet folded into committable */
    json_t *committable;    /* canonical partition text -> {partition, offset} */
    json_t *topics;         /* topics written to: name -> true */
    const char *last_topic; /* the topic of the last record produced (in topics) */
    int64_t served_us;      /* when librdkafka last served delivery reports */
    json_t *last_partition; /* the source partition last folded, and its key */
    char *last_key;
    tb_source_record_t batch[POLL_BATCH];
    disposition_t disposition[POLL_BATCH]; /* what becomes of batch[i] */
    size_t batch_len;
    size_t batch_pos;
    /* batch[0, prepared) have their disposition; batch[prepared] waits for
     * a converter's retry at retry_at_ms, reshaped (upsert and chain done)
     * and with the sides in done already Kafka bytes */
    size_t prepared;
    bool reshaped;
    bool done[2];
    tb_task_retry_t retry;
    int64_t retry_at_ms;
    int64_t last_flush_ms;
    char failure[1024]; /* a failure that fails the task */
    tb_task_metrics_t metrics;
    tb_source_metrics_t source_metrics;
    json_t *error_series;          /* delivery error name -> its counter (a pointer) */
    const json_t *primary_key;     /* write.mode=upsert: its fields; else NULL */
    const char *message_id_header; /* or NULL */
    /* exactly-once only */
    bool transactional;
    char txn_id[300];       /* the transactional id */
    char marker_group[300]; /* the group of the progress marker */
    const char *marker_topic;
    int64_t marker_sequence; /* transactions committed so far */
    int64_t generation;      /* the offsets generation of the store */
    bool marker_missing;     /* no marker: a stored offset refuses the start */
    bool stored_history;     /* the plugin found a stored offset of its own */
    bool legacy_marker;      /* resumed from the old group: forget it once */
    size_t txn_max_records;
    size_t txn_max_bytes;
    size_t txn_size; /* records in the next attempt (halved on aborts) */
    int aborts;      /* attempts aborted in a row */
    bool txn_delivery_failed;
    txn_call_t txn_call;       /* attempted once a step until it is over */
    int64_t txn_call_since_ms; /* its first attempt; 0: not attempted yet */
    bool txn_call_warned;      /* its wait was logged */
    /* the open transaction: its marker (owned), source offsets (owned) and
     * records, from batch_pos */
    rd_kafka_topic_partition_list_t *txn_marker;
    json_t *txn_offsets;
    size_t txn_count;
    char txn_reason[1024]; /* why the open transaction is being aborted */
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

/* The record of a failed delivery report, for let_go_refused(). headers
 * receives up to RECORD_HEADERS of its headers. */
static tb_sink_record_t refused_record(const rd_kafka_message_t *msg,
                                       tb_header_t headers[RECORD_HEADERS])
{
    rd_kafka_headers_t *hdrs = NULL;
    size_t count = 0;
    if (rd_kafka_message_headers(msg, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        while (count < RECORD_HEADERS &&
               rd_kafka_header_get_all(
                   hdrs, count, &headers[count].name, &headers[count].value,
                   &headers[count].value_len) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            count++;
        }
    }
    return (tb_sink_record_t){.topic = rd_kafka_topic_name(msg->rkt),
                              .partition = msg->partition,
                              .offset = -1,
                              .timestamp = rd_kafka_message_timestamp(msg, NULL),
                              .key = msg->key,
                              .key_len = msg->key_len,
                              .value = msg->payload,
                              .value_len = msg->len,
                              .headers = headers,
                              .header_count = count};
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    source_engine_t *engine = opaque;
    (void)rk;
    if (engine->transactional) {
        /* the transaction's commit acknowledges its records, or fails */
        if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            count_delivery_error(engine, msg->err);
            engine->txn_delivery_failed = true;
        }
        return;
    }
    uint64_t seq = (uint64_t)(uintptr_t)msg->_private;
    in_flight_t *entry = &engine->ring[seq % RING_SIZE];
    tb_series_observe(engine->source_metrics.produce_seconds,
                      (double)(engine->served_us - entry->produced_us) / 1e6);
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        tb_series_add(engine->metrics.records_written, 1);
        entry->delivered = true;
        return;
    }
    count_delivery_error(engine, msg->err);
    tb_header_t headers[RECORD_HEADERS];
    tb_sink_record_t record = refused_record(msg, headers);
    entry->delivered = let_go_refused(engine, seq, &record, msg->err);
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

/* Makes offset (stolen) the latest of partition (stolen) in the set to
 * record. Records come in runs from one source partition: its canonical key
 * is computed once per run, not once per record. */
static void fold_offset(source_engine_t *engine, json_t *partition, json_t *offset)
{
    if (engine->last_partition == NULL ||
        !json_equal(partition, engine->last_partition)) {
        free(engine->last_key);
        json_decref(engine->last_partition);
        engine->last_key = json_dumps(partition, JSON_COMPACT | JSON_SORT_KEYS);
        engine->last_partition = json_incref(partition);
    }
    json_t *slot = json_object_get(engine->committable, engine->last_key);
    if (slot == NULL) {
        slot = json_pack("{s:O}", "partition", partition);
        json_object_set_new(engine->committable, engine->last_key, slot);
    }
    json_object_set_new(slot, "offset", offset);
    json_decref(partition);
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
            fold_offset(engine, entry->partition, entry->offset);
        } else {
            json_decref(entry->offset);
        }
        memset(entry, 0, sizeof(*entry));
        engine->head_seq++;
    }
}

/* Records the offsets folded so far, once the dead letter queue has every
 * record let go before them. */
static int record_offsets(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    const char *key;
    json_t *entry;
    if (engine->dlq != NULL &&
        tb_dlq_flush(engine->dlq, (int)engine->env->shutdown_timeout_ms, errstr,
                     errstr_size) != 0) {
        return -1;
    }
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

/* record_offsets(), counted as an offset commit. */
static int flush_offsets(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    engine->last_flush_ms = tb_monotonic_ms();
    int64_t started = tb_monotonic_us();
    int rc = record_offsets(engine, errstr, errstr_size);
    tb_task_metrics_commit(&engine->metrics, started, rc == 0);
    return rc;
}

/* The stored offset of one source partition, for the plugin at start. A
 * store that cannot be read fails the task (source_start looks at
 * engine->failure once the plugin has started). */
static json_t *stored_offset(void *runtime, const json_t *partition)
{
    source_engine_t *engine = runtime;
    const tb_task_env_t *env = engine->env;
    char errstr[512];
    json_t *offsets =
        tb_store_offsets_get(env->store, env->connector, errstr, sizeof(errstr));
    if (offsets == NULL && engine->failure[0] == '\0') {
        snprintf(engine->failure, sizeof(engine->failure),
                 "the stored source offsets cannot be read: %s", errstr);
    }
    json_t *found = NULL;
    size_t i;
    json_t *entry;
    json_array_foreach (offsets, i, entry) {
        if (json_equal(json_object_get(entry, "partition"), (json_t *)partition)) {
            found = json_incref(json_object_get(entry, "offset"));
        }
    }
    json_decref(offsets);
    engine->stored_history = engine->stored_history || found != NULL;
    return found;
}

/* Reads the task's marker from its group, else from the group tributary
 * 0.1.0 used (once: that one is deleted after the task's first transaction
 * under the new name). An offset there that is no marker is a sink's. */
static tb_progress_marker_status_t read_marker(source_engine_t *engine,
                                               const json_t *props,
                                               tb_progress_marker_t *marker, char *errstr,
                                               size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    char legacy[300];
    tb_progress_marker_status_t status = tb_progress_marker_read(
        props, engine->marker_group, engine->marker_topic, marker, errstr, errstr_size);
    if (status != TB_PROGRESS_MARKER_NONE) {
        return status == TB_PROGRESS_MARKER_FOREIGN ? TB_PROGRESS_MARKER_ERROR : status;
    }
    tb_progress_marker_legacy_group(env->connector, env->id, legacy, sizeof(legacy));
    status = tb_progress_marker_read(props, legacy, engine->marker_topic, marker, errstr,
                                     errstr_size);
    if (status == TB_PROGRESS_MARKER_FOREIGN) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "%s; not taken as the task's old progress marker", errstr);
        return TB_PROGRESS_MARKER_NONE;
    }
    engine->legacy_marker = status == TB_PROGRESS_MARKER_FOUND;
    if (engine->legacy_marker) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "progress marker found under its old group %s; it moves to %s "
                    "with the next transaction",
                    legacy, engine->marker_group);
    }
    return status;
}

/* Makes the store agree with a marker of its offsets generation or a later
 * one (a store older than the marker: restored from a copy). */
static int adopt_marker(source_engine_t *engine, const tb_progress_marker_t *marker,
                        char *errstr, size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    json_t *offsets = json_copy(marker->offsets);
    if (marker->generation > engine->generation) {
        json_array_append_new(offsets,
                              tb_progress_marker_generation_entry(marker->generation));
        engine->generation = marker->generation;
    }
    int rc =
        tb_store_offsets_put(env->store, env->connector, offsets, errstr, errstr_size);
    json_decref(offsets);
    TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                "resuming after transaction %lld of %s (progress marker)",
                (long long)marker->sequence, engine->txn_id);
    return rc;
}

/* Exactly-once start, once the task's predecessors are fenced
 * (open_transactions): makes the store agree with the progress marker, so that the plugin
 * resumes right after the last committed transaction. A marker older than the operator's
 * last change of the offsets is ignored: the store is the authority then. A missing
 * marker is judged once the plugin has asked for its offsets (check_missing_marker). */
static int start_transactions(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    tb_progress_marker_t marker = {0};
    json_t *stored =
        tb_store_offsets_get(env->store, env->connector, errstr, errstr_size);
    json_t *props =
        stored != NULL
            ? tb_client_props_resolved(env->client, TB_CLIENT_CONSUMER,
                                       env->connector_config, errstr, errstr_size)
            : NULL;
    engine->generation = tb_progress_marker_generation_of(stored);
    json_decref(stored);
    if (props == NULL) {
        return -1;
    }
    json_object_del(props, TB_JAVA_MAX_POLL_RECORDS); /* a sink's batch bound */
    tb_progress_marker_status_t status =
        read_marker(engine, props, &marker, errstr, errstr_size);
    json_decref(props);
    int rc = status == TB_PROGRESS_MARKER_ERROR ? -1 : 0;
    if (status == TB_PROGRESS_MARKER_FOUND) {
        engine->marker_sequence = marker.sequence;
    }
    if (status == TB_PROGRESS_MARKER_FOUND && marker.generation < engine->generation) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "the connector's offsets were changed after transaction %lld of %s "
                    "(offsets generation %lld, the marker's %lld): resuming from the "
                    "stored offsets",
                    (long long)marker.sequence, engine->txn_id,
                    (long long)engine->generation, (long long)marker.generation);
    } else if (status == TB_PROGRESS_MARKER_FOUND) {
        rc = adopt_marker(engine, &marker, errstr, errstr_size);
    }
    engine->marker_missing = status == TB_PROGRESS_MARKER_NONE;
    tb_progress_marker_clear(&marker);
    return rc;
}

/* A task without a marker whose plugin found stored offsets of its own
 * cannot trust them: records may be in Kafka past them (the marker
 * expired, or the task ran at-least-once before). A task with no stored
 * offsets (new, or its offsets reset) starts. */
static int check_missing_marker(const source_engine_t *engine, char *errstr,
                                size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    if (!engine->marker_missing || !engine->stored_history) {
        return 0;
    }
    if (!tb_config_bool(env->settings, "exactly.once.allow.missing.marker")) {
        snprintf(errstr, errstr_size,
                 "the progress marker of %s (consumer group %s) is missing, so the "
                 "task's stored offsets cannot be trusted: records may be in Kafka past "
                 "them. Set exactly.once.allow.missing.marker=true to start from the "
                 "stored offsets anyway (records may then be written twice)",
                 engine->txn_id, engine->marker_group);
        return -1;
    }
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", env->connector, env->id,
                "progress marker of %s missing; starting from the stored offsets "
                "(exactly.once.allow.missing.marker=true): records may repeat",
                engine->txn_id);
    return 0;
}

/* Whether settings keep a task from running in transactions: a connector
 * stored before its worker enabled them may have a transaction.boundary they
 * cannot honour. errstr says why. */
static bool transactions_refused(const json_t *settings, char *errstr, size_t errstr_size)
{
    json_t *errors = json_object();
    tb_connector_config_check_transactions(settings, errors);
    bool refused = tb_config_error_count(errors) > 0;
    tb_config_errors_join(errors, "; ", errstr, errstr_size);
    json_decref(errors);
    return refused;
}

/* Starts the plugin: an exactly-once task's once the store agrees with its
 * progress marker. */
static int start_plugin(source_engine_t *engine, char *errstr, size_t errstr_size)
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
    if (engine->transactional && check_missing_marker(engine, errstr, errstr_size) != 0) {
        return -1;
    }
    return 0;
}

static int source_start(const tb_task_env_t *env, void **out, char *errstr,
                        size_t errstr_size)
{
    source_engine_t *engine = calloc(1, sizeof(*engine));
    rd_kafka_conf_t *conf = NULL;
    json_t *props = tb_client_props_resolved(env->client, TB_CLIENT_PRODUCER,
                                             env->connector_config, errstr, errstr_size);
    const json_t *settings = env->settings;
    char client_id[300];

    engine->env = env;
    if (props == NULL) {
        free(engine);
        return -1;
    }
    engine->ctx = (tb_task_context_t){.connector = env->connector,
                                      .task = env->id,
                                      .offset_for = stored_offset,
                                      .runtime = engine};
    engine->retry = tb_task_retry_from(settings);
    engine->tolerate_errors =
        strcmp(tb_config_string(settings, "errors.tolerance"), "all") == 0;
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
    if (strcmp(tb_config_string(settings, "write.mode"), "upsert") == 0) {
        engine->primary_key = tb_config_list(settings, "primary.key");
    }
    const char *header = tb_config_string(settings, "message.id.header");
    engine->message_id_header = header != NULL && header[0] != '\0' ? header : NULL;
    engine->transactional =
        tb_connector_config_transactional(settings, env->exactly_once_available);
    engine->ctx.offset_every_record =
        engine->message_id_header != NULL || engine->transactional;
    if (engine->transactional) {
        if (transactions_refused(settings, errstr, errstr_size)) {
            goto fail;
        }
        snprintf(engine->txn_id, sizeof(engine->txn_id), "connect-%s-%d", env->connector,
                 env->id);
        tb_progress_marker_group(env->connector, env->id, engine->marker_group,
                                 sizeof(engine->marker_group));
        engine->marker_topic = tb_config_string(settings, "topic");
        /* at most POLL_BATCH: the key's range */
        engine->txn_max_records =
            (size_t)tb_config_int(settings, "exactly.once.transaction.max.records");
        engine->txn_max_bytes =
            (size_t)tb_config_int(settings, "exactly.once.transaction.max.bytes");
        engine->txn_size = engine->txn_max_records;
        json_object_set_new(props, "transactional.id", json_string(engine->txn_id));
        json_object_set_new(props, "enable.idempotence", json_string("true"));
        engine->txn_call = TXN_CALL_INIT; /* at the first step */
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
    conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        goto fail;
    }
    rd_kafka_conf_set_opaque(conf, engine);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_error_cb(conf, on_error);
    engine->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (engine->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    rd_kafka_queue_t *main_queue = rd_kafka_queue_get_main(engine->rk);
    rd_kafka_queue_cb_event_enable(main_queue, on_queue_event, (void *)env);
    rd_kafka_queue_destroy(main_queue);
    /* an exactly-once task starts its plugin in open_transactions */
    if (!engine->transactional && start_plugin(engine, errstr, errstr_size) != 0) {
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
 * pass-through converter). Returns -1 with errstr on failure. */
static int convert(tb_converter_t *converter, const char *topic, tb_data_kind_t kind,
                   void **data, size_t *len, char *errstr, size_t errstr_size)
{
    void *out = NULL;
    size_t out_len = 0;
    if (tb_converter_passthrough(converter)) {
        return 0;
    }
    int rc = tb_converter_from_plugin_topic(converter, topic, kind, *data, *len, &out,
                                            &out_len, errstr, errstr_size);
    if (rc != 0) {
        return rc;
    }
    free(*data);
    *data = out;
    *len = out_len;
    return 0;
}

static void count_polled(source_engine_t *engine)
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

/* A converter that cannot convert now (TB_CONVERTER_RETRY): the record
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
    bool reshaped = engine->reshaped;
    engine->reshaped = true;
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
        rc = tb_source_transform(engine->chain, converters, record, done, &failure);
        if (rc == 1) {
            return SKIP; /* filtered out */
        }
        if (rc == -1) {
            stage = failure.stage;
            failed_class = failure.class_name;
            snprintf(reason, sizeof(reason), "%.400s (%s)", failure.reason, failed_class);
        }
    }
    if (stage == NULL && !done[TB_SIDE_KEY]) {
        rc = convert(engine->key_converter, record->topic, record->key_kind, &record->key,
                     &record->key_len, reason, sizeof(reason));
        done[TB_SIDE_KEY] = rc == 0;
        stage = rc != 0 ? "KEY_CONVERTER" : NULL;
    }
    if (stage == NULL && !done[TB_SIDE_VALUE]) {
        rc = convert(engine->value_converter, record->topic, record->value_kind,
                     &record->value, &record->value_len, reason, sizeof(reason));
        done[TB_SIDE_VALUE] = rc == 0;
        stage = rc != 0 ? "VALUE_CONVERTER" : NULL;
    }
    if (stage == NULL) {
        return PRODUCE;
    }
    /* not the record's fault (the schema registry did not answer) */
    if (rc == TB_CONVERTER_RETRY &&
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

/* Prepares the polled records from engine->prepared on, once a converter's
 * retry is due. Returns 0 when every one has its disposition, else how long
 * to wait (ms) before a record's converter is tried again. */
static int64_t prepare_batch(source_engine_t *engine)
{
    int64_t wait = engine->retry_at_ms - tb_monotonic_ms();
    if (engine->prepared < engine->batch_len && wait > 0) {
        return wait;
    }
    while (engine->prepared < engine->batch_len) {
        disposition_t disposition =
            prepare_record(engine, &engine->batch[engine->prepared]);
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

/* Hands one record to librdkafka (flags: F_FREE or F_COPY), with its
 * message id header when message.id.header is set. */
static rd_kafka_resp_err_t produce_record(source_engine_t *engine,
                                          tb_source_record_t *record, int flags,
                                          void *opaque)
{
    rd_kafka_headers_t *headers = NULL;
    if (engine->message_id_header != NULL) {
        char id[65];
        tb_message_id(engine->env->connector, record->source_partition,
                      record->source_offset, id);
        headers = rd_kafka_headers_new(1);
        rd_kafka_header_add(headers, engine->message_id_header, -1, id, 64);
    }
    rd_kafka_resp_err_t err = rd_kafka_producev(
        engine->rk, RD_KAFKA_V_TOPIC(record->topic),
        RD_KAFKA_V_PARTITION(record->partition),
        RD_KAFKA_V_KEY(record->key, record->key_len),
        RD_KAFKA_V_VALUE(record->value, record->value_len), RD_KAFKA_V_MSGFLAGS(flags),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && headers != NULL) {
        rd_kafka_headers_destroy(headers); /* not taken on failure */
    }
    return err;
}

/* Produces the polled records not yet handed to librdkafka. Returns false
 * when librdkafka's queue or the ring is full. */
static bool produce_batch(source_engine_t *engine)
{
    int64_t now_us = tb_monotonic_us(); /* a batch is produced within microseconds */
    while (engine->batch_pos < engine->prepared) {
        tb_source_record_t *record = &engine->batch[engine->batch_pos];
        if (engine->next_seq - engine->head_seq >= RING_SIZE) {
            return false;
        }
        uint64_t seq = engine->next_seq;
        if (engine->disposition[engine->batch_pos] != PRODUCE) {
            /* not written: it keeps its place in the ring so that offsets
             * stay in order; a failed one holds them back */
            in_flight_t *skipped = &engine->ring[seq % RING_SIZE];
            skipped->partition = record->source_partition;
            skipped->offset = record->source_offset;
            skipped->delivered = engine->disposition[engine->batch_pos] == SKIP;
            record->source_partition = record->source_offset = NULL;
            free_record(record);
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
        engine->last_topic = record->topic;
        rd_kafka_resp_err_t err =
            produce_record(engine, record, RD_KAFKA_MSG_F_FREE, (void *)(uintptr_t)seq);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            return false;
        }
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
                                        .value_len = record->value_len};
            entry->delivered = let_go_refused(engine, seq, &refused, err);
            free(record->value);
        }
        record->value = NULL;
        free_record(record);
        engine->next_seq++;
        engine->batch_pos++;
    }
    if (engine->batch_pos == engine->batch_len) {
        engine->batch_len = engine->batch_pos = engine->prepared = 0;
    }
    return true;
}

/* -------------------------------------------------------------------------
 * Exactly-once: one transaction per batch, with the progress marker
 */

/* The source offsets batch[first, first + count) reaches: the latest of
 * each source partition it holds, and only those (the store has the
 * earlier transactions'). A new array. */
static json_t *marker_offsets(const source_engine_t *engine, size_t first, size_t count)
{
    json_t *latest = json_object(); /* canonical partition -> {partition, offset} */
    for (size_t i = first; i < first + count; i++) {
        const tb_source_record_t *r = &engine->batch[i];
        if (r->source_partition != NULL) {
            char *key = json_dumps(r->source_partition, JSON_COMPACT | JSON_SORT_KEYS);
            json_object_set_new(latest, key,
                                json_pack("{s:O, s:O}", "partition", r->source_partition,
                                          "offset", r->source_offset));
            free(key);
        }
    }
    json_t *offsets = json_array();
    const char *key;
    json_t *entry;
    json_object_foreach (latest, key, entry) {
        json_array_append(offsets, entry);
    }
    json_decref(latest);
    return offsets;
}

/* The marker of the next transaction, batch[batch_pos, +*count): *count is
 * halved until its source offsets fit in a marker. NULL with errstr when
 * even one record's do not. *offsets gets them (a new array). */
static rd_kafka_topic_partition_list_t *fitting_marker(source_engine_t *engine,
                                                       size_t *count, json_t **offsets,
                                                       char *errstr, size_t errstr_size)
{
    for (;;) {
        *offsets = marker_offsets(engine, engine->batch_pos, *count);
        rd_kafka_topic_partition_list_t *list =
            tb_progress_marker_make(engine->marker_topic, engine->marker_sequence + 1,
                                    engine->generation, *offsets, errstr, errstr_size);
        if (list != NULL || *count == 1) {
            return list;
        }
        json_decref(*offsets);
        *count /= 2;
    }
}

/* Deletes the marker under tributary 0.1.0's group name once the task's
 * first transaction has put one under the new name: read again later, it
 * would take the store back. A failure is logged; the new marker is read
 * first in any case. */
static void forget_legacy_marker(source_engine_t *engine)
{
    const tb_task_env_t *env = engine->env;
    char legacy[300];
    char errstr[512];
    tb_progress_marker_legacy_group(env->connector, env->id, legacy, sizeof(legacy));
    json_t *props = tb_client_props_resolved(
        env->client, TB_CLIENT_ADMIN, env->connector_config, errstr, sizeof(errstr));
    json_t *ops = json_pack("[{s:s, s:i, s:i}]", "topic", engine->marker_topic,
                            "partition", 0, "offset", -1);
    if (props == NULL ||
        tb_group_offsets_alter(props, legacy, ops, errstr, sizeof(errstr)) != 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", env->connector, env->id,
                    "the old progress marker (group %s) could not be deleted: %s; "
                    "delete that group's offsets with kafka-consumer-groups",
                    legacy, errstr);
    }
    engine->legacy_marker = false;
    json_decref(ops);
    json_decref(props);
}

/* How many records from batch_pos go into the next transaction: at most
 * txn_size, and no more than txn_max_bytes (a larger record goes alone). */
static size_t chunk_size(const source_engine_t *engine)
{
    size_t count = 0, bytes = 0;
    while (engine->batch_pos + count < engine->batch_len && count < engine->txn_size) {
        const tb_source_record_t *r = &engine->batch[engine->batch_pos + count];
        size_t size = r->key_len + r->value_len;
        if (count > 0 && bytes + size > engine->txn_max_bytes) {
            break;
        }
        bytes += size;
        count++;
    }
    return count;
}

static const char *txn_call_name(txn_call_t call)
{
    switch (call) {
    case TXN_CALL_INIT:
        return "initialising transactions";
    case TXN_CALL_OFFSETS:
        return "sending the progress marker";
    case TXN_CALL_COMMIT:
        return "committing";
    case TXN_CALL_ABORT:
        return "aborting";
    case TXN_CALL_NONE:
        break;
    }
    return "?";
}

/* One attempt at the call under way, waiting at most TXN_STEP_MS. init,
 * commit and abort resume what librdkafka goes on doing in the background;
 * the marker is sent again, identical, as librdkafka asks. */
static rd_kafka_error_t *txn_call_once(source_engine_t *engine)
{
    rd_kafka_consumer_group_metadata_t *group;
    rd_kafka_error_t *error;
    switch (engine->txn_call) {
    case TXN_CALL_INIT:
        return rd_kafka_init_transactions(engine->rk, TXN_STEP_MS);
    case TXN_CALL_OFFSETS:
        group = rd_kafka_consumer_group_metadata_new(engine->marker_group);
        error = rd_kafka_send_offsets_to_transaction(engine->rk, engine->txn_marker,
                                                     group, TXN_STEP_MS);
        rd_kafka_consumer_group_metadata_destroy(group);
        return error;
    case TXN_CALL_COMMIT:
        return rd_kafka_commit_transaction(engine->rk, TXN_STEP_MS);
    case TXN_CALL_ABORT:
    case TXN_CALL_NONE:
        break;
    }
    return rd_kafka_abort_transaction(engine->rk, TXN_STEP_MS);
}

/* Attempts the call under way once. Returns false when it is to be
 * attempted again at a later step: a retriable error (a timeout included)
 * within TXN_TIMEOUT_MS of its first attempt (a wait of TXN_WARN_MS is
 * logged, once). Returns true when the call is over: *error is its result
 * (NULL: done). */
static bool txn_call_over(source_engine_t *engine, rd_kafka_error_t **error)
{
    int64_t now = tb_monotonic_ms();
    if (engine->txn_call_since_ms == 0) {
        engine->txn_call_since_ms = now;
        engine->txn_call_warned = false;
    }
    int64_t waited = now - engine->txn_call_since_ms;
    *error = txn_call_once(engine);
    if (*error == NULL || !rd_kafka_error_is_retriable(*error) ||
        waited >= TXN_TIMEOUT_MS) {
        engine->txn_call_since_ms = 0;
        return true;
    }
    if (waited >= TXN_WARN_MS && !engine->txn_call_warned) {
        engine->txn_call_warned = true;
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector,
                    engine->env->id,
                    "%s (%s) has had no answer for %lld ms: %s; trying again, for up "
                    "to %d ms in all",
                    txn_call_name(engine->txn_call), engine->txn_id, (long long)waited,
                    rd_kafka_error_string(*error), TXN_TIMEOUT_MS);
    }
    rd_kafka_error_destroy(*error);
    *error = NULL;
    return false;
}

/* Forgets the open transaction's marker, offsets and size. */
static void txn_clear(source_engine_t *engine)
{
    if (engine->txn_marker != NULL) {
        rd_kafka_topic_partition_list_destroy(engine->txn_marker);
    }
    engine->txn_marker = NULL;
    json_decref(engine->txn_offsets);
    engine->txn_offsets = NULL;
    engine->txn_count = 0;
}

/* A transactional call failed: the transaction is aborted (over the next
 * steps) when the error asks for it, else the task fails. Consumes error. */
static int64_t txn_failed(source_engine_t *engine, rd_kafka_error_t *error, char *errstr,
                          size_t errstr_size)
{
    snprintf(engine->txn_reason, sizeof(engine->txn_reason), "transaction of %s: %s",
             engine->txn_id, rd_kafka_error_string(error));
    snprintf(errstr, errstr_size, "%s", engine->txn_reason);
    bool abortable = rd_kafka_error_txn_requires_abort(error);
    rd_kafka_error_destroy(error);
    if (!abortable) {
        return TB_TASK_STEP_FAILED;
    }
    engine->txn_call = TXN_CALL_ABORT;
    return TB_POOL_RUN_AGAIN;
}

/* Opens the transaction of the next records from batch_pos: its marker,
 * begin, its records produced; its marker is sent next (TXN_CALL_OFFSETS). */
static int64_t txn_begin(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    size_t count = chunk_size(engine);
    engine->txn_marker =
        fitting_marker(engine, &count, &engine->txn_offsets, errstr, errstr_size);
    engine->txn_count = count;
    if (engine->txn_marker == NULL) {
        return TB_TASK_STEP_FAILED;
    }
    rd_kafka_error_t *error = rd_kafka_begin_transaction(engine->rk);
    if (error != NULL) {
        return txn_failed(engine, error, errstr, errstr_size);
    }
    engine->txn_delivery_failed = false;
    for (size_t i = engine->batch_pos; i < engine->batch_pos + count; i++) {
        tb_source_record_t *r = &engine->batch[i];
        if (engine->disposition[i] != PRODUCE) {
            continue;
        }
        rd_kafka_resp_err_t err = produce_record(engine, r, RD_KAFKA_MSG_F_COPY, NULL);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(errstr, errstr_size, "producing to %s in transaction %s failed: %s",
                     r->topic, engine->txn_id, rd_kafka_err2str(err));
            return txn_failed(engine, rd_kafka_error_new(err, "%s", errstr), errstr,
                              errstr_size);
        }
    }
    engine->txn_call = TXN_CALL_OFFSETS;
    return TB_POOL_RUN_AGAIN;
}

/* The open transaction committed: its offsets go to the store before the
 * next one begins. */
static int64_t txn_committed(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    size_t count = engine->txn_count;
    int rc = tb_store_offsets_put(engine->env->store, engine->env->connector,
                                  engine->txn_offsets, errstr, errstr_size);
    txn_clear(engine);
    engine->marker_sequence++;
    engine->aborts = 0;
    if (engine->legacy_marker) {
        forget_legacy_marker(engine);
    }
    tb_series_add(engine->source_metrics.txn_commits, 1);
    tb_series_add(engine->metrics.records_written, (double)count);
    for (size_t i = engine->batch_pos; i < engine->batch_pos + count; i++) {
        free_record(&engine->batch[i]);
    }
    engine->batch_pos += count;
    if (engine->batch_len == engine->batch_pos) {
        engine->batch_len = engine->batch_pos = 0;
    }
    return rc == 0 ? TB_POOL_RUN_AGAIN : TB_TASK_STEP_FAILED;
}

/* The open transaction was rolled back: the same records are tried again
 * with half as many in a transaction, at most TXN_ABORTS times in a row. */
static int64_t txn_aborted(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    size_t count = engine->txn_count;
    txn_clear(engine);
    tb_series_add(engine->source_metrics.txn_aborts, 1);
    snprintf(errstr, errstr_size, "%s", engine->txn_reason);
    if (++engine->aborts > TXN_ABORTS) {
        return TB_TASK_STEP_FAILED;
    }
    engine->txn_size = count > 1 ? count / 2 : 1;
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", engine->env->connector, engine->env->id,
                "%s; aborted, trying again with %zu record(s)", engine->txn_reason,
                engine->txn_size);
    return 100;
}

/* Predecessors fenced: the store is made to agree with the marker and the
 * plugin starts. */
static int64_t txn_initialised(source_engine_t *engine, rd_kafka_error_t *error,
                               char *errstr, size_t errstr_size)
{
    if (error != NULL) {
        snprintf(errstr, errstr_size, "initialising transactions of %s failed: %s",
                 engine->txn_id, rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
        return TB_TASK_STEP_FAILED;
    }
    if (start_transactions(engine, errstr, errstr_size) != 0 ||
        start_plugin(engine, errstr, errstr_size) != 0) {
        return TB_TASK_STEP_FAILED;
    }
    return TB_POOL_RUN_AGAIN;
}

/* Attempts the call under way, and acts on its result once it is over. */
static int64_t txn_call_step(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    rd_kafka_error_t *error;
    if (!txn_call_over(engine, &error)) {
        return TXN_STEP_MS;
    }
    txn_call_t call = engine->txn_call;
    engine->txn_call = TXN_CALL_NONE;
    switch (call) {
    case TXN_CALL_INIT:
        return txn_initialised(engine, error, errstr, errstr_size);
    case TXN_CALL_OFFSETS:
        if (error == NULL) {
            engine->txn_call = TXN_CALL_COMMIT;
            return TB_POOL_RUN_AGAIN;
        }
        return txn_failed(engine, error, errstr, errstr_size);
    case TXN_CALL_COMMIT:
        return error == NULL ? txn_committed(engine, errstr, errstr_size)
                             : txn_failed(engine, error, errstr, errstr_size);
    case TXN_CALL_ABORT:
    case TXN_CALL_NONE:
        break;
    }
    if (error != NULL) { /* the abort failed: the producer cannot go on */
        rd_kafka_error_destroy(error);
        snprintf(errstr, errstr_size, "%s", engine->txn_reason);
        return TB_TASK_STEP_FAILED;
    }
    return txn_aborted(engine, errstr, errstr_size);
}

/* A step of an exactly-once task: one bounded attempt at the transactional
 * call under way, or, between transactions, a poll of the plugin and the
 * next transaction begun. */
static int64_t transactional_step(source_engine_t *engine, bool paused, char *errstr,
                                  size_t errstr_size)
{
    int64_t wake_ms = -1;
    rd_kafka_poll(engine->rk, 0);
    if (engine->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", engine->failure);
        return TB_TASK_STEP_FAILED;
    }
    if (engine->txn_call != TXN_CALL_NONE) {
        return txn_call_step(engine, errstr, errstr_size);
    }
    if (engine->batch_len == 0) {
        if (paused) {
            return 1000;
        }
        if (engine->env->plugin->poll(engine->plugin_task, engine->batch,
                                      engine->txn_max_records, &engine->batch_len,
                                      &wake_ms, errstr, errstr_size) != 0) {
            return TB_TASK_STEP_FAILED;
        }
        if (engine->batch_len == 0) {
            return wake_ms > 0 ? wake_ms : 1000;
        }
        count_polled(engine);
        engine->batch_pos = engine->prepared = 0;
    }
    /* a transaction holds prepared records only: all of the batch */
    int64_t wait = prepare_batch(engine);
    if (engine->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", engine->failure);
        return TB_TASK_STEP_FAILED;
    }
    if (wait > 0) {
        return wait;
    }
    return txn_begin(engine, errstr, errstr_size);
}

static int64_t source_step(void *opaque, bool paused, char *errstr, size_t errstr_size)
{
    source_engine_t *engine = opaque;
    int64_t flush_due = engine->last_flush_ms + engine->env->offset_flush_interval_ms;
    int64_t wake_ms = -1;

    if (engine->transactional) {
        return transactional_step(engine, paused, errstr, errstr_size);
    }
    engine->served_us = tb_monotonic_us();
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
    /* records whose conversion waits for its retry */
    int64_t wait = prepare_batch(engine);
    if (engine->batch_len > 0) {
        produce_batch(engine);
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
    tb_series_set(engine->source_metrics.in_flight,
                  (double)(engine->next_seq - engine->head_seq));
    if (engine->batch_len > 0) {
        count_polled(engine);
        wait = prepare_batch(engine);
        produce_batch(engine);
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
    if (engine->rk != NULL) {
        engine->served_us =
            tb_monotonic_us(); /* the flush's reports: timed at its start */
        rd_kafka_flush(engine->rk, (int)engine->env->shutdown_timeout_ms);
        advance_head(engine);
        if (flush_offsets(engine, errstr, sizeof(errstr)) != 0) {
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
    txn_clear(engine);
    for (size_t i = engine->batch_pos; i < engine->batch_len; i++) {
        free_record(&engine->batch[i]);
    }
    if (engine->rk != NULL) {
        rd_kafka_destroy(engine->rk);
    }
    tb_dlq_destroy(engine->dlq, (int)engine->env->shutdown_timeout_ms);
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
