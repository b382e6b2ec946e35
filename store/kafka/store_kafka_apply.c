/*
 * store_kafka_apply.c - Connect's config, status and offsets records applied
 * to the Kafka store's state (tb_store_kafka_internal.h), for records read
 * by a refresh and for records the store wrote.
 */
#include "store/kafka/tb_store_kafka_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_log.h"
#include "store/kafka/connect_records.h"

#define TB_LOG_FACILITY "tributary.store"

static void tb_report(tb_kafka_store_t *store, const char *name)
{
    json_t *item;
    size_t i;

    if (store->changed == NULL) {
        return;
    }
    json_array_foreach (store->changed, i, item) {
        if (strcmp(json_string_value(item), name) == 0) {
            return;
        }
    }
    json_array_append_new(store->changed, json_string(name));
}

/* Sets key of object to value (a new reference, NULL deletes) and reports
 * name when that changed the object. */
static void tb_set(tb_kafka_store_t *store, json_t *object, const char *key,
                   json_t *value, const char *name)
{
    json_t *old = json_object_get(object, key);
    int same = old == NULL ? value == NULL : value != NULL && json_equal(old, value);

    if (value == NULL) {
        json_object_del(object, key);
    } else {
        json_object_set_new(object, key, value);
    }
    if (!same && name != NULL) {
        tb_report(store, name);
    }
}

static json_t *tb_entry(json_t *map, const char *name)
{
    json_t *entry = json_object_get(map, name);

    if (entry == NULL) {
        entry = json_object();
        json_object_set_new(map, name, entry);
    }
    return entry;
}

/* Drops a connector's entry once it holds nothing. */
static void tb_prune(json_t *map, const char *name)
{
    json_t *entry = json_object_get(map, name);

    if (entry != NULL && json_object_size(entry) == 0) {
        json_object_del(map, name);
    }
}

/* A commit: the deferred task configs 0..n-1 become the connector's tasks
 * when every one arrived; otherwise the tasks stay as they were, as in
 * Connect, until a complete set is committed. */
static void tb_apply_commit(tb_kafka_store_t *store, json_t *entry, const char *name,
                            int n)
{
    json_t *deferred = json_object_get(entry, "deferred");
    json_t *tasks = json_array();
    char index[16];

    for (int i = 0; i < n && tasks != NULL; i++) {
        snprintf(index, sizeof(index), "%d", i);
        json_t *task = json_object_get(deferred, index);
        if (task == NULL) {
            TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
                   "connector '%s': commit of %d tasks without task %d; its tasks are "
                   "left as they were",
                   name, n, i);
            json_decref(tasks);
            tasks = NULL;
        } else {
            json_array_append(tasks, task);
        }
    }
    if (tasks != NULL && json_object_get(entry, "config") != NULL) {
        tb_set(store, entry, "tasks", tasks, name);
        /* as Connect: task configs after the last fencing record wait for
         * the next fencing */
        json_object_set_new(tb_entry(store->fencing, name), "pending", json_true());
    } else {
        json_decref(tasks);
    }
    json_object_del(entry, "deferred");
}

/* A restart request read by a refresh is kept for tb_store_restarts_take;
 * those read at open were handled before this worker started. */
static void tb_apply_restart(tb_kafka_store_t *store, const char *name,
                             const json_t *value)
{
    bool include_tasks, only_failed;
    if (store->changed == NULL || value == NULL) {
        return;
    }
    if (tb_connect_restart_parse(value, &include_tasks, &only_failed) != 0) {
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
               "config topic: ignored a restart request of connector '%s' that is not "
               "in Connect's format",
               name);
        return;
    }
    json_array_append_new(store->restarts,
                          json_pack("{s:s, s:b, s:b}", "name", name, "include_tasks",
                                    include_tasks, "only_failed", only_failed));
}

/* A tasks-fencing record: the connector's task configs so far are fenced;
 * a tombstone forgets the record. */
static void tb_apply_fencing(tb_kafka_store_t *store, const char *name,
                             const json_t *value, int bad)
{
    int count = tb_connect_fencing_parse(value);
    if (value == NULL && !bad) {
        json_object_del(store->fencing, name);
    } else if (count >= 0) {
        json_object_set_new(store->fencing, name, json_pack("{s:i}", "count", count));
    } else {
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
               "config topic: ignored a fencing record of connector '%s' that is not "
               "in Connect's format",
               name);
    }
}

static void tb_apply_config(const tb_kafka_log_record_t *record, void *opaque)
{
    tb_kafka_store_t *store = opaque;
    tb_connect_key_t key;
    int bad = 0;

    if (tb_connect_key_parse(record->key, record->key_len, 0, &key) != 0 ||
        key.kind == TB_CONNECT_KEY_OTHER) {
        tb_connect_key_clear(&key);
        return;
    }
    json_t *value = tb_connect_value_parse(record->value, record->value_len, &bad);
    if (key.kind == TB_CONNECT_KEY_RESTART || key.kind == TB_CONNECT_KEY_FENCING) {
        if (key.kind == TB_CONNECT_KEY_RESTART) {
            tb_apply_restart(store, key.name, value);
        } else {
            tb_apply_fencing(store, key.name, value, bad);
        }
        json_decref(value);
        tb_connect_key_clear(&key);
        return;
    }
    json_t *entry = tb_entry(store->connectors, key.name);
    const json_t *properties = tb_connect_properties_parse(value);
    tb_target_state_t target;
    int tasks;

    switch (key.kind) {
    case TB_CONNECT_KEY_CONNECTOR:
        if (value == NULL && !bad) {
            tb_set(store, entry, "config", NULL, key.name);
            tb_set(store, entry, "tasks", NULL, key.name);
            json_object_del(entry, "deferred");
        } else if (properties != NULL) {
            tb_set(store, entry, "config", json_copy((json_t *)properties), key.name);
        } else {
            bad = 1;
        }
        break;
    case TB_CONNECT_KEY_TARGET:
        if (value == NULL && !bad) {
            tb_set(store, entry, "target", NULL, key.name);
        } else if (tb_connect_target_parse(value, &target) == 0) {
            tb_set(store, entry, "target", json_integer(target), key.name);
        } else {
            bad = 1;
        }
        break;
    case TB_CONNECT_KEY_TASK: {
        char index[16];
        snprintf(index, sizeof(index), "%d", key.task);
        if (properties != NULL) {
            json_object_set_new(tb_entry(entry, "deferred"), index,
                                json_copy((json_t *)properties));
        } else {
            bad = 1;
        }
        break;
    }
    case TB_CONNECT_KEY_COMMIT:
        tasks = tb_connect_commit_parse(value);
        if (tasks >= 0) {
            tb_apply_commit(store, entry, key.name, tasks);
        } else {
            bad = value != NULL || bad;
        }
        break;
    case TB_CONNECT_KEY_OTHER:
    case TB_CONNECT_KEY_RESTART:
    case TB_CONNECT_KEY_FENCING:
        break;
    }
    if (bad) {
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
               "config topic: ignored a record of connector '%s' that is not in "
               "Connect's format",
               key.name);
    }
    tb_prune(store->connectors, key.name);
    json_decref(value);
    tb_connect_key_clear(&key);
}

/* Keeps the highest generation a status record carries. */
static void tb_see_generation(tb_kafka_store_t *store, const json_t *status)
{
    json_int_t generation = json_integer_value(json_object_get(status, "generation"));

    if (generation > store->highest_generation && generation <= 0x7fffffff) {
        store->highest_generation = (int)generation;
    }
}

static void tb_apply_status(const tb_kafka_log_record_t *record, void *opaque)
{
    tb_kafka_store_t *store = opaque;
    tb_connect_key_t key;
    int bad = 0;
    char index[16];

    if (tb_connect_key_parse(record->key, record->key_len, 1, &key) != 0 ||
        key.kind == TB_CONNECT_KEY_OTHER) {
        tb_connect_key_clear(&key);
        return;
    }
    json_t *value = tb_connect_value_parse(record->value, record->value_len, &bad);
    json_t *status = value == NULL ? NULL : tb_connect_status_parse(value);
    json_t *entry = tb_entry(store->status, key.name);

    if (bad || (value != NULL && status == NULL)) {
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
               "status topic: ignored a record of connector '%s' that is not in "
               "Connect's format",
               key.name);
    } else if (key.kind == TB_CONNECT_KEY_CONNECTOR) {
        tb_see_generation(store, status);
        tb_set(store, entry, "connector", json_incref(status), NULL);
    } else {
        snprintf(index, sizeof(index), "%d", key.task);
        tb_see_generation(store, status);
        tb_set(store, tb_entry(entry, "tasks"), index, json_incref(status), NULL);
        tb_prune(entry, "tasks");
    }
    tb_prune(store->status, key.name);
    json_decref(status);
    json_decref(value);
    tb_connect_key_clear(&key);
}

static void tb_apply_offset(const tb_kafka_log_record_t *record, void *opaque)
{
    tb_kafka_store_t *store = opaque;
    char *connector = NULL;
    json_t *partition = NULL;
    int bad = 0;

    if (tb_connect_offset_key_parse(record->key, record->key_len, &connector,
                                    &partition) != 0) {
        return; /* not a source offset of Connect's form */
    }
    json_t *value = tb_connect_value_parse(record->value, record->value_len, &bad);
    char *text = json_dumps(partition, TB_STORE_JSON_CANONICAL);
    json_t *entries = tb_entry(store->offsets, connector);

    if (text == NULL || bad || (value != NULL && !json_is_object(value))) {
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
               "offsets topic: ignored an offset of connector '%s' that is not a JSON "
               "object",
               connector);
    } else if (value == NULL) {
        json_object_del(entries, text);
    } else {
        /* the key as written: a partition written again reuses its bytes,
         * so it lands in the same partition and compaction keeps one */
        json_object_set_new(entries, text,
                            json_pack("{s:s%, s:O, s:O}", "key", record->key,
                                      record->key_len, "partition", partition, "offset",
                                      value));
    }
    tb_prune(store->offsets, connector);
    json_decref(value);
    free(text);
    json_decref(partition);
    free(connector);
}

const tb_kafka_log_cb tb_store_kafka_appliers[TB_LOG__COUNT] = {
    [TB_LOG_CONFIG] = tb_apply_config,
    [TB_LOG_OFFSETS] = tb_apply_offset,
    [TB_LOG_STATUS] = tb_apply_status,
};
