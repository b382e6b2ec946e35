/*
 * The sink engine's offsets: every offset.flush.interval.ms, at revocation
 * and at stop, the plugin is flushed, then each partition's offset is
 * recorded in the store (the authority for where to resume) and committed
 * to the group after it, best effort, so that Kafka's tools see the job.
 * What is recorded is the consumer's position when every record fetched
 * from a partition was written and the position counts no record but those
 * (partition_t.position_exact), so that commit markers and aborted records
 * of transactional topics do not show as lag; else the offset after the
 * last record written.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>

#include "connectors/runtime/sink/sink_engine_internal.h"
#include "connectors/runtime/task/tb_dlq.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

/* What to record for p: the consumer position when every record fetched
 * from it was written (a pending batch is not) and the position is exact,
 * else last written + 1 (or where it started); never less than what was
 * recorded (a position that was exact then); for a plugin that holds
 * records not durable yet (pending_offset), the oldest of them. */
static int64_t commit_offset_of(const sink_engine_t *e, const partition_t *p,
                                int64_t position)
{
    int64_t offset = p->written_next != TB_OFFSET_NONE ? p->written_next : p->start;
    if (p->recorded != TB_OFFSET_NONE && p->recorded > offset) {
        offset = p->recorded;
    }
    int64_t held =
        e->env->plugin->pending_offset != NULL
            ? e->env->plugin->pending_offset(e->plugin_task, p->topic, p->partition)
            : TB_PLUGIN_NO_OFFSET;
    if (held != TB_PLUGIN_NO_OFFSET) {
        return held < offset ? held : offset;
    }
    bool pending = false;
    for (size_t i = 0; i < e->batch_len && !pending; i++) {
        pending = e->batch[i]->partition == p->partition &&
                  strcmp(rd_kafka_topic_name(e->batch[i]->rkt), p->topic) == 0;
    }
    if (!pending && p->position_exact && position > offset) {
        offset = position;
    }
    return offset;
}

void tb_sink_on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                       rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    sink_engine_t *e = opaque;
    (void)rk;
    for (int i = 0;
         err == RD_KAFKA_RESP_ERR_NO_ERROR && offsets != NULL && i < offsets->cnt; i++) {
        partition_t *p =
            tb_sink_find_part(e, offsets->elems[i].topic, offsets->elems[i].partition);
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
    tb_sink_on_commit(rk, err, offsets, commit->engine);
}

static bool commit_answered(rd_kafka_t *rk, const void *commit)
{
    (void)rk;
    return ((const sync_commit_t *)commit)->answered;
}

/* How long one wait of tb_sink_serve_until lasts: a consume returns on a
 * record or at its timeout only, not once it served a callback, so the
 * answer that ends the wait is seen at the end of the slice it came in. A
 * revocation's commit holds the partitions the task keeps (librdkafka pauses
 * them during the callback) for that long. */
#define SERVE_SLICE_MS 5

/* Serves queue's callbacks until done(rk, arg) or deadline_ms (monotonic).
 * Returns whether done came true. Records that reach the queue (a closing
 * consumer forwards its own queue to it) are dropped: they lie past what was
 * recorded, and the partitions' next owner reads them again. */
bool tb_sink_serve_until(rd_kafka_t *rk, rd_kafka_queue_t *queue,
                         bool (*done)(rd_kafka_t *rk, const void *arg), const void *arg,
                         int64_t deadline_ms)
{
    for (int64_t left = deadline_ms - tb_monotonic_ms(); !done(rk, arg) && left > 0;
         left = deadline_ms - tb_monotonic_ms()) {
        /* Not rd_kafka_queue_poll_callback: librdkafka 2.0.2 aborts when a
         * callback server meets a fetched record (rd_kafka_q_serve asserts).
         * Consuming serves every other op as a callback and returns records. */
        rd_kafka_message_t *record = rd_kafka_consume_queue(
            queue, (int)(left < SERVE_SLICE_MS ? left : SERVE_SLICE_MS));
        if (record != NULL) {
            rd_kafka_message_destroy(record);
        }
    }
    return done(rk, arg);
}

/* When a commit or close at revocation or stop gives up. */
int64_t tb_sink_sync_deadline(const sink_engine_t *e)
{
    return e->stop_deadline_ms != 0 ? e->stop_deadline_ms
                                    : tb_monotonic_ms() + e->env->shutdown_timeout_ms;
}

/* Commits offsets to the group: stored for librdkafka's auto-commit timer,
 * which sends them while the group is steady only (sink_engine.c says why;
 * its result comes to tb_sink_on_commit), or with sync at once, within
 * task.shutdown.graceful.timeout.ms, where the group is known steady (a
 * revocation's callback, after the group's sync) or left (the stop); an
 * answer that does not come in time is logged and left behind (the offsets
 * are in the store). */
static void commit_to_group(sink_engine_t *e, rd_kafka_topic_partition_list_t *offsets,
                            bool sync)
{
    if (!sync) {
        rd_kafka_resp_err_t err = rd_kafka_offsets_store(e->rk, offsets);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            tb_sink_on_commit(e->rk, err, NULL, e);
        }
        return;
    }
    sync_commit_t commit = {.engine = e};
    rd_kafka_queue_t *queue = rd_kafka_queue_new(e->rk);
    rd_kafka_resp_err_t err =
        rd_kafka_commit_queue(e->rk, offsets, queue, on_sync_commit, &commit);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tb_sink_on_commit(e->rk, err, offsets, e);
    } else if (!tb_sink_serve_until(e->rk, queue, commit_answered, &commit,
                                    tb_sink_sync_deadline(e))) {
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
 * commit is retried by the next flush, also on an idle partition); with
 * only, of those partitions alone (a revocation's). sync commits the group
 * at once (revocation, stop). Returns 0, TB_RESULT_RETRY, or -1 with
 * errstr. */
static int record_offsets(sink_engine_t *e, bool sync,
                          rd_kafka_topic_partition_list_t *only, char *errstr,
                          size_t errstr_size)
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
        if (p->stopped || offset < 0 ||
            (only != NULL &&
             rd_kafka_topic_partition_list_find(only, p->topic, p->partition) == NULL)) {
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
        tb_sink_find_part(
            e, json_string_value(json_object_get(key, "kafka_topic")),
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
int tb_sink_flush_offsets(sink_engine_t *e, bool sync,
                          rd_kafka_topic_partition_list_t *only, char *errstr,
                          size_t errstr_size)
{
    if (only == NULL) {
        e->last_flush_ms = tb_monotonic_ms();
    }
    if (e->part_count == 0) {
        return 0;
    }
    int64_t started = tb_monotonic_us();
    int rc = record_offsets(e, sync, only, errstr, errstr_size);
    tb_task_metrics_commit(&e->metrics, started, rc == 0);
    tb_sink_count_active(e);
    return rc;
}

void tb_sink_count_active(sink_engine_t *e)
{
    int64_t active = 0;
    for (size_t i = 0; i < e->part_count; i++) {
        const partition_t *p = &e->parts[i];
        if (p->recorded >= 0 && p->expected > p->recorded) {
            active += p->expected - p->recorded;
        }
    }
    tb_active_records_set(&e->metrics.active, (double)active);
}
