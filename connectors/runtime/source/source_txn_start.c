/*
 * Where an exactly-once source task starts (source_transactions.c runs its
 * transactions): after init_transactions has fenced its predecessor, the
 * offsets topic is read read_committed (tb_offsets_reader.h), then, for a
 * task without a record there, an older release's progress marker; then
 * the plugin starts
 * from what these say, and the store is made to agree. Every read is a
 * bounded step: no pool thread waits on a broker for long.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "connectors/runtime/source/eos/tb_progress_marker.h"
#include "connectors/runtime/source/source_engine_internal.h"
#include "core/tb_log.h"

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

json_t *tb_source_txn_offsets_array(const json_t *by_partition)
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
        return tb_source_txn_offsets_array(
            tb_offsets_reader_offsets(engine->offsets_reader));
    }
    return tb_store_offsets_get(engine->env->store, engine->env->connector, errstr,
                                errstr_size);
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

int64_t tb_source_txn_start_step(source_engine_t *engine, char *errstr,
                                 size_t errstr_size)
{
    bool progress = false;
    int rc = 1;
    if (engine->marker_query == NULL) {
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
    if (rc == 0 || engine->marker_query != NULL) {
        char what[512];
        if (engine->marker_query != NULL) {
            snprintf(what, sizeof(what),
                     "not started yet: looking for the progress marker of %s in %s",
                     engine->txn_id, engine->marker_topic);
        } else {
            snprintf(what, sizeof(what),
                     "not started yet: reading the offsets topic %s to its end for the "
                     "offsets of %s's last committed transaction",
                     engine->offsets_topic.name, engine->txn_id);
        }
        tb_source_start_waits_for(engine, what);
        return progress || engine->marker_query != NULL ? 50 : 100;
    }
    tb_source_start_waits_for(engine, NULL);
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

void tb_source_txn_offsets_committed(source_engine_t *engine, const json_t *offsets)
{
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_t *offset = json_object_get(entry, "offset");
        char *key = json_dumps(partition, JSON_COMPACT | JSON_SORT_KEYS);
        json_t *known = json_object_get(engine->start_offsets, key);
        if (json_is_null(offset)) {
            json_object_del(engine->start_offsets, key);
        } else if (known != NULL) { /* its key bytes kept */
            json_object_set(known, "offset", offset);
        } else {
            json_object_set_new(
                engine->start_offsets, key,
                json_pack("{s:O, s:O}", "partition", partition, "offset", offset));
        }
        free(key);
    }
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
        json_t *given = tb_source_txn_offsets_array(engine->given);
        int rc =
            tb_store_offsets_put(env->store, env->connector, given, errstr, errstr_size);
        json_decref(given);
        return rc;
    }
    if (!engine->marker_missing || !engine->stored_history) {
        return 0;
    }
    if (!env->framework.exactly_once_allow_missing_marker) {
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
