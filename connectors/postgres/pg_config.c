/*
 * The PostgreSQL source's keys (tb_pg_config.h). Names, defaults and
 * checks are Debezium 3.6's, except plugin.name: Debezium defaults it to
 * decoderbufs, a server extension tributary does not speak, so here the
 * default is pgoutput (docs/postgres-cdc.md says why).
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "connectors/postgres/tb_pg_config.h"

static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t positive = {.has_min = true, .min = 1};
static const tb_config_range_t port_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 65535};

static const char *const publication_modes[] = {"all_tables", "disabled", "filtered",
                                                NULL};
static const char *const snapshot_modes[] = {"initial", "initial_only", "no_data",
                                             "always",  "when_needed",  NULL};
static const char *const decimal_modes[] = {"precise", "double", "string", NULL};
static const char *const time_modes[] = {"adaptive", "adaptive_time_microseconds",
                                         "connect", NULL};
static const char *const hstore_modes[] = {"json", "map", NULL};
static const char *const binary_modes[] = {"bytes", "base64", "base64-url-safe", "hex",
                                           NULL};

/* A key whose Debezium values tributary implements only one of: the
 * default, which is what it does (why). */
static int check_only_default(const json_t *value, const char *only, const char *why,
                              char *reason, size_t size)
{
    const char *v = json_string_value(value);
    if (v != NULL && strcasecmp(v, only) != 0) {
        snprintf(reason, size, "tributary implements %s only: %s", only, why);
        return -1;
    }
    return 0;
}

static int check_lsn_flush_mode(const json_t *value, char *reason, size_t size)
{
    return check_only_default(value, "connector",
                              "it confirms to the slot the LSN of what Kafka holds",
                              reason, size);
}

static int check_offset_mismatch(const json_t *value, char *reason, size_t size)
{
    return check_only_default(value, "no_validation",
                              "it streams from the stored offset as it is", reason, size);
}

static int check_publish_via_root(const json_t *value, char *reason, size_t size)
{
    if (json_is_true(value)) {
        snprintf(reason, size,
                 "tributary implements false only: it writes each partition's changes "
                 "to the partition's own topic");
        return -1;
    }
    return 0;
}

static int check_plugin_name(const json_t *value, char *reason, size_t size)
{
    const char *name = json_string_value(value);
    if (name != NULL && strcmp(name, "pgoutput") != 0) {
        snprintf(reason, size,
                 "tributary decodes only the pgoutput plugin (built into PostgreSQL "
                 "10 and later); set plugin.name=pgoutput");
        return -1;
    }
    return 0;
}

/* PostgreSQL's rule for slot names: lower-case letters, digits and
 * underscores, at most 63 of them. */
static int check_slot_name(const json_t *value, char *reason, size_t size)
{
    const char *name = json_string_value(value);
    size_t n = name != NULL ? strlen(name) : 0;
    bool valid = n > 0 && n <= 63;
    for (size_t i = 0; valid && i < n; i++) {
        valid = islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) ||
                name[i] == '_';
    }
    if (!valid) {
        snprintf(reason, size,
                 "Valid replication slot name must contain only digits, lowercase "
                 "characters and underscores with length <= 63");
        return -1;
    }
    return 0;
}

/* Topic names: letters, digits, '.', '_' and '-'. */
static int check_topic_name(const json_t *value, char *reason, size_t size)
{
    const char *prefix = json_string_value(value);
    size_t n = prefix != NULL ? strlen(prefix) : 0;
    bool valid = n > 0;
    for (size_t i = 0; valid && i < n; i++) {
        valid = isalnum((unsigned char)prefix[i]) || strchr("._-", prefix[i]) != NULL;
    }
    if (!valid) {
        snprintf(reason, size,
                 "a topic name may hold only letters, digits, '.', '_' and '-', and "
                 "must not be empty");
        return -1;
    }
    return 0;
}

static int check_regex_list(const json_t *value, char *reason, size_t size)
{
    size_t i;
    json_t *item;
    json_array_foreach (value, i, item) {
        regex_t re;
        if (regcomp(&re, json_string_value(item), REG_EXTENDED | REG_NOSUB) != 0) {
            snprintf(reason, size, "%s is not a valid regular expression",
                     json_string_value(item));
            return -1;
        }
        regfree(&re);
    }
    return 0;
}

static int check_skipped(const json_t *value, char *reason, size_t size)
{
    size_t i;
    json_t *item;
    json_array_foreach (value, i, item) {
        const char *op = json_string_value(item);
        if (strcmp(op, "c") != 0 && strcmp(op, "u") != 0 && strcmp(op, "d") != 0 &&
            strcmp(op, "t") != 0 && strcmp(op, "none") != 0) {
            snprintf(reason, size,
                     "The operation '%s' is not valid: use c, u, d, t or none", op);
            return -1;
        }
    }
    return 0;
}

#define GROUP_CONNECTION "Connection"
#define GROUP_REPLICATION "Replication"
#define GROUP_FILTERS "Filters"
#define GROUP_SNAPSHOT "Snapshot"
#define GROUP_VALUES "Values"
#define GROUP_SIZING "Sizing"

/* The keys as a task and the checks across keys read them, filled from
 * pg_keys (tb_config_fill); strings and lists are borrowed from the parsed
 * values. */
typedef struct {
    const char *host;
    int port;
    const char *user;
    const char *password;
    const char *dbname;
    long long query_timeout_ms;
    const char *prefix;
    const char *slot;
    const char *publication;
    int publication_mode; /* publication_modes[] */
    const json_t *schema_include;
    const json_t *schema_exclude;
    const json_t *table_include;
    const json_t *table_exclude;
    const json_t *column_include;
    const json_t *column_exclude;
    int snapshot_mode; /* snapshot_modes[] */
    int heartbeat_ms;
    bool tombstones;
    int decimal_mode; /* decimal_modes[] */
    int time_mode;    /* time_modes[] */
    int binary_mode;  /* binary_modes[] */
    int hstore_mode;  /* hstore_modes[] */
    bool include_unknown;
    const json_t *skipped;
    bool transaction_metadata;
    const char *transaction_topic;
    bool extended_headers;
    int max_batch; /* 0: did not parse (at least 1 otherwise) */
    int max_queue; /* 0: did not parse (at least 1 otherwise) */
    long long poll_interval_ms;
} pg_keys_t;

static const tb_config_def_t pg_keys[] = {
    {.name = "database.hostname",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTION,
     .order = 1,
     .field = TB_CONFIG_AT(pg_keys_t, host),
     .documentation = "Host name or address of the PostgreSQL server."},
    {.name = "database.port",
     .type = TB_CONFIG_INT,
     .default_value = "5432",
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTION,
     .order = 2,
     .range = &port_range,
     .field = TB_CONFIG_AT(pg_keys_t, port),
     .documentation = "Port of the PostgreSQL server."},
    {.name = "database.user",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTION,
     .order = 3,
     .field = TB_CONFIG_AT(pg_keys_t, user),
     .documentation = "The role to connect as; it needs the REPLICATION attribute "
                      "and may read the captured tables."},
    {.name = "database.password",
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTION,
     .order = 4,
     .field = TB_CONFIG_AT(pg_keys_t, password),
     .documentation = "The role's password."},
    {.name = "database.dbname",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTION,
     .order = 5,
     .field = TB_CONFIG_AT(pg_keys_t, dbname),
     .documentation = "The database whose changes are captured."},
    {.name = "database.query.timeout.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "30000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTION,
     .order = 20,
     .range = &positive,
     .field = TB_CONFIG_AT(pg_keys_t, query_timeout_ms),
     .documentation =
         "The longest a statement (a catalog query, a snapshot's fetch, the "
         "slot's creation) waits for the server; then the connections are dropped "
         "and the task starts again from the stored offset. Also the connections' "
         "tcp_user_timeout. Debezium's default is 10 minutes and 0 means no limit "
         "there; here every statement is bounded, since a waiting statement holds "
         "one of the worker's task.threads. A slot created while long transactions "
         "run waits for them: raise it then. Connecting waits at most 10 s."},
    {.name = "topic.prefix",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTION,
     .order = 6,
     .check = check_topic_name,
     .field = TB_CONFIG_AT(pg_keys_t, prefix),
     .documentation = "The logical name of the server: records go to "
                      "<topic.prefix>.<schema>.<table>, and it is the source "
                      "partition of the stored offsets."},
    {.name = "plugin.name",
     .type = TB_CONFIG_STRING,
     .default_value = "pgoutput",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_REPLICATION,
     .order = 1,
     .check = check_plugin_name,
     .documentation = "The logical decoding plugin; only pgoutput is implemented."},
    {.name = "slot.name",
     .type = TB_CONFIG_STRING,
     .default_value = "debezium",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_REPLICATION,
     .order = 2,
     .check = check_slot_name,
     .field = TB_CONFIG_AT(pg_keys_t, slot),
     .documentation = "The logical replication slot, created when missing."},
    {.name = "publication.name",
     .type = TB_CONFIG_STRING,
     .default_value = "dbz_publication",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_REPLICATION,
     .order = 3,
     .field = TB_CONFIG_AT(pg_keys_t, publication),
     .documentation = "The publication the slot streams."},
    {.name = "publication.autocreate.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "all_tables",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_REPLICATION,
     .order = 4,
     .one_of = publication_modes,
     .field = TB_CONFIG_ENUM_AT(pg_keys_t, publication_mode),
     .documentation = "When the publication is missing: all_tables creates it FOR ALL "
                      "TABLES, filtered for the tables the filters capture, disabled "
                      "fails the task."},
    {.name = "schema.include.list",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_FILTERS,
     .order = 1,
     .check = check_regex_list,
     .field = TB_CONFIG_AT(pg_keys_t, schema_include),
     .documentation = "Regular expressions of the schemas to capture (whole names, "
                      "any case)."},
    {.name = "schema.exclude.list",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_FILTERS,
     .order = 2,
     .check = check_regex_list,
     .field = TB_CONFIG_AT(pg_keys_t, schema_exclude),
     .documentation = "Regular expressions of the schemas not to capture."},
    {.name = "table.include.list",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_FILTERS,
     .order = 3,
     .check = check_regex_list,
     .field = TB_CONFIG_AT(pg_keys_t, table_include),
     .documentation = "Regular expressions of the tables to capture, matched against "
                      "<schema>.<table>."},
    {.name = "table.exclude.list",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_FILTERS,
     .order = 4,
     .check = check_regex_list,
     .field = TB_CONFIG_AT(pg_keys_t, table_exclude),
     .documentation = "Regular expressions of the tables not to capture."},
    {.name = "column.include.list",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_FILTERS,
     .order = 5,
     .check = check_regex_list,
     .field = TB_CONFIG_AT(pg_keys_t, column_include),
     .documentation = "Regular expressions of the columns to write, matched against "
                      "<schema>.<table>.<column>."},
    {.name = "column.exclude.list",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_FILTERS,
     .order = 6,
     .check = check_regex_list,
     .field = TB_CONFIG_AT(pg_keys_t, column_exclude),
     .documentation = "Regular expressions of the columns not to write."},
    {.name = "snapshot.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "initial",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_SNAPSHOT,
     .order = 1,
     .one_of = snapshot_modes,
     .field = TB_CONFIG_ENUM_AT(pg_keys_t, snapshot_mode),
     .documentation = "initial: a snapshot when no offset is stored, then the stream; "
                      "initial_only: the snapshot alone; no_data: the stream alone; "
                      "always: a snapshot at every start; when_needed: a snapshot "
                      "when no offset is stored or the slot lost it."},
    {.name = "heartbeat.interval.ms",
     .type = TB_CONFIG_INT,
     .default_value = "0",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_REPLICATION,
     .order = 5,
     .range = &non_negative,
     .field = TB_CONFIG_AT(pg_keys_t, heartbeat_ms),
     .documentation = "How often a heartbeat record goes to "
                      "__debezium-heartbeat.<topic.prefix>, so that the slot moves "
                      "on while the captured tables are quiet; 0 sends none."},
    {.name = "tombstones.on.delete",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_VALUES,
     .order = 1,
     .field = TB_CONFIG_AT(pg_keys_t, tombstones),
     .documentation = "Whether a delete is followed by a record with a null value."},
    {.name = "decimal.handling.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "precise",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_VALUES,
     .order = 2,
     .one_of = decimal_modes,
     .field = TB_CONFIG_ENUM_AT(pg_keys_t, decimal_mode),
     .documentation = "numeric as Connect's Decimal (precise), a double, or a string."},
    {.name = "time.precision.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "adaptive",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_VALUES,
     .order = 3,
     .one_of = time_modes,
     .field = TB_CONFIG_ENUM_AT(pg_keys_t, time_mode),
     .documentation = "Dates and times in Debezium's types at the column's precision "
                      "(adaptive), with times always in microseconds "
                      "(adaptive_time_microseconds), or as Connect's Date, Time and "
                      "Timestamp in milliseconds (connect)."},
    {.name = "binary.handling.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "bytes",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_VALUES,
     .order = 4,
     .one_of = binary_modes,
     .field = TB_CONFIG_ENUM_AT(pg_keys_t, binary_mode),
     .documentation = "bytea as bytes, or a base64, base64-url-safe or hex string."},
    {.name = "hstore.handling.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "json",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_VALUES,
     .order = 8,
     .one_of = hstore_modes,
     .field = TB_CONFIG_ENUM_AT(pg_keys_t, hstore_mode),
     .documentation = "hstore values as a JSON object in a string (json), or a map of "
                      "strings (map)."},
    {.name = "include.unknown.datatypes",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_VALUES,
     .order = 9,
     .field = TB_CONFIG_AT(pg_keys_t, include_unknown),
     .documentation = "Whether a column of a type Debezium does not know (tsvector, "
                      "pg_lsn, a composite type, ...) is written, as the bytes of its "
                      "text under binary.handling.mode; false leaves it out of the "
                      "records. Either way the task logs it once."},
    {.name = "skipped.operations",
     .type = TB_CONFIG_LIST,
     .default_value = "t",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_VALUES,
     .order = 5,
     .check = check_skipped,
     .field = TB_CONFIG_AT(pg_keys_t, skipped),
     .documentation = "Operations not written: c, u, d, t (truncate), or none."},
    {.name = "provide.transaction.metadata",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_VALUES,
     .order = 6,
     .field = TB_CONFIG_AT(pg_keys_t, transaction_metadata),
     .documentation = "Whether each streamed transaction gets a BEGIN and an END record "
                      "on the transaction topic, and each change event a transaction "
                      "block (id, total_order, data_collection_order)."},
    {.name = "topic.transaction",
     .type = TB_CONFIG_STRING,
     .default_value = "transaction",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_VALUES,
     .order = 7,
     .check = check_topic_name,
     .field = TB_CONFIG_AT(pg_keys_t, transaction_topic),
     .documentation = "The transaction topic is <topic.prefix>.<topic.transaction>."},
    {.name = "extended.headers.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_VALUES,
     .order = 10,
     .field = TB_CONFIG_AT(pg_keys_t, extended_headers),
     .documentation = "Whether each change event (snapshot reads included) and "
                      "tombstone carries Debezium's __debezium.context.* headers: "
                      "connectorLogicalName (topic.prefix), taskId, connectorName "
                      "(postgresql) and runId (a new UUID each time the task starts). "
                      "Transaction metadata and heartbeats carry none, as with "
                      "Debezium 3.6."},
    {.name = "lsn.flush.mode",
     .type = TB_CONFIG_STRING,
     .default_value = "connector",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_REPLICATION,
     .order = 6,
     .check = check_lsn_flush_mode,
     .documentation = "Who confirms LSNs to the slot. connector (the default, the only "
                      "value tributary takes): the task, once what it read is in "
                      "Kafka and its offset stored."},
    {.name = "offset.mismatch.strategy",
     .type = TB_CONFIG_STRING,
     .default_value = "no_validation",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_REPLICATION,
     .order = 7,
     .check = check_offset_mismatch,
     .documentation = "What to do when the stored offset and the slot's confirmed LSN "
                      "differ. no_validation (the default, the only value tributary "
                      "takes): stream from the stored offset."},
    {.name = "publish.via.partition.root",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_REPLICATION,
     .order = 8,
     .check = check_publish_via_root,
     .documentation = "Whether an autocreated publication publishes a partitioned "
                      "table's changes as its root's. false (the default, the only "
                      "value tributary takes): each partition's own."},
    {.name = "max.batch.size",
     .type = TB_CONFIG_INT,
     .default_value = "2048",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_SIZING,
     .order = 1,
     .range = &positive,
     .field = TB_CONFIG_AT(pg_keys_t, max_batch),
     .documentation = "The most records one poll returns."},
    {.name = "max.queue.size",
     .type = TB_CONFIG_INT,
     .default_value = "8192",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_SIZING,
     .order = 2,
     .range = &positive,
     .field = TB_CONFIG_AT(pg_keys_t, max_queue),
     .documentation = "Kept for Debezium's configs (it must exceed max.batch.size): "
                      "tributary reads the stream as the task polls, with no queue "
                      "between."},
    {.name = "poll.interval.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "500",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SIZING,
     .order = 3,
     .range = &positive,
     .field = TB_CONFIG_AT(pg_keys_t, poll_interval_ms),
     .documentation = "The longest a poll that found nothing waits before the next, "
                      "when the server sends nothing."},
};

const tb_config_table_t tb_pg_config_table =
    TB_CONFIG_TABLE("PostgresConnector", pg_keys);

/* Debezium's PostgreSQL connector keys tributary does not implement; an
 * entry ending in '.' covers a family. */
const char *const tb_pg_refused_keys[] = {
    "database.",
    "slot.",
    "publication.",
    "snapshot.",
    "schema.",
    "table.",
    "column.",
    "heartbeat.",
    "signal.",
    "incremental.",
    "notification.",
    "message.key.columns",
    "message.prefix.",
    "datatype.",
    "include.",
    "topic.naming.",
    "topic.heartbeat.",
    "topic.delimiter",
    "topic.cache.size",
    "converters",
    "post.processors",
    "custom.metric.tags",
    "event.",
    "field.name.adjustment.mode",
    "interval.handling.mode",
    "money.fraction.digits",
    "max.queue.size.in.bytes",
    "query.",
    "read.only",
    "replica.identity.autoset.values",
    "retriable.restart.connector.wait.ms",
    "skip.messages.without.change",
    "sourceinfo.struct.maker",
    "status.update.interval.ms",
    "streaming.delay.ms",
    "unavailable.value.placeholder",
    "xmin.fetch.interval.ms",
    "flush.lsn.source",
    "lsn.flush.",
    "slot.seek.to.known.offset.on.start",
    "connection.",
    "errors.max.retries",
    "transaction.metadata.factory",
    "guardrail.",
    NULL,
};

/* include and exclude (the lists of keys of those names) set together. */
static void exclusive(const json_t *include_list, const json_t *exclude_list,
                      const char *include, const char *exclude, json_t *errors)
{
    if (json_array_size(include_list) > 0 && json_array_size(exclude_list) > 0) {
        char message[256];
        snprintf(message, sizeof(message),
                 "\"%s\" is already specified: set %s or %s, not both", include, include,
                 exclude);
        tb_config_error_add(errors, exclude, message);
    }
}

/* The checks across keys, on the keys as parsed (a key that did not parse
 * reads as unset, and has its own error). */
static void check_keys(const pg_keys_t *k, json_t *errors)
{
    exclusive(k->schema_include, k->schema_exclude, "schema.include.list",
              "schema.exclude.list", errors);
    exclusive(k->table_include, k->table_exclude, "table.include.list",
              "table.exclude.list", errors);
    exclusive(k->column_include, k->column_exclude, "column.include.list",
              "column.exclude.list", errors);
    if (k->max_batch > 0 && k->max_queue > 0 && k->max_queue <= k->max_batch) {
        tb_config_error_add(
            errors, "max.queue.size",
            "Must be larger than the maximum batch size (max.batch.size)");
    }
}

void tb_pg_config_validate(const json_t *values, json_t *errors)
{
    pg_keys_t keys;
    if (tb_config_fill(&tb_pg_config_table, values, &keys) == 0) {
        check_keys(&keys, errors);
    }
}

static unsigned skipped_ops(const json_t *list)
{
    unsigned skipped = 0;
    size_t i;
    json_t *item;
    json_array_foreach (list, i, item) {
        switch (json_string_value(item)[0]) {
        case 'c':
            skipped |= TB_PG_SKIP_CREATE;
            break;
        case 'u':
            skipped |= TB_PG_SKIP_UPDATE;
            break;
        case 'd':
            skipped |= TB_PG_SKIP_DELETE;
            break;
        case 't':
            skipped |= TB_PG_SKIP_TRUNCATE;
            break;
        default: /* none */
            break;
        }
    }
    return skipped;
}

int tb_pg_options_parse(const json_t *config, tb_pg_options_t *out, char *errstr,
                        size_t errstr_size)
{
    const tb_config_table_t *tables[] = {&tb_pg_config_table};
    json_t *errors = json_object();
    memset(out, 0, sizeof(*out));
    out->values = tb_config_parse(tables, 1, config, errors);
    tb_pg_config_validate(out->values, errors);
    if (tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        json_decref(errors);
        tb_pg_options_release(out);
        return -1;
    }
    json_decref(errors);
    pg_keys_t k;
    if (tb_config_fill(&tb_pg_config_table, out->values, &k) != 0) {
        snprintf(errstr, errstr_size, "%s: a column does not fit its key's type",
                 tb_pg_config_table.name);
        tb_pg_options_release(out);
        return -1;
    }
    out->host = k.host;
    out->port = k.port;
    out->user = k.user;
    out->password = k.password;
    out->dbname = k.dbname;
    out->prefix = k.prefix;
    out->slot = k.slot;
    out->publication = k.publication;
    out->publication_mode = (tb_pg_publication_mode_t)k.publication_mode;
    out->schemas = (tb_pg_list_keys_t){k.schema_include, k.schema_exclude};
    out->tables = (tb_pg_list_keys_t){k.table_include, k.table_exclude};
    out->columns = (tb_pg_list_keys_t){k.column_include, k.column_exclude};
    out->snapshot_mode = (tb_pg_snapshot_mode_t)k.snapshot_mode;
    out->heartbeat_ms = k.heartbeat_ms;
    out->tombstones = k.tombstones;
    out->modes.decimal = (tb_pg_decimal_mode_t)k.decimal_mode;
    out->modes.time = (tb_pg_time_mode_t)k.time_mode;
    out->modes.binary = (tb_pg_binary_mode_t)k.binary_mode;
    out->modes.hstore = (tb_pg_hstore_mode_t)k.hstore_mode;
    out->modes.include_unknown = k.include_unknown;
    out->skipped = skipped_ops(k.skipped);
    out->transaction_metadata = k.transaction_metadata;
    out->transaction_topic = k.transaction_topic;
    out->extended_headers = k.extended_headers;
    out->max_batch = k.max_batch;
    out->poll_interval_ms = k.poll_interval_ms;
    out->query_timeout_ms = k.query_timeout_ms;
    return 0;
}

void tb_pg_options_release(tb_pg_options_t *o)
{
    json_decref(o->values);
    memset(o, 0, sizeof(*o));
}
