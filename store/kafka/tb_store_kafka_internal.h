/*
 * tb_store_kafka_internal.h - what the Kafka store's files share: the
 * store's state and the functions that apply Connect's records to it.
 *
 * tb_store_kafka.c writes records and, once they are acknowledged, applies
 * them; store_kafka_apply.c holds the appliers, which also apply every
 * record a refresh reads. Both run under the store's lock.
 *
 * Locks, in this order: a topic's io lock serialises the calls on its log
 * (a write with the reading of what it changes, a read to the end) and is
 * held across the broker's round trips; the store's lock guards the state
 * below and is held only while it is read or changed, never across a call
 * to the broker, so that a status, an offsets or a connector read never
 * waits on a slow broker. No one holds two io locks at once.
 */
#ifndef TB_STORE_KAFKA_INTERNAL_H
#define TB_STORE_KAFKA_INTERNAL_H

#include <pthread.h>

#include <jansson.h>

#include "store/kafka/kafka_log.h"
#include "store/tb_store_backend.h"

typedef enum {
    TB_LOG_CONFIG = 0,
    TB_LOG_OFFSETS,
    TB_LOG_STATUS,
    TB_LOG__COUNT,
} tb_log_id_t;

typedef struct {
    tb_store_t base;                   /* first: the ops table */
    pthread_mutex_t lock;              /* the state, below */
    pthread_mutex_t io[TB_LOG__COUNT]; /* each log's calls */
    tb_kafka_log_t *logs[TB_LOG__COUNT];
    char *worker_id;
    int generation;
    int highest_generation; /* of the status records read */
    json_t *connectors;
    json_t *status;
    json_t *offsets;
    json_t *changed;  /* while a refresh applies records: the names reported */
    json_t *restarts; /* restart requests read by refreshes, not yet taken */
    /* connector -> {"count":N (of its last tasks-fencing record, when one
     * was read), "pending":true (task configs committed after it)} */
    json_t *fencing;
} tb_kafka_store_t;

/* One applier per topic, indexed by tb_log_id_t: each takes the store as
 * its opaque and applies one record read from (or written to) that topic. */
extern const tb_kafka_log_cb tb_store_kafka_appliers[TB_LOG__COUNT];

#endif
