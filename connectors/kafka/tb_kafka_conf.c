#include "connectors/kafka/tb_kafka_conf.h"

#include <stdio.h>

#include "core/tb_log.h"

/* librdkafka's syslog levels onto ours. */
static tb_log_level_t level_of(int syslog_level)
{
    if (syslog_level <= 3) {
        return TB_LOG_ERROR;
    }
    if (syslog_level == 4) {
        return TB_LOG_WARN;
    }
    if (syslog_level <= 6) {
        return TB_LOG_INFO;
    }
    return TB_LOG_DEBUG;
}

static void log_bridge(const rd_kafka_t *rk, int level, const char *facility,
                       const char *message)
{
    TB_LOG(level_of(level), "tributary.rdkafka", "%s [%s] %s", rd_kafka_name(rk),
           facility, message);
}

rd_kafka_conf_t *tb_kafka_conf_new(const json_t *props, char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char *key;
    json_t *value;

    json_object_foreach ((json_t *)props, key, value) {
        char reason[512];
        if (rd_kafka_conf_set(conf, key, json_string_value(value), reason,
                              sizeof(reason)) != RD_KAFKA_CONF_OK) {
            snprintf(errstr, errstr_size, "Kafka client property %s: %s", key, reason);
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
    }
    rd_kafka_conf_set_log_cb(conf, log_bridge);
    return conf;
}

bool tb_kafka_error_is_final(int err)
{
    return err == RD_KAFKA_RESP_ERR__AUTHENTICATION || err == RD_KAFKA_RESP_ERR__FATAL ||
           err == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED;
}
