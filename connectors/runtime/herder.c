#include "connectors/runtime/tb_herder.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/tb_assignment_json.h"
#include "connectors/runtime/tb_assignor.h"
#include "connectors/runtime/tb_config_state.h"
#include "connectors/runtime/tb_connector_config.h"
#include "connectors/runtime/tb_connector_secrets.h"
#include "connectors/runtime/tb_connector_validate.h"
#include "connectors/runtime/tb_offsets_ops.h"
#include "connectors/runtime/tb_plugin.h"
#include "connectors/runtime/tb_task_configs.h"
#include "connectors/runtime/tb_worker.h"
#include "core/tb_log.h"
#include "store/tb_store.h"

struct tb_herder {
    /* as given; its JSON and worker_id are the worker's copies, not these */
    tb_herder_options_t options;
    tb_store_t *store;
    tb_config_state_t *config_state; /* what the cluster knows */
    tb_worker_t *worker;             /* what this worker runs */
    tb_assignor_fn assignor;         /* who runs what, standalone */
    tb_assignment_t assignment;      /* who runs what, distributed: the leader's */
    tb_connector_checks_t checks;    /* what this worker allows */
    tb_offsets_env_t offsets;
    /* Guards the config state, the worker's connector instances and tasks,
     * and the claims. It is never held through slow work (stopping tasks,
     * Kafka admin calls): an operation that writes a connector claims its
     * name and does that work with the lock released, so reads and other
     * connectors go on while operations on the same connector wait for it,
     * in turn (idle). */
    pthread_mutex_t lock;
    pthread_cond_t idle; /* broadcast when a claim ends */
    json_t *claims;      /* connector name -> true while an operation holds it */
    /* this worker fences exactly-once sources' old tasks (tb_fencing.h):
     * standalone always, distributed while it leads */
    bool fences;
};

#define HEARTBEAT_STALE_MS 15000

__attribute__((format(printf, 4, 5))) static tb_err_t
fail(tb_err_t err, char *msg, size_t msg_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msg_size, fmt, ap);
    va_end(ap);
    return err;
}

/* Waits until no operation holds connector name, then claims the name for
 * the caller, who ends the claim with release() whatever it finds. Returns
 * the connector, or NULL when there is none. A claimed connector changes
 * only through its claimant, under the lock; the claimant may read it
 * without the lock. Call with the lock held; it stays held. */
static tb_known_connector_t *claim(tb_herder_t *herder, const char *name)
{
    while (json_object_get(herder->claims, name) != NULL) {
        pthread_cond_wait(&herder->idle, &herder->lock);
    }
    json_object_set_new(herder->claims, name, json_true());
    return tb_config_state_find(herder->config_state, name);
}

/* Ends a claim. Call with the lock held. */
static void release(tb_herder_t *herder, const char *name)
{
    json_object_del(herder->claims, name);
    pthread_cond_broadcast(&herder->idle);
}

/* Stops and frees detached tasks with the lock released, then takes it
 * again. */
static void stop_unlocked(tb_herder_t *herder, tb_task_t **tasks, size_t count)
{
    pthread_mutex_unlock(&herder->lock);
    tb_worker_stop_tasks(tasks, count);
    pthread_mutex_lock(&herder->lock);
}

static void record_connector_state(tb_herder_t *herder, const tb_known_connector_t *c,
                                   tb_state_t state, const char *trace)
{
    tb_worker_connector_state_set(herder->worker, c->name, state, trace);
}

/* Gives c the task configs its target state asks for (tb_task_configs_for),
 * in the store and in memory; a connector whose row cannot be written is
 * FAILED. Call with the lock held, c claimed or the herder loading. */
static int settle_task_configs(tb_herder_t *herder, tb_known_connector_t *c)
{
    char errstr[1200];
    json_t *wanted = tb_task_configs_for(c, c->target, errstr, sizeof(errstr));
    int rc = errstr[0] != '\0' ? -1 : 0;
    if (rc == 0 && !json_equal(wanted, c->task_configs) &&
        tb_config_state_put(herder->config_state, c->name, c->config, c->plugin,
                            c->target, wanted, errstr, sizeof(errstr)) == NULL) {
        rc = -1;
    }
    if (rc != 0) {
        record_connector_state(herder, c, TB_STATE_FAILED, errstr);
    }
    json_decref(wanted);
    return rc;
}

/* Whether c's tasks run in transactions here and have task configs: the
 * ones the fencing holds. */
static bool fenced_source(const tb_herder_t *herder, const tb_known_connector_t *c)
{
    return c->plugin->kind == TB_PLUGIN_SOURCE &&
           tb_worker_exactly_once_available(herder->worker) &&
           json_array_size(c->task_configs) > 0;
}

/* Notes the generation of an exactly-once source's task configs with the
 * fencing, which holds their tasks until the previous tasks' producers are
 * fenced; view is the store's (tb_store_fencing_get), or NULL to read it.
 * Call with the lock held. */
static void note_generation(tb_herder_t *herder, const tb_known_connector_t *c,
                            const tb_store_fencing_t *view)
{
    if (!fenced_source(herder, c)) {
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

/* Brings c's instance and tasks to its target state, as the assignor
 * assigns them: a stopped connector has had its tasks detached; others get
 * a task for every task config assigned here. Call with the lock held. */
static void apply_target(tb_herder_t *herder, tb_known_connector_t *c)
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
    note_generation(herder, c, NULL);
    if (c->target != TB_TARGET_STOPPED) {
        tb_worker_apply(herder->worker, c, assignment);
    }
    if (tb_assignor_runs(assignment, workers[0], c->name, TB_ASSIGNOR_CONNECTOR)) {
        record_connector_state(herder, c,
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
        if (herder->options.distributed || settle_task_configs(herder, c) == 0) {
            apply_target(herder, c);
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

tb_herder_t *tb_herder_create(const tb_herder_options_t *options, char *errstr,
                              size_t errstr_size)
{
    tb_herder_t *herder = calloc(1, sizeof(*herder));
    herder->options = *options;
    herder->options.kafka_props = herder->options.override_allowlist = NULL;
    herder->options.converter_config = NULL;
    herder->options.worker_id = NULL;
    pthread_mutex_init(&herder->lock, NULL);
    pthread_cond_init(&herder->idle, NULL);
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
    herder->checks = (tb_connector_checks_t){
        .client = tb_worker_client(herder->worker),
        .secret_policy = &herder->options.secret_policy,
        .limits = &herder->options.limits,
        .exactly_once_source = options->exactly_once_source,
        .exactly_once_available = tb_worker_exactly_once_available(herder->worker),
    };
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
    json_t *errors = tb_connector_validate_errors(&herder->checks, plugin, config);
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
    if (tb_connector_secrets_externalize(herder->options.store_path, name, plugin, stored,
                                         msg, msg_size) != 0) {
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
    c = tb_config_state_put(herder->config_state, name, stored, plugin, target, fresh,
                            msg, msg_size);
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
        stop_unlocked(herder, replaced, count);
    }
    apply_target(herder, c);
    if (failure[0] != '\0') {
        record_connector_state(herder, c, TB_STATE_FAILED, failure);
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
    tb_known_connector_t *c = claim(herder, name);
    tb_err_t err;
    if (c != NULL && !replace) {
        err = fail(TB_ERR_CONFLICT, msg, msg_size, "Connector %s already exists", name);
    } else {
        *created = c == NULL;
        err = put_config(herder, name, c, config, initial_state, out, msg, msg_size);
    }
    release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_connector_patch(tb_herder_t *herder, const char *name,
                                   const json_t *patch, json_t **out, char *msg,
                                   size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c = claim(herder, name);
    tb_err_t err;
    if (c == NULL) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found", name);
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
    release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

/* Finds connector name and returns it with the lock held; or returns NULL,
 * unlocked, with msg set from not_found (a format taking the name). */
static tb_known_connector_t *lock_connector(tb_herder_t *herder, const char *name,
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

tb_err_t tb_herder_connector_info(tb_herder_t *herder, const char *name, json_t **out,
                                  char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
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
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = tb_connector_config_redact(c->plugin, c->config);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

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

/* {"id","state","worker_id","trace"?} of task i of c: this worker's own
 * when the task runs here, else (distributed) what its worker recorded in
 * stored. */
static json_t *task_state_of(const tb_herder_t *herder, const tb_known_connector_t *c,
                             size_t i, bool restarting, const json_t *stored)
{
    char *trace = NULL;
    tb_state_t state = tb_worker_task_state(herder->worker, c->name, (int)i, &trace);
    json_t *out = json_pack("{s:i, s:s, s:s}", "id", (int)i, "state",
                            tb_state_name(restarting ? TB_STATE_RESTARTING : state),
                            "worker_id", tb_worker_id(herder->worker));
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

/* ConnectorStateInfo; restarting_tasks[i] (when given) and
 * restarting_connector mark instances shown as RESTARTING. Call with the
 * lock held. */
static json_t *status_of(const tb_herder_t *herder, const tb_known_connector_t *c,
                         const bool *restarting_tasks, bool restarting_connector)
{
    const char *trace;
    char errstr[256];
    tb_state_t state = tb_worker_connector_state(herder->worker, c->name, &trace);
    json_t *stored =
        herder->options.distributed
            ? tb_store_status_get(herder->store, c->name, errstr, sizeof(errstr))
            : NULL;
    json_t *connector =
        json_pack("{s:s, s:s}", "state",
                  tb_state_name(restarting_connector ? TB_STATE_RESTARTING : state),
                  "worker_id", tb_worker_id(herder->worker));
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
    tb_known_connector_t *c =
        lock_connector(herder, name, "No status found for connector %s", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = status_of(herder, c, NULL, false);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_task_status(tb_herder_t *herder, const char *name, int task,
                               json_t **out, char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        lock_connector(herder, name, "No status found for task %s", msg, msg_size);
    if (c == NULL) {
        snprintf(msg, msg_size, "No status found for task %s-%d", name, task);
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = TB_OK;
    if (task < 0 || (size_t)task >= json_array_size(c->task_configs)) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "No status found for task %s-%d",
                   name, task);
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
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
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
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
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
        record_connector_state(herder, c,
                               state == TB_STATE_FAILED ? TB_STATE_RUNNING : state, NULL);
        if (settle_task_configs(herder, c) == 0) {
            apply_target(herder, c);
        }
    }
    for (size_t i = 0; i < slots; i++) {
        if (restart_tasks[i]) {
            tb_worker_task_restart(herder->worker, c->name, (int)i);
        }
    }
}

/* Restarts what this worker runs of c, per the flags. Call with c
 * claimed. */
static void restart_here(tb_herder_t *herder, tb_known_connector_t *c, bool include_tasks,
                         bool only_failed)
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
    tb_known_connector_t *c = claim(herder, name);
    tb_err_t err = TB_OK;
    *out = NULL;
    if (c == NULL) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "Unknown connector: %s", name);
    } else if (herder->options.distributed) {
        /* as Connect's leader: the plan from the cluster's statuses, and a
         * request every worker carries out on what it runs (tb_herder_refresh) */
        char errstr[512];
        json_t *status = status_of(herder, c, NULL, false);
        mark_restarting(status, include_tasks, only_failed);
        if (tb_store_restart_request(herder->store, name, include_tasks, only_failed,
                                     errstr, sizeof(errstr)) != 0) {
            err = fail(TB_ERR_INTERNAL, msg, msg_size, "%s", errstr);
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
                   ? status_of(herder, c, restart_tasks, restart_connector)
                   : NULL;
        restart_planned(herder, c, restart_connector, restart_tasks, slots);
        free(restart_tasks);
    }
    release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_task_restart(tb_herder_t *herder, const char *name, int task,
                                char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        lock_connector(herder, name, "Unknown connector: %s", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = TB_OK;
    if (!tb_worker_task_restart(herder->worker, name, task)) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "Task %s-%d not found", name, task);
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, task, "restart requested");
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_target_state_set(tb_herder_t *herder, const char *name,
                                    tb_target_state_t target, char *msg, size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c = claim(herder, name);
    if (c == NULL) {
        release(herder, name);
        pthread_mutex_unlock(&herder->lock);
        return fail(TB_ERR_NOT_FOUND, msg, msg_size, "Unknown connector %s", name);
    }
    tb_err_t err = TB_OK;
    char failure[1200];
    json_t *task_configs = tb_task_configs_for(c, target, failure, sizeof(failure));
    if (c->target == target) {
        /* nothing to change */
    } else if (tb_config_state_put(herder->config_state, name, c->config, c->plugin,
                                   target, task_configs, msg, msg_size) == NULL) {
        err = TB_ERR_INTERNAL;
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "target state %s",
                    tb_target_state_name(target));
        size_t count;
        tb_task_t **stopped = tb_worker_detach_tasks(
            herder->worker, name, json_array_size(task_configs), &count);
        stop_unlocked(herder, stopped, count);
        apply_target(herder, c);
        if (failure[0] != '\0') {
            record_connector_state(herder, c, TB_STATE_FAILED, failure);
        }
    }
    json_decref(task_configs);
    release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_connector_delete(tb_herder_t *herder, const char *name, char *msg,
                                    size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c = claim(herder, name);
    tb_err_t err = TB_OK;
    if (c == NULL) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found", name);
    } else if (tb_config_state_remove(herder->config_state, name, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else {
        /* gone from reads at once; a connector re-created under its name
         * waits in claim() until its tasks have stopped */
        size_t count;
        tb_task_t **stopped = tb_worker_detach_tasks(herder->worker, name, 0, &count);
        stop_unlocked(herder, stopped, count);
        tb_worker_connector_forget(herder->worker, name);
        tb_connector_secrets_forget(herder->options.store_path, name);
        TB_LOG(TB_LOG_INFO, "tributary.herder", "connector %s deleted", name);
    }
    release(herder, name);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_offsets_get(tb_herder_t *herder, const char *name, json_t **out,
                               char *msg, size_t msg_size)
{
    tb_known_connector_t *c =
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = tb_offsets_get(herder->store, name, out, msg, msg_size);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_offsets_alter(tb_herder_t *herder, const char *name,
                                 const json_t *offsets, json_t **out, char *msg,
                                 size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    tb_known_connector_t *c = claim(herder, name);
    bool tasks_running = c != NULL && tb_worker_runs_tasks(herder->worker, name);
    pthread_mutex_unlock(&herder->lock);
    /* without the lock, since the admin calls to the group may take long */
    tb_err_t err =
        c == NULL ? fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found", name)
                  : tb_offsets_alter(&herder->offsets, c, tasks_running, offsets, out,
                                     msg, msg_size);
    pthread_mutex_lock(&herder->lock);
    release(herder, name);
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

/* -------------------------------------------------------------------------
 * Distributed mode
 */

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
    stop_unlocked(herder, lost, lost_count);
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        if (json_object_get(herder->claims, c->name) == NULL) {
            apply_target(herder, c);
        }
    }
    pthread_mutex_unlock(&herder->lock);
}

/* Brings connector name to what the store now says another worker wrote.
 * Call with the lock held. */
static int refresh_one(tb_herder_t *herder, const char *name, char *errstr,
                       size_t errstr_size)
{
    tb_known_connector_t *c = claim(herder, name);
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
        stop_unlocked(herder, stopped, count);
        if (c != NULL) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1,
                        "changed by another worker: %s with %zu task(s)",
                        tb_target_state_name(c->target),
                        json_array_size(c->task_configs));
            apply_target(herder, c);
        } else {
            tb_worker_connector_forget(herder->worker, name);
            TB_LOG(TB_LOG_INFO, "tributary.herder",
                   "connector %s deleted by another worker", name);
        }
    }
    json_decref(old.config);
    json_decref(old.task_configs);
    release(herder, name);
    return rc;
}

void tb_herder_fencing_tick(tb_herder_t *herder, bool leader)
{
    /* the store's views are read without the lock (a store write in flight
     * holds the store's lock for as long as Kafka takes to acknowledge it),
     * after the generations they are noted for: a view is as new as its
     * generation's task configs, or newer */
    json_t *names = json_object(); /* name -> the generation seen */
    pthread_mutex_lock(&herder->lock);
    for (tb_known_connector_t *c = tb_config_state_first(herder->config_state); c != NULL;
         c = c->next) {
        if (fenced_source(herder, c)) {
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
            note_generation(herder, c, &views[i]);
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
        tb_known_connector_t *c = claim(herder, connector);
        if (c != NULL) {
            restart_here(herder, c,
                         json_is_true(json_object_get(restart, "include_tasks")),
                         json_is_true(json_object_get(restart, "only_failed")));
        }
        release(herder, connector);
    }
    pthread_mutex_unlock(&herder->lock);
    json_decref(restarts);
    json_decref(changed);
    return rc;
}
