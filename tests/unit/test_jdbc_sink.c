/*
 * The JDBC sink's parts: connection.url parsing and redaction, decimal and
 * time zone text, validation messages, and the plugin itself against a
 * SQLite file, driven through its callbacks with a fake task context.
 */
#include "tb_test.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connectors/jdbc/tb_jdbc.h"

extern const tb_plugin_t tb_jdbc_sink_plugin;

static void test_postgres_url_maps_to_libpq(void **state)
{
    (void)state;
    tb_jdbc_url_t url;
    char reason[512] = "";
    assert_int_equal(tb_jdbc_url_parse("jdbc:postgresql://h1:5433,h2/db%20x?user=u&"
                                       "password=p%40ss&ssl=true&ApplicationName=app&"
                                       "currentSchema=s&socketTimeout=5",
                                       &url, reason, sizeof(reason)),
                     0);
    assert_int_equal(url.kind, TB_JDBC_POSTGRES);
    assert_int_equal(url.socket_timeout_s, 5); /* kept for the dialect, not libpq */
    assert_null(tb_jdbc_url_get(&url, "socketTimeout"));
    assert_string_equal(tb_jdbc_url_get(&url, "host"), "h1,h2");
    assert_string_equal(tb_jdbc_url_get(&url, "port"), "5433,5432");
    assert_string_equal(tb_jdbc_url_get(&url, "dbname"), "db x");
    assert_string_equal(tb_jdbc_url_get(&url, "password"), "p@ss");
    assert_string_equal(tb_jdbc_url_get(&url, "sslmode"), "require");
    assert_string_equal(tb_jdbc_url_get(&url, "application_name"), "app");
    assert_string_equal(tb_jdbc_url_get(&url, "options"), "-c search_path=s");
    tb_jdbc_url_clear(&url);

    assert_int_equal(
        tb_jdbc_url_parse("jdbc:sqlite:/tmp/x.db", &url, reason, sizeof(reason)), 0);
    assert_int_equal(url.kind, TB_JDBC_SQLITE);
    assert_string_equal(url.path, "/tmp/x.db");
    tb_jdbc_url_clear(&url);
}

/* A parameter without a libpq equivalent changes behaviour: refused by
 * name, never ignored; a reason never holds the password. */
static void test_url_refusals_name_the_problem(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        const char *reason;
    } cases[] = {
        {"jdbc:postgresql://h/db?prepareThreshold=5",
         "'prepareThreshold' is not supported"},
        {"jdbc:postgresql://h/db?socketTimeout=0", "socketTimeout=0 is not a number of "
                                                   "seconds from 1 to 86400"},
        {"jdbc:postgresql://h/db?socketTimeout=5s", "socketTimeout=5s is not"},
        {"jdbc:postgresql://u:pw@h/db", "use connection.user and connection.password"},
        {"jdbc:postgresql:db", "expected jdbc:postgresql://"},
        {"jdbc:postgresql://h:port/db", "the port 'port' is not a number"},
        {"jdbc:mysql://h/db", "only jdbc:postgresql://"},
        {"jdbc:sqlite:", "expected jdbc:sqlite:"},
        {"jdbc:sqlite:/x.db?mode=ro", "not supported in a SQLite URL"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb_jdbc_url_t url;
        char reason[512] = "";
        assert_int_equal(tb_jdbc_url_parse(cases[i].url, &url, reason, sizeof(reason)),
                         -1);
        assert_non_null(strstr(reason, cases[i].reason));
        assert_null(strstr(reason, "pw"));
    }
}

static void test_redaction_hides_passwords(void **state)
{
    (void)state;
    char out[256];
    tb_jdbc_url_redact("jdbc:postgresql://h/db?user=u&password=secret&sslpassword=k&x=1",
                       out, sizeof(out));
    assert_string_equal(out,
                        "jdbc:postgresql://h/db?user=u&password=[hidden]&sslpassword="
                        "[hidden]&x=1");
    tb_jdbc_url_redact("jdbc:postgresql://u:pw@h/db", out, sizeof(out));
    assert_string_equal(out, "jdbc:postgresql://[hidden]@h/db");
    tb_jdbc_url_redact("jdbc:postgresql://h/db?password=secret", out, 20);
    assert_null(strstr(out, "secret"));
}

static void test_decimal_text(void **state)
{
    (void)state;
    static const struct {
        unsigned char bytes[4];
        size_t len;
        int scale;
        const char *text;
    } cases[] = {
        {{0x30, 0x39}, 2, 2, "123.45"},
        {{0xCF, 0xC7}, 2, 3, "-12.345"},
        {{0x01}, 1, 3, "0.001"},
        {{0x00}, 1, 0, "0"},
        {{0x7B}, 1, -2, "12300"},
        {{0xFF}, 1, 0, "-1"},
        {{0x80, 0, 0, 0}, 4, 0, "-2147483648"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = tb_jdbc_decimal_text(cases[i].bytes, cases[i].len, cases[i].scale);
        assert_string_equal(text, cases[i].text);
        free(text);
    }
}

/* The offset east of UTC, in minutes, db.timezone text names at utc
 * seconds; -9999 when it is refused. */
static int zone_minutes(const char *text, int64_t utc)
{
    char errstr[512];
    tb_zone_t *zone = tb_jdbc_timezone_parse(text, errstr, sizeof(errstr));
    int minutes = zone != NULL ? tb_zone_offset(zone, utc) / 60 : -9999;
    tb_zone_free(zone);
    return minutes;
}

static void test_timezones(void **state)
{
    (void)state;
    int64_t winter = 1705320000, summer = 1720000000; /* 2024-01-15, 2024-07-03 */
    assert_int_equal(zone_minutes("UTC", summer), 0);
    assert_int_equal(zone_minutes("+02:00", winter), 120);
    assert_int_equal(zone_minutes("-05:30", summer), -330);
    assert_int_equal(zone_minutes("UTC+01:00", summer), 60);
    assert_int_equal(zone_minutes("Europe/Paris", winter), 60);
    assert_int_equal(zone_minutes("Europe/Paris", summer), 120);
    assert_int_equal(zone_minutes("America/New_York", summer), -240);
    assert_int_equal(zone_minutes("Mars/Olympus", summer), -9999);
    assert_int_equal(zone_minutes("+0230", summer), -9999);
    assert_int_equal(zone_minutes("+02:3", summer), -9999);
    assert_true(tb_jdbc_timezone_is_utc("UTC"));
    assert_true(tb_jdbc_timezone_is_utc("+00:00"));
    assert_false(tb_jdbc_timezone_is_utc("Europe/London"));
}

/* The messages of Confluent's JDBC sink, on the key the user wrote. */
static void test_validation_messages(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_jdbc_sink_table};
    json_t *raw = json_pack("{s:s, s:s, s:s, s:s, s:s}", "connection.url",
                            "jdbc:postgresql://h/db?password=hunter2&bogus=1",
                            "insert.mode", "upsert", "pk.mode", "none", "delete.enabled",
                            "true", "quote.sql.identifiers", "sometimes");
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    tb_jdbc_sink_validate(values, errors);
    const char *url =
        json_string_value(json_array_get(json_object_get(errors, "connection.url"), 0));
    assert_non_null(strstr(url, "password=[hidden]"));
    assert_null(strstr(url, "hunter2"));
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(errors, "delete.enabled"), 0)),
        "Primary key mode must be 'record_key' when delete support is enabled");
    assert_non_null(strstr(
        json_string_value(json_array_get(json_object_get(errors, "insert.mode"), 0)),
        "requires key field names to be known"));
    assert_string_equal(
        json_string_value(
            json_array_get(json_object_get(errors, "quote.sql.identifiers"), 0)),
        "Invalid value sometimes for configuration quote.sql.identifiers: "
        "No matching QuoteMethod found for 'sometimes'");
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

/* Debezium's keys that are Confluent's under another name take Confluent's
 * definition, with Debezium's default where it differs. */
static void test_debezium_keys_are_confluents_renamed(void **state)
{
    (void)state;
    const tb_config_table_t *confluent[] = {&tb_jdbc_sink_table};
    const tb_config_table_t *debezium[] = {&tb_jdbc_debezium_table};
    const tb_config_def_t *pk_mode = tb_config_find(debezium, 1, "primary.key.mode");
    const tb_config_def_t *fields = tb_config_find(debezium, 1, "primary.key.fields");
    const tb_config_def_t *batch = tb_config_find(debezium, 1, "batch.size");
    assert_non_null(pk_mode);
    assert_ptr_equal(pk_mode->check, tb_config_find(confluent, 1, "pk.mode")->check);
    assert_int_equal(fields->type, TB_CONFIG_LIST);
    assert_string_equal(batch->default_value, "500");
    assert_string_equal(tb_config_find(confluent, 1, "batch.size")->default_value,
                        "3000");
    assert_non_null(tb_config_find(debezium, 1, "schema.evolution"));
    assert_null(tb_config_find(debezium, 1, "pk.mode"));
}

/* The first message for key in errors, or NULL. */
static const char *first_error(const json_t *errors, const char *key)
{
    return json_string_value(json_array_get(json_object_get(errors, key), 0));
}

/* Debezium 3.6's keys beside 3.0's: each refusal names its key and why. */
static void test_debezium_36_validation_messages(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_jdbc_debezium_table};
    json_t *raw = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "connection.url",
        "jdbc:sqlite:/tmp/x.db", "collection.table.format", "${schema}_${table}",
        "connection.provider", "com.zaxxer.hikari.HikariCP", "table.naming.strategy",
        "my.Naming", "flush.max.retries", "-1", "field.include.list", "t:id",
        "database.time_zone", "Mars/Olympus", "connection.restart.on.errors", "maybe");
    json_object_set_new(raw, "field.exclude.list", json_string("name"));
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    tb_jdbc_debezium_validate(values, errors);
    assert_non_null(strstr(first_error(errors, "collection.table.format"),
                           "declares this key but does not read it"));
    assert_non_null(
        strstr(first_error(errors, "collection.table.format"), "collection.name.format"));
    assert_non_null(strstr(first_error(errors, "connection.provider"),
                           "org.hibernate.agroal.internal.AgroalConnectionProvider or "
                           "org.hibernate.c3p0.internal.C3P0ConnectionProvider)"));
    assert_non_null(strstr(first_error(errors, "table.naming.strategy"),
                           "the default collection naming only"));
    assert_string_equal(first_error(errors, "flush.max.retries"),
                        "Invalid value -1 for configuration flush.max.retries: Value "
                        "must be at least 0");
    assert_string_equal(first_error(errors, "field.exclude.list"),
                        "Cannot define both field.exclude.list and field.include.list. "
                        "Please specify only one.");
    assert_non_null(strstr(first_error(errors, "database.time_zone"), "Mars/Olympus"));
    assert_non_null(first_error(errors, "connection.restart.on.errors"));
    assert_int_equal(tb_config_error_count(errors), 7);
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

/* The settings Debezium's keys come to: 3.x names win over 3.0's, which
 * are read alone; flush.* and connection.restart.on.errors drive the
 * retries. */
static void test_debezium_36_settings(void **state)
{
    (void)state;
    tb_jdbc_settings_t s;
    char errstr[512] = "";
    json_t *both =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "connection.url",
                  "jdbc:sqlite:/tmp/x.db", "collection.name.format", "new_${topic}",
                  "table.name.format", "old_${topic}", "flush.max.retries", "2",
                  "flush.retry.delay.ms", "50", "connection.restart.on.errors", "true");
    assert_int_equal(tb_jdbc_debezium_settings_init(&s, both, errstr, sizeof(errstr)), 0);
    assert_string_equal(s.table_format, "new_${topic}");
    assert_int_equal(s.max_retries, 2);
    assert_int_equal(s.retry_backoff_ms, 50);
    assert_string_equal(s.retries_key, "flush.max.retries");
    assert_true(s.reconnect);
    assert_true(s.debezium);
    assert_int_equal(s.batch_size, 500);
    tb_jdbc_settings_clear(&s);

    json_t *old = json_pack("{s:s, s:s, s:s}", "connection.url", "jdbc:sqlite:/tmp/x.db",
                            "table.name.format", "old_${topic}", "database.time_zone",
                            "Mars/Olympus");
    assert_int_equal(tb_jdbc_debezium_settings_init(&s, old, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "configuration database.time_zone"));
    json_object_set_new(old, "database.time_zone", json_string("+02:00"));
    assert_int_equal(tb_jdbc_debezium_settings_init(&s, old, errstr, sizeof(errstr)), 0);
    assert_string_equal(s.table_format, "old_${topic}");
    assert_int_equal(s.max_retries, 5); /* Debezium's defaults */
    assert_int_equal(s.retry_backoff_ms, 1000);
    assert_false(s.reconnect);
    tb_jdbc_settings_clear(&s);

    /* Confluent's sink always reconnects, under its own keys */
    json_t *confluent = json_pack("{s:s}", "connection.url", "jdbc:sqlite:/tmp/x.db");
    assert_int_equal(tb_jdbc_settings_init(&s, confluent, errstr, sizeof(errstr)), 0);
    assert_true(s.reconnect);
    assert_string_equal(s.retries_key, "max.retries");
    tb_jdbc_settings_clear(&s);
    json_decref(both);
    json_decref(old);
    json_decref(confluent);
}

/* ---- the plugin against SQLite ---- */

typedef struct {
    int failed;
    char reason[512];
    int64_t offsets[8]; /* of the failed records, in their order */
    int64_t retry_ms;
    int delivered;         /* what failed_delivered answers */
    int delivered_asks;    /* how often it was asked */
    const char *path;      /* the database: failed records are reported */
    int rows_when_failing; /* rows committed when the last was reported */
} fake_t;

static int count_path_rows(const char *path);

static void record_failed(void *runtime, const tb_sink_record_t *record,
                          const char *reason)
{
    fake_t *f = runtime;
    f->offsets[f->failed++ % 8] = record->offset;
    snprintf(f->reason, sizeof(f->reason), "%s", reason);
    f->rows_when_failing = count_path_rows(f->path);
}

static int failed_delivered(void *runtime, char *errstr, size_t errstr_size)
{
    fake_t *f = runtime;
    f->delivered_asks++;
    if (f->delivered != 0) {
        snprintf(errstr, errstr_size, "the dead letter queue refused it");
    }
    return f->delivered;
}

static void retry_after(void *runtime, int64_t ms)
{
    ((fake_t *)runtime)->retry_ms = ms;
}

typedef struct {
    char path[64];
    fake_t fake;
    tb_task_context_t ctx;
    void *task;
    tb_schema_t *schema;
    tb_value_t *values[8];
    tb_sink_record_t records[8];
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    snprintf(f->path, sizeof(f->path), "/tmp/tb_jdbc_test_XXXXXX");
    close(mkstemp(f->path));
    f->fake.path = f->path;
    f->ctx = (tb_task_context_t){.connector = "c",
                                 .task = 0,
                                 .record_failed = record_failed,
                                 .failed_delivered = failed_delivered,
                                 .retry_after = retry_after,
                                 .runtime = &f->fake};
    f->schema = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_t *name = tb_schema_new(TB_TYPE_STRING);
    tb_schema_set_optional(name, true);
    tb_schema_add_field(f->schema, "id", tb_schema_new(TB_TYPE_INT32));
    tb_schema_add_field(f->schema, "name", name);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    if (f->task != NULL) {
        tb_jdbc_sink_plugin.task_stop(f->task);
    }
    for (size_t i = 0; i < 8; i++) {
        tb_value_free(f->values[i]);
    }
    tb_schema_decref(f->schema);
    unlink(f->path);
    free(f);
    return 0;
}

static void start(fixture_t *f, const char *extra_key, const char *extra_value)
{
    char url[128], errstr[512] = "";
    snprintf(url, sizeof(url), "jdbc:sqlite:%s", f->path);
    json_t *config =
        json_pack("{s:s, s:s}", "connection.url", url, "auto.create", "true");
    if (extra_key != NULL) {
        json_object_set_new(config, extra_key, json_string(extra_value));
    }
    int rc =
        tb_jdbc_sink_plugin.task_start(&f->ctx, config, &f->task, errstr, sizeof(errstr));
    json_decref(config);
    assert_int_equal(rc, 0);
}

/* Record i of the fixture: id and name (NULL: null), at offset. */
static void record(fixture_t *f, size_t i, int id, const char *name, int64_t offset)
{
    tb_value_free(f->values[i]);
    f->values[i] = tb_value_struct(f->schema);
    tb_value_struct_set(f->values[i], "id", tb_value_int(TB_TYPE_INT32, id));
    if (name != NULL) {
        tb_value_struct_set(f->values[i], "name", tb_value_string(name, strlen(name)));
    }
    f->records[i] = (tb_sink_record_t){.topic = "orders",
                                       .partition = 0,
                                       .offset = offset,
                                       .value_schema = f->schema,
                                       .value_data = f->values[i]};
}

static int count_rows(const fixture_t *f, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    int n = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
}

/* The committed rows of "orders" in the database at path (another
 * connection: what the writer's transaction has not committed is not
 * seen), -1 when there is no such table. */
static int count_path_rows(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    int n = -1;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM \"orders\"", -1, &stmt, NULL) ==
            SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
        n = sqlite3_column_int(stmt, 0);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
}

/* Creates "orders" whose name may not be null. */
static void create_strict_table(const fixture_t *f)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE \"orders\" (id INTEGER NOT NULL, "
                                  "name TEXT NOT NULL)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

/* Lets "orders" take a null name, keeping its rows. */
static void relax_table(const fixture_t *f)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "ALTER TABLE \"orders\" RENAME TO old; "
                                  "CREATE TABLE \"orders\" (id INTEGER, name TEXT); "
                                  "INSERT INTO \"orders\" SELECT * FROM old; "
                                  "DROP TABLE old",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

static int stored_offset(const fixture_t *f)
{
    return count_rows(f, "SELECT next_offset FROM \"__tributary_sink_offsets\"");
}

/* A put is one transaction with its offsets: open() finds them, and the
 * same records put again (a retry after a lost commit answer, or a task
 * that lost its partition) are not written twice. */
static void test_put_again_writes_nothing_twice(void **state)
{
    fixture_t *f = *state;
    char errstr[512] = "";
    start(f, NULL, NULL);
    for (size_t i = 0; i < 3; i++) {
        record(f, i, (int)i, "x", 10 + (int64_t)i);
    }
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 3, errstr, sizeof(errstr)), 0);
    tb_sink_partition_t parts[2] = {{.topic = "orders", .partition = 0, .offset = -1},
                                    {.topic = "orders", .partition = 1, .offset = -1}};
    assert_int_equal(tb_jdbc_sink_plugin.open(f->task, parts, 2, errstr, sizeof(errstr)),
                     0);
    assert_int_equal(parts[0].offset, 13);
    assert_int_equal(parts[1].offset, -1);

    record(f, 3, 3, "y", 13);
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records + 1, 3, errstr, sizeof(errstr)), 0);
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 4);
    assert_int_equal(count_rows(f, "SELECT count(DISTINCT id) FROM \"orders\""), 4);
    assert_int_equal(f->fake.failed, 0);
}

/* errors.tolerance=all: a row the database refuses, and a record that is
 * no row, go to record_failed with their reason, in their order, before the
 * commit, which waits for the dead letter queue; the rest of the put is
 * written. */
static void test_refused_row_is_reported_and_the_rest_written(void **state)
{
    fixture_t *f = *state;
    char errstr[512] = "";
    create_strict_table(f);
    f->ctx.tolerates_errors = true;
    start(f, NULL, NULL);
    record(f, 0, 1, "a", 0);
    record(f, 1, 2, NULL, 1);
    record(f, 2, 3, "c", 2);
    f->records[3] = (tb_sink_record_t){.topic = "orders", .partition = 0, .offset = 3};
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 4, errstr, sizeof(errstr)), 0);
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 2);
    assert_int_equal(f->fake.failed, 2);
    assert_int_equal(f->fake.offsets[0], 1);
    assert_int_equal(f->fake.offsets[1], 3);
    assert_int_equal(f->fake.rows_when_failing, 0); /* not committed yet */
    assert_int_equal(f->fake.delivered_asks, 1);
    assert_non_null(strstr(f->fake.reason, "struct with a schema")); /* the tombstone */
    assert_int_equal(stored_offset(f), 4);
}

/* errors.tolerance=all, and the dead letter queue does not take the failed
 * records: nothing of the put is committed, rows nor offsets, and the task
 * fails; the same put, once the queue takes them, writes the rest. */
static void test_undelivered_failures_commit_nothing(void **state)
{
    fixture_t *f = *state;
    char errstr[512] = "";
    create_strict_table(f);
    f->ctx.tolerates_errors = true;
    f->fake.delivered = -1;
    start(f, NULL, NULL);
    record(f, 0, 1, "a", 0);
    record(f, 1, 2, NULL, 1);
    record(f, 2, 3, "c", 2);
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 3, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "nothing of the put is committed"));
    assert_non_null(strstr(errstr, "the dead letter queue refused it"));
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 0);
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"__tributary_sink_offsets\""),
                     0);

    f->fake.delivered = 0;
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 3, errstr, sizeof(errstr)), 0);
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 2);
    assert_int_equal(stored_offset(f), 3);
}

/* errors.tolerance=none: the put stops at the refused row. The records
 * before it are committed with their offset, none from it on; put() fails
 * naming it. Once the table takes it, the put from there writes every row,
 * each once. */
static void test_refused_row_stops_the_put_without_tolerance(void **state)
{
    fixture_t *f = *state;
    char errstr[512] = "";
    create_strict_table(f);
    start(f, NULL, NULL);
    record(f, 0, 1, "a", 0);
    record(f, 1, 2, "b", 1);
    record(f, 2, 3, NULL, 2);
    record(f, 3, 4, "d", 3);
    record(f, 4, 5, "e", 4);
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 5, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "record orders-0 at offset 2 cannot be written"));
    assert_non_null(strstr(errstr, "NOT NULL"));
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 2);
    assert_int_equal(stored_offset(f), 2);
    assert_int_equal(f->fake.failed, 1);
    assert_int_equal(f->fake.offsets[0], 2);
    assert_int_equal(f->fake.delivered_asks, 0);

    relax_table(f);
    tb_jdbc_sink_plugin.task_stop(f->task);
    f->task = NULL;
    start(f, NULL, NULL);
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records + 2, 3, errstr, sizeof(errstr)), 0);
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 5);
    assert_int_equal(count_rows(f, "SELECT count(DISTINCT id) FROM \"orders\""), 5);
    assert_int_equal(stored_offset(f), 5);
}

/* errors.tolerance=none: a record that is no row (a tombstone without
 * delete.enabled) stops the put there too. */
static void test_record_without_row_stops_the_put_without_tolerance(void **state)
{
    fixture_t *f = *state;
    char errstr[512] = "";
    start(f, NULL, NULL);
    record(f, 0, 1, "a", 0);
    record(f, 1, 2, "b", 1);
    f->records[2] = (tb_sink_record_t){.topic = "orders", .partition = 0, .offset = 2};
    record(f, 3, 4, "d", 3);
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 4, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "record orders-0 at offset 2 cannot be written"));
    assert_int_equal(count_rows(f, "SELECT count(*) FROM \"orders\""), 2);
    assert_int_equal(stored_offset(f), 2);
    assert_int_equal(f->fake.failed, 1);
}

/* Without auto.evolve a new field stops the task with Confluent's reason. */
static void test_missing_column_without_auto_evolve(void **state)
{
    fixture_t *f = *state;
    char errstr[512] = "";
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "CREATE TABLE \"orders\" (id INTEGER)", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    start(f, NULL, NULL);
    record(f, 0, 1, "a", 0);
    assert_int_equal(
        tb_jdbc_sink_plugin.put(f->task, f->records, 1, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr,
                           "Table orders is missing fields (name) and auto-evolution is "
                           "disabled"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_postgres_url_maps_to_libpq),
        cmocka_unit_test(test_url_refusals_name_the_problem),
        cmocka_unit_test(test_redaction_hides_passwords),
        cmocka_unit_test(test_decimal_text),
        cmocka_unit_test(test_timezones),
        cmocka_unit_test(test_validation_messages),
        cmocka_unit_test(test_debezium_keys_are_confluents_renamed),
        cmocka_unit_test(test_debezium_36_validation_messages),
        cmocka_unit_test(test_debezium_36_settings),
        cmocka_unit_test_setup_teardown(test_put_again_writes_nothing_twice, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_row_is_reported_and_the_rest_written,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_undelivered_failures_commit_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_row_stops_the_put_without_tolerance,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_record_without_row_stops_the_put_without_tolerance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_column_without_auto_evolve, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
