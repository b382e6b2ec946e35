#include "connectors/runtime/tb_herder.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_group_offsets.h"
#include "connectors/kafka/tb_kafka_cluster.h"
#include "connectors/kafka/tb_progress_marker.h"
#include "connectors/runtime/tb_connector_config.h"
#include "connectors/runtime/tb_plugin.h"
#include "connectors/runtime/tb_pool.h"
#include "connectors/runtime/tb_task.h"
#include "connectors/runtime/tb_task_metrics.h"
#include "core/tb_log.h"
#include "core/tb_props.h"
#include "core/tb_secret.h"
#include "core/tb_time.h"
#include "store/tb_store.h"

typedef struct connector {
    char *name;
    json_t *config; /* as given: an object of strings */
    const tb_plugin_t *plugin;
    tb_target_state_t target;
    tb_state_t state;     /* of the connector instance */
    char *trace;          /* why it FAILED, or NULL */
    json_t *task_configs; /* array of objects */
    tb_state_metrics_t state_metrics;
    tb_task_t **tasks;
    size_t task_count;
    /* An operation claimed it (claim()): only that operation changes it,
     * under the lock, and may read it without the lock. */
    bool busy;
    bool deleted; /* being deleted: hidden from every lookup but claim() */
    struct connector *next;
} connector_t;

struct tb_herder {
    tb_herder_options_t options;
    char *worker_id;
    json_t *kafka_props; /* the worker's client keys, with the bootstrap tasks use */
    json_t *allowlist;
    tb_client_settings_t client; /* borrows kafka_props and allowlist */
    json_t *converter_config;
    tb_store_t *store;
    tb_kafka_cluster_t *cluster;
    tb_pool_t *pool;
    /* Guards the connector list and every connector. It is never held
     * through slow work (stopping tasks, Kafka admin calls): an operation
     * that writes a connector claims it (its busy flag) and does that work
     * with the lock released, so reads and other connectors go on while
     * operations on the same connector wait for it, in turn (idle). */
    pthread_mutex_t lock;
    pthread_cond_t idle; /* broadcast when a connector is released */
    connector_t *connectors;
    /* Topic tracking has a lock of its own: tasks report topics from their
     * threads while the herder, holding its lock, may wait for them. */
    pthread_mutex_t topics_lock;
    json_t *topics; /* connector -> {topic: true}, since the last reset */
    /* Liveness: a pool job beats every HEARTBEAT_MS; /health reports the
     * worker unhealthy when the pool stops running it. */
    tb_pool_job_t *heartbeat;
    atomic_llong last_beat_ms;
};

#define HEARTBEAT_MS 1000
#define HEARTBEAT_STALE_MS 15000

static int64_t beat(void *opaque)
{
    tb_herder_t *herder = opaque;
    atomic_store(&herder->last_beat_ms, tb_monotonic_ms());
    return HEARTBEAT_MS;
}

__attribute__((format(printf, 4, 5))) static tb_err_t
fail(tb_err_t err, char *msg, size_t msg_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msg_size, fmt, ap);
    va_end(ap);
    return err;
}

/* Connector name, deleted or not. Call with the lock held. */
static connector_t *find_entry(tb_herder_t *herder, const char *name)
{
    for (connector_t *c = herder->connectors; c != NULL; c = c->next) {
        if (strcmp(c->name, name) == 0) {
            return c;
        }
    }
    return NULL;
}

/* Connector name as reads see it: NULL once its deletion began. */
static connector_t *find(tb_herder_t *herder, const char *name)
{
    connector_t *c = find_entry(herder, name);
    return c != NULL && !c->deleted ? c : NULL;
}

/* Waits until no operation holds connector name, then claims it for the
 * caller: returns it busy, or NULL when there is no such connector (nor a
 * deletion of it under way). Call with the lock held; it stays held. */
static connector_t *claim(tb_herder_t *herder, const char *name)
{
    connector_t *c;
    while ((c = find_entry(herder, name)) != NULL && c->busy) {
        pthread_cond_wait(&herder->idle, &herder->lock);
    }
    if (c != NULL) {
        c->busy = true;
    }
    return c;
}

/* Ends a claim. Call with the lock held. */
static void release(tb_herder_t *herder, connector_t *c)
{
    c->busy = false;
    pthread_cond_broadcast(&herder->idle);
}

static void record_connector_state(tb_herder_t *herder, connector_t *c, tb_state_t state,
                                   const char *trace)
{
    char errstr[256];
    c->state = state;
    free(c->trace);
    c->trace = trace != NULL ? strdup(trace) : NULL;
    tb_state_metrics_set(&c->state_metrics, state, 0);
    if (tb_store_status_put(herder->store, c->name, -1, state, trace, errstr,
                            sizeof(errstr)) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", c->name, -1,
                    "cannot record state %s: %s", tb_state_name(state), errstr);
    }
}

/* Takes c's tasks from number keep on out of c; *count gets how many.
 * Call with the lock held; the caller stops them (stop_unlocked). */
static tb_task_t **detach_tasks(connector_t *c, size_t keep, size_t *count)
{
    *count = c->task_count > keep ? c->task_count - keep : 0;
    tb_task_t **tasks = calloc(*count + 1, sizeof(*tasks));
    for (size_t i = 0; i < *count; i++) {
        tasks[i] = c->tasks[keep + i];
    }
    c->task_count -= *count;
    return tasks;
}

/* Stops and frees detached tasks (each stops gracefully, recording its
 * offsets) with the lock released, then takes it again. */
static void stop_unlocked(tb_herder_t *herder, tb_task_t **tasks, size_t count)
{
    pthread_mutex_unlock(&herder->lock);
    for (size_t i = 0; i < count; i++) {
        tb_task_destroy(tasks[i]);
    }
    free(tasks);
    pthread_mutex_lock(&herder->lock);
}

/* Stops and frees every task of c, in place: at shutdown only, when no
 * request runs any more. */
static void stop_tasks(connector_t *c)
{
    for (size_t i = 0; i < c->task_count; i++) {
        tb_task_destroy(c->tasks[i]);
    }
    free(c->tasks);
    c->tasks = NULL;
    c->task_count = 0;
}

static void topic_used(void *opaque, const char *connector, const char *topic)
{
    tb_herder_t *herder = opaque;
    pthread_mutex_lock(&herder->topics_lock);
    json_t *topics = json_object_get(herder->topics, connector);
    if (topics == NULL) {
        topics = json_object();
        json_object_set_new(herder->topics, connector, topics);
    }
    json_object_set_new(topics, topic, json_true());
    pthread_mutex_unlock(&herder->topics_lock);
}

static void forget_topics(tb_herder_t *herder, const char *connector)
{
    pthread_mutex_lock(&herder->topics_lock);
    json_object_del(herder->topics, connector);
    pthread_mutex_unlock(&herder->topics_lock);
}

/* Whether this worker can run sources in transactions: it has
 * exactly.once.source.support=enabled and a real Kafka cluster (librdkafka's
 * mock cluster stores no transactional offsets, so no progress marker). */
static bool exactly_once_available(const tb_herder_t *herder)
{
    return herder->options.exactly_once_source && !herder->options.dev;
}

/* Starts a task for every task config that has none running. Call with the
 * lock held. */
static void start_tasks(tb_herder_t *herder, connector_t *c)
{
    size_t n = json_array_size(c->task_configs);
    if (n <= c->task_count) {
        return;
    }
    tb_task_t **tasks = realloc(c->tasks, n * sizeof(*tasks));
    if (tasks == NULL) {
        return;
    }
    c->tasks = tasks;
    if (c->task_count == 0 && tb_connector_config_reload_unwatched(c->config)) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1,
                    "config.action.reload=restart: tributary does not watch the "
                    "secrets this connector references; a changed secret takes "
                    "effect when a task starts again (POST /connectors/%s/restart)",
                    c->name);
    }
    for (size_t i = c->task_count; i < n; i++) {
        tb_task_options_t options = {
            .connector = c->name,
            .id = (int)i,
            .plugin = c->plugin,
            .config = json_array_get(c->task_configs, i),
            .connector_config = c->config,
            .client = &herder->client,
            .limits = &herder->options.limits,
            .worker_config = herder->converter_config,
            .exactly_once_available = exactly_once_available(herder),
            .cluster_creates_topics = !herder->options.dev,
            .target = c->target,
            .pool = herder->pool,
            .store = herder->store,
            .offset_flush_interval_ms = herder->options.offset_flush_interval_ms,
            .shutdown_timeout_ms = herder->options.shutdown_timeout_ms,
            .restart_backoff_initial_ms = herder->options.restart_backoff_initial_ms,
            .restart_backoff_max_ms = herder->options.restart_backoff_max_ms,
            .topic_used = topic_used,
            .topic_opaque = herder,
        };
        c->tasks[i] = tb_task_create(&options);
    }
    c->task_count = n;
}

/* The plugin's split of connector name's config into task configs (new
 * reference). When they exceed tasks.max and tasks.max.enforce refuses
 * them there are none, and failure gets Connect's TooManyTasksException
 * trace for the connector's state; else failure is "". */
static json_t *split_into_tasks(const tb_plugin_t *plugin, const char *name,
                                const json_t *config, char *failure, size_t failure_size)
{
    char msg[1024];
    json_t *errors = json_object();
    json_t *values = tb_connector_config_validate(plugin, config, errors);
    json_t *task_configs =
        plugin->task_configs(config, (int)tb_config_int(values, "tasks.max"));
    int rc = tb_connector_config_check_task_count(
        name, values, json_array_size(task_configs), msg, sizeof(msg));
    json_decref(values);
    json_decref(errors);
    failure[0] = '\0';
    if (rc != 0) {
        snprintf(failure, failure_size,
                 "org.apache.kafka.connect.runtime.TooManyTasksException: %s", msg);
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1, "%s", msg);
        json_decref(task_configs);
        return json_array();
    }
    if (msg[0] != '\0') {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", name, -1, "%s", msg);
    }
    return task_configs;
}

/* Writes a connector's whole row, config, target state and task configs in
 * one store transaction, so that a crash leaves it as it was or as it
 * becomes, never a mix. */
static int store_row(tb_herder_t *herder, const char *name, const json_t *config,
                     tb_target_state_t target, const json_t *task_configs, char *msg,
                     size_t msg_size)
{
    tb_store_connector_t row = {name, config, target, task_configs};
    return tb_store_connector_put(herder->store, &row, msg, msg_size);
}

/* The task configs c has in target: none when stopped; as in Connect,
 * generated only for a started connector that has none; else its own. New
 * reference. */
static json_t *task_configs_for(const connector_t *c, tb_target_state_t target,
                                char *failure, size_t failure_size)
{
    failure[0] = '\0';
    if (target == TB_TARGET_STOPPED) {
        return json_array();
    }
    if (target == TB_TARGET_STARTED && json_array_size(c->task_configs) == 0) {
        return split_into_tasks(c->plugin, c->name, c->config, failure, failure_size);
    }
    return json_incref(c->task_configs);
}

/* Gives c the task configs its target state asks for (task_configs_for),
 * in the store and in memory; a connector whose row cannot be written is
 * FAILED. Call with the lock held, c claimed or the herder loading. */
static int settle_task_configs(tb_herder_t *herder, connector_t *c)
{
    char errstr[1200];
    json_t *wanted = task_configs_for(c, c->target, errstr, sizeof(errstr));
    int rc = errstr[0] != '\0' ? -1 : 0;
    if (rc == 0 && !json_equal(wanted, c->task_configs)) {
        rc = store_row(herder, c->name, c->config, c->target, wanted, errstr,
                       sizeof(errstr));
    }
    if (rc == 0) {
        json_decref(c->task_configs);
        c->task_configs = json_incref(wanted);
    } else {
        record_connector_state(herder, c, TB_STATE_FAILED, errstr);
    }
    json_decref(wanted);
    return rc;
}

/* Brings c's instance and tasks to its target state: a stopped connector
 * has had its tasks detached; others get a task for every task config.
 * Call with the lock held. */
static void apply_target(tb_herder_t *herder, connector_t *c)
{
    if (c->target == TB_TARGET_STOPPED) {
        record_connector_state(herder, c, TB_STATE_STOPPED, NULL);
        return;
    }
    for (size_t i = 0; i < c->task_count; i++) {
        tb_task_set_target(c->tasks[i], c->target);
    }
    start_tasks(herder, c);
    record_connector_state(
        herder, c, c->target == TB_TARGET_PAUSED ? TB_STATE_PAUSED : TB_STATE_RUNNING,
        NULL);
}

static connector_t *connector_new(const char *name, const json_t *config,
                                  const tb_plugin_t *plugin, tb_target_state_t target,
                                  const json_t *task_configs)
{
    connector_t *c = calloc(1, sizeof(*c));
    c->name = strdup(name);
    c->config = json_deep_copy(config);
    c->plugin = plugin;
    c->target = target;
    c->state = TB_STATE_UNASSIGNED;
    c->task_configs = task_configs ? json_deep_copy(task_configs) : json_array();
    tb_state_metrics_take(&c->state_metrics, name, -1);
    return c;
}

static void connector_free(connector_t *c)
{
    stop_tasks(c);
    json_decref(c->config);
    json_decref(c->task_configs);
    tb_state_metrics_release(&c->state_metrics);
    free(c->trace);
    free(c->name);
    free(c);
}

/* Dev mode only (a dev worker opens nothing but a dev store): the
 * in-memory cluster starts empty, so a sink's offsets of the last run point
 * past the end of its topics and would stop every partition. */
static void drop_dev_sink_offsets(tb_herder_t *herder, const char *name)
{
    char errstr[256];
    if (tb_store_offsets_delete(herder->store, name, errstr, sizeof(errstr)) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1,
                    "dev mode: the sink's offsets from the last run could not be "
                    "dropped, its partitions may stop: %s",
                    errstr);
        return;
    }
    TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", name, -1,
                "dev mode: the sink's offsets from the last run were dropped, "
                "since the in-memory cluster starts empty");
}

static int load_one(const tb_store_connector_t *stored, void *opaque)
{
    tb_herder_t *herder = opaque;
    const char *class_name =
        json_string_value(json_object_get(stored->config, "connector.class"));
    const tb_plugin_t *plugin = tb_plugin_find(class_name);
    if (plugin == NULL) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", stored->name, -1,
                    "stored connector names class %s, which this build does not "
                    "have; it is not started",
                    class_name ? class_name : "(none)");
        return 0;
    }
    if (herder->options.dev && plugin->kind == TB_PLUGIN_SINK) {
        drop_dev_sink_offsets(herder, stored->name);
    }
    connector_t *c = connector_new(stored->name, stored->config, plugin, stored->target,
                                   stored->task_configs);
    c->next = herder->connectors;
    herder->connectors = c;
    /* a store written before rows were written whole may hold a mix */
    if (settle_task_configs(herder, c) == 0) {
        apply_target(herder, c);
    }
    TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1,
                "loaded from the store: %s with %zu task(s)",
                tb_target_state_name(c->target), c->task_count);
    return 0;
}

/* The worker's client keys for every client, checked at start (errors
 * name the worker key); the ones without effect are logged. */
static void check_worker_clients(const tb_herder_t *herder, json_t *errors)
{
    json_t *empty = json_object();
    for (int r = TB_CLIENT_PRODUCER; r <= TB_CLIENT_CONSUMER; r++) {
        json_decref(
            tb_client_props(&herder->client, (tb_client_role_t)r, empty, false, errors));
    }
    json_decref(empty);
    const char *key;
    json_t *value;
    json_object_foreach (herder->kafka_props, key, value) {
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
static int connect_cluster(tb_herder_t *herder, char *errstr, size_t errstr_size)
{
    const tb_herder_options_t *options = &herder->options;
    json_t *errors = json_object();
    herder->kafka_props = json_deep_copy(options->kafka_props);
    herder->allowlist = json_deep_copy(options->override_allowlist);
    herder->client = (tb_client_settings_t){
        .worker_props = herder->kafka_props,
        .overrides_allowed = options->overrides_allowed,
        .allowlist = herder->allowlist,
        .literal_secrets = options->literal_secrets,
        .downgrade_allowed = options->downgrade_allowed,
    };
    herder->options.kafka_props = herder->options.override_allowlist = NULL;
    check_worker_clients(herder, errors);
    json_t *empty = json_object();
    json_t *admin =
        tb_client_props(&herder->client, TB_CLIENT_ADMIN, empty, true, errors);
    json_decref(empty);
    if (admin == NULL || tb_config_error_count(errors) > 0) {
        json_decref(admin);
        tb_config_errors_join(errors, "\n", errstr, errstr_size);
        json_decref(errors);
        return -1;
    }
    herder->cluster = tb_kafka_cluster_create(admin, options->dev, errstr, errstr_size);
    json_decref(admin);
    json_decref(errors);
    if (herder->cluster == NULL) {
        return -1;
    }
    json_object_set_new(herder->kafka_props, "bootstrap.servers",
                        json_string(tb_kafka_cluster_bootstrap(herder->cluster)));
    if (options->dev) {
        dev_consumer_session(herder->kafka_props);
    }
    return 0;
}

/* A store serves the mode it was first opened in: a dev store's offsets
 * point into an in-memory cluster that is gone, and a dev worker would
 * drop a Kafka store's sink offsets (drop_dev_sink_offsets). */
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
    herder->worker_id = strdup(options->worker_id);
    herder->options.worker_id = herder->worker_id;
    pthread_mutex_init(&herder->lock, NULL);
    pthread_cond_init(&herder->idle, NULL);
    pthread_mutex_init(&herder->topics_lock, NULL);
    herder->topics = json_object();
    herder->store = tb_store_open(options->store_path, errstr, errstr_size);
    if (herder->store == NULL || check_store_mode(herder, errstr, errstr_size) != 0) {
        goto fail;
    }
    if (connect_cluster(herder, errstr, errstr_size) != 0) {
        goto fail;
    }
    herder->converter_config = json_deep_copy(options->converter_config);
    herder->options.converter_config = NULL;

    herder->pool = tb_pool_create(options->task_threads);
    if (herder->pool == NULL) {
        snprintf(errstr, errstr_size, "cannot start %d task threads",
                 options->task_threads);
        goto fail;
    }
    atomic_store(&herder->last_beat_ms, tb_monotonic_ms());
    herder->heartbeat = tb_pool_job_create(herder->pool, beat, herder);
    tb_pool_job_wake(herder->heartbeat);
    pthread_mutex_lock(&herder->lock);
    int rc =
        tb_store_connectors_load(herder->store, load_one, herder, errstr, errstr_size);
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
    while (herder->connectors != NULL) {
        connector_t *c = herder->connectors;
        herder->connectors = c->next;
        connector_free(c);
    }
    tb_pool_job_destroy(herder->heartbeat);
    tb_pool_destroy(herder->pool);
    tb_kafka_cluster_destroy(herder->cluster);
    tb_store_close(herder->store);
    json_decref(herder->kafka_props);
    json_decref(herder->allowlist);
    json_decref(herder->converter_config);
    pthread_mutex_destroy(&herder->lock);
    pthread_cond_destroy(&herder->idle);
    pthread_mutex_destroy(&herder->topics_lock);
    json_decref(herder->topics);
    free(herder->worker_id);
    free(herder);
}

tb_health_t tb_herder_health(tb_herder_t *herder, char *message, size_t message_size)
{
    char id[128];
    if (!tb_kafka_cluster_id(herder->cluster, id, sizeof(id))) {
        snprintf(message, message_size,
                 "Worker is still starting up. Waiting for the Kafka cluster "
                 "at %s to answer.",
                 tb_kafka_cluster_bootstrap(herder->cluster));
        return TB_HEALTH_STARTING;
    }
    int64_t silent = tb_monotonic_ms() - atomic_load(&herder->last_beat_ms);
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
    return tb_kafka_cluster_id(herder->cluster, buf, size);
}

const char *tb_herder_bootstrap(const tb_herder_t *herder)
{
    return tb_kafka_cluster_bootstrap(herder->cluster);
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
    for (connector_t *c = herder->connectors; c != NULL; c = c->next) {
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
static json_t *info_of(const tb_herder_t *herder, const connector_t *c)
{
    (void)herder;
    json_t *tasks = json_array();
    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        json_array_append_new(
            tasks, json_pack("{s:s, s:i}", "connector", c->name, "task", (int)i));
    }
    return json_pack("{s:s, s:o, s:o, s:s}", "name", c->name, "config",
                     tb_connector_config_redact(c->plugin, c->config), "tasks", tasks,
                     "type", tb_plugin_kind_name(c->plugin->kind));
}

/* The list of a config's errors as Connect words it for a 400. */
static tb_err_t invalid_config(const json_t *errors, char *msg, size_t msg_size)
{
    size_t used = (size_t)snprintf(msg, msg_size,
                                   "Connector configuration is invalid and contains "
                                   "the following %zu error(s):\n",
                                   tb_config_error_count(errors));
    if (used < msg_size) {
        used += tb_config_errors_join(errors, "\n", msg + used, msg_size - used);
    }
    if (used < msg_size) {
        snprintf(msg + used, msg_size - used,
                 "\nYou can also find the above list of errors at the endpoint "
                 "`/connector-plugins/{connectorType}/config/validate`");
    }
    return TB_ERR_BAD_REQUEST;
}

/* Connect accepts keys it does not know, and so do we; each is named once,
 * when the config is stored, in case it is a typo. Prefixed keys belong to
 * clients, converters and transforms and are checked by them. */
static void log_unused_keys(const char *name, const tb_plugin_t *plugin,
                            const json_t *config)
{
    static const char *const owned_prefixes[] = {
        "producer.override.", "consumer.override.", "admin.override.",
        "key.converter.",     "value.converter.",   "header.converter.",
        "transforms.",        "predicates.",        NULL};
    const tb_config_table_t *tables[3];
    size_t n = tb_connector_config_tables(plugin, tables);
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)config, key, value) {
        bool owned = tb_config_find(tables, n, key) != NULL;
        for (size_t i = 0; !owned && owned_prefixes[i] != NULL; i++) {
            owned = strncmp(key, owned_prefixes[i], strlen(owned_prefixes[i])) == 0;
        }
        const char *ignored = tb_java_client_key_ignored(key, json_string_value(value));
        if (!owned) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.config", name, -1,
                        "config key '%s' is not used by %s", key, plugin->class_name);
        } else if (ignored != NULL) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.config", name, -1,
                        "config key '%s' is accepted and has no effect: %s", key,
                        ignored);
        }
    }
}

/* tb_secret_header_fn: notes that a credential header is literal. */
static const char *note_literal_header(void *arg, const char *name, const char *value)
{
    (void)name;
    (void)value;
    *(bool *)arg = true;
    return NULL;
}

/* True when value of key holds a secret written literally. */
static bool literal_secret(const tb_plugin_t *plugin, const char *key, const char *value)
{
    bool literal = false;
    if (tb_connector_config_secret_key(plugin, key)) {
        return !tb_secret_is_reference(value);
    }
    if (tb_connector_config_headers_key(plugin, key)) {
        free(tb_secret_headers_rewrite(value, note_literal_header, &literal));
    }
    return literal;
}

/* Every secret of the config: a literal one refused unless the worker
 * allows them (once per key: the client checks may have named it already),
 * and every reference checked against the worker's config.providers. */
static void check_secret_values(const tb_herder_t *herder, const tb_plugin_t *plugin,
                                const json_t *config, json_t *errors)
{
    const char *owner = json_string_value(json_object_get(config, "name"));
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)config, key, value) {
        const char *text = json_string_value(value);
        char message[1536], reason[1024];
        if (text == NULL || json_object_get(errors, key) != NULL) {
            continue;
        }
        if (!herder->client.literal_secrets && literal_secret(plugin, key, text)) {
            snprintf(
                message, sizeof(message),
                "%s holds a literal secret, which is refused: use ${env:NAME} or "
                "${file:/path:key} (or set the worker's secrets.literal.allowed=true)",
                key);
            tb_config_error_add(errors, key, message);
        } else if (tb_secret_policy_check(&herder->options.secret_policy,
                                          owner != NULL ? owner : "", text, reason,
                                          sizeof(reason)) != 0) {
            snprintf(message, sizeof(message), "%s: %s", key, reason);
            tb_config_error_add(errors, key, message);
        }
    }
}

/* The connector's Kafka clients (secrets unresolved) and its PASSWORD keys:
 * literal secrets refused unless the worker allows them, weak transports
 * and forbidden overrides refused. */
static void check_secrets_and_clients(const tb_herder_t *herder,
                                      const tb_plugin_t *plugin, const json_t *config,
                                      json_t *errors)
{
    /* every role, so that no override goes unchecked, used or not */
    for (int r = TB_CLIENT_PRODUCER; r <= TB_CLIENT_ADMIN; r++) {
        json_decref(
            tb_client_props(&herder->client, (tb_client_role_t)r, config, false, errors));
    }
    check_secret_values(herder, plugin, config, errors);
}

/* What a source that runs in transactions needs, of its config and of this
 * worker; exactly.once.support=required where the worker cannot is refused. */
static void check_worker_support(const tb_herder_t *herder, const json_t *values,
                                 json_t *errors)
{
    if (!tb_connector_config_transactional(values, exactly_once_available(herder))) {
        return;
    }
    tb_connector_config_check_transactions(values, errors);
    if (!herder->options.exactly_once_source) {
        tb_config_error_add(errors, "exactly.once.support",
                            "exactly.once.support=required needs the worker's "
                            "exactly.once.source.support=enabled");
    } else if (herder->options.dev) {
        tb_config_error_add(errors, "exactly.once.support",
                            "exactly-once is not available in dev mode: the in-process "
                            "cluster does not keep transactional offsets, so the "
                            "progress marker cannot work");
    }
}

/* Every problem of a connector config: its own keys, and what this worker
 * allows (exactly-once, secrets, client settings). New reference. */
static json_t *config_errors(const tb_herder_t *herder, const tb_plugin_t *plugin,
                             const json_t *config)
{
    json_t *errors = json_object();
    json_t *values = tb_connector_config_validate(plugin, config, errors);
    tb_limits_check(&herder->options.limits, plugin->config, config, errors);
    check_worker_support(herder, values, errors);
    check_secrets_and_clients(herder, plugin, config, errors);
    json_decref(values);
    return errors;
}

/* Checks a config before it is stored; finds its plugin. */
static tb_err_t check_config(const tb_herder_t *herder, const char *name,
                             const json_t *config, const tb_plugin_t **plugin, char *msg,
                             size_t msg_size)
{
    const char *config_name = json_string_value(json_object_get(config, "name"));
    if (config_name != NULL && strcmp(config_name, name) != 0) {
        return fail(TB_ERR_BAD_REQUEST, msg, msg_size,
                    "Connector name configuration (%s) doesn't match connector name "
                    "in the URL (%s)",
                    config_name, name);
    }
    const char *class_name =
        json_string_value(json_object_get(config, "connector.class"));
    if (class_name == NULL) {
        /* the config's values may be secrets: name the missing key only */
        return fail(TB_ERR_BAD_REQUEST, msg, msg_size,
                    "Connector config of %s contains no connector type: "
                    "connector.class is missing",
                    name);
    }
    *plugin = tb_plugin_find(class_name);
    if (*plugin == NULL) {
        size_t used = (size_t)snprintf(
            msg, msg_size,
            "Failed to find any class that implements Connector and which name "
            "matches %s, available connectors are: ",
            class_name);
        for (size_t i = 0; tb_plugins[i] != NULL && used < msg_size; i++) {
            used += (size_t)snprintf(msg + used, msg_size - used, "%s%s", i ? ", " : "",
                                     tb_plugins[i]->class_name);
        }
        /* Connect answers 500; an unknown class is the client's mistake */
        return TB_ERR_BAD_REQUEST;
    }
    json_t *full = json_deep_copy(config);
    json_object_set_new(full, "name", json_string(name));
    json_t *errors = config_errors(herder, *plugin, full);
    tb_err_t err = TB_OK;
    if (tb_config_error_count(errors) > 0) {
        err = invalid_config(errors, msg, msg_size);
    }
    json_decref(errors);
    json_decref(full);
    return err;
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

/* Where a literal secret of config_key of connector owner goes. */
typedef struct {
    const char *path; /* the worker's secrets file */
    const char *owner;
    const char *config_key;
    char reference[6144]; /* the last one made */
    char *msg;
    size_t msg_size;
    bool failed;
} externalizer_t;

/* Moves value to the secrets file under its owner's key for what (a
 * config key, or "<config key>.<header>"); returns its ${file:...}
 * reference, or NULL (x->failed set, msg filled). */
static const char *externalize(externalizer_t *x, const char *what, const char *value)
{
    char file_key[2048];
    tb_secret_file_key(x->owner, what, file_key, sizeof(file_key));
    if (tb_props_file_set(x->path, file_key, value, x->msg, x->msg_size) != 0) {
        x->failed = true;
        return NULL;
    }
    snprintf(x->reference, sizeof(x->reference), "${file:%s:%s}", x->path, file_key);
    return x->reference;
}

/* tb_secret_header_fn: a credential header's value to the secrets file. */
static const char *externalize_header(void *arg, const char *name, const char *value)
{
    externalizer_t *x = arg;
    char what[1024];
    snprintf(what, sizeof(what), "%s.%s", x->config_key, name);
    return x->failed ? NULL : externalize(x, what, value);
}

/* Literal secrets (allowed by secrets.literal.allowed) never reach the
 * store: each goes to a properties file beside it, readable by the worker's
 * user only, and the config keeps a ${file:...} reference in its place. */
static int externalize_secrets(const tb_herder_t *herder, const char *name,
                               const tb_plugin_t *plugin, json_t *config, char *msg,
                               size_t msg_size)
{
    char path[4096];
    const char *key;
    json_t *value;
    snprintf(path, sizeof(path), "%s.secrets", herder->options.store_path);
    externalizer_t x = {.path = path, .owner = name, .msg = msg, .msg_size = msg_size};
    json_object_foreach (config, key, value) {
        const char *text = json_string_value(value);
        x.config_key = key;
        if (text == NULL) {
            continue;
        }
        if (tb_connector_config_secret_key(plugin, key) &&
            !tb_secret_is_reference(text)) {
            const char *reference = externalize(&x, key, text);
            if (reference != NULL) {
                json_object_set_new(config, key, json_string(reference));
            }
        } else if (tb_connector_config_headers_key(plugin, key)) {
            char *headers = tb_secret_headers_rewrite(text, externalize_header, &x);
            if (headers != NULL && !x.failed) {
                json_object_set_new(config, key, json_string(headers));
            }
            free(headers);
        }
        if (x.failed) {
            return -1;
        }
    }
    return 0;
}

/* Removes connector name's entries from the worker's secrets file; a
 * failure is logged (the connector is gone from the store all the same). */
static void forget_secrets(const tb_herder_t *herder, const char *name)
{
    char path[4096], own[2048], reason[4096];
    snprintf(path, sizeof(path), "%s.secrets", herder->options.store_path);
    tb_secret_file_key(name, "", own, sizeof(own));
    if (tb_props_file_remove_prefix(path, own, reason, sizeof(reason)) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1,
                    "deleted, but its secrets stay in the secrets file: %s", reason);
    }
}

/* Replaces c's config and task configs (fresh, stolen) in memory. A
 * started connector keeps running every task whose task config and
 * framework keys are unchanged; the others are detached for the caller to
 * stop (*count of them). Call with the lock held and c claimed;
 * apply_target() then starts what is missing. */
static tb_task_t **reconfigure(connector_t *c, json_t *config, const tb_plugin_t *plugin,
                               json_t *fresh, size_t *count)
{
    json_t *old_framework = framework_keys(c->plugin, c->config);
    json_t *new_framework = framework_keys(plugin, config);
    bool same_framework = plugin == c->plugin && json_equal(old_framework, new_framework);
    size_t keep = 0;
    while (
        same_framework && c->target == TB_TARGET_STARTED && keep < c->task_count &&
        keep < json_array_size(fresh) &&
        json_equal(json_array_get(fresh, keep), json_array_get(c->task_configs, keep))) {
        keep++;
    }
    json_decref(old_framework);
    json_decref(new_framework);
    json_decref(c->config);
    c->config = json_incref(config);
    c->plugin = plugin;
    json_decref(c->task_configs);
    c->task_configs = fresh;
    if (c->target == TB_TARGET_STARTED) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1,
                    "config replaced; %zu task(s) unchanged, %zu (re)started", keep,
                    json_array_size(fresh) - keep);
    }
    return detach_tasks(c, keep, count);
}

json_t *tb_herder_validate(tb_herder_t *herder, const tb_plugin_t *plugin,
                           const json_t *config)
{
    json_t *errors = config_errors(herder, plugin, config);
    json_t *infos = tb_connector_config_infos(plugin, config, errors);
    json_decref(errors);
    return infos;
}

/* Creates connector name, or replaces the config of c (claimed by the
 * caller, or NULL), then starts it in its target state. Stopping replaced
 * tasks runs with the lock released. Call with the lock held. */
static tb_err_t put_config(tb_herder_t *herder, const char *name, connector_t *c,
                           const json_t *config, tb_target_state_t initial_state,
                           json_t **out, char *msg, size_t msg_size)
{
    const tb_plugin_t *plugin = NULL;
    tb_err_t err = check_config(herder, name, config, &plugin, msg, msg_size);
    if (err != TB_OK) {
        return err;
    }
    json_t *stored = json_deep_copy(config);
    json_object_set_new(stored, "name", json_string(name));
    tb_target_state_t target = c != NULL ? c->target : initial_state;
    if (externalize_secrets(herder, name, plugin, stored, msg, msg_size) != 0) {
        json_decref(stored);
        return TB_ERR_INTERNAL;
    }
    /* a new config makes new task configs, from the config whose secrets are
     * references by now; as in Connect, only a started connector has any */
    char failure[1200] = "";
    json_t *fresh = target == TB_TARGET_STARTED
                        ? split_into_tasks(plugin, name, stored, failure, sizeof(failure))
                        : json_array();
    if (store_row(herder, name, stored, target, fresh, msg, msg_size) != 0) {
        json_decref(fresh);
        json_decref(stored);
        return TB_ERR_INTERNAL;
    }
    log_unused_keys(name, plugin, stored);
    if (c == NULL) {
        c = connector_new(name, stored, plugin, target, fresh);
        json_decref(fresh);
        c->busy = true;
        c->next = herder->connectors;
        herder->connectors = c;
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "created (%s, %s)",
                    plugin->class_name, tb_target_state_name(target));
    } else {
        size_t count;
        tb_task_t **replaced = reconfigure(c, stored, plugin, fresh, &count);
        stop_unlocked(herder, replaced, count);
    }
    apply_target(herder, c);
    if (failure[0] != '\0') {
        record_connector_state(herder, c, TB_STATE_FAILED, failure);
    }
    *out = info_of(herder, c);
    json_decref(stored);
    return TB_OK;
}

tb_err_t tb_herder_connector_put(tb_herder_t *herder, const char *name,
                                 const json_t *config, tb_target_state_t initial_state,
                                 bool replace, bool *created, json_t **out, char *msg,
                                 size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = claim(herder, name);
    tb_err_t err;
    if (c != NULL && !replace) {
        err = fail(TB_ERR_CONFLICT, msg, msg_size, "Connector %s already exists", name);
    } else {
        *created = c == NULL;
        err = put_config(herder, name, c, config, initial_state, out, msg, msg_size);
        c = find(herder, name);
    }
    if (c != NULL) {
        release(herder, c);
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_connector_patch(tb_herder_t *herder, const char *name,
                                   const json_t *patch, json_t **out, char *msg,
                                   size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = claim(herder, name);
    if (c == NULL) {
        pthread_mutex_unlock(&herder->lock);
        return fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found", name);
    }
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
    tb_err_t err =
        put_config(herder, name, c, merged, TB_TARGET_STARTED, out, msg, msg_size);
    release(herder, c);
    pthread_mutex_unlock(&herder->lock);
    json_decref(merged);
    return err;
}

/* Finds connector name and returns it with the lock held; or returns NULL,
 * unlocked, with msg set from not_found (a format taking the name). */
static connector_t *lock_connector(tb_herder_t *herder, const char *name,
                                   const char *not_found, char *msg, size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = find(herder, name);
    if (c == NULL) {
        pthread_mutex_unlock(&herder->lock);
        snprintf(msg, msg_size, not_found, name);
    }
    return c;
}

tb_err_t tb_herder_connector_info(tb_herder_t *herder, const char *name, json_t **out,
                                  char *msg, size_t msg_size)
{
    connector_t *c =
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = info_of(herder, c);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_connector_config(tb_herder_t *herder, const char *name, json_t **out,
                                    char *msg, size_t msg_size)
{
    connector_t *c =
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    *out = tb_connector_config_redact(c->plugin, c->config);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

/* {"id","state","worker_id","trace"?} of task i of c. */
static json_t *task_state_of(const tb_herder_t *herder, connector_t *c, size_t i,
                             bool restarting)
{
    char *trace = NULL;
    tb_state_t state =
        i < c->task_count ? tb_task_state(c->tasks[i], &trace) : TB_STATE_UNASSIGNED;
    json_t *out = json_pack("{s:i, s:s, s:s}", "id", (int)i, "state",
                            tb_state_name(restarting ? TB_STATE_RESTARTING : state),
                            "worker_id", herder->worker_id);
    if (trace != NULL && !restarting) {
        json_object_set_new(out, "trace", json_string(trace));
    }
    /* beyond Connect: how often the task was restarted, shown once it was */
    int restarts = i < c->task_count ? tb_task_restarts(c->tasks[i]) : 0;
    if (restarts > 0) {
        json_object_set_new(out, "restarts", json_integer(restarts));
    }
    free(trace);
    return out;
}

/* ConnectorStateInfo; restarting marks instances shown as RESTARTING
 * (bit 0: the connector, bit i+1: task i). Call with the lock held. */
static json_t *status_of(const tb_herder_t *herder, connector_t *c,
                         const bool *restarting_tasks, bool restarting_connector)
{
    json_t *connector =
        json_pack("{s:s, s:s}", "state",
                  tb_state_name(restarting_connector ? TB_STATE_RESTARTING : c->state),
                  "worker_id", herder->worker_id);
    if (c->trace != NULL && !restarting_connector) {
        json_object_set_new(connector, "trace", json_string(c->trace));
    }
    json_t *tasks = json_array();
    for (size_t i = 0; i < json_array_size(c->task_configs); i++) {
        json_array_append_new(
            tasks, task_state_of(herder, c, i, restarting_tasks && restarting_tasks[i]));
    }
    return json_pack("{s:s, s:o, s:o, s:s}", "name", c->name, "connector", connector,
                     "tasks", tasks, "type", tb_plugin_kind_name(c->plugin->kind));
}

tb_err_t tb_herder_connector_status(tb_herder_t *herder, const char *name, json_t **out,
                                    char *msg, size_t msg_size)
{
    connector_t *c =
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
    connector_t *c =
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
        *out = task_state_of(herder, c, (size_t)task, false);
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}

/* Task i's config as the REST API shows it: secrets hidden, and task.class
 * added as Connect's worker adds it: the connector's class name with its
 * "Connector" suffix replaced by "Task" (FileStreamSinkConnector ->
 * FileStreamSinkTask). New reference. */
static json_t *task_config_shown(const connector_t *c, size_t i)
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
    connector_t *c =
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
    connector_t *c =
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

tb_err_t tb_herder_connector_restart(tb_herder_t *herder, const char *name,
                                     bool include_tasks, bool only_failed, json_t **out,
                                     char *msg, size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = claim(herder, name);
    if (c == NULL) {
        pthread_mutex_unlock(&herder->lock);
        return fail(TB_ERR_NOT_FOUND, msg, msg_size, "Unknown connector: %s", name);
    }
    bool restart_connector = !only_failed || c->state == TB_STATE_FAILED;
    bool *restart_tasks = calloc(c->task_count + 1, sizeof(bool));
    for (size_t i = 0; include_tasks && i < c->task_count; i++) {
        char *trace = NULL;
        restart_tasks[i] =
            !only_failed || tb_task_state(c->tasks[i], &trace) == TB_STATE_FAILED;
        free(trace);
    }
    *out = include_tasks || only_failed
               ? status_of(herder, c, restart_tasks, restart_connector)
               : NULL;
    if (restart_connector) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, -1, "restarting");
        record_connector_state(
            herder, c, c->state == TB_STATE_FAILED ? TB_STATE_RUNNING : c->state, NULL);
        if (settle_task_configs(herder, c) == 0) {
            apply_target(herder, c);
        }
    }
    for (size_t i = 0; i < c->task_count; i++) {
        if (restart_tasks[i]) {
            tb_task_restart(c->tasks[i]);
        }
    }
    free(restart_tasks);
    release(herder, c);
    pthread_mutex_unlock(&herder->lock);
    return TB_OK;
}

tb_err_t tb_herder_task_restart(tb_herder_t *herder, const char *name, int task,
                                char *msg, size_t msg_size)
{
    connector_t *c = lock_connector(herder, name, "Unknown connector: %s", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    tb_err_t err = TB_OK;
    if (task < 0 || (size_t)task >= c->task_count) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "Task %s-%d not found", name, task);
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", c->name, task, "restart requested");
        tb_task_restart(c->tasks[task]);
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_target_state_set(tb_herder_t *herder, const char *name,
                                    tb_target_state_t target, char *msg, size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = claim(herder, name);
    if (c == NULL) {
        pthread_mutex_unlock(&herder->lock);
        return fail(TB_ERR_NOT_FOUND, msg, msg_size, "Unknown connector %s", name);
    }
    tb_err_t err = TB_OK;
    char failure[1200];
    json_t *task_configs = task_configs_for(c, target, failure, sizeof(failure));
    if (c->target == target) {
        /* nothing to change */
    } else if (store_row(herder, name, c->config, target, task_configs, msg, msg_size) !=
               0) {
        err = TB_ERR_INTERNAL;
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "target state %s",
                    tb_target_state_name(target));
        c->target = target;
        json_decref(c->task_configs);
        c->task_configs = json_incref(task_configs);
        size_t count;
        tb_task_t **stopped = detach_tasks(c, json_array_size(task_configs), &count);
        stop_unlocked(herder, stopped, count);
        apply_target(herder, c);
        if (failure[0] != '\0') {
            record_connector_state(herder, c, TB_STATE_FAILED, failure);
        }
    }
    json_decref(task_configs);
    release(herder, c);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

/* Unlinks c from the connector list and frees it. Call with the lock
 * held, c claimed, its tasks stopped. */
static void forget_connector(tb_herder_t *herder, connector_t *c)
{
    for (connector_t **link = &herder->connectors; *link != NULL; link = &(*link)->next) {
        if (*link == c) {
            *link = c->next;
            break;
        }
    }
    release(herder, c);
    connector_free(c);
}

tb_err_t tb_herder_connector_delete(tb_herder_t *herder, const char *name, char *msg,
                                    size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = claim(herder, name);
    tb_err_t err = TB_OK;
    if (c == NULL) {
        err = fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found", name);
    } else if (tb_store_connector_delete(herder->store, name, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
        release(herder, c);
    } else {
        /* hidden from reads at once; a connector re-created under its name
         * waits in claim() until its tasks have stopped */
        c->deleted = true;
        size_t count;
        tb_task_t **stopped = detach_tasks(c, 0, &count);
        stop_unlocked(herder, stopped, count);
        forget_connector(herder, c);
        forget_topics(herder, name);
        forget_secrets(herder, name);
        TB_LOG(TB_LOG_INFO, "tributary.herder", "connector %s deleted", name);
    }
    pthread_mutex_unlock(&herder->lock);
    return err;
}

tb_err_t tb_herder_offsets_get(tb_herder_t *herder, const char *name, json_t **out,
                               char *msg, size_t msg_size)
{
    connector_t *c =
        lock_connector(herder, name, "Connector %s not found", msg, msg_size);
    if (c == NULL) {
        return TB_ERR_NOT_FOUND;
    }
    json_t *stored = tb_store_offsets_get(herder->store, name, msg, msg_size);
    pthread_mutex_unlock(&herder->lock);
    if (stored == NULL) {
        return TB_ERR_INTERNAL;
    }
    json_t *offsets = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach (stored, i, entry) {
        if (!tb_progress_marker_is_generation(json_object_get(entry, "partition"))) {
            json_array_append(offsets, entry);
        }
    }
    json_decref(stored);
    *out = json_pack("{s:o}", "offsets", offsets);
    return TB_OK;
}

/* Checks source offsets by Connect's rules (partition and offset are maps
 * of primitive values; a missing offset is null) and returns them in the
 * store's shape, or NULL with msg naming the problem. New reference. */
static json_t *source_offsets_of(const json_t *offsets, char *msg, size_t msg_size)
{
    json_t *out = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_t *offset = json_object_get(entry, "offset");
        json_t *maps[] = {partition, offset};
        if (!json_is_object(partition)) {
            snprintf(msg, msg_size, "The partition of entry %zu must be a map", i);
            goto fail;
        }
        if (tb_progress_marker_is_generation(partition)) {
            snprintf(msg, msg_size,
                     "The partition of entry %zu is reserved: tributary records there "
                     "how often the connector's offsets were changed",
                     i);
            goto fail;
        }
        if (offset != NULL && !json_is_null(offset) && !json_is_object(offset)) {
            snprintf(msg, msg_size, "The offset of entry %zu must be a map or null", i);
            goto fail;
        }
        for (size_t m = 0; m < 2; m++) {
            const char *key;
            json_t *value;
            json_object_foreach (maps[m], key, value) {
                if (json_is_object(value) || json_is_array(value)) {
                    snprintf(msg, msg_size,
                             "Offsets may only contain primitive types as values, but "
                             "field '%s' of entry %zu is not",
                             key, i);
                    goto fail;
                }
            }
        }
        json_array_append_new(out, json_pack("{s:O, s:O}", "partition", partition,
                                             "offset", offset ? offset : json_null()));
    }
    return out;

fail:
    json_decref(out);
    return NULL;
}

/* A partition number as Connect takes it: an integer or a numeric string. */
static bool integer_of(const json_t *value, json_int_t *out)
{
    char *end;
    if (json_is_integer(value)) {
        *out = json_integer_value(value);
        return true;
    }
    const char *text = json_string_value(value);
    if (text == NULL || *text == '\0') {
        return false;
    }
    *out = strtoll(text, &end, 10);
    return *end == '\0';
}

/* Checks sink offsets by Connect's rules and returns them in the store's
 * shape; *group_ops gets the matching {"topic","partition","offset"} (offset
 * -1 deletes). NULL with msg on a bad shape. New references. */
static json_t *sink_offsets_of(const json_t *offsets, json_t **group_ops, char *msg,
                               size_t msg_size)
{
    json_t *out = json_array();
    *group_ops = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_t *offset = json_object_get(entry, "offset");
        const char *topic = json_string_value(json_object_get(partition, "kafka_topic"));
        json_int_t number, position = -1;
        if (topic == NULL ||
            !integer_of(json_object_get(partition, "kafka_partition"), &number)) {
            snprintf(msg, msg_size,
                     "The partition for a sink connector offset must contain the keys "
                     "'kafka_topic' and 'kafka_partition'");
            goto fail;
        }
        if (offset != NULL && !json_is_null(offset) &&
            (!integer_of(json_object_get(offset, "kafka_offset"), &position) ||
             position < 0)) {
            snprintf(msg, msg_size,
                     "The offset for a sink connector should either be null or contain "
                     "the key 'kafka_offset' with a non-negative number");
            goto fail;
        }
        json_array_append_new(
            out, json_pack("{s:{s:s, s:I}, s:o}", "partition", "kafka_topic", topic,
                           "kafka_partition", number, "offset",
                           position >= 0 ? json_pack("{s:I}", "kafka_offset", position)
                                         : json_null()));
        json_array_append_new(*group_ops,
                              json_pack("{s:s, s:I, s:I}", "topic", topic, "partition",
                                        number, "offset", position));
    }
    return out;

fail:
    json_decref(out);
    json_decref(*group_ops);
    *group_ops = NULL;
    return NULL;
}

/* Resets every stored offset of a sink connector: the group's too. */
static json_t *sink_reset_ops(tb_herder_t *herder, const connector_t *c, char *msg,
                              size_t msg_size)
{
    json_t *stored = tb_store_offsets_get(herder->store, c->name, msg, msg_size);
    json_t *ops = stored != NULL ? json_array() : NULL;
    size_t i;
    json_t *entry;
    json_array_foreach (stored, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_array_append_new(
            ops, json_pack("{s:O, s:O, s:i}", "topic",
                           json_object_get(partition, "kafka_topic"), "partition",
                           json_object_get(partition, "kafka_partition"), "offset", -1));
    }
    json_decref(stored);
    return ops;
}

/* The store writes of a source connector's offsets change, in one store
 * transaction: checked (NULL resets: every stored offset deleted), and the
 * next offsets generation, so that an exactly-once task's progress marker
 * from before the change is ignored at its next start
 * (tb_progress_marker.h). New reference, or NULL with msg. */
static json_t *source_offsets_change(tb_herder_t *herder, const connector_t *c,
                                     const json_t *checked, char *msg, size_t msg_size)
{
    json_t *stored = tb_store_offsets_get(herder->store, c->name, msg, msg_size);
    if (stored == NULL) {
        return NULL;
    }
    json_t *writes = checked != NULL ? json_copy((json_t *)checked) : json_array();
    size_t i;
    json_t *entry;
    if (checked == NULL) {
        json_array_foreach (stored, i, entry) {
            json_t *partition = json_object_get(entry, "partition");
            if (!tb_progress_marker_is_generation(partition)) {
                json_array_append_new(
                    writes, json_pack("{s:O, s:n}", "partition", partition, "offset"));
            }
        }
    }
    json_array_append_new(writes, tb_progress_marker_generation_entry(
                                      tb_progress_marker_generation_of(stored) + 1));
    json_decref(stored);
    return writes;
}

/* Writes an offsets change into the store: a sink's as given (checked NULL
 * deletes them all), a source's with its next offsets generation. */
static int write_offsets(tb_herder_t *herder, const connector_t *c, const json_t *checked,
                         char *msg, size_t msg_size)
{
    if (c->plugin->kind == TB_PLUGIN_SINK) {
        return checked != NULL
                   ? tb_store_offsets_put(herder->store, c->name, checked, msg, msg_size)
                   : tb_store_offsets_delete(herder->store, c->name, msg, msg_size);
    }
    json_t *writes = source_offsets_change(herder, c, checked, msg, msg_size);
    int rc = writes != NULL
                 ? tb_store_offsets_put(herder->store, c->name, writes, msg, msg_size)
                 : -1;
    json_decref(writes);
    return rc;
}

/* Applies group_ops to the sink connector's consumer group: with an admin
 * client made from its settings, or in dev mode, where the mock cluster
 * takes offsets from group members only, as a member made from its
 * consumer's settings. */
static int alter_group(tb_herder_t *herder, const connector_t *c, const json_t *group_ops,
                       char *msg, size_t msg_size)
{
    char group[300];
    bool dev = herder->options.dev;
    json_t *errors = json_object();
    json_t *props =
        tb_client_props(&herder->client, dev ? TB_CLIENT_CONSUMER : TB_CLIENT_ADMIN,
                        c->config, true, errors);
    const char *name = tb_connector_sink_group(c->name, c->config, group, sizeof(group));
    int rc = -1;
    if (props == NULL) {
        tb_config_errors_join(errors, "\n", msg, msg_size);
    } else if (dev) {
        rc = tb_group_offsets_commit_as_member(props, name, group_ops, msg, msg_size);
    } else {
        rc = tb_group_offsets_alter(props, name, group_ops, msg, msg_size);
    }
    json_decref(props);
    json_decref(errors);
    return rc;
}

/* tb_herder_offsets_alter on c, claimed by the caller; runs without the
 * lock, since the admin calls to the group may take long. */
static tb_err_t alter_offsets(tb_herder_t *herder, const connector_t *c,
                              const json_t *offsets, json_t **out, char *msg,
                              size_t msg_size)
{
    const char *name = c->name;
    tb_err_t err = TB_OK;
    const char *verb = offsets != NULL ? "altered" : "reset";
    json_t *checked = NULL;
    json_t *group_ops = NULL;
    if (c->target != TB_TARGET_STOPPED || c->task_count > 0) {
        err = fail(TB_ERR_BAD_REQUEST, msg, msg_size,
                   "Connectors must be in the STOPPED state before their offsets can be "
                   "modified. This can be done for the specified connector by issuing a "
                   "'PUT' request to the '/connectors/%s/stop' endpoint",
                   name);
    } else if (offsets != NULL && c->plugin->kind == TB_PLUGIN_SOURCE &&
               (checked = source_offsets_of(offsets, msg, msg_size)) == NULL) {
        err = TB_ERR_BAD_REQUEST;
    } else if (offsets != NULL && c->plugin->kind == TB_PLUGIN_SINK &&
               (checked = sink_offsets_of(offsets, &group_ops, msg, msg_size)) == NULL) {
        err = TB_ERR_BAD_REQUEST;
    } else if (c->plugin->kind == TB_PLUGIN_SINK && group_ops == NULL &&
               (group_ops = sink_reset_ops(herder, c, msg, msg_size)) == NULL) {
        err = TB_ERR_INTERNAL;
    } else if (group_ops != NULL &&
               alter_group(herder, c, group_ops, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else if (write_offsets(herder, c, checked, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "offsets %s", verb);
        char text[512];
        snprintf(text, sizeof(text),
                 "The Connect framework-managed offsets for this connector have been "
                 "%s successfully. However, if this connector manages offsets "
                 "externally, they will need to be manually %s in the system that the "
                 "connector uses.",
                 verb, verb);
        *out = json_pack("{s:s}", "message", text);
    }
    json_decref(checked);
    json_decref(group_ops);
    return err;
}

tb_err_t tb_herder_offsets_alter(tb_herder_t *herder, const char *name,
                                 const json_t *offsets, json_t **out, char *msg,
                                 size_t msg_size)
{
    pthread_mutex_lock(&herder->lock);
    connector_t *c = claim(herder, name);
    pthread_mutex_unlock(&herder->lock);
    if (c == NULL) {
        return fail(TB_ERR_NOT_FOUND, msg, msg_size, "Connector %s not found", name);
    }
    tb_err_t err = alter_offsets(herder, c, offsets, out, msg, msg_size);
    pthread_mutex_lock(&herder->lock);
    release(herder, c);
    pthread_mutex_unlock(&herder->lock);
    return err;
}

json_t *tb_herder_topics(tb_herder_t *herder, const char *name)
{
    json_t *topics = json_array();
    const char *topic;
    json_t *value;
    pthread_mutex_lock(&herder->topics_lock);
    json_object_foreach (json_object_get(herder->topics, name), topic, value) {
        json_array_append_new(topics, json_string(topic));
    }
    pthread_mutex_unlock(&herder->topics_lock);
    return json_pack("{s:{s:o}}", name, "topics", topics);
}

void tb_herder_topics_reset(tb_herder_t *herder, const char *name)
{
    forget_topics(herder, name);
}
