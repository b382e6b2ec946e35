/*
 * kafka_log.c - a compacted topic as a log (see kafka_log.h).
 *
 * Reading uses librdkafka's simple consumer (consume_start per partition
 * onto one queue): it needs no group, so the log never joins one and
 * commits nothing. enable.partition.eof reports the end of each partition,
 * also when the last offsets are transaction markers that deliver no
 * message. Writing waits for the delivery report of every record: the
 * producer is idempotent with acks=all, so a write that returns 0 is on
 * every in-sync replica, once, in order.
 */
#include "store/kafka/kafka_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_log.h"

#define TB_LOG_FACILITY "tributary.store"
#define TB_POLL_MS 100

struct tb_kafka_log {
    tb_kafka_log_spec_t spec;
    char *topic;
    rd_kafka_t *producer;
    rd_kafka_t *consumer;
    rd_kafka_topic_t *consumer_topic;
    rd_kafka_queue_t *queue;
    int partitions;
    int started;   /* partitions whose fetching was started */
    int64_t *next; /* per partition: the offset after the last one read */
};

/* The records of one write waiting for their delivery reports. */
typedef struct {
    size_t pending;
    rd_kafka_resp_err_t err;
} tb_write_batch_t;

static int64_t tb_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int tb_log_fail(char *errstr, size_t errstr_size, const tb_kafka_log_t *log,
                       const char *what, const char *why)
{
    snprintf(errstr, errstr_size, "%s '%s': %s: %s", log->spec.role, log->spec.topic,
             what, why);
    return -1;
}

static void tb_delivered(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque)
{
    tb_write_batch_t *batch = message->_private;

    (void)rk;
    (void)opaque;
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR &&
        batch->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        batch->err = message->err;
    }
    batch->pending--;
}

/* A client of the given type from a copy of conf with settings[] (pairs,
 * NULL-terminated) on top. */
static rd_kafka_t *tb_client_new(const rd_kafka_conf_t *conf, rd_kafka_type_t type,
                                 const char *const *settings, char *errstr,
                                 size_t errstr_size)
{
    rd_kafka_conf_t *copy = rd_kafka_conf_dup(conf);
    rd_kafka_t *rk;

    for (size_t i = 0; settings[i] != NULL; i += 2) {
        if (rd_kafka_conf_set(copy, settings[i], settings[i + 1], errstr, errstr_size) !=
            RD_KAFKA_CONF_OK) {
            rd_kafka_conf_destroy(copy);
            return NULL;
        }
    }
    if (type == RD_KAFKA_PRODUCER) {
        rd_kafka_conf_set_dr_msg_cb(copy, tb_delivered);
    }
    rk = rd_kafka_new(type, copy, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(copy);
    }
    return rk;
}

/* Runs one admin request whose result arrives on a queue of its own; the
 * event (NULL on timeout) is the caller's to destroy. */
static rd_kafka_event_t *tb_admin_wait(rd_kafka_queue_t *queue, int timeout_ms)
{
    return rd_kafka_queue_poll(queue, timeout_ms + 1000);
}

/* Creates the topic, compacted; one that exists already is fine. */
static int tb_create_topic(tb_kafka_log_t *log, char *errstr, size_t errstr_size)
{
    char why[512] = "";
    rd_kafka_NewTopic_t *topic =
        rd_kafka_NewTopic_new(log->spec.topic, log->spec.partitions,
                              log->spec.replication_factor, why, sizeof(why));
    rd_kafka_queue_t *queue = rd_kafka_queue_new(log->producer);
    rd_kafka_AdminOptions_t *options = NULL;
    rd_kafka_event_t *ev = NULL;
    int rc = -1;

    if (topic == NULL) {
        return tb_log_fail(errstr, errstr_size, log, "cannot create", why);
    }
    rd_kafka_NewTopic_set_config(topic, "cleanup.policy", "compact");
    options = rd_kafka_AdminOptions_new(log->producer, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(options, log->spec.timeout_ms, why,
                                                sizeof(why));
    rd_kafka_CreateTopics(log->producer, &topic, 1, options, queue);
    ev = tb_admin_wait(queue, log->spec.timeout_ms);
    if (ev == NULL) {
        tb_log_fail(errstr, errstr_size, log, "cannot create", "no answer");
        goto done;
    }
    const rd_kafka_CreateTopics_result_t *result = rd_kafka_event_CreateTopics_result(ev);
    size_t count = 0;
    const rd_kafka_topic_result_t **topics =
        result == NULL ? NULL : rd_kafka_CreateTopics_result_topics(result, &count);
    rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
    const char *message = rd_kafka_event_error_string(ev);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && count == 1) {
        err = rd_kafka_topic_result_error(topics[0]);
        message = rd_kafka_topic_result_error_string(topics[0]);
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        TB_LOG(TB_LOG_INFO, TB_LOG_FACILITY,
               "created %s '%s' (compacted, %d partitions, replication factor %d)",
               log->spec.role, log->spec.topic, log->spec.partitions,
               log->spec.replication_factor);
    } else if (err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        tb_log_fail(errstr, errstr_size, log, "cannot create",
                    message != NULL ? message : rd_kafka_err2str(err));
        goto done;
    }
    rc = 0;
done:
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    rd_kafka_NewTopic_destroy(topic);
    return rc;
}

/* Copies the topic's cleanup.policy into policy ("" when not told). */
static int tb_cleanup_policy(tb_kafka_log_t *log, char *policy, size_t policy_size,
                             char *errstr, size_t errstr_size)
{
    rd_kafka_ConfigResource_t *resource =
        rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, log->spec.topic);
    rd_kafka_queue_t *queue = rd_kafka_queue_new(log->producer);
    rd_kafka_event_t *ev;
    int rc = -1;

    policy[0] = '\0';
    rd_kafka_DescribeConfigs(log->producer, &resource, 1, NULL, queue);
    ev = tb_admin_wait(queue, log->spec.timeout_ms);
    const rd_kafka_DescribeConfigs_result_t *result =
        ev == NULL ? NULL : rd_kafka_event_DescribeConfigs_result(ev);
    size_t count = 0;
    const rd_kafka_ConfigResource_t **resources =
        result == NULL ? NULL : rd_kafka_DescribeConfigs_result_resources(result, &count);
    if (count != 1 || rd_kafka_ConfigResource_error(resources[0]) != 0) {
        tb_log_fail(errstr, errstr_size, log, "cannot describe",
                    ev == NULL   ? "no answer"
                    : count == 1 ? rd_kafka_ConfigResource_error_string(resources[0])
                                 : rd_kafka_event_error_string(ev));
        goto done;
    }
    size_t entries = 0;
    const rd_kafka_ConfigEntry_t **configs =
        rd_kafka_ConfigResource_configs(resources[0], &entries);
    for (size_t i = 0; i < entries; i++) {
        const char *value = rd_kafka_ConfigEntry_value(configs[i]);
        if (strcmp(rd_kafka_ConfigEntry_name(configs[i]), "cleanup.policy") == 0) {
            snprintf(policy, policy_size, "%s", value != NULL ? value : "");
        }
    }
    rc = 0;
done:
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(queue);
    rd_kafka_ConfigResource_destroy(resource);
    return rc;
}

/* Sets log->partitions from the topic's metadata, waiting (bounded) for a
 * topic just created to appear in it. */
static int tb_count_partitions(tb_kafka_log_t *log, char *errstr, size_t errstr_size)
{
    int64_t deadline = tb_now_ms() + log->spec.timeout_ms;
    rd_kafka_topic_t *topic = rd_kafka_topic_new(log->producer, log->spec.topic, NULL);
    rd_kafka_resp_err_t err;

    do {
        const struct rd_kafka_metadata *md = NULL;
        err = rd_kafka_metadata(log->producer, 0, topic, &md, log->spec.timeout_ms);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            err = md->topic_cnt == 1 ? md->topics[0].err
                                     : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
            log->partitions =
                err == RD_KAFKA_RESP_ERR_NO_ERROR ? md->topics[0].partition_cnt : 0;
            rd_kafka_metadata_destroy(md);
        }
    } while ((err != RD_KAFKA_RESP_ERR_NO_ERROR || log->partitions == 0) &&
             tb_now_ms() < deadline);
    rd_kafka_topic_destroy(topic);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR || log->partitions == 0) {
        return tb_log_fail(errstr, errstr_size, log, "no metadata",
                           rd_kafka_err2str(err));
    }
    return 0;
}

/* Connect refuses an internal topic that is not compacted, and a config
 * topic of more than one partition (its records' order is the configs'
 * history); so does this. */
static int tb_check_topic(tb_kafka_log_t *log, char *errstr, size_t errstr_size)
{
    char policy[64];
    char why[256];

    if (tb_count_partitions(log, errstr, errstr_size) != 0 ||
        tb_cleanup_policy(log, policy, sizeof(policy), errstr, errstr_size) != 0) {
        return -1;
    }
    if (strcmp(policy, "compact") != 0) {
        snprintf(why, sizeof(why),
                 "has cleanup.policy=%s; an internal topic must have "
                 "cleanup.policy=compact",
                 policy);
        return tb_log_fail(errstr, errstr_size, log, "refused", why);
    }
    if (log->spec.single_partition && log->partitions != 1) {
        snprintf(why, sizeof(why), "has %d partitions; it must have exactly one",
                 log->partitions);
        return tb_log_fail(errstr, errstr_size, log, "refused", why);
    }
    return 0;
}

static int tb_start_reading(tb_kafka_log_t *log, char *errstr, size_t errstr_size)
{
    log->next = calloc((size_t)log->partitions, sizeof(*log->next));
    log->queue = rd_kafka_queue_new(log->consumer);
    log->consumer_topic = rd_kafka_topic_new(log->consumer, log->spec.topic, NULL);
    if (log->next == NULL || log->queue == NULL || log->consumer_topic == NULL) {
        return tb_log_fail(errstr, errstr_size, log, "cannot read", "out of memory");
    }
    for (; log->started < log->partitions; log->started++) {
        log->next[log->started] = -1;
        if (rd_kafka_consume_start_queue(log->consumer_topic, log->started,
                                         RD_KAFKA_OFFSET_BEGINNING, log->queue) != 0) {
            return tb_log_fail(errstr, errstr_size, log, "cannot read",
                               rd_kafka_err2str(rd_kafka_last_error()));
        }
    }
    return 0;
}

tb_kafka_log_t *tb_kafka_log_open(const rd_kafka_conf_t *conf,
                                  const tb_kafka_log_spec_t *spec, char *errstr,
                                  size_t errstr_size)
{
    static const char *const producer_settings[] = {
        "enable.idempotence", "true", "acks", "all",
        /* Java's default partitioner: murmur2 of the key bytes */
        "partitioner", "murmur2_random", "linger.ms", "0", NULL};
    static const char *const consumer_settings[] = {
        "enable.partition.eof", "true", "auto.offset.reset", "earliest",
        /* an exactly-once task's aborted offsets are not its */
        "isolation.level", "read_committed", "enable.auto.commit", "false", NULL};
    tb_kafka_log_t *log = calloc(1, sizeof(*log));

    if (log == NULL || (log->topic = strdup(spec->topic)) == NULL) {
        free(log);
        snprintf(errstr, errstr_size, "%s: out of memory", spec->role);
        return NULL;
    }
    log->spec = *spec;
    log->spec.topic = log->topic;
    log->producer =
        tb_client_new(conf, RD_KAFKA_PRODUCER, producer_settings, errstr, errstr_size);
    if (log->producer == NULL) {
        goto fail;
    }
    log->consumer =
        tb_client_new(conf, RD_KAFKA_CONSUMER, consumer_settings, errstr, errstr_size);
    if (log->consumer == NULL ||
        (!spec->no_create && tb_create_topic(log, errstr, errstr_size) != 0) ||
        tb_check_topic(log, errstr, errstr_size) != 0 ||
        tb_start_reading(log, errstr, errstr_size) != 0) {
        goto fail;
    }
    return log;
fail:
    tb_kafka_log_close(log);
    return NULL;
}

int tb_kafka_log_find_missing(const rd_kafka_conf_t *conf, const char *const *topics,
                              size_t count, bool *missing, int timeout_ms, char *errstr,
                              size_t errstr_size)
{
    static const char *const no_settings[] = {NULL};
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_t *rk =
        tb_client_new(conf, RD_KAFKA_PRODUCER, no_settings, errstr, errstr_size);
    if (rk == NULL) {
        return -1;
    }
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "cannot list the cluster's topics: %s",
                 rd_kafka_err2str(err));
        rd_kafka_destroy(rk);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        missing[i] = true;
        for (int t = 0; t < md->topic_cnt && missing[i]; t++) {
            missing[i] = strcmp(md->topics[t].topic, topics[i]) != 0;
        }
    }
    rd_kafka_metadata_destroy(md);
    rd_kafka_destroy(rk);
    return 0;
}

/* Sets end[p] to each partition's end offset now, in one request per
 * broker (a ListOffsets for the latest offset, which offsets_for_times
 * asks for with timestamp -1). Asked through the producer: on the
 * consumer's connection it would queue behind a fetch the broker holds for
 * up to fetch.wait.max.ms. A partition of a topic just created may have
 * no leader yet: errors are retried until deadline. */
static int tb_end_offsets(tb_kafka_log_t *log, int64_t *end, int64_t deadline,
                          char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *list =
        rd_kafka_topic_partition_list_new(log->partitions);
    rd_kafka_resp_err_t err;

    for (int p = 0; p < log->partitions; p++) {
        rd_kafka_topic_partition_list_add(list, log->spec.topic, p);
    }
    do {
        for (int p = 0; p < log->partitions; p++) {
            list->elems[p].offset = RD_KAFKA_OFFSET_END;
            list->elems[p].err = RD_KAFKA_RESP_ERR_NO_ERROR;
        }
        err = rd_kafka_offsets_for_times(log->producer, list, log->spec.timeout_ms);
        for (int p = 0; p < log->partitions && err == RD_KAFKA_RESP_ERR_NO_ERROR; p++) {
            err = list->elems[p].err;
            end[list->elems[p].partition] = list->elems[p].offset;
        }
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_poll(log->producer, TB_POLL_MS);
        }
    } while (err != RD_KAFKA_RESP_ERR_NO_ERROR && tb_now_ms() < deadline);
    rd_kafka_topic_partition_list_destroy(list);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return tb_log_fail(errstr, errstr_size, log, "cannot read its end",
                           rd_kafka_err2str(err));
    }
    return 0;
}

/* A partition is read when the offset after the last record or
 * end-of-partition seen reaches its end; an empty one at once. */
static bool tb_caught_up(const tb_kafka_log_t *log, const int64_t *end)
{
    for (int p = 0; p < log->partitions; p++) {
        if (end[p] > 0 && log->next[p] < end[p]) {
            return false;
        }
    }
    return true;
}

/* Takes one message off the queue: a record for cb, or the end of a
 * partition. */
static void tb_take(tb_kafka_log_t *log, rd_kafka_message_t *m, tb_kafka_log_cb cb,
                    void *opaque)
{
    if (m->partition < 0 || m->partition >= log->partitions) {
        return;
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (m->offset > log->next[m->partition]) {
            log->next[m->partition] = m->offset;
        }
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY, "%s '%s' partition %d: %s", log->spec.role,
               log->spec.topic, (int)m->partition, rd_kafka_message_errstr(m));
    } else if (m->key != NULL) {
        tb_kafka_log_record_t record = {m->key, m->key_len, m->payload, m->len};
        cb(&record, opaque);
        log->next[m->partition] = m->offset + 1;
    } else {
        log->next[m->partition] = m->offset + 1;
    }
}

int tb_kafka_log_read_to_end(tb_kafka_log_t *log, tb_kafka_log_cb cb, void *opaque,
                             char *errstr, size_t errstr_size)
{
    int64_t *end = calloc((size_t)log->partitions, sizeof(*end));
    int64_t deadline = tb_now_ms() + log->spec.timeout_ms;
    int rc = -1;

    if (end == NULL) {
        tb_log_fail(errstr, errstr_size, log, "cannot read", "out of memory");
        goto done;
    }
    if (tb_end_offsets(log, end, deadline, errstr, errstr_size) != 0) {
        goto done;
    }
    while (!tb_caught_up(log, end)) {
        if (tb_now_ms() >= deadline) {
            tb_log_fail(errstr, errstr_size, log, "cannot read",
                        "its end was not reached in time");
            goto done;
        }
        rd_kafka_message_t *m = rd_kafka_consume_queue(log->queue, TB_POLL_MS);
        if (m != NULL) {
            tb_take(log, m, cb, opaque);
            rd_kafka_message_destroy(m);
        }
    }
    rc = 0;
done:
    free(end);
    return rc;
}

/* Produces one record of batch; waits for room when the queue is full. */
static rd_kafka_resp_err_t tb_produce(tb_kafka_log_t *log,
                                      const tb_kafka_log_record_t *record,
                                      tb_write_batch_t *batch, int64_t deadline)
{
    rd_kafka_resp_err_t err;

    do {
        err =
            rd_kafka_producev(log->producer, RD_KAFKA_V_TOPIC(log->spec.topic),
                              RD_KAFKA_V_KEY((void *)record->key, record->key_len),
                              RD_KAFKA_V_VALUE((void *)record->value, record->value_len),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                              RD_KAFKA_V_OPAQUE(batch), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_poll(log->producer, TB_POLL_MS);
        }
    } while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && tb_now_ms() < deadline);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        batch->pending++;
    }
    return err;
}

int tb_kafka_log_write(tb_kafka_log_t *log, const tb_kafka_log_record_t *records,
                       size_t count, char *errstr, size_t errstr_size)
{
    tb_write_batch_t batch = {0, RD_KAFKA_RESP_ERR_NO_ERROR};
    int64_t deadline = tb_now_ms() + log->spec.timeout_ms;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;

    for (size_t i = 0; i < count && err == RD_KAFKA_RESP_ERR_NO_ERROR; i++) {
        err = tb_produce(log, &records[i], &batch, deadline);
    }
    while (batch.pending > 0 && tb_now_ms() < deadline) {
        rd_kafka_poll(log->producer, TB_POLL_MS);
    }
    if (batch.pending > 0) {
        /* the reports refer to batch: take every one before returning */
        rd_kafka_purge(log->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        while (batch.pending > 0) {
            rd_kafka_poll(log->producer, TB_POLL_MS);
        }
        err = RD_KAFKA_RESP_ERR__TIMED_OUT;
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        err = batch.err;
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return tb_log_fail(errstr, errstr_size, log, "write not acknowledged",
                           rd_kafka_err2str(err));
    }
    return 0;
}

void tb_kafka_log_close(tb_kafka_log_t *log)
{
    if (log == NULL) {
        return;
    }
    for (int p = 0; p < log->started; p++) {
        rd_kafka_consume_stop(log->consumer_topic, p);
    }
    if (log->consumer_topic != NULL) {
        rd_kafka_topic_destroy(log->consumer_topic);
    }
    if (log->queue != NULL) {
        rd_kafka_queue_destroy(log->queue);
    }
    if (log->consumer != NULL) {
        rd_kafka_destroy(log->consumer);
    }
    if (log->producer != NULL) {
        rd_kafka_destroy(log->producer);
    }
    free(log->next);
    free(log->topic);
    free(log);
}
