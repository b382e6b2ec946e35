/*
 * tb_dlq.h - the dead letter queue of a connector: records that failed
 * with errors.tolerance=all are produced to a topic, raw as a sink read them
 * or as a source was to write them (offset -1), with Kafka Connect's
 * __connect.errors.* headers when asked for.
 */
#ifndef TB_DLQ_H
#define TB_DLQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"

typedef struct tb_dlq tb_dlq_t;

/* Why a record failed, for the context headers. */
typedef struct {
    const char *connector;
    int task;
    const char *stage;      /* TASK_PUT, KEY_CONVERTER, VALUE_CONVERTER, ... */
    const char *class_name; /* the plugin or converter class that failed */
    const char *reason;
} tb_dlq_context_t;

/* A producer for topic with the worker's client properties (borrowed).
 * NULL and errstr when librdkafka refuses them. */
tb_dlq_t *tb_dlq_create(const json_t *kafka_props, const char *topic,
                        bool context_headers, char *errstr, size_t errstr_size);

/* Queues record (copied) to the dead letter queue. Returns -1 with errstr
 * when librdkafka refuses it at once. */
int tb_dlq_send(tb_dlq_t *dlq, const tb_sink_record_t *record,
                const tb_dlq_context_t *context, char *errstr, size_t errstr_size);

/* Waits up to timeout_ms until every queued record is acknowledged.
 * Returns -1 with errstr when one failed or the time ran out: the caller
 * must not record offsets past those records then. A failed record fails
 * every later flush of this queue too (it is not queued again): the caller
 * fails its task, whose restart reads the record again. */
int tb_dlq_flush(tb_dlq_t *dlq, int timeout_ms, char *errstr, size_t errstr_size);

/* Flushes until deadline_ms (tb_monotonic_ms) and frees; the producer's
 * destroy is waited for until then too (tb_kafka_destroy_within), and
 * goes on in the background past it. NULL is a no-op. */
void tb_dlq_destroy(tb_dlq_t *dlq, int64_t deadline_ms);

#endif
