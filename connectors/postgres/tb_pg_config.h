/*
 * tb_pg_config.h - the keys of the PostgreSQL change data capture source:
 * Debezium 3.0's PostgreSQL connector keys that tributary implements, with
 * its defaults and checks, and the Debezium keys it refuses by name.
 */
#ifndef TB_PG_CONFIG_H
#define TB_PG_CONFIG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/tb_config.h"

typedef enum {
    TB_PG_DECIMAL_PRECISE = 0,
    TB_PG_DECIMAL_DOUBLE,
    TB_PG_DECIMAL_STRING
} tb_pg_decimal_mode_t;
typedef enum {
    TB_PG_TIME_ADAPTIVE = 0,
    TB_PG_TIME_ADAPTIVE_MICROSECONDS,
    TB_PG_TIME_CONNECT
} tb_pg_time_mode_t;
typedef enum {
    TB_PG_BINARY_BYTES = 0,
    TB_PG_BINARY_BASE64,
    TB_PG_BINARY_BASE64_URL_SAFE,
    TB_PG_BINARY_HEX
} tb_pg_binary_mode_t;
typedef enum { TB_PG_HSTORE_JSON = 0, TB_PG_HSTORE_MAP } tb_pg_hstore_mode_t;
typedef enum {
    TB_PG_SNAPSHOT_INITIAL = 0,
    TB_PG_SNAPSHOT_INITIAL_ONLY,
    TB_PG_SNAPSHOT_NO_DATA,
    TB_PG_SNAPSHOT_ALWAYS,
    TB_PG_SNAPSHOT_WHEN_NEEDED
} tb_pg_snapshot_mode_t;
typedef enum {
    TB_PG_PUBLICATION_ALL_TABLES = 0,
    TB_PG_PUBLICATION_DISABLED,
    TB_PG_PUBLICATION_FILTERED
} tb_pg_publication_mode_t;

/* How values are written (pg_types.c). */
typedef struct {
    tb_pg_decimal_mode_t decimal;
    tb_pg_time_mode_t time;
    tb_pg_binary_mode_t binary;
    tb_pg_hstore_mode_t hstore;
    bool include_unknown; /* include.unknown.datatypes */
} tb_pg_modes_t;

/* Operations skipped.operations names. */
#define TB_PG_SKIP_CREATE 1u
#define TB_PG_SKIP_UPDATE 2u
#define TB_PG_SKIP_DELETE 4u
#define TB_PG_SKIP_TRUNCATE 8u

/* One of the capture filter's lists (tb_pg_filter.h): its include list
 * and its exclude list, each an array of patterns. */
typedef struct {
    const json_t *include;
    const json_t *exclude;
} tb_pg_list_keys_t;

/* A task's parsed config. Strings and lists are borrowed from values,
 * which the options own (tb_pg_options_release). */
typedef struct {
    json_t *values;
    const char *host;
    int port;
    const char *user;
    const char *password; /* NULL: none; never logged */
    const char *dbname;
    const char *prefix; /* topic.prefix */
    const char *slot;
    const char *publication;
    tb_pg_publication_mode_t publication_mode;
    tb_pg_list_keys_t schemas; /* schema.include.list, schema.exclude.list */
    tb_pg_list_keys_t tables;  /* table.include.list, table.exclude.list */
    tb_pg_list_keys_t columns; /* column.include.list, column.exclude.list */
    tb_pg_snapshot_mode_t snapshot_mode;
    int64_t heartbeat_ms; /* 0: no heartbeats */
    bool tombstones;
    tb_pg_modes_t modes;
    unsigned skipped;              /* TB_PG_SKIP_* */
    bool transaction_metadata;     /* provide.transaction.metadata */
    bool extended_headers;         /* extended.headers.enabled */
    const char *transaction_topic; /* topic.transaction */
    int max_batch;
    int64_t poll_interval_ms;
    int64_t query_timeout_ms; /* database.query.timeout.ms */
    /* the task's ctx->stopping (borrowed, set after parsing); NULL: none */
    const atomic_bool *stopping;
} tb_pg_options_t;

/* The plugin's config table and refused keys. */
extern const tb_config_table_t tb_pg_config_table;
extern const char *const tb_pg_refused_keys[];

/* Checks across keys (an include list beside its exclude list, the queue
 * against the batch). */
void tb_pg_config_validate(const json_t *values, json_t *errors);

/* Parses a task config into out. Returns 0, or -1 with the first error
 * (naming the key) in errstr. */
int tb_pg_options_parse(const json_t *config, tb_pg_options_t *out, char *errstr,
                        size_t errstr_size);

/* Frees what parse made. NULL-safe on a zeroed struct. */
void tb_pg_options_release(tb_pg_options_t *o);

#endif
