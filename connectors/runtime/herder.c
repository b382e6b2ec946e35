#include "connectors/runtime/tb_herder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_cluster.h"
#include "core/tb_log.h"
#include "store/tb_store.h"

struct tb_herder {
    tb_store_t *store;
    tb_kafka_cluster_t *cluster;
    char *worker_id;
};

tb_herder_t *tb_herder_create(const tb_herder_options_t *options, char *errstr,
                              size_t errstr_size)
{
    tb_herder_t *herder = calloc(1, sizeof(*herder));
    herder->worker_id = strdup(options->worker_id);
    herder->store = tb_store_open(options->store_path, errstr, errstr_size);
    if (herder->store == NULL) {
        goto fail;
    }
    herder->cluster =
        tb_kafka_cluster_create(options->kafka_props, options->dev, errstr, errstr_size);
    if (herder->cluster == NULL) {
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
    tb_kafka_cluster_destroy(herder->cluster);
    tb_store_close(herder->store);
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
