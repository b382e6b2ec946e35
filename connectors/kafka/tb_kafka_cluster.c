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

struct tb_kafka_cluster {
    rd_kafka_t *rk;
    char *bootstrap;
    pthread_t lookup_thread;
    bool lookup_started;
    atomic_bool stopping;
    pthread_mutex_t lock;
    char *cluster_id; /* NULL until known; guarded by lock */
};

/* Asks for the cluster id until it is known or the handle stops; a broker
 * that is down at start is therefore retried, and logged once. */
static void *lookup_cluster_id(void *arg)
{
    tb_kafka_cluster_t *cluster = arg;
    bool warned = false;
    while (!atomic_load(&cluster->stopping)) {
        char *id = rd_kafka_clusterid(cluster->rk, 1000);
        if (id != NULL) {
            pthread_mutex_lock(&cluster->lock);
            cluster->cluster_id = strdup(id);
            pthread_mutex_unlock(&cluster->lock);
            rd_kafka_mem_free(cluster->rk, id);
            TB_LOG(TB_LOG_INFO, "tributary.worker", "Kafka cluster id %s at %s",
                   cluster->cluster_id, cluster->bootstrap);
            return NULL;
        }
        if (!warned) {
            TB_LOG(TB_LOG_WARN, "tributary.worker",
                   "Kafka cluster at %s not reachable yet; still trying",
                   cluster->bootstrap);
            warned = true;
        }
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
    conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        goto fail;
    }
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
