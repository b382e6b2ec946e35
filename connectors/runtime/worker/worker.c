#include "connectors/runtime/worker/tb_worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_kafka_cluster.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "connectors/runtime/metrics/tb_task_metrics.h"
#include "core/tb_log.h"
#include "core/tb_pool.h"
#include "core/tb_secret_seal.h"
#include "core/tb_time.h"

/* A connector's instance on this worker, and its tasks. */
typedef struct instance {
    char *name;
    tb_state_t state;
    char *trace; /* why it FAILED, or NULL */
    tb_state_metrics_t state_metrics;
    tb_task_t **tasks; /* by task number; NULL: not run here */
    size_t task_count; /* slots in tasks */
    struct instance *next;
} instance_t;

struct tb_worker {
    tb_worker_options_t options; /* its JSON and strings are the copies below */
    char *worker_id;
    char *eos_prefix; /* options.eos's strings */
    char *eos_offsets_topic;
    json_t *kafka_props; /* the worker's client keys, with the bootstrap tasks use */
    json_t *allowlist;
    tb_client_settings_t client; /* borrows kafka_props and allowlist */
    json_t *converter_config;
    tb_store_t *store;
    tb_status_writer_t *status; /* writes the states below to store */
    tb_kafka_cluster_t *cluster;
    tb_pool_t *pool;
    tb_fencing_t *fencing; /* of exactly-once sources' task generations */
    instance_t *instances;
    pthread_mutex_t topics_lock;
    json_t *topics; /* connector -> {topic: true}, since the last reset */
    /* Liveness: a pool job beats every HEARTBEAT_MS. */
    tb_pool_job_t *heartbeat;
    atomic_llong last_beat_ms;
};

#define HEARTBEAT_MS 1000

static int64_t beat(void *opaque)
{
    tb_worker_t *worker = opaque;
    atomic_store(&worker->last_beat_ms, tb_monotonic_ms());
    return HEARTBEAT_MS;
}

/* -------------------------------------------------------------------------
 * The worker's link to Kafka
 */

/* The worker's client keys for every client, checked at start (errors
 * name the worker key); the ones without effect are logged. */
static void check_worker_clients(const tb_worker_t *worker, json_t *errors)
{
    json_t *empty = json_object();
    for (int r = TB_CLIENT_PRODUCER; r <= TB_CLIENT_CONSUMER; r++) {
        json_decref(
            tb_client_props(&worker->client, (tb_client_role_t)r, empty, false, errors));
    }
    json_decref(empty);
    const char *key;
    json_t *value;
    json_object_foreach (worker->kafka_props, key, value) {
        const char *ignored = tb_java_client_key_ignored(key, json_string_value(value));
        if (ignored != NULL) {
            TB_LOG(TB_LOG_INFO, "tributary.config",
                   "worker key '%s' is accepted and has no effect: %s", key, ignored);
        }
    }
}

/* Dev mode's consumers get a short session, unless the worker sets one:
 * the mock cluster lets a member into a group only once the session of the
 * group's last members passed (even those that left), which a stopped
 * sink's offsets change and its resume wait for. 6 s is the shortest a
 * real broker allows (group.min.session.timeout.ms). */
static void dev_consumer_session(json_t *kafka_props)
{
    if (json_object_get(kafka_props, "consumer.session.timeout.ms") == NULL &&
        json_object_get(kafka_props, "consumer.heartbeat.interval.ms") == NULL) {
        json_object_set_new(kafka_props, "consumer.session.timeout.ms",
                            json_string("6000"));
        json_object_set_new(kafka_props, "consumer.heartbeat.interval.ms",
                            json_string("2000"));
    }
}

/* Connects the worker's own client (its admin properties, secrets
 * resolved) and keeps the settings every connector's clients start from,
 * with the bootstrap servers tasks must use (the mock cluster's in dev
 * mode). */
static int connect_cluster(tb_worker_t *worker, char *errstr, size_t errstr_size)
{
    const tb_worker_options_t *options = &worker->options;
    json_t *errors = json_object();
    worker->kafka_props = json_deep_copy(options->kafka_props);
    worker->allowlist = json_deep_copy(options->override_allowlist);
    worker->client = tb_worker_client_settings(options);
    worker->client.worker_props = worker->kafka_props;
    worker->client.allowlist = worker->allowlist;
    worker->options.kafka_props = worker->options.override_allowlist = NULL;
    check_worker_clients(worker, errors);
    json_t *empty = json_object();
    json_t *admin =
        tb_client_props(&worker->client, TB_CLIENT_ADMIN, empty, true, errors);
    json_decref(empty);
    if (admin == NULL || tb_config_error_count(errors) > 0) {
        json_decref(admin);
        tb_config_errors_join(errors, "\n", errstr, errstr_size);
        json_decref(errors);
        return -1;
    }
    worker->cluster = tb_kafka_cluster_create(admin, options->dev, errstr, errstr_size);
    json_decref(admin);
    json_decref(errors);
    if (worker->cluster == NULL) {
        return -1;
    }
    json_object_set_new(worker->kafka_props, "bootstrap.servers",
                        json_string(tb_kafka_cluster_bootstrap(worker->cluster)));
    if (options->dev) {
        dev_consumer_session(worker->kafka_props);
    }
    return 0;
}

tb_client_settings_t tb_worker_client_settings(const tb_worker_options_t *options)
{
    return (tb_client_settings_t){
        .worker_props = options->kafka_props,
        .overrides_allowed = options->overrides_allowed,
        .allowlist = options->override_allowlist,
        .literal_secrets = options->literal_secrets,
        .literal_unsealable = options->distributed && !tb_secret_seal_key_present(),
        .downgrade_allowed = options->downgrade_allowed,
        .producers_shared = options->producers_shared,
    };
}

bool tb_worker_options_exactly_once(const tb_worker_options_t *options)
{
    return options->exactly_once_source && !options->dev;
}

tb_worker_t *tb_worker_create(const tb_worker_options_t *options, tb_store_t *store,
                              char *errstr, size_t errstr_size)
{
    tb_worker_t *worker = calloc(1, sizeof(*worker));
    worker->options = *options;
    worker->worker_id = strdup(options->worker_id);
    worker->eos_prefix = strdup(options->eos.transactional_id_prefix != NULL
                                    ? options->eos.transactional_id_prefix
                                    : "connect");
    worker->eos_offsets_topic = strdup(
        options->eos.offsets_topic.name != NULL ? options->eos.offsets_topic.name : "");
    worker->options.eos.transactional_id_prefix = worker->eos_prefix;
    worker->options.eos.offsets_topic.name = worker->eos_offsets_topic;
    worker->options.worker_id = worker->worker_id;
    worker->options.store_path = NULL;
    worker->store = store;
    pthread_mutex_init(&worker->topics_lock, NULL);
    worker->topics = json_object();
    worker->status = tb_status_writer_create(store);
    if (worker->status == NULL) {
        snprintf(errstr, errstr_size, "cannot start the status writer's thread");
        goto fail;
    }
    if (connect_cluster(worker, errstr, errstr_size) != 0) {
        goto fail;
    }
    worker->converter_config = json_deep_copy(options->converter_config);
    worker->options.converter_config = NULL;
    worker->pool = tb_pool_create(options->task_threads);
    if (worker->pool == NULL) {
        snprintf(errstr, errstr_size, "cannot start %d task threads",
                 options->task_threads);
        goto fail;
    }
    worker->fencing =
        tb_fencing_create(worker->pool, store, &worker->client, worker->eos_prefix);
    atomic_store(&worker->last_beat_ms, tb_monotonic_ms());
    worker->heartbeat = tb_pool_job_create(worker->pool, beat, worker);
    tb_pool_job_wake(worker->heartbeat);
    return worker;

fail:
    tb_worker_destroy(worker);
    return NULL;
}

static void instance_free(instance_t *inst)
{
    tb_worker_stop_tasks(inst->tasks, inst->task_count);
    tb_state_metrics_release(&inst->state_metrics);
    free(inst->trace);
    free(inst->name);
    free(inst);
}

void tb_worker_destroy(tb_worker_t *worker)
{
    if (worker == NULL) {
        return;
    }
    /* every connector's tasks at once, as one stop */
    size_t total = 0;
    for (const instance_t *inst = worker->instances; inst != NULL; inst = inst->next) {
        total += inst->task_count;
    }
    tb_task_t **all = calloc(total + 1, sizeof(*all));
    size_t count = 0;
    for (instance_t *inst = worker->instances; inst != NULL && all != NULL;
         inst = inst->next) {
        for (size_t i = 0; i < inst->task_count; i++) {
            if (inst->tasks[i] != NULL) {
                all[count++] = inst->tasks[i];
                inst->tasks[i] = NULL;
            }
        }
    }
    tb_worker_stop_tasks(all, count);
    while (worker->instances != NULL) {
        instance_t *inst = worker->instances;
        worker->instances = inst->next;
        instance_free(inst);
    }
    tb_pool_job_destroy(worker->heartbeat);
    tb_fencing_destroy(worker->fencing);
    tb_pool_destroy(worker->pool);
    tb_status_writer_destroy(worker->status); /* after the tasks' last changes */
    tb_kafka_cluster_destroy(worker->cluster);
    json_decref(worker->kafka_props);
    json_decref(worker->allowlist);
    json_decref(worker->converter_config);
    pthread_mutex_destroy(&worker->topics_lock);
    json_decref(worker->topics);
    free(worker->worker_id);
    free(worker->eos_prefix);
    free(worker->eos_offsets_topic);
    free(worker);
}

const char *tb_worker_id(const tb_worker_t *worker)
{
    return worker->worker_id;
}

tb_fencing_t *tb_worker_fencing(const tb_worker_t *worker)
{
    return worker->fencing;
}

const tb_client_settings_t *tb_worker_client(const tb_worker_t *worker)
{
    return &worker->client;
}

bool tb_worker_exactly_once_available(const tb_worker_t *worker)
{
    return tb_worker_options_exactly_once(&worker->options);
}

bool tb_worker_cluster_id(const tb_worker_t *worker, char *buf, size_t size)
{
    return tb_kafka_cluster_id(worker->cluster, buf, size);
}

const char *tb_worker_bootstrap(const tb_worker_t *worker)
{
    return tb_kafka_cluster_bootstrap(worker->cluster);
}

int64_t tb_worker_pool_silence_ms(tb_worker_t *worker)
{
    return tb_monotonic_ms() - atomic_load(&worker->last_beat_ms);
}

/* -------------------------------------------------------------------------
 * Connector instances and their tasks
 */

static instance_t *find_instance(const tb_worker_t *worker, const char *name)
{
    for (instance_t *inst = worker->instances; inst != NULL; inst = inst->next) {
        if (strcmp(inst->name, name) == 0) {
            return inst;
        }
    }
    return NULL;
}

/* Connector name's instance, made UNASSIGNED at its first use. */
static instance_t *instance_of(tb_worker_t *worker, const char *name)
{
    instance_t *inst = find_instance(worker, name);
    if (inst == NULL) {
        inst = calloc(1, sizeof(*inst));
        inst->name = strdup(name);
        inst->state = TB_STATE_UNASSIGNED;
        tb_state_metrics_take(&inst->state_metrics, name, -1);
        inst->next = worker->instances;
        worker->instances = inst;
    }
    return inst;
}

/* Task task of connector name, or NULL when it does not run here. */
static tb_task_t *task_of(const tb_worker_t *worker, const char *name, int task)
{
    const instance_t *inst = find_instance(worker, name);
    if (inst == NULL || task < 0 || (size_t)task >= inst->task_count) {
        return NULL;
    }
    return inst->tasks[task];
}

void tb_worker_connector_state_set(tb_worker_t *worker, const char *name,
                                   tb_state_t state, const char *trace)
{
    instance_t *inst = instance_of(worker, name);
    inst->state = state;
    free(inst->trace);
    inst->trace = trace != NULL ? strdup(trace) : NULL;
    tb_state_metrics_set(&inst->state_metrics, state, 0);
    tb_status_writer_put(worker->status, name, -1, state, trace);
}

tb_state_t tb_worker_connector_state(tb_worker_t *worker, const char *name,
                                     const char **trace)
{
    const instance_t *inst = find_instance(worker, name);
    *trace = inst != NULL ? inst->trace : NULL;
    return inst != NULL ? inst->state : TB_STATE_UNASSIGNED;
}

/* tb_task_options_t's topic_used: from task threads. */
static void topic_used(void *opaque, const char *connector, const char *topic)
{
    tb_worker_t *worker = opaque;
    pthread_mutex_lock(&worker->topics_lock);
    json_t *topics = json_object_get(worker->topics, connector);
    if (topics == NULL) {
        topics = json_object();
        json_object_set_new(worker->topics, connector, topics);
    }
    json_object_set_new(topics, topic, json_true());
    pthread_mutex_unlock(&worker->topics_lock);
}

/* Starts task i of c. */
static tb_task_t *start_task(tb_worker_t *worker, const tb_known_connector_t *c, size_t i)
{
    tb_task_options_t options = {
        .connector = c->name,
        .id = (int)i,
        .plugin = c->plugin,
        .config = json_array_get(c->task_configs, i),
        .task_count = (int)json_array_size(c->task_configs),
        .connector_config = c->config,
        .client = &worker->client,
        .limits = &worker->options.limits,
        .worker_config = worker->converter_config,
        .exactly_once_available = tb_worker_exactly_once_available(worker),
        .eos = &worker->options.eos,
        .fencing = worker->fencing,
        .task_generation = c->task_generation,
        .cluster_creates_topics = !worker->options.dev,
        .target = c->target,
        .pool = worker->pool,
        .store = worker->store,
        .status = worker->status,
        .offset_flush_interval_ms = worker->options.offset_flush_interval_ms,
        .shutdown_timeout_ms = worker->options.shutdown_timeout_ms,
        .restart_backoff_initial_ms = worker->options.restart_backoff_initial_ms,
        .restart_backoff_max_ms = worker->options.restart_backoff_max_ms,
        .topic_used = topic_used,
        .topic_opaque = worker,
    };
    return tb_task_create(&options);
}

void tb_worker_apply(tb_worker_t *worker, const tb_known_connector_t *c,
                     const tb_assignment_t *assignment)
{
    instance_t *inst = instance_of(worker, c->name);
    tb_connect_info_set(&inst->state_metrics.connect, c->plugin->class_name,
                        c->plugin->kind == TB_PLUGIN_SINK ? "sink" : "source",
                        c->plugin->version != NULL ? c->plugin->version : "");
    for (size_t i = 0; i < inst->task_count; i++) {
        if (inst->tasks[i] != NULL) {
            tb_task_set_target(inst->tasks[i], c->target);
        }
    }
    size_t n = json_array_size(c->task_configs);
    if (n > inst->task_count) {
        tb_task_t **tasks = realloc(inst->tasks, n * sizeof(*tasks));
        if (tasks == NULL) {
            return;
        }
        memset(tasks + inst->task_count, 0, (n - inst->task_count) * sizeof(*tasks));
        inst->tasks = tasks;
        if (inst->task_count == 0 && tb_connector_config_reload_unwatched(c->config)) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1,
                        "config.action.reload=restart: tributary does not watch the "
                        "secrets this connector references; a reload of the worker "
                        "(SIGHUP or POST /admin/reload) restarts the tasks whose "
                        "secrets changed");
        }
        inst->task_count = n;
    }
    for (size_t i = 0; i < n; i++) {
        if (inst->tasks[i] == NULL &&
            tb_assignor_runs(assignment, worker->worker_id, c->name, (int)i)) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, (int)i,
                        "starting on this worker");
            inst->tasks[i] = start_task(worker, c, i);
        }
    }
}

void tb_worker_secrets_reload(tb_worker_t *worker, const char *name, json_t *restarted)
{
    const instance_t *inst = find_instance(worker, name);
    for (size_t i = 0; inst != NULL && i < inst->task_count; i++) {
        char errstr[512];
        int changed =
            inst->tasks[i] != NULL
                ? tb_task_secrets_changed(inst->tasks[i], errstr, sizeof(errstr))
                : 0;
        if (changed < 0) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", name, (int)i,
                        "reload: %s; the task keeps running with the secrets it has",
                        errstr);
        } else if (changed > 0) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, (int)i,
                        "restarting: a secret it references changed "
                        "(config.action.reload=restart)");
            tb_task_restart(inst->tasks[i]);
            json_array_append_new(restarted, json_sprintf("%s-%zu", name, i));
        }
    }
}

size_t tb_worker_task_slots(tb_worker_t *worker, const char *name)
{
    const instance_t *inst = find_instance(worker, name);
    return inst != NULL ? inst->task_count : 0;
}

bool tb_worker_runs_tasks(tb_worker_t *worker, const char *name)
{
    size_t slots = tb_worker_task_slots(worker, name);
    for (size_t i = 0; i < slots; i++) {
        if (task_of(worker, name, (int)i) != NULL) {
            return true;
        }
    }
    return false;
}

tb_state_t tb_worker_task_state(tb_worker_t *worker, const char *name, int task,
                                char **trace)
{
    tb_task_t *t = task_of(worker, name, task);
    *trace = NULL;
    return t != NULL ? tb_task_state(t, trace) : TB_STATE_UNASSIGNED;
}

int tb_worker_task_restarts(tb_worker_t *worker, const char *name, int task)
{
    tb_task_t *t = task_of(worker, name, task);
    return t != NULL ? tb_task_restarts(t) : 0;
}

bool tb_worker_task_restart(tb_worker_t *worker, const char *name, int task)
{
    tb_task_t *t = task_of(worker, name, task);
    if (t != NULL) {
        tb_task_restart(t);
    }
    return t != NULL;
}

/* The keys of config that the runtime reads for every task (all but the
 * plugin's own). New reference. */
static json_t *framework_keys(const tb_plugin_t *plugin, const json_t *config)
{
    json_t *copy = json_deep_copy(config);
    for (size_t i = 0; i < plugin->config->count; i++) {
        json_object_del(copy, plugin->config->defs[i].name);
    }
    return copy;
}

size_t tb_worker_tasks_kept(tb_worker_t *worker, const tb_known_connector_t *c,
                            const tb_plugin_t *plugin, const json_t *config,
                            const json_t *fresh)
{
    size_t running = tb_worker_task_slots(worker, c->name);
    json_t *old_framework = framework_keys(c->plugin, c->config);
    json_t *new_framework = framework_keys(plugin, config);
    bool same_framework = plugin == c->plugin && json_equal(old_framework, new_framework);
    /* an exactly-once source's new task configs fence every old producer,
     * a kept task's too: its tasks all start again */
    bool fenced = plugin->kind == TB_PLUGIN_SOURCE &&
                  tb_worker_exactly_once_available(worker) &&
                  !json_equal((json_t *)fresh, c->task_configs);
    size_t keep = 0;
    while (
        same_framework && !fenced && c->target == TB_TARGET_STARTED && keep < running &&
        keep < json_array_size(fresh) &&
        json_equal(json_array_get(fresh, keep), json_array_get(c->task_configs, keep))) {
        keep++;
    }
    json_decref(old_framework);
    json_decref(new_framework);
    return keep;
}

tb_task_t **tb_worker_detach_tasks(tb_worker_t *worker, const char *name, size_t keep,
                                   size_t *count)
{
    instance_t *inst = find_instance(worker, name);
    size_t slots = inst != NULL ? inst->task_count : 0;
    *count = slots > keep ? slots - keep : 0;
    tb_task_t **tasks = calloc(*count + 1, sizeof(*tasks));
    for (size_t i = 0; i < *count; i++) {
        tasks[i] = inst->tasks[keep + i];
    }
    if (inst != NULL) {
        inst->task_count -= *count;
    }
    return tasks;
}

tb_task_t **tb_worker_detach_unassigned(tb_worker_t *worker, const char *name,
                                        const tb_assignment_t *assignment, size_t *count)
{
    instance_t *inst = find_instance(worker, name);
    size_t slots = inst != NULL ? inst->task_count : 0;
    tb_task_t **tasks = calloc(slots + 1, sizeof(*tasks));
    *count = 0;
    for (size_t i = 0; i < slots; i++) {
        if (inst->tasks[i] != NULL &&
            !tb_assignor_runs(assignment, worker->worker_id, name, (int)i)) {
            tasks[(*count)++] = inst->tasks[i];
            inst->tasks[i] = NULL;
        }
    }
    return tasks;
}

/* The tasks one tb_worker_stop_tasks stops, shared by its threads. */
typedef struct {
    tb_task_t **tasks;
    size_t count;
    atomic_size_t next; /* the next task a thread takes */
} stopping_t;

static void *stop_thread(void *opaque)
{
    stopping_t *s = opaque;
    for (size_t i = atomic_fetch_add(&s->next, 1); i < s->count;
         i = atomic_fetch_add(&s->next, 1)) {
        tb_task_destroy(s->tasks[i]);
    }
    return NULL;
}

void tb_worker_stop_tasks(tb_task_t **tasks, size_t count)
{
    pthread_t threads[TB_WORKER_STOP_THREADS];
    size_t live = 0; /* the tasks first: a connector's free slots are NULL */
    for (size_t i = 0; i < count; i++) {
        if (tasks[i] != NULL) {
            tasks[live++] = tasks[i];
        }
    }
    count = live;
    stopping_t s = {.tasks = tasks, .count = count};
    atomic_init(&s.next, 0);
    size_t started = 0;
    /* the calling thread stops tasks too: with no thread to spare, all */
    while (started + 1 < count && started < TB_WORKER_STOP_THREADS &&
           pthread_create(&threads[started], NULL, stop_thread, &s) == 0) {
        started++;
    }
    stop_thread(&s);
    for (size_t i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    free(tasks);
}

void tb_worker_connector_forget(tb_worker_t *worker, const char *name)
{
    for (instance_t **link = &worker->instances; *link != NULL; link = &(*link)->next) {
        if (strcmp((*link)->name, name) == 0) {
            instance_t *inst = *link;
            *link = inst->next;
            instance_free(inst);
            break;
        }
    }
    tb_status_writer_forget(worker->status, name);
    tb_worker_topics_forget(worker, name);
}

/* -------------------------------------------------------------------------
 * Topic tracking
 */

json_t *tb_worker_topics(tb_worker_t *worker, const char *name)
{
    json_t *topics = json_array();
    const char *topic;
    json_t *value;
    pthread_mutex_lock(&worker->topics_lock);
    json_object_foreach (json_object_get(worker->topics, name), topic, value) {
        json_array_append_new(topics, json_string(topic));
    }
    pthread_mutex_unlock(&worker->topics_lock);
    return topics;
}

void tb_worker_topics_forget(tb_worker_t *worker, const char *name)
{
    pthread_mutex_lock(&worker->topics_lock);
    json_object_del(worker->topics, name);
    pthread_mutex_unlock(&worker->topics_lock);
}
