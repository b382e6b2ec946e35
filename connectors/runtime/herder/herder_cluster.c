/* Distributed mode: assignments, changes other workers wrote, restart
 * requests and fencing (herder_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/assignment/tb_assignment_json.h"
#include "connectors/runtime/herder/herder_internal.h"
#include "core/tb_log.h"

int tb_herder_assign(tb_herder_t *herder, const tb_assignment_input_t *base,
                     tb_assignment_t *out)
{
    pthread_mutex_lock(&herder->lock);
    int rc = tb_assignor_compute(herder->config_state, base, out);
    pthread_mutex_unlock(&herder->lock);
    return rc;
}

void tb_herder_assignment_set(tb_herder_t *herder, const tb_assignment_t *assignment)
{
    tb_assignment_t copy;
    if (tb_assignment_copy(assignment, &copy) != 0) {
        TB_LOG(TB_LOG_ERROR, "tributary.herder",
               "out of memory taking the new assignment; the last one stays");
        return;
    }
    pthread_mutex_lock(&herder->lock);
    tb_assignment_clear(&herder->assignment);
    herder->assignment = copy;
    /* first stop what moved away, so that its new worker does not run it
     * twice for long, then start what arrived; the lost tasks are collected
     * under the lock and stopped without it */
    tb_task_t **lost = NULL;
    size_t lost_count = 0;
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        size_t count;
        tb_task_t **detached = tb_worker_detach_unassigned(herder->worker, c->name,
                                                           &herder->assignment, &count);
        if (count > 0) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1,
                        "%zu task(s) assigned to another worker; stopping them here",
                        count);
        }
        tb_task_t **grown = realloc(lost, (lost_count + count + 1) * sizeof(*lost));
        if (grown == NULL) {
            tb_worker_stop_tasks(detached, count); /* out of memory: here, locked */
            continue;
        }
        lost = grown;
        memcpy(lost + lost_count, detached, count * sizeof(*lost));
        lost_count += count;
        free(detached);
    }
    tb_herder_stop_unlocked(herder, lost, lost_count);
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        if (json_object_get(herder->claims, c->name) == NULL) {
            tb_herder_apply_target(herder, c);
        }
    }
    pthread_mutex_unlock(&herder->lock);
}

/* Brings connector name to what the store now says another worker wrote.
 * Call with the lock held. */
static int refresh_one(tb_herder_t *herder, const char *name, char *errstr,
                       size_t errstr_size)
{
    tb_known_connector_t *c;
    tb_herder_claim(herder, name, &c, errstr, errstr_size); /* no deadline here */
    tb_known_connector_t old = {0};
    if (c != NULL) {
        old = *c;
        json_incref(old.config);
        json_incref(old.task_configs);
    }
    int rc = tb_config_state_reread(herder->config_state, name, &c, errstr, errstr_size);
    size_t keep = 0;
    if (rc == 0 && c != NULL && old.name != NULL) {
        keep = tb_worker_tasks_kept(herder->worker, &old, c->plugin, c->config,
                                    c->task_configs);
    }
    if (rc == 0) {
        size_t count;
        tb_task_t **stopped = tb_worker_detach_tasks(herder->worker, name, keep, &count);
        tb_herder_stop_unlocked(herder, stopped, count);
        if (c != NULL) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1,
                        "changed by another worker: %s with %zu task(s)",
                        tb_target_state_name(c->target),
                        json_array_size(c->task_configs));
            tb_herder_apply_target(herder, c);
        } else {
            tb_worker_connector_forget(herder->worker, name);
            TB_LOG(TB_LOG_INFO, "tributary.herder",
                   "connector %s deleted by another worker", name);
        }
    }
    json_decref(old.config);
    json_decref(old.task_configs);
    tb_herder_release(herder, name);
    return rc;
}

void tb_herder_fencing_tick(tb_herder_t *herder, bool leader)
{
    /* the store's views are read without the lock (no store call runs
     * under it; see the lock order in docs/ARCHITECTURE.md), after the
     * generations they are noted for: a view is as new as its generation's
     * task configs, or newer */
    json_t *names = json_object(); /* name -> the generation seen */
    pthread_mutex_lock(&herder->lock);
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        if (tb_herder_fenced_source(herder, c)) {
            json_object_set_new(names, c->name,
                                json_integer((json_int_t)c->task_generation));
        }
    }
    pthread_mutex_unlock(&herder->lock);
    tb_store_fencing_t *views = calloc(json_object_size(names) + 1, sizeof(*views));
    const char *name;
    json_t *seen;
    size_t i = 0;
    json_object_foreach (names, name, seen) {
        tb_store_fencing_get(herder->store, name, &views[i++]);
    }
    pthread_mutex_lock(&herder->lock);
    herder->fences = leader;
    i = 0;
    json_object_foreach (names, name, seen) {
        const tb_known_connector_t *c = tb_config_state_find(herder->config_state, name);
        if (c != NULL && c->task_generation == (unsigned long)json_integer_value(seen)) {
            tb_herder_note_generation(herder, c, &views[i]);
        }
        i++;
    }
    pthread_mutex_unlock(&herder->lock);
    free(views);
    json_decref(names);
    tb_fencing_tick(tb_worker_fencing(herder->worker));
}

int tb_herder_refresh(tb_herder_t *herder, char *errstr, size_t errstr_size)
{
    json_t *changed = tb_store_refresh(herder->store, errstr, errstr_size);
    if (changed == NULL) {
        return -1;
    }
    int rc = 0;
    size_t i;
    json_t *name;
    pthread_mutex_lock(&herder->lock);
    json_array_foreach (changed, i, name) {
        if (rc == 0) {
            rc = refresh_one(herder, json_string_value(name), errstr, errstr_size);
        }
    }
    /* restart requests: each worker restarts what it runs */
    json_t *restarts = tb_store_restarts_take(herder->store);
    json_t *restart;
    json_array_foreach (restarts, i, restart) {
        const char *connector = json_string_value(json_object_get(restart, "name"));
        tb_known_connector_t *c;
        tb_herder_claim(herder, connector, &c, errstr, errstr_size); /* no deadline */
        if (c != NULL) {
            tb_herder_restart_here(
                herder, c, json_is_true(json_object_get(restart, "include_tasks")),
                json_is_true(json_object_get(restart, "only_failed")));
        }
        tb_herder_release(herder, connector);
    }
    pthread_mutex_unlock(&herder->lock);
    json_decref(restarts);
    json_decref(changed);
    return rc;
}
