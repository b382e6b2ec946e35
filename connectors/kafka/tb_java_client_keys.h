/*
 * tb_java_client_keys.h - Kafka's Java client keys (ProducerConfig,
 * ConsumerConfig, AdminClientConfig) in librdkafka's terms.
 *
 * One table says, for each Java key and client role, what it becomes: a
 * librdkafka property (renamed, its value converted where the units
 * differ), a setting the runtime applies itself (max.poll.records,
 * auto.offset.reset), or nothing, because librdkafka has no such thing
 * (max.block.ms, serializers, metrics reporters): such keys are accepted,
 * logged and documented. sasl.jaas.config is read for PLAIN, SCRAM and
 * unsecured OAUTHBEARER. Keys the table does not know are librdkafka's and
 * pass as written. Every value is checked by librdkafka, and every error
 * names the config key the user wrote.
 */
#ifndef TB_JAVA_CLIENT_KEYS_H
#define TB_JAVA_CLIENT_KEYS_H

#include <jansson.h>
#include <stdbool.h>

#include "connectors/kafka/tb_client_props.h"

/* The batch bound of a sink task: max.poll.records, left in a consumer's
 * translated properties for the sink engine to take out. */
#define TB_JAVA_MAX_POLL_RECORDS "max.poll.records"

/* Rewrites props, a client's merged properties as written (Java or
 * librdkafka names), into librdkafka's. origins maps each key of props to
 * the config key it came from (e.g. "producer.override.linger.ms"); a key
 * missing there is named as it is. A later layer (<role>.override. over
 * <role>. over plain worker keys) wins where two keys mean one librdkafka
 * property. Values that are still secret references are renamed, not
 * checked. Problems are added to errors under the origin key. Returns 0,
 * or -1 when errors got any; props is rewritten either way. Borrows all. */
int tb_java_client_keys_translate(tb_client_role_t role, json_t *props,
                                  const json_t *origins, json_t *errors);

/* Why config_key, with value, is accepted but has no effect (a static
 * string), or NULL when it is used. config_key carries its prefix:
 * "<role>.override.", the worker's "<role>." or none (any client). */
const char *tb_java_client_key_ignored(const char *config_key, const char *value);

/* Whether key (unprefixed) is one of the connection keys MM2's
 * MirrorClientConfig defines, the only keys MM2 takes from a cluster's
 * keys: bootstrap.servers, security.protocol, ssl.* and sasl.*. */
bool tb_java_client_key_is_connection(const char *key);

/* Appends the Markdown section of the Java client keys to *doc (realloc'd;
 * the caller frees it). Returns 0, or -1 when out of memory. */
int tb_java_client_keys_doc_markdown(char **doc);

#endif
