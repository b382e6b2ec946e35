/*
 * The source engine in transactions (exactly.once.support=required, or
 * requested on a worker with exactly.once.source.support=enabled), as
 * Connect's KIP-618: each polled batch goes to Kafka in one transaction
 * together with the source offsets it reaches, as records of the offsets
 * topic in Connect's format, and the task's record (tb_eos_offsets.h), so
 * records and offsets commit atomically. A restarted task fences its
 * predecessor (init_transactions), reads the offsets topic read_committed
 * (tb_offsets_reader.h) and resumes exactly after the last committed
 * batch. Every network wait is a bounded step: no pool thread waits on a
 * broker for more than TB_TXN_STEP_MS; where the task starts is
 * source_txn_start.c's.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "connectors/runtime/source/eos/tb_progress_marker.h"
#include "connectors/runtime/source/source_engine_internal.h"
#include "core/tb_log.h"
#include "core/tb_seam.h"
#include "core/tb_time.h"
#include "store/kafka/connect_records.h"

/* A transactional call that has no answer within a step (TB_TXN_STEP_MS)
 * is attempted again at a later step, for up to TXN_TIMEOUT_MS in all. */
#define TXN_WARN_MS 5000 /* a call unanswered this long is logged */
#define TXN_TIMEOUT_MS 30000
#define TXN_ABORTS 10       /* aborted attempts in a row before the task fails */
#define FENCING_WAIT_MS 100 /* how often a task held at its start asks again */

/* The test seam TB_SEAM_EOS_START_DELAY (tb_seam.h). */
static int64_t test_start_delay_ms(int task)
{
    const char *seam = tb_seam(TB_SEAM_EOS_START_DELAY);
    int which;
    long long ms;
    if (seam != NULL && sscanf(seam, "%d:%lld", &which, &ms) == 2 && which == task) {
        return ms;
    }
    return 0;
}

/* Whether settings keep a task from running in transactions: a connector
 * stored before its worker enabled them may have a transaction.boundary they
 * cannot honour. errstr says why. */
static bool transactions_refused(const tb_connector_settings_t *settings, char *errstr,
                                 size_t errstr_size)
{
    json_t *errors = json_object();
    tb_connector_config_check_transactions(settings, errors);
    bool refused = tb_config_error_count(errors) > 0;
    tb_config_errors_join(errors, "; ", errstr, errstr_size);
    json_decref(errors);
    return refused;
}

/* The offsets topic of the task: the connector's offsets.storage.topic,
 * else the worker's. */
static void offsets_topic_of(source_engine_t *engine)
{
    const tb_task_env_t *env = engine->env;
    const char *own = env->framework.offsets_storage_topic;
    engine->offsets_topic = env->eos->offsets_topic;
    engine->offsets_in_store = env->eos->offsets_topic_is_store;
    if (own != NULL && own[0] != '\0' && strcmp(own, engine->offsets_topic.name) != 0) {
        engine->offsets_topic.name = own;
        engine->offsets_topic.create = true;
        engine->offsets_in_store = false;
    }
}

int tb_source_txn_setup(source_engine_t *engine, json_t *props, char *errstr,
                        size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    if (transactions_refused(&env->framework, errstr, errstr_size)) {
        return -1;
    }
    snprintf(engine->txn_id, sizeof(engine->txn_id), "%s-%s-%d",
             env->eos->transactional_id_prefix, env->connector, env->id);
    offsets_topic_of(engine);
    /* the one topic the plugin's config names, where a source has one */
    const char *topic = env->plugin->config_topic != NULL
                            ? env->plugin->config_topic(env->settings)
                            : NULL;
    engine->marker_topic = topic != NULL && topic[0] != '\0' ? topic : NULL;
    /* at most POLL_BATCH: the key's range */
    engine->txn_max_records = (size_t)env->framework.exactly_once_transaction_max_records;
    engine->txn_max_bytes = (size_t)env->framework.exactly_once_transaction_max_bytes;
    engine->txn_size = engine->txn_max_records;
    engine->given = json_object();
    json_object_set_new(props, "transactional.id", json_string(engine->txn_id));
    json_object_set_new(props, "enable.idempotence", json_string("true"));
    engine->txn_call = TXN_CALL_INIT; /* at the first step */
    engine->start_hold_until_ms = tb_monotonic_ms() + test_start_delay_ms(env->id);
    return 0;
}

void tb_source_start_waits_for(const source_engine_t *engine, const char *what)
{
    if (engine->env->waiting_for != NULL) {
        engine->env->waiting_for(engine->env->task, what);
    }
}

/* Whether the task's start still waits: for the fencing of its task
 * configs' generation (tb_fencing.h), so that no zombie of the previous
 * tasks commits once this one runs; then for the test seam. */
static bool start_held(source_engine_t *engine)
{
    const tb_task_env_t *env = engine->env;
    bool asked = engine->fencing_asked;
    if (!engine->fencing_passed) {
        engine->fencing_passed =
            tb_fencing_passes(env->fencing, env->connector, env->task_generation);
        engine->fencing_asked = true;
    }
    if (!engine->fencing_passed && !asked) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "waiting for the fencing of the previous tasks' producers before "
                    "%s begins its transactions",
                    engine->txn_id);
        tb_source_start_waits_for(engine,
                                  "waiting for the fencing of the previous tasks' "
                                  "producers before its transactions begin");
    }
    return !engine->fencing_passed || tb_monotonic_ms() < engine->start_hold_until_ms;
}

/* The source offsets batch[first, first + count) reaches: the latest of
 * each source partition it holds, after what the plugin was given when it
 * is to be written again. A new array. */
static json_t *txn_offsets_of(const source_engine_t *engine, size_t first, size_t count)
{
    json_t *latest = json_object(); /* canonical partition -> {partition, offset} */
    if (engine->write_given) {
        json_object_update(latest, engine->given);
    }
    for (size_t i = first; i < first + count; i++) {
        const tb_source_record_t *r = &engine->batch[i];
        if (r->source_partition != NULL) {
            char *canonical =
                json_dumps(r->source_partition, JSON_COMPACT | JSON_SORT_KEYS);
            json_object_set_new(latest, canonical,
                                json_pack("{s:O, s:O}", "partition", r->source_partition,
                                          "offset", r->source_offset));
            free(canonical);
        }
    }
    json_t *offsets = tb_source_txn_offsets_array(latest);
    json_decref(latest);
    return offsets;
}

/* Produces one record of the offsets topic into the open transaction: key
 * ["<connector>",{partition}] (the bytes it was read with, when it was),
 * value the offset, or a tombstone for a null offset. */
static rd_kafka_resp_err_t produce_offset(source_engine_t *engine,
                                          const json_t *partition, const json_t *offset)
{
    char *canonical = json_dumps(partition, JSON_COMPACT | JSON_SORT_KEYS);
    const char *known = json_string_value(
        json_object_get(json_object_get(engine->start_offsets, canonical), "key"));
    char *key = known != NULL ? strdup(known)
                              : tb_connect_offset_key(engine->env->connector, partition);
    char *value = json_is_object(offset) ? json_dumps(offset, JSON_COMPACT) : NULL;
    size_t value_len = value != NULL ? strlen(value) : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        engine->rk, RD_KAFKA_V_RKT(engine->offsets_rkt),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, strlen(key)),
        RD_KAFKA_V_VALUE(value, value_len), RD_KAFKA_V_END);
    free(value);
    free(key);
    free(canonical);
    return err;
}

/* The open transaction's offsets and the task's record, into the offsets
 * topic. */
static rd_kafka_resp_err_t produce_offsets(source_engine_t *engine)
{
    size_t i;
    json_t *entry;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    json_array_foreach (engine->txn_offsets, i, entry) {
        json_t *offset = json_object_get(entry, "offset");
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            err = produce_offset(engine, json_object_get(entry, "partition"), offset);
        }
    }
    json_t *partition = tb_eos_offsets_task_partition(engine->env->id);
    json_t *record =
        tb_eos_offsets_task_offset(engine->transactions + 1, engine->generation);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        err = produce_offset(engine, partition, record);
    }
    json_decref(partition);
    json_decref(record);
    return err;
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
    case TXN_CALL_COMMIT:
        return "committing";
    case TXN_CALL_ABORT:
        return "aborting";
    case TXN_CALL_NONE:
        break;
    }
    return "?";
}

/* One attempt at the call under way, waiting at most TB_TXN_STEP_MS; librdkafka
 * goes on with it in the background, and the next attempt resumes it. */
static rd_kafka_error_t *txn_call_once(source_engine_t *engine)
{
    switch (engine->txn_call) {
    case TXN_CALL_INIT:
        return rd_kafka_init_transactions(engine->rk, TB_TXN_STEP_MS);
    case TXN_CALL_COMMIT:
        return rd_kafka_commit_transaction(engine->rk, TB_TXN_STEP_MS);
    case TXN_CALL_ABORT:
    case TXN_CALL_NONE:
        break;
    }
    return rd_kafka_abort_transaction(engine->rk, TB_TXN_STEP_MS);
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
    if (engine->txn_call == TXN_CALL_INIT) { /* the start waits: said in the status */
        char what[512];
        snprintf(what, sizeof(what),
                 "not started yet: initialising transactions (%s) has had no answer: "
                 "%s; trying again, for up to %d ms in all",
                 engine->txn_id, rd_kafka_error_string(*error), TXN_TIMEOUT_MS);
        tb_source_start_waits_for(engine, what);
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

void tb_source_txn_clear(source_engine_t *engine)
{
    json_decref(engine->txn_offsets);
    engine->txn_offsets = NULL;
    engine->txn_count = 0;
}

void tb_source_txn_destroy(source_engine_t *engine)
{
    tb_source_txn_clear(engine);
    tb_offsets_reader_destroy(engine->offsets_reader);
    tb_progress_marker_query_destroy(engine->marker_query);
    if (engine->offsets_rkt != NULL) {
        rd_kafka_topic_destroy(engine->offsets_rkt);
    }
    json_decref(engine->start_offsets);
    json_decref(engine->given);
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

/* Opens the transaction of the next records from batch_pos: begin, its
 * records and their offsets produced; its commit comes next. */
static int64_t txn_begin(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    size_t count = chunk_size(engine);
    engine->txn_offsets = txn_offsets_of(engine, engine->batch_pos, count);
    engine->txn_count = count;
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
        engine->txn_written_offset[i] = -1;
        rd_kafka_resp_err_t err = tb_source_produce_record(engine, r, RD_KAFKA_MSG_F_COPY,
                                                           0, (void *)(uintptr_t)(i + 1));
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(errstr, errstr_size, "producing to %s in transaction %s failed: %s",
                     r->topic, engine->txn_id, rd_kafka_err2str(err));
            return txn_failed(engine, rd_kafka_error_new(err, "%s", errstr), errstr,
                              errstr_size);
        }
    }
    rd_kafka_resp_err_t err = produce_offsets(engine);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size,
                 "producing offsets to %s in transaction %s failed: %s",
                 engine->offsets_topic.name, engine->txn_id, rd_kafka_err2str(err));
        return txn_failed(engine, rd_kafka_error_new(err, "%s", errstr), errstr,
                          errstr_size);
    }
    engine->txn_call = TXN_CALL_COMMIT;
    return TB_POOL_RUN_AGAIN;
}

/* Tells record_written where Kafka put each record of the transaction that
 * just committed and that carried a source offset, as Connect's
 * commitRecord after the commit: an aborted transaction's records are never
 * told. The reports librdkafka has not served yet are served first. */
static void txn_tell_written(source_engine_t *engine)
{
    void (*written)(void *, const json_t *, const json_t *, int32_t, int64_t) =
        engine->env->plugin->record_written;
    if (written == NULL || engine->plugin_task == NULL) {
        return;
    }
    rd_kafka_poll(engine->rk, 0);
    for (size_t i = engine->batch_pos; i < engine->batch_pos + engine->txn_count; i++) {
        const tb_source_record_t *r = &engine->batch[i];
        if (engine->disposition[i] == PRODUCE && r->source_partition != NULL &&
            engine->txn_written_offset[i] >= 0) {
            written(engine->plugin_task, r->source_partition, r->source_offset,
                    engine->txn_written_partition[i], engine->txn_written_offset[i]);
        }
    }
}

/* The open transaction committed: its offsets go to the store too (unless
 * the store is the offsets topic) before the next one begins. */
static int64_t txn_committed(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    size_t count = engine->txn_count;
    int rc = engine->offsets_in_store
                 ? 0
                 : tb_store_offsets_put(engine->env->store, engine->env->connector,
                                        engine->txn_offsets, errstr, errstr_size);
    tb_source_txn_offsets_committed(engine, engine->txn_offsets);
    txn_tell_written(engine);
    if (rc == 0 && engine->env->plugin->commit != NULL) {
        engine->env->plugin->commit(engine->plugin_task, engine->txn_offsets);
    }
    tb_source_txn_clear(engine);
    engine->transactions++;
    engine->write_given = false;
    engine->aborts = 0;
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

/* Predecessors fenced: the offsets they committed are read next
 * (start_step). */
static int64_t txn_initialised(source_engine_t *engine, rd_kafka_error_t *error,
                               char *errstr, size_t errstr_size)
{
    tb_source_start_waits_for(engine, NULL);
    if (error != NULL) {
        snprintf(errstr, errstr_size, "initialising transactions of %s failed: %s",
                 engine->txn_id, rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
        return TB_TASK_STEP_FAILED;
    }
    return TB_POOL_RUN_AGAIN;
}

/* Attempts the call under way, and acts on its result once it is over. */
static int64_t txn_call_step(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    rd_kafka_error_t *error;
    if (!txn_call_over(engine, &error)) {
        return TB_TXN_STEP_MS;
    }
    txn_call_t call = engine->txn_call;
    engine->txn_call = TXN_CALL_NONE;
    switch (call) {
    case TXN_CALL_INIT:
        return txn_initialised(engine, error, errstr, errstr_size);
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
    if (engine->txn_call == TXN_CALL_INIT && start_held(engine)) {
        return FENCING_WAIT_MS;
    }
    if (engine->txn_call != TXN_CALL_NONE) {
        return txn_call_step(engine, errstr, errstr_size);
    }
    if (engine->offsets_reader != NULL) {
        return tb_source_txn_start_step(engine, errstr, errstr_size);
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
