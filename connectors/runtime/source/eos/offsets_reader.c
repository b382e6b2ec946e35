#include "connectors/runtime/source/eos/tb_offsets_reader.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "core/tb_time.h"
#include "store/kafka/connect_records.h"

#define READ_BUDGET 5000 /* records a step reads at most */

typedef enum {
    PHASE_CREATE = 0,
    PHASE_CREATING,
    PHASE_METADATA,
    PHASE_READING,
} phase_t;

struct tb_offsets_reader {
    tb_offsets_topic_t topic; /* name owned */
    char *connector;
    rd_kafka_t *committed; /* read_committed, reads every partition from its start */
    rd_kafka_t *probe;     /* read_uncommitted, reports each high watermark */
    rd_kafka_queue_t *admin_queue;
    phase_t phase;
    int64_t phase_since_ms;
    int partitions;
    int64_t *high;    /* per partition: its high watermark; -1 not known yet */
    int64_t *reached; /* per partition: the offset the reading reached */
    bool *done;       /* per partition: reached >= high */
    json_t *offsets;  /* canonical partition -> {partition, offset, key} */
};

/* A consumer of props with isolation, reporting the end of each partition.
 * It never joins its group: it is only assigned partitions. */
static rd_kafka_t *consumer_new(const json_t *consumer_props, const char *connector,
                                const char *isolation, char *errstr, size_t errstr_size)
{
    char group[400];
    json_t *props = json_deep_copy(consumer_props);
    snprintf(group, sizeof(group), "__tributary-eos-reader-%s", connector);
    json_object_set_new(props, "group.id", json_string(group));
    json_object_set_new(props, "enable.auto.commit", json_string("false"));
    json_object_set_new(props, "enable.auto.offset.store", json_string("false"));
    json_object_set_new(props, "enable.partition.eof", json_string("true"));
    json_object_set_new(props, "isolation.level", json_string(isolation));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    rd_kafka_t *rk =
        conf != NULL ? rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size) : NULL;
    if (rk == NULL && conf != NULL) {
        rd_kafka_conf_destroy(conf);
    }
    if (rk != NULL) {
        rd_kafka_poll_set_consumer(rk);
    }
    return rk;
}

tb_offsets_reader_t *tb_offsets_reader_create(const json_t *consumer_props,
                                              const tb_offsets_topic_t *topic,
                                              const char *connector, char *errstr,
                                              size_t errstr_size)
{
    tb_offsets_reader_t *reader = calloc(1, sizeof(*reader));
    reader->topic = *topic;
    reader->topic.name = strdup(topic->name);
    reader->connector = strdup(connector);
    reader->offsets = json_object();
    reader->phase = topic->create ? PHASE_CREATE : PHASE_METADATA;
    reader->committed =
        consumer_new(consumer_props, connector, "read_committed", errstr, errstr_size);
    reader->probe = reader->committed != NULL
                        ? consumer_new(consumer_props, connector, "read_uncommitted",
                                       errstr, errstr_size)
                        : NULL;
    if (reader->probe == NULL) {
        tb_offsets_reader_destroy(reader);
        return NULL;
    }
    reader->admin_queue = rd_kafka_queue_new(reader->committed);
    return reader;
}

/* Asks for the topic, compacted; the answer comes to admin_queue. */
static void create_topic(tb_offsets_reader_t *reader)
{
    char errstr[256];
    rd_kafka_NewTopic_t *topic =
        rd_kafka_NewTopic_new(reader->topic.name, reader->topic.partitions,
                              reader->topic.replication_factor, errstr, sizeof(errstr));
    if (topic == NULL) { /* bad counts: the metadata phase says the topic is missing */
        reader->phase = PHASE_METADATA;
        return;
    }
    rd_kafka_NewTopic_set_config(topic, "cleanup.policy", "compact");
    rd_kafka_CreateTopics(reader->committed, &topic, 1, NULL, reader->admin_queue);
    rd_kafka_NewTopic_destroy(topic);
    reader->phase = PHASE_CREATING;
}

/* Whether the creation was answered; whatever the answer, the metadata
 * phase comes next and tells a topic that does not exist. */
static bool creation_answered(tb_offsets_reader_t *reader)
{
    rd_kafka_event_t *event = rd_kafka_queue_poll(reader->admin_queue, 0);
    if (event == NULL) {
        return false;
    }
    rd_kafka_event_destroy(event);
    return true;
}

/* Both consumers assigned every partition: the probe at its end, the
 * reader at its start. */
static void assign(tb_offsets_reader_t *reader, int partitions)
{
    rd_kafka_topic_partition_list_t *starts =
        rd_kafka_topic_partition_list_new(partitions);
    rd_kafka_topic_partition_list_t *ends = rd_kafka_topic_partition_list_new(partitions);
    reader->partitions = partitions;
    reader->high = malloc(sizeof(*reader->high) * (size_t)partitions);
    reader->reached = calloc((size_t)partitions, sizeof(*reader->reached));
    reader->done = calloc((size_t)partitions, sizeof(*reader->done));
    for (int p = 0; p < partitions; p++) {
        reader->high[p] = -1;
        rd_kafka_topic_partition_list_add(starts, reader->topic.name, p)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_topic_partition_list_add(ends, reader->topic.name, p)->offset =
            RD_KAFKA_OFFSET_END;
    }
    rd_kafka_assign(reader->committed, starts);
    rd_kafka_assign(reader->probe, ends);
    rd_kafka_topic_partition_list_destroy(starts);
    rd_kafka_topic_partition_list_destroy(ends);
    reader->phase = PHASE_READING;
}

/* One metadata request of at most step_ms: 1 when the partitions are known
 * (and assigned), 0 when to ask again, -1 with errstr. */
static int read_metadata(tb_offsets_reader_t *reader, int step_ms, char *errstr,
                         size_t errstr_size)
{
    const struct rd_kafka_metadata *metadata = NULL;
    rd_kafka_topic_t *rkt =
        rd_kafka_topic_new(reader->committed, reader->topic.name, NULL);
    rd_kafka_resp_err_t err =
        rd_kafka_metadata(reader->committed, 0, rkt, &metadata, step_ms);
    rd_kafka_topic_destroy(rkt);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && metadata->topic_cnt == 1) {
        err = metadata->topics[0].err;
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && metadata->topics[0].partition_cnt > 0) {
            assign(reader, metadata->topics[0].partition_cnt);
        } else if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        }
    }
    if (metadata != NULL) {
        rd_kafka_metadata_destroy(metadata);
    }
    if (reader->phase == PHASE_READING) {
        return 1;
    }
    snprintf(errstr, errstr_size, "the offsets topic %s cannot be read: %s",
             reader->topic.name, rd_kafka_err2str(err));
    return 0;
}

/* Applies one record of the topic, when it is the connector's. */
static void apply(tb_offsets_reader_t *reader, const rd_kafka_message_t *message)
{
    char *connector;
    json_t *partition;
    if (message->key == NULL ||
        tb_connect_offset_key_parse(message->key, message->key_len, &connector,
                                    &partition) != 0) {
        return; /* not an offsets record: another tool's */
    }
    if (strcmp(connector, reader->connector) == 0) {
        char *canonical = json_dumps(partition, JSON_COMPACT | JSON_SORT_KEYS);
        int bad = 0;
        json_t *offset = tb_connect_value_parse(message->payload, message->len, &bad);
        if (offset != NULL && json_is_object(offset)) {
            json_object_set_new(reader->offsets, canonical,
                                json_pack("{s:O, s:o, s:s%}", "partition", partition,
                                          "offset", offset, "key", message->key,
                                          message->key_len));
        } else {
            json_decref(offset);
            json_object_del(reader->offsets, canonical); /* a tombstone */
        }
        free(canonical);
    }
    free(connector);
    json_decref(partition);
}

/* Whether every partition is read past its high watermark. */
static bool all_done(const tb_offsets_reader_t *reader)
{
    for (int p = 0; p < reader->partitions; p++) {
        if (!reader->done[p]) {
            return false;
        }
    }
    return true;
}

/* Each partition's high watermark, as the probe learns it: from its end
 * of partition event, or from the first fetch answer it had (cached by
 * librdkafka, no request), since a partition that other tasks write to
 * all the time may never give the probe an end of partition. */
static void probe_ends(tb_offsets_reader_t *reader, bool *progress)
{
    rd_kafka_message_t *message;
    while ((message = rd_kafka_consumer_poll(reader->probe, 0)) != NULL) {
        int32_t p = message->partition;
        if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && p >= 0 &&
            p < reader->partitions && reader->high[p] < 0) {
            reader->high[p] = message->offset;
            *progress = true;
        }
        rd_kafka_message_destroy(message);
    }
    for (int p = 0; p < reader->partitions; p++) {
        int64_t low, high;
        if (reader->high[p] < 0 &&
            rd_kafka_get_watermark_offsets(reader->probe, reader->topic.name, p, &low,
                                           &high) == RD_KAFKA_RESP_ERR_NO_ERROR &&
            high >= 0) {
            reader->high[p] = high;
            *progress = true;
        }
    }
}

/* Reads for at most step_ms: 1 once done, 0 not yet, -1 with errstr. */
static int read_records(tb_offsets_reader_t *reader, int step_ms, bool *progress,
                        char *errstr, size_t errstr_size)
{
    int64_t until = tb_monotonic_ms() + step_ms;
    probe_ends(reader, progress);
    for (int n = 0; n < READ_BUDGET && tb_monotonic_ms() < until; n++) {
        rd_kafka_message_t *message = rd_kafka_consumer_poll(reader->committed, 0);
        if (message == NULL) {
            break;
        }
        int32_t p = message->partition;
        int64_t next = message->offset + (message->err == RD_KAFKA_RESP_ERR_NO_ERROR);
        if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            apply(reader, message);
        } else if (message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            snprintf(errstr, errstr_size, "reading the offsets topic %s: %s",
                     reader->topic.name, rd_kafka_message_errstr(message));
            bool fatal = message->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
                         message->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
                         message->err == RD_KAFKA_RESP_ERR__FATAL;
            rd_kafka_message_destroy(message);
            if (fatal) {
                return -1;
            }
            continue;
        }
        *progress = true;
        if (p >= 0 && p < reader->partitions && next > reader->reached[p]) {
            reader->reached[p] = next;
        }
        rd_kafka_message_destroy(message);
    }
    /* a partition is read once the reading reached its high watermark
     * (records written since are not the predecessors') */
    for (int p = 0; p < reader->partitions; p++) {
        reader->done[p] = reader->high[p] >= 0 && reader->reached[p] >= reader->high[p];
    }
    return all_done(reader) ? 1 : 0;
}

int tb_offsets_reader_step(tb_offsets_reader_t *reader, int step_ms, bool *progress,
                           char *errstr, size_t errstr_size)
{
    int64_t now = tb_monotonic_ms();
    *progress = false;
    if (reader->phase_since_ms == 0) {
        reader->phase_since_ms = now;
    }
    if (reader->phase == PHASE_CREATE) {
        create_topic(reader);
    }
    if (reader->phase == PHASE_CREATING && creation_answered(reader)) {
        reader->phase = PHASE_METADATA;
        reader->phase_since_ms = now;
    }
    if (reader->phase == PHASE_CREATING) {
        snprintf(errstr, errstr_size, "creating the offsets topic %s had no answer",
                 reader->topic.name);
    }
    if (reader->phase == PHASE_METADATA) {
        int rc = read_metadata(reader, step_ms, errstr, errstr_size);
        *progress = rc == 1;
        reader->phase_since_ms = rc == 1 ? now : reader->phase_since_ms;
    }
    if (reader->phase == PHASE_READING) {
        int rc = read_records(reader, step_ms, progress, errstr, errstr_size);
        if (*progress) {
            reader->phase_since_ms = now;
        } else if (rc == 0 &&
                   now - reader->phase_since_ms >= TB_OFFSETS_READER_STALL_MS) {
            snprintf(errstr, errstr_size,
                     "reading the offsets topic %s: nothing arrived for %d ms",
                     reader->topic.name, TB_OFFSETS_READER_STALL_MS);
            return -1;
        }
        return rc;
    }
    if (now - reader->phase_since_ms >= TB_OFFSETS_READER_TIMEOUT_MS) {
        size_t len = strlen(errstr);
        snprintf(errstr + len, errstr_size - len, " (for %d ms)",
                 TB_OFFSETS_READER_TIMEOUT_MS);
        return -1;
    }
    return 0;
}

const json_t *tb_offsets_reader_offsets(const tb_offsets_reader_t *reader)
{
    return reader->offsets;
}

/* Destroys a consumer that only was assigned partitions: nothing to leave
 * or commit, so no close that could wait on the network. */
static void consumer_destroy(rd_kafka_t *rk)
{
    if (rk != NULL) {
        rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    }
}

void tb_offsets_reader_destroy(tb_offsets_reader_t *reader)
{
    if (reader == NULL) {
        return;
    }
    if (reader->admin_queue != NULL) {
        rd_kafka_queue_destroy(reader->admin_queue);
    }
    consumer_destroy(reader->probe);
    consumer_destroy(reader->committed);
    free(reader->high);
    free(reader->reached);
    free(reader->done);
    json_decref(reader->offsets);
    free(reader->connector);
    free((char *)reader->topic.name);
    free(reader);
}
