/* What runs where: statuses and active topics (herder_internal.h). */
#include <stdio.h>
#include <stdlib.h>

#include "connectors/runtime/herder/herder_internal.h"
#include "connectors/tb_plugin.h"

/* The status the store holds of c's connector instance (task -1) or of
 * one task, as its worker wrote it: {"state","trace","worker_id"} or NULL.
 * Distributed only: standalone, this worker runs everything. Borrowed from
 * stored (tb_store_status_get's, or NULL). */
static const json_t *stored_status(const tb_herder_t *herder, const json_t *stored,
                                   int task)
{
    char key[32];
    snprintf(key, sizeof(key), "%d", task);
    return !herder->options.distributed ? NULL
           : task < 0                   ? json_object_get(stored, "connector")
                      : json_object_get(json_object_get(stored, "tasks"), key);
}

/* Sets out's "state", "worker_id" and "trace" from the status another
 * worker recorded (in stored), when there is one. */
static void shown_from_store(json_t *out, const json_t *status)
{
    const char *state = json_string_value(json_object_get(status, "state"));
    const char *worker = json_string_value(json_object_get(status, "worker_id"));
    const char *trace = json_string_value(json_object_get(status, "trace"));
    if (state != NULL && worker != NULL) {
        json_object_set_new(out, "state", json_string(state));
        json_object_set_new(out, "worker_id", json_string(worker));
        if (trace != NULL) {
            json_object_set_new(out, "trace", json_string(trace));
        }
    }
}

/* {"id","state","worker_id","trace"?,"version"} of task i of c: this
 * worker's own when the task runs here, else (distributed) what its worker
 * recorded in stored. "version" (KIP-891, Connect 4.1) is the plugin's, as
 * GET /connector-plugins lists it: every worker runs the one build. */
static json_t *task_state_of(const tb_herder_t *herder, const tb_known_connector_t *c,
                             size_t i, bool restarting, const json_t *stored)
{
    char *trace = NULL;
    tb_state_t state = tb_worker_task_state(herder->worker, c->name, (int)i, &trace);
    json_t *out =
        json_pack("{s:i, s:s, s:s, s:s?}", "id", (int)i, "state",
                  tb_state_name(restarting ? TB_STATE_RESTARTING : state), "worker_id",
                  tb_worker_id(herder->worker), "version", c->plugin->version);
    if (trace != NULL && !restarting) {
        json_object_set_new(out, "trace", json_string(trace));
    }
    if (state == TB_STATE_UNASSIGNED && !restarting) {
        shown_from_store(out, stored_status(herder, stored, (int)i));
    }
    /* beyond Connect: how often the task was restarted, shown once it was */
    int restarts = tb_worker_task_restarts(herder->worker, c->name, (int)i);
    if (restarts > 0) {
        json_object_set_new(out, "restarts", json_integer(restarts));
    }
    free(trace);
    return out;
}

json_t *tb_herder_status_of(const tb_herder_t *herder, const tb_known_connector_t *c,
                            const bool *restarting_tasks, bool restarting_connector)
{
    const char *trace;
    char errstr[256];
    tb_state_t state = tb_worker_connector_state(herder->worker, c->name, &trace);
    json_t *stored =
        herder->options.distributed
            ? tb_store_status_get(herder->store, c->name, errstr, sizeof(errstr))
            : NULL;
    json_t *connector = json_pack(
        "{s:s, s:s, s:s?}", "state",
        tb_state_name(restarting_connector ? TB_STATE_RESTARTING : state), "worker_id",
        tb_worker_id(herder->worker), "version", c->plugin->version);
    if (trace != NULL && !restarting_connector) {
        json_object_set_new(connector, "trace", json_string(trace));
    }
    const char *self = tb_worker_id(herder->worker);
    if (herder->options.distributed && !restarting_connector &&
        !tb_assignor_runs(&herder->assignment, self, c->name, TB_ASSIGNOR_CONNECTOR)) {
        shown_from_store(connector, stored_status(herder, stored, TB_ASSIGNOR_CONNECTOR));
    }
    json_t *tasks = json_array();
    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        json_array_append_new(
            tasks,
            task_state_of(herder, c, i, restarting_tasks && restarting_tasks[i], stored));
    }
    json_decref(stored);
    return json_pack("{s:s, s:o, s:o, s:s}", "name", c->name, "connector", connector,
                     "tasks", tasks, "type", tb_plugin_kind_name(c->plugin->kind));
}

tb_err_t tb_herder_connector_status(tb_herder_t *herder, const char *name, json_t **out,
                                    char *msg, size_t msg_size)
{
    tb_known_connector_t *c = tb_herder_lock_connector(
        herder, name, "No status found for connector %s", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = tb_herder_status_of(herder, c, NULL, false);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_task_status(tb_herder_t *herder, const char *name, int task,
                               json_t **out, char *msg, size_t msg_size)
{
    tb_known_connector_t *c = tb_herder_lock_connector(
        herder, name, "No status found for task %s", msg, msg_size);
    if (c == NULL) {
        snprintf(msg, msg_size, "No status found for task %s-%d", name, task);
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = TB_OK;
    if (task < 0 || (size_t)task >= json_array_size(c->task_configs)) {
        err = tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size,
                             "No status found for task %s-%d", name, task);
    } else {
        char errstr[256];
        json_t *stored =
            herder->options.distributed
                ? tb_store_status_get(herder->store, name, errstr, sizeof(errstr))
                : NULL;
        *out = task_state_of(herder, c, (size_t)task, false, stored);
        json_decref(stored);
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}

json_t *tb_herder_topics(tb_herder_t *herder, const char *name)
{
    return json_pack("{s:{s:o}}", name, "topics", tb_worker_topics(herder->worker, name));
}

void tb_herder_topics_reset(tb_herder_t *herder, const char *name)
{
    tb_worker_topics_forget(herder->worker, name);
}
