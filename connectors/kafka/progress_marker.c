#include "connectors/kafka/tb_progress_marker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"

#define MARKER_TIMEOUT_MS 15000
#define GENERATION_KEY "tributary.offsets.generation"

const char *tb_progress_marker_group(const char *connector, int task, char *buf,
                                     size_t size)
{
    snprintf(buf, size, TB_PROGRESS_MARKER_GROUP_PREFIX "%s-%d", connector, task);
    return buf;
}

const char *tb_progress_marker_legacy_group(const char *connector, int task, char *buf,
                                            size_t size)
{
    snprintf(buf, size, "connect-%s-%d", connector, task);
    return buf;
}

/* Fills list with group's committed offsets, using a short-lived consumer
 * made from kafka_props. */
static rd_kafka_resp_err_t committed(const json_t *kafka_props, const char *group,
                                     rd_kafka_topic_partition_list_t *list, char *errstr,
                                     size_t errstr_size)
{
    json_t *props = json_deep_copy(kafka_props);
    json_object_set_new(props, "group.id", json_string(group));
    json_object_set_new(props, "enable.auto.commit", json_string("false"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        return RD_KAFKA_RESP_ERR__INVALID_ARG;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return RD_KAFKA_RESP_ERR__INVALID_ARG;
    }
    rd_kafka_resp_err_t err = rd_kafka_committed(rk, list, MARKER_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "reading the progress marker of group %s: %s",
                 group, rd_kafka_err2str(err));
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return err;
}

tb_progress_marker_status_t tb_progress_marker_read(const json_t *kafka_props,
                                                    const char *group, const char *topic,
                                                    tb_progress_marker_t *marker,
                                                    char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, topic, 0);
    tb_progress_marker_status_t status = TB_PROGRESS_MARKER_ERROR;
    if (committed(kafka_props, group, list, errstr, errstr_size) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = TB_PROGRESS_MARKER_ERROR;
    } else if (tp->offset < 0) {
        status = TB_PROGRESS_MARKER_NONE;
    } else if (tb_progress_marker_decode(tp->metadata, tp->metadata_size,
                                         &marker->generation, &marker->offsets) != 0) {
        snprintf(errstr, errstr_size,
                 "the offset of group %s on %s-0 is no progress marker: it holds no "
                 "source offsets",
                 group, topic);
        status = TB_PROGRESS_MARKER_FOREIGN;
    } else {
        marker->sequence = tp->offset;
        status = TB_PROGRESS_MARKER_FOUND;
    }
    rd_kafka_topic_partition_list_destroy(list);
    return status;
}

void tb_progress_marker_clear(tb_progress_marker_t *marker)
{
    json_decref(marker->offsets);
    marker->offsets = NULL;
}

char *tb_progress_marker_encode(int64_t generation, const json_t *offsets, size_t *size,
                                char *errstr, size_t errstr_size)
{
    json_t *marker = json_pack("{s:I, s:O}", "generation", (json_int_t)generation,
                               "offsets", (json_t *)offsets);
    char *metadata =
        marker != NULL ? json_dumps(marker, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(marker);
    *size = metadata != NULL ? strlen(metadata) : 0;
    if (metadata == NULL || *size > TB_PROGRESS_MARKER_MAX_BYTES) {
        snprintf(errstr, errstr_size,
                 "the source offsets of one transaction (%zu bytes of JSON for %zu "
                 "source partition(s)) do not fit in a progress marker (at most %d "
                 "bytes, the broker's offset.metadata.max.bytes default)",
                 *size, json_array_size(offsets), TB_PROGRESS_MARKER_MAX_BYTES);
        free(metadata);
        return NULL;
    }
    return metadata;
}

int tb_progress_marker_decode(const char *metadata, size_t size, int64_t *generation,
                              json_t **offsets)
{
    json_error_t error;
    while (size > 0 && metadata[size - 1] == '\0') {
        size--; /* some clients (confluent-kafka-python) count a NUL in */
    }
    json_t *root = metadata != NULL ? json_loadb(metadata, size, 0, &error) : NULL;
    json_t *list = json_is_array(root) ? root : json_object_get(root, "offsets");
    json_t *number = json_is_array(root) ? NULL : json_object_get(root, "generation");
    if (!json_is_array(list) || (!json_is_array(root) && !json_is_integer(number))) {
        json_decref(root);
        return -1;
    }
    *generation = number != NULL ? json_integer_value(number) : 0;
    *offsets = json_incref(list);
    json_decref(root);
    return 0;
}

rd_kafka_topic_partition_list_t *
tb_progress_marker_make(const char *topic, int64_t sequence, int64_t generation,
                        const json_t *offsets, char *errstr, size_t errstr_size)
{
    size_t size;
    char *metadata =
        tb_progress_marker_encode(generation, offsets, &size, errstr, errstr_size);
    if (metadata == NULL) {
        return NULL;
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, topic, 0);
    tp->offset = sequence;
    tp->metadata = metadata; /* freed with the list */
    tp->metadata_size = size;
    return list;
}

bool tb_progress_marker_is_generation(const json_t *partition)
{
    return json_object_size(partition) == 1 &&
           json_object_get(partition, GENERATION_KEY) != NULL;
}

int64_t tb_progress_marker_generation_of(const json_t *stored)
{
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)stored, i, entry) {
        if (tb_progress_marker_is_generation(json_object_get(entry, "partition"))) {
            return json_integer_value(
                json_object_get(json_object_get(entry, "offset"), "generation"));
        }
    }
    return 0;
}

json_t *tb_progress_marker_generation_entry(int64_t generation)
{
    return json_pack("{s:{s:b}, s:{s:I}}", "partition", GENERATION_KEY, 1, "offset",
                     "generation", (json_int_t)generation);
}
