/*
 * The source engine in transactions (exactly.once.support=required, or
 * requested on a worker with exactly.once.source.support=enabled): each
 * polled batch goes to Kafka in one transaction together with the task's
 * progress marker (tb_progress_marker.h), so the records and the source
 * offsets they reach are committed atomically; a restarted task fences its
 * predecessor (init_transactions) and resumes exactly after the last
 * committed batch.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_group_offsets.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_progress_marker.h"
#include "connectors/runtime/source_engine_internal.h"
#include "connectors/runtime/tb_connector_config.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

/* A transactional call holds a pool thread for at most TXN_STEP_MS a step;
 * one that has no answer yet is attempted again at a later step, for up to
 * TXN_TIMEOUT_MS in all. */
#define TXN_STEP_MS 500
#define TXN_WARN_MS 5000 /* a call unanswered this long is logged */
#define TXN_TIMEOUT_MS 30000
#define TXN_ABORTS 10 /* aborted attempts in a row before the task fails */

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
 * marker is judged once the plugin has asked for its offsets
 * (tb_source_check_missing_marker). */
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
int tb_source_check_missing_marker(const source_engine_t *engine, char *errstr,
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

int tb_source_txn_setup(source_engine_t *engine, json_t *props, char *errstr,
                        size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    const json_t *settings = env->settings;
    if (transactions_refused(settings, errstr, errstr_size)) {
        return -1;
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
    return 0;
}

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
void tb_source_txn_clear(source_engine_t *engine)
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
        rd_kafka_resp_err_t err =
            tb_source_produce_record(engine, r, RD_KAFKA_MSG_F_COPY, NULL);
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
    if (rc == 0 && engine->env->plugin->commit != NULL) {
        engine->env->plugin->commit(engine->plugin_task, engine->txn_offsets);
    }
    tb_source_txn_clear(engine);
    engine->marker_sequence++;
    engine->aborts = 0;
    if (engine->legacy_marker) {
        forget_legacy_marker(engine);
    }
    tb_series_add(engine->source_metrics.txn_commits, 1);
    tb_series_add(engine->metrics.records_written, (double)count);
    for (size_t i = engine->batch_pos; i < engine->batch_pos + count; i++) {
        tb_source_free_record(&engine->batch[i]);
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
    tb_source_txn_clear(engine);
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
        tb_source_start_plugin(engine, errstr, errstr_size) != 0) {
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
int64_t tb_source_transactional_step(source_engine_t *engine, bool paused, char *errstr,
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
        tb_source_count_polled(engine);
        engine->batch_pos = engine->prepared = 0;
    }
    /* a transaction holds prepared records only: all of the batch */
    int64_t wait = tb_source_prepare_batch(engine);
    if (engine->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", engine->failure);
        return TB_TASK_STEP_FAILED;
    }
    if (wait > 0) {
        return wait;
    }
    return txn_begin(engine, errstr, errstr_size);
}
