#include "connectors/runtime/config/tb_config_state.h"

#include <stdlib.h>
#include <string.h>

#include "core/tb_log.h"

struct tb_config_state {
    tb_store_t *store;
    tb_known_connector_t *connectors;
    unsigned long generations; /* the last task-config generation given */
};

tb_config_state_t *tb_config_state_create(tb_store_t *store)
{
    tb_config_state_t *state = calloc(1, sizeof(*state));
    state->store = store;
    return state;
}

static void known_free(tb_known_connector_t *c)
{
    json_decref(c->config);
    json_decref(c->task_configs);
    free(c->name);
    free(c);
}

void tb_config_state_destroy(tb_config_state_t *state)
{
    if (state == NULL) {
        return;
    }
    while (state->connectors != NULL) {
        tb_known_connector_t *c = state->connectors;
        state->connectors = c->next;
        known_free(c);
    }
    free(state);
}

/* Adds an entry for name, taking references to config and task_configs. */
static tb_known_connector_t *known_add(tb_config_state_t *state, const char *name,
                                       json_t *config, const tb_plugin_t *plugin,
                                       tb_target_state_t target, json_t *task_configs)
{
    tb_known_connector_t *c = calloc(1, sizeof(*c));
    c->name = strdup(name);
    c->config = json_incref(config);
    c->plugin = plugin;
    c->target = target;
    c->task_configs = json_incref(task_configs);
    c->task_generation = ++state->generations;
    c->next = state->connectors;
    state->connectors = c;
    return c;
}

/* The plugin of a stored row, or NULL (logged) when this build lacks it. */
static const tb_plugin_t *plugin_of(const tb_store_connector_t *stored)
{
    const char *class_name =
        json_string_value(json_object_get(stored->config, "connector.class"));
    const tb_plugin_t *plugin = tb_plugin_find(class_name);
    if (plugin == NULL) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", stored->name, -1,
                    "stored connector names class %s, which this build does not "
                    "have; it is not started",
                    class_name ? class_name : "(none)");
    }
    return plugin;
}

static int load_one(const tb_store_connector_t *stored, void *opaque)
{
    tb_config_state_t *state = opaque;
    const tb_plugin_t *plugin = plugin_of(stored);
    if (plugin == NULL) {
        return 0;
    }
    json_t *config = json_deep_copy(stored->config);
    json_t *task_configs = json_deep_copy(stored->task_configs);
    known_add(state, stored->name, config, plugin, stored->target, task_configs);
    json_decref(config);
    json_decref(task_configs);
    return 0;
}

int tb_config_state_load(tb_config_state_t *state, char *errstr, size_t errstr_size)
{
    return tb_store_connectors_load(state->store, load_one, state, errstr, errstr_size);
}

/* Drops connector name's entry from the view. */
static void known_drop(tb_config_state_t *state, const char *name)
{
    for (tb_known_connector_t **link = &state->connectors; *link != NULL;
         link = &(*link)->next) {
        if (strcmp((*link)->name, name) == 0) {
            tb_known_connector_t *c = *link;
            *link = c->next;
            known_free(c);
            break;
        }
    }
}

/* Sets c's fields, taking references to config and task_configs; new task
 * configs are a new generation. */
static void known_set(tb_config_state_t *state, tb_known_connector_t *c, json_t *config,
                      const tb_plugin_t *plugin, tb_target_state_t target,
                      json_t *task_configs)
{
    if (!json_equal(c->task_configs, task_configs)) {
        c->task_generation = ++state->generations;
    }
    json_incref(config);
    json_decref(c->config);
    c->config = config;
    c->plugin = plugin;
    c->target = target;
    json_incref(task_configs);
    json_decref(c->task_configs);
    c->task_configs = task_configs;
}

typedef struct {
    tb_config_state_t *state;
    json_t *missing; /* the names asked for whose row the walk has not met */
} reread_t;

static int reread_one(const tb_store_connector_t *stored, void *opaque)
{
    reread_t *r = opaque;
    const tb_plugin_t *plugin =
        json_object_get(r->missing, stored->name) != NULL ? plugin_of(stored) : NULL;
    if (plugin == NULL) {
        return 0;
    }
    json_object_del(r->missing, stored->name);
    json_t *config = json_deep_copy(stored->config);
    json_t *task_configs = json_deep_copy(stored->task_configs);
    tb_known_connector_t *c = tb_config_state_find(r->state, stored->name);
    if (c == NULL) {
        known_add(r->state, stored->name, config, plugin, stored->target, task_configs);
    } else {
        known_set(r->state, c, config, plugin, stored->target, task_configs);
    }
    json_decref(config);
    json_decref(task_configs);
    return 0;
}

int tb_config_state_reread(tb_config_state_t *state, const json_t *names, char *errstr,
                           size_t errstr_size)
{
    reread_t r = {state, json_object()};
    size_t i;
    json_t *name;
    json_array_foreach (names, i, name) {
        json_object_set_new(r.missing, json_string_value(name), json_true());
    }
    int rc = tb_store_connectors_load(state->store, reread_one, &r, errstr, errstr_size);
    const char *key;
    json_t *value;
    json_object_foreach (r.missing, key, value) {
        if (rc == 0) {
            known_drop(state, key);
        }
    }
    json_decref(r.missing);
    return rc;
}

tb_known_connector_t *tb_config_state_first(const tb_config_state_t *state)
{
    return state->connectors;
}

tb_known_connector_t *tb_config_state_find(const tb_config_state_t *state,
                                           const char *name)
{
    for (tb_known_connector_t *c = state->connectors; c != NULL; c = c->next) {
        if (strcmp(c->name, name) == 0) {
            return c;
        }
    }
    return NULL;
}

tb_known_connector_t *tb_config_state_put(tb_config_state_t *state, pthread_mutex_t *lock,
                                          const char *name, json_t *config,
                                          const tb_plugin_t *plugin,
                                          tb_target_state_t target, json_t *task_configs,
                                          char *msg, size_t msg_size)
{
    tb_store_connector_t row = {name, config, target, task_configs};
    if (lock != NULL) {
        pthread_mutex_unlock(lock);
    }
    int rc = tb_store_connector_put(state->store, &row, msg, msg_size);
    if (lock != NULL) {
        pthread_mutex_lock(lock);
    }
    if (rc != 0) {
        return NULL;
    }
    tb_known_connector_t *c = tb_config_state_find(state, name);
    if (c == NULL) {
        return known_add(state, name, config, plugin, target, task_configs);
    }
    known_set(state, c, config, plugin, target, task_configs);
    return c;
}

int tb_config_state_remove(tb_config_state_t *state, pthread_mutex_t *lock,
                           const char *name, char *msg, size_t msg_size)
{
    if (lock != NULL) {
        pthread_mutex_unlock(lock);
    }
    int rc = tb_store_connector_delete(state->store, name, msg, msg_size);
    if (lock != NULL) {
        pthread_mutex_lock(lock);
    }
    if (rc != 0) {
        return -1;
    }
    known_drop(state, name);
    return 0;
}
