/*
 * MirrorSourceConnector - copies topics of a source cluster to the worker's
 * cluster (the target), as MirrorMaker 2's does: each record's key, value,
 * headers, timestamp and partition as they are, to the remote topic its
 * replication policy names, with the source partition
 * {"cluster","topic","partition"} and offset {"offset"} MM2 stores, so that
 * exactly once (exactly.once.support) and a take-over from MM2's offsets
 * work through the runtime's offsets.
 *
 * Each task finds the source's topics itself (at start, then every
 * refresh.topics.interval.seconds): of the topic-partitions the filter
 * chooses, it copies those whose hash falls to its index, makes their
 * remote topics (the source's partition count, the source topic's configs
 * but the excluded ones) or adds their new partitions, and assigns them to
 * its consumer from the offset after the one stored, or the beginning.
 * With sync.topic.configs.enabled, the task that copies a topic's
 * partition 0 syncs its remote topic's configs from it at start and every
 * sync.topic.configs.interval.seconds (mirror_topic_configs.c).
 *
 * The consumer reads read_committed, so that aborted transactions are not
 * copied. A poll's records borrow their bytes and headers from librdkafka's
 * messages (bytes_borrowed in tb_plugin.h), which the next poll destroys:
 * a record costs no allocation of the plugin's. Offset syncs go to the
 * offset-syncs topic as Kafka acknowledges records (record_written; with
 * exactly once, once their transaction committed), as MM2's
 * OffsetSyncWriter decides.
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

#define IDLE_WAKE_MS 20       /* how soon an idle task looks again */
#define RETRY_REFRESH_MS 2000 /* a refresh that failed is tried again after */
#define LOGGER "tributary.mirror"
#define SENT_KEPT 16 /* records awaiting acknowledgement whose times are kept */

/* MM2's MirrorSourceConnector metrics of a remote partition, the names a
 * JMX exporter's rules for MM2 (Strimzi's) give them, times in seconds as
 * every Connect time in ms is served (docs/OPERATIONS.md). */
static const char *const partition_labels[] = {"source", "target", "topic", "partition",
                                               NULL};
#define SOURCE_FAMILY(var, metric, text)                                                 \
    static const tb_metric_def_t var = {                                                 \
        .name = "kafka_connect_mirror_source_connector_" metric,                         \
        .type = TB_METRIC_UNTYPED,                                                       \
        .help = text,                                                                    \
        .labels = partition_labels}
SOURCE_FAMILY(record_count, "record_count",
              "Number of source records replicated to the target cluster (acknowledged "
              "by it).");
SOURCE_FAMILY(record_rate, "record_rate",
              "Average number of source records replicated to the target cluster per "
              "second (last minute).");
SOURCE_FAMILY(byte_count, "byte_count",
              "Number of bytes replicated to the target cluster (record values).");
SOURCE_FAMILY(byte_rate, "byte_rate",
              "Average number of bytes replicated per second (last minute).");
static const tb_mirror_timing_defs_t record_age =
    TB_MIRROR_TIMING_DEFS("source_connector", "record_age", partition_labels,
                          "The age of incoming source records when replicated to the "
                          "target cluster");
static const tb_mirror_timing_defs_t replication_latency =
    TB_MIRROR_TIMING_DEFS("source_connector", "replication_latency", partition_labels,
                          "Time it takes records to replicate from source to target "
                          "cluster (of the last record of each batch)");

/* One topic-partition the task copies. */
typedef struct {
    char *topic;  /* source topic */
    char *remote; /* its name on the target; stays until task_stop */
    int32_t partition;
    json_t *source_partition; /* {"cluster","partition","topic"} */
    uint64_t stamp;           /* the poll that last had its records */
    size_t last_index;        /* of that poll's last record of it */
    int64_t last_offset;      /* and that record's offset */
    size_t poll_bytes;        /* the bytes of its values in that poll */
    uint64_t handed;          /* records handed to the runtime */
    uint64_t acknowledged;    /* of them, up to the last acknowledged one */
    /* the offsets and timestamps of its last records that carried a source
     * offset, for their replication latency when acknowledged, and the
     * records handed up to each, for the count acknowledged */
    int64_t sent_offset[SENT_KEPT];
    int64_t sent_timestamp[SENT_KEPT];
    uint64_t sent_handed[SENT_KEPT];
    size_t sent_next;
    tb_series_t *records;
    tb_series_t *records_rate;
    tb_series_t *bytes;
    tb_series_t *bytes_rate;
    tb_mirror_timing_t age;
    tb_mirror_timing_t latency;
    /* MM2's offset-sync state of the partition (its OffsetSyncWriter's) */
    int64_t previous_upstream;
    int64_t previous_downstream;
    int64_t last_sync_downstream;
    bool sync_delayed;    /* a sync waits for the next commit: */
    int64_t delayed_up;   /* its upstream offset */
    int64_t delayed_down; /* and its downstream one */
} mirror_partition_t;

typedef struct {
    char *connector;
    int task;
    int task_index;
    int task_count;
    json_t *values; /* parsed keys; settings' strings point into them */
    json_t *config; /* the task config, for the clients' keys */
    tb_mirror_settings_t settings;
    tb_mirror_names_t names;
    tb_mirror_filter_t filter;
    rd_kafka_t *consumer; /* source cluster, read_committed, no group */
    rd_kafka_queue_t *queue;
    rd_kafka_t *target; /* target cluster: admin requests */
    rd_kafka_t *syncs;  /* producer of offset syncs (NULL: none emitted) */
    char *syncs_topic;
    bool syncs_failing; /* the last offset sync failed (logged once) */
    mirror_partition_t **partitions;
    size_t partition_count;
    json_t *index; /* "<partition>:<topic>" -> index in partitions */
    mirror_partition_t *last_hit;
    rd_kafka_message_t **messages; /* of the last poll, destroyed by the next */
    size_t message_count;
    size_t message_cap;
    tb_header_t *headers; /* the last poll's records' headers, one arena */
    size_t header_cap;
    mirror_partition_t **touched; /* partitions with records in this poll */
    uint64_t poll_seq;
    int64_t next_refresh_ms;
    tb_mirror_topic_configs_t configs; /* the source topics' configs copied */
    int64_t next_configs_ms;
    bool offset_every_record;
    json_t *(*offset_for)(void *runtime, const json_t *source_partition);
    void *runtime;
} mirror_source_t;

/* Stable across tasks and restarts: the topic's hash, then the partition. */
static uint32_t partition_hash(const char *topic, int32_t partition)
{
    return (tb_mirror_hash(topic) ^ (uint32_t)partition) * 16777619u;
}

static void index_key(char *buf, size_t size, const char *topic, int32_t partition)
{
    snprintf(buf, size, "%" PRId32 ":%s", partition, topic);
}

static mirror_partition_t *find_partition(mirror_source_t *s, const char *topic,
                                          int32_t partition)
{
    char key[320];
    if (s->last_hit != NULL && s->last_hit->partition == partition &&
        strcmp(s->last_hit->topic, topic) == 0) {
        return s->last_hit;
    }
    index_key(key, sizeof(key), topic, partition);
    json_t *at = json_object_get(s->index, key);
    if (at == NULL) {
        return NULL;
    }
    s->last_hit = s->partitions[json_integer_value(at)];
    return s->last_hit;
}

static void partition_free(mirror_partition_t *p)
{
    tb_series_release(p->records_rate);
    tb_series_release(p->records);
    tb_series_release(p->bytes_rate);
    tb_series_release(p->bytes);
    tb_mirror_timing_stop(&p->age);
    tb_mirror_timing_stop(&p->latency);
    json_decref(p->source_partition);
    free(p->topic);
    free(p->remote);
    free(p);
}

/* Adds partition of topic to the task, from the offset after the stored
 * one (MM2's seek), else the beginning, to list. */
static void add_partition(mirror_source_t *s, const char *topic, int32_t partition,
                          rd_kafka_topic_partition_list_t *list)
{
    char key[320];
    mirror_partition_t *p = calloc(1, sizeof(*p));
    p->topic = strdup(topic);
    p->remote = tb_mirror_remote_topic(&s->names, topic);
    p->partition = partition;
    p->source_partition = json_pack("{s:s,s:s,s:i}", "cluster", s->settings.source_alias,
                                    "topic", topic, "partition", (int)partition);
    json_t *stored = s->offset_for(s->runtime, p->source_partition);
    json_t *offset = json_object_get(stored, "offset");
    int64_t start = json_is_integer(offset) && json_integer_value(offset) >= 0
                        ? json_integer_value(offset) + 1
                        : RD_KAFKA_OFFSET_BEGINNING;
    json_decref(stored);
    p->previous_upstream = p->previous_downstream = p->last_sync_downstream = -1;
    for (size_t i = 0; i < SENT_KEPT; i++) {
        p->sent_offset[i] = -1;
    }
    char number[16];
    snprintf(number, sizeof(number), "%" PRId32, partition);
    const char *values[] = {s->settings.source_alias, s->settings.target_alias, p->remote,
                            number};
    p->records = tb_metrics_series(&record_count, values);
    p->records_rate = tb_metrics_window(
        &record_rate, values, &(tb_window_t){.kind = TB_WINDOW_RATE, .a = p->records});
    p->bytes = tb_metrics_series(&byte_count, values);
    p->bytes_rate = tb_metrics_window(
        &byte_rate, values, &(tb_window_t){.kind = TB_WINDOW_RATE, .a = p->bytes});
    tb_mirror_timing_start(&p->age, &record_age, values);
    tb_mirror_timing_start(&p->latency, &replication_latency, values);
    rd_kafka_topic_partition_list_add(list, topic, partition)->offset = start;
    s->partitions =
        realloc(s->partitions, (s->partition_count + 1) * sizeof(*s->partitions));
    s->touched = realloc(s->touched, (s->partition_count + 1) * sizeof(*s->touched));
    index_key(key, sizeof(key), topic, partition);
    json_object_set_new(s->index, key, json_integer((json_int_t)s->partition_count));
    s->partitions[s->partition_count++] = p;
}

/* Makes the remote topic of a source topic ready for partitions of it
 * (its count on the source). false when it is not (logged): the refresh is
 * tried again soon. */
static bool prepare_remote(mirror_source_t *s, const char *topic, int partitions)
{
    char errstr[512];
    char *remote = tb_mirror_remote_topic(&s->names, topic);
    /* made with the source topic's configs whatever sync.topic.configs.enabled
     * says, as MM2 makes it */
    json_t *configs = tb_mirror_topic_configs_create(&s->configs, topic);
    int rc = tb_mirror_ensure_topic(
        s->target, remote, partitions, s->settings.replication_factor, configs,
        (int)s->settings.admin_timeout_ms, errstr, sizeof(errstr));
    if (rc != 0) {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, s->connector, s->task,
                    "topic %s of cluster %s is not copied yet: on cluster %s, %s; trying "
                    "again in %d s",
                    topic, s->settings.source_alias, s->settings.target_alias, errstr,
                    RETRY_REFRESH_MS / 1000);
    }
    json_decref(configs);
    free(remote);
    return rc == 0;
}

/* Finds the source's topic-partitions of this task that it does not copy
 * yet, makes their remote topics and partitions, and assigns them. */
static void refresh(mirror_source_t *s)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(8);
    bool complete = true;
    rd_kafka_resp_err_t err =
        rd_kafka_metadata(s->consumer, 1, NULL, &md, (int)s->settings.admin_timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, s->connector, s->task,
                    "cannot list the topics of cluster %s: %s; trying again in %d s",
                    s->settings.source_alias, rd_kafka_err2str(err),
                    RETRY_REFRESH_MS / 1000);
        complete = false;
    }
    for (int t = 0; md != NULL && t < md->topic_cnt; t++) {
        const struct rd_kafka_metadata_topic *topic = &md->topics[t];
        bool prepared = false;
        if (topic->err != RD_KAFKA_RESP_ERR_NO_ERROR ||
            !tb_mirror_filter_topic(&s->filter, topic->topic)) {
            continue;
        }
        for (int i = 0; i < topic->partition_cnt; i++) {
            int32_t partition = topic->partitions[i].id;
            if (partition_hash(topic->topic, partition) % (uint32_t)s->task_count !=
                    (uint32_t)s->task_index ||
                find_partition(s, topic->topic, partition) != NULL) {
                continue;
            }
            if (!prepared && !prepare_remote(s, topic->topic, topic->partition_cnt)) {
                complete = false;
                break;
            }
            prepared = true;
            add_partition(s, topic->topic, partition, list);
        }
    }
    if (list->cnt > 0) {
        rd_kafka_error_t *error = rd_kafka_incremental_assign(s->consumer, list);
        if (error != NULL) {
            TB_LOG_TASK(TB_LOG_ERROR, LOGGER, s->connector, s->task,
                        "cannot read %d new partitions of cluster %s: %s", list->cnt,
                        s->settings.source_alias, rd_kafka_error_string(error));
            rd_kafka_error_destroy(error);
        } else {
            TB_LOG_TASK(TB_LOG_INFO, LOGGER, s->connector, s->task,
                        "copying %d more partitions of cluster %s to %s (%zu in all)",
                        list->cnt, s->settings.source_alias, s->settings.target_alias,
                        s->partition_count);
        }
    }
    rd_kafka_topic_partition_list_destroy(list);
    if (md != NULL) {
        rd_kafka_metadata_destroy(md);
    }
    int64_t now = tb_monotonic_ms();
    s->next_refresh_ms = !complete ? now + RETRY_REFRESH_MS
                         : s->settings.refresh_topics
                             ? now + s->settings.refresh_topics_s * 1000
                             : INT64_MAX;
}

/* MM2's sync of topic configs, by one task per topic: the one that copies
 * its partition 0. Then again in sync.topic.configs.interval.seconds. */
static void sync_configs(mirror_source_t *s)
{
    const char **topics = calloc(s->partition_count + 1, sizeof(*topics));
    const char **remotes = calloc(s->partition_count + 1, sizeof(*remotes));
    size_t count = 0;
    for (size_t i = 0; topics != NULL && remotes != NULL && i < s->partition_count; i++) {
        if (s->partitions[i]->partition == 0) {
            topics[count] = s->partitions[i]->topic;
            remotes[count++] = s->partitions[i]->remote;
        }
    }
    tb_mirror_topic_configs_sync(&s->configs, topics, remotes, count);
    free(topics);
    free(remotes);
    s->next_configs_ms = tb_monotonic_ms() + s->settings.sync_configs_s * 1000;
}

/* The offset-syncs producer and topic (MM2 makes it: one compacted
 * partition). -1 with errstr. */
static int start_offset_syncs(mirror_source_t *s, char *errstr, size_t errstr_size)
{
    bool on_source = s->settings.offset_syncs_location == 0;
    json_t *extra =
        json_pack("{s:s,s:s}", "bootstrap.servers",
                  on_source ? s->settings.source_bootstrap : s->settings.target_bootstrap,
                  "allow.auto.create.topics", "false");
    json_t *compact = json_pack("{s:s}", "cleanup.policy", "compact");
    int rc = -1;
    s->syncs = tb_mirror_client(s->config, on_source ? "source" : "target",
                                RD_KAFKA_PRODUCER, extra, errstr, errstr_size);
    s->syncs_topic = tb_mirror_offset_syncs_topic(&s->names, !on_source);
    if (s->syncs != NULL &&
        tb_mirror_ensure_topic(s->syncs, s->syncs_topic, 1, s->settings.offset_syncs_rf,
                               compact, (int)s->settings.admin_timeout_ms, errstr,
                               errstr_size) == 0) {
        rc = 0;
    }
    json_decref(compact);
    json_decref(extra);
    return rc;
}

/* Writes MM2's OffsetSync record of p: key {topic, partition} of the
 * source, value {upstreamOffset, offset}, to partition 0. */
static void send_sync(mirror_source_t *s, const mirror_partition_t *p, int64_t upstream,
                      int64_t downstream)
{
    size_t key_len = 2 + strlen(p->topic) + 4;
    uint8_t key[2 + 249 + 4]; /* a Kafka topic name has at most 249 bytes */
    uint8_t value[16];
    if (key_len > sizeof(key)) {
        return;
    }
    tb_mirror_put_i32(tb_mirror_put_string(key, p->topic), p->partition);
    tb_mirror_put_i64(tb_mirror_put_i64(value, upstream), downstream);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        s->syncs, RD_KAFKA_V_TOPIC(s->syncs_topic), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len),
        RD_KAFKA_V_VALUE(value, sizeof(value)), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && !s->syncs_failing) {
        TB_LOG_TASK(
            TB_LOG_WARN, LOGGER, s->connector, s->task,
            "cannot write offset syncs to %s: %s; the checkpoints translate from the "
            "last one written until they are written again",
            s->syncs_topic, rd_kafka_err2str(err));
    }
    s->syncs_failing = err != RD_KAFKA_RESP_ERR_NO_ERROR;
}

/* MM2's OffsetSyncWriter: a sync at once when the partition has none yet,
 * when the records between do not follow one another upstream, when the
 * remote partition went back, or when it is offset.lag.max past the last
 * sync; else the sync waits for the next commit, the latest replacing the
 * one before. */
static void record_written(void *opaque, const json_t *source_partition,
                           const json_t *source_offset, int32_t partition, int64_t offset)
{
    mirror_source_t *s = opaque;
    const char *topic = json_string_value(json_object_get(source_partition, "topic"));
    mirror_partition_t *p =
        topic != NULL ? find_partition(s, topic,
                                       (int32_t)json_integer_value(json_object_get(
                                           source_partition, "partition")))
                      : NULL;
    int64_t upstream = json_integer_value(json_object_get(source_offset, "offset"));
    (void)partition;
    for (size_t i = 0; p != NULL && i < SENT_KEPT; i++) {
        if (p->sent_offset[i] == upstream) {
            tb_mirror_timing_record(
                &p->latency, (double)(tb_wall_ms() - p->sent_timestamp[i]) / 1000.0);
            /* Kafka acknowledges a partition's records in order: this one's
             * acknowledgement is every earlier one's too */
            if (p->sent_handed[i] > p->acknowledged) {
                p->acknowledged = p->sent_handed[i];
                tb_series_set(p->records, (double)p->acknowledged);
            }
            break;
        }
    }
    if (p == NULL || s->syncs == NULL) {
        return;
    }
    bool now = p->last_sync_downstream == -1 ||
               offset - (p->last_sync_downstream + 1) >= s->settings.offset_lag_max ||
               upstream - p->previous_upstream != 1 || offset < p->previous_downstream;
    p->previous_upstream = upstream;
    p->previous_downstream = offset;
    p->sync_delayed = !now;
    if (now) {
        p->last_sync_downstream = offset;
        send_sync(s, p, upstream, offset);
    } else {
        p->delayed_up = upstream;
        p->delayed_down = offset;
    }
}

/* The source offsets were recorded: the syncs held back are written. */
static void commit(void *opaque, const json_t *offsets)
{
    mirror_source_t *s = opaque;
    (void)offsets;
    for (size_t i = 0; s->syncs != NULL && i < s->partition_count; i++) {
        mirror_partition_t *p = s->partitions[i];
        if (p->sync_delayed) {
            p->sync_delayed = false;
            send_sync(s, p, p->delayed_up, p->delayed_down);
        }
    }
}

static void task_stop(void *opaque);

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    mirror_source_t *s = calloc(1, sizeof(*s));
    char reason[512];
    s->connector = strdup(ctx->connector);
    s->task = ctx->task;
    s->offset_every_record = ctx->offset_every_record;
    s->offset_for = ctx->offset_for;
    s->runtime = ctx->runtime;
    s->index = json_object();
    s->config = json_deep_copy(config);
    tb_mirror_task_share(config, &s->task_index, &s->task_count);
    s->values = tb_config_load(&tb_mirror_source_table, config, &s->settings, errstr,
                               errstr_size);
    if (s->values == NULL) {
        goto fail;
    }
    tb_mirror_names_init(&s->names, &s->settings);
    if (tb_mirror_filter_init(&s->filter, &s->names, &s->settings, errstr, errstr_size) !=
        0) {
        goto fail;
    }
    /* MM2's consumer: no commits, from the earliest offset when none is
     * stored; read_committed so that aborted records stay behind. librdkafka
     * assigns partitions one by one only with a group.id: the group is
     * never joined and nothing is committed to it. */
    char group[300];
    snprintf(group, sizeof(group), "tributary-mirror-%s", ctx->connector);
    json_t *extra = json_pack("{s:s,s:s,s:s,s:s,s:s}", "bootstrap.servers",
                              s->settings.source_bootstrap, "group.id", group,
                              "enable.auto.commit", "false", "auto.offset.reset",
                              "earliest", "isolation.level", "read_committed");
    s->consumer = tb_mirror_client(config, "source", RD_KAFKA_CONSUMER, extra, reason,
                                   sizeof(reason));
    json_decref(extra);
    if (s->consumer == NULL) {
        snprintf(errstr, errstr_size, "cannot make the consumer of cluster %s: %s",
                 s->settings.source_alias, reason);
        goto fail;
    }
    s->queue = rd_kafka_queue_get_consumer(s->consumer);
    if (s->queue == NULL) {
        s->queue = rd_kafka_queue_get_main(s->consumer);
    }
    extra = json_pack("{s:s,s:s}", "bootstrap.servers", s->settings.target_bootstrap,
                      "allow.auto.create.topics", "false");
    s->target = tb_mirror_client(config, "target", RD_KAFKA_PRODUCER, extra, reason,
                                 sizeof(reason));
    json_decref(extra);
    if (s->target == NULL) {
        snprintf(errstr, errstr_size, "cannot make the admin client of cluster %s: %s",
                 s->settings.target_alias, reason);
        goto fail;
    }
    if (tb_mirror_topic_configs_init(&s->configs, s->consumer, s->target, &s->settings,
                                     s->connector, s->task, errstr, errstr_size) != 0) {
        goto fail;
    }
    if (s->settings.emit_offset_syncs &&
        start_offset_syncs(s, reason, sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size, "cannot start the offset syncs of %s->%s: %s",
                 s->settings.source_alias, s->settings.target_alias, reason);
        goto fail;
    }
    refresh(s);
    *out = s;
    return 0;

fail:
    task_stop(s);
    return -1;
}

/* Destroys the messages of the last poll: the runtime is done with their
 * records once it polls again. */
static void release_messages(mirror_source_t *s)
{
    for (size_t i = 0; i < s->message_count; i++) {
        rd_kafka_message_destroy(s->messages[i]);
    }
    s->message_count = 0;
}

/* Sets r's source partition and offset, and keeps its time for its
 * replication latency and the records handed up to it (handed of them). */
static void set_offset(mirror_partition_t *p, tb_source_record_t *r, int64_t offset,
                       uint64_t handed)
{
    p->sent_offset[p->sent_next] = offset;
    p->sent_timestamp[p->sent_next] = r->timestamp;
    p->sent_handed[p->sent_next] = handed;
    p->sent_next = (p->sent_next + 1) % SENT_KEPT;
    r->source_partition = json_incref(p->source_partition);
    r->source_offset = json_pack("{s:I}", "offset", (json_int_t)offset);
}

/* The number of headers of the polled messages, parsed once by
 * librdkafka. */
static size_t count_headers(rd_kafka_message_t *const *messages, size_t n)
{
    size_t total = 0;
    rd_kafka_headers_t *headers;
    for (size_t i = 0; i < n; i++) {
        if (messages[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR &&
            rd_kafka_message_headers(messages[i], &headers) ==
                RD_KAFKA_RESP_ERR_NO_ERROR) {
            total += rd_kafka_header_cnt(headers);
        }
    }
    return total;
}

/* Points r's headers at msg's, from the arena at *next. */
static void borrow_headers(rd_kafka_message_t *msg, tb_source_record_t *r,
                           tb_header_t **next)
{
    rd_kafka_headers_t *headers;
    const char *name;
    const void *value;
    size_t size;
    if (rd_kafka_message_headers(msg, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return;
    }
    r->headers = *next;
    for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                       RD_KAFKA_RESP_ERR_NO_ERROR;
         i++) {
        r->headers[i] = (tb_header_t){.name = name, .value = value, .value_len = size};
        r->header_count++;
    }
    *next += r->header_count;
}

/* A message that is not a record: what the consumer tells (logged). */
static void consumer_event(mirror_source_t *s, const rd_kafka_message_t *msg)
{
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        return;
    }
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, s->connector, s->task,
                "reading %s [%" PRId32 "] of cluster %s: %s",
                msg->rkt != NULL ? rd_kafka_topic_name(msg->rkt) : "-", msg->partition,
                s->settings.source_alias, rd_kafka_message_errstr(msg));
}

static int poll(void *opaque, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size)
{
    mirror_source_t *s = opaque;
    size_t n = 0;
    (void)errstr;
    (void)errstr_size;
    *count = 0;
    release_messages(s);
    if (s->syncs != NULL) {
        rd_kafka_poll(s->syncs, 0);
    }
    if (tb_monotonic_ms() >= s->next_refresh_ms) {
        refresh(s);
    }
    if (s->settings.sync_configs && tb_monotonic_ms() >= s->next_configs_ms) {
        sync_configs(s);
    }
    if (max > s->message_cap) {
        s->messages = realloc(s->messages, max * sizeof(*s->messages));
        s->message_cap = max;
    }
    ssize_t got = s->partition_count > 0
                      ? rd_kafka_consume_batch_queue(s->queue, 0, s->messages, max)
                      : 0;
    s->message_count = got > 0 ? (size_t)got : 0;
    size_t headers = count_headers(s->messages, s->message_count);
    if (headers > s->header_cap) {
        s->headers = realloc(s->headers, headers * sizeof(*s->headers));
        s->header_cap = headers;
    }
    tb_header_t *next_header = s->headers;
    size_t touched = 0;
    int64_t now_ms = s->message_count > 0 ? tb_wall_ms() : 0;
    s->poll_seq++;
    for (size_t i = 0; i < s->message_count; i++) {
        rd_kafka_message_t *msg = s->messages[i];
        mirror_partition_t *p =
            msg->err == RD_KAFKA_RESP_ERR_NO_ERROR
                ? find_partition(s, rd_kafka_topic_name(msg->rkt), msg->partition)
                : NULL;
        if (p == NULL) {
            consumer_event(s, msg);
            continue;
        }
        tb_source_record_t *r = &out[n];
        memset(r, 0, sizeof(*r));
        r->topic = p->remote;
        r->partition = msg->partition;
        r->key = msg->key;
        r->key_len = msg->key_len;
        r->value = msg->payload;
        r->value_len = msg->len;
        r->key_kind = r->value_kind = TB_DATA_BYTES;
        r->bytes_borrowed = true;
        r->timestamp = rd_kafka_message_timestamp(msg, NULL);
        borrow_headers(msg, r, &next_header);
        p->handed++;
        if (s->offset_every_record) {
            set_offset(p, r, msg->offset, p->handed);
        }
        if (p->stamp != s->poll_seq) {
            p->stamp = s->poll_seq;
            p->poll_bytes = 0;
            s->touched[touched++] = p;
        }
        p->poll_bytes += msg->len;
        p->last_offset = msg->offset;
        p->last_index = n++;
        tb_mirror_timing_add(&p->age, (double)(now_ms - r->timestamp) / 1000.0);
    }
    for (size_t i = 0; i < touched; i++) {
        mirror_partition_t *p = s->touched[i];
        if (!s->offset_every_record) {
            set_offset(p, &out[p->last_index], p->last_offset, p->handed);
        }
        tb_series_add(p->bytes, (double)p->poll_bytes);
        tb_mirror_timing_publish(&p->age);
    }
    *count = n;
    if (n == 0) {
        int64_t until_refresh = s->next_refresh_ms - tb_monotonic_ms();
        *wake_ms = until_refresh < IDLE_WAKE_MS ? (until_refresh > 0 ? until_refresh : 0)
                                                : IDLE_WAKE_MS;
    }
    return 0;
}

static void task_stop(void *opaque)
{
    mirror_source_t *s = opaque;
    release_messages(s);
    if (s->queue != NULL) {
        rd_kafka_queue_destroy(s->queue);
    }
    if (s->consumer != NULL) {
        rd_kafka_consumer_close(s->consumer);
        rd_kafka_destroy(s->consumer);
    }
    if (s->syncs != NULL) {
        rd_kafka_flush(s->syncs, 5000);
        rd_kafka_destroy(s->syncs);
    }
    if (s->target != NULL) {
        rd_kafka_destroy(s->target);
    }
    for (size_t i = 0; i < s->partition_count; i++) {
        partition_free(s->partitions[i]);
    }
    tb_mirror_filter_free(&s->filter);
    tb_mirror_topic_configs_free(&s->configs);
    free(s->partitions);
    free(s->touched);
    free(s->messages);
    free(s->headers);
    free(s->syncs_topic);
    json_decref(s->index);
    json_decref(s->values);
    json_decref(s->config);
    free(s->connector);
    free(s);
}

static const char *const mirror_source_aliases[] = {"MirrorSourceConnector",
                                                    "MirrorSource", NULL};

static json_t *task_configs(const json_t *config, int max_tasks)
{
    return tb_mirror_task_configs(&tb_mirror_source_table, config, max_tasks);
}

const tb_plugin_t tb_mirror_source_plugin = {
    .class_name = "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    .aliases = mirror_source_aliases,
    .kind = TB_PLUGIN_SOURCE,
    .version = TB_MIRROR_VERSION,
    .config = &tb_mirror_source_table,
    .validate = tb_mirror_source_validate,
    .task_configs = task_configs,
    .task_start = task_start,
    .poll = poll,
    .commit = commit,
    .record_written = record_written,
    .task_stop = task_stop,
};
