/*
 * jdbc_config.c - the JDBC sink's keys: Confluent's names, defaults and
 * validation messages, the checks across keys, and the settings a task runs
 * on.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/jdbc/tb_jdbc.h"

#define KEY_URL "connection.url"
#define KEY_USER "connection.user"
#define KEY_PASSWORD "connection.password"
#define KEY_DIALECT "dialect.name"
#define KEY_ATTEMPTS "connection.attempts"
#define KEY_BACKOFF "connection.backoff.ms"
#define KEY_INSERT_MODE "insert.mode"
#define KEY_BATCH_SIZE "batch.size"
#define KEY_DELETE "delete.enabled"
#define KEY_TABLE_TYPES "table.types"
#define KEY_REPLACE_NULL "replace.null.with.default"
#define KEY_TABLE_FORMAT "table.name.format"
#define KEY_PK_MODE "pk.mode"
#define KEY_PK_FIELDS "pk.fields"
#define KEY_FIELDS "fields.whitelist"
#define KEY_TIMEZONE "db.timezone"
#define KEY_TIMESTAMP_FIELDS "timestamp.fields.list"
#define KEY_AUTO_CREATE "auto.create"
#define KEY_AUTO_EVOLVE "auto.evolve"
#define KEY_QUOTE "quote.sql.identifiers"
#define KEY_DATE_TIMEZONE "date.timezone"
#define KEY_PRECISION "timestamp.precision.mode"
#define KEY_CALENDAR "date.calendar.system"
#define KEY_STRING_COLUMN "string.output.value.column.name"
#define KEY_HOLDLOCK "mssql.use.merge.holdlock"
#define KEY_TRIM_LOG "trim.sensitive.log"
#define KEY_CREDENTIALS "jdbc.credentials.provider.class"
#define KEY_MAX_RETRIES "max.retries"
#define KEY_RETRY_BACKOFF "retry.backoff.ms"

const char *const tb_jdbc_insert_modes[] = {"insert", "upsert", "update", NULL};
const char *const tb_jdbc_pk_modes[] = {"none", "kafka", "record_key", "record_value",
                                        NULL};
static const char *const quote_methods[] = {"always", "never", NULL};
static const char *const dialects[] = {"", "PostgreSqlDatabaseDialect",
                                       "SqliteDatabaseDialect", NULL};

static const char *const date_timezones[] = {"db_timezone", "utc", NULL};
static const char *const precisions[] = {"microseconds", "nanoseconds", NULL};
static const char *const calendars[] = {"LEGACY", "PROLEPTIC_GREGORIAN", NULL};
#define DEFAULT_CREDENTIALS                                                              \
    "io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider"

static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};

/* The index of text in names (any case), or -1. */
static int name_index(const char *const *names, const char *text)
{
    for (int i = 0; text != NULL && names[i] != NULL; i++) {
        if (strcasecmp(names[i], text) == 0) {
            return i;
        }
    }
    return -1;
}

/* Confluent's EnumValidator: the value in lower or upper case. */
static int enum_check(const char *const *names, const json_t *value, char *reason,
                      size_t reason_size)
{
    const char *text = json_string_value(value);
    for (int i = 0; text != NULL && names[i] != NULL; i++) {
        char upper[32];
        size_t n = strlen(names[i]);
        for (size_t c = 0; c <= n && c < sizeof(upper); c++) {
            upper[c] = (char)toupper((unsigned char)names[i][c]);
        }
        if (strcmp(text, names[i]) == 0 || strcmp(text, upper) == 0) {
            return 0;
        }
    }
    snprintf(reason, reason_size, "Invalid enumerator");
    return -1;
}

static int insert_mode_check(const json_t *value, char *reason, size_t reason_size)
{
    return enum_check(tb_jdbc_insert_modes, value, reason, reason_size);
}

static int pk_mode_check(const json_t *value, char *reason, size_t reason_size)
{
    return enum_check(tb_jdbc_pk_modes, value, reason, reason_size);
}

static int quote_check(const json_t *value, char *reason, size_t reason_size)
{
    if (name_index(quote_methods, json_string_value(value)) < 0) {
        snprintf(reason, reason_size, "No matching QuoteMethod found for '%s'",
                 json_string_value(value));
        return -1;
    }
    return 0;
}

static int dialect_check(const json_t *value, char *reason, size_t reason_size)
{
    if (name_index(dialects, json_string_value(value)) < 0) {
        snprintf(reason, reason_size,
                 "tributary's JDBC sink has the dialects PostgreSqlDatabaseDialect and "
                 "SqliteDatabaseDialect (empty: from connection.url)");
        return -1;
    }
    return 0;
}

static int date_timezone_check(const json_t *value, char *reason, size_t reason_size)
{
    return enum_check(date_timezones, value, reason, reason_size);
}

static int precision_check(const json_t *value, char *reason, size_t reason_size)
{
    return enum_check(precisions, value, reason, reason_size);
}

static int calendar_check(const json_t *value, char *reason, size_t reason_size)
{
    if (name_index(calendars, json_string_value(value)) < 0) {
        snprintf(reason, reason_size,
                 "String must be one of: LEGACY, PROLEPTIC_GREGORIAN");
        return -1;
    }
    return 0;
}

static int string_column_check(const json_t *value, char *reason, size_t reason_size)
{
    if (strcmp(json_string_value(value), "record_value") != 0) {
        snprintf(reason, reason_size,
                 "not supported by tributary's JDBC sink, which writes only records "
                 "whose value is a struct");
        return -1;
    }
    return 0;
}

static int credentials_check(const json_t *value, char *reason, size_t reason_size)
{
    if (strcmp(json_string_value(value), DEFAULT_CREDENTIALS) != 0) {
        snprintf(reason, reason_size,
                 "tributary's JDBC sink takes its credentials from connection.user and "
                 "connection.password only (" DEFAULT_CREDENTIALS ")");
        return -1;
    }
    return 0;
}

static int non_empty_check(const json_t *value, char *reason, size_t reason_size)
{
    const char *text = json_string_value(value);
    while (text != NULL && isspace((unsigned char)*text)) {
        text++;
    }
    if (text == NULL || *text == '\0') {
        snprintf(reason, reason_size, "String must be non-empty");
        return -1;
    }
    return 0;
}

int tb_jdbc_timezone_check(const json_t *value, char *reason, size_t reason_size)
{
    char why[512];
    tb_zone_t *zone = tb_jdbc_timezone_parse(json_string_value(value), why, sizeof(why));
    if (zone == NULL) {
        snprintf(reason, reason_size, "Invalid time zone identifier: %s", why);
        return -1;
    }
    tb_zone_free(zone);
    return 0;
}

static int table_types_check(const json_t *value, char *reason, size_t reason_size)
{
    size_t i;
    json_t *item;
    json_array_foreach ((json_t *)value, i, item) {
        if (strcasecmp(json_string_value(item), "TABLE") != 0) {
            snprintf(reason, reason_size,
                     "tributary's JDBC sink writes to tables only (TABLE), not to %s",
                     json_string_value(item));
            return -1;
        }
    }
    return 0;
}

static int empty_list_check(const json_t *value, char *reason, size_t reason_size)
{
    if (json_array_size(value) > 0) {
        snprintf(reason, reason_size,
                 "not supported by tributary's JDBC sink: Timestamp fields are written "
                 "as timestamps, other fields as their type");
        return -1;
    }
    return 0;
}

/* The keys a task and the checks across keys read, filled from
 * jdbc_sink_keys (tb_config_fill); strings and lists are borrowed from the
 * parsed values. */
typedef struct {
    const char *url;
    const char *user;
    const char *password;
    const char *dialect;
    int attempts;
    long long backoff_ms;
    const char *insert_mode; /* tb_jdbc_insert_modes[], in lower or upper case */
    int batch_size;
    bool delete_enabled;
    bool replace_null;
    const char *table_format;
    const char *pk_mode; /* tb_jdbc_pk_modes[], in lower or upper case */
    const json_t *pk_fields;
    const json_t *fields;
    const char *db_timezone;
    const char *date_timezone;
    bool auto_create;
    bool auto_evolve;
    const char *quote;
    int max_retries;
    int retry_backoff_ms;
} jdbc_sink_keys_t;

#define CONNECTION "Connection"
#define WRITES "Writes"
#define MAPPING "Data Mapping"
#define DDL "DDL Support"
#define RETRIES "Retries"

static const tb_config_def_t jdbc_sink_keys[] = {
    {.name = KEY_URL,
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = CONNECTION,
     .order = 1,
     .width = TB_WIDTH_LONG,
     .display_name = "JDBC URL",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, url),
     .documentation =
         "JDBC connection URL: jdbc:postgresql://host[:port][,host2...]/database"
         "[?parameters] (the PostgreSQL driver's parameters user, password, ssl, "
         "sslmode, sslrootcert, sslcert, sslkey, sslpassword, connectTimeout, "
         "loginTimeout, socketTimeout, ApplicationName, options, currentSchema, "
         "targetServerType, gssEncMode and channelBinding; any other is refused) or "
         "jdbc:sqlite:/path/to/file.db. Each statement waits for the server at most "
         "socketTimeout seconds (30 when not given). Passwords in the URL are hidden "
         "in messages and logs; prefer connection.password."},
    {.name = KEY_USER,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .group = CONNECTION,
     .order = 2,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "JDBC User",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, user),
     .documentation = "JDBC connection user."},
    {.name = KEY_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_HIGH,
     .group = CONNECTION,
     .order = 3,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "JDBC Password",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, password),
     .documentation = "JDBC connection password."},
    {.name = KEY_DIALECT,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 5,
     .width = TB_WIDTH_LONG,
     .display_name = "Database Dialect",
     .check = dialect_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, dialect),
     .documentation = "The database dialect: empty (the default) takes it from "
                      "connection.url; PostgreSqlDatabaseDialect or "
                      "SqliteDatabaseDialect must match the URL."},
    {.name = KEY_ATTEMPTS,
     .type = TB_CONFIG_INT,
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 6,
     .width = TB_WIDTH_SHORT,
     .display_name = "JDBC connection attempts",
     .range = &at_least_one,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, attempts),
     .documentation = "Maximum number of attempts to retrieve a valid JDBC connection "
                      "when the task starts. Must be a positive integer."},
    {.name = KEY_BACKOFF,
     .type = TB_CONFIG_LONG,
     .default_value = "10000",
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 7,
     .width = TB_WIDTH_SHORT,
     .display_name = "JDBC connection backoff in milliseconds",
     .range = &non_negative,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, backoff_ms),
     .documentation = "Backoff time in milliseconds between connection attempts."},
    {.name = KEY_INSERT_MODE,
     .type = TB_CONFIG_STRING,
     .default_value = "insert",
     .importance = TB_IMPORTANCE_HIGH,
     .group = WRITES,
     .order = 1,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Insert Mode",
     .check = insert_mode_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, insert_mode),
     .documentation =
         "The insertion mode to use: insert (INSERT, several rows per statement), "
         "upsert (INSERT ... ON CONFLICT (the primary key) DO UPDATE) or update "
         "(UPDATE ... WHERE the primary key). upsert and update need a pk.mode other "
         "than none."},
    {.name = KEY_BATCH_SIZE,
     .type = TB_CONFIG_INT,
     .default_value = "3000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = WRITES,
     .order = 2,
     .width = TB_WIDTH_SHORT,
     .display_name = "Batch Size",
     .range = &non_negative,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, batch_size),
     .documentation = "Specifies how many records to attempt to batch together for "
                      "insertion into the destination table, when possible: the most "
                      "rows in one statement (also bounded by the database's limit "
                      "on statement parameters)."},
    {.name = KEY_DELETE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = WRITES,
     .order = 3,
     .width = TB_WIDTH_SHORT,
     .display_name = "Enable deletes",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, delete_enabled),
     .documentation = "Whether to treat null record values as deletes. Requires pk.mode "
                      "to be record_key."},
    {.name = KEY_TABLE_TYPES,
     .type = TB_CONFIG_LIST,
     .default_value = "TABLE",
     .importance = TB_IMPORTANCE_LOW,
     .group = WRITES,
     .order = 4,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Table Types",
     .check = table_types_check,
     .documentation = "The types of table the sink writes to: TABLE only (views are "
                      "not written to)."},
    {.name = KEY_REPLACE_NULL,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = WRITES,
     .order = 5,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Replace null value with default value",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, replace_null),
     .documentation = "Whether to replace a null field value with the field's default "
                      "value, when its schema has one."},
    {.name = KEY_TABLE_FORMAT,
     .type = TB_CONFIG_STRING,
     .default_value = "${topic}",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = MAPPING,
     .order = 1,
     .width = TB_WIDTH_LONG,
     .display_name = "Table Name Format",
     .check = non_empty_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, table_format),
     .documentation = "A format string for the destination table name, which may contain "
                      "'${topic}' as a placeholder for the originating topic name. For "
                      "example, kafka_${topic} for the topic 'orders' will map to the "
                      "table name 'kafka_orders'. A dot separates a schema from the "
                      "table."},
    {.name = KEY_PK_MODE,
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_HIGH,
     .group = MAPPING,
     .order = 2,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Primary Key Mode",
     .check = pk_mode_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, pk_mode),
     .documentation = "The primary key mode, also refer to pk.fields: none (no keys), "
                      "kafka (the Kafka coordinates), record_key (field(s) of the record "
                      "key, a primitive or a struct) or record_value (field(s) of the "
                      "record value, a struct)."},
    {.name = KEY_PK_FIELDS,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = MAPPING,
     .order = 3,
     .width = TB_WIDTH_LONG,
     .display_name = "Primary Key Fields",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, pk_fields),
     .documentation =
         "List of comma-separated primary key field names, read per pk.mode: none, "
         "ignored; kafka, exactly three names for the topic, partition and offset "
         "columns (__connect_topic,__connect_partition,__connect_offset when empty); "
         "record_key, the key struct's fields to use (all when empty), or the one "
         "column name of a primitive key; record_value, the value's fields to use "
         "(all when empty)."},
    {.name = KEY_FIELDS,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = MAPPING,
     .order = 4,
     .width = TB_WIDTH_LONG,
     .display_name = "Fields Whitelist",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, fields),
     .documentation = "List of comma-separated record value field names. If empty, all "
                      "fields from the record value are utilized, otherwise used to "
                      "filter to the desired fields. pk.fields is applied independently "
                      "of it."},
    {.name = KEY_TIMEZONE,
     .type = TB_CONFIG_STRING,
     .default_value = "UTC",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = MAPPING,
     .order = 5,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "DB Time Zone",
     .check = tb_jdbc_timezone_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, db_timezone),
     .documentation = "The time zone Timestamp values are written in: UTC (the default), "
                      "a fixed offset such as +02:00 or -05:30, or a region of the tz "
                      "database such as Europe/Paris, daylight saving time included."},
    {.name = KEY_TIMESTAMP_FIELDS,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = MAPPING,
     .order = 7,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Timestamp Fields List",
     .check = empty_list_check,
     .documentation = "Not supported: must stay empty. Fields of the Timestamp logical "
                      "type are written as timestamps."},
    {.name = KEY_DATE_TIMEZONE,
     .type = TB_CONFIG_STRING,
     .default_value = "DB_TIMEZONE",
     .importance = TB_IMPORTANCE_LOW,
     .group = MAPPING,
     .order = 6,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Time Zone used for Date",
     .check = date_timezone_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, date_timezone),
     .documentation = "DB_TIMEZONE or UTC. A Date is written as the day it names, so "
                      "DB_TIMEZONE needs db.timezone=UTC (the default): a Date shifted "
                      "by another zone is refused rather than written differently."},
    {.name = KEY_PRECISION,
     .type = TB_CONFIG_STRING,
     .default_value = "microseconds",
     .importance = TB_IMPORTANCE_LOW,
     .group = MAPPING,
     .order = 8,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Timestamp Precision Mode",
     .check = precision_check,
     .documentation = "microseconds or nanoseconds: the same here, since Connect's "
                      "Timestamps hold milliseconds."},
    {.name = KEY_CALENDAR,
     .type = TB_CONFIG_STRING,
     .default_value = "LEGACY",
     .importance = TB_IMPORTANCE_LOW,
     .group = MAPPING,
     .order = 9,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Date Calendar System",
     .check = calendar_check,
     .documentation = "LEGACY or PROLEPTIC_GREGORIAN. tributary always writes dates of "
                      "the proleptic Gregorian calendar; the two differ only before "
                      "1582-10-15."},
    {.name = KEY_STRING_COLUMN,
     .type = TB_CONFIG_STRING,
     .default_value = "record_value",
     .importance = TB_IMPORTANCE_LOW,
     .group = MAPPING,
     .order = 10,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "String Value Column Name",
     .check = string_column_check,
     .documentation = "Must stay record_value: a record whose value is a string, not a "
                      "struct, is not written."},
    {.name = KEY_AUTO_CREATE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = DDL,
     .order = 1,
     .width = TB_WIDTH_SHORT,
     .display_name = "Auto-Create",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, auto_create),
     .documentation = "Whether to automatically create the destination table based on "
                      "record schema if it is found to be missing by issuing CREATE."},
    {.name = KEY_AUTO_EVOLVE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = DDL,
     .order = 2,
     .width = TB_WIDTH_SHORT,
     .display_name = "Auto-Evolve",
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, auto_evolve),
     .documentation = "Whether to automatically add columns in the table schema when "
                      "found to be missing relative to the record schema by issuing "
                      "ALTER. A new field must be optional or have a default."},
    {.name = KEY_QUOTE,
     .type = TB_CONFIG_STRING,
     .default_value = "always",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = DDL,
     .order = 3,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Quote Identifiers",
     .check = quote_check,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, quote),
     .documentation = "When to quote table names, column names, and other identifiers "
                      "in SQL statements: always, or never (a name that is not a plain "
                      "identifier, with a hyphen say, is quoted still)."},
    {.name = KEY_HOLDLOCK,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "DML Support",
     .order = 1,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "SQL Server - Use HOLDLOCK in MERGE",
     .documentation = "For SQL Server's MERGE only: no effect on PostgreSQL and SQLite, "
                      "as in Confluent's sink."},
    {.name = KEY_TRIM_LOG,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = RETRIES,
     .order = 3,
     .documentation = "Accepted for Confluent's configs: tributary's messages never "
                      "hold the rows' values, except a database's own message about a "
                      "refused row (sent with it to the dead letter queue)."},
    {.name = KEY_CREDENTIALS,
     .type = TB_CONFIG_CLASS,
     .default_value = DEFAULT_CREDENTIALS,
     .importance = TB_IMPORTANCE_LOW,
     .group = CONNECTION,
     .order = 4,
     .width = TB_WIDTH_LONG,
     .display_name = "JDBC Credentials Provider Class",
     .check = credentials_check,
     .documentation = "Only " DEFAULT_CREDENTIALS
                      ": the credentials are connection.user and connection.password."},
    {.name = KEY_MAX_RETRIES,
     .type = TB_CONFIG_INT,
     .default_value = "10",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = RETRIES,
     .order = 1,
     .width = TB_WIDTH_SHORT,
     .display_name = "Maximum Retries",
     .range = &non_negative,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, max_retries),
     .documentation = "The maximum number of times to retry on errors before failing the "
                      "task: a lost connection, or a serialization conflict. The "
                      "transaction that failed wrote nothing, and the same records are "
                      "written again."},
    {.name = KEY_RETRY_BACKOFF,
     .type = TB_CONFIG_INT,
     .default_value = "3000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = RETRIES,
     .order = 2,
     .width = TB_WIDTH_SHORT,
     .display_name = "Retry Backoff (millis)",
     .range = &non_negative,
     .field = TB_CONFIG_AT(jdbc_sink_keys_t, retry_backoff_ms),
     .documentation =
         "The time in milliseconds to wait following an error before a retry "
         "attempt is made."},
};

const tb_config_table_t tb_jdbc_sink_table = TB_CONFIG_TABLE("JDBC sink", jdbc_sink_keys);

/* UTC and fixed offsets: 0 with *minutes east of UTC, or -1. */
static int fixed_offset(const char *text, int *minutes)
{
    static const char *const utc[] = {"UTC", "Z", "GMT", "UT", "Etc/UTC", "Etc/GMT"};
    *minutes = 0;
    if (text == NULL) {
        return -1;
    }
    for (size_t i = 0; i < sizeof(utc) / sizeof(utc[0]); i++) {
        size_t n = strlen(utc[i]);
        if (strncmp(text, utc[i], n) == 0 &&
            (text[n] == '\0' || ((text[n] == '+' || text[n] == '-') && n <= 3))) {
            text += n;
            break;
        }
    }
    if (*text == '\0') {
        return 0;
    }
    int hours = 0, mins = 0, used = 0;
    char sign = *text;
    if ((sign != '+' && sign != '-') || !isdigit((unsigned char)text[1]) ||
        sscanf(text + 1, "%2d%n", &hours, &used) != 1) {
        return -1;
    }
    text += 1 + used;
    if (*text == ':' && (!isdigit((unsigned char)text[1]) ||
                         sscanf(text + 1, "%2d%n", &mins, &used) != 1 || used != 2)) {
        return -1;
    }
    text += *text == ':' ? 3 : 0;
    if (*text != '\0' || hours > 18 || mins > 59) {
        return -1;
    }
    *minutes = (sign == '-' ? -1 : 1) * (hours * 60 + mins);
    return 0;
}

tb_zone_t *tb_jdbc_timezone_parse(const char *text, char *errstr, size_t errstr_size)
{
    int minutes;
    if (text != NULL && fixed_offset(text, &minutes) == 0) {
        tb_zone_t *zone = tb_zone_fixed(minutes * 60);
        if (zone == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
        }
        return zone;
    }
    return tb_zone_load(text, errstr, errstr_size);
}

bool tb_jdbc_timezone_is_utc(const char *text)
{
    int minutes;
    return text != NULL && fixed_offset(text, &minutes) == 0 && minutes == 0;
}

/* The problems about the connection and pk keys that the table cannot see
 * alone. */
static void check_keys(const jdbc_sink_keys_t *k, json_t *errors)
{
    char message[1800];
    tb_jdbc_kind_t kind;

    if (tb_jdbc_url_validate(k->url, KEY_URL, errors, &kind) == 0 && k->dialect != NULL &&
        k->dialect[0] != '\0' &&
        (strcasecmp(k->dialect, "PostgreSqlDatabaseDialect") == 0) !=
            (kind == TB_JDBC_POSTGRES)) {
        tb_config_error_add(errors, KEY_DIALECT,
                            "dialect.name does not match the database of connection.url");
    }
    if (k->delete_enabled && k->pk_mode != NULL &&
        strcasecmp(k->pk_mode, "record_key") != 0) {
        tb_config_error_add(errors, KEY_DELETE,
                            "Primary key mode must be 'record_key' when delete support "
                            "is enabled");
    }
    if (k->insert_mode != NULL && k->pk_mode != NULL &&
        strcasecmp(k->insert_mode, "insert") != 0 &&
        strcasecmp(k->pk_mode, "none") == 0) {
        snprintf(message, sizeof(message),
                 "Write in %s mode requires key field names to be known, check the "
                 "primary key configuration (pk.mode is none)",
                 k->insert_mode);
        tb_config_error_add(errors, KEY_INSERT_MODE, message);
    }
    if (k->date_timezone != NULL && strcasecmp(k->date_timezone, "db_timezone") == 0 &&
        k->db_timezone != NULL && !tb_jdbc_timezone_is_utc(k->db_timezone)) {
        tb_config_error_add(errors, KEY_DATE_TIMEZONE,
                            "date.timezone=DB_TIMEZONE with a db.timezone other than UTC "
                            "is not supported: Dates are written as the day they name; "
                            "set date.timezone=UTC");
    }
    size_t fields = json_array_size(k->pk_fields);
    if (k->pk_mode != NULL && strcasecmp(k->pk_mode, "kafka") == 0 && fields != 0 &&
        fields != 3) {
        snprintf(message, sizeof(message),
                 "PK mode is kafka so there should either be no field names defined for "
                 "defaults [__connect_topic, __connect_partition, __connect_offset] to "
                 "be applicable, or exactly 3, defined fields are: %zu",
                 fields);
        tb_config_error_add(errors, KEY_PK_FIELDS, message);
    }
}

/* The plugin's validate: the checks across keys, on the keys as parsed (a
 * key that did not parse reads as unset, and has its own error). */
void tb_jdbc_sink_validate(const json_t *values, json_t *errors)
{
    jdbc_sink_keys_t keys;
    if (tb_config_fill(&tb_jdbc_sink_table, values, &keys) == 0) {
        check_keys(&keys, errors);
    }
}

/* table.name.format without its leading and trailing spaces, or NULL when
 * out of memory. */
static char *trimmed(const char *text)
{
    while (isspace((unsigned char)*text)) {
        text++;
    }
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char)text[n - 1])) {
        n--;
    }
    return strndup(text, n);
}

int tb_jdbc_settings_init(tb_jdbc_settings_t *s, const json_t *config, char *errstr,
                          size_t errstr_size)
{
    jdbc_sink_keys_t k;
    json_t *errors = json_object();
    char reason[512];
    *s = (tb_jdbc_settings_t){0};
    json_t *values = tb_config_load(&tb_jdbc_sink_table, config, &k, errstr, errstr_size);
    if (values == NULL) {
        goto fail;
    }
    check_keys(&k, errors);
    if (tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        goto fail;
    }
    if (tb_jdbc_url_parse(k.url, &s->url, reason, sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size, "%s", reason);
        goto fail;
    }
    char shown[1024];
    tb_jdbc_url_redact(k.url, shown, sizeof(shown));
    s->shown_url = strdup(shown);
    s->user = k.user != NULL ? strdup(k.user) : NULL;
    s->password = k.password != NULL ? strdup(k.password) : NULL;
    s->connection_attempts = k.attempts;
    s->connection_backoff_ms = k.backoff_ms;
    s->insert_mode =
        (tb_jdbc_insert_mode_t)name_index(tb_jdbc_insert_modes, k.insert_mode);
    s->batch_size = k.batch_size > 0 ? (size_t)k.batch_size : 1;
    s->delete_enabled = k.delete_enabled;
    s->replace_null = k.replace_null;
    s->table_format = trimmed(k.table_format);
    s->pk_mode = (tb_jdbc_pk_mode_t)name_index(tb_jdbc_pk_modes, k.pk_mode);
    s->pk_fields = json_incref((json_t *)k.pk_fields);
    s->fields_allow = json_incref((json_t *)k.fields);
    s->auto_create = k.auto_create;
    s->auto_evolve = k.auto_evolve;
    s->quote = name_index(quote_methods, k.quote) == 0;
    s->zone = tb_jdbc_timezone_parse(k.db_timezone, errstr, errstr_size);
    if (s->zone == NULL) {
        goto fail;
    }
    s->max_retries = k.max_retries;
    s->retry_backoff_ms = k.retry_backoff_ms;
    s->retries_key = KEY_MAX_RETRIES;
    s->backoff_key = KEY_RETRY_BACKOFF;
    s->reconnect = true;
    if (s->shown_url == NULL || s->table_format == NULL ||
        (k.user != NULL && s->user == NULL) ||
        (k.password != NULL && s->password == NULL)) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    json_decref(values);
    json_decref(errors);
    return 0;

fail:
    json_decref(values);
    json_decref(errors);
    tb_jdbc_settings_clear(s);
    return -1;
}

void tb_jdbc_settings_clear(tb_jdbc_settings_t *s)
{
    if (s == NULL) {
        return;
    }
    tb_jdbc_url_clear(&s->url);
    free(s->shown_url);
    free(s->user);
    if (s->password != NULL) {
        explicit_bzero(s->password, strlen(s->password));
        free(s->password);
    }
    free(s->table_format);
    json_decref(s->pk_fields);
    json_decref(s->fields_allow);
    json_decref(s->field_filter);
    tb_zone_free(s->zone);
    *s = (tb_jdbc_settings_t){0};
}
