/*
 * tb_store_kafka.c - the store in Connect's three internal topics (see
 * tb_store_kafka.h).
 *
 * State, rebuilt from the topics at open and kept in jansson objects under
 * the store's lock:
 *   connectors  name -> {"config"?, "target"? (an integer), "tasks"?,
 *               "deferred"? {"<n>": task config}}: as the config topic's
 *               records left it; a connector without "config" is not
 *               listed (a target state outlives a deleted config, as in
 *               Connect, until its own tombstone)
 *   status      name -> {"connector"?: entry, "tasks": {"<n>": entry}}
 *   offsets     connector -> {canonical partition text ->
 *               {"key": the record key as read or written, "partition",
 *               "offset"}}
 *   fencing     name -> {"count"? (the last tasks-fencing record's),
 *               "pending"? (task configs committed after it)}
 * Every change goes through one path: a write makes Connect's records,
 * sends them, and once they are acknowledged applies them to the state
 * with the same functions that apply records read from the topics
 * (store_kafka_apply.c). A refresh that reads our own records back applies
 * them again, which changes nothing; a record that changes a connector's
 * row reports it.
 */
#include "store/kafka/tb_store_kafka.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/tb_log.h"
#include "core/tb_seam.h"
#include "core/tb_time.h"
#include "store/kafka/connect_records.h"
#include "store/kafka/kafka_log.h"
#include "store/kafka/tb_store_kafka_internal.h"
#include "store/tb_store_backend.h"

#define TB_LOG_FACILITY "tributary.store"
#define TB_DEFAULT_TIMEOUT_MS 30000
/* The longest a write waits on the TB_STORE_WRITE_STALL seam. */
#define TB_STALL_MAX_MS 120000
#define TB_STALL_POLL_MS 20

/* Records to write; the batch owns their keys and values. */
typedef struct {
    tb_kafka_log_record_t *records;
    size_t count;
    size_t capacity;
    int failed; /* out of memory on the way */
} tb_batch_t;

/* Appends a record, taking key and value (NULL for a tombstone); on
 * failure frees them and marks the batch failed. */
static void tb_batch_add(tb_batch_t *batch, char *key, char *value, int tombstone)
{
    if (key == NULL || (!tombstone && value == NULL) || batch->failed) {
        goto fail;
    }
    if (batch->count == batch->capacity) {
        size_t capacity = batch->capacity == 0 ? 8 : batch->capacity * 2;
        tb_kafka_log_record_t *records =
            realloc(batch->records, capacity * sizeof(*records));
        if (records == NULL) {
            goto fail;
        }
        batch->records = records;
        batch->capacity = capacity;
    }
    batch->records[batch->count++] = (tb_kafka_log_record_t){
        key, strlen(key), value, value == NULL ? 0 : strlen(value)};
    return;
fail:
    free(key);
    free(value);
    batch->failed = 1;
}

static void tb_batch_free(tb_batch_t *batch)
{
    for (size_t i = 0; i < batch->count; i++) {
        free((char *)batch->records[i].key);
        free((char *)batch->records[i].value);
    }
    free(batch->records);
}

/* The TB_STORE_WRITE_STALL seam (core/tb_seam.h): tells the write in its
 * file and waits while the file exists, up to TB_STALL_MAX_MS, as on a
 * broker slow to acknowledge. */
static void tb_write_stall(const char *op, const char *name)
{
    const char *path = tb_seam(TB_SEAM_STORE_WRITE_STALL);
    int64_t deadline = tb_monotonic_ms() + TB_STALL_MAX_MS;
    FILE *told = path != NULL ? fopen(path, "r+") : NULL;

    if (told != NULL) {
        fseek(told, 0, SEEK_END);
        fprintf(told, "%s %s\n", op, name != NULL ? name : "-");
        fclose(told);
    }
    while (path != NULL && access(path, F_OK) == 0 && tb_monotonic_ms() < deadline) {
        struct timespec pause = {0, TB_STALL_POLL_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
}

/* Sends batch to one topic and, once acknowledged, applies it. Call with
 * the topic's io lock held and the store's lock not held: it is taken only
 * to apply. */
static int tb_write(tb_kafka_store_t *store, tb_log_id_t log, tb_batch_t *batch,
                    const char *op, const char *name, char *errstr, size_t errstr_size)
{
    char why[512];

    if (batch->failed) {
        tb_store_error(errstr, errstr_size, op, name, "out of memory");
        return -1;
    }
    tb_write_stall(op, name);
    if (tb_kafka_log_write(store->logs[log], batch->records, batch->count, why,
                           sizeof(why)) != 0) {
        tb_store_error(errstr, errstr_size, op, name, why);
        return -1;
    }
    pthread_mutex_lock(&store->lock);
    for (size_t i = 0; i < batch->count; i++) {
        tb_store_kafka_appliers[log](&batch->records[i], store);
    }
    pthread_mutex_unlock(&store->lock);
    return 0;
}

/* ---- connectors ---- */

static tb_target_state_t tb_target_of(const json_t *entry)
{
    const json_t *target = json_object_get(entry, "target");

    return target == NULL ? TB_TARGET_STARTED
                          : (tb_target_state_t)json_integer_value(target);
}

static char *tb_config_key(tb_connect_key_kind_t kind, const char *name, int task)
{
    return tb_connect_key_format(kind, 0, name, task);
}

/* Connect's task configs are maps of strings; a reader (ours too) skips
 * any other. */
static int tb_check_task_strings(const tb_store_connector_t *c, char *errstr,
                                 size_t errstr_size)
{
    char why[256];
    const char *key;
    json_t *value;

    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        json_object_foreach (json_array_get(c->task_configs, i), key, value) {
            if (!json_is_string(value)) {
                snprintf(why, sizeof(why),
                         "task config %zu value of '%s' is not a string", i, key);
                tb_store_error(errstr, errstr_size, "put connector", c->name, why);
                return -1;
            }
        }
    }
    return 0;
}

static int tb_kafka_connector_put(tb_store_t *base, const tb_store_connector_t *c,
                                  char *errstr, size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t batch = {0};
    int rc = 0;

    if (tb_check_task_strings(c, errstr, errstr_size) != 0) {
        return -1;
    }
    pthread_mutex_lock(&store->io[TB_LOG_CONFIG]);
    pthread_mutex_lock(&store->lock);
    json_t *entry = json_object_get(store->connectors, c->name);
    const json_t *config = json_object_get(entry, "config");
    json_t *tasks = json_object_get(entry, "tasks");

    if (config == NULL || tb_target_of(entry) != c->target) {
        tb_batch_add(&batch, tb_config_key(TB_CONNECT_KEY_TARGET, c->name, 0),
                     tb_connect_target_value(c->target), 0);
    }
    if (config == NULL || !json_equal((json_t *)config, (json_t *)c->config)) {
        tb_batch_add(&batch, tb_config_key(TB_CONNECT_KEY_CONNECTOR, c->name, 0),
                     tb_connect_properties_value(c->config), 0);
    }
    if (tasks == NULL ? json_array_size(c->task_configs) > 0
                      : !json_equal(tasks, (json_t *)c->task_configs)) {
        int n = (int)json_array_size(c->task_configs);
        for (int i = 0; i < n; i++) {
            tb_batch_add(&batch, tb_config_key(TB_CONNECT_KEY_TASK, c->name, i),
                         tb_connect_properties_value(json_array_get(c->task_configs, i)),
                         0);
        }
        tb_batch_add(&batch, tb_config_key(TB_CONNECT_KEY_COMMIT, c->name, 0),
                     tb_connect_commit_value(n), 0);
    }
    pthread_mutex_unlock(&store->lock);
    if (batch.count > 0 || batch.failed) {
        rc = tb_write(store, TB_LOG_CONFIG, &batch, "put connector", c->name, errstr,
                      errstr_size);
    }
    pthread_mutex_unlock(&store->io[TB_LOG_CONFIG]);
    tb_batch_free(&batch);
    return rc;
}

static int tb_kafka_connector_delete(tb_store_t *base, const char *name, char *errstr,
                                     size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t config = {0};
    tb_batch_t status = {0};
    const char *task;
    json_t *value;
    int rc = 0;

    pthread_mutex_lock(&store->io[TB_LOG_CONFIG]);
    pthread_mutex_lock(&store->lock);
    bool known = json_object_get(store->connectors, name) != NULL;
    pthread_mutex_unlock(&store->lock);
    if (known) {
        tb_batch_add(&config, tb_config_key(TB_CONNECT_KEY_CONNECTOR, name, 0), NULL, 1);
        tb_batch_add(&config, tb_config_key(TB_CONNECT_KEY_TARGET, name, 0), NULL, 1);
        rc = tb_write(store, TB_LOG_CONFIG, &config, "delete connector", name, errstr,
                      errstr_size);
    }
    pthread_mutex_unlock(&store->io[TB_LOG_CONFIG]);
    pthread_mutex_lock(&store->io[TB_LOG_STATUS]);
    pthread_mutex_lock(&store->lock);
    json_t *entry = json_object_get(store->status, name);
    bool reported = entry != NULL;
    if (rc == 0 && reported) {
        if (json_object_get(entry, "connector") != NULL) {
            tb_batch_add(&status,
                         tb_connect_key_format(TB_CONNECT_KEY_CONNECTOR, 1, name, 0),
                         NULL, 1);
        }
        json_object_foreach (json_object_get(entry, "tasks"), task, value) {
            tb_batch_add(&status,
                         tb_connect_key_format(TB_CONNECT_KEY_TASK, 1, name, atoi(task)),
                         NULL, 1);
        }
    }
    pthread_mutex_unlock(&store->lock);
    if (rc == 0 && reported) {
        rc = tb_write(store, TB_LOG_STATUS, &status, "delete connector", name, errstr,
                      errstr_size);
    }
    pthread_mutex_unlock(&store->io[TB_LOG_STATUS]);
    tb_batch_free(&config);
    tb_batch_free(&status);
    return rc;
}

static int tb_compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of object, sorted; the array is the caller's to free(), the
 * names stay the object's. NULL when out of memory. */
static const char **tb_sorted_keys(json_t *object, size_t *count)
{
    const char **names = calloc(json_object_size(object) + 1, sizeof(*names));
    const char *key;
    json_t *value;

    *count = 0;
    if (names == NULL) {
        return NULL;
    }
    json_object_foreach (object, key, value) {
        names[(*count)++] = key;
    }
    qsort(names, *count, sizeof(*names), tb_compare_names);
    return names;
}

static int tb_kafka_connectors_list(tb_store_t *base, json_t *list, char *errstr,
                                    size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    size_t count;
    int rc = 0;

    pthread_mutex_lock(&store->lock);
    const char **names = tb_sorted_keys(store->connectors, &count);
    for (size_t i = 0; names != NULL && i < count && rc == 0; i++) {
        json_t *entry = json_object_get(store->connectors, names[i]);
        json_t *config = json_object_get(entry, "config");
        json_t *tasks = json_object_get(entry, "tasks");
        json_t *none = tasks == NULL ? json_array() : NULL;
        if (config != NULL) {
            rc = json_array_append_new(
                list, tb_store_row_new(names[i], config, tb_target_of(entry),
                                       tasks != NULL ? tasks : none));
        }
        json_decref(none);
    }
    pthread_mutex_unlock(&store->lock);
    if (names == NULL || rc != 0) {
        tb_store_error(errstr, errstr_size, "load connectors", NULL, "out of memory");
        rc = -1;
    }
    free(names);
    return rc;
}

/* ---- status ---- */

/* Connect's safe write: a status another worker wrote in a newer
 * generation is newer news than ours, whatever arrives later. */
static bool tb_status_is_newer(const tb_kafka_store_t *store, const char *name,
                               int task_id)
{
    json_t *entry = json_object_get(store->status, name);
    char index[16];

    snprintf(index, sizeof(index), "%d", task_id);
    json_t *current = task_id < 0
                          ? json_object_get(entry, "connector")
                          : json_object_get(json_object_get(entry, "tasks"), index);
    const char *worker = json_string_value(json_object_get(current, "worker_id"));

    return worker != NULL && strcmp(worker, store->worker_id) != 0 &&
           json_integer_value(json_object_get(current, "generation")) > store->generation;
}

static int tb_kafka_status_put(tb_store_t *base, const char *name, int task_id,
                               tb_state_t state, const char *trace, char *errstr,
                               size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t batch = {0};
    tb_connect_key_kind_t kind =
        task_id < 0 ? TB_CONNECT_KEY_CONNECTOR : TB_CONNECT_KEY_TASK;
    int rc = 0;

    tb_batch_add(
        &batch, tb_connect_key_format(kind, 1, name, task_id),
        tb_connect_status_value(state, trace, store->worker_id, store->generation), 0);
    pthread_mutex_lock(&store->io[TB_LOG_STATUS]);
    pthread_mutex_lock(&store->lock);
    bool newer = tb_status_is_newer(store, name, task_id);
    pthread_mutex_unlock(&store->lock);
    if (newer) {
        TB_LOG(TB_LOG_DEBUG, TB_LOG_FACILITY,
               "status of '%s' task %d not written: another worker's is of a newer "
               "generation",
               name, task_id);
    } else {
        rc = tb_write(store, TB_LOG_STATUS, &batch, "put status", name, errstr,
                      errstr_size);
    }
    pthread_mutex_unlock(&store->io[TB_LOG_STATUS]);
    tb_batch_free(&batch);
    return rc;
}

static json_t *tb_kafka_status_get(tb_store_t *base, const char *name, char *errstr,
                                   size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    json_t *status = NULL;

    pthread_mutex_lock(&store->lock);
    json_t *entry = json_object_get(store->status, name);
    json_t *connector = json_object_get(entry, "connector");
    if (connector != NULL) {
        json_t *tasks = json_object_get(entry, "tasks");
        status = json_pack("{s:O, s:o}", "connector", connector, "tasks",
                           tasks == NULL ? json_object() : json_deep_copy(tasks));
    }
    pthread_mutex_unlock(&store->lock);
    if (connector == NULL) {
        snprintf(errstr, errstr_size, "no status for connector %s", name);
    } else if (status == NULL) {
        tb_store_error(errstr, errstr_size, "get status", name, "out of memory");
    }
    return status;
}

/* ---- offsets ---- */

static int tb_kafka_offsets_put(tb_store_t *base, const char *connector,
                                const json_t *offsets, char *errstr, size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t batch = {0};
    const json_t *item;
    size_t i;
    int rc;

    pthread_mutex_lock(&store->io[TB_LOG_OFFSETS]);
    pthread_mutex_lock(&store->lock);
    json_t *known = json_object_get(store->offsets, connector);
    json_array_foreach (offsets, i, item) {
        const json_t *partition = json_object_get(item, "partition");
        const json_t *offset = json_object_get(item, "offset");
        char *text = json_dumps(partition, TB_STORE_JSON_CANONICAL);
        const char *key =
            text == NULL
                ? NULL
                : json_string_value(json_object_get(json_object_get(known, text), "key"));
        int tombstone = json_is_null(offset);

        tb_batch_add(
            &batch,
            key != NULL ? strdup(key) : tb_connect_offset_key(connector, partition),
            tombstone ? NULL : json_dumps(offset, TB_STORE_JSON_CANONICAL), tombstone);
        free(text);
    }
    pthread_mutex_unlock(&store->lock);
    rc = tb_write(store, TB_LOG_OFFSETS, &batch, "put offsets", connector, errstr,
                  errstr_size);
    pthread_mutex_unlock(&store->io[TB_LOG_OFFSETS]);
    tb_batch_free(&batch);
    return rc;
}

static json_t *tb_kafka_offsets_get(tb_store_t *base, const char *connector, char *errstr,
                                    size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    json_t *list = json_array();
    size_t count = 0;
    int rc = list == NULL ? -1 : 0;

    pthread_mutex_lock(&store->lock);
    json_t *known = json_object_get(store->offsets, connector);
    const char **texts = tb_sorted_keys(known, &count);
    for (size_t i = 0; texts != NULL && i < count && rc == 0; i++) {
        json_t *entry = json_object_get(known, texts[i]);
        rc = json_array_append_new(list,
                                   json_pack("{s:O, s:O}", "partition",
                                             json_object_get(entry, "partition"),
                                             "offset", json_object_get(entry, "offset")));
    }
    pthread_mutex_unlock(&store->lock);
    free(texts);
    if (rc != 0 || texts == NULL) {
        json_decref(list);
        tb_store_error(errstr, errstr_size, "get offsets", connector, "out of memory");
        return NULL;
    }
    return list;
}

static int tb_kafka_offsets_delete(tb_store_t *base, const char *connector, char *errstr,
                                   size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t batch = {0};
    const char *text;
    json_t *entry;
    int rc = 0;

    pthread_mutex_lock(&store->io[TB_LOG_OFFSETS]);
    pthread_mutex_lock(&store->lock);
    json_object_foreach (json_object_get(store->offsets, connector), text, entry) {
        tb_batch_add(&batch, strdup(json_string_value(json_object_get(entry, "key"))),
                     NULL, 1);
    }
    pthread_mutex_unlock(&store->lock);
    if (batch.count > 0 || batch.failed) {
        rc = tb_write(store, TB_LOG_OFFSETS, &batch, "delete offsets", connector, errstr,
                      errstr_size);
    }
    pthread_mutex_unlock(&store->io[TB_LOG_OFFSETS]);
    tb_batch_free(&batch);
    return rc;
}

/* ---- mode, refresh, open and close ---- */

/* The topics are a real cluster's: dev mode's cluster cannot hold them
 * past the process. */
static int tb_kafka_mode_bind(tb_store_t *base, tb_store_mode_t mode,
                              tb_store_mode_t *bound, char *errstr, size_t errstr_size)
{
    (void)base;
    (void)mode;
    (void)errstr;
    (void)errstr_size;
    *bound = TB_STORE_MODE_KAFKA;
    return 0;
}

/* One topic's read to the end: what tb_apply_read needs. */
typedef struct {
    tb_kafka_store_t *store;
    tb_log_id_t log;
    json_t *changed; /* collects the connectors whose rows changed, or NULL */
} tb_reading_t;

/* tb_kafka_log_cb: applies one record read, under the store's lock, which
 * is not held across the reading. */
static void tb_apply_read(const tb_kafka_log_record_t *record, void *opaque)
{
    tb_reading_t *reading = opaque;
    tb_kafka_store_t *store = reading->store;

    pthread_mutex_lock(&store->lock);
    store->changed = reading->changed;
    tb_store_kafka_appliers[reading->log](record, store);
    store->changed = NULL;
    pthread_mutex_unlock(&store->lock);
}

/* Reads every topic to its end; changed, when not NULL, collects the
 * connectors whose rows changed. */
static int tb_read_all(tb_kafka_store_t *store, json_t *changed, const char *op,
                       char *errstr, size_t errstr_size)
{
    char why[512];

    for (int i = 0; i < TB_LOG__COUNT; i++) {
        tb_reading_t reading = {store, (tb_log_id_t)i, changed};
        pthread_mutex_lock(&store->io[i]);
        int rc = tb_kafka_log_read_to_end(store->logs[i], tb_apply_read, &reading, why,
                                          sizeof(why));
        pthread_mutex_unlock(&store->io[i]);
        if (rc != 0) {
            tb_store_error(errstr, errstr_size, op, NULL, why);
            return -1;
        }
    }
    return 0;
}

static int tb_kafka_refresh(tb_store_t *base, json_t *changed, char *errstr,
                            size_t errstr_size)
{
    return tb_read_all((tb_kafka_store_t *)base, changed, "refresh", errstr, errstr_size);
}

static int tb_kafka_restart_request(tb_store_t *base, const char *name,
                                    bool include_tasks, bool only_failed, char *errstr,
                                    size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t batch = {0};
    int rc;

    tb_batch_add(&batch, tb_config_key(TB_CONNECT_KEY_RESTART, name, 0),
                 tb_connect_restart_value(include_tasks, only_failed), 0);
    pthread_mutex_lock(&store->io[TB_LOG_CONFIG]);
    rc = tb_write(store, TB_LOG_CONFIG, &batch, "restart", name, errstr, errstr_size);
    pthread_mutex_unlock(&store->io[TB_LOG_CONFIG]);
    tb_batch_free(&batch);
    return rc;
}

static void tb_kafka_fencing_get(tb_store_t *base, const char *name,
                                 tb_store_fencing_t *out)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;

    pthread_mutex_lock(&store->lock);
    json_t *entry = json_object_get(store->fencing, name);
    json_t *count = json_object_get(entry, "count");
    out->kept = true;
    out->task_count = count != NULL ? (int)json_integer_value(count) : -1;
    out->pending = json_is_true(json_object_get(entry, "pending"));
    pthread_mutex_unlock(&store->lock);
}

static int tb_kafka_fencing_put(tb_store_t *base, const char *name, int task_count,
                                char *errstr, size_t errstr_size)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    tb_batch_t batch = {0};
    int rc;

    tb_batch_add(&batch, tb_config_key(TB_CONNECT_KEY_FENCING, name, 0),
                 tb_connect_fencing_value(task_count), 0);
    pthread_mutex_lock(&store->io[TB_LOG_CONFIG]);
    rc = tb_write(store, TB_LOG_CONFIG, &batch, "fencing", name, errstr, errstr_size);
    pthread_mutex_unlock(&store->io[TB_LOG_CONFIG]);
    tb_batch_free(&batch);
    return rc;
}

static json_t *tb_kafka_restarts_take(tb_store_t *base)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;
    json_t *fresh = json_array();

    if (fresh == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&store->lock);
    json_t *taken = store->restarts;
    store->restarts = fresh;
    pthread_mutex_unlock(&store->lock);
    return taken;
}

static void tb_kafka_close(tb_store_t *base)
{
    tb_kafka_store_t *store = (tb_kafka_store_t *)base;

    for (int i = 0; i < TB_LOG__COUNT; i++) {
        tb_kafka_log_close(store->logs[i]);
    }
    json_decref(store->connectors);
    json_decref(store->status);
    json_decref(store->offsets);
    json_decref(store->restarts);
    json_decref(store->fencing);
    free(store->worker_id);
    for (int i = 0; i < TB_LOG__COUNT; i++) {
        pthread_mutex_destroy(&store->io[i]);
    }
    pthread_mutex_destroy(&store->lock);
    free(store);
}

static const tb_store_ops_t tb_kafka_ops = {
    .close = tb_kafka_close,
    .connector_put = tb_kafka_connector_put,
    .connector_delete = tb_kafka_connector_delete,
    .connectors_list = tb_kafka_connectors_list,
    .status_put = tb_kafka_status_put,
    .status_get = tb_kafka_status_get,
    .offsets_put = tb_kafka_offsets_put,
    .offsets_get = tb_kafka_offsets_get,
    .offsets_delete = tb_kafka_offsets_delete,
    .mode_bind = tb_kafka_mode_bind,
    .refresh = tb_kafka_refresh,
    .restart_request = tb_kafka_restart_request,
    .restarts_take = tb_kafka_restarts_take,
    .fencing_get = tb_kafka_fencing_get,
    .fencing_put = tb_kafka_fencing_put,
};

static int tb_open_logs(tb_kafka_store_t *store, const tb_store_kafka_options_t *o,
                        char *errstr, size_t errstr_size)
{
    int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : TB_DEFAULT_TIMEOUT_MS;
    bool no_create = o->no_topic_creation;
    const tb_kafka_log_spec_t specs[TB_LOG__COUNT] = {
        [TB_LOG_CONFIG] = {o->config.name, "config.storage.topic", 1,
                           o->config.replication_factor, true, no_create, timeout_ms},
        [TB_LOG_OFFSETS] = {o->offsets.name, "offset.storage.topic",
                            o->offsets.partitions, o->offsets.replication_factor, false,
                            no_create, timeout_ms},
        [TB_LOG_STATUS] = {o->status.name, "status.storage.topic", o->status.partitions,
                           o->status.replication_factor, false, no_create, timeout_ms},
    };
    char why[512];

    for (int i = 0; i < TB_LOG__COUNT; i++) {
        if (specs[i].topic == NULL || specs[i].topic[0] == '\0') {
            snprintf(why, sizeof(why), "%s is not set", specs[i].role);
        } else {
            store->logs[i] = tb_kafka_log_open(o->conf, &specs[i], why, sizeof(why));
        }
        if (store->logs[i] == NULL) {
            tb_store_error(errstr, errstr_size, "open", NULL, why);
            return -1;
        }
    }
    return 0;
}

tb_store_t *tb_store_kafka_open(const tb_store_kafka_options_t *options, char *errstr,
                                size_t errstr_size)
{
    tb_kafka_store_t *store = calloc(1, sizeof(*store));

    if (store == NULL || pthread_mutex_init(&store->lock, NULL) != 0) {
        free(store);
        tb_store_error(errstr, errstr_size, "open", NULL, "out of memory");
        return NULL;
    }
    for (int i = 0; i < TB_LOG__COUNT; i++) {
        pthread_mutex_init(&store->io[i], NULL); /* cannot fail: default attributes */
    }
    store->base.ops = &tb_kafka_ops;
    store->worker_id = strdup(options->worker_id != NULL ? options->worker_id : "");
    store->generation = options->generation;
    store->connectors = json_object();
    store->status = json_object();
    store->offsets = json_object();
    store->restarts = json_array();
    store->fencing = json_object();
    if (store->worker_id == NULL || store->connectors == NULL || store->status == NULL ||
        store->offsets == NULL || store->restarts == NULL || store->fencing == NULL) {
        tb_store_error(errstr, errstr_size, "open", NULL, "out of memory");
        goto fail;
    }
    if (tb_open_logs(store, options, errstr, errstr_size) != 0 ||
        tb_read_all(store, NULL, "open", errstr, errstr_size) != 0) {
        goto fail;
    }
    if (options->generation_of_topic && store->highest_generation > store->generation) {
        store->generation = store->highest_generation;
    }
    return &store->base;
fail:
    tb_kafka_close(&store->base);
    return NULL;
}
