/* The herder's life, the claims on connector names, and bringing a
 * connector to its target state (herder_internal.h). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/config/tb_task_configs.h"
#include "connectors/runtime/herder/herder_internal.h"
#include "connectors/tb_plugin.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define HEARTBEAT_STALE_MS 15000

tb_err_t tb_herder_fail(tb_err_t err, char *msg, size_t msg_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msg_size, fmt, ap);
    va_end(ap);
    return err;
}

tb_err_t tb_herder_claim(tb_herder_t *herder, const char *name, tb_known_connector_t **c,
                         char *msg, size_t msg_size)
{
    int64_t deadline_ms = tb_deadline_get();
    struct timespec until;
    tb_deadline_timespec(deadline_ms, &until);
    while (json_object_get(herder->claims, name) != NULL) {
        if (deadline_ms == 0) {
            pthread_cond_wait(&herder->idle, &herder->lock);
        } else if (pthread_cond_timedwait(&herder->idle, &herder->lock, &until) ==
                       ETIMEDOUT &&
                   json_object_get(herder->claims, name) != NULL) {
            *c = NULL;
            return tb_herder_fail(TB_ERR_UNAVAILABLE, msg, msg_size,
                                  "Connector %s is busy with an earlier operation (a "
                                  "stop of its tasks, or a write to the config topic) "
                                  "that did not end within rest.request.timeout.ms; "
                                  "this request was not carried out: try again",
                                  name);
        }
    }
    json_object_set_new(herder->claims, name, json_true());
    *c = tb_config_state_find(herder->config_state, name);
    return TB_OK;
}

void tb_herder_release(tb_herder_t *herder, const char *name)
{
    json_object_del(herder->claims, name);
    pthread_cond_broadcast(&herder->idle);
}

void tb_herder_stop_unlocked(tb_herder_t *herder, tb_task_t **tasks, size_t count)
{
    pthread_mutex_unlock(&herder->lock);
    tb_worker_stop_tasks(tasks, count);
    pthread_mutex_lock(&herder->lock);
}

void tb_herder_record_state(tb_herder_t *herder, const tb_known_connector_t *c,
                            tb_state_t state, const char *trace)
{
    tb_worker_connector_state_set(herder->worker, c->name, state, trace);
}

int tb_herder_settle_task_configs(tb_herder_t *herder, tb_known_connector_t *c,
                                  bool claimed)
{
    char errstr[1200];
    json_t *wanted = tb_task_configs_for(c, c->target, errstr, sizeof(errstr));
    int rc = errstr[0] != '\0' ? -1 : 0;
    if (rc == 0 && !json_equal(wanted, c->task_configs) &&
        tb_config_state_put(herder->config_state, claimed ? &herder->lock : NULL, c->name,
                            c->config, c->plugin, c->target, wanted, errstr,
                            sizeof(errstr)) == NULL) {
        rc = -1;
    }
    if (rc != 0) {
        tb_herder_record_state(herder, c, TB_STATE_FAILED, errstr);
    }
    json_decref(wanted);
    return rc;
}

bool tb_herder_fenced_source(const tb_herder_t *herder, const tb_known_connector_t *c)
{
    return c->plugin->kind == TB_PLUGIN_SOURCE &&
           tb_worker_exactly_once_available(herder->worker) &&
           json_array_size(c->task_configs) > 0;
}

void tb_herder_note_generation(tb_herder_t *herder, const tb_known_connector_t *c,
                               const tb_store_fencing_t *view)
{
    if (!tb_herder_fenced_source(herder, c)) {
        return;
    }
    tb_fencing_generation_t g = {
        .connector = c->name,
        .config = c->config,
        .generation = c->task_generation,
        .task_count = (int)json_array_size(c->task_configs),
        .fences = herder->fences,
    };
    if (view != NULL) {
        g.store = *view;
    } else {
        tb_store_fencing_get(herder->store, c->name, &g.store);
    }
    tb_fencing_note(tb_worker_fencing(herder->worker), &g);
}

void tb_herder_apply_target(tb_herder_t *herder, tb_known_connector_t *c)
{
    const char *workers[] = {tb_worker_id(herder->worker)};
    tb_assignment_t computed = {0};
    const tb_assignment_t *assignment = &herder->assignment;
    if (!herder->options.distributed) {
        if (herder->assignor(herder->config_state, workers, 1, &computed) != 0) {
            TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", c->name, -1,
                        "out of memory assigning its tasks; none started");
        }
        assignment = &computed;
    }
    tb_herder_note_generation(herder, c, NULL);
    if (c->target != TB_TARGET_STOPPED) {
        tb_worker_apply(herder->worker, c, assignment);
    }
    if (tb_assignor_runs(assignment, workers[0], c->name, TB_ASSIGNOR_CONNECTOR)) {
        tb_herder_record_state(herder, c,
                               c->target == TB_TARGET_STOPPED  ? TB_STATE_STOPPED
                               : c->target == TB_TARGET_PAUSED ? TB_STATE_PAUSED
                                                               : TB_STATE_RUNNING,
                               NULL);
    }
    tb_assignment_clear(&computed);
}

/* Starts every stored connector in its target state. Call with the lock
 * held. */
static int load(tb_herder_t *herder, char *errstr, size_t errstr_size)
{
    if (tb_config_state_load(herder->config_state, errstr, errstr_size) != 0) {
        return -1;
    }
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        if (herder->options.dev && c->plugin->kind == TB_PLUGIN_SINK) {
            tb_offsets_drop_dev_sink(herder->store, c->name);
        }
        /* a store written before rows were written whole may hold a mix;
         * distributed, the task configs are the leader's to write */
        if (herder->options.distributed ||
            tb_herder_settle_task_configs(herder, c, false) == 0) {
            tb_herder_apply_target(herder, c);
        }
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1,
                    "loaded from the store: %s with %zu task(s)",
                    tb_target_state_name(c->target),
                    tb_worker_task_slots(herder->worker, c->name));
    }
    return 0;
}

/* A store serves the mode it was first opened in: a dev store's offsets
 * point into an in-memory cluster that is gone, and a dev worker would
 * drop a Kafka store's sink offsets (tb_offsets_drop_dev_sink). */
static int check_store_mode(tb_herder_t *herder, char *errstr, size_t errstr_size)
{
    const char *path = herder->options.store_path;
    tb_store_mode_t wanted =
        herder->options.dev ? TB_STORE_MODE_DEV : TB_STORE_MODE_KAFKA;
    tb_store_mode_t bound;
    if (tb_store_mode_bind(herder->store, wanted, &bound, errstr, errstr_size) != 0) {
        return -1;
    }
    if (bound == wanted) {
        return 0;
    }
    if (bound == TB_STORE_MODE_DEV) {
        snprintf(errstr, errstr_size,
                 "the store %s (offset.storage.file.filename) was used in dev mode: its "
                 "offsets belong to an in-memory Kafka cluster that is gone. Give this "
                 "worker another offset.storage.file.filename, or run it in dev mode "
                 "(--dev or dev=true)",
                 path);
    } else {
        snprintf(errstr, errstr_size,
                 "the store %s (offset.storage.file.filename) belongs to a worker "
                 "connected to Kafka, and dev mode would drop its sink offsets. Give "
                 "dev mode another offset.storage.file.filename, or run without --dev "
                 "and dev=true",
                 path);
    }
    return -1;
}

/* What a worker of options refuses, its clients' settings being client. */
static tb_connector_checks_t checks_of(const tb_worker_options_t *options,
                                       const tb_client_settings_t *client)
{
    return (tb_connector_checks_t){
        .client = client,
        .secret_policy = &options->secret_policy,
        .limits = &options->limits,
        .exactly_once_source = options->exactly_once_source,
        .exactly_once_available = tb_worker_options_exactly_once(options),
    };
}

tb_connector_checks_t tb_herder_offline_checks(const tb_worker_options_t *options,
                                               tb_client_settings_t *client)
{
    *client = tb_worker_client_settings(options);
    return checks_of(options, client);
}

tb_herder_t *tb_herder_create(const tb_worker_options_t *options, char *errstr,
                              size_t errstr_size)
{
    tb_herder_t *herder = calloc(1, sizeof(*herder));
    herder->options = *options;
    herder->options.kafka_props = herder->options.override_allowlist = NULL;
    herder->options.converter_config = NULL;
    herder->options.worker_id = NULL;
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_mutex_init(&herder->lock, NULL);
    pthread_cond_init(&herder->idle, &monotonic); /* timed waits: tb_herder_claim */
    pthread_condattr_destroy(&monotonic);
    herder->claims = json_object();
    herder->options.store = NULL;
    herder->store = options->store != NULL
                        ? options->store
                        : tb_store_open(options->store_path, errstr, errstr_size);
    if (herder->store == NULL || check_store_mode(herder, errstr, errstr_size) != 0) {
        goto fail;
    }
    herder->worker = tb_worker_create(options, herder->store, errstr, errstr_size);
    if (herder->worker == NULL) {
        goto fail;
    }
    herder->config_state = tb_config_state_create(herder->store);
    herder->assignor = tb_assignor_standalone;
    herder->fences = !options->distributed; /* distributed: the leader's tick */
    tb_herder_secret_policy_set(herder, &options->secret_policy);
    herder->checks = checks_of(&herder->options, tb_worker_client(herder->worker));
    herder->offsets = (tb_offsets_env_t){
        .store = herder->store,
        .client = tb_worker_client(herder->worker),
        .dev = options->dev,
        .limits = &herder->options.limits,
        .fencing = tb_worker_exactly_once_available(herder->worker)
                       ? tb_worker_fencing(herder->worker)
                       : NULL,
    };
    pthread_mutex_lock(&herder->lock);
    int rc = load(herder, errstr, errstr_size);
    pthread_mutex_unlock(&herder->lock);
    if (rc != 0) {
        goto fail;
    }
    return herder;

fail:
    tb_herder_destroy(herder);
    return NULL;
}

void tb_herder_destroy(tb_herder_t *herder)
{
    if (herder == NULL) {
        return;
    }
    tb_worker_destroy(herder->worker);
    tb_config_state_destroy(herder->config_state);
    tb_store_close(herder->store);
    tb_assignment_clear(&herder->assignment);
    pthread_mutex_destroy(&herder->lock);
    pthread_cond_destroy(&herder->idle);
    json_decref(herder->claims);
    json_decref(herder->policy_paths);
    json_decref(herder->policy_pattern);
    free(herder);
}

tb_health_t tb_herder_health(tb_herder_t *herder, char *message, size_t message_size)
{
    char id[128];
    if (!tb_worker_cluster_id(herder->worker, id, sizeof(id))) {
        snprintf(message, message_size,
                 "Worker is still starting up. Waiting for the Kafka cluster "
                 "at %s to answer.",
                 tb_worker_bootstrap(herder->worker));
        return TB_HEALTH_STARTING;
    }
    int64_t silent = tb_worker_pool_silence_ms(herder->worker);
    if (silent > HEARTBEAT_STALE_MS) {
        snprintf(message, message_size,
                 "Worker was unable to handle this request and may be unable to handle "
                 "other requests. The task pool has run nothing for %lld s.",
                 (long long)(silent / 1000));
        return TB_HEALTH_UNHEALTHY;
    }
    snprintf(message, message_size,
             "Worker has completed startup and is ready to handle requests.");
    return TB_HEALTH_HEALTHY;
}

bool tb_herder_cluster_id(tb_herder_t *herder, char *buf, size_t size)
{
    return tb_worker_cluster_id(herder->worker, buf, size);
}

const char *tb_herder_bootstrap(const tb_herder_t *herder)
{
    return tb_worker_bootstrap(herder->worker);
}

tb_known_connector_t *tb_herder_lock_connector(tb_herder_t *herder, const char *name,
                                               const char *not_found, char *msg,
                                               size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c = tb_config_state_find(herder->config_state, name);
    if (c == NULL) {
        pthread_mutex_unlock(&herder->lock);
        snprintf(msg, msg_size, not_found, name);
    }
    return c;
}

void tb_herder_secret_policy_set(tb_herder_t *herder, const tb_secret_policy_t *policy)
{
    json_t *paths = policy->allowed_paths != NULL ? json_deep_copy(policy->allowed_paths)
                                                  : json_array();
    json_t *pattern =
        policy->env_pattern != NULL ? json_string(policy->env_pattern) : NULL;
    pthread_mutex_lock(&herder->lock);
    /* tb_herder_validate holds references to the old ones while it runs */
    json_decref(herder->policy_paths);
    json_decref(herder->policy_pattern);
    herder->policy_paths = paths;
    herder->policy_pattern = pattern;
    herder->options.secret_policy = *policy;
    herder->options.secret_policy.allowed_paths = paths;
    herder->options.secret_policy.env_pattern = json_string_value(pattern);
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        json_t *errors =
            tb_connector_validate_errors(&herder->checks, c->plugin, c->config);
        char reasons[1024];
        tb_config_errors_join(errors, "; ", reasons, sizeof(reasons));
        if (json_object_size(errors) > 0) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", c->name, -1,
                        "the worker's config.providers settings now refuse this "
                        "connector's config (%s): it keeps running; its next update "
                        "is refused unless it changes",
                        reasons);
        }
        json_decref(errors);
    }
    pthread_mutex_unlock(&herder->lock);
}

json_t *tb_herder_secrets_reload(tb_herder_t *herder)
{
    json_t *restarted = json_array();
    pthread_mutex_lock(&herder->lock);
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        if (tb_connector_config_restarts_on_reload(c->config)) {
            tb_worker_secrets_reload(herder->worker, c->name, restarted);
        }
    }
    pthread_mutex_unlock(&herder->lock);
    return restarted;
}
