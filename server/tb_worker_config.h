/*
 * tb_worker_config.h - the worker's configuration keys and where values
 * come from: a Java properties file, then TRIBUTARY_* environment variables
 * (TRIBUTARY_BOOTSTRAP_SERVERS means bootstrap.servers; "__" stands for "_"
 * and "___" for "-", as Connect's container images spell keys).
 */
#ifndef TB_WORKER_CONFIG_H
#define TB_WORKER_CONFIG_H

#include <stddef.h>

#include <jansson.h>

#include "core/tb_config.h"

/* bootstrap.servers when the worker sets none, as in Connect. */
#define TB_WORKER_DEFAULT_BOOTSTRAP "localhost:9092"

/* The table of worker keys. */
extern const tb_config_table_t tb_worker_config_table;

/* Adds every TRIBUTARY_* variable of envp to raw (overriding the file). */
void tb_worker_config_apply_env(json_t *raw, char *const *envp);

/* Turns one TRIBUTARY_* variable name into its key; returns -1 when name
 * does not start with the prefix. */
int tb_worker_config_env_key(const char *name, char *key, size_t key_size);

/* The librdkafka properties every Kafka client of this worker starts from:
 * bootstrap.servers (TB_WORKER_DEFAULT_BOOTSTRAP when raw has none) and the
 * client security keys given in raw. New reference. */
json_t *tb_worker_config_kafka_props(const json_t *raw);

/* The worker's converter settings: key.converter and value.converter (from
 * values, defaults applied) and every key.converter.* / value.converter.*
 * key of raw. New reference. */
json_t *tb_worker_config_converters(const json_t *raw, const json_t *values);

#endif
