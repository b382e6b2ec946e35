/*
 * MirrorCheckpointConnector - translates the committed offsets of the
 * source cluster's consumer groups into offsets of the remote topics, as
 * MirrorMaker 2's does, and writes them as MM2's Checkpoint records to
 * "<source alias>.checkpoints.internal" on the worker's cluster (the
 * target): key {group, topic, partition} (INT16-length strings, INT32),
 * value the version (INT16 0) then {upstreamOffset INT64, offset INT64,
 * metadata STRING}, partition 0, source partition {"group","topic",
 * "partition"} and offset {"offset":0}. With sync.group.offsets.enabled it
 * also commits them to the target's groups of the same names while those
 * have no active member.
 *
 * A task first reads the checkpoints topic back (the last checkpoint of
 * each of its groups' partitions: a checkpoint never goes back downstream
 * unless the group went back upstream), then the offset-syncs topic to its
 * end (MM2's OffsetSyncStore: tb_mirror_syncs_*), then every
 * emit.checkpoints.interval.seconds lists the committed offsets of its
 * groups on the source and writes a checkpoint for each partition of a
 * topic the topic filter takes whose translation moved. Its groups are
 * those of the source that the group filter takes and whose id hashes to
 * the task's index, found again every refresh.groups.interval.seconds.
 *
 * Admin requests are bounded by admin.timeout.ms, each on the task's
 * thread between polls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/mirror/tb_mirror.h"
#include "connectors/tb_plugin.h"
#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_time.h"

#define LOGGER "tributary.mirror"
#define LOADING_WAKE_MS 20 /* how soon a task reading its topics back looks again */
#define IDLE_WAKE_MS 500   /* the longest the offset syncs wait to be read */
#define BATCH 1000         /* messages taken from a consumer at once */
/* MM2's checkpoint-latency-ms (and -max, -min, -avg) of a group's
 * partition, a checkpoint's time from its creation to Kafka's
 * acknowledgement: the names a JMX exporter's rules for MM2 (Strimzi's)
 * give them, in seconds as every Connect time in ms is served
 * (docs/OPERATIONS.md). */
static const char *const latency_labels[] = {"source", "target",    "group",
                                             "topic",  "partition", NULL};
static const tb_mirror_timing_defs_t checkpoint_latency =
    TB_MIRROR_TIMING_DEFS("checkpoint_connector", "checkpoint_latency", latency_labels,
                          "Time it takes consumer group offsets to replicate from source "
                          "to target cluster");

#define RETRY_REFRESH_MS                                                                 \
    2000 /* a listing of the groups that failed is tried again after */

typedef struct {
    char *connector;
    int task;
    int task_index;
    int task_count;
    json_t *values; /* parsed keys; settings' strings point into them */
    json_t *config; /* the task config, for the clients' keys */
    tb_mirror_settings_t settings;
    tb_mirror_names_t names;
    tb_mirror_filter_t topics;
    tb_mirror_filter_t group_filter;
    rd_kafka_t *source; /* admin requests on the source: groups, offsets */
    rd_kafka_t *target; /* admin requests on the target */
    rd_kafka_t *loader; /* reads the checkpoints topic back; NULL once done */
    rd_kafka_queue_t *loader_queue;
    bool loaded;       /* the checkpoints were read back whole */
    rd_kafka_t *syncs; /* reads the offset-syncs topic */
    rd_kafka_queue_t *syncs_queue;
    bool syncs_at_end;
    bool syncs_failing; /* the last read of the offset syncs failed (logged) */
    char *syncs_topic;
    char *checkpoints_topic;
    tb_mirror_syncs_t *store;
    json_t *groups;              /* the task's group ids: id -> true */
    bool groups_listed;          /* the source's groups were listed once */
    json_t *checkpoints;         /* group -> "<partition>:<topic>" -> last checkpoint */
    json_t *told;                /* groups whose offsets could not be synced (logged) */
    tb_source_record_t *pending; /* checkpoints not handed to the runtime yet */
    size_t pending_count;
    size_t pending_next;
    int64_t next_refresh_ms;
    int64_t next_emit_ms;
    int64_t next_sync_ms;
    rd_kafka_message_t **messages;
    json_t *latency_index; /* "<group>\n<partition>:<topic>" -> index in latency */
    tb_mirror_timing_t *latency;
    size_t latency_count;
} mirror_checkpoint_t;

/* Whether group is one of the task's: the group filter takes it and its
 * id hashes to the task's index. */
static bool ours(const mirror_checkpoint_t *c, const char *group)
{
    return tb_mirror_filter_matches(&c->group_filter, group) &&
           tb_mirror_hash(group) % (uint32_t)c->task_count == (uint32_t)c->task_index;
}

/* The result event of an admin request on queue, or NULL when none came in
 * time (errstr says so). */
static rd_kafka_event_t *admin_wait(const mirror_checkpoint_t *c, rd_kafka_queue_t *queue,
                                    char *errstr, size_t errstr_size)
{
    rd_kafka_event_t *ev =
        rd_kafka_queue_poll(queue, (int)c->settings.admin_timeout_ms + 5000);
    if (ev == NULL) {
        snprintf(errstr, errstr_size, "no answer in %lld ms",
                 (long long)c->settings.admin_timeout_ms);
    } else if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "%s", rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        ev = NULL;
    }
    return ev;
}

static rd_kafka_AdminOptions_t *admin_options(const mirror_checkpoint_t *c,
                                              rd_kafka_t *rk, rd_kafka_admin_op_t op)
{
    rd_kafka_AdminOptions_t *options = rd_kafka_AdminOptions_new(rk, op);
    rd_kafka_AdminOptions_set_request_timeout(options, (int)c->settings.admin_timeout_ms,
                                              NULL, 0);
    return options;
}

/* A consumer of partition 0 of topic on one cluster, from its beginning,
 * telling when it reaches the end. NULL with errstr. */
static rd_kafka_t *open_reader(const mirror_checkpoint_t *c, const char *side,
                               const char *bootstrap, const char *topic,
                               rd_kafka_queue_t **queue, char *errstr, size_t errstr_size)
{
    char group[300];
    snprintf(group, sizeof(group), "tributary-mirror-%s", c->connector);
    json_t *extra = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "bootstrap.servers", bootstrap,
                              "group.id", group, "enable.auto.commit", "false",
                              "enable.partition.eof", "true", "isolation.level",
                              "read_committed", "allow.auto.create.topics", "false");
    rd_kafka_t *rk =
        tb_mirror_client(c->config, side, RD_KAFKA_CONSUMER, extra, errstr, errstr_size);
    json_decref(extra);
    if (rk == NULL) {
        return NULL;
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_resp_err_t err = rd_kafka_assign(rk, list);
    rd_kafka_topic_partition_list_destroy(list);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "cannot read %s: %s", topic, rd_kafka_err2str(err));
        rd_kafka_destroy(rk);
        return NULL;
    }
    *queue = rd_kafka_queue_get_consumer(rk);
    return rk;
}

static void close_reader(rd_kafka_t **rk, rd_kafka_queue_t **queue)
{
    if (*queue != NULL) {
        rd_kafka_queue_destroy(*queue);
        *queue = NULL;
    }
    if (*rk != NULL) {
        rd_kafka_consumer_close(*rk);
        rd_kafka_destroy(*rk);
        *rk = NULL;
    }
}

static void checkpoint_key(char *buf, size_t size, const char *topic, int32_t partition)
{
    snprintf(buf, size, "%" PRId32 ":%s", partition, topic);
}

/* Remembers the last checkpoint of a group's partition; its commit
 * metadata is metadata_len bytes, NULs included. */
static void remember(mirror_checkpoint_t *c, const char *group, const char *topic,
                     int32_t partition, int64_t upstream, int64_t downstream,
                     const char *metadata, size_t metadata_len)
{
    char key[320];
    json_t *of_group = json_object_get(c->checkpoints, group);
    if (of_group == NULL) {
        of_group = json_object();
        json_object_set_new(c->checkpoints, group, of_group);
    }
    checkpoint_key(key, sizeof(key), topic, partition);
    json_object_set_new(of_group, key,
                        json_pack("{s:s,s:i,s:I,s:I,s:s%}", "topic", topic, "partition",
                                  (int)partition, "upstream", (json_int_t)upstream,
                                  "downstream", (json_int_t)downstream, "metadata",
                                  metadata, metadata_len));
}

/* One record of the checkpoints topic read back: kept when its group is the
 * task's (an undecodable one is skipped, logged, as MM2 does). */
static void load_checkpoint(mirror_checkpoint_t *c, const rd_kafka_message_t *msg)
{
    const uint8_t *k = msg->key, *v = msg->payload;
    const uint8_t *k_end = k + msg->key_len, *v_end = v + msg->len;
    char *group = NULL, *topic = NULL, *metadata = NULL;
    size_t metadata_len = 0;
    int32_t partition;
    int16_t version;
    int64_t upstream, downstream;
    if (k != NULL && v != NULL && tb_mirror_get_string(&k, k_end, &group) &&
        tb_mirror_get_string(&k, k_end, &topic) &&
        tb_mirror_get_i32(&k, k_end, &partition) &&
        tb_mirror_get_i16(&v, v_end, &version) && version == 0 &&
        tb_mirror_get_i64(&v, v_end, &upstream) &&
        tb_mirror_get_i64(&v, v_end, &downstream) &&
        tb_mirror_get_stringn(&v, v_end, &metadata, &metadata_len)) {
        /* the task's groups, or, before they could be listed, those that
         * can be */
        if (c->groups_listed ? json_object_get(c->groups, group) != NULL
                             : ours(c, group)) {
            remember(c, group, topic, partition, upstream, downstream, metadata,
                     metadata_len);
        }
    } else {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                    "skipping the record at offset %" PRId64
                    " of %s: not a MirrorMaker 2 checkpoint",
                    msg->offset, c->checkpoints_topic);
    }
    free(group);
    free(topic);
    free(metadata);
}

/* One record of the offset-syncs topic: key {topic, partition}, value
 * {upstreamOffset, offset}. */
static void load_sync(mirror_checkpoint_t *c, const rd_kafka_message_t *msg)
{
    const uint8_t *k = msg->key, *v = msg->payload;
    char *topic = NULL;
    tb_mirror_sync_t sync = {.seq = msg->offset};
    int32_t partition;
    if (k != NULL && v != NULL && tb_mirror_get_string(&k, k + msg->key_len, &topic) &&
        tb_mirror_get_i32(&k, (const uint8_t *)msg->key + msg->key_len, &partition) &&
        tb_mirror_get_i64(&v, v + msg->len, &sync.upstream) &&
        tb_mirror_get_i64(&v, (const uint8_t *)msg->payload + msg->len,
                          &sync.downstream)) {
        tb_mirror_syncs_add(c->store, topic, partition, sync, !c->loaded);
    } else {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                    "skipping the record at offset %" PRId64
                    " of %s: not a MirrorMaker 2 offset sync",
                    msg->offset, c->syncs_topic);
    }
    free(topic);
}

/* Reads what the checkpoints topic has ready; at its end (or when it
 * cannot be read: logged, and then, as in MM2, the offset syncs before the
 * end of their topic are not used), the offset syncs are read next. */
static void read_checkpoints(mirror_checkpoint_t *c)
{
    ssize_t got = rd_kafka_consume_batch_queue(c->loader_queue, 0, c->messages, BATCH);
    bool done = false, failed = false;
    for (ssize_t i = 0; i < got; i++) {
        rd_kafka_message_t *msg = c->messages[i];
        if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            done = true;
        } else if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (!failed) {
                TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                            "cannot read the checkpoints of %s back (%s): only offsets "
                            "copied from now on are checkpointed",
                            c->checkpoints_topic, rd_kafka_message_errstr(msg));
            }
            failed = done = true;
        } else if (!failed) {
            load_checkpoint(c, msg);
        }
        rd_kafka_message_destroy(msg);
    }
    if (done) {
        c->loaded = !failed;
        if (failed) {
            json_object_clear(c->checkpoints);
        } else {
            TB_LOG_TASK(TB_LOG_INFO, LOGGER, c->connector, c->task,
                        "read the checkpoints of %zu consumer groups back from %s",
                        json_object_size(c->checkpoints), c->checkpoints_topic);
        }
        close_reader(&c->loader, &c->loader_queue);
    }
}

/* Reads the offset syncs that came. */
static void read_syncs(mirror_checkpoint_t *c)
{
    ssize_t got = rd_kafka_consume_batch_queue(c->syncs_queue, 0, c->messages, BATCH);
    for (ssize_t i = 0; i < got; i++) {
        rd_kafka_message_t *msg = c->messages[i];
        if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (!c->syncs_at_end) {
                c->syncs_at_end = true;
                tb_mirror_syncs_read_to_end(c->store);
            }
        } else if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (!c->syncs_failing) {
                TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                            "cannot read the offset syncs of %s (%s); checkpoints wait "
                            "for them",
                            c->syncs_topic, rd_kafka_message_errstr(msg));
            }
            c->syncs_failing = true;
        } else {
            c->syncs_failing = false;
            load_sync(c, msg);
        }
        rd_kafka_message_destroy(msg);
    }
}

/* The source's groups that are the task's. Groups gone from the source are
 * dropped with their checkpoints. false (logged, the groups kept as they
 * were) when the source cannot say. */
static bool refresh_groups(mirror_checkpoint_t *c)
{
    char reason[512];
    rd_kafka_queue_t *queue = rd_kafka_queue_new(c->source);
    rd_kafka_AdminOptions_t *options =
        admin_options(c, c->source, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS);
    rd_kafka_ListConsumerGroups(c->source, options, queue);
    rd_kafka_event_t *ev = admin_wait(c, queue, reason, sizeof(reason));
    if (ev == NULL) {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                    "cannot list the consumer groups of cluster %s: %s",
                    c->settings.source_alias, reason);
    } else {
        size_t count = 0;
        const rd_kafka_ConsumerGroupListing_t **listed =
            rd_kafka_ListConsumerGroups_result_valid(
                rd_kafka_event_ListConsumerGroups_result(ev), &count);
        json_t *groups = json_object();
        for (size_t i = 0; i < count; i++) {
            const char *id = rd_kafka_ConsumerGroupListing_group_id(listed[i]);
            if (ours(c, id)) {
                json_object_set_new(groups, id, json_true());
            }
        }
        if (!json_equal(groups, c->groups)) {
            TB_LOG_TASK(TB_LOG_INFO, LOGGER, c->connector, c->task,
                        "checkpointing %zu consumer groups of %s->%s",
                        json_object_size(groups), c->settings.source_alias,
                        c->settings.target_alias);
        }
        const char *id;
        json_t *value, *tmp;
        json_object_foreach_safe (c->checkpoints, tmp, id, value) {
            if (json_object_get(groups, id) == NULL) {
                json_object_del(c->checkpoints, id);
            }
        }
        json_decref(c->groups);
        c->groups = groups;
    }
    bool listed = ev != NULL;
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    return listed;
}

/* The committed offsets of group on rk's cluster (a new list), or NULL
 * with errstr. */
static rd_kafka_topic_partition_list_t *group_offsets(const mirror_checkpoint_t *c,
                                                      rd_kafka_t *rk, const char *group,
                                                      char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *offsets = NULL;
    rd_kafka_queue_t *queue = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *options =
        admin_options(c, rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
    rd_kafka_ListConsumerGroupOffsets_t *request =
        rd_kafka_ListConsumerGroupOffsets_new(group, NULL);
    rd_kafka_ListConsumerGroupOffsets(rk, &request, 1, options, queue);
    rd_kafka_event_t *ev = admin_wait(c, queue, errstr, errstr_size);
    size_t count = 0;
    const rd_kafka_group_result_t **results =
        ev != NULL ? rd_kafka_ListConsumerGroupOffsets_result_groups(
                         rd_kafka_event_ListConsumerGroupOffsets_result(ev), &count)
                   : NULL;
    if (count == 1 && rd_kafka_group_result_error(results[0]) != NULL) {
        snprintf(errstr, errstr_size, "%s",
                 rd_kafka_error_string(rd_kafka_group_result_error(results[0])));
    } else if (count == 1) {
        offsets = rd_kafka_topic_partition_list_copy(
            rd_kafka_group_result_partitions(results[0]));
    } else if (ev != NULL) {
        snprintf(errstr, errstr_size, "no result");
    }
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_ListConsumerGroupOffsets_destroy(request);
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    return offsets;
}

/* MM2's rule for writing a checkpoint: the first of its partition, after
 * the group went back upstream, or when it moves forward downstream. */
static bool newer(const json_t *last, int64_t upstream, int64_t downstream)
{
    return last == NULL ||
           upstream < json_integer_value(json_object_get(last, "upstream")) ||
           downstream > json_integer_value(json_object_get(last, "downstream"));
}

/* Adds MM2's Checkpoint record to the pending ones. */
static void add_record(mirror_checkpoint_t *c, const char *group, const char *topic,
                       int32_t partition, int64_t upstream, int64_t downstream,
                       const char *metadata, size_t metadata_len, int64_t timestamp)
{
    size_t key_len = 2 + strlen(group) + 2 + strlen(topic) + 4;
    size_t value_len = 2 + 8 + 8 + 2 + metadata_len;
    uint8_t *key = malloc(key_len), *value = malloc(value_len);
    tb_mirror_put_i32(tb_mirror_put_string(tb_mirror_put_string(key, group), topic),
                      partition);
    tb_mirror_put_stringn(
        tb_mirror_put_i64(tb_mirror_put_i64(tb_mirror_put_i16(value, 0), upstream),
                          downstream),
        metadata, metadata_len);
    c->pending = realloc(c->pending, (c->pending_count + 1) * sizeof(*c->pending));
    c->pending[c->pending_count++] = (tb_source_record_t){
        .topic = c->checkpoints_topic,
        .partition = 0,
        .key = key,
        .key_len = key_len,
        .key_kind = TB_DATA_BYTES,
        .value = value,
        .value_len = value_len,
        .value_kind = TB_DATA_BYTES,
        .source_partition = json_pack("{s:s,s:s,s:i}", "group", group, "topic", topic,
                                      "partition", (int)partition),
        .source_offset = json_pack("{s:i}", "offset", 0),
        .timestamp = timestamp,
    };
}

/* Translates the committed offsets of group and adds a checkpoint for each
 * that moved. */
static void checkpoint_group(mirror_checkpoint_t *c, const char *group)
{
    char reason[512], key[320];
    int64_t timestamp = tb_wall_ms();
    rd_kafka_topic_partition_list_t *offsets =
        group_offsets(c, c->source, group, reason, sizeof(reason));
    if (offsets == NULL) {
        TB_LOG_TASK(TB_LOG_ERROR, LOGGER, c->connector, c->task,
                    "cannot list the offsets of consumer group %s on cluster %s: %s",
                    group, c->settings.source_alias, reason);
        return;
    }
    for (int i = 0; i < offsets->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &offsets->elems[i];
        int64_t downstream;
        if (tp->offset < 0 || tp->err != RD_KAFKA_RESP_ERR_NO_ERROR ||
            !tb_mirror_filter_matches(&c->topics, tp->topic) ||
            !tb_mirror_syncs_translate(c->store, tp->topic, tp->partition, tp->offset,
                                       &downstream) ||
            downstream < 0) {
            continue;
        }
        char *topic = tb_mirror_checkpoint_topic(&c->names, tp->topic);
        /* the broker's bytes, as MM2 copies them (a NUL included) */
        const char *metadata = tp->metadata != NULL ? (const char *)tp->metadata : "";
        size_t metadata_len = tp->metadata != NULL ? tp->metadata_size : 0;
        checkpoint_key(key, sizeof(key), topic, tp->partition);
        if (newer(json_object_get(json_object_get(c->checkpoints, group), key),
                  tp->offset, downstream)) {
            remember(c, group, topic, tp->partition, tp->offset, downstream, metadata,
                     metadata_len);
            json_object_set_new(
                json_object_get(json_object_get(c->checkpoints, group), key), "at",
                json_integer(timestamp));
            add_record(c, group, topic, tp->partition, tp->offset, downstream, metadata,
                       metadata_len, timestamp);
        }
        free(topic);
    }
    rd_kafka_topic_partition_list_destroy(offsets);
}

/* The state of each of groups on the target: id -> rd_kafka's state, a
 * group the target does not know DEAD. NULL with errstr. */
static json_t *target_states(const mirror_checkpoint_t *c, const char **groups,
                             size_t count, char *errstr, size_t errstr_size)
{
    rd_kafka_queue_t *queue = rd_kafka_queue_new(c->target);
    rd_kafka_AdminOptions_t *options =
        admin_options(c, c->target, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
    rd_kafka_DescribeConsumerGroups(c->target, groups, count, options, queue);
    rd_kafka_event_t *ev = admin_wait(c, queue, errstr, errstr_size);
    json_t *states = NULL;
    if (ev != NULL) {
        size_t n = 0;
        const rd_kafka_ConsumerGroupDescription_t **described =
            rd_kafka_DescribeConsumerGroups_result_groups(
                rd_kafka_event_DescribeConsumerGroups_result(ev), &n);
        states = json_object();
        for (size_t i = 0; i < n; i++) {
            const rd_kafka_error_t *error =
                rd_kafka_ConsumerGroupDescription_error(described[i]);
            int state = rd_kafka_ConsumerGroupDescription_state(described[i]);
            if (error != NULL &&
                rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
                state = RD_KAFKA_CONSUMER_GROUP_STATE_DEAD;
            } else if (error != NULL) {
                state = RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN;
            }
            json_object_set_new(states,
                                rd_kafka_ConsumerGroupDescription_group_id(described[i]),
                                json_integer(state));
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    return states;
}

/* Logs a group whose offsets are not synced, once until they are again. */
static void tell_unsynced(mirror_checkpoint_t *c, const char *group, tb_log_level_t level,
                          const char *why)
{
    if (json_object_get(c->told, group) == NULL) {
        json_object_set_new(c->told, group, json_true());
        TB_LOG_TASK(level, LOGGER, c->connector, c->task,
                    "the offsets of consumer group %s are not synced to cluster %s: %s",
                    group, c->settings.target_alias, why);
    }
}

/* Commits offsets to group on the target. */
static void commit_offsets(mirror_checkpoint_t *c, const char *group,
                           const rd_kafka_topic_partition_list_t *offsets)
{
    char reason[512] = "";
    rd_kafka_queue_t *queue = rd_kafka_queue_new(c->target);
    rd_kafka_AdminOptions_t *options =
        admin_options(c, c->target, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS);
    rd_kafka_AlterConsumerGroupOffsets_t *request =
        rd_kafka_AlterConsumerGroupOffsets_new(group, offsets);
    rd_kafka_AlterConsumerGroupOffsets(c->target, &request, 1, options, queue);
    rd_kafka_event_t *ev = admin_wait(c, queue, reason, sizeof(reason));
    size_t count = 0;
    const rd_kafka_group_result_t **results =
        ev != NULL ? rd_kafka_AlterConsumerGroupOffsets_result_groups(
                         rd_kafka_event_AlterConsumerGroupOffsets_result(ev), &count)
                   : NULL;
    const rd_kafka_error_t *error =
        count == 1 ? rd_kafka_group_result_error(results[0]) : NULL;
    const rd_kafka_topic_partition_list_t *done =
        count == 1 && error == NULL ? rd_kafka_group_result_partitions(results[0]) : NULL;
    for (int i = 0; done != NULL && i < done->cnt && reason[0] == '\0'; i++) {
        if (done->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(reason, sizeof(reason), "%s [%" PRId32 "]: %s", done->elems[i].topic,
                     done->elems[i].partition, rd_kafka_err2str(done->elems[i].err));
        }
    }
    if (error != NULL) {
        snprintf(reason, sizeof(reason), "%s",
                 rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID
                     ? "it has active members there"
                     : rd_kafka_error_string(error));
    } else if (ev != NULL && count != 1) {
        snprintf(reason, sizeof(reason), "no result");
    }
    if (reason[0] != '\0') {
        tell_unsynced(c, group, TB_LOG_WARN, reason);
    } else {
        json_object_del(c->told, group);
    }
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AlterConsumerGroupOffsets_destroy(request);
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
}

/* MM2's group offset sync: the last checkpoints of each group are committed
 * to the target's group of the same id when it has no active member: all
 * of them to a group the target does not know, to an empty one those ahead
 * of what it committed (never moving it back). */
static void sync_groups(mirror_checkpoint_t *c)
{
    char reason[512];
    size_t count = json_object_size(c->checkpoints), n = 0;
    const char **ids = calloc(count + 1, sizeof(*ids));
    const char *id;
    json_t *of_group;
    json_object_foreach (c->checkpoints, id, of_group) {
        ids[n++] = id;
    }
    json_t *states = n > 0 ? target_states(c, ids, n, reason, sizeof(reason)) : NULL;
    if (n > 0 && states == NULL) {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                    "cannot describe %zu consumer groups on cluster %s: %s", n,
                    c->settings.target_alias, reason);
    }
    json_object_foreach (states != NULL ? c->checkpoints : NULL, id, of_group) {
        json_int_t state = json_integer_value(json_object_get(states, id));
        rd_kafka_topic_partition_list_t *have = NULL;
        if (state == RD_KAFKA_CONSUMER_GROUP_STATE_EMPTY) {
            have = group_offsets(c, c->target, id, reason, sizeof(reason));
            if (have == NULL) {
                tell_unsynced(c, id, TB_LOG_WARN, reason);
                continue;
            }
        } else if (state != RD_KAFKA_CONSUMER_GROUP_STATE_DEAD) {
            tell_unsynced(c, id, TB_LOG_INFO,
                          "it has active members there (offsets are synced once it has "
                          "none)");
            continue;
        }
        rd_kafka_topic_partition_list_t *offsets = rd_kafka_topic_partition_list_new(8);
        const char *key;
        json_t *cp;
        json_object_foreach (of_group, key, cp) {
            const char *topic = json_string_value(json_object_get(cp, "topic"));
            int32_t partition =
                (int32_t)json_integer_value(json_object_get(cp, "partition"));
            int64_t downstream = json_integer_value(json_object_get(cp, "downstream"));
            rd_kafka_topic_partition_t *at =
                have != NULL ? rd_kafka_topic_partition_list_find(have, topic, partition)
                             : NULL;
            if (at != NULL && at->offset >= downstream) {
                continue;
            }
            rd_kafka_topic_partition_t *tp =
                rd_kafka_topic_partition_list_add(offsets, topic, partition);
            tp->offset = downstream;
            const json_t *metadata = json_object_get(cp, "metadata");
            size_t metadata_len = json_string_length(metadata);
            if (metadata_len > 0 && (tp->metadata = malloc(metadata_len)) != NULL) {
                memcpy(tp->metadata, json_string_value(metadata), metadata_len);
                tp->metadata_size = metadata_len;
            }
        }
        if (offsets->cnt > 0) {
            commit_offsets(c, id, offsets);
        }
        rd_kafka_topic_partition_list_destroy(offsets);
        if (have != NULL) {
            rd_kafka_topic_partition_list_destroy(have);
        }
    }
    json_decref(states);
    free(ids);
}

/* Lists the groups when it is time: every refresh.groups.interval.seconds,
 * or, until a listing succeeds once, every few seconds (without groups
 * nothing is checkpointed). */
static void refresh_groups_when_due(mirror_checkpoint_t *c)
{
    int64_t now = tb_monotonic_ms();
    if (now < c->next_refresh_ms) {
        return;
    }
    if (refresh_groups(c)) {
        c->groups_listed = true;
    }
    c->next_refresh_ms = !c->groups_listed ? now + RETRY_REFRESH_MS
                         : c->settings.refresh_groups
                             ? now + c->settings.refresh_groups_s * 1000
                             : INT64_MAX;
}

static void task_stop(void *opaque);

/* Makes the checkpoints topic on the target unless it exists (one compacted
 * partition), and the task's clients. -1 with errstr. */
static int start_clients(mirror_checkpoint_t *c, char *errstr, size_t errstr_size)
{
    char reason[512];
    bool syncs_on_target = c->settings.offset_syncs_location == 1;
    json_t *source =
        json_pack("{s:s}", "bootstrap.servers", c->settings.source_bootstrap);
    json_t *target =
        json_pack("{s:s,s:s}", "bootstrap.servers", c->settings.target_bootstrap,
                  "allow.auto.create.topics", "false");
    json_t *compact = json_pack("{s:s}", "cleanup.policy", "compact");
    int rc = -1;
    c->source = tb_mirror_client(c->config, "source", RD_KAFKA_PRODUCER, source, reason,
                                 sizeof(reason));
    c->target = c->source != NULL
                    ? tb_mirror_client(c->config, "target", RD_KAFKA_PRODUCER, target,
                                       reason, sizeof(reason))
                    : NULL;
    if (c->target == NULL) {
        snprintf(errstr, errstr_size, "cannot make the admin clients of %s->%s: %s",
                 c->settings.source_alias, c->settings.target_alias, reason);
    } else if (tb_mirror_ensure_topic(c->target, c->checkpoints_topic, 1,
                                      c->settings.checkpoints_rf, compact,
                                      (int)c->settings.admin_timeout_ms, reason,
                                      sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size,
                 "on cluster %s, %s (checkpoints.topic.replication.factor)",
                 c->settings.target_alias, reason);
    } else if ((c->loader = open_reader(c, "target", c->settings.target_bootstrap,
                                        c->checkpoints_topic, &c->loader_queue, reason,
                                        sizeof(reason))) == NULL ||
               (c->syncs = open_reader(c, syncs_on_target ? "target" : "source",
                                       syncs_on_target ? c->settings.target_bootstrap
                                                       : c->settings.source_bootstrap,
                                       c->syncs_topic, &c->syncs_queue, reason,
                                       sizeof(reason))) == NULL) {
        snprintf(errstr, errstr_size, "cannot make the consumers of %s->%s: %s",
                 c->settings.source_alias, c->settings.target_alias, reason);
    } else {
        rc = 0;
        /* the reader waits silently for a topic that does not exist yet */
        if (tb_mirror_partition_count(c->syncs, c->syncs_topic,
                                      (int)c->settings.admin_timeout_ms, reason,
                                      sizeof(reason)) == 0) {
            TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                        "no offset syncs to read yet: topic %s does not exist on cluster "
                        "%s; checkpoints start once a MirrorSourceConnector of %s->%s "
                        "writes offset syncs there",
                        c->syncs_topic,
                        syncs_on_target ? c->settings.target_alias
                                        : c->settings.source_alias,
                        c->settings.source_alias, c->settings.target_alias);
        }
    }
    json_decref(compact);
    json_decref(target);
    json_decref(source);
    return rc;
}

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    mirror_checkpoint_t *c = calloc(1, sizeof(*c));
    c->connector = strdup(ctx->connector);
    c->task = ctx->task;
    c->config = json_deep_copy(config);
    c->groups = json_object();
    c->checkpoints = json_object();
    c->told = json_object();
    c->latency_index = json_object();
    c->store = tb_mirror_syncs_new();
    c->messages = calloc(BATCH, sizeof(*c->messages));
    tb_mirror_task_share(config, &c->task_index, &c->task_count);
    c->values = tb_config_load(&tb_mirror_checkpoint_table, config, &c->settings, errstr,
                               errstr_size);
    if (c->values == NULL) {
        goto fail;
    }
    tb_mirror_names_init(&c->names, &c->settings);
    if (tb_mirror_filter_init(&c->topics, &c->names, &c->settings, errstr, errstr_size) !=
            0 ||
        tb_mirror_group_filter_init(&c->group_filter, &c->settings, errstr,
                                    errstr_size) != 0) {
        goto fail;
    }
    c->syncs_topic =
        tb_mirror_offset_syncs_topic(&c->names, c->settings.offset_syncs_location == 1);
    c->checkpoints_topic = tb_mirror_checkpoints_topic(&c->names);
    if (start_clients(c, errstr, errstr_size) != 0) {
        goto fail;
    }
    c->next_refresh_ms = tb_monotonic_ms();
    refresh_groups_when_due(c);
    int64_t now = tb_monotonic_ms();
    c->next_emit_ms = now + c->settings.emit_checkpoints_s * 1000;
    c->next_sync_ms = c->settings.sync_group_offsets
                          ? now + c->settings.sync_group_offsets_s * 1000
                          : INT64_MAX;
    *out = c;
    return 0;

fail:
    task_stop(c);
    return -1;
}

static int64_t earliest(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int poll(void *opaque, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size)
{
    mirror_checkpoint_t *c = opaque;
    (void)errstr;
    (void)errstr_size;
    *count = 0;
    if (c->loader != NULL) {
        read_checkpoints(c);
        *wake_ms = LOADING_WAKE_MS;
        return 0;
    }
    read_syncs(c);
    int64_t now = tb_monotonic_ms();
    if (c->syncs_at_end && c->pending_next == c->pending_count) {
        c->pending_count = c->pending_next = 0;
        refresh_groups_when_due(c);
        if (now >= c->next_emit_ms) {
            const char *group;
            json_t *value;
            json_object_foreach (c->groups, group, value) {
                checkpoint_group(c, group);
            }
            c->next_emit_ms = now + c->settings.emit_checkpoints_s * 1000;
        }
        if (now >= c->next_sync_ms) {
            sync_groups(c);
            c->next_sync_ms = now + c->settings.sync_group_offsets_s * 1000;
        }
    }
    while (*count < max && c->pending_next < c->pending_count) {
        out[(*count)++] = c->pending[c->pending_next++];
    }
    if (*count == 0) {
        int64_t next =
            earliest(c->next_emit_ms, earliest(c->next_refresh_ms, c->next_sync_ms));
        *wake_ms = !c->syncs_at_end ? LOADING_WAKE_MS
                                    : earliest(IDLE_WAKE_MS, next > now ? next - now : 0);
    }
    return 0;
}

/* The checkpoint latency series of a group's partition, made on first use. */
static tb_mirror_timing_t *latency_series(mirror_checkpoint_t *c, const char *group,
                                          const char *topic, int32_t partition)
{
    char key[640], number[16];
    snprintf(key, sizeof(key), "%s\n%" PRId32 ":%s", group, partition, topic);
    json_t *at = json_object_get(c->latency_index, key);
    if (at != NULL) {
        return &c->latency[json_integer_value(at)];
    }
    tb_mirror_timing_t *grown =
        realloc(c->latency, (c->latency_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return NULL;
    }
    c->latency = grown;
    snprintf(number, sizeof(number), "%" PRId32, partition);
    const char *values[] = {c->settings.source_alias, c->settings.target_alias, group,
                            topic, number};
    tb_mirror_timing_start(&c->latency[c->latency_count], &checkpoint_latency, values);
    json_object_set_new(c->latency_index, key,
                        json_integer((json_int_t)c->latency_count));
    return &c->latency[c->latency_count++];
}

/* Kafka acknowledged a checkpoint: its latency (MM2's commitRecord). */
static void record_written(void *opaque, const json_t *source_partition,
                           const json_t *source_offset, int32_t partition, int64_t offset)
{
    mirror_checkpoint_t *c = opaque;
    char key[320];
    const char *group = json_string_value(json_object_get(source_partition, "group"));
    const char *topic = json_string_value(json_object_get(source_partition, "topic"));
    int32_t of =
        (int32_t)json_integer_value(json_object_get(source_partition, "partition"));
    (void)source_offset;
    (void)partition;
    (void)offset;
    if (group == NULL || topic == NULL) {
        return;
    }
    checkpoint_key(key, sizeof(key), topic, of);
    json_t *at = json_object_get(
        json_object_get(json_object_get(c->checkpoints, group), key), "at");
    tb_mirror_timing_t *latency =
        json_is_integer(at) ? latency_series(c, group, topic, of) : NULL;
    if (latency != NULL) {
        tb_mirror_timing_record(latency,
                                (double)(tb_wall_ms() - json_integer_value(at)) / 1000.0);
    }
}

static void task_stop(void *opaque)
{
    mirror_checkpoint_t *c = opaque;
    close_reader(&c->loader, &c->loader_queue);
    close_reader(&c->syncs, &c->syncs_queue);
    if (c->source != NULL) {
        rd_kafka_destroy(c->source);
    }
    if (c->target != NULL) {
        rd_kafka_destroy(c->target);
    }
    for (size_t i = c->pending_next; i < c->pending_count; i++) {
        free(c->pending[i].key);
        free(c->pending[i].value);
        json_decref(c->pending[i].source_partition);
        json_decref(c->pending[i].source_offset);
    }
    free(c->pending);
    free(c->messages);
    for (size_t i = 0; i < c->latency_count; i++) {
        tb_mirror_timing_stop(&c->latency[i]);
    }
    free(c->latency);
    json_decref(c->latency_index);
    tb_mirror_syncs_free(c->store);
    tb_mirror_filter_free(&c->topics);
    tb_mirror_filter_free(&c->group_filter);
    free(c->syncs_topic);
    free(c->checkpoints_topic);
    json_decref(c->groups);
    json_decref(c->checkpoints);
    json_decref(c->told);
    json_decref(c->values);
    json_decref(c->config);
    free(c->connector);
    free(c);
}

static const char *const mirror_checkpoint_aliases[] = {"MirrorCheckpointConnector",
                                                        "MirrorCheckpoint", NULL};

static json_t *task_configs(const json_t *config, int max_tasks)
{
    return tb_mirror_task_configs(&tb_mirror_checkpoint_table, config, max_tasks);
}

const tb_plugin_t tb_mirror_checkpoint_plugin = {
    .class_name = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    .aliases = mirror_checkpoint_aliases,
    .kind = TB_PLUGIN_SOURCE,
    .version = TB_MIRROR_VERSION,
    .config = &tb_mirror_checkpoint_table,
    .validate = tb_mirror_checkpoint_validate,
    .task_configs = task_configs,
    .task_start = task_start,
    .poll = poll,
    .record_written = record_written,
    .task_stop = task_stop,
};
