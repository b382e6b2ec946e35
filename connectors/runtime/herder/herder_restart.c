/* Restarts of connectors and tasks (herder_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/herder/herder_internal.h"
#include "core/tb_log.h"

/* Connect's restart plan over what this worker runs: whether c's own
 * instance restarts, and which of its slots tasks (restart_tasks, one per
 * slot). Distributed, only the worker running the connector's instance
 * restarts it. Call with c claimed. */
static bool plan_here(tb_herder_t *herder, const tb_known_connector_t *c,
                      bool include_tasks, bool only_failed, bool *restart_tasks,
                      size_t slots)
{
    const char *trace;
    tb_state_t state = tb_worker_connector_state(herder->worker, c->name, &trace);
    for (size_t i = 0; include_tasks && i < slots; i++) {
        char *task_trace = NULL;
        restart_tasks[i] =
            !only_failed || tb_worker_task_state(herder->worker, c->name, (int)i,
                                                 &task_trace) == TB_STATE_FAILED;
        free(task_trace);
    }
    return (!only_failed || state == TB_STATE_FAILED) &&
           (!herder->options.distributed ||
            tb_assignor_runs(&herder->assignment, tb_worker_id(herder->worker), c->name,
                             TB_ASSIGNOR_CONNECTOR));
}

/* Restarts what plan_here chose. Call with c claimed. */
static void restart_planned(tb_herder_t *herder, tb_known_connector_t *c,
                            bool restart_connector, const bool *restart_tasks,
                            size_t slots)
{
    if (restart_connector) {
        const char *trace;
        tb_state_t state = tb_worker_connector_state(herder->worker, c->name, &trace);
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1, "restarting");
        tb_herder_record_state(herder, c,
                               state == TB_STATE_FAILED ? TB_STATE_RUNNING : state, NULL);
        if (tb_herder_settle_task_configs(herder, c, true) == 0) {
            tb_herder_apply_target(herder, c);
        }
    }
    for (size_t i = 0; i < slots; i++) {
        if (restart_tasks[i]) {
            tb_worker_task_restart(herder->worker, c->name, (int)i);
        }
    }
}

void tb_herder_restart_here(tb_herder_t *herder, tb_known_connector_t *c,
                            bool include_tasks, bool only_failed)
{
    size_t slots = tb_worker_task_slots(herder->worker, c->name);
    bool *restart_tasks = calloc(slots + 1, sizeof(bool));
    bool restart_connector =
        plan_here(herder, c, include_tasks, only_failed, restart_tasks, slots);
    restart_planned(herder, c, restart_connector, restart_tasks, slots);
    free(restart_tasks);
}

/* Marks as RESTARTING, in a ConnectorStateInfo of the whole cluster, the
 * instances a restart with the flags restarts wherever they run. */
static void mark_restarting(json_t *status, bool include_tasks, bool only_failed)
{
    json_t *connector = json_object_get(status, "connector");
    json_t *tasks = json_object_get(status, "tasks");
    size_t count = include_tasks ? json_array_size(tasks) : 0;
    for (size_t i = 0; i <= count; i++) {
        json_t *instance = i == 0 ? connector : json_array_get(tasks, i - 1);
        const char *state = json_string_value(json_object_get(instance, "state"));
        if (!only_failed || (state != NULL && strcmp(state, "FAILED") == 0)) {
            json_object_set_new(instance, "state",
                                json_string(tb_state_name(TB_STATE_RESTARTING)));
            json_object_del(instance, "trace");
        }
    }
}

tb_err_t tb_herder_connector_restart(tb_herder_t *herder, const char *name,
                                     bool include_tasks, bool only_failed, json_t **out,
                                     char *msg, size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c;
    *out = NULL;
    tb_err_t err = tb_herder_claim(herder, name, &c, msg, msg_size);
    if (err != TB_OK) {
        pthread_mutex_unlock(&herder->lock);
        return err;
    }
    if (c == NULL) {
        err = tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size, "Unknown connector: %s",
                             name);
    } else if (herder->options.distributed) {
        /* as Connect's leader: the plan from the cluster's statuses, and a
         * request every worker carries out on what it runs (tb_herder_refresh) */
        char errstr[512];
        json_t *status = tb_herder_status_of(herder, c, NULL, false);
        mark_restarting(status, include_tasks, only_failed);
        /* the claim keeps c; readers do not wait on the broker */
        pthread_mutex_unlock(&herder->lock);
        int rc = tb_store_restart_request(herder->store, name, include_tasks, only_failed,
                                          errstr, sizeof(errstr));
        pthread_mutex_lock(&herder->lock);
        if (rc != 0) {
            err = tb_herder_fail(TB_ERR_INTERNAL, msg, msg_size, "%s", errstr);
        } else if (include_tasks || only_failed) {
            *out = json_incref(status);
        }
        json_decref(status);
    } else {
        size_t slots = tb_worker_task_slots(herder->worker, name);
        size_t shown = json_array_size(c->task_configs);
        bool *restart_tasks = calloc((slots > shown ? slots : shown) + 1, sizeof(bool));
        bool restart_connector =
            plan_here(herder, c, include_tasks, only_failed, restart_tasks, slots);
        *out = include_tasks || only_failed
                   ? tb_herder_status_of(herder, c, restart_tasks, restart_connector)
                   : NULL;
        restart_planned(herder, c, restart_connector, restart_tasks, slots);
        free(restart_tasks);
    }
    tb_herder_release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_task_restart(tb_herder_t *herder, const char *name, int task,
                                char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        tb_herder_lock_connector(herder, name, "Unknown connector: %s", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = TB_OK;
    if (!tb_worker_task_restart(herder->worker, name, task)) {
        err = tb_herder_fail(TB_ERR_NOT_FOUND, msg, msg_size, "Task %s-%d not found",
                             name, task);
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, task, "restart requested");
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}
