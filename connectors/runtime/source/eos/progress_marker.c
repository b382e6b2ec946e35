#include "connectors/runtime/source/eos/tb_progress_marker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tb_progress_marker_query {
    rd_kafka_queue_t *queue;
    char group[400];
    char *topic;
};

tb_progress_marker_query_t *tb_progress_marker_query_start(rd_kafka_t *rk,
                                                           const char *connector,
                                                           int task, const char *topic)
{
    tb_progress_marker_query_t *query = calloc(1, sizeof(*query));
    char errstr[256];
    snprintf(query->group, sizeof(query->group), TB_PROGRESS_MARKER_GROUP_PREFIX "%s-%d",
             connector, task);
    query->topic = strdup(topic);
    query->queue = rd_kafka_queue_new(rk);
    rd_kafka_topic_partition_list_t *partitions = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(partitions, topic, 0);
    rd_kafka_ListConsumerGroupOffsets_t *request =
        rd_kafka_ListConsumerGroupOffsets_new(query->group, partitions);
    rd_kafka_AdminOptions_t *options =
        rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
    rd_kafka_AdminOptions_set_request_timeout(options, TB_PROGRESS_MARKER_TIMEOUT_MS,
                                              errstr, sizeof(errstr));
    rd_kafka_ListConsumerGroupOffsets(rk, &request, 1, options, query->queue);
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_ListConsumerGroupOffsets_destroy(request);
    rd_kafka_topic_partition_list_destroy(partitions);
    return query;
}

/* The marker in the group's offset of partition 0, when it has one. */
static tb_progress_marker_status_t marker_of(const tb_progress_marker_query_t *query,
                                             const rd_kafka_topic_partition_t *tp,
                                             tb_progress_marker_t *marker, char *errstr,
                                             size_t errstr_size)
{
    if (tp == NULL || tp->offset < 0) {
        return TB_PROGRESS_MARKER_NONE;
    }
    if (tb_progress_marker_decode(tp->metadata, tp->metadata_size, &marker->generation,
                                  &marker->offsets) != 0) {
        snprintf(errstr, errstr_size,
                 "the offset of group %s on %s-0 is no progress marker: it holds no "
                 "source offsets",
                 query->group, query->topic);
        return TB_PROGRESS_MARKER_FOREIGN;
    }
    return TB_PROGRESS_MARKER_FOUND;
}

tb_progress_marker_status_t
tb_progress_marker_query_poll(tb_progress_marker_query_t *query,
                              tb_progress_marker_t *marker, char *errstr,
                              size_t errstr_size)
{
    rd_kafka_event_t *event = rd_kafka_queue_poll(query->queue, 0);
    if (event == NULL) {
        return TB_PROGRESS_MARKER_PENDING;
    }
    const rd_kafka_ListConsumerGroupOffsets_result_t *result =
        rd_kafka_event_ListConsumerGroupOffsets_result(event);
    size_t count = 0;
    const rd_kafka_group_result_t **groups =
        result != NULL ? rd_kafka_ListConsumerGroupOffsets_result_groups(result, &count)
                       : NULL;
    const rd_kafka_error_t *group_error =
        count == 1 ? rd_kafka_group_result_error(groups[0]) : NULL;
    tb_progress_marker_status_t status = TB_PROGRESS_MARKER_ERROR;
    if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR || count != 1) {
        snprintf(errstr, errstr_size, "reading the progress marker of group %s: %s",
                 query->group, rd_kafka_event_error_string(event));
    } else if (group_error != NULL &&
               rd_kafka_error_code(group_error) != RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
        snprintf(errstr, errstr_size, "reading the progress marker of group %s: %s",
                 query->group, rd_kafka_error_string(group_error));
    } else {
        const rd_kafka_topic_partition_list_t *list =
            group_error == NULL ? rd_kafka_group_result_partitions(groups[0]) : NULL;
        status = marker_of(query, list != NULL && list->cnt > 0 ? &list->elems[0] : NULL,
                           marker, errstr, errstr_size);
    }
    rd_kafka_event_destroy(event);
    return status;
}

void tb_progress_marker_query_destroy(tb_progress_marker_query_t *query)
{
    if (query == NULL) {
        return;
    }
    rd_kafka_queue_destroy(query->queue);
    free(query->topic);
    free(query);
}

void tb_progress_marker_clear(tb_progress_marker_t *marker)
{
    json_decref(marker->offsets);
    marker->offsets = NULL;
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
