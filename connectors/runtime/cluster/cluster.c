#include "connectors/runtime/cluster/tb_cluster.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/runtime/assignment/tb_assignment_json.h"
#include "connectors/runtime/cluster/tb_worker_group.h"
#include "connectors/runtime/metrics/tb_cluster_metrics.h"
#include "core/tb_log.h"
#include "core/tb_time.h"
#include "store/kafka/kafka_log.h"

#define ASSIGNMENT_KEY "assignment"

#define LOG_TIMEOUT_MS 30000

struct tb_cluster {
    tb_herder_t *herder;
    char *worker_id; /* worker_url without its scheme, as assignments name it */
    long long rebalance_delay_ms;
    tb_kafka_log_t *log;
    tb_worker_group_t *group;
    tb_session_keys_t *session_keys;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock; /* guards stopping, the wake-up and caught_up */
    pthread_cond_t wake;
    bool stopping;
    /* the group view (its changes count) at the start of the last refresh
     * of the store that succeeded: the leader answers writes only once it
     * read the store after the view that made it leader */
    uint64_t caught_up;
    /* the thread's own */
    json_t *published;     /* the last assignment record read, or NULL */
    json_t *departed;      /* worker -> tb_monotonic_ms() when first missed */
    int64_t hold_until_ms; /* after a revocation, nothing published before it */
    tb_cluster_metrics_t metrics;
    char trouble[512]; /* the last problem logged, "" once things work again */
    bool troubled;     /* a problem in this tick */
};

/* Logs a problem of the thread's tick once, not at every tick while it
 * lasts; what == NULL says the tick went well (logged once, after a
 * problem). */
static void trouble(tb_cluster_t *cluster, const char *what, const char *detail)
{
    char text[sizeof(cluster->trouble)];
    snprintf(text, sizeof(text), "%s%s%s", what != NULL ? what : "",
             what != NULL ? ": " : "", what != NULL ? detail : "");
    cluster->troubled = cluster->troubled || what != NULL;
    if (strcmp(text, cluster->trouble) == 0) {
        return;
    }
    if (what != NULL) {
        TB_LOG(TB_LOG_WARN, "tributary.cluster", "%s (retried every %d ms)", text,
               TB_CLUSTER_TICK_MS);
    } else {
        TB_LOG(TB_LOG_INFO, "tributary.cluster", "reading and publishing work again");
    }
    snprintf(cluster->trouble, sizeof(cluster->trouble), "%s", text);
}

/* A member's REST URL without its scheme: its worker id. */
static const char *id_of_url(const char *url)
{
    const char *sep = strstr(url, "://");
    return sep != NULL ? sep + 3 : url;
}

static void on_group_change(void *opaque)
{
    tb_cluster_t *cluster = opaque;
    pthread_mutex_lock(&cluster->lock);
    pthread_cond_signal(&cluster->wake);
    pthread_mutex_unlock(&cluster->lock);
}

/* tb_kafka_log_cb: keeps the newest assignment record in *opaque. */
static void on_record(const tb_kafka_log_record_t *record, void *opaque)
{
    json_t **latest = opaque;
    if (record->key_len != strlen(ASSIGNMENT_KEY) ||
        memcmp(record->key, ASSIGNMENT_KEY, record->key_len) != 0 ||
        record->value == NULL) {
        return;
    }
    json_t *value = json_loadb(record->value, record->value_len, 0, NULL);
    if (!json_is_object(json_object_get(value, "workers"))) {
        TB_LOG(TB_LOG_WARN, "tributary.cluster",
               "skipping an assignment record that is not tributary's");
        json_decref(value);
        return;
    }
    json_decref(*latest);
    *latest = value;
}

/* Counts the connector instances and tasks assignment gives this worker. */
static void count_assigned(const tb_cluster_t *cluster, const tb_assignment_t *assignment,
                           size_t *connectors, size_t *tasks)
{
    *connectors = *tasks = 0;
    for (size_t w = 0; w < assignment->count; w++) {
        const tb_worker_work_t *held = &assignment->workers[w];
        for (size_t i = 0;
             strcmp(held->worker, cluster->worker_id) == 0 && i < held->count; i++) {
            *(held->work[i].task < 0 ? connectors : tasks) += 1;
        }
    }
}

/* Reads the coordination topic; a new assignment becomes what this worker
 * runs. */
static void follow(tb_cluster_t *cluster)
{
    char errstr[512];
    json_t *latest = NULL;
    if (tb_kafka_log_read_to_end(cluster->log, on_record, &latest, errstr,
                                 sizeof(errstr)) != 0) {
        trouble(cluster, "cannot read the assignment", errstr);
    }
    tb_assignment_t assignment;
    if (latest == NULL || (cluster->published != NULL &&
                           json_equal(json_object_get(latest, "workers"),
                                      json_object_get(cluster->published, "workers")))) {
        json_decref(latest);
        return;
    }
    if (tb_assignment_from_json(json_object_get(latest, "workers"), &assignment) != 0) {
        TB_LOG(TB_LOG_WARN, "tributary.cluster", "skipping a malformed assignment");
        json_decref(latest);
        return;
    }
    json_int_t epoch = json_integer_value(json_object_get(latest, "epoch"));
    bool revoking = json_is_true(json_object_get(latest, "revoking"));
    TB_LOG(TB_LOG_INFO, "tributary.cluster", "assignment %lld from %s%s",
           (long long)epoch, json_string_value(json_object_get(latest, "leader")),
           revoking ? ": revoking the work that moves" : "");
    int64_t arrived = tb_monotonic_ms();
    tb_herder_assignment_set(cluster->herder, &assignment);
    size_t connectors, tasks;
    count_assigned(cluster, &assignment, &connectors, &tasks);
    tb_cluster_metrics_applied(&cluster->metrics, arrived, revoking, (long long)epoch,
                               connectors, tasks);
    tb_assignment_clear(&assignment);
    json_decref(cluster->published);
    cluster->published = latest;
}

/* Whether the array of units holds unit. */
static bool holds(const json_t *units, const json_t *unit)
{
    size_t i;
    json_t *item;
    json_array_foreach (units, i, item) {
        if (json_equal(item, unit)) {
            return true;
        }
    }
    return false;
}

/* The revocation step from previous to next: each live worker keeps only
 * what it holds in both, the waiting ones what they held. NULL when no
 * live worker loses anything (next can be published at once). */
static json_t *revocation(const json_t *previous, const json_t *next)
{
    json_t *step = json_object();
    bool loses = false;
    const char *worker;
    json_t *units;
    json_object_foreach ((json_t *)previous, worker, units) {
        const json_t *kept_units = json_object_get(next, worker);
        json_t *kept = json_array();
        size_t i;
        json_t *unit;
        json_array_foreach (units, i, unit) {
            if (kept_units == NULL || holds(kept_units, unit)) {
                json_array_append(kept, unit);
            } else {
                loses = true;
            }
        }
        json_object_set_new(step, worker, kept);
    }
    if (!loses) {
        json_decref(step);
        return NULL;
    }
    return step;
}

/* Publishes the assignment of workers; revoking marks a move's first step. */
static int publish(tb_cluster_t *cluster, json_t *workers, bool revoking)
{
    char errstr[512];
    json_int_t epoch = json_integer_value(json_object_get(cluster->published, "epoch"));
    json_t *record = json_pack("{s:I, s:s, s:O}", "epoch", epoch + 1, "leader",
                               cluster->worker_id, "workers", workers);
    if (revoking) {
        json_object_set_new(record, "revoking", json_true());
    }
    char *value = json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(record);
    tb_kafka_log_record_t out = {ASSIGNMENT_KEY, strlen(ASSIGNMENT_KEY), value,
                                 value != NULL ? strlen(value) : 0};
    int rc = value != NULL
                 ? tb_kafka_log_write(cluster->log, &out, 1, errstr, sizeof(errstr))
                 : -1;
    if (rc != 0) {
        trouble(cluster, "cannot publish the assignment",
                value != NULL ? errstr : "out of memory");
    }
    free(value);
    return rc;
}

/* The leader's part: the next assignment from the live members, the last
 * one and the departed members in their grace, published when it
 * differs. */
static void lead(tb_cluster_t *cluster, const tb_worker_group_view_t *view)
{
    int64_t now = tb_monotonic_ms();
    const json_t *previous = json_object_get(cluster->published, "workers");
    const char **live = calloc(view->member_count, sizeof(*live));
    const char **waiting = calloc(json_object_size(previous) + 1, sizeof(*waiting));
    size_t waiting_count = 0;
    for (size_t i = 0; i < view->member_count; i++) {
        live[i] = id_of_url(view->members[i]);
    }
    /* members of the last assignment that left: since when */
    json_t *departed = json_object();
    const char *worker;
    json_t *units;
    json_object_foreach ((json_t *)previous, worker, units) {
        bool is_live = false;
        for (size_t i = 0; i < view->member_count && !is_live; i++) {
            is_live = strcmp(live[i], worker) == 0;
        }
        if (is_live) {
            continue;
        }
        json_t *since = json_object_get(cluster->departed, worker);
        int64_t left = since != NULL ? (int64_t)json_integer_value(since) : now;
        json_object_set_new(departed, worker, json_integer(left));
        if (now - left < cluster->rebalance_delay_ms) {
            waiting[waiting_count++] = worker;
        }
    }
    json_decref(cluster->departed);
    cluster->departed = departed;

    tb_assignment_t last = {0};
    tb_assignment_t next = {0};
    if (previous != NULL && tb_assignment_from_json(previous, &last) != 0) {
        memset(&last, 0, sizeof(last));
    }
    tb_assignment_input_t in = {
        .live = live,
        .live_count = view->member_count,
        .waiting = waiting,
        .waiting_count = waiting_count,
        .previous = last.workers,
        .previous_count = last.count,
    };
    if (tb_herder_assign(cluster->herder, &in, &next) == 0) {
        json_t *wanted = tb_assignment_to_json(&next);
        /* the waiting members keep their work, held back for them */
        for (size_t i = 0; i < waiting_count; i++) {
            json_object_set(wanted, waiting[i], json_object_get(previous, waiting[i]));
        }
        if (!json_equal(wanted, previous)) {
            json_t *step = previous != NULL ? revocation(previous, wanted) : NULL;
            if (step != NULL) {
                TB_LOG(TB_LOG_INFO, "tributary.cluster",
                       "rebalancing: revoking the work that moves first");
                if (publish(cluster, step, true) == 0) {
                    cluster->hold_until_ms = now + TB_CLUSTER_REVOKE_PAUSE_MS;
                }
            } else if (publish(cluster, wanted, false) == 0) {
                TB_LOG(TB_LOG_INFO, "tributary.cluster",
                       "published the assignment of %zu live and %zu waiting worker(s)",
                       view->member_count, waiting_count);
            }
            json_decref(step);
        }
        json_decref(wanted);
    }
    tb_assignment_clear(&last);
    tb_assignment_clear(&next);
    free(live);
    free(waiting);
}

static void tick(tb_cluster_t *cluster)
{
    char errstr[512];
    cluster->troubled = false;
    tb_worker_group_view_t view;
    tb_worker_group_view(cluster->group, &view);
    if (tb_herder_refresh(cluster->herder, errstr, sizeof(errstr)) != 0) {
        trouble(cluster, "cannot read the store", errstr);
    } else {
        pthread_mutex_lock(&cluster->lock);
        cluster->caught_up = view.changes;
        pthread_mutex_unlock(&cluster->lock);
    }
    tb_herder_fencing_tick(cluster->herder, view.leader);
    follow(cluster);
    tb_cluster_metrics_tick(&cluster->metrics, view.leader, view.leader_url);
    if (tb_session_keys_tick(cluster->session_keys, view.leader, errstr,
                             sizeof(errstr)) != 0) {
        trouble(cluster, "cannot read or write the session key", errstr);
    }
    if (view.leader && view.member_count > 0 &&
        tb_monotonic_ms() >= cluster->hold_until_ms) {
        lead(cluster, &view);
    }
    tb_worker_group_view_clear(&view);
    if (!cluster->troubled) {
        trouble(cluster, NULL, NULL);
    }
}

static void *run(void *opaque)
{
    tb_cluster_t *cluster = opaque;
    pthread_mutex_lock(&cluster->lock);
    while (!cluster->stopping) {
        pthread_mutex_unlock(&cluster->lock);
        tick(cluster);
        pthread_mutex_lock(&cluster->lock);
        if (!cluster->stopping) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += (long)TB_CLUSTER_TICK_MS * 1000000L;
            until.tv_sec += until.tv_nsec / 1000000000L;
            until.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&cluster->wake, &cluster->lock, &until);
        }
    }
    pthread_mutex_unlock(&cluster->lock);
    return NULL;
}

/* Opens the coordination topic's log (creating the topic). */
static int open_log(tb_cluster_t *cluster, const tb_cluster_options_t *options,
                    const char *topic, char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *conf = tb_kafka_conf_new(options->client_props, errstr, errstr_size);
    if (conf == NULL) {
        return -1;
    }
    tb_kafka_log_spec_t spec = {
        .topic = topic,
        .role = "group.id",
        .partitions = 1,
        .replication_factor = options->replication_factor,
        .single_partition = true,
        .no_create = options->no_topic_creation,
        .timeout_ms = LOG_TIMEOUT_MS,
    };
    cluster->log = tb_kafka_log_open(conf, &spec, errstr, errstr_size);
    rd_kafka_conf_destroy(conf);
    return cluster->log != NULL ? 0 : -1;
}

tb_cluster_t *tb_cluster_start(const tb_cluster_options_t *options, char *errstr,
                               size_t errstr_size)
{
    tb_cluster_t *cluster = calloc(1, sizeof(*cluster));
    char topic[512];
    snprintf(topic, sizeof(topic), "%s.tributary-cluster", options->group_id);
    cluster->herder = options->herder;
    cluster->worker_id = strdup(id_of_url(options->worker_url));
    cluster->rebalance_delay_ms = options->rebalance_delay_ms;
    cluster->departed = json_object();
    tb_cluster_metrics_take(&cluster->metrics);
    pthread_mutex_init(&cluster->lock, NULL);
    pthread_cond_init(&cluster->wake, NULL);
    tb_session_keys_options_t keys = options->session_keys;
    keys.client_props = options->client_props;
    keys.replication_factor = options->replication_factor;
    if (open_log(cluster, options, topic, errstr, errstr_size) != 0 ||
        (cluster->session_keys = tb_session_keys_open(&keys, errstr, errstr_size)) ==
            NULL) {
        goto fail;
    }
    json_t *props = json_deep_copy(options->client_props);
    json_object_set_new(props, "session.timeout.ms",
                        json_sprintf("%d", options->session_timeout_ms));
    json_object_set_new(props, "heartbeat.interval.ms",
                        json_sprintf("%d", options->heartbeat_interval_ms));
    tb_worker_group_options_t group = {
        .group_id = options->group_id,
        .topic = topic,
        .worker_url = options->worker_url,
        .client_props = props,
        .changed = on_group_change,
        .opaque = cluster,
    };
    cluster->group = tb_worker_group_join(&group, errstr, errstr_size);
    json_decref(props);
    if (cluster->group == NULL ||
        pthread_create(&cluster->thread, NULL, run, cluster) != 0) {
        goto fail;
    }
    cluster->started = true;
    TB_LOG(TB_LOG_INFO, "tributary.cluster", "joined the group %s over %s as %s",
           options->group_id, topic, options->worker_url);
    return cluster;

fail:
    tb_cluster_stop(cluster);
    return NULL;
}

void tb_cluster_stop(tb_cluster_t *cluster)
{
    if (cluster == NULL) {
        return;
    }
    if (cluster->started) {
        pthread_mutex_lock(&cluster->lock);
        cluster->stopping = true;
        pthread_cond_signal(&cluster->wake);
        pthread_mutex_unlock(&cluster->lock);
        pthread_join(cluster->thread, NULL);
    }
    tb_worker_group_leave(cluster->group);
    tb_kafka_log_close(cluster->log);
    tb_session_keys_close(cluster->session_keys);
    pthread_mutex_destroy(&cluster->lock);
    pthread_cond_destroy(&cluster->wake);
    json_decref(cluster->published);
    json_decref(cluster->departed);
    tb_cluster_metrics_release(&cluster->metrics);
    free(cluster->worker_id);
    free(cluster);
}

int tb_cluster_leader(tb_cluster_t *cluster, char *url, size_t url_size)
{
    tb_worker_group_view_t view;
    tb_worker_group_view(cluster->group, &view);
    pthread_mutex_lock(&cluster->lock);
    bool caught_up = view.member_count > 0 && cluster->caught_up >= view.changes;
    pthread_mutex_unlock(&cluster->lock);
    /* the group may name this worker before its own assignment says it
     * leads: nobody is known yet, as a forward to itself would wait on
     * itself */
    bool other = !view.leader && view.leader_url != NULL &&
                 strcmp(id_of_url(view.leader_url), cluster->worker_id) != 0;
    int who = view.leader && caught_up ? 1 : other ? 0 : -1;
    if (who == 0) {
        snprintf(url, url_size, "%s", view.leader_url);
    }
    tb_worker_group_view_clear(&view);
    return who;
}

tb_session_keys_t *tb_cluster_session_keys(tb_cluster_t *cluster)
{
    return cluster->session_keys;
}
