/*
 * tb_jdbc.h - the parts of the JDBC sink, shared by its files only (the
 * plugin itself is tb_jdbc_sink_plugin, listed in plugins.c).
 *
 *   jdbc_sink.c     the plugin: task lifecycle, put, open and close, retries
 *   jdbc_config.c   the config table (Confluent's keys), cross-key checks,
 *                   the settings a task runs on
 *   jdbc_debezium.c Debezium's JDBC sink keys, as a second key set: its own,
 *                   and Confluent's under Debezium's names and defaults
 *   jdbc_url.c      connection.url: parsing, and its form without secrets
 *   jdbc_types.c    Connect types -> column types, values -> parameters
 *   jdbc_rows.c     a record -> the table, columns and values it writes
 *   jdbc_ddl.c      CREATE TABLE and ALTER TABLE ... ADD, the table cache
 *   jdbc_writer.c   a put's rows and offsets in one transaction
 *   jdbc_offsets.c  the offsets table: made, and changed by an operator
 *   jdbc_connect.c  connecting in bounded steps, connection.attempts
 *   jdbc_outage.c   a run of failures logged at its start, at growing
 *                   intervals and at its end, not at each try
 *   jdbc_pg.c       the PostgreSQL dialect (libpq)
 *   jdbc_sqlite.c   the SQLite dialect
 *   jdbc_metrics.c  rows, statements and their time, retries, per task
 *
 * Exactly-once: each put() is one database transaction that writes its rows
 * and, in the offsets table (TB_JDBC_OFFSETS_TABLE), the next offset of each
 * partition it read from; open() hands those offsets to the runtime, which
 * starts each partition there. Rows below a partition's stored offset were
 * written already (a retry after a commit whose answer was lost, or a task
 * that lost its partition) and are skipped.
 */
#ifndef TB_JDBC_H
#define TB_JDBC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"
#include "core/tb_config.h"
#include "core/tb_data.h"
#include "core/tb_metrics.h"
#include "core/tb_zone.h"

/* The table of offsets the connector owns in the target database. */
#define TB_JDBC_OFFSETS_TABLE "__tributary_sink_offsets"

/* ---- connection.url (jdbc_url.c) ---- */

typedef enum { TB_JDBC_POSTGRES = 0, TB_JDBC_SQLITE } tb_jdbc_kind_t;

/* A parsed connection.url. Every string is owned (tb_jdbc_url_clear). */
typedef struct {
    tb_jdbc_kind_t kind;
    char *path; /* SQLite: the database file, or ":memory:" */
    /* PostgreSQL: libpq's connection keywords and values (host, port,
     * dbname, and what the URL's parameters map to), count entries each */
    char **keywords;
    char **values;
    size_t count;
    int socket_timeout_s; /* the driver's socketTimeout; 0: not given */
} tb_jdbc_url_t;

/* Parses url into out (zeroed first). Returns 0, or -1 with the reason in
 * reason (which never contains a password). */
int tb_jdbc_url_parse(const char *url, tb_jdbc_url_t *out, char *reason,
                      size_t reason_size);

/* The value of libpq keyword in url, or NULL. Borrowed. */
const char *tb_jdbc_url_get(const tb_jdbc_url_t *url, const char *keyword);

/* Frees what url owns; a zeroed url is a no-op. */
void tb_jdbc_url_clear(tb_jdbc_url_t *url);

/* url as it may be logged: user info and every password parameter are
 * replaced by [hidden]. Always NUL-terminates out. */
void tb_jdbc_url_redact(const char *url, char *out, size_t out_size);

/* Checks url, key's value (NULL: nothing to check): one that cannot be
 * parsed adds Connect's "Invalid value <url> for configuration <key>:
 * <reason>" to errors, the URL shown without secrets (a table's check
 * would show it as written). Returns 0 with *kind, or -1. */
int tb_jdbc_url_validate(const char *url, const char *key, json_t *errors,
                         tb_jdbc_kind_t *kind);

/* A tb_config_def_t check of connection.url. */
int tb_jdbc_url_check(const json_t *value, char *reason, size_t reason_size);

/* ---- settings (jdbc_config.c) ---- */

typedef enum {
    TB_JDBC_INSERT = 0,
    TB_JDBC_UPSERT,
    TB_JDBC_UPDATE,
} tb_jdbc_insert_mode_t;

typedef enum {
    TB_JDBC_PK_NONE = 0,
    TB_JDBC_PK_KAFKA,
    TB_JDBC_PK_RECORD_KEY,
    TB_JDBC_PK_RECORD_VALUE,
} tb_jdbc_pk_mode_t;

/* What a task runs on, from its validated config. Owned by the task
 * (tb_jdbc_settings_clear). */
typedef struct {
    tb_jdbc_url_t url;
    char *shown_url; /* connection.url without secrets */
    char *user;      /* NULL: the URL's, or libpq's default */
    char *password;  /* NULL: none; never logged */
    /* the task's ctx->stopping (borrowed); NULL: a REST call's connection */
    const atomic_bool *stopping;
    int connection_attempts;
    long long connection_backoff_ms;
    tb_jdbc_insert_mode_t insert_mode;
    size_t batch_size; /* rows in one statement; 0 is read as 1 */
    bool delete_enabled;
    bool replace_null;    /* replace.null.with.default */
    char *table_format;   /* with ${topic} */
    json_t *pk_fields;    /* array of strings (a reference) */
    json_t *fields_allow; /* fields.whitelist, array of strings (a reference) */
    /* Debezium's field.include.list or field.exclude.list (a reference, NULL:
     * neither): entries "field" or "topic:field", keeping the fields they
     * match (field_include) or the others */
    json_t *field_filter;
    bool field_include;
    tb_jdbc_pk_mode_t pk_mode;
    bool auto_create;
    bool auto_evolve;
    bool quote;      /* quote.sql.identifiers=always */
    tb_zone_t *zone; /* db.timezone (owned) */
    int max_retries;
    long long retry_backoff_ms;
    /* the keys the two above come from, for messages (static strings):
     * max.retries and retry.backoff.ms, or Debezium's flush.* */
    const char *retries_key;
    const char *backoff_key;
    /* whether a connection lost while writing is opened again and the put
     * retried (Confluent's sink always; Debezium's with
     * connection.restart.on.errors=true), or fails the task */
    bool reconnect;
    /* Debezium's sink: change events are unwrapped, deletes and tombstones
     * without delete.enabled are skipped, a topic's dots become
     * underscores in its table's name */
    bool debezium;
} tb_jdbc_settings_t;

extern const tb_config_table_t tb_jdbc_sink_table;

/* The names of insert.mode and pk.mode, in the order of their enums,
 * NULL-terminated; Debezium's keys take the same. */
extern const char *const tb_jdbc_insert_modes[];
extern const char *const tb_jdbc_pk_modes[];

/* The plugin's checks across keys (tb_plugin_t.validate). */
void tb_jdbc_sink_validate(const json_t *values, json_t *errors);

/* Fills settings from a task's raw config. Returns 0, or -1 with every
 * problem in errstr. */
int tb_jdbc_settings_init(tb_jdbc_settings_t *settings, const json_t *config,
                          char *errstr, size_t errstr_size);

/* NULL-safe; a zeroed settings is a no-op. */
void tb_jdbc_settings_clear(tb_jdbc_settings_t *settings);

/* Debezium's key set (jdbc_debezium.c): its table (the keys it shares with
 * Confluent's, from tb_jdbc_sink_table's definitions, filled before main()
 * runs, then its own), its checks across keys, and the settings its keys
 * come to. */
extern const tb_config_table_t tb_jdbc_debezium_table;
/* Debezium's keys tributary refuses by name (tb_plugin_t.refused_keys). */
extern const char *const tb_jdbc_debezium_refused_keys[];
void tb_jdbc_debezium_validate(const json_t *values, json_t *errors);
int tb_jdbc_debezium_settings_init(tb_jdbc_settings_t *settings, const json_t *config,
                                   char *errstr, size_t errstr_size);

/* The zone db.timezone names: UTC (or Z, GMT, Etc/UTC, UTC+hh:mm...), a
 * fixed offset +hh:mm / -hh:mm, or a region of the tz database
 * (Europe/Paris; core/tb_zone.h). NULL with errstr. */
tb_zone_t *tb_jdbc_timezone_parse(const char *text, char *errstr, size_t errstr_size);

/* Whether text names UTC itself (UTC, +00:00, ...), not a zone that is UTC
 * only part of the year. */
bool tb_jdbc_timezone_is_utc(const char *text);

/* A tb_config_def_t check of a time zone key. */
int tb_jdbc_timezone_check(const json_t *value, char *reason, size_t reason_size);

/* ---- parameters and column types (jdbc_types.c) ---- */

typedef enum {
    TB_JDBC_P_NULL = 0,
    TB_JDBC_P_BOOL,
    TB_JDBC_P_INT,
    TB_JDBC_P_DOUBLE,
    TB_JDBC_P_TEXT,
    TB_JDBC_P_BLOB,
} tb_jdbc_param_kind_t;

/* One statement parameter. data is borrowed from the record's value, or
 * owned (owned set) when it had to be made (a decimal, a date). */
typedef struct {
    tb_jdbc_param_kind_t kind;
    int64_t i;        /* BOOL (0 or 1), INT */
    double d;         /* DOUBLE */
    const char *data; /* TEXT (NUL-terminated), BLOB */
    size_t len;
    char *owned;
} tb_jdbc_param_t;

/* The parameter of a value under schema (value NULL: a null). Returns 0, or
 * -1 with the reason (an ARRAY, MAP or STRUCT field has no column). */
int tb_jdbc_param_of(const tb_schema_t *schema, const tb_value_t *value,
                     const tb_zone_t *zone, tb_jdbc_param_t *out, char *reason,
                     size_t reason_size);

/* The column type of a Connect schema in PostgreSQL and in SQLite, NULL
 * when it has none (ARRAY, MAP, STRUCT). Static storage. */
const char *tb_jdbc_pg_type(const tb_schema_t *schema);
const char *tb_jdbc_sqlite_type(const tb_schema_t *schema);

/* Frees what p owns. */
void tb_jdbc_param_clear(tb_jdbc_param_t *p);

/* The decimal text of a Decimal's unscaled two's complement big-endian
 * bytes at scale ("-12.345"); a new string, NULL on no memory. */
char *tb_jdbc_decimal_text(const unsigned char *bytes, size_t len, int scale);

/* ---- rows (jdbc_rows.c) ---- */

/* One column of a row: its name, the schema its type comes from, whether it
 * is part of the primary key, and the value as a parameter. */
typedef struct {
    const char *name; /* borrowed from a schema or the settings */
    const tb_schema_t *schema;
    bool key;
    tb_jdbc_param_t param;
} tb_jdbc_column_t;

/* What one record writes. Key columns come first. */
typedef struct tb_jdbc_row {
    char *table;               /* owned */
    bool is_delete;            /* a tombstone with delete.enabled */
    tb_jdbc_column_t *columns; /* owned */
    size_t count;
    size_t key_count;
    size_t record; /* index of the record in its put */
} tb_jdbc_row_t;

/* The schemas of the Kafka coordinates columns (pk.mode=kafka), made once
 * per task. */
typedef struct {
    tb_schema_t *topic;
    tb_schema_t *partition;
    tb_schema_t *offset;
} tb_jdbc_kafka_schemas_t;

/* Builds the row of record. Returns 0; 1 when the record writes nothing
 * (Debezium's skipped events); or -1 with the reason the record cannot be
 * written (it then goes to record_failed): no struct value, a key that
 * pk.mode cannot use, a field type without a column. */
int tb_jdbc_row_build(const tb_jdbc_settings_t *s, const tb_jdbc_kafka_schemas_t *kafka,
                      const tb_sink_record_t *record, tb_jdbc_row_t *row, char *reason,
                      size_t reason_size);

/* Frees what row owns. */
void tb_jdbc_row_clear(tb_jdbc_row_t *row);

/* Whether a and b go to the same table with the same columns, so one
 * statement can write both. */
bool tb_jdbc_row_same_shape(const tb_jdbc_row_t *a, const tb_jdbc_row_t *b);

/* ---- dialects (jdbc_pg.c, jdbc_sqlite.c) ---- */

/* What a statement came to. */
typedef enum {
    TB_JDBC_OK = 0,
    TB_JDBC_FATAL = -1,  /* the task cannot go on (errstr) */
    TB_JDBC_BAD_ROW = 2, /* the data was refused: a constraint, a type */
    TB_JDBC_LOST = 3,    /* the connection broke, or could not be made */
    TB_JDBC_PENDING = 4, /* connecting, not done yet: ask again later */
    /* a put stopped at a failed record (errors.tolerance=none): the records
     * before it are written, the task fails (errstr names the record) */
    TB_JDBC_STOPPED = 5,
    /* the transaction met another and was rolled back (a serialization
     * failure, a deadlock, a busy SQLite file); the connection is fine */
    TB_JDBC_CONFLICT = 6,
} tb_jdbc_rc_t;

typedef struct tb_jdbc_conn tb_jdbc_conn_t;

typedef struct {
    const char *name;
    /* Starts one connection attempt, without waiting on the network. NULL
     * with errstr (LOST or FATAL in *rc); else a connection that
     * connect_poll finishes. */
    tb_jdbc_conn_t *(*connect)(const tb_jdbc_settings_t *s, const tb_limits_t *limits,
                               tb_jdbc_rc_t *rc, char *errstr, size_t errstr_size);
    /* Goes on with the attempt, waiting at most wait_ms for the server: OK
     * once the connection is ready, PENDING while it is not (errstr says
     * why), or LOST or FATAL with errstr (then disconnect it). An attempt
     * gives up by itself (LOST) after its connect timeout. */
    tb_jdbc_rc_t (*connect_poll)(tb_jdbc_conn_t *c, int wait_ms, char *errstr,
                                 size_t errstr_size);
    /* NULL is a no-op. */
    void (*disconnect)(tb_jdbc_conn_t *c);
    /* Runs one statement with n parameters. When rows is not NULL it gets a
     * new array of the result's rows, each an array of strings or nulls. */
    tb_jdbc_rc_t (*exec)(tb_jdbc_conn_t *c, const char *sql,
                         const tb_jdbc_param_t *params, size_t n, json_t **rows,
                         char *errstr, size_t errstr_size);
    /* Optional: writes rows[0..n) (of one shape) with sql, a COPY ... FROM
     * STDIN of their columns, faster than INSERT. */
    tb_jdbc_rc_t (*copy)(tb_jdbc_conn_t *c, const char *sql,
                         const struct tb_jdbc_row *const *rows, size_t n, char *errstr,
                         size_t errstr_size);
    /* The query of a table's column names, one row each, the name first:
     * parameter 1 is the table's schema (a null: the default one), 2 the
     * table's own name. No rows when the table does not exist. */
    const char *columns_sql;
    /* The column type of a Connect schema, NULL when it has none. */
    const char *(*column_type)(const tb_schema_t *schema);
    const char *begin;     /* starts a write transaction */
    const char *lock_rows; /* appended to a SELECT that locks its rows */
    char param_prefix;     /* of numbered parameters: $1 or ?1 */
    size_t max_params;     /* in one statement */
} tb_jdbc_dialect_t;

extern const tb_jdbc_dialect_t tb_jdbc_postgres;
extern const tb_jdbc_dialect_t tb_jdbc_sqlite;

/* ---- connecting (jdbc_connect.c) ---- */

/* A task's way to a connection, in bounded steps. Borrows everything it is
 * given; owns the attempt under way (tb_jdbc_connecting_cancel). */
typedef struct {
    const tb_jdbc_dialect_t *dialect;
    const tb_jdbc_settings_t *settings;
    const tb_limits_t *limits;
    const char *connector; /* for its log lines */
    int task;
    tb_jdbc_conn_t *pending; /* the attempt under way, or NULL */
    int attempt;             /* attempts made in the current series */
    int attempts;            /* its bound: connection.attempts, 1 once connected */
    int64_t next_at_ms;      /* when the next attempt may start */
} tb_jdbc_connecting_t;

void tb_jdbc_connecting_init(tb_jdbc_connecting_t *c, const tb_jdbc_dialect_t *dialect,
                             const tb_jdbc_settings_t *settings,
                             const tb_limits_t *limits, const char *connector, int task);

/* Goes on connecting for at most about step_ms: OK with *out the ready
 * connection (the caller's); PENDING with errstr saying what it waits for
 * and *wait_ms how long until another step is worth it (an attempt under
 * way, or the backoff before the next); LOST when the series' attempts are
 * spent, or FATAL, with errstr (the next step starts a new series). A
 * failed attempt before the last is logged. */
tb_jdbc_rc_t tb_jdbc_connect_step(tb_jdbc_connecting_t *c, int step_ms,
                                  tb_jdbc_conn_t **out, int64_t *wait_ms, char *errstr,
                                  size_t errstr_size);

/* Drops the attempt under way, if any. */
void tb_jdbc_connecting_cancel(tb_jdbc_connecting_t *c);

/* One attempt, waited for until it succeeds or gives up (its connect
 * timeout): for a caller that may block (a REST request), never a task. */
tb_jdbc_conn_t *tb_jdbc_connect_blocking(const tb_jdbc_dialect_t *d,
                                         const tb_jdbc_settings_t *s,
                                         const tb_limits_t *limits, tb_jdbc_rc_t *rc,
                                         char *errstr, size_t errstr_size);

/* ---- failures told to the operator (jdbc_outage.c) ---- */

/* A task's current run of failed tries (a lost or silent database), if
 * any. Borrows connector. */
typedef struct {
    const char *connector;
    int task;
    int64_t since_ms;     /* when the run began (tb_monotonic_ms); 0: none */
    int64_t notice_at_ms; /* when a failure is logged again */
    int64_t gap_ms;       /* the wait before the notice after that one */
} tb_jdbc_outage_t;

void tb_jdbc_outage_init(tb_jdbc_outage_t *o, const char *connector, int task);

/* A failed try, why: logged (WARN) when it begins a run, or when the run
 * has lasted until its next notice (10 s, then twice the last gap each
 * time); not logged otherwise. */
void tb_jdbc_outage_failed(tb_jdbc_outage_t *o, const char *reason);

/* A try that worked: a run under way is over, logged once (INFO) as what
 * and how long the run lasted. Returns whether one was. */
bool tb_jdbc_outage_over(tb_jdbc_outage_t *o, const char *what);

/* ---- DDL (jdbc_ddl.c) ---- */

/* The tables a task has seen and their columns. */
typedef struct {
    json_t *tables; /* table name -> object of column name -> true */
} tb_jdbc_tables_t;

/* Makes sure row's table exists with row's columns: creates it
 * (auto.create) or adds the columns it lacks (auto.evolve), else fails
 * with Confluent's reason. Returns what the dialect returned. */
tb_jdbc_rc_t tb_jdbc_ddl_ensure(tb_jdbc_tables_t *cache, const tb_jdbc_dialect_t *d,
                                tb_jdbc_conn_t *c, const tb_jdbc_settings_t *s,
                                const tb_jdbc_row_t *row, char *errstr,
                                size_t errstr_size);

/* Forgets every table (after a reconnect, or a failed statement). */
void tb_jdbc_ddl_forget(tb_jdbc_tables_t *cache);

/* A statement being written: data grows as text is appended, and is NULL
 * (freed) once memory ran out, so a writer checks once at the end.
 * Zero-initialise to start; free with tb_jdbc_sql_free. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} tb_jdbc_sql_t;

/* Appends name to sql as an identifier (quoted when quote, or when it is
 * not a plain identifier, with its quotes doubled; a dotted name is a
 * schema and a table). */
void tb_jdbc_sql_identifier(tb_jdbc_sql_t *sql, const char *name, bool quote);

/* Appends len bytes of data to sql, as they are. */
void tb_jdbc_sql_bytes(tb_jdbc_sql_t *sql, const void *data, size_t len);

/* Frees sql's text and zeroes it. */
void tb_jdbc_sql_free(tb_jdbc_sql_t *sql);

/* Appends printf text to sql. */
__attribute__((format(printf, 2, 3))) void tb_jdbc_sql_append(tb_jdbc_sql_t *sql,
                                                              const char *fmt, ...);

/* ---- metrics (jdbc_metrics.c) ---- */

typedef struct {
    tb_series_t *rows_written;
    tb_series_t *rows_skipped;
    tb_series_t *statements;
    tb_series_t *retries;
    tb_series_t *statement_seconds;
    tb_series_t *transaction_rows;
} tb_jdbc_metrics_t;

/* Takes the series of a task; release them with tb_jdbc_metrics_release
 * (a zeroed m is a no-op). */
void tb_jdbc_metrics_take(tb_jdbc_metrics_t *m, const char *connector, int task);
void tb_jdbc_metrics_release(tb_jdbc_metrics_t *m);

/* ---- the writer (jdbc_writer.c) ---- */

/* A failed record: its index in the put and why. */
typedef struct {
    size_t record;
    char reason[512];
} tb_jdbc_failure_t;

typedef struct {
    const tb_jdbc_dialect_t *dialect;
    tb_jdbc_conn_t *conn;
    const tb_jdbc_settings_t *settings;
    const char *connector;
    /* the task's, where failed records go (borrowed); NULL for a writer
     * that only changes offsets */
    const tb_task_context_t *ctx;
    tb_jdbc_tables_t tables;
    tb_jdbc_failure_t *failures; /* of the last write */
    size_t failure_count;
    size_t failure_cap;
    size_t skipped;             /* rows of the last write already written before */
    tb_jdbc_metrics_t *metrics; /* borrowed */
} tb_jdbc_writer_t;

/* Creates the offsets table when it is missing (jdbc_offsets.c). */
tb_jdbc_rc_t tb_jdbc_offsets_prepare(tb_jdbc_writer_t *w, char *errstr,
                                     size_t errstr_size);

/* Changes the connector's rows of the offsets table in one transaction, as
 * tb_sink_offsets_change_t.offsets says (NULL: deletes them all; an offset
 * of -1 deletes that partition's row) (jdbc_offsets.c). */
tb_jdbc_rc_t tb_jdbc_offsets_change(tb_jdbc_writer_t *w, const json_t *offsets,
                                    char *errstr, size_t errstr_size);

/* Fills each partition's offset with the next offset stored for it (left
 * alone when none is). */
tb_jdbc_rc_t tb_jdbc_offsets_read(tb_jdbc_writer_t *w, tb_sink_partition_t *parts,
                                  size_t count, char *errstr, size_t errstr_size);

/* Writes rows (built from the records of one put, in their order; the
 * records that are no row are in w->failures already, in their order) and
 * the next offsets of records' partitions in one transaction. A row the
 * database refuses is added to w->failures. Failed records go to
 * w->ctx->record_failed before the commit. Under errors.tolerance=none the
 * first one stops the put: the records before it are written and
 * TB_JDBC_STOPPED returned with errstr naming it. Under all, the others
 * are written once the failed ones are in the dead letter queue
 * (w->ctx->failed_delivered). On anything but TB_JDBC_OK and
 * TB_JDBC_STOPPED nothing is written. */
tb_jdbc_rc_t tb_jdbc_write(tb_jdbc_writer_t *w, const tb_sink_record_t *records,
                           size_t count, tb_jdbc_row_t *rows, size_t row_count,
                           char *errstr, size_t errstr_size);

/* Records that record failed with reason, for the last write. -1 on no
 * memory. */
int tb_jdbc_writer_fail(tb_jdbc_writer_t *w, size_t record, const char *reason);

/* Frees what w owns (not the connection). */
void tb_jdbc_writer_clear(tb_jdbc_writer_t *w);

#endif
