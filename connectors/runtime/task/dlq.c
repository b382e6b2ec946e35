#include "connectors/runtime/task/tb_dlq.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_kafka_reaper.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

struct tb_dlq {
    rd_kafka_t *rk;
    char *topic;
    bool context_headers;
    char failure[512]; /* the first delivery that failed; kept for good */
};

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    tb_dlq_t *dlq = opaque;
    (void)rk;
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR && dlq->failure[0] == '\0') {
        snprintf(dlq->failure, sizeof(dlq->failure),
                 "a record could not be written to the dead letter queue %s: %s",
                 dlq->topic, rd_kafka_err2str(msg->err));
    }
}

tb_dlq_t *tb_dlq_create(const json_t *kafka_props, const char *topic,
                        bool context_headers, char *errstr, size_t errstr_size)
{
    tb_dlq_t *dlq = calloc(1, sizeof(*dlq));
    json_t *props = json_deep_copy(kafka_props);
    json_object_set_new(props, "enable.idempotence", json_string("true"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        free(dlq);
        return NULL;
    }
    rd_kafka_conf_set_opaque(conf, dlq);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    dlq->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (dlq->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        free(dlq);
        return NULL;
    }
    dlq->topic = strdup(topic);
    dlq->context_headers = context_headers;
    return dlq;
}

static void add_header(rd_kafka_headers_t *headers, const char *name, const char *value)
{
    rd_kafka_header_add(headers, name, -1, value, -1);
}

static rd_kafka_headers_t *headers_for(const tb_dlq_t *dlq, const tb_sink_record_t *r,
                                       const tb_dlq_context_t *ctx)
{
    rd_kafka_headers_t *headers = rd_kafka_headers_new(r->header_count + 10);
    char number[32];
    for (size_t i = 0; i < r->header_count; i++) {
        rd_kafka_header_add(headers, r->headers[i].name, -1, r->headers[i].value,
                            (ssize_t)r->headers[i].value_len);
    }
    if (!dlq->context_headers) {
        return headers;
    }
    add_header(headers, "__connect.errors.topic", r->topic);
    snprintf(number, sizeof(number), "%d", (int)r->partition);
    add_header(headers, "__connect.errors.partition", number);
    snprintf(number, sizeof(number), "%lld", (long long)r->offset);
    add_header(headers, "__connect.errors.offset", number);
    add_header(headers, "__connect.errors.connector.name", ctx->connector);
    snprintf(number, sizeof(number), "%d", ctx->task);
    add_header(headers, "__connect.errors.task.id", number);
    add_header(headers, "__connect.errors.stage", ctx->stage);
    add_header(headers, "__connect.errors.class.name", ctx->class_name);
    add_header(headers, "__connect.errors.exception.class.name",
               "org.apache.kafka.connect.errors.ConnectException");
    add_header(headers, "__connect.errors.exception.message", ctx->reason);
    return headers;
}

int tb_dlq_send(tb_dlq_t *dlq, const tb_sink_record_t *record,
                const tb_dlq_context_t *context, char *errstr, size_t errstr_size)
{
    rd_kafka_headers_t *headers = headers_for(dlq, record, context);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        dlq->rk, RD_KAFKA_V_TOPIC(dlq->topic),
        RD_KAFKA_V_KEY((void *)record->key, record->key_len),
        RD_KAFKA_V_VALUE((void *)record->value, record->value_len),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_TIMESTAMP(record->timestamp > 0 ? record->timestamp : 0),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_headers_destroy(headers); /* not taken on failure */
        snprintf(errstr, errstr_size, "dead letter queue %s: %s", dlq->topic,
                 rd_kafka_err2str(err));
        return -1;
    }
    rd_kafka_poll(dlq->rk, 0);
    return 0;
}

int tb_dlq_flush(tb_dlq_t *dlq, int timeout_ms, char *errstr, size_t errstr_size)
{
    rd_kafka_resp_err_t err = rd_kafka_flush(dlq->rk, timeout_ms);
    if (dlq->failure[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", dlq->failure);
        return -1;
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "dead letter queue %s: %s", dlq->topic,
                 rd_kafka_err2str(err));
        return -1;
    }
    return 0;
}

void tb_dlq_destroy(tb_dlq_t *dlq, int64_t deadline_ms)
{
    if (dlq == NULL) {
        return;
    }
    int64_t left_ms = deadline_ms - tb_monotonic_ms();
    rd_kafka_flush(dlq->rk, left_ms > 0 ? (int)left_ms : 0);
    if (!tb_kafka_destroy_within(dlq->rk, 0, deadline_ms)) {
        TB_LOG(TB_LOG_WARN, "tributary.task",
               "destroying the producer of the dead letter queue %s was cut short at "
               "the stop's bound (task.shutdown.graceful.timeout.ms): librdkafka still "
               "waits for a broker that does not answer, and finishes the destroy in "
               "the background",
               dlq->topic);
    }
    free(dlq->topic);
    free(dlq);
}
