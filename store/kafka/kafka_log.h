/*
 * kafka_log.h - one compacted Kafka topic used as a log: created if
 * missing, read from its start to its end by a consumer of no group, and
 * written by an idempotent producer whose writes return once the broker
 * acknowledged them. What Connect's workers call a KafkaBasedLog; the
 * Kafka store (tb_store_kafka.c) keeps one per internal topic.
 *
 * A log is not thread-safe: its owner serialises the calls. Functions that
 * can fail return 0 or -1 with a message in errstr.
 */
#ifndef TB_KAFKA_LOG_H
#define TB_KAFKA_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

typedef struct tb_kafka_log tb_kafka_log_t;

typedef struct {
    const char *topic;
    const char *role;       /* the worker key naming it, for messages */
    int partitions;         /* when the topic is created */
    int replication_factor; /* likewise */
    bool single_partition;  /* refuse a topic with more than one partition */
    bool no_create;         /* take the topic as it is: never create it */
    int timeout_ms;         /* bounds open, each read to the end and each write */
} tb_kafka_log_spec_t;

/* A record: value NULL is a tombstone. Borrowed by every call. */
typedef struct {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
} tb_kafka_log_record_t;

typedef void (*tb_kafka_log_cb)(const tb_kafka_log_record_t *record, void *opaque);

/* Sets missing[i] for each of the count topics the cluster conf reaches
 * (borrowed) does not have, from one metadata request of all topics (which
 * no broker answers by creating one), bounded by timeout_ms. */
int tb_kafka_log_find_missing(const rd_kafka_conf_t *conf, const char *const *topics,
                              size_t count, bool *missing, int timeout_ms, char *errstr,
                              size_t errstr_size);

/* Creates the topic, compacted, when it does not exist (unless
 * spec->no_create), checks it and
 * starts reading it from the beginning. conf (borrowed) holds the client
 * settings, security included; each client gets a copy. Reads nothing
 * yet. NULL with errstr on failure. */
tb_kafka_log_t *tb_kafka_log_open(const rd_kafka_conf_t *conf,
                                  const tb_kafka_log_spec_t *spec, char *errstr,
                                  size_t errstr_size);

/* Calls cb for each record, in each partition's order, up to the end
 * offsets the partitions had when the call began. */
int tb_kafka_log_read_to_end(tb_kafka_log_t *log, tb_kafka_log_cb cb, void *opaque,
                             char *errstr, size_t errstr_size);

/* Sends records, in order, each to the partition Java's default
 * partitioner picks for its key (murmur2), and returns once every one is
 * acknowledged by all in-sync replicas, or fails. */
int tb_kafka_log_write(tb_kafka_log_t *log, const tb_kafka_log_record_t *records,
                       size_t count, char *errstr, size_t errstr_size);

/* NULL is a no-op. */
void tb_kafka_log_close(tb_kafka_log_t *log);

#endif
