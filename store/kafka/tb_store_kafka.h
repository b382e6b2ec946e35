/*
 * tb_store_kafka.h - the store of tb_store.h kept in Kafka Connect's three
 * internal topics, in Connect's formats (connect_records.h), so that
 * Kafka's tools and Connect 3.9 workers read what it writes and it reads
 * what they wrote. For distributed mode; docs/ARCHITECTURE.md ("Kafka
 * store") gives the formats and decisions.
 *
 * At open the store creates each topic that is missing (compacted, with
 * the given partitions and replication factor), refuses a topic that is
 * not compacted and a config topic of more than one partition, and reads
 * every topic to its end to build its state. Every write returns once the
 * broker acknowledged it (idempotent producer, acks=all) and is applied to
 * the state at once; tb_store_refresh() reads what other writers wrote.
 *
 * Where it differs from the SQLite store:
 *  - tb_store_connector_put writes only the records whose content changed,
 *    in Connect's order: target-state-<c>, connector-<c>, then the task
 *    configs task-<c>-<n> and commit-<c>. The task configs are atomic (a
 *    reader applies them at their commit record), the three groups are
 *    not: a crash between them leaves the new config with the old tasks,
 *    which the owner regenerates, as Connect's leader does.
 *  - tb_store_connector_delete tombstones the config and target state,
 *    then the statuses (another topic): not one transaction.
 *  - a task config must be an object of strings, as Connect's are.
 *  - status entries also hold "worker_id" and "generation"; a status that
 *    another worker wrote in a newer generation than this store's is not
 *    overwritten (the put succeeds and writes nothing), as in Connect.
 *  - tb_store_mode_bind always binds TB_STORE_MODE_KAFKA.
 *  - tb_store_restart_request writes restart-connector-<c>; a refresh
 *    keeps each such record it reads (its own too) for
 *    tb_store_restarts_take.
 */
#ifndef TB_STORE_KAFKA_H
#define TB_STORE_KAFKA_H

#include <stdbool.h>
#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "store/tb_store.h"

/* One internal topic; partitions and replication factor are used when it
 * is created (the config topic always has one partition). */
typedef struct {
    const char *name;
    int partitions;
    int replication_factor;
} tb_store_kafka_topic_t;

typedef struct {
    const rd_kafka_conf_t *conf;    /* client settings, security included; copied */
    tb_store_kafka_topic_t config;  /* config.storage.topic */
    tb_store_kafka_topic_t offsets; /* offset.storage.topic */
    tb_store_kafka_topic_t status;  /* status.storage.topic */
    const char *worker_id;          /* written in status records */
    int generation;                 /* likewise */
    /* Raise generation to the highest the status topic holds at open, so
     * that the statuses another cluster's workers wrote (Connect's, taken
     * over) are not newer than this store's and can be overwritten. */
    bool generation_of_topic;
    /* internal.topics.automatic.creation.enable=false (KIP-1209): open
     * fails on a topic that does not exist instead of creating it (the
     * worker names the missing ones first: tb_kafka_log_find_missing). */
    bool no_topic_creation;
    int timeout_ms; /* bound of open, each write and each refresh; 0: 30000 */
} tb_store_kafka_options_t;

/* Opens the store over the three topics (options borrowed). NULL with
 * errstr on failure; close it with tb_store_close(). */
tb_store_t *tb_store_kafka_open(const tb_store_kafka_options_t *options, char *errstr,
                                size_t errstr_size);

#endif
