/*
 * tb_worker_config.h - the worker's configuration keys and where values
 * come from: a Java properties file, then TRIBUTARY_* environment variables
 * (TRIBUTARY_BOOTSTRAP_SERVERS means bootstrap.servers; "__" stands for "_"
 * and "___" for "-", as Connect's container images spell keys).
 */
#ifndef TB_WORKER_CONFIG_H
#define TB_WORKER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_config.h"
#include "core/tb_secret.h"

/* The table of worker keys. */
extern const tb_config_table_t tb_worker_config_table;

/* connector.client.config.override.policy, in its one_of order. */
typedef enum {
    TB_OVERRIDE_POLICY_ALL = 0,
    TB_OVERRIDE_POLICY_NONE,
    TB_OVERRIDE_POLICY_ALLOWLIST,
} tb_override_policy_t;

/* exactly.once.source.support, in its one_of order. */
typedef enum {
    TB_EOS_SUPPORT_DISABLED = 0,
    TB_EOS_SUPPORT_ENABLED,
} tb_eos_support_t;

/*
 * The worker's settings: one member per key of tb_worker_config_table,
 * named after it ('.' spelled '_'), filled once by tb_worker_config_load
 * (tb_config_fill) and read by everything the worker wires. Its strings and
 * lists are borrowed from the parsed values tb_worker_config_load returns,
 * which must outlive it.
 */
typedef struct {
    const json_t *bootstrap_servers;
    bool dev;
    const json_t *listeners;
    const char *rest_advertised_host_name;
    const json_t *rest_advertised_port; /* an integer, or null when unset */
    const char *rest_advertised_listener;
    long long rest_request_body_max_bytes;
    int rest_threads;
    int rest_connections_max;
    int rest_connections_per_client_max;
    int rest_request_header_timeout_ms;
    int rest_request_timeout_ms;
    int rest_connection_timeout_ms;
    const char *rest_auth;
    const char *rest_auth_credentials_file;
    bool rest_allow_unauthenticated_remote;
    const json_t *admin_listeners;
    const char *access_control_allow_origin;
    const char *access_control_allow_methods;
    const char *listeners_https_ssl_certificate_location;
    const char *listeners_https_ssl_key_location;
    const char *listeners_https_ssl_key_password;
    const char *listeners_https_ssl_ca_location;
    const char *listeners_https_ssl_client_auth;
    const char *offset_storage_file_filename;
    const char *key_converter;
    const char *value_converter;
    const char *header_converter;
    int task_threads;
    long long task_shutdown_graceful_timeout_ms;
    long long task_restart_backoff_initial_ms;
    long long task_restart_backoff_max_ms;
    const char *metadata_recovery_strategy;
    int connector_client_config_override_policy; /* tb_override_policy_t */
    const json_t *connector_client_config_override_allowlist;
    bool secrets_literal_allowed;
    const char *secrets_encryption_key;
    bool connector_client_security_downgrade_allowed;
    bool connector_producer_sharing_enabled;
    bool core_dumps_enable;
    const json_t *config_providers;
    const json_t *config_providers_file_param_allowed_paths;
    const char *config_providers_env_param_allowlist_pattern;
    const json_t *file_allowed_dirs;
    const char *connectors_dir;
    bool connectors_dir_prune;
    const json_t *http_sink_allowed_hosts;
    int exactly_once_source_support; /* tb_eos_support_t */
    long long offset_flush_interval_ms;
    bool topic_tracking_enable;
    bool topic_tracking_allow_reset;
    const char *group_id;
    bool internal_topics_automatic_creation_enable;
    const char *config_storage_topic;
    int config_storage_replication_factor;
    const char *offset_storage_topic;
    int offset_storage_partitions;
    int offset_storage_replication_factor;
    const char *status_storage_topic;
    int status_storage_partitions;
    int status_storage_replication_factor;
    int session_timeout_ms;
    int heartbeat_interval_ms;
    int scheduled_rebalance_max_delay_ms;
    const char *inter_worker_key_generation_algorithm;
    int inter_worker_key_size;
    long long inter_worker_key_ttl_ms;
    const char *inter_worker_signature_algorithm;
    const json_t *inter_worker_verification_algorithms;
    bool metrics_milliseconds_names;
    int log_format; /* tb_log_format_t: the one_of lists text, json in its order */
    const char *log_level;
} tb_worker_settings_t;

/* What tributary does with a key Kafka Connect's worker defines. */
typedef enum {
    TB_CONNECT_KEY_IMPLEMENTED = 0, /* a key of tb_worker_config_table */
    TB_CONNECT_KEY_CLIENT,          /* passed to the worker's Kafka clients */
    TB_CONNECT_KEY_NOOP,            /* accepted, has no effect, logged at start */
    TB_CONNECT_KEY_DISTRIBUTED,     /* refused: a distributed key not implemented yet */
    TB_CONNECT_KEY_REFUSED,         /* refused: note says why */
} tb_connect_key_decision_t;

/* One row of the decisions on Connect 3.9's worker keys (WorkerConfig,
 * StandaloneConfig, DistributedConfig). A name ending in ".*" stands for
 * every key with that prefix. */
typedef struct {
    const char *name;
    const char *defined_by; /* Connect's config class(es) */
    tb_connect_key_decision_t decision;
    const char *note; /* what tributary does instead, or why not */
} tb_connect_key_t;

/* The decisions, in documentation order, and their count. */
extern const tb_connect_key_t tb_connect_worker_keys[];
extern const size_t tb_connect_worker_key_count;

/* The decision on key (exact rows first, then the longest prefix row), or
 * NULL when Connect's worker does not define it. */
const tb_connect_key_t *tb_worker_connect_key_find(const char *key);

/* "implemented", "Kafka client key", "no effect", "refused (distributed)"
 * or "refused". */
const char *tb_connect_key_decision_name(tb_connect_key_decision_t decision);

/* Appends the Markdown table of the decisions to out (a growing string
 * owned by the caller, freed with free()). Returns 0, or -1 on no memory. */
int tb_worker_connect_keys_markdown(char **out);

/* Checks raw (the worker's keys) against the decisions. Logs one line at
 * WARN for each key set that has no effect, and one for keys neither
 * Connect nor tributary defines. Returns 0, or -1 after logging why the
 * worker is refused: one line naming every distributed key set (and how to
 * run standalone), one line for each refused key. */
int tb_worker_config_check_connect_keys(const json_t *raw);

/* Reads the worker file at path (NULL: none), then the TRIBUTARY_*
 * variables of envp, with dev=true when dev is set; parses, validates and
 * fills *settings. Returns the values (new reference, which *settings
 * borrows from) and *raw_out the keys as given (new reference, also when
 * invalid; NULL when the file cannot be read), or NULL with each problem,
 * naming its key or the file, appended to errors (an array of strings). */
json_t *tb_worker_config_load(const char *path, bool dev, char *const *envp,
                              json_t **raw_out, tb_worker_settings_t *settings,
                              json_t *errors);

/* What connectors' secret references may reach: the config.providers
 * keys of settings, which it borrows from, as store_path. */
tb_secret_policy_t tb_worker_config_secret_policy(const tb_worker_settings_t *settings,
                                                  const char *store_path);

/* Adds every TRIBUTARY_* variable of envp to raw (overriding the file). */
void tb_worker_config_apply_env(json_t *raw, char *const *envp);

/* Turns one TRIBUTARY_* variable name into its key; returns -1 when name
 * does not start with the prefix. */
int tb_worker_config_env_key(const char *name, char *key, size_t key_size);

/* What no connector may reach (tb_secret_deny_t): worker_file (NULL:
 * none), the file each key of raw whose name ends in .location, .file or
 * .keytab names (the REST credentials, the TLS and Kafka client keys and
 * certificates; the store has rules of its own), and every file and variable a
 * reference in a value of raw names. New; NULL when out of memory. */
tb_secret_deny_t *tb_worker_config_deny(const json_t *raw, const char *worker_file);

/* The librdkafka properties every Kafka client of this worker starts from:
 * bootstrap.servers (absent when raw has none: dev mode) and the
 * client security keys given in raw. New reference. */
json_t *tb_worker_config_kafka_props(const json_t *raw);

/* The worker's converter settings: key.converter, value.converter and
 * header.converter (from settings, defaults applied) and every
 * key.converter.* / value.converter.* / header.converter.* key of raw. New
 * reference. */
json_t *tb_worker_config_converters(const json_t *raw,
                                    const tb_worker_settings_t *settings);

#endif
