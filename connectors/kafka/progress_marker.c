#include "connectors/kafka/tb_progress_marker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"

#define MARKER_TIMEOUT_MS 15000
#define METADATA_MAX 4096 /* the broker's offset.metadata.max.bytes default */

int tb_progress_marker_read(const json_t *kafka_props, const char *group,
                            const char *topic, int64_t *sequence, json_t **offsets,
                            char *errstr, size_t errstr_size)
{
    json_t *props = json_deep_copy(kafka_props);
    json_object_set_new(props, "group.id", json_string(group));
    json_object_set_new(props, "enable.auto.commit", json_string("false"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        return -1;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, topic, 0);
    int rc = -1;
    rd_kafka_resp_err_t err = rd_kafka_committed(rk, list, MARKER_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "reading the progress marker of group %s: %s",
                 group, rd_kafka_err2str(err));
    } else if (tp->offset < 0) {
        rc = 0;
    } else {
        json_error_t error;
        *offsets = tp->metadata != NULL
                       ? json_loadb(tp->metadata, tp->metadata_size, 0, &error)
                       : NULL;
        if (!json_is_array(*offsets)) {
            json_decref(*offsets);
            *offsets = NULL;
            snprintf(errstr, errstr_size,
                     "the progress marker of group %s holds no source offsets", group);
        } else {
            *sequence = tp->offset;
            rc = 1;
        }
    }
    rd_kafka_topic_partition_list_destroy(list);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return rc;
}

rd_kafka_topic_partition_list_t *tb_progress_marker_make(const char *topic,
                                                         int64_t sequence,
                                                         const json_t *offsets,
                                                         char *errstr, size_t errstr_size)
{
    char *metadata = json_dumps(offsets, JSON_COMPACT | JSON_SORT_KEYS);
    size_t size = metadata != NULL ? strlen(metadata) : 0;
    if (metadata == NULL || size > METADATA_MAX) {
        snprintf(errstr, errstr_size,
                 "the task's source offsets (%zu bytes of JSON) do not fit in a progress "
                 "marker (at most %d bytes)",
                 size, METADATA_MAX);
        free(metadata);
        return NULL;
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, topic, 0);
    tp->offset = sequence;
    tp->metadata = metadata; /* freed with the list */
    tp->metadata_size = size;
    return list;
}
