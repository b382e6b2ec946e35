/*
 * tb_herder.h - the worker's herder: one function per REST operation.
 *
 * As in Kafka Connect, the herder owns connectors and their tasks: it keeps
 * their configs and target states in the store, starts and stops tasks on
 * the task pool, and answers status. The REST layer calls it and translates
 * the result; nothing here knows about HTTP.
 */
#ifndef TB_HERDER_H
#define TB_HERDER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_error.h"

typedef struct tb_herder tb_herder_t;

typedef struct {
    const char *store_path;    /* the store file */
    const json_t *kafka_props; /* worker-level librdkafka properties */
    bool dev;                  /* run an in-process mock Kafka cluster */
    const char *worker_id;     /* host:port shown in status */
} tb_herder_options_t;

/* Opens the store, connects to Kafka (in the background), loads every
 * stored connector and starts it in its target state. Returns NULL and fills
 * errstr on failure. */
tb_herder_t *tb_herder_create(const tb_herder_options_t *options, char *errstr,
                              size_t errstr_size);

/* Stops every task gracefully (recording offsets) and releases everything.
 * NULL is a no-op. */
void tb_herder_destroy(tb_herder_t *herder);

typedef enum {
    TB_HEALTH_STARTING = 0,
    TB_HEALTH_HEALTHY,
    TB_HEALTH_UNHEALTHY,
} tb_health_t;

/* The worker's health, with a sentence saying why, as /health shows it. */
tb_health_t tb_herder_health(tb_herder_t *herder, char *message, size_t message_size);

/* Copies the Kafka cluster id into buf; false while it is not known. */
bool tb_herder_cluster_id(tb_herder_t *herder, char *buf, size_t size);

/* The bootstrap servers tasks use (the mock cluster's in dev mode). */
const char *tb_herder_bootstrap(const tb_herder_t *herder);

#endif
