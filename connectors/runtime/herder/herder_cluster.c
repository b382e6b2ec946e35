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

/* Detaches the tasks of a connector that its new row (reread: c, or NULL
 * when gone) no longer runs as they are, given old, its entry before (name
 * NULL when there was none); adds them to *stopping (grown; *count of
 * them). Call with the lock held and the name claimed. */
static void detach_changed(tb_herder_t *herder, const char *name,
                           const tb_known_connector_t *old, const tb_known_connector_t *c,
                           tb_task_t ***stopping, size_t *count)
{
    size_t keep = c != NULL && old->name != NULL
                      ? tb_worker_tasks_kept(herder->worker, old, c->plugin, c->config,
                                             c->task_configs)
                      : 0;
    size_t n;
    tb_task_t **detached = tb_worker_detach_tasks(herder->worker, name, keep, &n);
    tb_task_t **grown = realloc(*stopping, (*count + n + 1) * sizeof(**stopping));
    if (grown == NULL) {
        tb_worker_stop_tasks(detached, n); /* out of memory: here, locked */
        return;
    }
    *stopping = grown;
    memcpy(*stopping + *count, detached, n * sizeof(**stopping));
    *count += n;
    free(detached);
}

/* Brings the connectors named in changed to what the store now says
 * other workers wrote: one reread of the store for all of them, then one
 * stop of every task that changed (in parallel), then each connector's
 * new target. Call with the lock held. */
static int refresh_changed(tb_herder_t *herder, const json_t *changed, char *errstr,
                           size_t errstr_size)
{
    /* each name once, claimed, with a copy of its entry before the reread
     * (name NULL when it had none) */
    json_t *names = json_array();
    json_t *seen = json_object();
    tb_known_connector_t *olds = calloc(json_array_size(changed) + 1, sizeof(*olds));
    size_t i;
    json_t *name;
    json_array_foreach (changed, i, name) {
        const char *n = json_string_value(name);
        if (json_object_get(seen, n) != NULL) {
            continue;
        }
        json_object_set_new(seen, n, json_true());
        tb_known_connector_t *c;
        /* the cluster's thread has no deadline: the claim waits */
        tb_herder_claim(herder, n, &c, errstr, errstr_size);
        if (c != NULL) {
            olds[json_array_size(names)] = *c;
            json_incref(c->config);
            json_incref(c->task_configs);
        }
        json_array_append(names, name);
    }
    int rc = tb_config_state_reread(herder->config_state, names, errstr, errstr_size);
    tb_task_t **stopping = NULL;
    size_t count = 0;
    json_array_foreach (names, i, name) {
        if (rc == 0) {
            const char *n = json_string_value(name);
            detach_changed(herder, n, &olds[i],
                           tb_config_state_find(herder->config_state, n), &stopping,
                           &count);
        }
    }
    tb_herder_stop_unlocked(herder, stopping, count);
    json_array_foreach (names, i, name) {
        const char *n = json_string_value(name);
        tb_known_connector_t *c = tb_config_state_find(herder->config_state, n);
        if (rc != 0) {
            /* unchanged: the next refresh reads it again */
        } else if (c != NULL) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", n, -1,
                        "changed by another worker: %s with %zu task(s)",
                        tb_target_state_name(c->target),
                        json_array_size(c->task_configs));
            tb_herder_apply_target(herder, c);
        } else {
            tb_worker_connector_forget(herder->worker, n);
            TB_LOG(TB_LOG_INFO, "tributary.herder",
                   "connector %s deleted by another worker", n);
        }
        tb_herder_release(herder, n);
        json_decref(olds[i].config);
        json_decref(olds[i].task_configs);
    }
    free(olds);
    json_decref(seen);
    json_decref(names);
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
    size_t i;
    pthread_mutex_lock(&herder->lock);
    int rc = refresh_changed(herder, changed, errstr, errstr_size);
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
