#include "connectors/kafka/tb_group_offsets.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <time.h>

#include "connectors/kafka/tb_kafka_conf.h"

#define ADMIN_TIMEOUT_MS 15000
/* How long a dev mode member waits to be let into its group. */
#define JOIN_TIMEOUT_MS 30000
#define JOIN_POLL_MS 100

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

/* The partitions of offsets, each at its offset; -1 (delete) becomes the
 * partition's low watermark, since the mock cluster cannot delete a group
 * offset and librdkafka does not commit a negative one. NULL with errstr. */
static rd_kafka_topic_partition_list_t *member_offsets(rd_kafka_t *rk, const char *group,
                                                       const json_t *offsets,
                                                       char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        const char *topic = json_string_value(json_object_get(entry, "topic"));
        int partition = (int)json_integer_value(json_object_get(entry, "partition"));
        int64_t offset = json_integer_value(json_object_get(entry, "offset"));
        int64_t high;
        rd_kafka_resp_err_t err =
            offset >= 0 ? RD_KAFKA_RESP_ERR_NO_ERROR
                        : rd_kafka_query_watermark_offsets(rk, topic, partition, &offset,
                                                           &high, ADMIN_TIMEOUT_MS);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(errstr, errstr_size, "group %s, %s-%d: the start cannot be read: %s",
                     group, topic, partition, rd_kafka_err2str(err));
            rd_kafka_topic_partition_list_destroy(list);
            return NULL;
        }
        rd_kafka_topic_partition_list_add(list, topic, partition)->offset = offset;
    }
    return list;
}

static int64_t monotonic_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Subscribes rk to the topics of list and polls (discarding records) until
 * the group gives it partitions, at most JOIN_TIMEOUT_MS. */
static int join(rd_kafka_t *rk, const char *group,
                const rd_kafka_topic_partition_list_t *list, char *errstr,
                size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    for (int i = 0; i < list->cnt; i++) {
        if (rd_kafka_topic_partition_list_find(topics, list->elems[i].topic,
                                               RD_KAFKA_PARTITION_UA) == NULL) {
            rd_kafka_topic_partition_list_add(topics, list->elems[i].topic,
                                              RD_KAFKA_PARTITION_UA);
        }
    }
    rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    int64_t deadline = monotonic_ms() + JOIN_TIMEOUT_MS;
    int assigned = 0;
    while (err == RD_KAFKA_RESP_ERR_NO_ERROR && assigned == 0 &&
           monotonic_ms() < deadline) {
        rd_kafka_message_t *message = rd_kafka_consumer_poll(rk, JOIN_POLL_MS);
        if (message != NULL) {
            rd_kafka_message_destroy(message);
        }
        rd_kafka_topic_partition_list_t *assignment = NULL;
        err = rd_kafka_assignment(rk, &assignment);
        assigned = assignment != NULL ? assignment->cnt : 0;
        rd_kafka_topic_partition_list_destroy(assignment);
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "group %s: cannot join: %s", group,
                 rd_kafka_err2str(err));
    } else if (assigned == 0) {
        snprintf(errstr, errstr_size,
                 "group %s: not let in within %d ms (the dev mode cluster lets a member "
                 "in only after the group's earlier members left and their "
                 "session.timeout.ms passed)",
                 group, JOIN_TIMEOUT_MS);
    }
    return assigned > 0 ? 0 : -1;
}

/* A consumer of group made from kafka_props (copied), committing only when
 * told to; NULL with errstr. */
static rd_kafka_t *member_new(const json_t *kafka_props, const char *group, char *errstr,
                              size_t errstr_size)
{
    json_t *props = json_deep_copy(kafka_props);
    json_object_set_new(props, "group.id", json_string(group));
    json_object_set_new(props, "enable.auto.commit", json_string("false"));
    if (json_object_get(props, "partition.assignment.strategy") == NULL) {
        json_object_set_new(props, "partition.assignment.strategy",
                            json_string(TB_SINK_GROUP_ASSIGNOR));
    }
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        return NULL;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_poll_set_consumer(rk);
    return rk;
}

int tb_group_offsets_commit_as_member(const json_t *kafka_props, const char *group,
                                      const json_t *offsets, char *errstr,
                                      size_t errstr_size)
{
    rd_kafka_t *rk = member_new(kafka_props, group, errstr, errstr_size);
    if (rk == NULL) {
        return -1;
    }
    rd_kafka_topic_partition_list_t *list =
        member_offsets(rk, group, offsets, errstr, errstr_size);
    int rc = -1;
    if (list != NULL && list->cnt == 0) {
        rc = 0; /* nothing to move: the group is never joined */
    } else if (list != NULL && join(rk, group, list, errstr, errstr_size) == 0) {
        rd_kafka_resp_err_t err = rd_kafka_commit(rk, list, 0);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(errstr, errstr_size, "group %s: %s", group, rd_kafka_err2str(err));
        } else {
            rc = partition_errors(list, group, errstr, errstr_size);
        }
    }
    if (list != NULL) {
        rd_kafka_topic_partition_list_destroy(list);
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return rc;
}
