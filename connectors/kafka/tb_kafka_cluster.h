/*
 * tb_kafka_cluster.h - the worker's own link to its Kafka cluster.
 *
 * One librdkafka handle per worker, used to learn the cluster id (GET /
 * reports it) and, in dev mode, to host librdkafka's in-process mock
 * cluster that every task then connects to. Task clients are separate.
 *
 * The handle keeps a connection to every broker of the cluster and reports
 * them as tributary_kafka_broker_up{broker}: 1 while the connection to a
 * broker is in state UP, else 0, from librdkafka's statistics
 * (statistics.interval.ms, 5000 unless the worker's properties set it). A
 * background thread polls the handle to have them delivered until destroy.
 */
#ifndef TB_KAFKA_CLUSTER_H
#define TB_KAFKA_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct tb_kafka_cluster tb_kafka_cluster_t;

/* Connects with client_props (an object of librdkafka properties, including
 * bootstrap.servers unless dev is set). With dev set, starts an in-process
 * mock cluster of one broker on a loopback port instead. Returns NULL and
 * fills errstr on failure. The cluster id is looked up in the background. */
tb_kafka_cluster_t *tb_kafka_cluster_create(const json_t *client_props, bool dev,
                                            char *errstr, size_t errstr_size);

/* Stops the handle (and the mock cluster). NULL is a no-op. */
void tb_kafka_cluster_destroy(tb_kafka_cluster_t *cluster);

/* The bootstrap servers clients should use (the mock cluster's in dev
 * mode). Borrowed; valid until destroy. */
const char *tb_kafka_cluster_bootstrap(const tb_kafka_cluster_t *cluster);

/* Copies the cluster id into buf; returns false while it is not known yet. */
bool tb_kafka_cluster_id(tb_kafka_cluster_t *cluster, char *buf, size_t size);

#endif
