/*
 * jdbc_debezium.c - Debezium's JDBC sink keys (io.debezium.connector.jdbc.
 * JdbcSinkConnector) over the same engine: its table and messages, and the
 * settings its keys come to, written as Confluent's keys and read by
 * tb_jdbc_settings_init. What is Debezium's own behaviour: change events
 * (an envelope with op and after) are unwrapped, a delete event or a
 * tombstone deletes (delete.enabled) or is skipped, and dots in a topic's
 * name become underscores in its table's (its default table naming).
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
#define KEY_INSERT_MODE "insert.mode"
#define KEY_DELETE "delete.enabled"
#define KEY_TRUNCATE "truncate.enabled"
#define KEY_TABLE_FORMAT "table.name.format"
#define KEY_PK_MODE "primary.key.mode"
#define KEY_PK_FIELDS "primary.key.fields"
#define KEY_TIMEZONE "database.time_zone"
#define KEY_EVOLUTION "schema.evolution"
#define KEY_QUOTE "quote.identifiers"
#define KEY_TABLE_NAMING "table.naming.strategy"
#define KEY_COLUMN_NAMING "column.naming.strategy"
#define KEY_POSTGIS "dialect.postgres.postgis.schema"
#define KEY_IDENTITY "dialect.sqlserver.identity.insert"
#define KEY_BATCH_SIZE "batch.size"
#define KEY_INCLUDE "field.include.list"
#define KEY_EXCLUDE "field.exclude.list"
#define KEY_REDUCTION "use.reduction.buffer"

#define PROVIDER "org.hibernate.c3p0.internal.C3P0ConnectionProvider"
#define TABLE_NAMING "io.debezium.connector.jdbc.naming.DefaultTableNamingStrategy"
#define COLUMN_NAMING "io.debezium.connector.jdbc.naming.DefaultColumnNamingStrategy"

static const char *const evolutions[] = {"none", "basic", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};

/* A check that only the default (the class tributary's behaviour is) is
 * accepted. */
#define ONLY(fn, expected, what)                                                         \
    static int fn(const json_t *value, char *reason, size_t reason_size)                 \
    {                                                                                    \
        if (strcmp(json_string_value(value), expected) != 0) {                           \
            snprintf(reason, reason_size, "tributary's JDBC sink has " what " only");    \
            return -1;                                                                   \
        }                                                                                \
        return 0;                                                                        \
    }

ONLY(provider_check, PROVIDER, "one connection per task (" PROVIDER ")")
ONLY(table_naming_check, TABLE_NAMING, "the default table naming (" TABLE_NAMING ")")
ONLY(column_naming_check, COLUMN_NAMING, "the default column naming (" COLUMN_NAMING ")")

static int empty_check(const json_t *value, char *reason, size_t reason_size)
{
    const char *text = json_string_value(value);
    if (text != NULL && text[0] != '\0') {
        snprintf(reason, reason_size,
                 "not supported by tributary's JDBC sink: every field is written");
        return -1;
    }
    return 0;
}

#define CONNECTION "Connection"
#define CONNECTOR "Connector"

static const tb_config_def_t own_keys[] = {
    {.name = KEY_PROVIDER,
     .type = TB_CONFIG_CLASS,
     .default_value = PROVIDER,
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 0,
     .check = provider_check,
     .documentation = "Accepted as Debezium's default only: each task holds one "
                      "connection."},
    {.name = KEY_POOL_MIN,
     .type = TB_CONFIG_INT,
     .default_value = "5",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 4,
     .range = &at_least_one,
     .documentation = "Accepted; no effect: each task holds one connection."},
    {.name = KEY_POOL_MAX,
     .type = TB_CONFIG_INT,
     .default_value = "32",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 5,
     .range = &at_least_one,
     .documentation = "Accepted; no effect: each task holds one connection."},
    {.name = KEY_POOL_INCREMENT,
     .type = TB_CONFIG_INT,
     .default_value = "32",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 6,
     .range = &at_least_one,
     .documentation = "Accepted; no effect: each task holds one connection."},
    {.name = KEY_POOL_TIMEOUT,
     .type = TB_CONFIG_INT,
     .default_value = "1800",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 7,
     .documentation = "Accepted; no effect: each task holds one connection."},
    {.name = KEY_TRUNCATE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 2,
     .documentation = "Must stay false: truncate events are not supported."},
    {.name = KEY_EVOLUTION,
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 7,
     .one_of = evolutions,
     .documentation = "none, or basic: missing tables are created and missing columns "
                      "added."},
    {.name = KEY_QUOTE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 8,
     .documentation = "Whether table and column names are quoted."},
    {.name = KEY_TABLE_NAMING,
     .type = TB_CONFIG_CLASS,
     .default_value = TABLE_NAMING,
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 9,
     .check = table_naming_check,
     .documentation = "Only the default: table.name.format with the topic's dots as "
                      "underscores."},
    {.name = KEY_COLUMN_NAMING,
     .type = TB_CONFIG_CLASS,
     .default_value = COLUMN_NAMING,
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 10,
     .check = column_naming_check,
     .documentation = "Only the default: a column is named as its field."},
    {.name = KEY_POSTGIS,
     .type = TB_CONFIG_STRING,
     .default_value = "public",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 11,
     .documentation = "Accepted; no effect (geometry types are not written)."},
    {.name = KEY_IDENTITY,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 12,
     .documentation = "For SQL Server only: no effect on PostgreSQL and SQLite."},
    {.name = KEY_INCLUDE,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Filters",
     .order = 1,
     .check = empty_check,
     .documentation = "Not supported: must stay empty."},
    {.name = KEY_EXCLUDE,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Filters",
     .order = 2,
     .check = empty_check,
     .documentation = "Not supported: must stay empty."},
    {.name = KEY_REDUCTION,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTOR,
     .order = 14,
     .documentation = "Accepted: an upsert batch holding a key twice is written in "
                      "order, its last event winning, either way."},
};

/* Debezium's keys that are Confluent's under another name (or the same):
 * each is declared once, in Confluent's table (jdbc_config.c), and
 * Debezium's table takes that definition under Debezium's name, with
 * Debezium's default and text where they differ. A task's values of these
 * are handed over to Confluent's keys as they are. */
static const struct {
    const char *debezium;
    const char *confluent;
    const char *default_value; /* Debezium's; NULL: Confluent's */
    const char *documentation; /* NULL: Confluent's */
} renamed[] = {
    {KEY_URL, "connection.url", NULL, NULL},
    {KEY_USER, "connection.user", NULL, NULL},
    {KEY_PASSWORD, "connection.password", NULL, NULL},
    {KEY_INSERT_MODE, "insert.mode", NULL,
     "The insertion mode to use: insert, upsert (needs primary.key.mode) or update."},
    {KEY_DELETE, "delete.enabled", NULL,
     "Whether a delete event or a tombstone deletes the row of its key (requires "
     "primary.key.mode=record_key); when false they are skipped."},
    {KEY_TABLE_FORMAT, "table.name.format", NULL,
     "A format string for the table, which may contain '${topic}' as a placeholder for "
     "the original topic name (its dots replaced by underscores)."},
    {KEY_PK_MODE, "pk.mode", NULL,
     "The primary key mode: none, kafka, record_key or record_value (record_header is "
     "not supported)."},
    {KEY_PK_FIELDS, "pk.fields", NULL,
     "A comma-separated list of primary key field names, read per primary.key.mode."},
    {KEY_TIMEZONE, "db.timezone", NULL, NULL},
    {KEY_BATCH_SIZE, "batch.size", "500", NULL},
};

#define RENAMED (sizeof(renamed) / sizeof(renamed[0]))
#define OWN (sizeof(own_keys) / sizeof(own_keys[0]))

/* The renamed keys, then Debezium's own: filled before main() runs. */
static tb_config_def_t debezium_keys[RENAMED + OWN];

const tb_config_table_t tb_jdbc_debezium_table =
    TB_CONFIG_TABLE("Debezium JDBC sink", debezium_keys);

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
    }
    memcpy(debezium_keys + RENAMED, own_keys, sizeof(own_keys));
}

void tb_jdbc_debezium_validate(const json_t *values, json_t *errors)
{
    const char *insert_mode = tb_config_string(values, KEY_INSERT_MODE);
    const char *pk_mode = tb_config_string(values, KEY_PK_MODE);
    size_t fields = json_array_size(tb_config_list(values, KEY_PK_FIELDS));
    char message[512];
    tb_jdbc_kind_t kind;
    tb_jdbc_url_validate(tb_config_string(values, KEY_URL), KEY_URL, errors, &kind);
    if (insert_mode != NULL && strcasecmp(insert_mode, "insert") != 0 &&
        pk_mode != NULL && strcasecmp(pk_mode, "none") == 0) {
        snprintf(message, sizeof(message),
                 "When using %s, please define '" KEY_PK_MODE "'.",
                 strcasecmp(insert_mode, "upsert") == 0 ? "UPSERT" : "UPDATE");
        tb_config_error_add(errors, KEY_INSERT_MODE, message);
    } else if (insert_mode != NULL && strcasecmp(insert_mode, "upsert") == 0 &&
               pk_mode != NULL && strcasecmp(pk_mode, "record_value") == 0 &&
               fields == 0) {
        tb_config_error_add(errors, KEY_INSERT_MODE,
                            "When using UPSERT, please define '" KEY_PK_FIELDS "'.");
    }
    if (tb_config_bool(values, KEY_TRUNCATE)) {
        tb_config_error_add(errors, KEY_TRUNCATE,
                            "truncate.enabled=true is not supported: tributary's JDBC "
                            "sink does not write truncate events");
    }
    if (tb_config_bool(values, KEY_DELETE) && pk_mode != NULL &&
        strcasecmp(pk_mode, "record_key") != 0) {
        tb_config_error_add(errors, KEY_DELETE,
                            "When 'delete.enabled' is set to 'true', the "
                            "'primary.key.mode' option must be set to 'record_key'.");
    }
}

/* The values of a task's raw config as the JDBC sink's keys: the renamed
 * ones as written (Debezium's defaults where absent), and the keys whose
 * meaning differs translated. */
static json_t *as_confluent(const json_t *config, const json_t *v)
{
    bool basic = strcmp(tb_config_string(v, KEY_EVOLUTION), "basic") == 0;
    json_t *raw =
        json_pack("{s:s, s:s, s:s}", "auto.create", basic ? "true" : "false",
                  "auto.evolve", basic ? "true" : "false", "quote.sql.identifiers",
                  tb_config_bool(v, KEY_QUOTE) ? "always" : "never");
    for (size_t i = 0; raw != NULL && i < RENAMED; i++) {
        json_t *value = json_object_get(config, renamed[i].debezium);
        const tb_config_def_t *def = &debezium_keys[i];
        if (value == NULL && def->default_value != NULL) {
            value = json_string(def->default_value);
            json_object_set_new(raw, renamed[i].confluent, value);
        } else if (value != NULL) {
            json_object_set(raw, renamed[i].confluent, value);
        }
    }
    return raw;
}

int tb_jdbc_debezium_settings_init(tb_jdbc_settings_t *s, const json_t *config,
                                   char *errstr, size_t errstr_size)
{
    const tb_config_table_t *tables[] = {&tb_jdbc_debezium_table};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, config, errors);
    int rc = -1;
    *s = (tb_jdbc_settings_t){0};
    if (values != NULL && tb_config_error_count(errors) == 0) {
        tb_jdbc_debezium_validate(values, errors);
    }
    if (values == NULL || tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
    } else {
        json_t *raw = as_confluent(config, values);
        rc = raw != NULL ? tb_jdbc_settings_init(s, raw, errstr, errstr_size) : -1;
        json_decref(raw);
        s->debezium = true;
    }
    json_decref(values);
    json_decref(errors);
    return rc;
}
