#include "connectors/kafka/tb_kafka_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "core/tb_log.h"
#include "core/tb_metrics.h"

/* How often librdkafka reports statistics, and so how stale
 * tributary_kafka_broker_up can be. */
#define STATS_INTERVAL_MS "5000"
/* The longest the poll thread waits before it looks at stopping again. */
#define POLL_WAIT_MS 1000

static const char *const broker_labels[] = {"broker", NULL};
static const tb_metric_def_t broker_up_def = {
    .name = "tributary_kafka_broker_up",
    .type = TB_METRIC_GAUGE,
    .help = "1 while the worker's own Kafka client has a connection in state UP to the "
            "broker, else 0; refreshed every " STATS_INTERVAL_MS " ms.",
    .labels = broker_labels};

/* One broker of the last statistics, with its gauge. */
typedef struct broker_gauge {
    char *name;
    tb_series_t *up;
    bool seen; /* in the statistics being applied */
    struct broker_gauge *next;
} broker_gauge_t;

struct tb_kafka_cluster {
    rd_kafka_t *rk;
    char *bootstrap;
    pthread_t lookup_thread;
    bool lookup_started;
    atomic_bool stopping;
    pthread_mutex_t lock;
    char *cluster_id; /* NULL until known; guarded by lock */
    /* Touched only by the statistics callback, that is by the poll thread
     * (rd_kafka_poll serves it), and by destroy after joining it. */
    broker_gauge_t *brokers;
};

/* The gauge of broker name, created (set to 0) if new; NULL on no memory. */
static broker_gauge_t *broker_gauge(tb_kafka_cluster_t *cluster, const char *name)
{
    for (broker_gauge_t *b = cluster->brokers; b != NULL; b = b->next) {
        if (strcmp(b->name, name) == 0) {
            return b;
        }
    }
    broker_gauge_t *b = calloc(1, sizeof(*b));
    const char *values[] = {name, NULL};
    if (b == NULL || (b->name = strdup(name)) == NULL) {
        free(b);
        return NULL;
    }
    b->up = tb_metrics_series(&broker_up_def, values);
    b->next = cluster->brokers;
    cluster->brokers = b;
    return b;
}

static void broker_gauges_free(broker_gauge_t *list)
{
    while (list != NULL) {
        broker_gauge_t *next = list->next;
        tb_series_release(list->up);
        free(list->name);
        free(list);
        list = next;
    }
}

/* Applies the brokers of one statistics document: each broker the client
 * knows gets a gauge (1 in state UP, else 0); a broker no longer listed
 * loses its gauge. librdkafka's own internal and logical brokers (no
 * address of their own) are left out. */
static void brokers_apply(tb_kafka_cluster_t *cluster, json_t *brokers)
{
    const char *key;
    json_t *broker;

    for (broker_gauge_t *b = cluster->brokers; b != NULL; b = b->next) {
        b->seen = false;
    }
    json_object_foreach (brokers, key, broker) {
        const char *name = json_string_value(json_object_get(broker, "name"));
        const char *state = json_string_value(json_object_get(broker, "state"));
        const char *source = json_string_value(json_object_get(broker, "source"));
        if (name == NULL || state == NULL ||
            (source != NULL &&
             (strcmp(source, "internal") == 0 || strcmp(source, "logical") == 0))) {
            continue;
        }
        broker_gauge_t *b = broker_gauge(cluster, name);
        if (b != NULL) {
            b->seen = true;
            tb_series_set(b->up, strcmp(state, "UP") == 0 ? 1 : 0);
        }
    }
    for (broker_gauge_t **link = &cluster->brokers; *link != NULL;) {
        broker_gauge_t *b = *link;
        if (b->seen) {
            link = &b->next;
            continue;
        }
        *link = b->next;
        b->next = NULL;
        broker_gauges_free(b);
    }
}

/* librdkafka's statistics callback, served by rd_kafka_poll() on the poll
 * thread. Returns 0: librdkafka frees json. */
static int stats_cb(rd_kafka_t *rk, char *json, size_t json_len, void *opaque)
{
    tb_kafka_cluster_t *cluster = opaque;
    json_error_t error;
    (void)rk;

    json_t *stats = json_loadb(json, json_len, 0, &error);
    json_t *brokers = json_object_get(stats, "brokers");
    if (json_is_object(brokers)) {
        brokers_apply(cluster, brokers);
    } else {
        TB_LOG(TB_LOG_DEBUG, "tributary.worker",
               "librdkafka statistics without brokers: %s", error.text);
    }
    json_decref(stats);
    return 0;
}

/* Asks for the cluster id until it is known or the handle stops; a broker
 * that is down at start is therefore retried, and logged once. Then polls
 * the handle, which nothing else does, so that librdkafka serves the
 * statistics callback (it does so from rd_kafka_poll only), until the
 * handle stops: every wait is bounded by POLL_WAIT_MS. */
static void *lookup_cluster_id(void *arg)
{
    tb_kafka_cluster_t *cluster = arg;
    bool warned = false;
    bool known = false;
    while (!known && !atomic_load(&cluster->stopping)) {
        rd_kafka_poll(cluster->rk, 0);
        char *id = rd_kafka_clusterid(cluster->rk, POLL_WAIT_MS);
        if (id != NULL) {
            pthread_mutex_lock(&cluster->lock);
            cluster->cluster_id = strdup(id);
            pthread_mutex_unlock(&cluster->lock);
            rd_kafka_mem_free(cluster->rk, id);
            TB_LOG(TB_LOG_INFO, "tributary.worker", "Kafka cluster id %s at %s",
                   cluster->cluster_id, cluster->bootstrap);
            known = true;
        } else if (!warned) {
            TB_LOG(TB_LOG_WARN, "tributary.worker",
                   "Kafka cluster at %s not reachable yet; still trying (/health "
                   "answers 503 until it answers)",
                   cluster->bootstrap);
            warned = true;
        }
    }
    while (!atomic_load(&cluster->stopping)) {
        rd_kafka_poll(cluster->rk, POLL_WAIT_MS);
    }
    return NULL;
}

tb_kafka_cluster_t *tb_kafka_cluster_create(const json_t *client_props, bool dev,
                                            char *errstr, size_t errstr_size)
{
    tb_kafka_cluster_t *cluster = calloc(1, sizeof(*cluster));
    rd_kafka_conf_t *conf = NULL;
    json_t *props = json_deep_copy(client_props);

    pthread_mutex_init(&cluster->lock, NULL);
    json_object_set_new(props, "client.id", json_string("tributary-worker"));
    if (dev) {
        json_object_del(props, "bootstrap.servers");
        json_object_set_new(props, "test.mock.num.brokers", json_string("1"));
    }
    /* Statistics feed tributary_kafka_broker_up. Without sparse
     * connections the handle keeps a connection to every broker, also
     * after a broker closes an idle one (connections.max.idle.ms), so a 0
     * means a broker out of reach, not one this idle handle had no use
     * for. A worker property of the same name wins. */
    if (json_object_get(props, "statistics.interval.ms") == NULL) {
        json_object_set_new(props, "statistics.interval.ms",
                            json_string(STATS_INTERVAL_MS));
    }
    if (json_object_get(props, "enable.sparse.connections") == NULL) {
        json_object_set_new(props, "enable.sparse.connections", json_string("false"));
    }
    conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        goto fail;
    }
    rd_kafka_conf_set_stats_cb(conf, stats_cb);
    rd_kafka_conf_set_opaque(conf, cluster);
    cluster->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (cluster->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    if (dev) {
        rd_kafka_mock_cluster_t *mock = rd_kafka_handle_mock_cluster(cluster->rk);
        cluster->bootstrap = strdup(rd_kafka_mock_cluster_bootstraps(mock));
    } else {
        cluster->bootstrap =
            strdup(json_string_value(json_object_get(props, "bootstrap.servers")));
    }
    if (pthread_create(&cluster->lookup_thread, NULL, lookup_cluster_id, cluster) != 0) {
        snprintf(errstr, errstr_size, "cannot start the cluster id lookup thread");
        goto fail;
    }
    cluster->lookup_started = true;
    json_decref(props);
    return cluster;

fail:
    json_decref(props);
    tb_kafka_cluster_destroy(cluster);
    return NULL;
}

void tb_kafka_cluster_destroy(tb_kafka_cluster_t *cluster)
{
    if (cluster == NULL) {
        return;
    }
    atomic_store(&cluster->stopping, true);
    if (cluster->lookup_started) {
        pthread_join(cluster->lookup_thread, NULL);
    }
    if (cluster->rk != NULL) {
        rd_kafka_destroy(cluster->rk);
    }
    broker_gauges_free(cluster->brokers);
    pthread_mutex_destroy(&cluster->lock);
    free(cluster->cluster_id);
    free(cluster->bootstrap);
    free(cluster);
}

const char *tb_kafka_cluster_bootstrap(const tb_kafka_cluster_t *cluster)
{
    return cluster->bootstrap;
}

bool tb_kafka_cluster_id(tb_kafka_cluster_t *cluster, char *buf, size_t size)
{
    pthread_mutex_lock(&cluster->lock);
    bool known = cluster->cluster_id != NULL;
    if (known) {
        snprintf(buf, size, "%s", cluster->cluster_id);
    }
    pthread_mutex_unlock(&cluster->lock);
    return known;
}
