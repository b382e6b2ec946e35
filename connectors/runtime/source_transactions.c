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
 * broker for more than TXN_STEP_MS (START_STEP_MS for the reading).
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_eos_offsets.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_progress_marker.h"
#include "connectors/kafka/tb_txn_fence.h"
#include "connectors/runtime/source_engine_internal.h"
#include "connectors/runtime/tb_connector_config.h"
#include "core/tb_log.h"
#include "core/tb_time.h"
#include "store/connect_records.h"

/* A transactional call holds a pool thread for at most TXN_STEP_MS a step;
 * one that has no answer yet is attempted again at a later step, for up to
 * TXN_TIMEOUT_MS in all. */
#define TXN_STEP_MS 500
#define TXN_WARN_MS 5000 /* a call unanswered this long is logged */
#define TXN_TIMEOUT_MS 30000
#define TXN_ABORTS 10 /* aborted attempts in a row before the task fails */

#define START_STEP_MS 200 /* a step of the start's reading, at most */

/* The stored offsets as start_offsets' object (a new one). */
static json_t *offsets_by_partition(const json_t *stored)
{
    json_t *by_partition = json_object();
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)stored, i, entry) {
        char *key = json_dumps(json_object_get(entry, "partition"),
                               JSON_COMPACT | JSON_SORT_KEYS);
        json_object_set(by_partition, key, entry);
        free(key);
    }
    return by_partition;
}

/* An object of {partition, offset, ...} (start_offsets, given) as the
 * store's array of {partition, offset} (a new one). */
static json_t *offsets_array(const json_t *by_partition)
{
    json_t *array = json_array();
    const char *key;
    json_t *entry;
    json_object_foreach ((json_t *)by_partition, key, entry) {
        json_array_append_new(array,
                              json_pack("{s:O, s:O}", "partition",
                                        json_object_get(entry, "partition"), "offset",
                                        json_object_get(entry, "offset")));
    }
    return array;
}

/* The task's record among offsets (borrowed), or NULL. */
static const json_t *task_record(const source_engine_t *engine, const json_t *offsets)
{
    json_t *partition = tb_eos_offsets_task_partition(engine->env->id);
    char *key = json_dumps(partition, JSON_COMPACT | JSON_SORT_KEYS);
    const json_t *entry = json_object_get(offsets, key);
    free(key);
    json_decref(partition);
    return json_object_get(entry, "offset");
}

/* The plugin starts from the store's offsets (stored: its array, borrowed)
 * and the first transaction writes what it was given, so that the offsets
 * topic agrees with the store again. */
static void start_from_store(source_engine_t *engine, const json_t *stored)
{
    json_t *by_partition = offsets_by_partition(stored);
    const json_t *read = tb_offsets_reader_offsets(engine->offsets_reader);
    const char *key;
    json_t *entry;
    json_object_foreach ((json_t *)read, key, entry) { /* keep their key bytes */
        json_t *same = json_object_get(by_partition, key);
        if (same != NULL) {
            json_object_set(same, "key", json_object_get(entry, "key"));
        }
    }
    json_decref(engine->start_offsets);
    engine->start_offsets = by_partition;
    engine->start_from_topic = false;
    engine->write_given = true;
}

/* Makes the store agree with the old progress marker and starts from
 * there. */
static int adopt_marker(source_engine_t *engine, const tb_progress_marker_t *marker,
                        const json_t *stored, char *errstr, size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    json_t *writes = json_copy(marker->offsets);
    if (marker->generation > engine->generation) { /* the store: restored from a copy */
        json_array_append_new(writes,
                              tb_eos_offsets_generation_entry(marker->generation));
        engine->generation = marker->generation;
    }
    int rc = engine->offsets_in_store ? 0
                                      : tb_store_offsets_put(env->store, env->connector,
                                                             writes, errstr, errstr_size);
    json_t *offsets = json_copy((json_t *)stored);
    json_array_extend(offsets, writes); /* the marker's win */
    start_from_store(engine, offsets);
    json_decref(offsets);
    json_decref(writes);
    TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                "resuming from the progress marker of %s (an older release's); the "
                "first transaction writes its offsets to %s",
                engine->txn_id, engine->offsets_topic.name);
    return rc;
}

/* The store's offsets of the connector (new): the offsets topic's when it
 * is the store. */
static json_t *stored_offsets(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    if (engine->offsets_in_store) {
        return offsets_array(tb_offsets_reader_offsets(engine->offsets_reader));
    }
    return tb_store_offsets_get(engine->env->store, engine->env->connector, errstr,
                                errstr_size);
}

/* Task 0, once the offsets topic is read: the tasks with a record there
 * whose number the connector no longer has (its task count went down) are
 * fenced, so that a zombie still running one commits nothing more. */
static void fence_removed_tasks(source_engine_t *engine, const json_t *read)
{
    const tb_task_env_t *env = engine->env;
    json_t *ids = json_array();
    const char *key;
    json_t *entry;
    json_object_foreach ((json_t *)read, key, entry) {
        json_t *partition = json_object_get(entry, "partition");
        int task = tb_eos_offsets_task_of(partition);
        if (env->task_count > 0 && task >= env->task_count) {
            char id[400];
            snprintf(id, sizeof(id), "%s-%s-%d", env->eos->transactional_id_prefix,
                     env->connector, task);
            json_array_append_new(ids, json_string(id));
        }
    }
    char errstr[512];
    json_t *props =
        json_array_size(ids) > 0
            ? tb_client_props_resolved(env->client, TB_CLIENT_PRODUCER,
                                       env->connector_config, errstr, sizeof(errstr))
            : NULL;
    if (props != NULL) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "the connector has %d task(s) now: fencing %zu removed task(s)' "
                    "transactional ids",
                    env->task_count, json_array_size(ids));
        engine->fence = tb_txn_fence_create(props, ids);
    }
    json_decref(props);
    json_decref(ids);
}

/* With the offsets topic read: where the plugin starts. The task's record
 * of its last transaction makes the offsets topic the authority, unless
 * the operator changed the offsets since (a later offsets generation in the
 * store). A task without one looks for an older release's progress marker
 * (marker_query), or has none. Returns -1 with errstr. */
static int offsets_read(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    const json_t *read = tb_offsets_reader_offsets(engine->offsets_reader);
    json_t *stored = stored_offsets(engine, errstr, errstr_size);
    if (stored == NULL) {
        return -1;
    }
    const json_t *record = task_record(engine, read);
    engine->generation = tb_eos_offsets_generation_of(stored);
    if (env->id == 0) {
        fence_removed_tasks(engine, read);
    }
    if (record != NULL && tb_eos_offsets_generation_in(record) >= engine->generation) {
        engine->transactions = tb_eos_offsets_task_transactions(record);
        engine->start_offsets = json_deep_copy(read);
        engine->start_from_topic = true;
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "resuming after transaction %lld of %s (offsets topic %s)",
                    (long long)engine->transactions, engine->txn_id,
                    engine->offsets_topic.name);
    } else if (record != NULL) {
        engine->transactions = tb_eos_offsets_task_transactions(record);
        start_from_store(engine, stored);
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "the connector's offsets were changed after transaction %lld of %s "
                    "(offsets generation %lld, the transaction's %lld): resuming from "
                    "the stored offsets",
                    (long long)engine->transactions, engine->txn_id,
                    (long long)engine->generation,
                    (long long)tb_eos_offsets_generation_in(record));
    } else if (engine->marker_topic != NULL) {
        engine->marker_query = tb_progress_marker_query_start(
            engine->rk, env->connector, env->id, engine->marker_topic);
    } else {
        start_from_store(engine, stored);
        engine->marker_missing = true;
    }
    json_decref(stored);
    return 0;
}

/* The old progress marker's answer: adopted, or none. -1 with errstr. */
static int marker_answered(source_engine_t *engine, tb_progress_marker_status_t status,
                           tb_progress_marker_t *marker, char *errstr, size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    if (status == TB_PROGRESS_MARKER_ERROR) {
        return -1;
    }
    if (status == TB_PROGRESS_MARKER_FOREIGN) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                    "%s; not taken as the task's old progress marker", errstr);
    }
    json_t *stored = stored_offsets(engine, errstr, errstr_size);
    int rc = stored != NULL ? 0 : -1;
    if (rc == 0 && status == TB_PROGRESS_MARKER_FOUND &&
        marker->generation >= engine->generation) {
        rc = adopt_marker(engine, marker, stored, errstr, errstr_size);
    } else if (rc == 0) {
        if (status == TB_PROGRESS_MARKER_FOUND) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                        "the connector's offsets were changed after the progress "
                        "marker of %s was written: resuming from the stored offsets",
                        engine->txn_id);
        }
        start_from_store(engine, stored);
        engine->marker_missing = status != TB_PROGRESS_MARKER_FOUND;
    }
    json_decref(stored);
    return rc;
}

/* The start after fencing, one bounded step: reading the offsets topic,
 * then the old marker when needed, then (task 0) fencing the removed
 * tasks, then the plugin. */
static int64_t start_step(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    bool progress = false;
    int rc = 1;
    if (engine->marker_query == NULL && engine->fence != NULL) {
        rc = tb_txn_fence_step(engine->fence, TXN_STEP_MS, errstr, errstr_size);
        if (rc == 1) {
            tb_txn_fence_destroy(engine->fence);
            engine->fence = NULL;
        }
    } else if (engine->marker_query == NULL) {
        rc = tb_offsets_reader_step(engine->offsets_reader, START_STEP_MS, &progress,
                                    errstr, errstr_size);
        if (rc == 1 && offsets_read(engine, errstr, errstr_size) != 0) {
            rc = -1;
        }
    } else {
        tb_progress_marker_t marker = {0};
        tb_progress_marker_status_t status = tb_progress_marker_query_poll(
            engine->marker_query, &marker, errstr, errstr_size);
        rc = status == TB_PROGRESS_MARKER_PENDING ? 0 : 1;
        if (rc == 1) {
            tb_progress_marker_query_destroy(engine->marker_query);
            engine->marker_query = NULL;
            rc = marker_answered(engine, status, &marker, errstr, errstr_size) == 0 ? 1
                                                                                    : -1;
        }
        tb_progress_marker_clear(&marker);
    }
    if (rc < 0) {
        return TB_TASK_STEP_FAILED;
    }
    if (rc == 0 || engine->marker_query != NULL || engine->fence != NULL) {
        return progress || engine->marker_query != NULL || engine->fence != NULL ? 50
                                                                                 : 100;
    }
    tb_offsets_reader_destroy(engine->offsets_reader);
    engine->offsets_reader = NULL;
    return tb_source_start_plugin(engine, errstr, errstr_size) == 0 ? TB_POOL_RUN_AGAIN
                                                                    : TB_TASK_STEP_FAILED;
}

json_t *tb_source_txn_offset(source_engine_t *engine, const json_t *partition)
{
    char *key = json_dumps(partition, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *offset =
        json_object_get(json_object_get(engine->start_offsets, key), "offset");
    json_object_set_new(engine->given, key,
                        json_pack("{s:O, s:O}", "partition", partition, "offset",
                                  offset != NULL ? offset : json_null()));
    free(key);
    if (offset != NULL && !engine->start_from_topic) {
        engine->stored_history = true;
    }
    return json_incref(offset);
}

/* A task without a task record or marker whose plugin found stored offsets
 * of its own cannot trust them: records may be in Kafka past them (the
 * task ran at-least-once before, or its offsets topic was lost). A task
 * with no stored offsets (new, or its offsets reset) starts. A task that
 * resumes from the offsets topic makes the store agree with it. */
int tb_source_txn_started(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    if (engine->start_from_topic && !engine->offsets_in_store) {
        json_t *given = offsets_array(engine->given);
        int rc =
            tb_store_offsets_put(env->store, env->connector, given, errstr, errstr_size);
        json_decref(given);
        return rc;
    }
    if (!engine->marker_missing || !engine->stored_history) {
        return 0;
    }
    if (!tb_config_bool(env->settings, "exactly.once.allow.missing.marker")) {
        snprintf(errstr, errstr_size,
                 "no committed transaction of %s is recorded in the offsets topic %s, "
                 "nor in a progress marker, so the task's stored offsets cannot be "
                 "trusted: records may be in Kafka past them. Set "
                 "exactly.once.allow.missing.marker=true to start from the stored "
                 "offsets anyway (records may then be written twice)",
                 engine->txn_id, engine->offsets_topic.name);
        return -1;
    }
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", env->connector, env->id,
                "no committed transaction of %s is recorded; starting from the stored "
                "offsets (exactly.once.allow.missing.marker=true): records may repeat",
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

/* The offsets topic of the task: the connector's offsets.storage.topic,
 * else the worker's. */
static void offsets_topic_of(source_engine_t *engine)
{
    const tb_task_env_t *env = engine->env;
    const char *own = tb_config_string(env->settings, "offsets.storage.topic");
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
    const json_t *settings = env->settings;
    if (transactions_refused(settings, errstr, errstr_size)) {
        return -1;
    }
    snprintf(engine->txn_id, sizeof(engine->txn_id), "%s-%s-%d",
             env->eos->transactional_id_prefix, env->connector, env->id);
    offsets_topic_of(engine);
    const char *topic = tb_config_string(settings, "topic");
    engine->marker_topic = topic != NULL && topic[0] != '\0' ? topic : NULL;
    /* at most POLL_BATCH: the key's range */
    engine->txn_max_records =
        (size_t)tb_config_int(settings, "exactly.once.transaction.max.records");
    engine->txn_max_bytes =
        (size_t)tb_config_int(settings, "exactly.once.transaction.max.bytes");
    engine->txn_size = engine->txn_max_records;
    engine->given = json_object();
    json_object_set_new(props, "transactional.id", json_string(engine->txn_id));
    json_object_set_new(props, "enable.idempotence", json_string("true"));
    engine->txn_call = TXN_CALL_INIT; /* at the first step */
    return 0;
}

int tb_source_txn_producer_ready(source_engine_t *engine, char *errstr,
                                 size_t errstr_size)
{
    const tb_task_env_t *env = engine->env;
    /* Java's default partitioner: the one partition Connect puts a key in */
    rd_kafka_topic_conf_t *conf = rd_kafka_topic_conf_new();
    if (rd_kafka_topic_conf_set(conf, "partitioner", "murmur2_random", errstr,
                                errstr_size) != RD_KAFKA_CONF_OK) {
        rd_kafka_topic_conf_destroy(conf);
        return -1;
    }
    engine->offsets_rkt =
        rd_kafka_topic_new(engine->rk, engine->offsets_topic.name, conf);
    if (engine->offsets_rkt == NULL) {
        snprintf(errstr, errstr_size, "the offsets topic %s: %s",
                 engine->offsets_topic.name, rd_kafka_err2str(rd_kafka_last_error()));
        return -1;
    }
    json_t *props = tb_client_props_resolved(env->client, TB_CLIENT_CONSUMER,
                                             env->connector_config, errstr, errstr_size);
    if (props == NULL) {
        return -1;
    }
    json_object_del(props, TB_JAVA_MAX_POLL_RECORDS); /* a sink's batch bound */
    engine->offsets_reader = tb_offsets_reader_create(
        props, &engine->offsets_topic, env->connector, errstr, errstr_size);
    json_decref(props);
    return engine->offsets_reader != NULL ? 0 : -1;
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
    json_t *offsets = offsets_array(latest);
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

/* One attempt at the call under way, waiting at most TXN_STEP_MS; librdkafka
 * goes on with it in the background, and the next attempt resumes it. */
static rd_kafka_error_t *txn_call_once(source_engine_t *engine)
{
    switch (engine->txn_call) {
    case TXN_CALL_INIT:
        return rd_kafka_init_transactions(engine->rk, TXN_STEP_MS);
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
    tb_txn_fence_destroy(engine->fence);
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
        rd_kafka_resp_err_t err =
            tb_source_produce_record(engine, r, RD_KAFKA_MSG_F_COPY, NULL);
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

/* The open transaction committed: its offsets go to the store too (unless
 * the store is the offsets topic) before the next one begins. */
static int64_t txn_committed(source_engine_t *engine, char *errstr, size_t errstr_size)
{
    size_t count = engine->txn_count;
    int rc = engine->offsets_in_store
                 ? 0
                 : tb_store_offsets_put(engine->env->store, engine->env->connector,
                                        engine->txn_offsets, errstr, errstr_size);
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
        return TXN_STEP_MS;
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
    if (engine->txn_call != TXN_CALL_NONE) {
        return txn_call_step(engine, errstr, errstr_size);
    }
    if (engine->offsets_reader != NULL) {
        return start_step(engine, errstr, errstr_size);
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
