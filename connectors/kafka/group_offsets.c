#include "connectors/kafka/tb_group_offsets.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>

#include "connectors/kafka/tb_kafka_conf.h"

#define ADMIN_TIMEOUT_MS 15000

/* Runs one admin request and waits for its result event. */
static rd_kafka_event_t *wait_result(rd_kafka_queue_t *queue)
{
    return rd_kafka_queue_poll(queue, ADMIN_TIMEOUT_MS + 1000);
}

/* The first error of a result's partitions, written into errstr. */
static int partition_errors(const rd_kafka_topic_partition_list_t *list,
                            const char *group, char *errstr, size_t errstr_size)
{
    for (int i = 0; list != NULL && i < list->cnt; i++) {
        if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(errstr, errstr_size, "group %s, %s-%d: %s", group,
                     list->elems[i].topic, (int)list->elems[i].partition,
                     rd_kafka_err2str(list->elems[i].err));
            return -1;
        }
    }
    return 0;
}

static int alter(rd_kafka_t *rk, rd_kafka_queue_t *queue, const char *group,
                 rd_kafka_topic_partition_list_t *list, char *errstr, size_t errstr_size)
{
    rd_kafka_AlterConsumerGroupOffsets_t *request =
        rd_kafka_AlterConsumerGroupOffsets_new(group, list);
    rd_kafka_AlterConsumerGroupOffsets(rk, &request, 1, NULL, queue);
    rd_kafka_AlterConsumerGroupOffsets_destroy(request);
    rd_kafka_event_t *event = wait_result(queue);
    int rc = -1;
    if (event == NULL) {
        snprintf(errstr, errstr_size, "group %s: no answer from Kafka", group);
    } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "group %s: %s", group,
                 rd_kafka_event_error_string(event));
    } else {
        size_t n;
        const rd_kafka_group_result_t **groups =
            rd_kafka_AlterConsumerGroupOffsets_result_groups(
                rd_kafka_event_AlterConsumerGroupOffsets_result(event), &n);
        const rd_kafka_error_t *error =
            n > 0 ? rd_kafka_group_result_error(groups[0]) : NULL;
        if (error != NULL) {
            snprintf(errstr, errstr_size, "group %s: %s", group,
                     rd_kafka_error_string(error));
        } else {
            rc = n > 0 ? partition_errors(rd_kafka_group_result_partitions(groups[0]),
                                          group, errstr, errstr_size)
                       : 0;
        }
    }
    rd_kafka_event_destroy(event);
    return rc;
}

static int delete (rd_kafka_t *rk, rd_kafka_queue_t *queue, const char *group,
                   rd_kafka_topic_partition_list_t *list, char *errstr,
                   size_t errstr_size)
{
    rd_kafka_DeleteConsumerGroupOffsets_t *request =
        rd_kafka_DeleteConsumerGroupOffsets_new(group, list);
    rd_kafka_DeleteConsumerGroupOffsets(rk, &request, 1, NULL, queue);
    rd_kafka_DeleteConsumerGroupOffsets_destroy(request);
    rd_kafka_event_t *event = wait_result(queue);
    int rc = -1;
    if (event == NULL) {
        snprintf(errstr, errstr_size, "group %s: no answer from Kafka", group);
    } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR &&
               rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
        snprintf(errstr, errstr_size, "group %s: %s", group,
                 rd_kafka_event_error_string(event));
    } else {
        size_t n = 0;
        const rd_kafka_group_result_t **groups =
            rd_kafka_event_error(event) == RD_KAFKA_RESP_ERR_NO_ERROR
                ? rd_kafka_DeleteConsumerGroupOffsets_result_groups(
                      rd_kafka_event_DeleteConsumerGroupOffsets_result(event), &n)
                : NULL;
        const rd_kafka_error_t *error =
            n > 0 ? rd_kafka_group_result_error(groups[0]) : NULL;
        rc = 0;
        /* a group that never committed has nothing to delete */
        if (error != NULL &&
            rd_kafka_error_code(error) != RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
            snprintf(errstr, errstr_size, "group %s: %s", group,
                     rd_kafka_error_string(error));
            rc = -1;
        }
    }
    rd_kafka_event_destroy(event);
    return rc;
}

int tb_group_offsets_alter(const json_t *kafka_props, const char *group,
                           const json_t *offsets, char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *conf = tb_kafka_conf_new(kafka_props, errstr, errstr_size);
    if (conf == NULL) {
        return -1;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_queue_t *queue = rd_kafka_queue_new(rk);
    rd_kafka_topic_partition_list_t *set = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_t *unset = rd_kafka_topic_partition_list_new(1);
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        const char *topic = json_string_value(json_object_get(entry, "topic"));
        int partition = (int)json_integer_value(json_object_get(entry, "partition"));
        json_int_t offset = json_integer_value(json_object_get(entry, "offset"));
        rd_kafka_topic_partition_list_add(offset >= 0 ? set : unset, topic, partition)
            ->offset = offset;
    }
    int rc = 0;
    if (set->cnt > 0) {
        rc = alter(rk, queue, group, set, errstr, errstr_size);
    }
    if (rc == 0 && unset->cnt > 0) {
        rc = delete (rk, queue, group, unset, errstr, errstr_size);
    }
    rd_kafka_topic_partition_list_destroy(set);
    rd_kafka_topic_partition_list_destroy(unset);
    rd_kafka_queue_destroy(queue);
    rd_kafka_destroy(rk);
    return rc;
}
