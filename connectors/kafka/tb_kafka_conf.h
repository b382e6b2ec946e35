/*
 * tb_kafka_conf.h - librdkafka configuration from tributary's property maps.
 *
 * Every librdkafka handle tributary creates goes through here, so that all of
 * them log through tb_log (logger "tributary.rdkafka", with librdkafka's
 * facility) and receive their properties the same way.
 */
#ifndef TB_KAFKA_CONF_H
#define TB_KAFKA_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

/* A new librdkafka config holding every key of props (an object of
 * strings), with the log bridge installed and client telemetry
 * (enable.metrics.push) off unless props says otherwise. Returns NULL and fills errstr
 * with librdkafka's own message, naming the key, when a property is refused. The caller
 * owns the result (rd_kafka_conf_destroy, or pass it to rd_kafka_new which takes it). */
rd_kafka_conf_t *tb_kafka_conf_new(const json_t *props, char *errstr, size_t errstr_size);

/* True for a librdkafka error a client does not recover from by itself:
 * failed authentication (a wrong password is not going to become right)
 * and fatal errors. */
bool tb_kafka_error_is_final(int err);

#endif
