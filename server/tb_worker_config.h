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
 * variables of envp, with dev=true when dev is set; parses and validates.
 * Returns the values (new reference) and *raw_out the keys as given (new
 * reference, also when invalid; NULL when the file cannot be read), or
 * NULL with each problem, naming its key or the file, appended to errors
 * (an array of strings). */
json_t *tb_worker_config_load(const char *path, bool dev, char *const *envp,
                              json_t **raw_out, json_t *errors);

/* What connectors' secret references may reach: the config.providers
 * keys of values (parsed), which it borrows, as store_path. */
tb_secret_policy_t tb_worker_config_secret_policy(const json_t *values,
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

/* The worker's converter settings: key.converter and value.converter (from
 * values, defaults applied) and every key.converter.* / value.converter.*
 * key of raw. New reference. */
json_t *tb_worker_config_converters(const json_t *raw, const json_t *values);

#endif
