/*
 * sink_engine_internal.h - the sink engine's state, shared by its files and
 * by nothing else (tb_task_engine.h is the engine's public seam):
 *
 *   sink_engine.c      the consumer (its properties, subscription,
 *                      statistics and close), start, the step, stop
 *   sink_partitions.c  the partitions assigned: rebalances, where each
 *                      starts (tb_sink_start.h), out-of-range offsets,
 *                      pause and hold, their gauges
 *   sink_batch.c       the batch: consumed, converted and transformed,
 *                      put to the plugin; failed records under
 *                      errors.tolerance
 *   sink_offsets.c     the plugin's flush, offsets recorded in the store
 *                      and committed to the group
 *
 * Ownership: the engine belongs to its task; every pointer in it is the
 * engine's own unless its comment says otherwise.
 *
 * Threads: one pool thread at a time runs the engine's start, steps and
 * stop; librdkafka's callbacks (rebalances, commits, statistics, errors)
 * run inside the engine's consumer polls on that thread, except
 * on_queue_event, which only wakes the task. Nothing here takes a lock.
 */
#ifndef TB_SINK_ENGINE_INTERNAL_H
#define TB_SINK_ENGINE_INTERNAL_H

#include <librdkafka/rdkafka.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/runtime/metrics/tb_task_metrics.h"
#include "connectors/runtime/sink/tb_sink_start.h"
#include "connectors/runtime/task/tb_task_engine.h"
#include "connectors/runtime/task/tb_task_retry.h"
#include "connectors/runtime/task/tb_task_transforms.h"

#define BATCH_MAX 1024

/* An assigned partition. */
typedef struct {
    char *topic;
    int32_t partition;
    int64_t start;        /* where reading started */
    int64_t expected;     /* the next offset accepted; lower ones are stale */
    int64_t written_next; /* after the last record the plugin took; NONE */
    int64_t recorded;     /* what was last recorded in the store; NONE */
    int64_t acked;        /* what the broker acknowledged for the group; NONE */
    int64_t idle_since;   /* since when librdkafka has not been fetching it; 0 */
    /* the consumer's position lies past no record but those taken and
     * those librdkafka skips itself (commit markers, aborted records):
     * false from a pause, seek or assign again of the partition, or a
     * record of it dropped, until it gives a record again (librdkafka 2.0.2
     * moves the position over records it purges at a pause or resume, and
     * over records handed out and dropped here) */
    bool position_exact;
    bool stopped;           /* not read: see the log line that said why */
    int start_attempts;     /* failed attempts to resolve where it starts */
    int64_t retry_start_ms; /* when to try again (monotonic); 0: not waiting */
    char waiting_for[320];  /* while retry_start_ms is set: what for */
    tb_partition_metrics_t metrics;
} partition_t;

typedef struct {
    const tb_task_env_t *env; /* the task's (borrowed) */
    tb_task_context_t ctx;    /* the plugin keeps a pointer to it */
    void *plugin_task;
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
    tb_converter_t *key_converter;
    tb_converter_t *value_converter;
    tb_chain_t *chain; /* NULL: no transforms */
    tb_dlq_t *dlq;
    /* sink_partitions.c */
    partition_t *parts;
    size_t part_count;
    tb_reset_policy_t reset;
    bool tolerate_errors;
    bool log_errors;
    bool log_messages; /* errors.log.include.messages: key and value too */
    bool read_headers; /* the plugin reads them, or the DLQ copies them */
    bool paused;
    int64_t revoked_us; /* tb_monotonic_us() of the last revocation; 0 once assigned */
    /* every partition paused while a put or flush waits for its retry: the
     * consumer is still polled (rebalances, max.poll.interval.ms) */
    bool held;
    int64_t retry_at_ms; /* when the held put, flush or conversion is tried again */
    tb_task_retry_t retry;
    int64_t plugin_retry_ms; /* the plugin's own delay for its retry; 0: none */
    /* the hold is the plugin's TB_RESULT_BUSY, which its wake() ends */
    bool busy;
    /* the plugin's wake() came (set from any thread): put() is called,
     * with no records when none wait */
    atomic_bool plugin_woken;
    /* sink_batch.c: a batch the plugin has not taken yet (retriable
     * failure); records from converted on wait for a converter's retry
     * (records[] zeroed) */
    rd_kafka_message_t *batch[BATCH_MAX];
    tb_sink_record_t records[BATCH_MAX];
    bool key_owned[BATCH_MAX]; /* records[i].key was made by a converter */
    bool value_owned[BATCH_MAX];
    tb_record_t transformed[BATCH_MAX]; /* what the chain made of records[i] */
    size_t batch_len;
    size_t converted;
    size_t batch_max; /* max.poll.records, at most BATCH_MAX */
    int64_t last_flush_ms;
    int64_t last_metrics_ms;
    int64_t stop_deadline_ms; /* set by sink_stop; 0 while running */
    char failure[1024];       /* a record that failed with errors.tolerance=none */
    tb_task_metrics_t metrics;
} sink_engine_t;

/* sink_partitions.c */

/* Partition partition of topic, or NULL when it is not assigned here. */
partition_t *tb_sink_find_part(sink_engine_t *e, const char *topic, int32_t partition);

/* The partition of the last message looked up (messages come in runs of
 * one partition). Starts zeroed; valid while its messages are held and no
 * partition is added or removed. */
typedef struct {
    const rd_kafka_topic_t *rkt;
    int32_t partition;
    partition_t *part;
} part_run_t;

/* The partition msg was read from, as tb_sink_find_part, looked up again
 * only when msg starts a new run. */
partition_t *tb_sink_part_of(sink_engine_t *e, part_run_t *run,
                             const rd_kafka_message_t *msg);

/* Forgets p (its gauges released); the last partition takes its place. */
void tb_sink_remove_part(sink_engine_t *e, partition_t *p);

/* The consumer's rebalance callback. */
void tb_sink_on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t *list, void *opaque);

/* Decides again, as at start, where a partition whose offset librdkafka
 * found out of range goes on, and assigns it again. */
void tb_sink_handle_out_of_range(sink_engine_t *e, const char *topic, int32_t partition);

/* Resolves again the start of every partition whose wait is over. */
void tb_sink_retry_waiting_starts(sink_engine_t *e);

/* The connector's pause and resume (a held task stays held). */
void tb_sink_set_paused(sink_engine_t *e, bool paused);

/* Holds the partitions while a put or flush waits for its retry, or reads
 * them again. */
void tb_sink_set_held(sink_engine_t *e, bool held);

/* Refreshes each partition's position, end offset and lag gauges. */
void tb_sink_update_partition_metrics(sink_engine_t *e);

/* sink_batch.c */

/* Collects the messages already waiting into the pending batch, converted
 * and transformed. */
void tb_sink_consume(sink_engine_t *e);

/* Converts the pending records whose conversion waited for a converter's
 * retry (tb_task_retry.h). Returns whether one still waits: the partitions
 * are held until e->retry_at_ms. */
bool tb_sink_convert_waiting(sink_engine_t *e);

/* Hands the pending batch to the plugin (an empty one only after the
 * plugin's wake). Returns 0 when it was taken (or is empty),
 * TB_RESULT_RETRY, TB_RESULT_BUSY, or -1 with errstr. */
int tb_sink_put_batch(sink_engine_t *e, char *errstr, size_t errstr_size);

/* Drops the pending records of p (revoked). */
void tb_sink_drop_pending(sink_engine_t *e, const partition_t *p);

/* Frees the pending batch. */
void tb_sink_release_batch(sink_engine_t *e);

/* Connect's SinkTaskContext.timeout: the plugin's delay for its retry
 * (tb_task_context_t.retry_after). */
void tb_sink_retry_after(void *runtime, int64_t ms);

/* tb_task_context_t's wake: the plugin asks for a put(). */
void tb_sink_wake(void *runtime);

/* tb_task_context_t's record_failed: a record the plugin could not
 * write, under errors.tolerance. */
void tb_sink_record_failed(void *runtime, const tb_sink_record_t *record,
                           const char *reason);

/* tb_task_context_t's failed_delivered: the dead letter queue flushed. */
int tb_sink_failed_delivered(void *runtime, char *errstr, size_t errstr_size);

/* sink_offsets.c */

/* Flushes the plugin and the dead letter queue, records the offsets that
 * moved in the store and commits to the group (sync: at once, within the
 * stop's bound), of every partition or of those in only (borrowed; NULL:
 * every one). Returns 0, TB_RESULT_RETRY, or -1 with errstr. */
int tb_sink_flush_offsets(sink_engine_t *e, bool sync,
                          rd_kafka_topic_partition_list_t *only, char *errstr,
                          size_t errstr_size);
/* Sets Connect's sink-record-active-count (e->metrics.active): the offsets
 * read from each partition past the one last recorded, as Connect counts
 * the consumed past the committed. After a read and after a commit. */
void tb_sink_count_active(sink_engine_t *e);

/* The consumer's offset commit callback. */
void tb_sink_on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                       rd_kafka_topic_partition_list_t *offsets, void *opaque);

/* Serves queue's callbacks until done(rk, arg) or deadline_ms (monotonic).
 * Returns whether done came true. Records that reach the queue (a closing
 * consumer forwards its own queue to it) are dropped: they lie past what was
 * recorded, and the partitions' next owner reads them again. */
bool tb_sink_serve_until(rd_kafka_t *rk, rd_kafka_queue_t *queue,
                         bool (*done)(rd_kafka_t *rk, const void *arg), const void *arg,
                         int64_t deadline_ms);

/* When a commit or close at revocation or stop gives up. */
int64_t tb_sink_sync_deadline(const sink_engine_t *e);

#endif
