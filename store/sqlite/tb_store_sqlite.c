/*
 * tb_store_sqlite.c - the store of a standalone worker, kept in one SQLite
 * file (see tb_store.h for the contract).
 *
 * Schema (version 2):
 *   connectors (name PK, config JSON object, target_state name,
 *               task_configs JSON array, updated_at)
 *   status     (connector, task_id with -1 for the connector itself,
 *               state name, trace or NULL, updated_at), PK (connector, task_id)
 *   offsets    (connector, partition_key, offset_value, updated_at),
 *               PK (connector, partition_key)
 *   meta       (key PK, value): facts about the store itself; "mode" is
 *               "kafka" or "dev" (tb_store_mode_bind), absent until bound
 * Task configs live in one JSON array column of their connector: they are
 * only ever replaced as a whole and read with the connector, and deleting
 * the connector row deletes them with it. partition_key is the canonical
 * JSON text of the partition (keys sorted, compact), so the same partition
 * written with its keys in another order is the same row. Offsets are not
 * tied to a connector row: they outlive the connector, as in Connect.
 *
 * Concurrency: the connection is opened SQLITE_OPEN_NOMUTEX and every call
 * holds the store's own mutex instead. SQLite's FULLMUTEX serialises single
 * API calls only, but one store call is a sequence of them (BEGIN, bind,
 * step, reset, COMMIT on cached statements), and another thread must not
 * slip its statements into that sequence or into our transaction.
 */
#include "store/tb_store.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "core/tb_metrics.h"
#include "core/tb_seam.h"
#include "core/tb_state.h"
#include "store/sqlite/tb_sqlite_checkpointer.h"
#include "store/tb_store_backend.h"

#define TB_WHY_SIZE 256
#define TB_BUSY_TIMEOUT_MS 5000
#define TB_NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/* Schema migrations: step i takes a file from user_version i to i + 1, in
 * one transaction. Append new steps; never edit one that has shipped. */
static const char *const tb_migrations[] = {
    "CREATE TABLE connectors ("
    " name TEXT PRIMARY KEY NOT NULL,"
    " config TEXT NOT NULL,"
    " target_state TEXT NOT NULL,"
    " task_configs TEXT NOT NULL DEFAULT '[]',"
    " updated_at TEXT NOT NULL);"
    "CREATE TABLE status ("
    " connector TEXT NOT NULL,"
    " task_id INTEGER NOT NULL CHECK (task_id >= -1),"
    " state TEXT NOT NULL,"
    " trace TEXT,"
    " updated_at TEXT NOT NULL,"
    " PRIMARY KEY (connector, task_id)) WITHOUT ROWID;"
    "CREATE TABLE offsets ("
    " connector TEXT NOT NULL,"
    " partition_key TEXT NOT NULL,"
    " offset_value TEXT NOT NULL,"
    " updated_at TEXT NOT NULL,"
    " PRIMARY KEY (connector, partition_key)) WITHOUT ROWID;",
    "CREATE TABLE meta ("
    " key TEXT PRIMARY KEY NOT NULL,"
    " value TEXT NOT NULL) WITHOUT ROWID;",
};

#define TB_SCHEMA_VERSION ((int)(sizeof(tb_migrations) / sizeof(tb_migrations[0])))

/* The statements every call uses, prepared once at open. */
typedef enum {
    TB_SQL_CONNECTOR_UPSERT = 0,
    TB_SQL_CONNECTOR_DELETE,
    TB_SQL_CONNECTORS_SELECT,
    TB_SQL_STATUS_UPSERT,
    TB_SQL_STATUS_DELETE,
    TB_SQL_STATUS_SELECT,
    TB_SQL_OFFSET_UPSERT,
    TB_SQL_OFFSET_DELETE,
    TB_SQL_OFFSETS_SELECT,
    TB_SQL_OFFSETS_DELETE,
    TB_SQL_META_SELECT,
    TB_SQL_META_INSERT,
    TB_SQL_CONTENT_SELECT,
    TB_SQL__COUNT,
} tb_sql_t;

static const char *const tb_sql[TB_SQL__COUNT] = {
    [TB_SQL_CONNECTOR_UPSERT] =
        "INSERT INTO connectors (name, config, target_state, task_configs,"
        " updated_at) VALUES (?1, ?2, ?3, ?4, " TB_NOW ")"
        " ON CONFLICT (name) DO UPDATE SET"
        " config = excluded.config, target_state = excluded.target_state,"
        " task_configs = excluded.task_configs, updated_at = excluded.updated_at",
    [TB_SQL_CONNECTOR_DELETE] = "DELETE FROM connectors WHERE name = ?1",
    [TB_SQL_CONNECTORS_SELECT] =
        "SELECT name, config, target_state, task_configs FROM connectors"
        " ORDER BY name",
    [TB_SQL_STATUS_UPSERT] =
        "INSERT INTO status (connector, task_id, state, trace, updated_at)"
        " VALUES (?1, ?2, ?3, ?4, " TB_NOW ")"
        " ON CONFLICT (connector, task_id) DO UPDATE SET"
        " state = excluded.state, trace = excluded.trace,"
        " updated_at = excluded.updated_at",
    [TB_SQL_STATUS_DELETE] = "DELETE FROM status WHERE connector = ?1",
    [TB_SQL_STATUS_SELECT] =
        "SELECT task_id, state, trace FROM status WHERE connector = ?1"
        " ORDER BY task_id",
    [TB_SQL_OFFSET_UPSERT] =
        "INSERT INTO offsets (connector, partition_key, offset_value,"
        " updated_at) VALUES (?1, ?2, ?3, " TB_NOW ")"
        " ON CONFLICT (connector, partition_key) DO UPDATE SET"
        " offset_value = excluded.offset_value,"
        " updated_at = excluded.updated_at",
    [TB_SQL_OFFSET_DELETE] =
        "DELETE FROM offsets WHERE connector = ?1 AND partition_key = ?2",
    [TB_SQL_OFFSETS_SELECT] = "SELECT partition_key, offset_value FROM offsets"
                              " WHERE connector = ?1 ORDER BY partition_key",
    [TB_SQL_OFFSETS_DELETE] = "DELETE FROM offsets WHERE connector = ?1",
    [TB_SQL_META_SELECT] = "SELECT value FROM meta WHERE key = ?1",
    [TB_SQL_META_INSERT] = "INSERT INTO meta (key, value) VALUES (?1, ?2)",
    [TB_SQL_CONTENT_SELECT] = "SELECT EXISTS (SELECT 1 FROM connectors)"
                              " OR EXISTS (SELECT 1 FROM status)"
                              " OR EXISTS (SELECT 1 FROM offsets)",
};

/* The write transactions, timed by tributary_store_write_seconds under
 * their operation label. TB_WRITE_NONE is a read (no transaction). */
typedef enum {
    TB_WRITE_NONE = 0,
    TB_WRITE_CONNECTOR_PUT,
    TB_WRITE_CONNECTOR_DELETE,
    TB_WRITE_STATUS_PUT,
    TB_WRITE_OFFSETS_PUT,
    TB_WRITE_OFFSETS_DELETE,
    TB_WRITE_MODE_BIND,
    TB_WRITE__COUNT,
} tb_write_t;

static const char *const tb_write_names[TB_WRITE__COUNT] = {
    [TB_WRITE_CONNECTOR_PUT] = "connector_put",
    [TB_WRITE_CONNECTOR_DELETE] = "connector_delete",
    [TB_WRITE_STATUS_PUT] = "status_put",
    [TB_WRITE_OFFSETS_PUT] = "offsets_put",
    [TB_WRITE_OFFSETS_DELETE] = "offsets_delete",
    [TB_WRITE_MODE_BIND] = "mode_bind",
};

static const char *const tb_write_labels[] = {"operation", NULL};
static const double tb_write_buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                          0.005,  0.01,    0.025,  0.05,  0.1,
                                          0.25,   0.5,     1,      5};
static const tb_metric_def_t tb_write_seconds = {
    .name = "tributary_store_write_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "One store write transaction, BEGIN IMMEDIATE to COMMIT (or rollback), "
            "by operation.",
    .labels = tb_write_labels,
    .buckets = tb_write_buckets,
    .bucket_count = sizeof(tb_write_buckets) / sizeof(tb_write_buckets[0])};

typedef struct {
    tb_store_t base;      /* first: the ops table */
    pthread_mutex_t lock; /* held for the whole of every call */
    sqlite3 *db;
    sqlite3_stmt *stmts[TB_SQL__COUNT];
    bool sync_full; /* PRAGMA synchronous is FULL, not NORMAL */
    /* Checkpoints the log on its own thread; started last at open. */
    tb_sqlite_checkpointer_t *checkpointer;
    /* Taken at open, released at close; [TB_WRITE_NONE] stays NULL. */
    tb_series_t *write_seconds[TB_WRITE__COUNT];
} tb_sqlite_t;

/* The body of one store call, run by tb_store_run under the lock. Fills
 * why and returns -1 on failure. */
typedef int (*tb_store_fn)(tb_sqlite_t *store, void *arg, char *why, size_t why_size);

static int tb_why_db(const tb_sqlite_t *store, char *why, size_t why_size)
{
    snprintf(why, why_size, "%s", sqlite3_errmsg(store->db));
    return -1;
}

static int tb_exec(tb_sqlite_t *store, const char *sql, char *why, size_t why_size)
{
    if (sqlite3_exec(store->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        return tb_why_db(store, why, why_size);
    }
    return 0;
}

static void tb_rollback(tb_sqlite_t *store)
{
    if (!sqlite3_get_autocommit(store->db)) {
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    }
}

/* Binds text that outlives the statement's next step. */
static int tb_bind_text(sqlite3_stmt *stmt, int index, const char *text)
{
    return sqlite3_bind_text(stmt, index, text, -1, SQLITE_STATIC) == SQLITE_OK ? 0 : -1;
}

/* Steps a statement that returns no row and resets it for the next call. */
static int tb_step_done(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);

    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? 0 : -1;
}

static double tb_seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) +
           (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The test seam TB_SEAM_STORE_CRASH_AFTER (tb_seam.h). */
static void tb_crash_seam(tb_write_t write)
{
    const char *at = tb_seam(TB_SEAM_STORE_CRASH_AFTER);
    if (write != TB_WRITE_NONE && at != NULL && strcmp(at, tb_write_names[write]) == 0) {
        raise(SIGKILL);
    }
}

/* What a commit survives (docs/OPERATIONS.md, "Durability"). A config
 * write was acknowledged to an operator and is rare: it syncs the WAL
 * (synchronous=FULL) and survives power loss too. Offsets and statuses are
 * written at every flush and state change: NORMAL, durable against a crash
 * of the process; power loss may take the last ones back, which only makes
 * tasks redo work since then, as a crash before a flush would. */
static int tb_sync_for(tb_sqlite_t *store, tb_write_t write, char *why, size_t why_size)
{
    bool full = write == TB_WRITE_CONNECTOR_PUT || write == TB_WRITE_CONNECTOR_DELETE ||
                write == TB_WRITE_MODE_BIND;
    if (full == store->sync_full) {
        return 0;
    }
    if (tb_exec(store, full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                why, why_size) != 0) {
        return -1;
    }
    store->sync_full = full;
    return 0;
}

/* Runs fn under the lock, inside BEGIN IMMEDIATE ... COMMIT when write is
 * not TB_WRITE_NONE (rolled back when anything fails), and reports a
 * failure as "store: <op> '<name>': <why>". A write transaction is timed
 * from BEGIN to its COMMIT or rollback, failed ones too; waiting for the
 * lock is not part of it. */
static int tb_store_run(tb_sqlite_t *store, const char *op, const char *name,
                        tb_write_t write, tb_store_fn fn, void *arg, char *errstr,
                        size_t errstr_size)
{
    char why[TB_WHY_SIZE] = "";
    struct timespec start;

    pthread_mutex_lock(&store->lock);
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (write && (tb_sync_for(store, write, why, sizeof(why)) != 0 ||
                  tb_exec(store, "BEGIN IMMEDIATE", why, sizeof(why)) != 0)) {
        goto fail;
    }
    if (fn(store, arg, why, sizeof(why)) != 0) {
        goto fail;
    }
    if (write && tb_exec(store, "COMMIT", why, sizeof(why)) != 0) {
        goto fail;
    }
    tb_series_observe(store->write_seconds[write], tb_seconds_since(&start));
    tb_crash_seam(write);
    pthread_mutex_unlock(&store->lock);
    return 0;
fail:
    tb_rollback(store);
    tb_series_observe(store->write_seconds[write], tb_seconds_since(&start));
    pthread_mutex_unlock(&store->lock);
    tb_store_error(errstr, errstr_size, op, name, why);
    return -1;
}

/* Runs a query returning one value and copies it, as text, into out. */
static int tb_query_text(tb_sqlite_t *store, const char *sql, char *out, size_t out_size,
                         char *why, size_t why_size)
{
    sqlite3_stmt *stmt = NULL;
    int rc = -1;

    if (sqlite3_prepare_v2(store->db, sql, -1, &stmt, NULL) != SQLITE_OK ||
        sqlite3_step(stmt) != SQLITE_ROW) {
        tb_why_db(store, why, why_size);
        goto fail;
    }
    snprintf(out, out_size, "%s", (const char *)sqlite3_column_text(stmt, 0));
    rc = 0;
fail:
    sqlite3_finalize(stmt);
    return rc;
}

/* Applies the next pending migration in its own transaction and sets
 * *version to the schema version the file is left at. The version is read
 * under the write lock, so two processes opening one file cannot both
 * apply a step. */
static int tb_migrate_step(tb_sqlite_t *store, int *version, char *why, size_t why_size)
{
    char text[32];
    char sql[64];

    if (tb_exec(store, "BEGIN IMMEDIATE", why, why_size) != 0) {
        goto fail;
    }
    if (tb_query_text(store, "PRAGMA user_version", text, sizeof(text), why, why_size) !=
        0) {
        goto fail;
    }
    *version = atoi(text);
    if (*version > TB_SCHEMA_VERSION) {
        snprintf(why, why_size,
                 "store schema version %d is newer than this build "
                 "supports (%d)",
                 *version, TB_SCHEMA_VERSION);
        goto fail;
    }
    if (*version < TB_SCHEMA_VERSION) {
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", *version + 1);
        if (tb_exec(store, tb_migrations[*version], why, why_size) != 0 ||
            tb_exec(store, sql, why, why_size) != 0) {
            goto fail;
        }
        *version += 1;
    }
    if (tb_exec(store, "COMMIT", why, why_size) != 0) {
        goto fail;
    }
    return 0;
fail:
    tb_rollback(store);
    return -1;
}

static int tb_migrate(tb_sqlite_t *store, char *why, size_t why_size)
{
    int version = 0;

    do {
        if (tb_migrate_step(store, &version, why, why_size) != 0) {
            return -1;
        }
    } while (version < TB_SCHEMA_VERSION);
    return 0;
}

/* WAL lets readers run beside the writer and makes a commit one append to
 * the log. synchronous=NORMAL then syncs the log at checkpoints only: a
 * committed transaction is in the WAL file (in the OS page cache) when
 * the call returns, so it survives a crash or SIGKILL of the process, which
 * is the guarantee tb_store.h makes; power loss or an OS crash can lose the
 * last commits, never corrupt the file. tb_sync_for() raises it to FULL (a
 * sync of the log at every commit) for config writes. Checkpoints, and
 * their syncs, run on tb_sqlite_checkpointer's thread, never in a commit.
 * Foreign keys are off by default in SQLite; turning them on keeps any
 * reference a later migration declares enforced. */
static int tb_configure(tb_sqlite_t *store, char *why, size_t why_size)
{
    char mode[16];

    sqlite3_busy_timeout(store->db, TB_BUSY_TIMEOUT_MS);
    if (tb_query_text(store, "PRAGMA journal_mode = WAL", mode, sizeof(mode), why,
                      why_size) != 0) {
        return -1;
    }
    if (sqlite3_stricmp(mode, "wal") != 0) {
        snprintf(why, why_size, "cannot use WAL journal mode (got %s)", mode);
        return -1;
    }
    return tb_exec(store, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", why,
                   why_size);
}

static int tb_prepare_all(tb_sqlite_t *store, char *why, size_t why_size)
{
    for (int i = 0; i < TB_SQL__COUNT; i++) {
        if (sqlite3_prepare_v3(store->db, tb_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                               &store->stmts[i], NULL) != SQLITE_OK) {
            return tb_why_db(store, why, why_size);
        }
    }
    return 0;
}

static int tb_store_setup(tb_sqlite_t *store, const char *path, char *why,
                          size_t why_size)
{
    if (sqlite3_open_v2(path, &store->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        return tb_why_db(store, why, why_size);
    }
    if (tb_configure(store, why, why_size) != 0 ||
        tb_migrate(store, why, why_size) != 0 ||
        tb_prepare_all(store, why, why_size) != 0) {
        return -1;
    }
    store->checkpointer = tb_sqlite_checkpointer_start(store->db, path, why, why_size);
    return store->checkpointer != NULL ? 0 : -1;
}

static void tb_sqlite_close(tb_store_t *base)
{
    tb_sqlite_t *store = (tb_sqlite_t *)base;

    tb_sqlite_checkpointer_stop(store->checkpointer);
    for (int i = 0; i < TB_SQL__COUNT; i++) {
        sqlite3_finalize(store->stmts[i]);
    }
    sqlite3_close(store->db);
    for (int i = 0; i < TB_WRITE__COUNT; i++) {
        tb_series_release(store->write_seconds[i]);
    }
    pthread_mutex_destroy(&store->lock);
    free(store);
}

/* ---- connectors ---- */

/* A connector row as the statement binds it. */
typedef struct {
    const char *name;
    char *config;       /* canonical JSON text */
    const char *target; /* its name */
    char *task_configs; /* canonical JSON text */
} tb_row_arg_t;

static int tb_connector_put_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    const tb_row_arg_t *a = arg;
    sqlite3_stmt *stmt = store->stmts[TB_SQL_CONNECTOR_UPSERT];

    if (tb_bind_text(stmt, 1, a->name) != 0 || tb_bind_text(stmt, 2, a->config) != 0 ||
        tb_bind_text(stmt, 3, a->target) != 0 ||
        tb_bind_text(stmt, 4, a->task_configs) != 0 || tb_step_done(stmt) != 0) {
        return tb_why_db(store, why, why_size);
    }
    return 0;
}

static int tb_sqlite_connector_put(tb_store_t *base,
                                   const tb_store_connector_t *connector, char *errstr,
                                   size_t errstr_size)
{
    tb_sqlite_t *store = (tb_sqlite_t *)base;
    tb_row_arg_t arg = {connector->name, NULL, NULL, NULL};
    int rc = -1;

    arg.config = json_dumps(connector->config, TB_STORE_JSON_CANONICAL);
    arg.target = tb_target_state_name(connector->target);
    arg.task_configs = json_dumps(connector->task_configs, TB_STORE_JSON_CANONICAL);
    if (arg.config != NULL && arg.task_configs != NULL) {
        rc = tb_store_run(store, "put connector", connector->name, TB_WRITE_CONNECTOR_PUT,
                          tb_connector_put_fn, &arg, errstr, errstr_size);
    } else {
        tb_store_error(errstr, errstr_size, "put connector", connector->name,
                       "out of memory");
    }
    free(arg.config);
    free(arg.task_configs);
    return rc;
}

static int tb_connector_delete_fn(tb_sqlite_t *store, void *arg, char *why,
                                  size_t why_size)
{
    const char *name = arg;
    sqlite3_stmt *config = store->stmts[TB_SQL_CONNECTOR_DELETE];
    sqlite3_stmt *status = store->stmts[TB_SQL_STATUS_DELETE];

    if (tb_bind_text(config, 1, name) != 0 || tb_step_done(config) != 0 ||
        tb_bind_text(status, 1, name) != 0 || tb_step_done(status) != 0) {
        return tb_why_db(store, why, why_size);
    }
    return 0;
}

static int tb_sqlite_connector_delete(tb_store_t *base, const char *name, char *errstr,
                                      size_t errstr_size)
{
    return tb_store_run((tb_sqlite_t *)base, "delete connector", name,
                        TB_WRITE_CONNECTOR_DELETE, tb_connector_delete_fn, (void *)name,
                        errstr, errstr_size);
}

/* Appends the connector of the current row to list as
 * {"name","config","target","task_configs"}. */
/* Decodes the current row of a SELECT into into; -1 with why when it cannot. */
typedef int (*tb_row_fn)(sqlite3_stmt *stmt, json_t *into, char *why, size_t why_size);

/* Steps stmt, with its parameter 1 bound to key unless key is NULL, and
 * decodes each row with row(); resets stmt. Returns 0, or -1 with why. */
static int tb_select_each(tb_sqlite_t *store, sqlite3_stmt *stmt, const char *key,
                          tb_row_fn row, json_t *into, char *why, size_t why_size)
{
    int result = -1;
    int rc;

    if (key != NULL && tb_bind_text(stmt, 1, key) != 0) {
        tb_why_db(store, why, why_size);
        goto done;
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (row(stmt, into, why, why_size) != 0) {
            goto done;
        }
    }
    if (rc != SQLITE_DONE) {
        tb_why_db(store, why, why_size);
        goto done;
    }
    result = 0;
done:
    sqlite3_reset(stmt);
    return result;
}

static int tb_load_row(sqlite3_stmt *stmt, json_t *list, char *why, size_t why_size)
{
    const char *name = (const char *)sqlite3_column_text(stmt, 0);
    const char *target_name = (const char *)sqlite3_column_text(stmt, 2);
    json_t *config = json_loads((const char *)sqlite3_column_text(stmt, 1), 0, NULL);
    json_t *tasks = json_loads((const char *)sqlite3_column_text(stmt, 3), 0, NULL);
    tb_target_state_t target;
    int rc = -1;

    if (tb_target_state_parse(target_name, &target) != 0) {
        snprintf(why, why_size, "connector '%s' has unknown target state '%s'", name,
                 target_name);
        goto fail;
    }
    if (!json_is_object(config) || !json_is_array(tasks)) {
        snprintf(why, why_size, "connector '%s' has a corrupt config", name);
        goto fail;
    }
    if (json_array_append_new(list, json_pack("{s:s, s:O, s:i, s:O}", "name", name,
                                              "config", config, "target", (int)target,
                                              "task_configs", tasks)) != 0) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    rc = 0;
fail:
    json_decref(config);
    json_decref(tasks);
    return rc;
}

static int tb_connectors_load_fn(tb_sqlite_t *store, void *arg, char *why,
                                 size_t why_size)
{
    return tb_select_each(store, store->stmts[TB_SQL_CONNECTORS_SELECT], NULL,
                          tb_load_row, arg, why, why_size);
}

static int tb_sqlite_connectors_list(tb_store_t *base, json_t *list, char *errstr,
                                     size_t errstr_size)
{
    return tb_store_run((tb_sqlite_t *)base, "load connectors", NULL, TB_WRITE_NONE,
                        tb_connectors_load_fn, list, errstr, errstr_size);
}

/* ---- status ---- */

typedef struct {
    const char *name;
    int task_id;
    const char *state;
    const char *trace;
} tb_status_arg_t;

static int tb_status_put_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    const tb_status_arg_t *a = arg;
    sqlite3_stmt *stmt = store->stmts[TB_SQL_STATUS_UPSERT];

    /* A NULL trace binds SQL NULL. */
    if (tb_bind_text(stmt, 1, a->name) != 0 ||
        sqlite3_bind_int(stmt, 2, a->task_id) != SQLITE_OK ||
        tb_bind_text(stmt, 3, a->state) != 0 || tb_bind_text(stmt, 4, a->trace) != 0 ||
        tb_step_done(stmt) != 0) {
        return tb_why_db(store, why, why_size);
    }
    return 0;
}

static int tb_sqlite_status_put(tb_store_t *base, const char *name, int task_id,
                                tb_state_t state, const char *trace, char *errstr,
                                size_t errstr_size)
{
    tb_status_arg_t arg = {name, task_id, tb_state_name(state), trace};

    return tb_store_run((tb_sqlite_t *)base, "put status", name, TB_WRITE_STATUS_PUT,
                        tb_status_put_fn, &arg, errstr, errstr_size);
}

/* {"state", "trace" when not NULL} of the current row. */
static json_t *tb_status_entry(sqlite3_stmt *stmt)
{
    const char *trace = (const char *)sqlite3_column_text(stmt, 2);
    json_t *entry =
        json_pack("{s:s}", "state", (const char *)sqlite3_column_text(stmt, 1));

    if (entry != NULL && trace != NULL &&
        json_object_set_new(entry, "trace", json_string(trace)) != 0) {
        json_decref(entry);
        return NULL;
    }
    return entry;
}

/* Files the current row as status["connector"] (task -1) or as
 * status["tasks"]["<id>"]. */
static int tb_status_row(sqlite3_stmt *stmt, json_t *status, char *why, size_t why_size)
{
    int task_id = sqlite3_column_int(stmt, 0);
    json_t *entry = tb_status_entry(stmt);
    char key[16];

    if (entry == NULL) {
        snprintf(why, why_size, "cannot decode a stored status");
        return -1;
    }
    if (task_id < 0) {
        return json_object_set_new(status, "connector", entry);
    }
    snprintf(key, sizeof(key), "%d", task_id);
    return json_object_set_new(json_object_get(status, "tasks"), key, entry);
}

typedef struct {
    const char *name;
    json_t *status; /* {"tasks":{}} on the way in */
} tb_status_get_arg_t;

static int tb_status_get_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    tb_status_get_arg_t *a = arg;
    return tb_select_each(store, store->stmts[TB_SQL_STATUS_SELECT], a->name,
                          tb_status_row, a->status, why, why_size);
}

/* A connector with task rows but no row of its own has no status. */
static json_t *tb_sqlite_status_get(tb_store_t *base, const char *name, char *errstr,
                                    size_t errstr_size)
{
    tb_sqlite_t *store = (tb_sqlite_t *)base;
    tb_status_get_arg_t arg = {name, json_pack("{s:{}}", "tasks")};

    if (arg.status == NULL) {
        tb_store_error(errstr, errstr_size, "get status", name, "out of memory");
        return NULL;
    }
    if (tb_store_run(store, "get status", name, TB_WRITE_NONE, tb_status_get_fn, &arg,
                     errstr, errstr_size) != 0) {
        goto fail;
    }
    if (json_object_get(arg.status, "connector") == NULL) {
        snprintf(errstr, errstr_size, "no status for connector %s", name);
        goto fail;
    }
    return arg.status;
fail:
    json_decref(arg.status);
    return NULL;
}

/* ---- offsets ---- */

/* Upserts one checked element, or deletes its row when its offset is
 * null. */
static int tb_offset_write(tb_sqlite_t *store, const char *connector, const json_t *item,
                           char *why, size_t why_size)
{
    const json_t *offset = json_object_get(item, "offset");
    int tombstone = json_is_null(offset);
    char *partition_text =
        json_dumps(json_object_get(item, "partition"), TB_STORE_JSON_CANONICAL);
    char *offset_text = tombstone ? NULL : json_dumps(offset, TB_STORE_JSON_CANONICAL);
    sqlite3_stmt *stmt =
        store->stmts[tombstone ? TB_SQL_OFFSET_DELETE : TB_SQL_OFFSET_UPSERT];
    int rc = -1;

    if (partition_text == NULL || (!tombstone && offset_text == NULL)) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    if (tb_bind_text(stmt, 1, connector) != 0 ||
        tb_bind_text(stmt, 2, partition_text) != 0 ||
        (!tombstone && tb_bind_text(stmt, 3, offset_text) != 0) ||
        tb_step_done(stmt) != 0) {
        tb_why_db(store, why, why_size);
        goto fail;
    }
    rc = 0;
fail:
    free(partition_text);
    free(offset_text);
    return rc;
}

typedef struct {
    const char *connector;
    const json_t *in; /* put: the checked array */
    json_t *out;      /* get: the array to fill */
} tb_offsets_arg_t;

static int tb_offsets_put_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    const tb_offsets_arg_t *a = arg;

    for (size_t i = 0; i < json_array_size(a->in); i++) {
        if (tb_offset_write(store, a->connector, json_array_get(a->in, i), why,
                            why_size) != 0) {
            return -1;
        }
    }
    return 0;
}

static int tb_sqlite_offsets_put(tb_store_t *base, const char *connector,
                                 const json_t *offsets, char *errstr, size_t errstr_size)
{
    tb_offsets_arg_t arg = {connector, offsets, NULL};

    return tb_store_run((tb_sqlite_t *)base, "put offsets", connector,
                        TB_WRITE_OFFSETS_PUT, tb_offsets_put_fn, &arg, errstr,
                        errstr_size);
}

/* Appends the current row to list as {"partition","offset"}. */
static int tb_offset_row(sqlite3_stmt *stmt, json_t *list, char *why, size_t why_size)
{
    json_t *entry = json_object();

    if (json_object_set_new(
            entry, "partition",
            json_loads((const char *)sqlite3_column_text(stmt, 0), 0, NULL)) != 0 ||
        json_object_set_new(
            entry, "offset",
            json_loads((const char *)sqlite3_column_text(stmt, 1), 0, NULL)) != 0) {
        json_decref(entry);
        snprintf(why, why_size, "cannot decode a stored offset");
        return -1;
    }
    return json_array_append_new(list, entry);
}

static int tb_offsets_get_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    tb_offsets_arg_t *a = arg;
    return tb_select_each(store, store->stmts[TB_SQL_OFFSETS_SELECT], a->connector,
                          tb_offset_row, a->out, why, why_size);
}

static json_t *tb_sqlite_offsets_get(tb_store_t *base, const char *connector,
                                     char *errstr, size_t errstr_size)
{
    tb_sqlite_t *store = (tb_sqlite_t *)base;
    json_t *offsets = json_array();
    tb_offsets_arg_t arg = {connector, NULL, offsets};

    if (offsets == NULL) {
        tb_store_error(errstr, errstr_size, "get offsets", connector, "out of memory");
        return NULL;
    }
    if (tb_store_run(store, "get offsets", connector, TB_WRITE_NONE, tb_offsets_get_fn,
                     &arg, errstr, errstr_size) != 0) {
        json_decref(offsets);
        return NULL;
    }
    return offsets;
}

static int tb_offsets_delete_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    sqlite3_stmt *stmt = store->stmts[TB_SQL_OFFSETS_DELETE];

    if (tb_bind_text(stmt, 1, arg) != 0 || tb_step_done(stmt) != 0) {
        return tb_why_db(store, why, why_size);
    }
    return 0;
}

static int tb_sqlite_offsets_delete(tb_store_t *base, const char *connector, char *errstr,
                                    size_t errstr_size)
{
    return tb_store_run((tb_sqlite_t *)base, "delete offsets", connector,
                        TB_WRITE_OFFSETS_DELETE, tb_offsets_delete_fn, (void *)connector,
                        errstr, errstr_size);
}

/* ---- mode ---- */

static const char *const tb_mode_names[] = {
    [TB_STORE_MODE_KAFKA] = "kafka",
    [TB_STORE_MODE_DEV] = "dev",
};

typedef struct {
    tb_store_mode_t wanted;
    tb_store_mode_t *bound;
} tb_mode_arg_t;

/* Sets *found to the recorded mode; false when none is recorded. */
static int tb_mode_read(tb_sqlite_t *store, bool *recorded, tb_store_mode_t *found,
                        char *why, size_t why_size)
{
    sqlite3_stmt *stmt = store->stmts[TB_SQL_META_SELECT];
    int rc = -1;

    *recorded = false;
    if (tb_bind_text(stmt, 1, "mode") != 0) {
        tb_why_db(store, why, why_size);
        goto done;
    }
    int step = sqlite3_step(stmt);
    if (step == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        for (size_t i = 0; i < sizeof(tb_mode_names) / sizeof(tb_mode_names[0]); i++) {
            if (name != NULL && strcmp(name, tb_mode_names[i]) == 0) {
                *found = (tb_store_mode_t)i;
                *recorded = true;
            }
        }
        if (!*recorded) {
            snprintf(why, why_size, "unknown store mode '%s'", name ? name : "");
            goto done;
        }
    } else if (step != SQLITE_DONE) {
        tb_why_db(store, why, why_size);
        goto done;
    }
    rc = 0;
done:
    sqlite3_reset(stmt);
    return rc;
}

/* Sets *content to whether any connector, status or offset is stored. */
static int tb_has_content(tb_sqlite_t *store, bool *content, char *why, size_t why_size)
{
    sqlite3_stmt *stmt = store->stmts[TB_SQL_CONTENT_SELECT];
    int step = sqlite3_step(stmt);

    *content = step == SQLITE_ROW && sqlite3_column_int(stmt, 0) != 0;
    sqlite3_reset(stmt);
    return step == SQLITE_ROW ? 0 : tb_why_db(store, why, why_size);
}

static int tb_mode_record(tb_sqlite_t *store, tb_store_mode_t mode, char *why,
                          size_t why_size)
{
    sqlite3_stmt *stmt = store->stmts[TB_SQL_META_INSERT];

    if (tb_bind_text(stmt, 1, "mode") != 0 ||
        tb_bind_text(stmt, 2, tb_mode_names[mode]) != 0 || tb_step_done(stmt) != 0) {
        return tb_why_db(store, why, why_size);
    }
    return 0;
}

static int tb_mode_bind_fn(tb_sqlite_t *store, void *arg, char *why, size_t why_size)
{
    tb_mode_arg_t *a = arg;
    bool recorded, content;

    if (tb_mode_read(store, &recorded, a->bound, why, why_size) != 0) {
        return -1;
    }
    if (recorded) {
        return 0;
    }
    if (tb_has_content(store, &content, why, why_size) != 0) {
        return -1;
    }
    /* content written before modes were recorded is a Kafka worker's */
    *a->bound = content ? TB_STORE_MODE_KAFKA : a->wanted;
    return tb_mode_record(store, *a->bound, why, why_size);
}

static int tb_sqlite_mode_bind(tb_store_t *base, tb_store_mode_t mode,
                               tb_store_mode_t *bound, char *errstr, size_t errstr_size)
{
    tb_mode_arg_t arg = {mode, bound};

    return tb_store_run((tb_sqlite_t *)base, "bind mode", NULL, TB_WRITE_MODE_BIND,
                        tb_mode_bind_fn, &arg, errstr, errstr_size);
}

/* Nothing but this process writes the file. */
static int tb_sqlite_refresh(tb_store_t *base, json_t *changed, char *errstr,
                             size_t errstr_size)
{
    (void)base;
    (void)changed;
    (void)errstr;
    (void)errstr_size;
    return 0;
}

static const tb_store_ops_t tb_sqlite_ops = {
    .close = tb_sqlite_close,
    .connector_put = tb_sqlite_connector_put,
    .connector_delete = tb_sqlite_connector_delete,
    .connectors_list = tb_sqlite_connectors_list,
    .status_put = tb_sqlite_status_put,
    .status_get = tb_sqlite_status_get,
    .offsets_put = tb_sqlite_offsets_put,
    .offsets_get = tb_sqlite_offsets_get,
    .offsets_delete = tb_sqlite_offsets_delete,
    .mode_bind = tb_sqlite_mode_bind,
    .refresh = tb_sqlite_refresh,
};

tb_store_t *tb_store_open(const char *path, char *errstr, size_t errstr_size)
{
    char why[TB_WHY_SIZE] = "";
    tb_sqlite_t *store = calloc(1, sizeof(*store));

    if (store == NULL || pthread_mutex_init(&store->lock, NULL) != 0) {
        free(store);
        tb_store_error(errstr, errstr_size, "open", path, "out of memory");
        return NULL;
    }
    store->base.ops = &tb_sqlite_ops;
    for (int i = TB_WRITE_NONE + 1; i < TB_WRITE__COUNT; i++) {
        const char *values[] = {tb_write_names[i], NULL};
        store->write_seconds[i] = tb_metrics_series(&tb_write_seconds, values);
    }
    if (tb_store_setup(store, path, why, sizeof(why)) != 0) {
        tb_sqlite_close(&store->base);
        tb_store_error(errstr, errstr_size, "open", path, why);
        return NULL;
    }
    return &store->base;
}
