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

/* Client telemetry (KIP-714) off: a client's metrics are tributary's own
 * (/metrics), and librdkafka 2.8's destroy waits up to a second for a final
 * push to a broker that offers telemetry (Kafka 4.x does), once per client:
 * a worker stopping 200 idle sources waited more than three minutes.
 * Java's enable.metrics.push is accepted and ignored (java_client_keys.c). */
static const char *const handle_defaults[][2] = {{"enable.metrics.push", "false"}};

static bool set_key(rd_kafka_conf_t *conf, const char *key, const char *value,
                    char *errstr, size_t errstr_size)
{
    char reason[512];
    if (rd_kafka_conf_set(conf, key, value, reason, sizeof(reason)) != RD_KAFKA_CONF_OK) {
        snprintf(errstr, errstr_size, "Kafka client property %s: %s", key, reason);
        return false;
    }
    return true;
}

rd_kafka_conf_t *tb_kafka_conf_new(const json_t *props, char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char *key;
    json_t *value;

    for (size_t i = 0; i < sizeof(handle_defaults) / sizeof(handle_defaults[0]); i++) {
        if (!set_key(conf, handle_defaults[i][0], handle_defaults[i][1], errstr,
                     errstr_size)) {
            goto fail;
        }
    }

    json_object_foreach ((json_t *)props, key, value) {
        if (!set_key(conf, key, json_string_value(value), errstr, errstr_size)) {
            goto fail;
        }
    }
    rd_kafka_conf_set_log_cb(conf, log_bridge);
    return conf;

fail:
    rd_kafka_conf_destroy(conf);
    return NULL;
}

bool tb_kafka_error_is_final(int err)
{
    return err == RD_KAFKA_RESP_ERR__AUTHENTICATION || err == RD_KAFKA_RESP_ERR__FATAL ||
           err == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED;
}
