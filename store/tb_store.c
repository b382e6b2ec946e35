/*
 * tb_store.c - the functions of tb_store.h: each checks its arguments,
 * with the same messages for every backend, and calls the store's backend
 * (tb_store_backend.h).
 */
#include "store/tb_store.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "core/tb_seam.h"
#include "store/tb_store_backend.h"

#define TB_WHY_SIZE 256

void tb_store_error(char *errstr, size_t errstr_size, const char *op, const char *name,
                    const char *why)
{
    if (name == NULL) {
        snprintf(errstr, errstr_size, "store: %s: %s", op, why);
    } else {
        snprintf(errstr, errstr_size, "store: %s '%s': %s", op, name, why);
    }
}

json_t *tb_store_row_new(const char *name, json_t *config, tb_target_state_t target,
                         json_t *task_configs)
{
    return json_pack("{s:s, s:O, s:i, s:O}", "name", name, "config", config, "target",
                     (int)target, "task_configs", task_configs);
}

void tb_store_close(tb_store_t *store)
{
    if (store != NULL) {
        store->ops->close(store);
    }
}

/* ---- argument checks: each fills why and returns -1 ---- */

static int tb_check_config(const json_t *config, char *why, size_t why_size)
{
    json_t *object = (json_t *)config;

    if (!json_is_object(config)) {
        snprintf(why, why_size, "config must be a JSON object");
        return -1;
    }
    for (void *it = json_object_iter(object); it != NULL;
         it = json_object_iter_next(object, it)) {
        if (!json_is_string(json_object_iter_value(it))) {
            snprintf(why, why_size, "config value of '%s' is not a string",
                     json_object_iter_key(it));
            return -1;
        }
    }
    return 0;
}

static int tb_check_target(tb_target_state_t target, char *why, size_t why_size)
{
    if ((unsigned)target > TB_TARGET_STOPPED) {
        snprintf(why, why_size, "invalid target state %d", (int)target);
        return -1;
    }
    return 0;
}

static int tb_check_task_configs(const json_t *task_configs, char *why, size_t why_size)
{
    if (!json_is_array(task_configs)) {
        snprintf(why, why_size, "task configs must be a JSON array");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(task_configs); i++) {
        if (!json_is_object(json_array_get(task_configs, i))) {
            snprintf(why, why_size, "task config %zu is not an object", i);
            return -1;
        }
    }
    return 0;
}

/* A trace that is not valid UTF-8 is refused here rather than failing
 * every later read of the status. */
static int tb_check_status(int task_id, tb_state_t state, const char *trace, char *why,
                           size_t why_size)
{
    json_t *trace_json = trace == NULL ? NULL : json_string(trace);
    int bad_trace = trace != NULL && trace_json == NULL;

    json_decref(trace_json);
    if (task_id < -1 || (unsigned)state > TB_STATE_RESTARTING || bad_trace) {
        snprintf(why, why_size, "invalid %s",
                 bad_trace ? "trace (not UTF-8)" : "task id or state");
        return -1;
    }
    return 0;
}

static const char *tb_offset_problem(const json_t *item)
{
    const json_t *offset = json_object_get(item, "offset");

    if (!json_is_object(item)) {
        return "not an object";
    }
    if (!json_is_object(json_object_get(item, "partition"))) {
        return "\"partition\" must be an object";
    }
    if (!json_is_object(offset) && !json_is_null(offset)) {
        return "\"offset\" must be an object or null";
    }
    return NULL;
}

/* Names the first bad element when offsets is not an array of
 * {"partition":{...},"offset":{...}|null}. */
static int tb_check_offsets(const json_t *offsets, char *why, size_t why_size)
{
    if (!json_is_array(offsets)) {
        snprintf(why, why_size, "offsets must be a JSON array");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(offsets); i++) {
        const char *problem = tb_offset_problem(json_array_get(offsets, i));

        if (problem != NULL) {
            snprintf(why, why_size, "element %zu: %s", i, problem);
            return -1;
        }
    }
    return 0;
}

/* ---- the interface ---- */

int tb_store_connector_put(tb_store_t *store, const tb_store_connector_t *connector,
                           char *errstr, size_t errstr_size)
{
    char why[TB_WHY_SIZE] = "";

    if (tb_check_config(connector->config, why, sizeof(why)) != 0 ||
        tb_check_target(connector->target, why, sizeof(why)) != 0 ||
        tb_check_task_configs(connector->task_configs, why, sizeof(why)) != 0) {
        tb_store_error(errstr, errstr_size, "put connector", connector->name, why);
        return -1;
    }
    return store->ops->connector_put(store, connector, errstr, errstr_size);
}

int tb_store_connector_delete(tb_store_t *store, const char *name, char *errstr,
                              size_t errstr_size)
{
    return store->ops->connector_delete(store, name, errstr, errstr_size);
}

static int tb_connectors_walk(const json_t *list,
                              int (*cb)(const tb_store_connector_t *c, void *opaque),
                              void *opaque)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *row = json_array_get(list, i);
        tb_store_connector_t c = {
            .name = json_string_value(json_object_get(row, "name")),
            .config = json_object_get(row, "config"),
            .target =
                (tb_target_state_t)json_integer_value(json_object_get(row, "target")),
            .task_configs = json_object_get(row, "task_configs"),
        };
        int rc = cb(&c, opaque);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* The backend copies the rows out under its lock and cb runs after, so cb
 * may call the store. */
int tb_store_connectors_load(tb_store_t *store,
                             int (*cb)(const tb_store_connector_t *c, void *opaque),
                             void *opaque, char *errstr, size_t errstr_size)
{
    json_t *list = json_array();
    int rc;

    if (list == NULL) {
        tb_store_error(errstr, errstr_size, "load connectors", NULL, "out of memory");
        return -1;
    }
    rc = store->ops->connectors_list(store, list, errstr, errstr_size);
    if (rc == 0) {
        rc = tb_connectors_walk(list, cb, opaque);
    }
    json_decref(list);
    return rc;
}

/* The test seam TB_SEAM_STATUS_WRITE_HOLD (tb_seam.h): whether the write
 * of name's task_id in state is refused, which is then told in the file. */
static bool tb_status_write_held(const char *name, int task_id, tb_state_t state)
{
    const char *path = tb_seam(TB_SEAM_STATUS_WRITE_HOLD);
    int fd = path != NULL ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
    if (fd < 0) {
        return false;
    }
    dprintf(fd, "%s %d %s\n", name, task_id, tb_state_name(state));
    close(fd);
    return true;
}

int tb_store_status_put(tb_store_t *store, const char *name, int task_id,
                        tb_state_t state, const char *trace, char *errstr,
                        size_t errstr_size)
{
    char why[TB_WHY_SIZE] = "";

    if (tb_check_status(task_id, state, trace, why, sizeof(why)) != 0) {
        tb_store_error(errstr, errstr_size, "put status", name, why);
        return -1;
    }
    if (tb_status_write_held(name, task_id, state)) {
        tb_store_error(errstr, errstr_size, "put status", name,
                       "held by the test seam TB_STATUS_WRITE_HOLD");
        return -1;
    }
    return store->ops->status_put(store, name, task_id, state, trace, errstr,
                                  errstr_size);
}

json_t *tb_store_status_get(tb_store_t *store, const char *name, char *errstr,
                            size_t errstr_size)
{
    return store->ops->status_get(store, name, errstr, errstr_size);
}

int tb_store_offsets_put(tb_store_t *store, const char *connector, const json_t *offsets,
                         char *errstr, size_t errstr_size)
{
    char why[TB_WHY_SIZE] = "";

    if (tb_check_offsets(offsets, why, sizeof(why)) != 0) {
        tb_store_error(errstr, errstr_size, "put offsets", connector, why);
        return -1;
    }
    return store->ops->offsets_put(store, connector, offsets, errstr, errstr_size);
}

json_t *tb_store_offsets_get(tb_store_t *store, const char *connector, char *errstr,
                             size_t errstr_size)
{
    return store->ops->offsets_get(store, connector, errstr, errstr_size);
}

int tb_store_offsets_delete(tb_store_t *store, const char *connector, char *errstr,
                            size_t errstr_size)
{
    return store->ops->offsets_delete(store, connector, errstr, errstr_size);
}

int tb_store_mode_bind(tb_store_t *store, tb_store_mode_t mode, tb_store_mode_t *bound,
                       char *errstr, size_t errstr_size)
{
    return store->ops->mode_bind(store, mode, bound, errstr, errstr_size);
}

json_t *tb_store_refresh(tb_store_t *store, char *errstr, size_t errstr_size)
{
    json_t *changed = json_array();

    if (changed == NULL) {
        tb_store_error(errstr, errstr_size, "refresh", NULL, "out of memory");
        return NULL;
    }
    if (store->ops->refresh(store, changed, errstr, errstr_size) != 0) {
        json_decref(changed);
        return NULL;
    }
    return changed;
}

int tb_store_restart_request(tb_store_t *store, const char *name, bool include_tasks,
                             bool only_failed, char *errstr, size_t errstr_size)
{
    if (store->ops->restart_request == NULL) {
        tb_store_error(errstr, errstr_size, "restart", name,
                       "this store has no other worker to ask");
        return -1;
    }
    return store->ops->restart_request(store, name, include_tasks, only_failed, errstr,
                                       errstr_size);
}

json_t *tb_store_restarts_take(tb_store_t *store)
{
    return store->ops->restarts_take != NULL ? store->ops->restarts_take(store)
                                             : json_array();
}

void tb_store_fencing_get(tb_store_t *store, const char *name, tb_store_fencing_t *out)
{
    *out = (tb_store_fencing_t){.kept = false, .task_count = -1, .pending = false};
    if (store->ops->fencing_get != NULL && name != NULL) {
        store->ops->fencing_get(store, name, out);
    }
}

int tb_store_fencing_put(tb_store_t *store, const char *name, int task_count,
                         char *errstr, size_t errstr_size)
{
    if (name == NULL || task_count < 0) {
        tb_store_error(errstr, errstr_size, "fencing", name,
                       "a connector name and a task count >= 0 are required");
        return -1;
    }
    return store->ops->fencing_put != NULL
               ? store->ops->fencing_put(store, name, task_count, errstr, errstr_size)
               : 0;
}
