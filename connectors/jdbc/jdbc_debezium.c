/*
 * jdbc_debezium.c - Debezium's JDBC sink keys (io.debezium.connector.jdbc.
 * JdbcSinkConnector, 3.0 and 3.6) over the same engine: its table and
 * messages, and the settings its keys come to, written as Confluent's keys
 * and read by tb_jdbc_settings_init. What is Debezium's own behaviour:
 * change events (an envelope with op and after) are unwrapped, a delete
 * event or a tombstone deletes (delete.enabled) or is skipped, dots in a
 * topic's name become underscores in its table's (its default collection
 * naming), retries are flush.max.retries apart flush.retry.delay.ms, and a
 * connection lost while writing is opened again only with
 * connection.restart.on.errors.
 *
 * Debezium 3.x renamed three keys of 3.0's first releases and kept the old
 * names as aliases: collection.name.format (table.name.format),
 * use.time.zone (database.time_zone) and collection.naming.strategy
 * (table.naming.strategy). Both names are keys here; the new one's value
 * wins when both are given, as Debezium's Configuration reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/jdbc/tb_jdbc.h"

#define KEY_URL "connection.url"
#define KEY_USER "connection.username"
#define KEY_PASSWORD "connection.password"
#define KEY_PROVIDER "connection.provider"
#define KEY_POOL_MIN "connection.pool.min_size"
#define KEY_POOL_MAX "connection.pool.max_size"
#define KEY_POOL_INCREMENT "connection.pool.acquire_increment"
#define KEY_POOL_TIMEOUT "connection.pool.timeout"
#define KEY_RESTART "connection.restart.on.errors"
#define KEY_INSERT_MODE "insert.mode"
#define KEY_DELETE "delete.enabled"
#define KEY_TRUNCATE "truncate.enabled"
#define KEY_COLLECTION_FORMAT "collection.name.format"
#define KEY_TABLE_FORMAT "table.name.format" /* 3.0's name */
#define KEY_COLLECTION_TABLE_FORMAT "collection.table.format"
#define KEY_PK_MODE "primary.key.mode"
#define KEY_PK_FIELDS "primary.key.fields"
#define KEY_TIME_ZONE "use.time.zone"
#define KEY_DATABASE_TIME_ZONE "database.time_zone" /* 3.0's name */
#define KEY_EVOLUTION "schema.evolution"
#define KEY_QUOTE "quote.identifiers"
#define KEY_COLLECTION_NAMING "collection.naming.strategy"
#define KEY_TABLE_NAMING "table.naming.strategy" /* 3.0's name */
#define KEY_COLUMN_NAMING "column.naming.strategy"
#define KEY_POSTGIS "dialect.postgres.postgis.schema"
#define KEY_UNNEST "dialect.postgres.unnest.insert.enabled"
#define KEY_IDENTITY "dialect.sqlserver.identity.insert"
#define KEY_BATCH_SIZE "batch.size"
#define KEY_INCLUDE "field.include.list"
#define KEY_EXCLUDE "field.exclude.list"
#define KEY_REDUCTION "use.reduction.buffer"
#define KEY_FLUSH_RETRIES "flush.max.retries"
#define KEY_FLUSH_DELAY "flush.retry.delay.ms"
#define KEY_CLOUD_EVENTS "cloud.events.schema.name.pattern"

#define PROVIDER "org.hibernate.agroal.internal.AgroalConnectionProvider"
#define PROVIDER_30 "org.hibernate.c3p0.internal.C3P0ConnectionProvider"
#define COLLECTION_NAMING "io.debezium.sink.naming.DefaultCollectionNamingStrategy"
#define TABLE_NAMING "io.debezium.connector.jdbc.naming.DefaultTableNamingStrategy"
#define COLUMN_NAMING "io.debezium.connector.jdbc.naming.DefaultColumnNamingStrategy"
#define TABLE_ONLY_FORMAT "${table}"

static const char *const evolutions[] = {"none", "basic", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};

/* Debezium's keys as a task and the checks across keys read them, filled
 * from debezium_keys (tb_config_fill); strings and lists are borrowed from
 * the parsed values. */
typedef struct {
    const char *url;
    const char *insert_mode; /* tb_jdbc_insert_modes[], in lower or upper case */
    bool delete_enabled;
    bool truncate_enabled;
    const char *pk_mode; /* tb_jdbc_pk_modes[], in lower or upper case */
    const json_t *pk_fields;
    int evolution; /* evolutions[] */
    bool quote;
    const json_t *include;
    const json_t *exclude;
    int flush_retries;
    long long flush_delay_ms;
    bool restart;
} debezium_keys_t;

/* Whether value is one of names (the classes tributary's behaviour is);
 * else the reason says what tributary has and names them. */
static int class_check(const json_t *value, const char *const *names, const char *what,
                       char *reason, size_t reason_size)
{
    const char *text = json_string_value(value);
    for (size_t i = 0; names[i] != NULL; i++) {
        if (strcmp(text, names[i]) == 0) {
            return 0;
        }
    }
    int used = snprintf(reason, reason_size, "tributary's JDBC sink has %s only (", what);
    for (size_t i = 0; names[i] != NULL && used >= 0 && (size_t)used < reason_size; i++) {
        used += snprintf(reason + used, reason_size - (size_t)used, "%s%s",
                         i > 0 ? " or " : "", names[i]);
    }
    if (used >= 0 && (size_t)used < reason_size) {
        snprintf(reason + used, reason_size - (size_t)used, ")");
    }
    return -1;
}

static const char *const providers[] = {PROVIDER, PROVIDER_30, NULL};
static const char *const collection_namings[] = {COLLECTION_NAMING, TABLE_NAMING, NULL};
static const char *const column_namings[] = {COLUMN_NAMING, NULL};

static int provider_check(const json_t *value, char *reason, size_t reason_size)
{
    return class_check(value, providers, "one connection per task", reason, reason_size);
}

static int naming_check(const json_t *value, char *reason, size_t reason_size)
{
    return class_check(value, collection_namings, "the default collection naming", reason,
                       reason_size);
}

static int column_naming_check(const json_t *value, char *reason, size_t reason_size)
{
    return class_check(value, column_namings, "the default column naming", reason,
                       reason_size);
}

static int table_only_format_check(const json_t *value, char *reason, size_t reason_size)
{
    if (strcmp(json_string_value(value), TABLE_ONLY_FORMAT) != 0) {
        snprintf(reason, reason_size,
                 "Debezium 3.6 declares this key but does not read it (tables are "
                 "named by " KEY_COLLECTION_FORMAT "), and neither does tributary: "
                 "leave it at " TABLE_ONLY_FORMAT " and set " KEY_COLLECTION_FORMAT);
        return -1;
    }
    return 0;
}

#define CONNECTION "Connection"
#define CONNECTOR "Connector"
#define ADVANCED "Connector Advanced"
#define NO_POOL "Accepted; no effect: each task holds one connection, opened again "

static const tb_config_def_t own_keys[] = {
    {.name = KEY_PROVIDER,
     .type = TB_CONFIG_CLASS,
     .default_value = PROVIDER,
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 0,
     .check = provider_check,
     .documentation = "Accepted as Debezium's providers only (3.6's Agroal, the "
                      "default, or 3.0's C3P0): each task holds one connection."},
    {.name = KEY_POOL_MIN,
     .type = TB_CONFIG_INT,
     .default_value = "5",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 4,
     .range = &at_least_one,
     .documentation = NO_POOL "as " KEY_RESTART " says."},
    {.name = KEY_POOL_MAX,
     .type = TB_CONFIG_INT,
     .default_value = "32",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 5,
     .range = &at_least_one,
     .documentation = NO_POOL "as " KEY_RESTART " says."},
    {.name = KEY_POOL_INCREMENT,
     .type = TB_CONFIG_INT,
     .default_value = "32",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 6,
     .range = &at_least_one,
     .documentation =
         "Debezium 3.0's (C3P0), gone in 3.6. " NO_POOL "as " KEY_RESTART " says."},
    {.name = KEY_POOL_TIMEOUT,
     .type = TB_CONFIG_LONG,
     .default_value = "1800",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 7,
     .documentation = NO_POOL "as " KEY_RESTART " says."},
    {.name = KEY_RESTART,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 7,
     .field = TB_CONFIG_AT(debezium_keys_t, restart),
     .documentation =
         "Whether a connection lost while writing (the server restarted, "
         "the session terminated, the network cut) is opened again and the "
         "batch written again, up to " KEY_FLUSH_RETRIES " times " KEY_FLUSH_DELAY
         " apart, its loss and its return logged once; "
         "the rolled back transaction wrote nothing, and no record is "
         "written twice. false (the default, as in Debezium): the task "
         "fails, naming this key. A database that fails over to a replica "
         "behind its primary may have lost what it had acknowledged."},
    {.name = KEY_TRUNCATE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 2,
     .field = TB_CONFIG_AT(debezium_keys_t, truncate_enabled),
     .documentation = "Must stay false: truncate events are not supported."},
    {.name = KEY_EVOLUTION,
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 7,
     .one_of = evolutions,
     .field = TB_CONFIG_ENUM_AT(debezium_keys_t, evolution),
     .documentation = "none, or basic: missing tables are created and missing columns "
                      "added."},
    {.name = KEY_QUOTE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 8,
     .field = TB_CONFIG_AT(debezium_keys_t, quote),
     .documentation = "Whether table and column names are quoted."},
    {.name = KEY_COLLECTION_NAMING,
     .type = TB_CONFIG_CLASS,
     .default_value = COLLECTION_NAMING,
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 2,
     .check = naming_check,
     .documentation =
         "Only the default naming (3.x's " COLLECTION_NAMING ", or 3.0's " TABLE_NAMING
         ", the same): " KEY_COLLECTION_FORMAT " with the topic's dots as underscores."},
    {.name = KEY_TABLE_NAMING,
     .type = TB_CONFIG_CLASS,
     .default_value = COLLECTION_NAMING,
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 2,
     .check = naming_check,
     .documentation = "Debezium 3.0's name of " KEY_COLLECTION_NAMING
                      ", which wins when both are given; the same classes only."},
    {.name = KEY_COLUMN_NAMING,
     .type = TB_CONFIG_CLASS,
     .default_value = COLUMN_NAMING,
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 2,
     .check = column_naming_check,
     .documentation = "Only the default: a column is named as its field."},
    {.name = KEY_COLLECTION_TABLE_FORMAT,
     .type = TB_CONFIG_STRING,
     .default_value = TABLE_ONLY_FORMAT,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = CONNECTOR,
     .order = 3,
     .check = table_only_format_check,
     .documentation = "Debezium 3.6 declares this key (\"an alternative format that "
                      "uses the table name\") but never reads it: tables are named "
                      "by " KEY_COLLECTION_FORMAT
                      " there as here. Accepted at its default " TABLE_ONLY_FORMAT
                      "; another value is refused, since it would "
                      "name no table."},
    {.name = KEY_POSTGIS,
     .type = TB_CONFIG_STRING,
     .default_value = "public",
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 3,
     .documentation = "Accepted; no effect (geometry types are not written)."},
    {.name = KEY_UNNEST,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ADVANCED,
     .order = 3,
     .documentation = "Accepted; no effect on what is written: tributary writes a batch "
                      "in few statements either way (several rows per INSERT, or "
                      "COPY)."},
    {.name = KEY_IDENTITY,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 4,
     .documentation = "For SQL Server only: no effect on PostgreSQL and SQLite."},
    {.name = KEY_INCLUDE,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Filters",
     .order = 1,
     .field = TB_CONFIG_AT(debezium_keys_t, include),
     .documentation =
         "The fields written, the others left out: a comma-separated list of field "
         "names, each written field or topic:field (that topic's only). Applied "
         "to the value's fields and to the key's when primary.key.fields is "
         "empty. Exclusive with field.exclude.list."},
    {.name = KEY_EXCLUDE,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Filters",
     .order = 2,
     .field = TB_CONFIG_AT(debezium_keys_t, exclude),
     .documentation = "The fields left out, the others written: entries as in "
                      "field.include.list. Exclusive with it."},
    {.name = KEY_REDUCTION,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = CONNECTOR,
     .order = 2,
     .documentation = "Accepted: an upsert batch holding a key twice is written in "
                      "order, its last event winning, either way."},
    {.name = KEY_FLUSH_RETRIES,
     .type = TB_CONFIG_INT,
     .default_value = "5",
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 5,
     .range = &non_negative,
     .field = TB_CONFIG_AT(debezium_keys_t, flush_retries),
     .documentation =
         "How many times in a row a batch is written again after a "
         "retriable failure before the task fails: a serialization "
         "conflict or deadlock (or a busy SQLite file), and with " KEY_RESTART
         "=true a lost connection. The transaction that "
         "failed wrote nothing."},
    {.name = KEY_FLUSH_DELAY,
     .type = TB_CONFIG_LONG,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 6,
     .range = &non_negative,
     .field = TB_CONFIG_AT(debezium_keys_t, flush_delay_ms),
     .documentation = "The wait in milliseconds before a batch is written again "
                      "(" KEY_FLUSH_RETRIES ")."},
    {.name = KEY_CLOUD_EVENTS,
     .type = TB_CONFIG_STRING,
     .default_value = ".*CloudEvents\\.Envelope$",
     .importance = TB_IMPORTANCE_LOW,
     .group = ADVANCED,
     .order = 8,
     .documentation = "Accepted; no effect: records in CloudEvents form are not "
                      "unwrapped (their struct is written as any other record's)."},
};

/* Debezium's keys that are Confluent's under another name (or the same):
 * each is declared once, in Confluent's table (jdbc_config.c), and
 * Debezium's table takes that definition under Debezium's name, with
 * Debezium's default, text and column. A task's values of these are handed
 * over to Confluent's keys as they were written; a 3.0 name (alias_of) is
 * handed over only when its 3.x name is not given. */
/* A renamed key no check across keys reads. */
#define NO_COLUMN                                                                        \
    {                                                                                    \
        .kind = TB_CONFIG_FIELD_NONE                                                     \
    }

static const struct {
    const char *debezium;
    const char *confluent;
    const char *default_value; /* Debezium's; NULL: Confluent's */
    const char *documentation; /* NULL: Confluent's */
    tb_config_field_t field;
    const char *alias_of; /* the 3.x name of a 3.0 name, or NULL */
} renamed[] = {
    {KEY_URL, "connection.url", NULL, NULL, TB_CONFIG_AT(debezium_keys_t, url), NULL},
    {KEY_USER, "connection.user", NULL, NULL, NO_COLUMN, NULL},
    {KEY_PASSWORD, "connection.password", NULL, NULL, NO_COLUMN, NULL},
    {KEY_INSERT_MODE, "insert.mode", NULL,
     "The insertion mode to use: insert, upsert (needs primary.key.mode) or update.",
     TB_CONFIG_AT(debezium_keys_t, insert_mode), NULL},
    {KEY_DELETE, "delete.enabled", NULL,
     "Whether a delete event or a tombstone deletes the row of its key (requires "
     "primary.key.mode=record_key); when false they are skipped.",
     TB_CONFIG_AT(debezium_keys_t, delete_enabled), NULL},
    {KEY_COLLECTION_FORMAT, "table.name.format", NULL,
     "A format string for the table, which may contain '${topic}' as a placeholder for "
     "the original topic name (its dots replaced by underscores), and ${source.<field>} "
     "for a text field of the change event's source block. Debezium 3.0's "
     "name " KEY_TABLE_FORMAT " is read when this one is not given.",
     NO_COLUMN, NULL},
    {KEY_TABLE_FORMAT, "table.name.format", NULL,
     "Debezium 3.0's name of " KEY_COLLECTION_FORMAT ", which wins when both are given.",
     NO_COLUMN, KEY_COLLECTION_FORMAT},
    {KEY_PK_MODE, "pk.mode", NULL,
     "The primary key mode: none, kafka, record_key or record_value (record_header is "
     "not supported).",
     TB_CONFIG_AT(debezium_keys_t, pk_mode), NULL},
    {KEY_PK_FIELDS, "pk.fields", NULL,
     "A comma-separated list of primary key field names, read per primary.key.mode.",
     TB_CONFIG_AT(debezium_keys_t, pk_fields), NULL},
    {KEY_TIME_ZONE, "db.timezone", NULL,
     "The time zone Timestamp values are written in: UTC (the default), a fixed offset "
     "such as +02:00, or a region of the tz database such as Europe/Paris. Debezium "
     "3.0's name " KEY_DATABASE_TIME_ZONE " is read when this one is not given.",
     NO_COLUMN, NULL},
    {KEY_DATABASE_TIME_ZONE, "db.timezone", NULL,
     "Debezium 3.0's name of " KEY_TIME_ZONE ", which wins when both are given.",
     NO_COLUMN, KEY_TIME_ZONE},
    {KEY_BATCH_SIZE, "batch.size", "500", NULL, NO_COLUMN, NULL},
};

#define RENAMED (sizeof(renamed) / sizeof(renamed[0]))
#define OWN (sizeof(own_keys) / sizeof(own_keys[0]))

/* The renamed keys, then Debezium's own: filled before main() runs. */
static tb_config_def_t debezium_keys[RENAMED + OWN];

const tb_config_table_t tb_jdbc_debezium_table =
    TB_CONFIG_TABLE("Debezium JDBC sink", debezium_keys);

/* Keys of Debezium's sink that tributary has no equivalent of: hibernate.*
 * configures the Hibernate ORM Debezium's sink runs on (its dialect, its
 * pool, its JDBC driver), which is not here. */
const char *const tb_jdbc_debezium_refused_keys[] = {"hibernate.", NULL};

__attribute__((constructor)) static void debezium_keys_fill(void)
{
    const tb_config_table_t *confluent[] = {&tb_jdbc_sink_table};
    for (size_t i = 0; i < RENAMED; i++) {
        tb_config_def_t *def = &debezium_keys[i];
        *def = *tb_config_find(confluent, 1, renamed[i].confluent);
        def->name = renamed[i].debezium;
        def->group = CONNECTOR;
        def->default_value = renamed[i].default_value != NULL ? renamed[i].default_value
                                                              : def->default_value;
        def->documentation = renamed[i].documentation != NULL ? renamed[i].documentation
                                                              : def->documentation;
        def->field = renamed[i].field;
    }
    memcpy(debezium_keys + RENAMED, own_keys, sizeof(own_keys));
}

/* The problems across keys that the table cannot see alone, with
 * Debezium's messages. */
static void check_keys(const debezium_keys_t *k, json_t *errors)
{
    size_t fields = json_array_size(k->pk_fields);
    char message[512];
    tb_jdbc_kind_t kind;
    tb_jdbc_url_validate(k->url, KEY_URL, errors, &kind);
    if (k->insert_mode != NULL && strcasecmp(k->insert_mode, "insert") != 0 &&
        k->pk_mode != NULL && strcasecmp(k->pk_mode, "none") == 0) {
        snprintf(message, sizeof(message),
                 "When using %s, please define '" KEY_PK_MODE "'.",
                 strcasecmp(k->insert_mode, "upsert") == 0 ? "UPSERT" : "UPDATE");
        tb_config_error_add(errors, KEY_INSERT_MODE, message);
    } else if (k->insert_mode != NULL && strcasecmp(k->insert_mode, "upsert") == 0 &&
               k->pk_mode != NULL && strcasecmp(k->pk_mode, "record_value") == 0 &&
               fields == 0) {
        tb_config_error_add(errors, KEY_INSERT_MODE,
                            "When using UPSERT, please define '" KEY_PK_FIELDS "'.");
    }
    if (json_array_size(k->include) > 0 && json_array_size(k->exclude) > 0) {
        tb_config_error_add(errors, KEY_EXCLUDE,
                            "Cannot define both field.exclude.list and "
                            "field.include.list. Please specify only one.");
    }
    if (k->truncate_enabled) {
        tb_config_error_add(errors, KEY_TRUNCATE,
                            "truncate.enabled=true is not supported: tributary's JDBC "
                            "sink does not write truncate events");
    }
    if (k->delete_enabled && k->pk_mode != NULL &&
        strcasecmp(k->pk_mode, "record_key") != 0) {
        tb_config_error_add(errors, KEY_DELETE,
                            "When 'delete.enabled' is set to 'true', the "
                            "'primary.key.mode' option must be set to 'record_key'.");
    }
}

void tb_jdbc_debezium_validate(const json_t *values, json_t *errors)
{
    debezium_keys_t k;
    if (tb_config_fill(&tb_jdbc_debezium_table, values, &k) == 0) {
        check_keys(&k, errors);
    }
}

/* A task's raw config as the JDBC sink's keys: the renamed ones as written
 * (a 3.x name's value, else its 3.0 name's, else Debezium's default), and
 * the keys whose meaning differs translated from k. */
static json_t *as_confluent(const json_t *config, const debezium_keys_t *k)
{
    bool basic = k->evolution == 1;
    /* a Date is the day it names, whatever use.time.zone says */
    json_t *raw =
        json_pack("{s:s, s:s, s:s, s:s}", "auto.create", basic ? "true" : "false",
                  "auto.evolve", basic ? "true" : "false", "quote.sql.identifiers",
                  k->quote ? "always" : "never", "date.timezone", "UTC");
    for (size_t i = 0; raw != NULL && i < RENAMED; i++) {
        if (renamed[i].alias_of != NULL) {
            continue; /* read with its 3.x name */
        }
        json_t *value = json_object_get(config, renamed[i].debezium);
        for (size_t a = 0; value == NULL && a < RENAMED; a++) {
            if (renamed[a].alias_of != NULL &&
                strcmp(renamed[a].alias_of, renamed[i].debezium) == 0) {
                value = json_object_get(config, renamed[a].debezium);
            }
        }
        const char *default_value = debezium_keys[i].default_value;
        if (value != NULL) {
            json_object_set(raw, renamed[i].confluent, value);
        } else if (default_value != NULL) {
            json_object_set_new(raw, renamed[i].confluent, json_string(default_value));
        }
    }
    return raw;
}

int tb_jdbc_debezium_settings_init(tb_jdbc_settings_t *s, const json_t *config,
                                   char *errstr, size_t errstr_size)
{
    debezium_keys_t k;
    json_t *errors = json_object();
    json_t *raw = NULL;
    *s = (tb_jdbc_settings_t){0};
    json_t *values =
        tb_config_load(&tb_jdbc_debezium_table, config, &k, errstr, errstr_size);
    if (values == NULL) {
        goto fail;
    }
    check_keys(&k, errors);
    if (tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        goto fail;
    }
    raw = as_confluent(config, &k);
    if (raw == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (tb_jdbc_settings_init(s, raw, errstr, errstr_size) != 0) {
        goto fail;
    }
    s->debezium = true;
    s->max_retries = k.flush_retries;
    s->retry_backoff_ms = k.flush_delay_ms;
    s->retries_key = KEY_FLUSH_RETRIES;
    s->backoff_key = KEY_FLUSH_DELAY;
    s->reconnect = k.restart;
    s->field_include = json_array_size(k.include) > 0;
    s->field_filter = json_array_size(k.include) > 0   ? json_incref((json_t *)k.include)
                      : json_array_size(k.exclude) > 0 ? json_incref((json_t *)k.exclude)
                                                       : NULL;
    json_decref(raw);
    json_decref(values);
    json_decref(errors);
    return 0;

fail:
    json_decref(raw);
    json_decref(values);
    json_decref(errors);
    return -1;
}
