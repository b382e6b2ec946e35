/* The connectors and their configs (herder_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/config/tb_connector_secrets.h"
#include "connectors/runtime/config/tb_task_configs.h"
#include "connectors/runtime/herder/herder_internal.h"
#include "connectors/tb_plugin.h"
#include "core/tb_log.h"

static int compare_strings(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a),
                  json_string_value(*(json_t *const *)b));
}

json_t *tb_herder_connectors(tb_herder_t *herder)
{
    json_t *names = json_array();
    pthread_mutex_lock(&herder->lock);
    for (const tb_known_connector_t *c = tb_config_state_first(herder->config_state);
         c != NULL; c = c->next) {
        json_array_append_new(names, json_string(c->name));
    }
    pthread_mutex_unlock(&herder->lock);
    size_t n = json_array_size(names);
    json_t **items = calloc(n ? n : 1, sizeof(*items));
    for (size_t i = 0; i < n; i++) {
        items[i] = json_incref(json_array_get(names, i));
    }
    qsort(items, n, sizeof(*items), compare_strings);
    json_array_clear(names);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(names, items[i]);
    }
    free(items);
    return names;
}

/* ConnectorInfo of c. Call with the lock held. */
static json_t *info_of(const tb_known_connector_t *c)
{
    json_t *tasks = json_array();
    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        json_array_append_new(
            tasks, json_pack("{s:s, s:i}", "connector", c->name, "task", (int)i));
    }
    return json_pack("{s:s, s:o, s:o, s:s}", "name", c->name, "config",
                     tb_connector_config_redact(c->plugin, c->config), "tasks", tasks,
                     "type", tb_plugin_kind_name(c->plugin->kind));
}

json_t *tb_herder_validate(tb_herder_t *herder, const tb_plugin_t *plugin,
                           const json_t *config)
{
    /* the policy as it is now, held: a reload may replace it meanwhile */
    pthread_mutex_lock(&herder->lock);
    tb_secret_policy_t policy = herder->options.secret_policy;
    json_t *paths = json_incref(herder->policy_paths);
    json_t *pattern = json_incref(herder->policy_pattern);
    tb_connector_checks_t checks = herder->checks;
    pthread_mutex_unlock(&herder->lock);
    checks.secret_policy = &policy;
    json_t *errors = tb_connector_validate_errors(&checks, plugin, config);
    json_decref(paths);
    json_decref(pattern);
    json_t *infos = tb_connector_config_infos(plugin, config, errors);
    json_decref(errors);
    return infos;
}

/* Creates connector name, or replaces the config of c (claimed by the
 * caller, or NULL), then starts it in its target state. A started
 * connector keeps running every task whose task config and framework keys
 * are unchanged (tb_worker_tasks_kept); the others stop with the lock
 * released. Call with the lock held and name claimed. */
static tb_err_t put_config(tb_herder_t *herder, const char *name, tb_known_connector_t *c,
                           const json_t *config, tb_target_state_t initial_state,
                           json_t **out, char *msg, size_t msg_size)
{
    const tb_plugin_t *plugin = NULL;
    tb_err_t err =
        tb_connector_validate(&herder->checks, name, config, &plugin, msg, msg_size);
    if (err != TB_OK) {
        return err;
    }
    json_t *stored = json_deep_copy(config);
    json_object_set_new(stored, "name", json_string(name));
    tb_target_state_t target = c != NULL ? c->target : initial_state;
    if (tb_connector_secrets_externalize(
            herder->options.store_path, herder->options.distributed, name, plugin,
            c != NULL ? c->config : NULL, stored, msg, msg_size) != 0) {
        json_decref(stored);
        return TB_ERR_INTERNAL;
    }
    /* a new config makes new task configs, from the config whose secrets are
     * references by now; as in Connect, only a started connector has any */
    char failure[1200] = "";
    json_t *fresh =
        target == TB_TARGET_STARTED
            ? tb_task_configs_split(plugin, name, stored, failure, sizeof(failure))
            : json_array();
    bool created = c == NULL;
    size_t keep =
        created ? 0 : tb_worker_tasks_kept(herder->worker, c, plugin, stored, fresh);
    c = tb_config_state_put(herder->config_state, &herder->lock, name, stored, plugin,
                            target, fresh, msg, msg_size);
    json_decref(stored);
    json_decref(fresh);
    if (c == NULL) {
        return TB_ERR_INTERNAL;
    }
    tb_connector_validate_log_unused(name, plugin, c->config);
    if (created) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "created (%s, %s)",
                    plugin->class_name, tb_target_state_name(target));
    } else {
        if (target == TB_TARGET_STARTED) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1,
                        "config replaced; %zu task(s) unchanged, %zu (re)started", keep,
                        json_array_size(c->task_configs) - keep);
        }
        size_t count;
        tb_task_t **replaced = tb_worker_detach_tasks(herder->worker, name, keep, &count);
        tb_herder_stop_unlocked(herder, replaced, count);
    }
    tb_herder_apply_target(herder, c);
    if (failure[0] != '\0') {
        tb_herder_record_state(herder, c, TB_STATE_FAILED, failure);
    }
    *out = info_of(c);
    return TB_OK;
}

tb_err_t tb_herder_connector_put(tb_herder_t *herder, const char *name,
                                 const json_t *config, tb_target_state_t initial_state,
                                 bool replace, bool *created, json_t **out, char *msg,
                                 size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c;
    tb_err_t err = tb_herder_claim(herder, name, &c, msg, msg_size);
    if (err != TB_OK) {
        pthread_mutex_unlock(&herder->lock);
        return err;
    }
    if (c != NULL && !replace) {
        err = tb_herder_fail(TB_ERR_CONFLICT, msg, msg_size,
                             "Connector %s already exists", name);
    } else {
        *created = c == NULL;
        err = put_config(herder, name, c, config, initial_state, out, msg, msg_size);
    }
    tb_herder_release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_connector_patch(tb_herder_t *herder, const char *name,
                                   const json_t *patch, json_t **out, char *msg,
                                   size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c;
    tb_err_t err = tb_herder_claim(herder, name, &c, msg, msg_size);
    if (err != TB_OK) {
        pthread_mutex_unlock(&herder->lock);
        return err;
    }
    if (c == NULL) {
        err = tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found",
                             name);
    } else {
        json_t *merged = json_deep_copy(c->config);
        const char *key;
        json_t *value;
        json_object_foreach ((json_t *)patch, key, value) {
            if (json_is_null(value)) {
                json_object_del(merged, key);
            } else {
                json_object_set(merged, key, value);
            }
        }
        err = put_config(herder, name, c, merged, TB_TARGET_STARTED, out, msg, msg_size);
        json_decref(merged);
    }
    tb_herder_release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_connector_info(tb_herder_t *herder, const char *name, json_t **out,
                                  char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        tb_herder_lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = info_of(c);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_connector_config(tb_herder_t *herder, const char *name, json_t **out,
                                    char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        tb_herder_lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = tb_connector_config_redact(c->plugin, c->config);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

bool tb_herder_connector_config_is(tb_herder_t *herder, const char *name,
                                   const json_t *config)
{
    char msg[64];
    tb_known_connector_t *c = tb_herder_lock_connector(
        herder, name, "Connector %s not found", msg, sizeof(msg));
    if (c == NULL) {
        return false;
    }
    json_t *given = json_deep_copy(config);
    json_object_set_new(given, "name", json_string(name));
    bool same = json_equal(c->config, given);
    pthread_mutex_unlock(&herder->lock);
    json_decref(given);
    return same;
}

/* Task i's config as the REST API shows it: secrets hidden, and task.class
 * added as Connect's worker adds it: the connector's class name with its
 * "Connector" suffix replaced by "Task" (FileStreamSinkConnector ->
 * FileStreamSinkTask). New reference. */
static json_t *task_config_shown(const tb_known_connector_t *c, size_t i)
{
    static const char suffix[] = "Connector";
    const char *class_name = c->plugin->class_name;
    size_t len = strlen(class_name);
    size_t stem = len;
    if (len >= sizeof(suffix) - 1 &&
        strcmp(class_name + len - (sizeof(suffix) - 1), suffix) == 0) {
        stem = len - (sizeof(suffix) - 1);
    }
    char task_class[256];
    snprintf(task_class, sizeof(task_class), "%.*sTask", (int)stem, class_name);
    json_t *shown =
        tb_connector_config_redact(c->plugin, json_array_get(c->task_configs, i));
    json_object_set_new(shown, "task.class", json_string(task_class));
    return shown;
}

tb_err_t tb_herder_tasks(tb_herder_t *herder, const char *name, json_t **out, char *msg,
                         size_t msg_size)
{
    tb_known_connector_t *c =
        tb_herder_lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = json_array();
    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        json_array_append_new(*out, json_pack("{s:{s:s, s:i}, s:o}", "id", "connector",
                                              c->name, "task", (int)i, "config",
                                              task_config_shown(c, i)));
    }
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_tasks_config(tb_herder_t *herder, const char *name, json_t **out,
                                char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        tb_herder_lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = json_object();
    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        char id[300];
        snprintf(id, sizeof(id), "%s-%zu", c->name, i);
        json_object_set_new(*out, id, task_config_shown(c, i));
    }
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_target_state_set(tb_herder_t *herder, const char *name,
                                    tb_target_state_t target, char *msg, size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c;
    tb_err_t err = tb_herder_claim(herder, name, &c, msg, msg_size);
    if (err != TB_OK) {
        pthread_mutex_unlock(&herder->lock);
        return err;
    }
    if (c == NULL) {
        tb_herder_release(herder, name);
        pthread_mutex_unlock(&herder->lock);
        return tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size, "Unknown connector %s",
                              name);
    }
    char failure[1200];
    json_t *task_configs = tb_task_configs_for(c, target, failure, sizeof(failure));
    if (c->target == target) {
        /* nothing to change */
    } else if (tb_config_state_put(herder->config_state, &herder->lock, name, c->config,
                                   c->plugin, target, task_configs, msg,
                                   msg_size) == NULL) {
        err = TB_ERR_INTERNAL;
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "target state %s",
                    tb_target_state_name(target));
        size_t count;
        tb_task_t **stopped = tb_worker_detach_tasks(
            herder->worker, name, json_array_size(task_configs), &count);
        tb_herder_stop_unlocked(herder, stopped, count);
        tb_herder_apply_target(herder, c);
        if (failure[0] != '\0') {
            tb_herder_record_state(herder, c, TB_STATE_FAILED, failure);
        }
    }
    json_decref(task_configs);
    tb_herder_release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_connector_delete(tb_herder_t *herder, const char *name, char *msg,
                                    size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c;
    tb_err_t err = tb_herder_claim(herder, name, &c, msg, msg_size);
    if (err != TB_OK) {
        pthread_mutex_unlock(&herder->lock);
        return err;
    }
    if (c == NULL) {
        err = tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found",
                             name);
    } else if (tb_config_state_remove(herder->config_state, &herder->lock, name, msg,
                                      msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else {
        /* gone from reads at once; a connector re-created under its name
         * waits in tb_herder_claim() until its tasks have stopped */
        size_t count;
        tb_task_t **stopped = tb_worker_detach_tasks(herder->worker, name, 0, &count);
        tb_herder_stop_unlocked(herder, stopped, count);
        tb_worker_connector_forget(herder->worker, name);
        tb_connector_secrets_forget(herder->options.store_path, name);
        TB_LOG(TB_LOG_INFO, "tributary.herder", "connector %s deleted", name);
    }
    tb_herder_release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}
