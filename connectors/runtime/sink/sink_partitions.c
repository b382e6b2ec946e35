/*
 * The sink engine's partitions: what a rebalance assigns and revokes,
 * where each assigned partition starts (resolved to a number before
 * assign, tb_sink_start.h), what happens when its offset falls out of
 * range later, and the pause of stopped, paused and held partitions.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/sink/sink_engine_internal.h"
#include "connectors/runtime/sink/tb_sink_open.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

/* A query to Kafka holds a pool thread for at most QUERY_STEP_MS; a
 * partition whose query got no answer waits and is resolved again at a later
 * step (tb_sink_retry_waiting_starts). */
#define QUERY_STEP_MS 1000
#define SEEK_TIMEOUT_MS 10000 /* served by librdkafka's own threads */

/* Where a partition that is not read (stopped, or waiting for its start) is
 * assigned, paused: a real offset, never a logical one such as the end.
 * librdkafka 2.0.2 looks a logical offset up, and a reply that comes after
 * the next assign of the partition (outdated) re-arms its offset query with
 * the old logical offset: a partition assigned again at a real offset once
 * its start is known would then jump to the end and skip what it should
 * read. */
#define UNREAD_OFFSET 0

partition_t *tb_sink_find_part(sink_engine_t *e, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < e->part_count; i++) {
        if (e->parts[i].partition == partition && strcmp(e->parts[i].topic, topic) == 0) {
            return &e->parts[i];
        }
    }
    return NULL;
}

partition_t *tb_sink_part_of(sink_engine_t *e, part_run_t *run,
                             const rd_kafka_message_t *msg)
{
    if (run->rkt != msg->rkt || run->partition != msg->partition) {
        *run = (part_run_t){
            .rkt = msg->rkt,
            .partition = msg->partition,
            .part = tb_sink_find_part(e, rd_kafka_topic_name(msg->rkt), msg->partition)};
    }
    return run->part;
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

void tb_sink_remove_part(sink_engine_t *e, partition_t *p)
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

/* Refreshes each partition's position, end offset and lag gauges. The end
 * offsets are librdkafka's cached high watermarks (no request). */
void tb_sink_update_partition_metrics(sink_engine_t *e)
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
        if (!p->stopped && positions->elems[i].offset >= 0) {
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
        return UNREAD_OFFSET;
    }
    if (!p->stopped) {
        return start->offset;
    }
    TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", e->env->connector, e->env->id,
                "partition %s-%d stopped: %s", p->topic, (int)p->partition,
                start->reason);
    tb_partition_metrics_stop(&p->metrics, e->env->connector, p->topic, p->partition,
                              start->cause);
    return UNREAD_OFFSET;
}

/* The store could not say where the partitions start: none of them is
 * read (assigned at UNREAD_OFFSET, paused by apply_pauses), and the task fails
 * with the store's message. */
static void refuse_starts(sink_engine_t *e, rd_kafka_topic_partition_list_t *list,
                          const char *why)
{
    for (int i = 0; i < list->cnt; i++) {
        rd_kafka_topic_partition_t *tp = &list->elems[i];
        partition_t *p = tb_sink_find_part(e, tp->topic, tp->partition);
        if (p == NULL) {
            p = add_part(e, tp->topic, tp->partition);
        }
        p->stopped = true;
        tp->offset = UNREAD_OFFSET;
    }
    if (e->failure[0] == '\0') {
        snprintf(e->failure, sizeof(e->failure),
                 "the start offsets of the assigned partitions cannot be resolved: %s",
                 why);
    }
}

/* The start of a partition whose group offset (or the plugin's own, what)
 * could not be read: decided at a later attempt, as one whose watermarks
 * could not be read. */
static tb_start_t waiting_for(const char *what, const char *error)
{
    tb_start_t start = {.offset = TB_OFFSET_NONE, .origin = TB_START_WAITING};
    snprintf(start.reason, sizeof(start.reason),
             "waiting for %s, which could not be read: %.180s", what, error);
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
    /* a plugin that keeps its own offsets (Connect's open() and
     * SinkTaskContext.offset) has the last word on where each one starts */
    char open_error[512];
    int64_t *stored_of = calloc((size_t)list->cnt + 1, sizeof(*stored_of));
    for (int i = 0; stored_of != NULL && i < list->cnt; i++) {
        stored_of[i] =
            stored_offset(stored, list->elems[i].topic, list->elems[i].partition);
    }
    int64_t *own = stored_of != NULL
                       ? tb_sink_open(e->env->plugin, e->plugin_task, list, stored_of,
                                      open_error, sizeof(open_error))
                       : NULL;
    if (stored_of == NULL) {
        snprintf(open_error, sizeof(open_error), "out of memory");
    }
    free(stored_of);
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
            .has_plugin = own != NULL && own[i] != TB_PLUGIN_NO_OFFSET,
            .plugin = own != NULL ? own[i] : TB_PLUGIN_NO_OFFSET,
        };
        tb_start_t start = group_err != RD_KAFKA_RESP_ERR_NO_ERROR
                               ? waiting_for("the group's committed offsets",
                                             rd_kafka_err2str(group_err))
                           : own == NULL
                               ? waiting_for("the plugin's own offsets", open_error)
                               : tb_sink_start_resolve(&in);
        partition_t *p = tb_sink_find_part(e, tp->topic, tp->partition);
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
        p->position_exact = true; /* assigned at a real offset, nothing fetched */
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
    free(own);
}

/* After an assign: stopped partitions stay assigned (the group keeps them
 * here) but paused, as are all while the task is paused or held; every
 * other one is resumed, since librdkafka keeps a partition paused across a
 * revocation and its next assignment (one revoked while the task was held
 * would never be read again). */
static void apply_pauses(sink_engine_t *e)
{
    rd_kafka_topic_partition_list_t *paused = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_t *read = rd_kafka_topic_partition_list_new(1);
    for (size_t i = 0; i < e->part_count; i++) {
        bool reading = !e->parts[i].stopped && !e->paused && !e->held;
        e->parts[i].position_exact = e->parts[i].position_exact && reading;
        rd_kafka_topic_partition_list_add(reading ? read : paused, e->parts[i].topic,
                                          e->parts[i].partition);
    }
    if (paused->cnt > 0) {
        rd_kafka_pause_partitions(e->rk, paused);
    }
    if (read->cnt > 0) {
        rd_kafka_resume_partitions(e->rk, read);
    }
    rd_kafka_topic_partition_list_destroy(read);
    rd_kafka_topic_partition_list_destroy(paused);
}

/* After a cooperative rebalance's callback: librdkafka paused every assigned
 * partition before the callback and resumed them in the incremental assign
 * or unassign, but a resume does not wake the broker thread that fetches
 * them; one that found all its partitions paused meanwhile sleeps up to a
 * second (librdkafka 2.8.0's longest block) before it fetches again, and the
 * partitions the task kept stall that long at every rebalance. A request to
 * the broker wakes its thread: the end offsets of the partitions read, asked
 * once apply_pauses has resumed them synchronously (after librdkafka's own
 * resume), wake each of their leaders, which then fetch at once. An answer
 * that does not come changes nothing but the wait. */
static void wake_fetchers(sink_engine_t *e)
{
    rd_kafka_topic_partition_list_t *read = rd_kafka_topic_partition_list_new(1);
    for (size_t i = 0; i < e->part_count && !e->paused && !e->held; i++) {
        if (!e->parts[i].stopped) {
            rd_kafka_topic_partition_list_add(read, e->parts[i].topic,
                                              e->parts[i].partition)
                ->offset = RD_KAFKA_OFFSET_END;
        }
    }
    if (read->cnt > 0) {
        rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(e->rk, read, QUERY_STEP_MS);
        TB_LOG_TASK(TB_LOG_DEBUG, "tributary.task", e->env->connector, e->env->id,
                    "%d partition(s) kept through the rebalance, fetchers woken: %s",
                    read->cnt, rd_kafka_err2str(err));
    }
    rd_kafka_topic_partition_list_destroy(read);
}

void tb_sink_on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t *list, void *opaque)
{
    sink_engine_t *e = opaque;
    char errstr[512];
    bool cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;

    /* librdkafka paused the assignment before this call, from its own
     * thread: a consume under way may have purged records, its position
     * moved over them */
    for (size_t i = 0; i < e->part_count; i++) {
        e->parts[i].position_exact = false;
    }
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        if (e->revoked_us > 0) {
            tb_series_observe(e->metrics.rebalance_pause,
                              (double)(tb_monotonic_us() - e->revoked_us) / 1e6);
            e->revoked_us = 0;
        }
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
        apply_pauses(e);
        if (cooperative) {
            wake_fetchers(e);
        }
        return;
    }
    /* revoked or lost: record what was written of those partitions before
     * letting go (the others go on, as Connect's closing of revoked
     * partitions commits theirs only); an eager group reads nothing until its
     * next assignment */
    if (list->cnt > 0 && !cooperative) {
        e->revoked_us = tb_monotonic_us();
    }
    bool lost = rd_kafka_assignment_lost(rk);
    if (lost && list->cnt > 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "%d partition(s) lost with the consumer's group membership (the "
                    "group went on without it): what was written since the last "
                    "offsets recorded is read again",
                    list->cnt);
    }
    if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && !lost &&
        tb_sink_flush_offsets(e, true, list, errstr, sizeof(errstr)) != 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "offsets not recorded at revocation (records will be read "
                    "again): %s",
                    errstr);
    }
    tb_sink_close(e->env->plugin, e->plugin_task, list);
    for (int i = 0; i < list->cnt; i++) {
        partition_t *p =
            tb_sink_find_part(e, list->elems[i].topic, list->elems[i].partition);
        if (p != NULL) {
            tb_sink_drop_pending(e, p);
            tb_sink_remove_part(e, p);
        }
    }
    tell_waiting(e);
    if (cooperative) {
        rd_kafka_error_t *error = rd_kafka_incremental_unassign(rk, list);
        if (error != NULL) {
            rd_kafka_error_destroy(error);
        }
        apply_pauses(e);
        wake_fetchers(e);
    } else {
        rd_kafka_assign(rk, NULL);
    }
}

/* Assigns p again, from the offset it expects (a stopped one at UNREAD_OFFSET,
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
        partition_t *q = &e->parts[i];
        if (!cooperative || q == p) {
            q->position_exact = false;
            rd_kafka_topic_partition_list_add(list, q->topic, q->partition)->offset =
                q->stopped ? UNREAD_OFFSET : q->expected;
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
    apply_pauses(e);
}

/* librdkafka found a partition's next offset out of range (its own
 * auto.offset.reset is "error", see sink_start): the records were deleted
 * before they were read (retention, kafka-delete-records), or the partition
 * was truncated or recreated. Decided as at start, from the offset expected
 * and the watermarks, and logged once; the partition then fetches again. */
void tb_sink_handle_out_of_range(sink_engine_t *e, const char *topic, int32_t partition)
{
    partition_t *p = tb_sink_find_part(e, topic, partition);
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
void tb_sink_retry_waiting_starts(sink_engine_t *e)
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
    for (int i = 0; i < list->cnt; i++) {
        partition_t *p =
            tb_sink_find_part(e, list->elems[i].topic, list->elems[i].partition);
        if (!p->stopped) {
            assign_again(e, p); /* resumed there, paused while it waited */
        }
    }
    rd_kafka_topic_partition_list_destroy(list);
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
            p->position_exact = false;
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
void tb_sink_set_paused(sink_engine_t *e, bool paused)
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
void tb_sink_set_held(sink_engine_t *e, bool held)
{
    if (held != e->held) {
        e->held = held;
        if (!e->paused) {
            read_partitions(e, !held);
        }
    }
}
