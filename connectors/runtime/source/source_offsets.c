/*
 * The source engine's offsets: produced records are numbered, and their
 * source offsets wait in a ring indexed by that number until their
 * delivery reports arrive. The ring's head moves over acknowledged records
 * in order and folds their offsets into the set recorded in the store at
 * the next flush, so that a source offset is recorded only once its record
 * and every earlier one were acknowledged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/source/source_engine_internal.h"
#include "core/tb_time.h"

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
void tb_source_advance_head(source_engine_t *engine)
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
    if (rc == 0 && engine->env->plugin->commit != NULL) {
        engine->env->plugin->commit(engine->plugin_task, offsets);
    }
    json_decref(offsets);
    if (rc == 0) {
        json_object_clear(engine->committable);
    }
    return rc;
}

/* record_offsets(), counted as an offset commit. */
int tb_source_flush_offsets(source_engine_t *engine, char *errstr, size_t errstr_size)
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
json_t *tb_source_stored_offset(void *runtime, const json_t *partition)
{
    source_engine_t *engine = runtime;
    const tb_task_env_t *env = engine->env;
    char errstr[512];
    if (engine->transactional) {
        return tb_source_txn_offset(engine, partition);
    }
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
