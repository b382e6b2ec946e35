#include "connectors/runtime/task/tb_dlq_topic.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>

#include "connectors/kafka/tb_kafka_conf.h"

#define DLQ_PARTITIONS 1 /* Connect's DLQ_NUM_DESIRED_PARTITIONS */

/* The outcome of one CreateTopics request for one topic, from its result
 * event (NULL: none came in time). */
static rd_kafka_resp_err_t topic_result(rd_kafka_event_t *ev, char *reason,
                                        size_t reason_size)
{
    size_t count = 0;
    const rd_kafka_topic_result_t **results;
    if (ev == NULL) {
        snprintf(reason, reason_size, "no answer in time");
        return RD_KAFKA_RESP_ERR__TIMED_OUT;
    }
    if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(reason, reason_size, "%s", rd_kafka_event_error_string(ev));
        return rd_kafka_event_error(ev);
    }
    results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev),
                                                  &count);
    if (count != 1) {
        snprintf(reason, reason_size, "the broker answered for %zu topics", count);
        return RD_KAFKA_RESP_ERR__FAIL;
    }
    const char *message = rd_kafka_topic_result_error_string(results[0]);
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[0]);
    snprintf(reason, reason_size, "%s",
             message != NULL ? message : rd_kafka_err2str(err));
    return err;
}

/* Sends one CreateTopics request through rk and waits for its result. */
static rd_kafka_resp_err_t create_topic(rd_kafka_t *rk, rd_kafka_NewTopic_t *topic,
                                        int timeout_ms, char *reason, size_t reason_size)
{
    rd_kafka_queue_t *queue = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *options =
        rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, NULL, 0);
    rd_kafka_AdminOptions_set_operation_timeout(options, timeout_ms, NULL, 0);
    rd_kafka_CreateTopics(rk, &topic, 1, options, queue);
    /* librdkafka answers by its request timeout; the margin covers queueing */
    rd_kafka_event_t *ev = rd_kafka_queue_poll(queue, timeout_ms + 5000);
    rd_kafka_resp_err_t err = topic_result(ev, reason, reason_size);
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    return err;
}

int tb_dlq_topic_ensure(const json_t *admin_props, const char *topic,
                        int replication_factor, int timeout_ms, char *errstr,
                        size_t errstr_size)
{
    char reason[512];
    rd_kafka_t *rk = NULL;
    rd_kafka_NewTopic_t *new_topic = NULL;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__FAIL;
    rd_kafka_conf_t *conf = tb_kafka_conf_new(admin_props, reason, sizeof(reason));
    if (conf != NULL) {
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, reason, sizeof(reason));
        if (rk == NULL) {
            rd_kafka_conf_destroy(conf);
        }
    }
    if (rk != NULL) {
        new_topic = rd_kafka_NewTopic_new(topic, DLQ_PARTITIONS, replication_factor,
                                          reason, sizeof(reason));
    }
    if (new_topic != NULL) {
        err = create_topic(rk, new_topic, timeout_ms, reason, sizeof(reason));
    }
    if (new_topic != NULL) {
        rd_kafka_NewTopic_destroy(new_topic);
    }
    if (rk != NULL) {
        rd_kafka_destroy(rk);
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR ||
        err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        return 0;
    }
    snprintf(errstr, errstr_size,
             "the dead letter queue topic %s could not be created with "
             "errors.deadletterqueue.topic.replication.factor=%d: %s",
             topic, replication_factor, reason);
    return -1;
}
