/*
 * tb_connector_config.h - the keys Kafka Connect defines for every
 * connector (name, connector.class, tasks.max, converters, errors.*, and the
 * sink or source specific ones), and validation of a whole connector config
 * against them and its plugin's own table.
 */
#ifndef TB_CONNECTOR_CONFIG_H
#define TB_CONNECTOR_CONFIG_H

#include <stdbool.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"

/* Framework keys of every connector, of sinks, and of sources. */
extern const tb_config_table_t tb_connector_common_table;
extern const tb_config_table_t tb_connector_sink_table;
extern const tb_config_table_t tb_connector_source_table;

/* errors.tolerance, in its one_of order. */
typedef enum {
    TB_ERRORS_TOLERANCE_NONE = 0,
    TB_ERRORS_TOLERANCE_ALL,
} tb_errors_tolerance_t;

/*
 * The framework's keys of one connector, as its engines and checks read
 * them: a member per key of tb_connector_common_table and of the sink's or
 * the source's table, named after it ('.' spelled '_'), filled once by
 * tb_connector_settings_fill. The other kind's members stay zero (NULL).
 * Strings and lists are borrowed from the parsed values it was filled from.
 */
typedef struct {
    /* every connector */
    int tasks_max;
    bool tasks_max_enforce;
    const char *header_converter; /* NULL: the worker's */
    const json_t *transforms;
    const json_t *predicates;
    long long errors_retry_timeout;
    long long errors_retry_delay_max_ms;
    int errors_tolerance; /* tb_errors_tolerance_t */
    bool errors_log_enable;
    bool errors_log_include_messages;
    const char *errors_deadletterqueue_topic_name;
    int errors_deadletterqueue_topic_replication_factor;
    bool errors_deadletterqueue_context_headers_enable;
    /* sinks */
    const json_t *topics;
    const char *topics_regex;
    /* sources */
    const char *write_mode; /* append or upsert */
    const json_t *primary_key;
    const char *message_id_header;
    const char *exactly_once_support; /* requested or required */
    const char *transaction_boundary; /* poll, interval or connector */
    const char *offsets_storage_topic;
    int exactly_once_transaction_max_records;
    long long exactly_once_transaction_max_bytes;
    bool exactly_once_allow_missing_marker;
} tb_connector_settings_t;

/* Fills *out from a connector's parsed values (tb_connector_config_validate)
 * for plugin's kind. */
void tb_connector_settings_fill(const tb_plugin_t *plugin, const json_t *values,
                                tb_connector_settings_t *out);

/* The tables that define a connector of plugin, in Connect's order for
 * ConfigInfos: the framework's keys (common, then sink or source), then the
 * plugin's own. Returns their count (3). */
size_t tb_connector_config_tables(const tb_plugin_t *plugin,
                                  const tb_config_table_t *tables[3]);

/* Validates raw (an object of strings) for plugin. Returns the parsed values
 * (new reference) and fills errors (name -> array of messages) with every
 * problem, including the checks across keys (topics vs topics.regex). */
json_t *tb_connector_config_validate(const tb_plugin_t *plugin, const json_t *raw,
                                     json_t *errors);

/* Whether a source connector with these settings runs its tasks in
 * Kafka transactions, as in Connect: with exactly.once.support=required
 * always (the herder refuses it where the worker cannot), with requested
 * when worker_exactly_once (exactly.once.source.support=enabled on a real
 * cluster). False for a sink. */
bool tb_connector_config_transactional(const tb_connector_settings_t *settings,
                                       bool worker_exactly_once);

/* Adds to errors what keeps a source connector with these settings from
 * running in transactions: a transaction.boundary other than poll. */
void tb_connector_config_check_transactions(const tb_connector_settings_t *settings,
                                            json_t *errors);

/* Checks the count of task configs connector name's plugin generated
 * against tasks.max of its settings, as Connect's worker does. Returns
 * 0 when they may run: msg is then empty, or holds the warning to log when
 * they exceed tasks.max and tasks.max.enforce is false. Returns -1 when
 * tasks.max.enforce refuses them, with Connect's TooManyTasksException
 * message in msg. */
int tb_connector_config_check_task_count(const char *name,
                                         const tb_connector_settings_t *settings,
                                         size_t generated, char *msg, size_t msg_size);

/* Connect's ConfigInfos for raw with the errors found by validating it
 * (borrowed). New reference. */
json_t *tb_connector_config_infos(const tb_plugin_t *plugin, const json_t *raw,
                                  const json_t *errors);

/* The ConfigKeyInfo array of /connector-plugins/{p}/config: the plugin's
 * own keys, then the framework's, as Connect lists them (new reference). */
json_t *tb_connector_config_keys(const tb_plugin_t *plugin);

/* True when key of a connector config of plugin holds a secret: a
 * PASSWORD key of its tables, a Kafka client secret (sasl.password,
 * sasl.jaas.config, ...) bare or under a client prefix, or a converter's
 * PASSWORD setting (value.converter.basic.auth.user.info, ...). */
bool tb_connector_config_secret_key(const tb_plugin_t *plugin, const char *key);

/* True when key is a header list of plugin (TB_CONFIG_ROLE_HEADERS) whose
 * credential headers' values are secrets. */
bool tb_connector_config_headers_key(const tb_plugin_t *plugin, const char *key);

/* A copy of raw with PASSWORD values of every table, literal secrets of
 * tb_connector_config_secret_key() keys, and literal credential header
 * values shown as "[hidden]"; other references stay as written. New
 * reference. */
json_t *tb_connector_config_redact(const tb_plugin_t *plugin, const json_t *raw);

/* A copy of a task config with the plugin's PASSWORD values resolved
 * (tb_secret.h), for the plugin's task_start only: never store or log it.
 * NULL with errstr naming the reference when one cannot be resolved. */
json_t *tb_connector_config_resolve(const tb_plugin_t *plugin, const json_t *config,
                                    char *errstr, size_t errstr_size);

/* Releases (decrefs) a copy tb_connector_config_resolve made, its strings
 * wiped first when nothing else holds them (tb_secret_wipe_json). NULL is
 * a no-op. */
void tb_connector_config_release(json_t *resolved);

/* The consumer group of sink connector name: consumer.override.group.id,
 * else connect-<name>. Written into buf, which is returned. */
/* Whether config (raw, as given; its secrets unresolved, so it is read
 * before any table could parse it) has config.action.reload=restart, the
 * default, in any case; none is the one other value validation accepts. */
bool tb_connector_config_restarts_on_reload(const json_t *config);

/* True when config (raw, as given) has config.action.reload=restart (the
 * default, in any case) and a value that references a secret: Connect would
 * restart the connector when that secret changes, which tributary does not
 * detect; a reference is resolved when a task starts. */
bool tb_connector_config_reload_unwatched(const json_t *config);

/* The SHA-256 of what every secret reference of config (a value that is
 * one whole ${env:}, ${file:} or ${sealed:} reference) resolves to, with
 * its key, into digest: two digests differ when a secret behind the
 * config changed. Returns 0, or -1 with errstr naming the reference (never
 * a secret) when one cannot be resolved. */
int tb_connector_config_secrets_digest(const json_t *config, unsigned char digest[32],
                                       char *errstr, size_t errstr_size);

const char *tb_connector_sink_group(const char *name, const json_t *config, char *buf,
                                    size_t size);

#endif
