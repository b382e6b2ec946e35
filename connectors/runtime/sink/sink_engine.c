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
 *
 * This file makes the consumer, starts, steps and stops the engine;
 * sink_engine_internal.h lists the files of the other parts.
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_group_offsets.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_kafka_reaper.h"
#include "connectors/kafka/tb_kafka_stats.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/sink/sink_engine_internal.h"
#include "connectors/runtime/sink/tb_sink_open.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define METRICS_INTERVAL_MS 1000
/* How often a held task polls its consumer (well inside the smallest
 * max.poll.interval.ms a group accepts). */
#define POLL_HELD_MS 1000
#define STATS_INTERVAL "5000"
/* How soon the offsets a flush stored reach the group; a round with none
 * sends nothing. */
#define AUTO_COMMIT_MS "1000"
/* A partition librdkafka has not been fetching for this long is stuck (in
 * librdkafka 2.0.2, a NOT_COORDINATOR on an offset fetch can leave it so
 * forever): the task fails, and its restart makes a new consumer. */
#define STUCK_MS 60000

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
    /* The group's offsets are what the engine stores after a flush
     * (sink_offsets.c), committed by librdkafka's own timer: it commits only
     * while the group is steady. An offset commit sent while the member
     * rejoins waits behind its JoinGroup, comes back ILLEGAL_GENERATION, and
     * librdkafka then takes the whole assignment as lost: under
     * cooperative-sticky, every partition a task kept would be revoked and
     * assigned to it again. */
    json_object_set_new(props, "enable.auto.commit", json_string("true"));
    json_object_set_new(props, "auto.commit.interval.ms", json_string(AUTO_COMMIT_MS));
    json_object_set_new(props, "enable.auto.offset.store", json_string("false"));
    json_object_set_new(props, "enable.partition.eof", json_string("false"));
    if (json_object_get(props, "statistics.interval.ms") == NULL) {
        json_object_set_new(props, "statistics.interval.ms", json_string(STATS_INTERVAL));
    }
    /* cooperative-sticky (tb_group_offsets.h) unless the user chose; the
     * engine handles both protocols */
    if (json_object_get(props, "partition.assignment.strategy") == NULL) {
        json_object_set_new(props, "partition.assignment.strategy",
                            json_string(TB_SINK_GROUP_ASSIGNOR));
    }
    return props;
}

static int subscribe(sink_engine_t *e, char *errstr, size_t errstr_size)
{
    const tb_connector_settings_t *settings = &e->env->framework;
    const char *regex = settings->topics_regex;
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
        json_array_foreach ((json_t *)settings->topics, i, topic) {
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

static bool consumer_closed(rd_kafka_t *rk, const void *arg)
{
    (void)arg;
    return rd_kafka_consumer_closed(rk) != 0;
}

/* Says that what the stop waited for was cut short by its bound. */
static void warn_cut_short(const sink_engine_t *e, const char *what,
                           const char *consequence)
{
    TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                "%s was cut short after task.shutdown.graceful.timeout.ms=%lld ms: %s",
                what, e->env->shutdown_timeout_ms, consequence);
}

/* Leaves the group and destroys the consumer, waiting for the group's
 * answer and for the destroy until the stop's deadline (an unreachable
 * broker would hold the stop forever); cut short, it says so. */
static void close_consumer(sink_engine_t *e)
{
    rd_kafka_queue_t *queue = rd_kafka_queue_new(e->rk);
    rd_kafka_error_t *error = rd_kafka_consumer_close_queue(e->rk, queue);
    if (error != NULL) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                    "closing the consumer failed: %s", rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    } else if (!tb_sink_serve_until(e->rk, queue, consumer_closed, NULL,
                                    tb_sink_sync_deadline(e))) {
        warn_cut_short(e, "closing the consumer",
                       "the group was not told that this member left (it notices when "
                       "the session times out)");
    }
    bool closed = rd_kafka_consumer_closed(e->rk) != 0;
    rd_kafka_queue_destroy(queue);
    rd_kafka_queue_destroy(e->queue);
    if (!tb_kafka_destroy_within(e->rk, closed ? 0 : RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE,
                                 tb_sink_sync_deadline(e))) {
        warn_cut_short(e, "destroying the consumer",
                       "librdkafka still waits for a broker that does not answer, and "
                       "finishes the destroy in the background");
    }
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
        if (tb_sink_flush_offsets(e, true, NULL, errstr, sizeof(errstr)) != 0) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                        "offsets not recorded at stop (records will be read again): %s",
                        errstr);
        }
        /* recorded: the revocation at close has nothing left to do */
        rd_kafka_topic_partition_list_t *closed =
            rd_kafka_topic_partition_list_new((int)e->part_count + 1);
        for (size_t i = 0; i < e->part_count; i++) {
            rd_kafka_topic_partition_list_add(closed, e->parts[i].topic,
                                              e->parts[i].partition);
        }
        tb_sink_close(e->env->plugin, e->plugin_task, closed);
        rd_kafka_topic_partition_list_destroy(closed);
        while (e->part_count > 0) {
            tb_sink_remove_part(e, &e->parts[0]);
        }
    }
    tb_sink_release_batch(e);
    if (e->rk != NULL) {
        rd_kafka_queue_cb_event_enable(e->queue, NULL, NULL);
        close_consumer(e);
    }
    if (e->plugin_task != NULL) {
        e->env->plugin->task_stop(e->plugin_task);
    }
    tb_dlq_destroy(e->dlq, e->stop_deadline_ms);
    tb_converter_destroy(e->key_converter);
    tb_converter_destroy(e->value_converter);
    tb_chain_destroy(e->chain);
    while (e->part_count > 0) {
        tb_sink_remove_part(e, &e->parts[0]);
    }
    tb_task_metrics_release(&e->metrics);
    free(e->parts);
    free(e);
}

static int sink_start(const tb_task_env_t *env, void **out, char *errstr,
                      size_t errstr_size)
{
    sink_engine_t *e = calloc(1, sizeof(*e));
    char group[256];
    const tb_connector_settings_t *settings = &env->framework;

    e->env = env;
    e->tolerate_errors = settings->errors_tolerance == TB_ERRORS_TOLERANCE_ALL;
    e->ctx = (tb_task_context_t){.connector = env->connector,
                                 .task = env->id,
                                 .record_failed = tb_sink_record_failed,
                                 .tolerates_errors = e->tolerate_errors,
                                 .failed_delivered = tb_sink_failed_delivered,
                                 .retry_after = tb_sink_retry_after,
                                 .wake = tb_sink_wake,
                                 .runtime = e};
    e->log_errors = settings->errors_log_enable;
    e->log_messages = settings->errors_log_include_messages;
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
    tb_task_describe(env, &e->metrics, e->key_converter, e->value_converter, e->chain);
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
     * it instead (tb_sink_handle_out_of_range) */
    json_object_set_new(props, "auto.offset.reset", json_string("error"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        goto fail;
    }
    rd_kafka_conf_set_opaque(conf, e);
    rd_kafka_conf_set_rebalance_cb(conf, tb_sink_on_rebalance);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_stats_cb(conf, on_stats);
    rd_kafka_conf_set_offset_commit_cb(conf, tb_sink_on_commit);
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
        tb_sink_set_paused(e, paused);
    }
    if (e->failure[0] != '\0') {
        rd_kafka_poll(e->rk, 0);
        snprintf(errstr, errstr_size, "%s", e->failure);
        return TB_TASK_STEP_FAILED;
    }
    tb_sink_retry_waiting_starts(e);
    /* also while held: polls the consumer, taking nothing */
    tb_sink_consume(e);
    if (tb_monotonic_ms() - e->last_metrics_ms >= METRICS_INTERVAL_MS) {
        tb_sink_update_partition_metrics(e);
    }
    int64_t until_retry = e->retry_at_ms - tb_monotonic_ms();
    if (e->held && until_retry > 0 && !(e->busy && atomic_load(&e->plugin_woken))) {
        return until_retry < POLL_HELD_MS ? until_retry : POLL_HELD_MS;
    }
    if (tb_sink_convert_waiting(e)) {
        until_retry = e->retry_at_ms - tb_monotonic_ms();
        return until_retry < 1              ? 1
               : until_retry < POLL_HELD_MS ? until_retry
                                            : POLL_HELD_MS;
    }
    size_t taken = e->batch_len;
    rc = tb_sink_put_batch(e, errstr, errstr_size);
    if (rc == 0 &&
        tb_monotonic_ms() - e->last_flush_ms >= e->env->offset_flush_interval_ms) {
        rc = tb_sink_flush_offsets(e, false, NULL, errstr, errstr_size);
    }
    if (rc == 0 && e->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", e->failure);
        rc = -1;
    }
    e->busy = rc == TB_RESULT_BUSY;
    if (e->busy) {
        /* read nothing until the plugin has room: its wake() ends the wait */
        tb_sink_set_held(e, true);
        e->retry_at_ms = tb_monotonic_ms() + POLL_HELD_MS;
        return POLL_HELD_MS;
    }
    if (rc == TB_RESULT_RETRY) {
        /* a plugin that asked for its own delay bounds its own retries */
        int64_t delay = e->plugin_retry_ms > 0
                            ? e->plugin_retry_ms
                            : tb_task_retry_next(&e->retry, errstr, errstr_size);
        e->plugin_retry_ms = 0;
        if (errstr[0] != '\0') { /* empty: the plugin told the operator itself */
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", e->env->connector, e->env->id,
                        "retriable failure: %s", errstr);
        }
        if (delay < 0) {
            return TB_TASK_STEP_FAILED;
        }
        tb_task_metrics_retry(&e->metrics);
        tb_sink_set_held(e, true);
        e->retry_at_ms = tb_monotonic_ms() + delay;
        return delay < POLL_HELD_MS ? delay : POLL_HELD_MS;
    }
    if (rc != 0) {
        return TB_TASK_STEP_FAILED;
    }
    tb_task_retry_reset(&e->retry);
    tb_sink_set_held(e, false);
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

const tb_task_engine_t tb_sink_engine = {
    .start = sink_start,
    .step = sink_step,
    .stop = sink_stop,
};
