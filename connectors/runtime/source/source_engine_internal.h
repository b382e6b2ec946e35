/*
 * source_engine_internal.h - the source engine's state, shared by its
 * files and by nothing else (tb_task_engine.h is the engine's public
 * seam):
 *
 *   source_engine.c        start, the at-least-once step, stop; records
 *                          polled from the plugin made ready (upsert,
 *                          transforms, converters)
 *   source_produce.c       the producer and its delivery reports; refused
 *                          records under errors.tolerance
 *   source_shared.c        the worker's shared producers, for at-least-once
 *                          tasks of equal producer properties
 *   source_offsets.c       the ring of source offsets in flight and their
 *                          recording in the store
 *   source_transactions.c  exactly-once: one transaction per batch with
 *                          its offsets in the offsets topic
 *   source_txn_start.c     exactly-once: where a task starts (the offsets
 *                          committed before, an old marker)
 *
 * Ownership: the engine belongs to its task; every pointer in it is the
 * engine's own unless its comment says otherwise.
 *
 * Threads: one pool thread at a time runs the engine's start, steps and
 * stop; librdkafka's callbacks (delivery reports, errors) of a task's own
 * producer run inside rd_kafka_poll and rd_kafka_flush on that thread,
 * except on_queue_event, which only wakes the task. A shared producer's
 * run on its poller thread, which only fills the task's inbox under the
 * producer's lock (source_shared.c); the task applies the reports on its
 * own thread. Nothing else here takes a lock.
 */
#ifndef TB_SOURCE_ENGINE_INTERNAL_H
#define TB_SOURCE_ENGINE_INTERNAL_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/runtime/metrics/tb_task_metrics.h"
#include "connectors/runtime/source/eos/tb_offsets_reader.h"
#include "connectors/runtime/source/eos/tb_progress_marker.h"
#include "connectors/runtime/task/tb_task_engine.h"
#include "connectors/runtime/task/tb_task_retry.h"
#include "connectors/runtime/task/tb_task_transforms.h"

#define RING_SIZE 65536 /* records in flight per task */
#define POLL_BATCH 512  /* records asked of the plugin per step */

/* The transactional call an exactly-once task has under way. */
typedef enum {
    TXN_CALL_NONE = 0, /* between transactions */
    TXN_CALL_INIT,     /* init_transactions: fences the predecessors */
    TXN_CALL_COMMIT,
    TXN_CALL_ABORT,
} txn_call_t;

/* A produced record's place in the ring, until its offset is folded. */
typedef struct {
    json_t *partition;
    json_t *offset;
    int64_t produced_us; /* when it went to librdkafka, for the latency */
    bool delivered;      /* done with: acknowledged, or let go by errors.tolerance */
} in_flight_t;

/* A task's place on a shared producer (source_shared.c). */
typedef struct tb_source_lane tb_source_lane_t;

/* A delivery report of a shared producer, for its task. */
typedef struct {
    uint32_t slot; /* the record's number, modulo RING_SIZE */
    rd_kafka_resp_err_t err;
    int32_t partition;
    int64_t offset;
    const rd_kafka_topic_t *rkt; /* only compared, never used */
    /* a failed record, copied (tb_source_report_free); NULL when delivered */
    tb_sink_record_t *refused;
} tb_source_report_t;

/* What becomes of a polled record. Only a record that failed without
 * errors.tolerance=all holds its source offset back. */
typedef enum {
    PRODUCE = 0,
    SKIP,   /* not written by design (an update_before row) or tolerated */
    FAILED, /* failed: the task fails before its offset is recorded */
    WAIT,   /* a converter asked to try again later (not a final disposition) */
} disposition_t;

typedef struct {
    const tb_task_env_t *env; /* the task's (borrowed) */
    tb_task_context_t ctx;    /* the plugin may keep a pointer to it */
    void *plugin_task;
    rd_kafka_t *rk;         /* the task's own producer, or the shared one of lane */
    tb_source_lane_t *lane; /* on a shared producer (source_shared.c); or NULL */
    uint64_t awaiting;      /* records librdkafka took whose report is to come */
    rd_kafka_topic_t *rkt;  /* the last record's topic (source_produce.c), or NULL */
    const char *rkt_topic;  /* the record topic string rkt was last given for */
    /* Runs of records without a key go to one partition each, the next run
     * to the next partition (source_produce.c), once a record reached rkt's
     * topic (librdkafka knows its partitions then); only where the
     * partitioner spreads such records at random anyway */
    bool spread_keyless;
    bool rkt_delivered;
    int32_t rkt_next_partition;
    tb_converter_t *key_converter;
    tb_converter_t *value_converter;
    tb_chain_t *chain; /* NULL: no transforms */
    /* no upsert, no transforms, pass-through converters: a polled record
     * goes to Kafka with the plugin's bytes (borrowed ones copied by
     * librdkafka) */
    bool bytes_as_polled;
    bool tolerate_errors;
    tb_dlq_t *dlq; /* records Kafka refused, with errors.tolerance=all; or NULL */
    /* source_offsets.c, fed by source_produce.c */
    in_flight_t *ring;
    uint64_t next_seq;      /* number of the next record produced */
    uint64_t head_seq;      /* oldest record not yet folded into committable */
    json_t *committable;    /* canonical partition text -> {partition, offset} */
    json_t *topics;         /* topics written to: name -> true */
    const char *last_topic; /* the topic of the last record produced (in topics) */
    int64_t served_us;      /* when librdkafka last served delivery reports */
    /* The delivery reports served since the last tb_source_count_delivered:
     * the records acknowledged, and the latest run of reports of one
     * latency (the records of a produced batch served together share it) */
    uint64_t acknowledged;
    int64_t run_latency_us;
    uint64_t run_count;
    json_t *last_partition; /* the source partition last folded, and its key */
    char *last_key;
    tb_source_record_t batch[POLL_BATCH];
    disposition_t disposition[POLL_BATCH]; /* what becomes of batch[i] */
    rd_kafka_message_t run[POLL_BATCH];    /* a run of batch for librdkafka */
    size_t batch_len;
    size_t batch_pos;
    /* batch[0, prepared) have their disposition; batch[prepared] waits for
     * a converter's retry at retry_at_ms, reshaped (upsert and chain done)
     * and with the sides in done already Kafka bytes, the sides in typed
     * Connect data (the plugin's or the chain's) for the converters */
    size_t prepared;
    bool reshaped;
    bool done[2];
    bool typed[2];
    tb_task_retry_t retry;
    int64_t retry_at_ms;
    int64_t last_flush_ms;
    char failure[1024]; /* a failure that fails the task */
    tb_task_metrics_t metrics;
    tb_source_metrics_t source_metrics;
    json_t *error_series;          /* delivery error name -> its counter (a pointer) */
    const json_t *primary_key;     /* write.mode=upsert: its fields; else NULL */
    const char *message_id_header; /* or NULL */
    /* exactly-once only: source_transactions.c */
    bool transactional;
    char txn_id[300]; /* the transactional id */
    tb_offsets_topic_t offsets_topic;
    bool offsets_in_store;         /* the store is the offsets topic (distributed) */
    rd_kafka_topic_t *offsets_rkt; /* the offsets topic, murmur2-partitioned */
    const char *marker_topic;      /* where an old progress marker may be, or NULL */
    /* the start, once the predecessors are fenced: the offsets committed
     * before are read, then (no task record) the old progress marker */
    tb_offsets_reader_t *offsets_reader;
    tb_progress_marker_query_t *marker_query;
    bool fencing_asked;          /* the fencing was asked (a wait is logged once) */
    bool fencing_passed;         /* the generation's fencing let the task start */
    int64_t start_hold_until_ms; /* test seam: the task's start waits till then */
    /* canonical partition -> {partition, offset, key?}: what the plugin is
     * given (the offsets topic's, or the store's, at start; then those of
     * the last committed transaction) */
    json_t *start_offsets;
    bool start_from_topic; /* start_offsets are the offsets topic's */
    /* canonical partition -> {partition, offset|null}: what the plugin was
     * given, written again by the first transaction when write_given */
    json_t *given;
    bool write_given;
    int64_t transactions; /* the task's transactions committed so far */
    int64_t generation;   /* the offsets generation it runs in */
    bool marker_missing;  /* no task record, no marker: a stored offset refuses */
    bool stored_history;  /* the plugin found a stored offset of its own */
    size_t txn_max_records;
    size_t txn_max_bytes;
    size_t txn_size; /* records in the next attempt (halved on aborts) */
    int aborts;      /* attempts aborted in a row */
    bool txn_delivery_failed;
    txn_call_t txn_call;       /* attempted once a step until it is over */
    int64_t txn_call_since_ms; /* its first attempt; 0: not attempted yet */
    bool txn_call_warned;      /* its wait was logged */
    /* the open transaction: its source offsets (owned) and records, from
     * batch_pos */
    json_t *txn_offsets;
    size_t txn_count;
    /* where Kafka put each record of the open transaction, by its index in
     * batch (offset -1: not acknowledged), told to record_written once the
     * transaction commits */
    int32_t txn_written_partition[POLL_BATCH];
    int64_t txn_written_offset[POLL_BATCH];
    char txn_reason[1024]; /* why the open transaction is being aborted */
} source_engine_t;

/* source_engine.c */

/* Frees a polled record's data and clears it. */
void tb_source_free_record(tb_source_record_t *record);

/* Counts a polled batch in the task's metrics. */
void tb_source_count_polled(source_engine_t *engine);

/* Decides the disposition of the polled records from engine->prepared on,
 * once a converter's retry (tb_task_retry.h) is due. Returns 0 when every
 * one has its disposition, else how long to wait (ms) before the converter
 * of batch[prepared] is tried again. */
int64_t tb_source_prepare_batch(source_engine_t *engine);

/* Starts the plugin: an exactly-once task's once the offsets its
 * predecessors committed are known. */
int tb_source_start_plugin(source_engine_t *engine, char *errstr, size_t errstr_size);

/* source_produce.c */

/* Sets engine->rk: the task's own producer, its delivery reports, errors
 * and queue event routed to engine; or for an at-least-once task on a
 * worker that shares producers, the shared one of props
 * (tb_source_shared_join). -1 with errstr. */
int tb_source_producer_open(source_engine_t *engine, json_t *props, char *errstr,
                            size_t errstr_size);

/* Destroys engine->rk (set to NULL) within tb_kafka_destroy_within's
 * bound, its queue event routed nowhere first: a destroy that does not
 * finish by deadline_ms goes on in the background, and never calls into
 * the task. Returns whether it finished. */
bool tb_source_producer_destroy(source_engine_t *engine, int64_t deadline_ms);

/* Serves the delivery reports waiting: rd_kafka_poll of the task's own
 * producer, or its inbox on a shared one. */
void tb_source_serve_reports(source_engine_t *engine);

/* Applies the delivery report of record seq (not transactional): the ring
 * entry marked delivered, or the refused record failed or let go. */
void tb_source_apply_report(source_engine_t *engine, uint64_t seq,
                            const tb_source_report_t *report);

/* The record of a failed delivery report, borrowed from msg. *headers gets
 * an array of its headers, borrowed from msg (free() the array; NULL:
 * none). */
tb_sink_record_t tb_source_refused_record(const rd_kafka_message_t *msg,
                                          tb_header_t **headers);

/* Hands one record to librdkafka (flags: F_FREE or F_COPY) with its
 * headers: the ones the chain left, then its message id when
 * message.id.header is set; no headers object when it has none. Its
 * timestamp is timestamp_ms, or with 0 the time librdkafka reads itself. */
rd_kafka_resp_err_t tb_source_produce_record(source_engine_t *engine,
                                             tb_source_record_t *record, int flags,
                                             int64_t timestamp_ms, void *opaque);

/* Produces the polled records not yet handed to librdkafka that have their
 * disposition (up to engine->prepared), each numbered in the ring. Returns
 * false when librdkafka's queue or the ring is full. */
bool tb_source_produce_batch(source_engine_t *engine);

/* Counts the delivery reports served since the last call into the task's
 * metrics (records written, the produce latency histogram): called after
 * each rd_kafka_poll and rd_kafka_flush, so that a report costs no atomic
 * update of its own. */
void tb_source_count_delivered(source_engine_t *engine);

/* source_shared.c */

/* Joins engine (at-least-once) to the worker's shared producer of props
 * (the task's final producer properties; client.id aside), made on first
 * use: sets engine->rk and engine->lane. -1 with errstr. */
int tb_source_shared_join(source_engine_t *engine, json_t *props, char *errstr,
                          size_t errstr_size);

/* The opaque of record seq of lane: its lane and place in the ring. */
void *tb_source_shared_opaque(const tb_source_lane_t *lane, uint64_t seq);

/* Applies the reports waiting in the task's inbox, and a final error of the
 * shared producer (engine->failure). */
void tb_source_shared_serve(source_engine_t *engine);

/* Serves the task's reports until none of its records awaits one, a
 * failure, or deadline_ms. */
void tb_source_shared_wait(source_engine_t *engine, int64_t deadline_ms);

/* Leaves the shared producer (engine->rk and lane set to NULL); the last
 * task to leave destroys it within deadline_ms. Reports of the task's
 * records that come later are dropped. Returns whether a destroy, if any,
 * finished. */
bool tb_source_shared_leave(source_engine_t *engine, int64_t deadline_ms);

/* Frees what a report holds (its refused record). */
void tb_source_report_free(tb_source_report_t *report);

/* source_offsets.c */

/* Folds acknowledged records, oldest first, into the offsets to record. */
void tb_source_advance_head(source_engine_t *engine);

/* Records the offsets folded so far, once the dead letter queue has every
 * record let go before them. */
int tb_source_flush_offsets(source_engine_t *engine, char *errstr, size_t errstr_size);

/* tb_task_context_t's offset_for: the stored offset of one source
 * partition, for the plugin at start (an exactly-once task's from
 * tb_source_txn_offset). */
json_t *tb_source_stored_offset(void *runtime, const json_t *partition);

/* source_transactions.c and source_txn_start.c */

/* A transactional call or a start's fencing holds a pool thread for at
 * most this long a step. */
#define TB_TXN_STEP_MS 500

/* source_txn_start.c */

/* Once the producer exists: the offsets topic's handle and the reader of
 * what the predecessors committed. -1 with errstr. */
int tb_source_txn_producer_ready(source_engine_t *engine, char *errstr,
                                 size_t errstr_size);

/* Once the plugin has asked for its offsets: fails (-1 with errstr) a
 * start with no record of a committed transaction whose plugin found
 * stored offsets of its own, unless exactly.once.allow.missing.marker=true;
 * else makes the store agree with what the plugin was given. */
int tb_source_txn_started(source_engine_t *engine, char *errstr, size_t errstr_size);

/* The offset an exactly-once task's plugin is given for partition (new, or
 * NULL: none), remembered for the first transaction: the one it started
 * from until a transaction of it commits, then the last committed one (a
 * plugin asks again after a lost connection). */
json_t *tb_source_txn_offset(source_engine_t *engine, const json_t *partition);

/* A transaction committed with offsets (the store's array of {partition,
 * offset}; a null offset removes its partition's): tb_source_txn_offset
 * answers them from now on. */
void tb_source_txn_offsets_committed(source_engine_t *engine, const json_t *offsets);

/* Tells the task what its start waits for, shown in its status while it
 * is UNASSIGNED, or that it waits for nothing (what NULL). Copied. */
void tb_source_start_waits_for(const source_engine_t *engine, const char *what);

/* The start after fencing, one bounded step: reading the offsets topic,
 * then the old marker when needed, then (task 0) fencing the removed
 * tasks, then the plugin. */
int64_t tb_source_txn_start_step(source_engine_t *engine, char *errstr,
                                 size_t errstr_size);

/* An object of {partition, offset, ...} (start_offsets, given) as the
 * store's array of {partition, offset} (a new one). */
json_t *tb_source_txn_offsets_array(const json_t *by_partition);

/* source_transactions.c */

/* Makes the producer's props (changed) and the engine transactional; -1
 * with errstr when the connector's settings refuse transactions. */
int tb_source_txn_setup(source_engine_t *engine, json_t *props, char *errstr,
                        size_t errstr_size);

/* A step of an exactly-once task. */
int64_t tb_source_transactional_step(source_engine_t *engine, bool paused, char *errstr,
                                     size_t errstr_size);

/* Forgets the open transaction's offsets and size. */
void tb_source_txn_clear(source_engine_t *engine);

/* Releases what the exactly-once start and transactions hold (not the
 * producer). */
void tb_source_txn_destroy(source_engine_t *engine);

#endif
