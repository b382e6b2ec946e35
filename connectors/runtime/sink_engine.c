/*
 * The sink engine: reads the connector's topics in its consumer group, hands
 * batches to the plugin, and records offsets once the plugin has flushed.
 *
 * The store is the authority for where to resume; the group is committed
 * after the store, best effort, so that Kafka's tools see the job. Start
 * offsets are resolved to concrete numbers before assign (tb_sink_start.h).
 * What is committed is the consumer's position when every record fetched
 * from a partition was written, so that commit markers and aborted records
 * of transactional topics do not show as lag.
 *
 * librdkafka 2.0.2's batch consume can hand out stale messages after a seek,
 * pause or rebalance: every partition keeps the next offset it expects, and
 * anything below it is dropped.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/kafka/tb_dlq.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_kafka_stats.h"
#include "connectors/runtime/tb_connector_config.h"
#include "connectors/runtime/tb_record_log.h"
#include "connectors/runtime/tb_sink_start.h"
#include "connectors/runtime/tb_task_metrics.h"
#include "connectors/runtime/tb_task_retry.h"
#include "connectors/runtime/tb_task_transforms.h"
#include "connectors/runtime/tb_task_engine.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define BATCH_MAX 1024
/* A query to Kafka holds a pool thread for at most QUERY_STEP_MS; a
 * partition whose query got no answer waits and is resolved again at a later
 * step (retry_waiting_starts). */
#define QUERY_STEP_MS 1000
#define SEEK_TIMEOUT_MS 10000 /* served by librdkafka's own threads */

typedef struct {
    char *topic;
    int32_t partition;
    int64_t start;          /* where reading started */
    int64_t expected;       /* the next offset accepted; lower ones are stale */
    int64_t written_next;   /* after the last record the plugin took; NONE */
    int64_t recorded;       /* what was last recorded in the store; NONE */
    int64_t acked;          /* what the broker acknowledged for the group; NONE */
    int64_t idle_since;     /* since when librdkafka has not been fetching it; 0 */
    bool stopped;           /* not read: see the log line that said why */
    int start_attempts;     /* failed attempts to resolve where it starts */
    int64_t retry_start_ms; /* when to try again (monotonic); 0: not waiting */
    char waiting_for[320];  /* while retry_start_ms is set: what for */
    tb_partition_metrics_t metrics;
} partition_t;

typedef struct {
    const tb_task_env_t *env;
    tb_task_context_t ctx; /* the plugin keeps a pointer to it */
    void *plugin_task;
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
    tb_converter_t *key_converter;
    tb_converter_t *value_converter;
    tb_chain_t *chain; /* NULL: no transforms */
    tb_dlq_t *dlq;
    partition_t *parts;
    size_t part_count;
    tb_reset_policy_t reset;
    bool tolerate_errors;
    bool log_errors;
    bool log_messages; /* errors.log.include.messages: key and value too */
    bool read_headers; /* the plugin reads them, or the DLQ copies them */
    bool paused;
    /* every partition paused while a put or flush waits for its retry: the
     * consumer is still polled (rebalances, max.poll.interval.ms) */
    bool held;
    int64_t retry_at_ms; /* when the held put, flush or conversion is tried again */
    tb_task_retry_t retry;
    /* a batch the plugin has not taken yet (retriable failure); records from
     * converted on wait for a converter's retry (records[] zeroed) */
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

#define METRICS_INTERVAL_MS 1000
/* How often a held task polls its consumer (well inside the smallest
 * max.poll.interval.ms a group accepts). */
#define POLL_HELD_MS 1000
#define STATS_INTERVAL "5000"
/* A partition librdkafka has not been fetching for this long is stuck (in
 * librdkafka 2.0.2, a NOT_COORDINATOR on an offset fetch can leave it so
 * forever): the task fails, and its restart makes a new consumer. */
#define STUCK_MS 60000

/* -------------------------------------------------------------------------
 * Partitions
 */

static partition_t *find_part(sink_engine_t *e, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < e->part_count; i++) {
        if (e->parts[i].partition == partition && strcmp(e->parts[i].topic, topic) == 0) {
            return &e->parts[i];
        }
    }
    return NULL;
}

static partition_t *add_part(sink_engine_t *e, const char *topic, int32_t partition)
{
    partition_t *grown = realloc(e->parts, (e->part_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return NULL;
    }
    e->parts = grown;
    partition_t *p = &e->parts[e->part_count++];
    *p = (partition_t){.topic = strdup(topic),
                       .partition = partition,
                       .written_next = TB_OFFSET_NONE,
                       .recorded = TB_OFFSET_NONE,
                       .acked = TB_OFFSET_NONE};
    tb_partition_metrics_take(&p->metrics, e->env->connector, e->env->id, topic,
                              partition);
    return p;
}

static void remove_part(sink_engine_t *e, partition_t *p)
{
    tb_partition_metrics_release(&p->metrics);
    free(p->topic);
    *p = e->parts[--e->part_count];
}

/* The stored offset of a partition, or TB_OFFSET_NONE. */
static int64_t stored_offset(const json_t *stored, const char *topic, int32_t partition)
{
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)stored, i, entry) {
        json_t *key = json_object_get(entry, "partition");
        json_t *offset =
            json_object_get(json_object_get(entry, "offset"), "kafka_offset");
        const char *stored_topic = json_string_value(json_object_get(key, "kafka_topic"));
        if (json_is_integer(offset) && stored_topic != NULL &&
            strcmp(stored_topic, topic) == 0 &&
            json_integer_value(json_object_get(key, "kafka_partition")) == partition) {
            return json_integer_value(offset);
        }
    }
    return TB_OFFSET_NONE;
}

/* -------------------------------------------------------------------------
 * Offsets: flush the plugin, record in the store, commit to the group
 */

/* What to record for p: the consumer position when every record fetched
 * from it was written (a pending batch is not), else last written + 1. */
static int64_t commit_offset_of(const sink_engine_t *e, const partition_t *p,
                                int64_t position)
{
    int64_t offset = p->written_next != TB_OFFSET_NONE ? p->written_next : p->start;
    bool pending = false;
    for (size_t i = 0; i < e->batch_len && !pending; i++) {
        pending = e->batch[i]->partition == p->partition &&
                  strcmp(rd_kafka_topic_name(e->batch[i]->rkt), p->topic) == 0;
    }
    if (!pending && position > offset) {
        offset = position;
    }
    return offset;
}

static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    sink_engine_t *e = opaque;
    (void)rk;
    for (int i = 0;
         err == RD_KAFKA_RESP_ERR_NO_ERROR && offsets != NULL && i < offsets->cnt; i++) {
        partition_t *p =
            find_part(e, offsets->elems[i].topic, offsets->elems[i].partition);
        if (p != NULL && offsets->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            p->acked = offsets->elems[i].offset;
            tb_series_set(p->metrics.committed, (double)p->acked);
        }
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "committing offsets to the group failed (they are in the store; "
                    "the next commit retries): %s",
                    rd_kafka_err2str(err));
    }
}

/* A commit at revocation or stop, waited for at most the shutdown bound. */
typedef struct {
    sink_engine_t *engine;
    bool answered;
} sync_commit_t;

static void on_sync_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                           rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    sync_commit_t *commit = opaque;
    commit->answered = true;
    on_commit(rk, err, offsets, commit->engine);
}

static bool commit_answered(rd_kafka_t *rk, const void *commit)
{
    (void)rk;
    return ((const sync_commit_t *)commit)->answered;
}

/* Serves queue's callbacks until done(rk, arg) or deadline_ms (monotonic).
 * Returns whether done came true. */
static bool serve_until(rd_kafka_t *rk, rd_kafka_queue_t *queue,
                        bool (*done)(rd_kafka_t *rk, const void *arg), const void *arg,
                        int64_t deadline_ms)
{
    for (int64_t left = deadline_ms - tb_monotonic_ms(); !done(rk, arg) && left > 0;
         left = deadline_ms - tb_monotonic_ms()) {
        rd_kafka_queue_poll_callback(queue, (int)(left < 100 ? left : 100));
    }
    return done(rk, arg);
}

/* When a commit or close at revocation or stop gives up. */
static int64_t sync_deadline(const sink_engine_t *e)
{
    return e->stop_deadline_ms != 0 ? e->stop_deadline_ms
                                    : tb_monotonic_ms() + e->env->shutdown_timeout_ms;
}

/* Commits offsets to the group: in the background (its result comes to
 * on_commit), or with sync within task.shutdown.graceful.timeout.ms; an
 * answer that does not come in time is logged and left behind (the offsets
 * are in the store). */
static void commit_to_group(sink_engine_t *e, rd_kafka_topic_partition_list_t *offsets,
                            bool sync)
{
    if (!sync) {
        rd_kafka_commit(e->rk, offsets, 1);
        return;
    }
    sync_commit_t commit = {.engine = e};
    rd_kafka_queue_t *queue = rd_kafka_queue_new(e->rk);
    rd_kafka_resp_err_t err =
        rd_kafka_commit_queue(e->rk, offsets, queue, on_sync_commit, &commit);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        on_commit(e->rk, err, offsets, e);
    } else if (!serve_until(e->rk, queue, commit_answered, &commit, sync_deadline(e))) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "committing offsets to the group was cut short after "
                    "task.shutdown.graceful.timeout.ms=%lld ms (they are in the store)",
                    e->env->shutdown_timeout_ms);
    }
    rd_kafka_queue_destroy(queue);
}

/* Flushes the plugin and the dead letter queue, then records in the store
 * the offsets of every partition whose offset moved, and commits to the
 * group every offset the broker has not acknowledged yet (so a failed
 * commit is retried by the next flush, also on an idle partition). sync
 * commits the group at once (revocation, stop). Returns 0, TB_PLUGIN_RETRY,
 * or -1 with errstr. */
static int record_offsets(sink_engine_t *e, bool sync, char *errstr, size_t errstr_size)
{
    if (e->env->plugin->flush != NULL) {
        int rc = e->env->plugin->flush(e->plugin_task, errstr, errstr_size);
        if (rc != 0) {
            return rc;
        }
    }
    if (e->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", e->failure);
        return -1;
    }
    if (e->dlq != NULL && tb_dlq_flush(e->dlq, (int)e->env->shutdown_timeout_ms, errstr,
                                       errstr_size) != 0) {
        return -1;
    }
    rd_kafka_topic_partition_list_t *positions =
        rd_kafka_topic_partition_list_new((int)e->part_count);
    for (size_t i = 0; i < e->part_count; i++) {
        rd_kafka_topic_partition_list_add(positions, e->parts[i].topic,
                                          e->parts[i].partition);
    }
    rd_kafka_position(e->rk, positions);
    json_t *offsets = json_array();
    rd_kafka_topic_partition_list_t *commits =
        rd_kafka_topic_partition_list_new((int)e->part_count);
    for (size_t i = 0; i < e->part_count; i++) {
        partition_t *p = &e->parts[i];
        int64_t offset = commit_offset_of(e, p, positions->elems[i].offset);
        if (p->stopped || offset < 0) {
            continue;
        }
        if (offset != p->recorded) {
            json_array_append_new(
                offsets, json_pack("{s:{s:s, s:i}, s:{s:I}}", "partition", "kafka_topic",
                                   p->topic, "kafka_partition", (int)p->partition,
                                   "offset", "kafka_offset", (json_int_t)offset));
        }
        if (offset != p->acked) {
            rd_kafka_topic_partition_list_add(commits, p->topic, p->partition)->offset =
                offset;
        }
    }
    int rc = 0;
    if (json_array_size(offsets) > 0) {
        rc = tb_store_offsets_put(e->env->store, e->env->connector, offsets, errstr,
                                  errstr_size);
    }
    size_t i;
    json_t *entry;
    json_array_foreach (rc == 0 ? offsets : NULL, i, entry) {
        json_t *key = json_object_get(entry, "partition");
        find_part(e, json_string_value(json_object_get(key, "kafka_topic")),
                  (int32_t)json_integer_value(json_object_get(key, "kafka_partition")))
            ->recorded = json_integer_value(
            json_object_get(json_object_get(entry, "offset"), "kafka_offset"));
    }
    if (rc == 0 && commits->cnt > 0) {
        commit_to_group(e, commits, sync);
    }
    rd_kafka_topic_partition_list_destroy(commits);
    rd_kafka_topic_partition_list_destroy(positions);
    json_decref(offsets);
    return rc;
}

/* record_offsets(), counted as an offset commit, when the task has
 * partitions. */
static int flush_offsets(sink_engine_t *e, bool sync, char *errstr, size_t errstr_size)
{
    e->last_flush_ms = tb_monotonic_ms();
    if (e->part_count == 0) {
        return 0;
    }
    int64_t started = tb_monotonic_us();
    int rc = record_offsets(e, sync, errstr, errstr_size);
    tb_task_metrics_commit(&e->metrics, started, rc == 0);
    return rc;
}

/* Refreshes each partition's position, end offset and lag gauges. The end
 * offsets are librdkafka's cached high watermarks (no request). */
static void update_partition_metrics(sink_engine_t *e)
{
    e->last_metrics_ms = tb_monotonic_ms();
    if (e->part_count == 0) {
        return;
    }
    rd_kafka_topic_partition_list_t *positions =
        rd_kafka_topic_partition_list_new((int)e->part_count);
    for (size_t i = 0; i < e->part_count; i++) {
        rd_kafka_topic_partition_list_add(positions, e->parts[i].topic,
                                          e->parts[i].partition);
    }
    rd_kafka_position(e->rk, positions);
    for (size_t i = 0; i < e->part_count; i++) {
        partition_t *p = &e->parts[i];
        int64_t low = 0, high = -1;
        if (positions->elems[i].offset >= 0) {
            tb_series_set(p->metrics.position, (double)positions->elems[i].offset);
        }
        if (rd_kafka_get_watermark_offsets(e->rk, p->topic, p->partition, &low, &high) ==
                RD_KAFKA_RESP_ERR_NO_ERROR &&
            high >= 0) {
            tb_series_set(p->metrics.end, (double)high);
            /* before the first commit, what waits is everything since the start */
            int64_t done = p->acked >= 0 ? p->acked : p->start;
            if (!p->stopped && done >= 0) {
                tb_series_set(p->metrics.lag, (double)(high > done ? high - done : 0));
            }
        }
    }
    rd_kafka_topic_partition_list_destroy(positions);
}

/* -------------------------------------------------------------------------
 * Rebalances
 */

/* Tells the task what its first waiting partition waits for, or that
 * none waits. */
static void tell_waiting(const sink_engine_t *e)
{
    const char *first = NULL;
    size_t others = 0;
    for (size_t i = 0; i < e->part_count; i++) {
        if (e->parts[i].retry_start_ms != 0) {
            others += first != NULL;
            first = first != NULL ? first : e->parts[i].waiting_for;
        }
    }
    char what[400];
    if (others > 0) {
        snprintf(what, sizeof(what), "%s; %zu other partition(s) wait too", first,
                 others);
    }
    if (e->env->waiting_for != NULL) {
        e->env->waiting_for(e->env->task, others > 0 ? what : first);
    }
}

/* Makes p read from start, stops it (logged, and its gauge set), or makes
 * it wait for its next attempt (logged at the first, and told to the task).
 * Returns the offset to fetch from. */
static int64_t take_start(sink_engine_t *e, partition_t *p, const tb_start_t *start)
{
    p->stopped = start->origin == TB_START_STOPPED || start->origin == TB_START_WAITING;
    p->expected = start->offset;
    p->start_attempts = start->origin == TB_START_WAITING ? p->start_attempts + 1 : 0;
    tb_series_add(p->metrics.skipped_group, (double)start->skipped);
    tb_series_add(p->metrics.skipped_retention, (double)start->deleted);
    p->retry_start_ms =
        start->origin == TB_START_WAITING
            ? tb_monotonic_ms() + tb_sink_start_retry_delay_ms(p->start_attempts)
            : 0;
    snprintf(p->waiting_for, sizeof(p->waiting_for),
             "partition %s-%d is not read yet, %s; trying again with backoff", p->topic,
             (int)p->partition, start->reason);
    tell_waiting(e);
    if (start->origin == TB_START_WAITING) {
        if (p->start_attempts == 1) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                        "%s", p->waiting_for);
        }
        return RD_KAFKA_OFFSET_END;
    }
    if (!p->stopped) {
        return start->offset;
    }
    TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", e->env->connector, e->env->id,
                "partition %s-%d stopped: %s", p->topic, (int)p->partition,
                start->reason);
    tb_partition_metrics_stop(&p->metrics, e->env->connector, p->topic, p->partition,
                              start->cause);
    return RD_KAFKA_OFFSET_END;
}

/* The store could not say where the partitions start: none of them is
 * read (assigned at the end, paused by pause_stopped), and the task fails
 * with the store's message. */
static void refuse_starts(sink_engine_t *e, rd_kafka_topic_partition_list_t *list,
                          const char *why)
{
    for (int i = 0; i < list->cnt; i++) {
        rd_kafka_topic_partition_t *tp = &list->elems[i];
        partition_t *p = find_part(e, tp->topic, tp->partition);
        if (p == NULL) {
            p = add_part(e, tp->topic, tp->partition);
        }
        p->stopped = true;
        tp->offset = RD_KAFKA_OFFSET_END;
    }
    if (e->failure[0] == '\0') {
        snprintf(e->failure, sizeof(e->failure),
                 "the start offsets of the assigned partitions cannot be resolved: %s",
                 why);
    }
}

/* The start of a partition whose group offset could not be read: decided
 * at a later attempt, as one whose watermarks could not be read. */
static tb_start_t waiting_for_group(const char *error)
{
    tb_start_t start = {.offset = TB_OFFSET_NONE, .origin = TB_START_WAITING};
    snprintf(start.reason, sizeof(start.reason),
             "waiting for the group's committed offsets, which could not be read: %s",
             error);
    return start;
}

static void resolve_starts(sink_engine_t *e, rd_kafka_topic_partition_list_t *list)
{
    char errstr[512];
    json_t *stored =
        tb_store_offsets_get(e->env->store, e->env->connector, errstr, sizeof(errstr));
    if (stored == NULL) {
        refuse_starts(e, list, errstr);
        return;
    }
    rd_kafka_topic_partition_list_t *committed = rd_kafka_topic_partition_list_copy(list);
    rd_kafka_resp_err_t group_err = rd_kafka_committed(e->rk, committed, QUERY_STEP_MS);
    if (group_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        for (int i = 0; i < committed->cnt; i++) {
            committed->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
        }
    }
    /* without the group's offsets, or after an unanswered query, the
     * watermarks are not asked for: the partitions wait in any case */
    rd_kafka_resp_err_t err = group_err;
    for (int i = 0; i < list->cnt; i++) {
        rd_kafka_topic_partition_t *tp = &list->elems[i];
        int64_t low = 0, high = 0;
        if (group_err == RD_KAFKA_RESP_ERR_NO_ERROR &&
            err != RD_KAFKA_RESP_ERR__TIMED_OUT) {
            err = rd_kafka_query_watermark_offsets(e->rk, tp->topic, tp->partition, &low,
                                                   &high, QUERY_STEP_MS);
        }
        int64_t group = committed->elems[i].offset;
        tb_start_inputs_t in = {
            .stored = stored_offset(stored, tp->topic, tp->partition),
            .committed = group >= 0 ? group : TB_OFFSET_NONE,
            .low = low,
            .high = high,
            .reset = e->reset,
            .watermarks_error =
                err != RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_err2str(err) : NULL,
        };
        tb_start_t start = group_err != RD_KAFKA_RESP_ERR_NO_ERROR
                               ? waiting_for_group(rd_kafka_err2str(group_err))
                               : tb_sink_start_resolve(&in);
        partition_t *p = find_part(e, tp->topic, tp->partition);
        if (p == NULL) {
            p = add_part(e, tp->topic, tp->partition);
        }
        p->start = start.offset;
        p->written_next = TB_OFFSET_NONE;
        /* as in Connect, nothing is recorded until the partition moves */
        p->recorded = in.stored != TB_OFFSET_NONE ? in.stored : start.offset;
        p->acked = in.committed;
        if (p->acked >= 0) {
            tb_series_set(p->metrics.committed, (double)p->acked);
        }
        tp->offset = take_start(e, p, &start);
        if (!p->stopped) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.task", e->env->connector, e->env->id,
                        "partition %s-%d starts at offset %lld (%s)%s%s", tp->topic,
                        (int)tp->partition, (long long)start.offset,
                        tb_start_origin_name(start.origin), start.reason[0] ? ": " : "",
                        start.reason);
        }
        if (start.group_ignored) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.task", e->env->connector, e->env->id,
                        "partition %s-%d: the group's offset %lld is behind the stored "
                        "one and was ignored",
                        tp->topic, (int)tp->partition, (long long)in.committed);
        }
    }
    rd_kafka_topic_partition_list_destroy(committed);
    json_decref(stored);
}

/* Stopped partitions stay assigned (the group keeps them here) but paused. */
static void pause_stopped(sink_engine_t *e)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    for (size_t i = 0; i < e->part_count; i++) {
        if (e->parts[i].stopped || e->paused || e->held) {
            rd_kafka_topic_partition_list_add(list, e->parts[i].topic,
                                              e->parts[i].partition);
        }
    }
    if (list->cnt > 0) {
        rd_kafka_pause_partitions(e->rk, list);
    }
    rd_kafka_topic_partition_list_destroy(list);
}

static void drop_pending(sink_engine_t *e, const partition_t *p);

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *list, void *opaque)
{
    sink_engine_t *e = opaque;
    char errstr[512];
    bool cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;

    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        resolve_starts(e, list);
        rd_kafka_error_t *error =
            cooperative ? rd_kafka_incremental_assign(rk, list) : NULL;
        if (!cooperative) {
            rd_kafka_assign(rk, list);
        }
        if (error != NULL) {
            TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", e->env->connector, e->env->id,
                        "assign failed: %s", rd_kafka_error_string(error));
            rd_kafka_error_destroy(error);
        }
        pause_stopped(e);
        return;
    }
    /* revoked or lost: record what was written before letting go */
    if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && !rd_kafka_assignment_lost(rk) &&
        flush_offsets(e, true, errstr, sizeof(errstr)) != 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "offsets not recorded at revocation (records will be read "
                    "again): %s",
                    errstr);
    }
    for (int i = 0; i < list->cnt; i++) {
        partition_t *p = find_part(e, list->elems[i].topic, list->elems[i].partition);
        if (p != NULL) {
            drop_pending(e, p);
            remove_part(e, p);
        }
    }
    tell_waiting(e);
    if (cooperative) {
        rd_kafka_error_t *error = rd_kafka_incremental_unassign(rk, list);
        if (error != NULL) {
            rd_kafka_error_destroy(error);
        }
    } else {
        rd_kafka_assign(rk, NULL);
    }
}

/* -------------------------------------------------------------------------
 * Failed records
 */

static void record_failed(void *runtime, const tb_sink_record_t *record,
                          const char *reason);

/* Applies errors.tolerance to a record that cannot be written: with none,
 * the task fails naming it; with all, it is counted, logged and sent to the
 * dead letter queue. */
static void handle_failed(sink_engine_t *e, const tb_sink_record_t *record,
                          const char *stage, const char *class_name, const char *reason)
{
    char errstr[512];
    tb_task_metrics_record_error(&e->metrics);
    if (!e->tolerate_errors) {
        if (e->failure[0] == '\0') {
            snprintf(e->failure, sizeof(e->failure),
                     "record %s-%d at offset %lld failed in stage %s: %s", record->topic,
                     (int)record->partition, (long long)record->offset, stage, reason);
        }
        return;
    }
    tb_series_add(e->metrics.records_dropped, 1);
    if (e->log_errors) {
        char described[2048];
        tb_record_log_describe(record, e->log_messages, described, sizeof(described));
        tb_series_add(e->metrics.errors_logged, 1);
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "%s skipped in stage %s (errors.tolerance=all): %s", described, stage,
                    reason);
    }
    tb_dlq_context_t context = {.connector = e->env->connector,
                                .task = e->env->id,
                                .stage = stage,
                                .class_name = class_name,
                                .reason = reason};
    if (e->dlq == NULL) {
        return;
    }
    if (tb_dlq_send(e->dlq, record, &context, errstr, sizeof(errstr)) == 0) {
        tb_series_add(e->metrics.records_dlq, 1);
        return;
    }
    tb_series_add(e->metrics.dlq_failures, 1);
    if (e->failure[0] == '\0') {
        snprintf(e->failure, sizeof(e->failure), "%s", errstr);
    }
}

static void record_failed(void *runtime, const tb_sink_record_t *record,
                          const char *reason)
{
    sink_engine_t *e = runtime;
    handle_failed(e, record, "TASK_PUT", e->env->plugin->class_name, reason);
}

/* -------------------------------------------------------------------------
 * Batches
 */

static void release_record(sink_engine_t *e, size_t i)
{
    bool headers_transformed = e->transformed[i].headers_owned;
    tb_record_release(&e->transformed[i]);
    if (!headers_transformed) {
        free((void *)e->records[i].headers);
    }
    if (e->key_owned[i]) {
        free((void *)e->records[i].key);
    }
    if (e->value_owned[i]) {
        free((void *)e->records[i].value);
    }
}

static void release_batch(sink_engine_t *e)
{
    for (size_t i = 0; i < e->batch_len; i++) {
        release_record(e, i);
        rd_kafka_message_destroy(e->batch[i]);
    }
    e->batch_len = e->converted = 0;
}

/* Reads the headers of msg into a new array (names and values point into
 * msg). */
static tb_header_t *headers_of(rd_kafka_message_t *msg, size_t *count)
{
    rd_kafka_headers_t *headers = NULL;
    *count = 0;
    /* most records have none: no allocation then */
    if (rd_kafka_message_headers(msg, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_header_cnt(headers) == 0) {
        return NULL;
    }
    size_t n = rd_kafka_header_cnt(headers);
    tb_header_t *out = calloc(n, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        rd_kafka_header_get_all(headers, i, &out[i].name, &out[i].value,
                                &out[i].value_len);
    }
    *count = n;
    return out;
}

/* Converts data with converter into *out (a pass-through converter hands
 * data over as it is). */
static int convert(tb_converter_t *converter, const void *data, size_t len,
                   const void **out, size_t *out_len, bool *owned, char *reason,
                   size_t reason_size)
{
    *out = data;
    *out_len = len;
    *owned = false;
    if (tb_converter_passthrough(converter)) {
        return 0;
    }
    return tb_converter_to_plugin(converter, data, len, out, out_len, owned, reason,
                                  reason_size);
}

/* Runs the chain on records[i] (read from msg): 0 it goes on, with the
 * sides the chain changed already in plugin form (converted), 1 it was
 * filtered out, -1 it failed in *stage. */
static int transform(sink_engine_t *e, size_t i, rd_kafka_message_t *msg,
                     bool converted[2], const char **stage, const char **failed_class,
                     char *reason, size_t reason_size)
{
    tb_sink_record_t *r = &e->records[i];
    tb_header_t *read = (tb_header_t *)r->headers;
    tb_converter_t *const converters[2] = {e->key_converter, e->value_converter};
    tb_transform_failure_t failure;
    e->transformed[i] = (tb_record_t){.topic = r->topic,
                                      .partition = r->partition,
                                      .offset = r->offset,
                                      .timestamp = r->timestamp,
                                      .headers = read,
                                      .header_count = r->header_count,
                                      .key = {.bytes = msg->key, .len = msg->key_len},
                                      .value = {.bytes = msg->payload, .len = msg->len}};
    int rc = tb_sink_transform(e->chain, converters, &e->transformed[i], r, converted,
                               &failure);
    e->key_owned[i] = converted[TB_SIDE_KEY];
    e->value_owned[i] = converted[TB_SIDE_VALUE];
    if (e->transformed[i].headers_owned) {
        free(read); /* the record holds copies now */
    }
    if (rc == -1) {
        *stage = failure.stage;
        *failed_class = failure.class_name;
        snprintf(reason, reason_size, "%s", failure.reason);
    }
    return rc;
}

static void set_held(sink_engine_t *e, bool held);

/* A converter that cannot convert now (TB_CONVERTER_RETRY): holds the
 * partitions until the next attempt under errors.retry.*, or says that the
 * retries are spent (reason then says so too). */
static bool wait_for_converter(sink_engine_t *e, const char *stage,
                               const rd_kafka_message_t *msg, char *reason,
                               size_t reason_size)
{
    int64_t delay = tb_task_retry_next(&e->retry, reason, reason_size);
    if (delay < 0) {
        return false;
    }
    tb_task_metrics_retry(&e->metrics);
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                "stage %s cannot convert record %s-%d at offset %lld now, trying again "
                "in %lld ms: %s",
                stage, rd_kafka_topic_name(msg->rkt), (int)msg->partition,
                (long long)msg->offset, (long long)delay, reason);
    set_held(e, true);
    e->retry_at_ms = tb_monotonic_ms() + delay;
    return true;
}

/* Fills records[i] from batch[i] through the converters and the chain,
 * from first on. A record that cannot be converted or transformed goes to
 * the error path and out of the batch. Returns whether a converter asked
 * to try again later: that record and the ones after it then wait,
 * unconverted, from e->converted on (wait_for_converter). */
static bool convert_batch(sink_engine_t *e, size_t first)
{
    size_t kept = first;
    if (first >= e->batch_len) {
        return false;
    }
    for (size_t i = first; i < e->batch_len; i++) {
        rd_kafka_message_t *msg = e->batch[i];
        tb_sink_record_t *r = &e->records[kept];
        char reason[512];
        rd_kafka_timestamp_type_t ts_type;
        *r = (tb_sink_record_t){.topic = rd_kafka_topic_name(msg->rkt),
                                .partition = msg->partition,
                                .offset = msg->offset,
                                .timestamp = rd_kafka_message_timestamp(msg, &ts_type)};
        if (e->read_headers) {
            r->headers = headers_of(msg, &r->header_count);
        }
        e->key_owned[kept] = e->value_owned[kept] = false;
        e->transformed[kept] = (tb_record_t){0};
        const char *stage = NULL;
        const char *failed_class = NULL;
        bool converted[2] = {false, false};
        int rc = e->chain != NULL ? transform(e, kept, msg, converted, &stage,
                                              &failed_class, reason, sizeof(reason))
                                  : 0;
        if (rc == 1) { /* filtered out: done with, as if written */
            release_record(e, kept);
            rd_kafka_message_destroy(msg);
            continue;
        }
        if (stage == NULL && !converted[TB_SIDE_KEY] &&
            (rc = convert(e->key_converter, msg->key, msg->key_len, &r->key, &r->key_len,
                          &e->key_owned[kept], reason, sizeof(reason))) != 0) {
            stage = "KEY_CONVERTER";
        } else if (stage == NULL && !converted[TB_SIDE_VALUE] &&
                   (rc = convert(e->value_converter, msg->payload, msg->len, &r->value,
                                 &r->value_len, &e->value_owned[kept], reason,
                                 sizeof(reason))) != 0) {
            stage = "VALUE_CONVERTER";
        }
        if (rc == TB_CONVERTER_RETRY &&
            wait_for_converter(e, stage, msg, reason, sizeof(reason))) {
            /* not the record's fault (the schema registry did not answer) */
            release_record(e, kept);
            size_t waiting = e->batch_len - i;
            memmove(&e->batch[kept], &e->batch[i], waiting * sizeof(e->batch[0]));
            for (size_t j = kept; j < kept + waiting; j++) {
                e->records[j] = (tb_sink_record_t){0};
                e->transformed[j] = (tb_record_t){0};
                e->key_owned[j] = e->value_owned[j] = false;
            }
            e->converted = kept;
            e->batch_len = kept + waiting;
            return true;
        }
        tb_task_retry_reset(&e->retry);
        if (stage != NULL) {
            if (strcmp(stage, "TRANSFORMATION") != 0) {
                tb_series_add(stage[0] == 'K' ? e->metrics.key_conversion_errors
                                              : e->metrics.value_conversion_errors,
                              1);
            }
            tb_sink_record_t raw = *r;
            raw.topic = rd_kafka_topic_name(msg->rkt); /* as read, not as routed */
            raw.key = msg->key;
            raw.key_len = msg->key_len;
            raw.value = msg->payload;
            raw.value_len = msg->len;
            const tb_converter_t *failed =
                stage[0] == 'K' ? e->key_converter : e->value_converter;
            handle_failed(e, &raw, stage,
                          failed_class != NULL ? failed_class
                                               : tb_converter_class_name(failed),
                          reason);
            release_record(e, kept);
            rd_kafka_message_destroy(msg);
            continue;
        }
        e->batch[kept++] = msg;
    }
    e->batch_len = e->converted = kept;
    return false;
}

/* Hands the pending batch to the plugin. Returns 0 when it was taken (or
 * is empty), TB_PLUGIN_RETRY, or -1 with errstr. */
static int put_batch(sink_engine_t *e, char *errstr, size_t errstr_size)
{
    if (e->batch_len == 0) {
        return 0;
    }
    int64_t started = tb_monotonic_us();
    int rc = e->env->plugin->put(e->plugin_task, e->records, e->batch_len, errstr,
                                 errstr_size);
    tb_series_observe(e->metrics.batch_seconds,
                      (double)(tb_monotonic_us() - started) / 1e6);
    if (rc == -1) {
        size_t n = (size_t)snprintf(NULL, 0, "%s", errstr);
        snprintf(errstr + (n < errstr_size ? n : errstr_size - 1),
                 errstr_size - (n < errstr_size ? n : errstr_size - 1),
                 " (writing records of %s-%d from offset %lld)", e->records[0].topic,
                 (int)e->records[0].partition, (long long)e->records[0].offset);
    }
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < e->batch_len; i++) {
        /* offsets are the original partition's, whatever the chain routed */
        partition_t *p =
            find_part(e, rd_kafka_topic_name(e->batch[i]->rkt), e->batch[i]->partition);
        if (p != NULL) {
            p->written_next = e->records[i].offset + 1;
        }
    }
    tb_series_add(e->metrics.batches, 1);
    tb_series_observe(e->metrics.batch_records, (double)e->batch_len);
    tb_series_add(e->metrics.records_written, (double)e->batch_len);
    release_batch(e);
    return 0;
}

/* Assigns p again, from the offset it expects (a stopped one from the end,
 * paused): once librdkafka 2.0.2 has reported a partition's offset out of
 * range it stops fetching it and refuses to seek it. Eagerly assigned
 * partitions are assigned again all together, each from its own offset. */
static void assign_again(sink_engine_t *e, const partition_t *p)
{
    bool cooperative = strcmp(rd_kafka_rebalance_protocol(e->rk), "COOPERATIVE") == 0;
    rd_kafka_topic_partition_list_t *list =
        rd_kafka_topic_partition_list_new((int)e->part_count);
    rd_kafka_error_t *error = NULL;
    for (size_t i = 0; i < e->part_count; i++) {
        const partition_t *q = &e->parts[i];
        if (!cooperative || q == p) {
            rd_kafka_topic_partition_list_add(list, q->topic, q->partition)->offset =
                q->stopped ? RD_KAFKA_OFFSET_END : q->expected;
        }
    }
    const char *failure = NULL;
    if (cooperative) {
        error = rd_kafka_incremental_unassign(e->rk, list);
        error = error != NULL ? error : rd_kafka_incremental_assign(e->rk, list);
        failure = error != NULL ? rd_kafka_error_string(error) : NULL;
    } else {
        rd_kafka_resp_err_t err = rd_kafka_assign(e->rk, list);
        failure = err != RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_err2str(err) : NULL;
    }
    if (failure != NULL) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", e->env->connector, e->env->id,
                    "partition %s-%d could not be assigned again: %s", p->topic,
                    (int)p->partition, failure);
    }
    if (error != NULL) {
        rd_kafka_error_destroy(error);
    }
    rd_kafka_topic_partition_list_destroy(list);
    pause_stopped(e);
}

/* librdkafka found a partition's next offset out of range (its own
 * auto.offset.reset is "error", see sink_start): the records were deleted
 * before they were read (retention, kafka-delete-records), or the partition
 * was truncated or recreated. Decided as at start, from the offset expected
 * and the watermarks, and logged once; the partition then fetches again. */
static void handle_out_of_range(sink_engine_t *e, const char *topic, int32_t partition)
{
    partition_t *p = find_part(e, topic, partition);
    if (p == NULL || p->stopped) {
        return;
    }
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        e->rk, topic, partition, &low, &high, QUERY_STEP_MS);
    tb_start_inputs_t in = {.stored = p->expected,
                            .committed = TB_OFFSET_NONE,
                            .low = low,
                            .high = high,
                            .reset = e->reset,
                            .watermarks_error = err != RD_KAFKA_RESP_ERR_NO_ERROR
                                                    ? rd_kafka_err2str(err)
                                                    : NULL};
    tb_start_t start = tb_sink_start_resolve(&in);
    take_start(e, p, &start);
    if (!p->stopped) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "partition %s-%d: %s", topic, (int)partition,
                    start.reason[0] != '\0' ? start.reason
                                            : "its offset was out of range; reading on");
    }
    assign_again(e, p);
}

/* Resolves again the start of every partition whose wait is over (its
 * watermarks could not be read), and reads those that now have one. */
static void retry_waiting_starts(sink_engine_t *e)
{
    int64_t now = tb_monotonic_ms();
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    for (size_t i = 0; i < e->part_count; i++) {
        if (e->parts[i].retry_start_ms != 0 && e->parts[i].retry_start_ms <= now) {
            rd_kafka_topic_partition_list_add(list, e->parts[i].topic,
                                              e->parts[i].partition);
        }
    }
    if (list->cnt > 0) {
        resolve_starts(e, list);
    }
    rd_kafka_topic_partition_list_t *resumed = rd_kafka_topic_partition_list_new(1);
    for (int i = 0; i < list->cnt; i++) {
        partition_t *p = find_part(e, list->elems[i].topic, list->elems[i].partition);
        if (!p->stopped) {
            assign_again(e, p);
            rd_kafka_topic_partition_list_add(resumed, p->topic, p->partition);
        }
    }
    /* paused while it waited (pause_stopped) */
    if (resumed->cnt > 0 && !e->paused) {
        rd_kafka_resume_partitions(e->rk, resumed);
    }
    rd_kafka_topic_partition_list_destroy(resumed);
    rd_kafka_topic_partition_list_destroy(list);
}

/* Collects up to batch_max messages already waiting into the pending batch,
 * without waiting for more: the task runs again at once while messages
 * keep coming (sink_step), so a batch takes no time to form. */
static void consume(sink_engine_t *e)
{
    size_t first = e->batch_len;
    size_t bytes = 0;
    rd_kafka_message_t *msgs[BATCH_MAX];
    ssize_t n = rd_kafka_consume_batch_queue(e->queue, 0, msgs, e->batch_max);
    for (ssize_t i = 0; i < n; i++) {
        rd_kafka_message_t *msg = msgs[i];
        partition_t *p =
            msg->err ? NULL : find_part(e, rd_kafka_topic_name(msg->rkt), msg->partition);
        if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && msg->rkt != NULL) {
            handle_out_of_range(e, rd_kafka_topic_name(msg->rkt), msg->partition);
        } else if (msg->err && msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                        "consumer: %s", rd_kafka_message_errstr(msg));
        }
        /* paused or held: dropped, read again after the seek on resume */
        if (p == NULL || p->stopped || e->paused || e->held ||
            msg->offset < p->expected) {
            rd_kafka_message_destroy(msg);
            continue;
        }
        p->expected = msg->offset + 1;
        /* topic tracking, as in Connect: a topic a record was read from;
         * told once per run of the same topic in a batch */
        if (e->batch_len == 0 || e->batch[e->batch_len - 1]->rkt != msg->rkt) {
            e->env->topic_used(e->env->topic_opaque, e->env->connector, p->topic);
        }
        e->batch[e->batch_len++] = msg;
        bytes += msg->len + msg->key_len;
    }
    tb_series_add(e->metrics.records_read, (double)(e->batch_len - first));
    tb_series_add(e->metrics.bytes, (double)bytes);
    convert_batch(e, first);
}

/* Pauses every partition that is read, or seeks each back to what it
 * expects and resumes them. */
static void read_partitions(sink_engine_t *e, bool reading)
{
    rd_kafka_topic_partition_list_t *list =
        rd_kafka_topic_partition_list_new((int)e->part_count + 1);
    for (size_t i = 0; i < e->part_count; i++) {
        partition_t *p = &e->parts[i];
        if (!p->stopped) {
            rd_kafka_topic_partition_list_add(list, p->topic, p->partition)->offset =
                p->expected;
        }
    }
    if (!reading) {
        rd_kafka_pause_partitions(e->rk, list);
    } else if (list->cnt > 0) {
        rd_kafka_error_t *error = rd_kafka_seek_partitions(e->rk, list, SEEK_TIMEOUT_MS);
        if (error != NULL) {
            rd_kafka_error_destroy(error);
        }
        rd_kafka_resume_partitions(e->rk, list);
    }
    rd_kafka_topic_partition_list_destroy(list);
}

/* The connector's pause and resume (a held task stays held). */
static void set_paused(sink_engine_t *e, bool paused)
{
    e->paused = paused;
    if (paused || !e->held) {
        read_partitions(e, !paused);
    }
    TB_LOG_TASK(TB_LOG_INFO, "tributary.task", e->env->connector, e->env->id, "%s",
                paused ? "paused" : "resumed");
}

/* Holds the partitions while a put or flush waits for its retry, as
 * Connect does, or reads them again. */
static void set_held(sink_engine_t *e, bool held)
{
    if (held != e->held) {
        e->held = held;
        if (!e->paused) {
            read_partitions(e, !held);
        }
    }
}

/* Drops the pending records of p, revoked while they wait for a retry:
 * its new owner reads them. */
static void drop_pending(sink_engine_t *e, const partition_t *p)
{
    size_t kept = 0, converted = 0;
    for (size_t i = 0; i < e->batch_len; i++) {
        /* by the partition read from, whatever the chain routed */
        if (e->batch[i]->partition == p->partition &&
            strcmp(rd_kafka_topic_name(e->batch[i]->rkt), p->topic) == 0) {
            release_record(e, i);
            rd_kafka_message_destroy(e->batch[i]);
            continue;
        }
        converted += i < e->converted;
        e->batch[kept] = e->batch[i];
        e->records[kept] = e->records[i];
        e->key_owned[kept] = e->key_owned[i];
        e->value_owned[kept] = e->value_owned[i];
        e->transformed[kept] = e->transformed[i];
        kept++;
    }
    e->batch_len = kept;
    e->converted = converted;
}

/* -------------------------------------------------------------------------
 * The engine
 */

static void on_queue_event(rd_kafka_t *rk, void *opaque)
{
    const tb_task_env_t *env = opaque;
    (void)rk;
    env->wake(env->task);
}

/* The consumer's properties: the worker's and the connector's overrides
 * (tb_client_props.h), Connect's read_uncommitted default, then what the
 * runtime manages. NULL with errstr when they are refused. */
static json_t *consumer_props(const tb_task_env_t *env, char *group, size_t group_size,
                              char *errstr, size_t errstr_size)
{
    char client_id[300];
    json_t *props = tb_client_props_resolved(env->client, TB_CLIENT_CONSUMER,
                                             env->connector_config, errstr, errstr_size);
    if (props == NULL) {
        return NULL;
    }
    if (json_object_get(props, "isolation.level") == NULL) {
        json_object_set_new(props, "isolation.level", json_string("read_uncommitted"));
    }
    tb_connector_sink_group(env->connector, env->connector_config, group, group_size);
    snprintf(client_id, sizeof(client_id), "connector-consumer-%s-%d", env->connector,
             env->id);
    json_object_set_new(props, "group.id", json_string(group));
    json_object_set_new(props, "client.id", json_string(client_id));
    json_object_set_new(props, "enable.auto.commit", json_string("false"));
    json_object_set_new(props, "enable.auto.offset.store", json_string("false"));
    json_object_set_new(props, "enable.partition.eof", json_string("false"));
    if (json_object_get(props, "statistics.interval.ms") == NULL) {
        json_object_set_new(props, "statistics.interval.ms", json_string(STATS_INTERVAL));
    }
    /* Not cooperative-sticky: librdkafka 2.0.2 aborts when a member that
     * never received an assignment (tasks.max above the partition count)
     * is closed (rd_kafka_sticky_assignor_state_destroy, librdkafka #4312,
     * fixed in 2.3.0). The engine handles both protocols. */
    json_object_set_new(props, "partition.assignment.strategy",
                        json_string("roundrobin"));
    return props;
}

static int subscribe(sink_engine_t *e, char *errstr, size_t errstr_size)
{
    const json_t *settings = e->env->settings;
    const char *regex = tb_config_string(settings, "topics.regex");
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    if (regex[0] != '\0') {
        /* librdkafka takes a topic starting with ^ as a regex and finds it
         * anywhere after that; Kafka's consumer matches the whole name */
        size_t len = strlen(regex);
        size_t skip = regex[0] == '^';
        if (len > skip && regex[len - 1] == '$' && (len < 2 || regex[len - 2] != '\\')) {
            len--;
        }
        char *anchored = NULL;
        if (asprintf(&anchored, "^(%.*s)$", (int)(len - skip), regex + skip) < 0) {
            snprintf(errstr, errstr_size, "out of memory");
            rd_kafka_topic_partition_list_destroy(topics);
            return -1;
        }
        rd_kafka_topic_partition_list_add(topics, anchored, RD_KAFKA_PARTITION_UA);
        free(anchored);
    } else {
        size_t i;
        json_t *topic;
        json_array_foreach (tb_config_list(settings, "topics"), i, topic) {
            const char *name = json_string_value(topic);
            rd_kafka_topic_partition_list_add(topics, name, RD_KAFKA_PARTITION_UA);
        }
    }
    rd_kafka_resp_err_t err = rd_kafka_subscribe(e->rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "subscribing failed: %s", rd_kafka_err2str(err));
        return -1;
    }
    return 0;
}

static void sink_stop(void *opaque);

/* librdkafka's statistics: watches that every partition that should be
 * fetching is. Called on the task's thread (the consumer queue). */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
    sink_engine_t *e = opaque;
    json_t *stats = json_loadb(json, len, 0, NULL);
    int64_t now = tb_monotonic_ms();
    (void)rk;
    for (size_t i = 0; stats != NULL && i < e->part_count; i++) {
        partition_t *p = &e->parts[i];
        const char *state = tb_kafka_stats_fetch_state(stats, p->topic, p->partition);
        if (p->stopped || e->paused || e->held || state == NULL ||
            strcmp(state, "active") == 0) {
            p->idle_since = 0;
        } else if (p->idle_since == 0) {
            p->idle_since = now;
        } else if (now - p->idle_since > STUCK_MS && e->failure[0] == '\0') {
            snprintf(e->failure, sizeof(e->failure),
                     "partition %s-%d has not been fetched for %lld s (librdkafka fetch "
                     "state %s): restarting the task with a new consumer",
                     p->topic, (int)p->partition,
                     (long long)((now - p->idle_since) / 1000), state);
        }
    }
    json_decref(stats);
    return 0; /* librdkafka frees json */
}

/* librdkafka's errors are mostly transient and retried by itself; failed
 * authentication and fatal errors are not, and fail the task. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    sink_engine_t *e = opaque;
    (void)rk;
    if (tb_kafka_error_is_final(err) && e->failure[0] == '\0') {
        snprintf(e->failure, sizeof(e->failure), "Kafka: %s", reason);
    }
}

static int sink_start(const tb_task_env_t *env, void **out, char *errstr,
                      size_t errstr_size)
{
    sink_engine_t *e = calloc(1, sizeof(*e));
    char group[256];
    const json_t *settings = env->settings;

    e->env = env;
    e->ctx = (tb_task_context_t){.connector = env->connector,
                                 .task = env->id,
                                 .record_failed = record_failed,
                                 .runtime = e};

    e->tolerate_errors =
        strcmp(tb_config_string(settings, "errors.tolerance"), "all") == 0;
    e->log_errors = tb_config_bool(settings, "errors.log.enable");
    e->log_messages = tb_config_bool(settings, "errors.log.include.messages");
    e->retry = tb_task_retry_from(settings);
    e->last_flush_ms = tb_monotonic_ms();
    tb_task_metrics_take(&e->metrics, env->connector, env->id, 1);
    e->key_converter = tb_task_converter_create(env, "key", errstr, errstr_size);
    e->value_converter = e->key_converter != NULL
                             ? tb_task_converter_create(env, "value", errstr, errstr_size)
                             : NULL;
    if (e->value_converter == NULL) {
        goto fail;
    }
    if (tb_task_dlq_create(env, &e->dlq, errstr, errstr_size) != 0) {
        goto fail;
    }
    if (tb_task_chain_create(env, &e->chain, errstr, errstr_size) != 0) {
        goto fail;
    }
    e->read_headers = env->plugin->reads_headers || e->dlq != NULL || e->chain != NULL;
    json_t *props = consumer_props(env, group, sizeof(group), errstr, errstr_size);
    if (props == NULL) {
        goto fail;
    }
    /* max.poll.records, checked by tb_java_client_keys, is the batch bound */
    const char *max_poll =
        json_string_value(json_object_get(props, TB_JAVA_MAX_POLL_RECORDS));
    e->batch_max = max_poll != NULL && strtoull(max_poll, NULL, 10) < BATCH_MAX
                       ? (size_t)strtoull(max_poll, NULL, 10)
                       : BATCH_MAX;
    json_object_del(props, TB_JAVA_MAX_POLL_RECORDS);
    const char *reset = json_string_value(json_object_get(props, "auto.offset.reset"));
    if (tb_reset_policy_parse(reset != NULL ? reset : "earliest", &e->reset) != 0) {
        e->reset = TB_RESET_EARLIEST; /* validation refused anything else */
    }
    /* start offsets are resolved by the engine with that policy; librdkafka's
     * would only apply to an offset that falls out of range later: it reports
     * it instead (handle_out_of_range) */
    json_object_set_new(props, "auto.offset.reset", json_string("error"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        goto fail;
    }
    rd_kafka_conf_set_opaque(conf, e);
    rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_stats_cb(conf, on_stats);
    rd_kafka_conf_set_offset_commit_cb(conf, on_commit);
    e->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
    if (e->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    rd_kafka_poll_set_consumer(e->rk);
    e->queue = rd_kafka_queue_get_consumer(e->rk);
    rd_kafka_queue_cb_event_enable(e->queue, on_queue_event, (void *)env);
    if (tb_task_start_plugin(env, &e->ctx, &e->plugin_task, errstr, errstr_size) != 0) {
        e->plugin_task = NULL;
        goto fail;
    }
    if (subscribe(e, errstr, errstr_size) != 0) {
        goto fail;
    }
    TB_LOG_TASK(TB_LOG_INFO, "tributary.task", env->connector, env->id,
                "consuming in group %s", group);
    *out = e;
    return 0;

fail:
    sink_stop(e);
    return -1;
}

static int64_t sink_step(void *opaque, bool paused, char *errstr, size_t errstr_size)
{
    sink_engine_t *e = opaque;
    int rc = 0;

    if (paused != e->paused) {
        set_paused(e, paused);
    }
    if (e->failure[0] != '\0') {
        rd_kafka_poll(e->rk, 0);
        snprintf(errstr, errstr_size, "%s", e->failure);
        return TB_TASK_STEP_FAILED;
    }
    retry_waiting_starts(e);
    /* also while held: polls the consumer, taking nothing */
    consume(e);
    if (tb_monotonic_ms() - e->last_metrics_ms >= METRICS_INTERVAL_MS) {
        update_partition_metrics(e);
    }
    int64_t until_retry = e->retry_at_ms - tb_monotonic_ms();
    if (e->held && until_retry > 0) {
        return until_retry < POLL_HELD_MS ? until_retry : POLL_HELD_MS;
    }
    /* records whose conversion waited for its retry */
    if (convert_batch(e, e->converted)) {
        until_retry = e->retry_at_ms - tb_monotonic_ms();
        return until_retry < 1              ? 1
               : until_retry < POLL_HELD_MS ? until_retry
                                            : POLL_HELD_MS;
    }
    size_t taken = e->batch_len;
    rc = put_batch(e, errstr, errstr_size);
    if (rc == 0 &&
        tb_monotonic_ms() - e->last_flush_ms >= e->env->offset_flush_interval_ms) {
        rc = flush_offsets(e, false, errstr, errstr_size);
    }
    if (rc == 0 && e->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", e->failure);
        rc = -1;
    }
    if (rc == TB_PLUGIN_RETRY) {
        int64_t delay = tb_task_retry_next(&e->retry, errstr, errstr_size);
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "retriable failure: %s", errstr);
        if (delay < 0) {
            return TB_TASK_STEP_FAILED;
        }
        tb_task_metrics_retry(&e->metrics);
        set_held(e, true);
        e->retry_at_ms = tb_monotonic_ms() + delay;
        return delay < POLL_HELD_MS ? delay : POLL_HELD_MS;
    }
    if (rc != 0) {
        return TB_TASK_STEP_FAILED;
    }
    tb_task_retry_reset(&e->retry);
    set_held(e, false);
    /* More may have arrived meanwhile without a new queue event (it fires on
     * empty to non-empty only): look again until a consume finds nothing. */
    if (taken > 0) {
        return TB_POOL_RUN_AGAIN;
    }
    /* idle: woken by the queue; the timer keeps flushing and polling */
    int64_t until_flush =
        e->last_flush_ms + e->env->offset_flush_interval_ms - tb_monotonic_ms() + 1;
    return until_flush < 1000 ? (until_flush > 0 ? until_flush : 1) : 1000;
}

static bool consumer_closed(rd_kafka_t *rk, const void *arg)
{
    (void)arg;
    return rd_kafka_consumer_closed(rk) != 0;
}

/* Leaves the group and destroys the consumer, waiting for the group's
 * answer until the stop's deadline (an unreachable broker would hold the
 * stop forever); cut short, it says so. */
static void close_consumer(sink_engine_t *e)
{
    rd_kafka_queue_t *queue = rd_kafka_queue_new(e->rk);
    rd_kafka_error_t *error = rd_kafka_consumer_close_queue(e->rk, queue);
    if (error != NULL) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "closing the consumer failed: %s", rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    } else if (!serve_until(e->rk, queue, consumer_closed, NULL, sync_deadline(e))) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "closing the consumer was cut short after "
                    "task.shutdown.graceful.timeout.ms=%lld ms: the group was not told "
                    "that this member left (it notices when the session times out)",
                    e->env->shutdown_timeout_ms);
    }
    bool closed = rd_kafka_consumer_closed(e->rk) != 0;
    rd_kafka_queue_destroy(queue);
    rd_kafka_queue_destroy(e->queue);
    rd_kafka_destroy_flags(e->rk, closed ? 0 : RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

static void sink_stop(void *opaque)
{
    sink_engine_t *e = opaque;
    char errstr[512];
    if (e == NULL) {
        return;
    }
    /* the commit and the consumer's close share the stop's bound */
    e->stop_deadline_ms = tb_monotonic_ms() + e->env->shutdown_timeout_ms;
    if (e->rk != NULL && e->plugin_task != NULL) {
        if (flush_offsets(e, true, errstr, sizeof(errstr)) != 0) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                        "offsets not recorded at stop (records will be read again): %s",
                        errstr);
        }
        /* recorded: the revocation at close has nothing left to do */
        while (e->part_count > 0) {
            remove_part(e, &e->parts[0]);
        }
    }
    release_batch(e);
    if (e->rk != NULL) {
        rd_kafka_queue_cb_event_enable(e->queue, NULL, NULL);
        close_consumer(e);
    }
    if (e->plugin_task != NULL) {
        e->env->plugin->task_stop(e->plugin_task);
    }
    tb_dlq_destroy(e->dlq, (int)e->env->shutdown_timeout_ms);
    tb_converter_destroy(e->key_converter);
    tb_converter_destroy(e->value_converter);
    tb_chain_destroy(e->chain);
    while (e->part_count > 0) {
        remove_part(e, &e->parts[0]);
    }
    tb_task_metrics_release(&e->metrics);
    free(e->parts);
    free(e);
}

const tb_task_engine_t tb_sink_engine = {
    .start = sink_start,
    .step = sink_step,
    .stop = sink_stop,
};
