/*
 * test_store.c - the SQLite store: every function of store/tb_store.h, the
 * schema version guard and durability across close/open and SIGKILL.
 * Each test works in its own temporary directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/tb_state.h"
#include "store/tb_store.h"

typedef struct {
    char dir[64];
    char path[128];
    char err[512];
    tb_store_t *store;
} fixture_t;

static atomic_int wal_syncs;

/* While watched_thread_set is true: syncs of a store file (the log or the
 * database, store.db) made by watched_thread, and those made by any other. */
static atomic_bool watched_thread_set;
static pthread_t watched_thread;
static atomic_int store_syncs_on_watched;
static atomic_int store_syncs_elsewhere;

static bool ends_with(const char *text, size_t n, const char *suffix)
{
    size_t len = strlen(suffix);
    return n >= len && memcmp(text + n - len, suffix, len) == 0;
}

/* Counts syncs of a WAL file (its name ends in -wal) before calling libc's:
 * the test's own definitions come before libc's, also for libsqlite3. */
static void count_wal_sync(int fd)
{
    char link[64], target[512];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0) {
        return;
    }
    if (ends_with(target, (size_t)n, "-wal")) {
        atomic_fetch_add(&wal_syncs, 1);
    }
    if (atomic_load(&watched_thread_set) && (ends_with(target, (size_t)n, "-wal") ||
                                             ends_with(target, (size_t)n, "store.db"))) {
        atomic_fetch_add(pthread_equal(pthread_self(), watched_thread)
                             ? &store_syncs_on_watched
                             : &store_syncs_elsewhere,
                         1);
    }
}

int fsync(int fd)
{
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    }
    count_wal_sync(fd);
    return real(fd);
}

int fdatasync(int fd)
{
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    }
    count_wal_sync(fd);
    return real(fd);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    snprintf(f->dir, sizeof(f->dir), "/tmp/tb_store_test_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/store.db", f->dir);
    f->store = tb_store_open(f->path, f->err, sizeof(f->err));
    assert_non_null(f->store);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    DIR *dir;
    struct dirent *entry;
    char file[512];

    tb_store_close(f->store);
    dir = opendir(f->dir);
    assert_non_null(dir);
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
            snprintf(file, sizeof(file), "%s/%s", f->dir, entry->d_name);
            assert_int_equal(unlink(file), 0);
        }
    }
    closedir(dir);
    assert_int_equal(rmdir(f->dir), 0);
    free(f);
    return 0;
}

static void reopen(fixture_t *f)
{
    tb_store_close(f->store);
    f->store = tb_store_open(f->path, f->err, sizeof(f->err));
    assert_non_null(f->store);
}

/* Asserts that json equals the JSON text expected. */
static void assert_json(const json_t *json, const char *expected)
{
    json_t *want = json_loads(expected, 0, NULL);
    char *got = json_dumps(json, JSON_COMPACT | JSON_SORT_KEYS);

    assert_non_null(want);
    assert_non_null(got);
    if (!json_equal((json_t *)json, want)) {
        fail_msg("got %s, expected %s", got, expected);
    }
    free(got);
    json_decref(want);
}

/* Runs one SQL query on the file directly; returns its first value as a
 * malloc'd string. */
static char *raw_query(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    char *value;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    value = strdup((const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    return value;
}

/* Writes a connector row from JSON texts; returns the store's answer. */
static int put_row(fixture_t *f, const char *name, const char *config,
                   tb_target_state_t target, const char *task_configs)
{
    json_t *config_json = json_loads(config, 0, NULL);
    json_t *tasks_json = json_loads(task_configs, JSON_DECODE_ANY, NULL);
    tb_store_connector_t row = {name, config_json, target, tasks_json};
    int rc;

    assert_non_null(config_json);
    assert_non_null(tasks_json);
    rc = tb_store_connector_put(f->store, &row, f->err, sizeof(f->err));
    json_decref(config_json);
    json_decref(tasks_json);
    return rc;
}

static void put_connector(fixture_t *f, const char *name, const char *config,
                          tb_target_state_t target)
{
    assert_int_equal(put_row(f, name, config, target, "[]"), 0);
}

static int put_offsets(fixture_t *f, const char *connector, const char *text)
{
    json_t *json = json_loads(text, JSON_DECODE_ANY, NULL);
    int rc;

    assert_non_null(json);
    rc = tb_store_offsets_put(f->store, connector, json, f->err, sizeof(f->err));
    json_decref(json);
    return rc;
}

static void assert_offsets(fixture_t *f, const char *connector, const char *expected)
{
    json_t *offsets = tb_store_offsets_get(f->store, connector, f->err, sizeof(f->err));

    assert_non_null(offsets);
    assert_json(offsets, expected);
    json_decref(offsets);
}

static void assert_status(fixture_t *f, const char *name, const char *expected)
{
    json_t *status = tb_store_status_get(f->store, name, f->err, sizeof(f->err));

    assert_non_null(status);
    assert_json(status, expected);
    json_decref(status);
}

/* Collects what tb_store_connectors_load reports as one JSON array of
 * {"name","config","target","tasks"}. */
static int collect_cb(const tb_store_connector_t *c, void *opaque)
{
    json_t *list = opaque;

    json_array_append_new(list,
                          json_pack("{s:s, s:O, s:s, s:O}", "name", c->name, "config",
                                    c->config, "target", tb_target_state_name(c->target),
                                    "tasks", c->task_configs));
    return 0;
}

static void assert_loaded(fixture_t *f, const char *expected)
{
    json_t *list = json_array();

    assert_int_equal(
        tb_store_connectors_load(f->store, collect_cb, list, f->err, sizeof(f->err)), 0);
    assert_json(list, expected);
    json_decref(list);
}

/* ---- open and close ---- */

static void test_close_null_is_noop(void **state)
{
    (void)state;
    tb_store_close(NULL);
}

static void test_open_unwritable_path_fails(void **state)
{
    char err[256] = "";

    (void)state;
    assert_null(tb_store_open("/nonexistent-dir/sub/store.db", err, sizeof(err)));
    assert_string_equal(err, "store: open '/nonexistent-dir/sub/store.db': "
                             "unable to open database file");
}

static void test_open_sets_schema_and_wal(void **state)
{
    fixture_t *f = *state;
    char *version = raw_query(f->path, "PRAGMA user_version");
    char *mode = raw_query(f->path, "PRAGMA journal_mode");

    assert_string_equal(version, "2");
    assert_string_equal(mode, "wal");
    free(version);
    free(mode);
}

static void test_future_schema_version_refused(void **state)
{
    fixture_t *f = *state;
    sqlite3 *db = NULL;
    char expected[512];

    tb_store_close(f->store);
    f->store = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);

    assert_null(tb_store_open(f->path, f->err, sizeof(f->err)));
    snprintf(expected, sizeof(expected),
             "store: open '%s': store schema version 99 is newer than this "
             "build supports (2)",
             f->path);
    assert_string_equal(f->err, expected);
}

/* ---- mode ---- */

static tb_store_mode_t bind_mode(fixture_t *f, tb_store_mode_t mode)
{
    tb_store_mode_t bound =
        mode == TB_STORE_MODE_DEV ? TB_STORE_MODE_KAFKA : TB_STORE_MODE_DEV;

    assert_int_equal(tb_store_mode_bind(f->store, mode, &bound, f->err, sizeof(f->err)),
                     0);
    return bound;
}

static void test_empty_store_takes_the_first_mode_for_good(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(bind_mode(f, TB_STORE_MODE_DEV), TB_STORE_MODE_DEV);
    reopen(f);
    assert_int_equal(bind_mode(f, TB_STORE_MODE_KAFKA), TB_STORE_MODE_DEV);
    char *mode = raw_query(f->path, "SELECT value FROM meta WHERE key = 'mode'");
    assert_string_equal(mode, "dev");
    free(mode);
}

static void test_kafka_store_stays_kafka(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(bind_mode(f, TB_STORE_MODE_KAFKA), TB_STORE_MODE_KAFKA);
    assert_int_equal(bind_mode(f, TB_STORE_MODE_DEV), TB_STORE_MODE_KAFKA);
}

/* A file of schema 1 (before modes were recorded) that holds a connector
 * belongs to a worker connected to Kafka. */
static void test_content_without_mode_is_kafka(void **state)
{
    fixture_t *f = *state;
    sqlite3 *db = NULL;

    put_connector(f, "old", "{\"connector.class\":\"A\"}", TB_TARGET_STARTED);
    tb_store_close(f->store);
    f->store = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "DROP TABLE meta; PRAGMA user_version = 1", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    reopen(f);
    assert_int_equal(bind_mode(f, TB_STORE_MODE_DEV), TB_STORE_MODE_KAFKA);
}

/* ---- connectors ---- */

static void test_connector_create_and_load_in_name_order(void **state)
{
    fixture_t *f = *state;

    put_connector(f, "zeta", "{\"connector.class\":\"Z\"}", TB_TARGET_STARTED);
    put_connector(f, "alpha", "{\"connector.class\":\"A\",\"tasks.max\":\"2\"}",
                  TB_TARGET_STOPPED);
    assert_loaded(f, "[{\"name\":\"alpha\",\"config\":{\"connector.class\":"
                     "\"A\",\"tasks.max\":\"2\"},\"target\":\"STOPPED\","
                     "\"tasks\":[]},"
                     "{\"name\":\"zeta\",\"config\":{\"connector.class\":"
                     "\"Z\"},\"target\":\"STARTED\",\"tasks\":[]}]");
}

static void test_load_empty_store(void **state)
{
    fixture_t *f = *state;

    assert_loaded(f, "[]");
}

static int stop_after_first_cb(const tb_store_connector_t *c, void *opaque)
{
    int *calls = opaque;

    assert_string_equal(c->name, "a");
    (*calls)++;
    return 7;
}

static void test_load_stops_on_callback_value(void **state)
{
    fixture_t *f = *state;
    int calls = 0;

    put_connector(f, "a", "{}", TB_TARGET_STARTED);
    put_connector(f, "b", "{}", TB_TARGET_STARTED);
    assert_int_equal(tb_store_connectors_load(f->store, stop_after_first_cb, &calls,
                                              f->err, sizeof(f->err)),
                     7);
    assert_int_equal(calls, 1);
}

/* The callback may call the store: load holds no lock while it runs. */
static int status_from_cb(const tb_store_connector_t *c, void *opaque)
{
    fixture_t *f = opaque;

    return tb_store_status_put(f->store, c->name, -1, TB_STATE_UNASSIGNED, NULL, f->err,
                               sizeof(f->err));
}

static void test_load_callback_may_call_store(void **state)
{
    fixture_t *f = *state;

    put_connector(f, "a", "{}", TB_TARGET_STARTED);
    assert_int_equal(
        tb_store_connectors_load(f->store, status_from_cb, f, f->err, sizeof(f->err)), 0);
    assert_status(f, "a",
                  "{\"connector\":{\"state\":\"UNASSIGNED\"},"
                  "\"tasks\":{}}");
}

static void test_connector_replace_keeps_status_offsets(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(
        put_row(f, "c", "{\"k\":\"v1\"}", TB_TARGET_STARTED, "[{\"t\":\"0\"}]"), 0);
    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_RUNNING, NULL,
                                         f->err, sizeof(f->err)),
                     0);
    assert_int_equal(
        put_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":5}}]"), 0);

    assert_int_equal(put_row(f, "c", "{\"k\":\"v2\",\"extra\":\"x\"}", TB_TARGET_PAUSED,
                             "[{\"t\":\"1\"}]"),
                     0);

    assert_loaded(f, "[{\"name\":\"c\",\"config\":{\"k\":\"v2\",\"extra\":"
                     "\"x\"},\"target\":\"PAUSED\",\"tasks\":[{\"t\":\"1\"}]}]");
    assert_status(f, "c",
                  "{\"connector\":{\"state\":\"RUNNING\"},"
                  "\"tasks\":{}}");
    assert_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":5}}]");
}

static void test_connector_put_rejects_bad_input(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(put_row(f, "c", "{\"tasks.max\":2}", TB_TARGET_STARTED, "[]"), -1);
    assert_string_equal(f->err, "store: put connector 'c': config value of "
                                "'tasks.max' is not a string");
    assert_int_equal(put_row(f, "c", "[]", TB_TARGET_STARTED, "[]"), -1);
    assert_string_equal(f->err, "store: put connector 'c': config must be a JSON "
                                "object");
    assert_int_equal(put_row(f, "c", "{}", (tb_target_state_t)42, "[]"), -1);
    assert_string_equal(f->err, "store: put connector 'c': invalid target state 42");
    assert_loaded(f, "[]");
}

/* Config, target state and task configs are one row, written whole. */
static void test_connector_row_replaced_whole(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(
        put_row(f, "c", "{\"k\":\"v\"}", TB_TARGET_STARTED, "[{\"t\":\"0\"}]"), 0);
    assert_int_equal(put_row(f, "c", "{\"k\":\"w\"}", TB_TARGET_STOPPED, "[]"), 0);
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{\"k\":\"w\"},"
                     "\"target\":\"STOPPED\",\"tasks\":[]}]");
}

static void test_task_configs_replace_and_clear(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(
        put_row(f, "c", "{}", TB_TARGET_STARTED, "[{\"t\":\"0\"},{\"t\":\"1\"}]"), 0);
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{},\"target\":\"STARTED\","
                     "\"tasks\":[{\"t\":\"0\"},{\"t\":\"1\"}]}]");
    assert_int_equal(put_row(f, "c", "{}", TB_TARGET_STARTED, "[{\"t\":\"new\"}]"), 0);
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{},\"target\":\"STARTED\","
                     "\"tasks\":[{\"t\":\"new\"}]}]");
    assert_int_equal(put_row(f, "c", "{}", TB_TARGET_STARTED, "[]"), 0);
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{},\"target\":\"STARTED\","
                     "\"tasks\":[]}]");
}

static void test_task_configs_bad_input_refused(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(put_row(f, "c", "{}", TB_TARGET_STARTED, "[{\"t\":\"0\"}]"), 0);
    assert_int_equal(put_row(f, "c", "{}", TB_TARGET_STARTED, "[{\"t\":\"0\"},\"x\"]"),
                     -1);
    assert_string_equal(f->err, "store: put connector 'c': task config 1 "
                                "is not an object");
    assert_int_equal(put_row(f, "c", "{}", TB_TARGET_STARTED, "{}"), -1);
    assert_string_equal(f->err, "store: put connector 'c': task configs "
                                "must be a JSON array");
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{},\"target\":\"STARTED\","
                     "\"tasks\":[{\"t\":\"0\"}]}]");
}

static void test_delete_connector_keeps_offsets(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(
        put_row(f, "c", "{\"k\":\"v\"}", TB_TARGET_STARTED, "[{\"t\":\"0\"}]"), 0);
    put_connector(f, "other", "{}", TB_TARGET_STARTED);
    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_RUNNING, NULL,
                                         f->err, sizeof(f->err)),
                     0);
    assert_int_equal(tb_store_status_put(f->store, "c", 0, TB_STATE_RUNNING, NULL, f->err,
                                         sizeof(f->err)),
                     0);
    assert_int_equal(
        put_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":9}}]"), 0);

    assert_int_equal(tb_store_connector_delete(f->store, "c", f->err, sizeof(f->err)), 0);

    assert_loaded(f, "[{\"name\":\"other\",\"config\":{},\"target\":"
                     "\"STARTED\",\"tasks\":[]}]");
    assert_null(tb_store_status_get(f->store, "c", f->err, sizeof(f->err)));
    assert_string_equal(f->err, "no status for connector c");
    assert_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":9}}]");

    /* Re-created under the same name: no old task configs, same offsets. */
    put_connector(f, "c", "{\"k\":\"v2\"}", TB_TARGET_STARTED);
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{\"k\":\"v2\"},\"target\":"
                     "\"STARTED\",\"tasks\":[]},"
                     "{\"name\":\"other\",\"config\":{},\"target\":"
                     "\"STARTED\",\"tasks\":[]}]");
    assert_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":9}}]");
}

static void test_delete_unknown_connector_succeeds(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(tb_store_connector_delete(f->store, "ghost", f->err, sizeof(f->err)),
                     0);
}

/* ---- status ---- */

static void test_status_put_get_with_and_without_trace(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_RUNNING, NULL,
                                         f->err, sizeof(f->err)),
                     0);
    assert_int_equal(tb_store_status_put(f->store, "c", 0, TB_STATE_FAILED,
                                         "java.lang.Boom\n\tat x", f->err,
                                         sizeof(f->err)),
                     0);
    assert_int_equal(tb_store_status_put(f->store, "c", 10, TB_STATE_PAUSED, NULL, f->err,
                                         sizeof(f->err)),
                     0);
    assert_int_equal(tb_store_status_put(f->store, "c", 2, TB_STATE_RUNNING, NULL, f->err,
                                         sizeof(f->err)),
                     0);
    assert_status(f, "c",
                  "{\"connector\":{\"state\":\"RUNNING\"},\"tasks\":{"
                  "\"0\":{\"state\":\"FAILED\",\"trace\":"
                  "\"java.lang.Boom\\n\\tat x\"},"
                  "\"2\":{\"state\":\"RUNNING\"},"
                  "\"10\":{\"state\":\"PAUSED\"}}}");

    /* Upsert: the task recovers and its trace goes away. */
    assert_int_equal(tb_store_status_put(f->store, "c", 0, TB_STATE_RUNNING, NULL, f->err,
                                         sizeof(f->err)),
                     0);
    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_FAILED,
                                         "connector died", f->err, sizeof(f->err)),
                     0);
    assert_status(f, "c",
                  "{\"connector\":{\"state\":\"FAILED\",\"trace\":"
                  "\"connector died\"},\"tasks\":{"
                  "\"0\":{\"state\":\"RUNNING\"},"
                  "\"2\":{\"state\":\"RUNNING\"},"
                  "\"10\":{\"state\":\"PAUSED\"}}}");
}

static void test_status_unknown_connector(void **state)
{
    fixture_t *f = *state;

    assert_null(tb_store_status_get(f->store, "nope", f->err, sizeof(f->err)));
    assert_string_equal(f->err, "no status for connector nope");

    /* Task rows alone are not a connector status. */
    assert_int_equal(tb_store_status_put(f->store, "half", 0, TB_STATE_RUNNING, NULL,
                                         f->err, sizeof(f->err)),
                     0);
    assert_null(tb_store_status_get(f->store, "half", f->err, sizeof(f->err)));
    assert_string_equal(f->err, "no status for connector half");
}

static void test_status_put_rejects_bad_input(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(tb_store_status_put(f->store, "c", -2, TB_STATE_RUNNING, NULL,
                                         f->err, sizeof(f->err)),
                     -1);
    assert_string_equal(f->err, "store: put status 'c': invalid task id or state");
    assert_int_equal(tb_store_status_put(f->store, "c", -1, (tb_state_t)99, NULL, f->err,
                                         sizeof(f->err)),
                     -1);
    assert_string_equal(f->err, "store: put status 'c': invalid task id or state");
    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_FAILED, "bad \xff",
                                         f->err, sizeof(f->err)),
                     -1);
    assert_string_equal(f->err, "store: put status 'c': invalid trace (not UTF-8)");
    assert_null(tb_store_status_get(f->store, "c", f->err, sizeof(f->err)));
}

/* ---- offsets ---- */

static void test_offsets_put_get_tombstone_delete(void **state)
{
    fixture_t *f = *state;

    assert_offsets(f, "src", "[]");
    assert_int_equal(
        put_offsets(f, "src",
                    "[{\"partition\":{\"file\":\"b\"},\"offset\":{\"pos\":2}},"
                    "{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":1}}]"),
        0);
    assert_int_equal(
        put_offsets(f, "other",
                    "[{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":7}}]"),
        0);
    /* Ordered by partition text. */
    assert_offsets(f, "src",
                   "[{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":1}},"
                   "{\"partition\":{\"file\":\"b\"},\"offset\":{\"pos\":2}}]");

    /* An update and a tombstone in one call. */
    assert_int_equal(
        put_offsets(f, "src",
                    "[{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":3}},"
                    "{\"partition\":{\"file\":\"b\"},\"offset\":null}]"),
        0);
    assert_offsets(f, "src", "[{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":3}}]");

    /* A tombstone for an unknown partition is fine. */
    assert_int_equal(
        put_offsets(f, "src", "[{\"partition\":{\"file\":\"zz\"},\"offset\":null}]"), 0);
    assert_int_equal(put_offsets(f, "src", "[]"), 0);
    assert_offsets(f, "src", "[{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":3}}]");

    assert_int_equal(tb_store_offsets_delete(f->store, "src", f->err, sizeof(f->err)), 0);
    assert_offsets(f, "src", "[]");
    assert_offsets(f, "other",
                   "[{\"partition\":{\"file\":\"a\"},\"offset\":{\"pos\":7}}]");
}

static void test_offsets_partition_key_is_canonical(void **state)
{
    fixture_t *f = *state;
    char *key;
    char *count;

    assert_int_equal(put_offsets(f, "src",
                                 "[{\"partition\":{\"topic\":\"t\",\"part\":1,\"nested\":"
                                 "{\"z\":1,\"a\":2}},\"offset\":{\"o\":1}}]"),
                     0);
    assert_int_equal(put_offsets(f, "src",
                                 "[{\"partition\":{\"nested\":{\"a\":2,\"z\":1},"
                                 "\"part\":1,\"topic\":\"t\"},\"offset\":{\"o\":2}}]"),
                     0);
    assert_offsets(f, "src",
                   "[{\"partition\":{\"nested\":{\"a\":2,\"z\":1},\"part\":1,"
                   "\"topic\":\"t\"},\"offset\":{\"o\":2}}]");

    count = raw_query(f->path, "SELECT count(*) FROM offsets");
    key = raw_query(f->path, "SELECT partition_key FROM offsets");
    assert_string_equal(count, "1");
    assert_string_equal(key, "{\"nested\":{\"a\":2,\"z\":1},\"part\":1,\"topic\":"
                             "\"t\"}");
    free(count);
    free(key);

    /* A tombstone with the keys in a third order deletes the row. */
    assert_int_equal(put_offsets(f, "src",
                                 "[{\"partition\":{\"part\":1,\"topic\":\"t\",\"nested\":"
                                 "{\"z\":1,\"a\":2}},\"offset\":null}]"),
                     0);
    assert_offsets(f, "src", "[]");
}

static void assert_offsets_refused(fixture_t *f, const char *offsets,
                                   const char *expected_err)
{
    assert_int_equal(put_offsets(f, "src", offsets), -1);
    assert_string_equal(f->err, expected_err);
    assert_offsets(f, "src", "[{\"partition\":{\"p\":0},\"offset\":{\"o\":0}}]");
}

static void test_offsets_invalid_refused_nothing_written(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(
        put_offsets(f, "src", "[{\"partition\":{\"p\":0},\"offset\":{\"o\":0}}]"), 0);
    assert_offsets_refused(
        f,
        "[{\"partition\":{\"p\":0},\"offset\":null},"
        "{\"partition\":{\"p\":1},\"offset\":{\"o\":1}},"
        "{\"partition\":\"p2\",\"offset\":{\"o\":2}}]",
        "store: put offsets 'src': element 2: \"partition\" must be an "
        "object");
    assert_offsets_refused(
        f,
        "[{\"partition\":{\"p\":1},\"offset\":{\"o\":1}},"
        "{\"partition\":{\"p\":2}}]",
        "store: put offsets 'src': element 1: \"offset\" must be an object "
        "or null");
    assert_offsets_refused(f, "[{\"partition\":{\"p\":1},\"offset\":5}]",
                           "store: put offsets 'src': element 0: \"offset\" "
                           "must be an object or null");
    assert_offsets_refused(f, "[{\"partition\":{\"p\":1},\"offset\":{}},3]",
                           "store: put offsets 'src': element 1: not an "
                           "object");
    assert_offsets_refused(f, "{\"partition\":{},\"offset\":{}}",
                           "store: put offsets 'src': offsets must be a JSON "
                           "array");
}

/* ---- durability ---- */

static void test_reopen_keeps_everything(void **state)
{
    fixture_t *f = *state;

    assert_int_equal(
        put_row(f, "c", "{\"k\":\"v\"}", TB_TARGET_PAUSED, "[{\"t\":\"0\"}]"), 0);
    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_PAUSED, NULL, f->err,
                                         sizeof(f->err)),
                     0);
    assert_int_equal(tb_store_status_put(f->store, "c", 0, TB_STATE_FAILED, "trace",
                                         f->err, sizeof(f->err)),
                     0);
    assert_int_equal(
        put_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":4}}]"), 0);

    reopen(f);
    reopen(f);

    assert_loaded(f, "[{\"name\":\"c\",\"config\":{\"k\":\"v\"},\"target\":"
                     "\"PAUSED\",\"tasks\":[{\"t\":\"0\"}]}]");
    assert_status(f, "c",
                  "{\"connector\":{\"state\":\"PAUSED\"},\"tasks\":{\"0\":"
                  "{\"state\":\"FAILED\",\"trace\":\"trace\"}}}");
    assert_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":4}}]");
}

/* A write that returned survives SIGKILL of the process right after it. */
static void test_write_survives_sigkill(void **state)
{
    fixture_t *f = *state;
    pid_t child;
    int status = 0;

    tb_store_close(f->store);
    f->store = NULL;
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char err[256];
        tb_store_t *store = tb_store_open(f->path, err, sizeof(err));
        json_t *config = json_pack("{s:s}", "k", "killed");
        json_t *tasks = json_array();
        tb_store_connector_t row = {"c", config, TB_TARGET_STARTED, tasks};
        json_t *offsets =
            json_pack("[{s:{s:i}, s:{s:i}}]", "partition", "p", 1, "offset", "o", 42);

        if (store == NULL || tb_store_connector_put(store, &row, err, sizeof(err)) != 0 ||
            tb_store_offsets_put(store, "c", offsets, err, sizeof(err)) != 0) {
            _exit(1);
        }
        kill(getpid(), SIGKILL);
        _exit(2);
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    f->store = tb_store_open(f->path, f->err, sizeof(f->err));
    assert_non_null(f->store);
    assert_loaded(f, "[{\"name\":\"c\",\"config\":{\"k\":\"killed\"},"
                     "\"target\":\"STARTED\",\"tasks\":[]}]");
    assert_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":42}}]");
}

/* A config write syncs the WAL (it survives power loss); offsets and
 * statuses leave that to checkpoints (they survive a process crash). */
static void test_config_writes_sync_the_log_offsets_do_not(void **state)
{
    fixture_t *f = *state;
    int before;

    put_connector(f, "c", "{}", TB_TARGET_STARTED);
    before = atomic_load(&wal_syncs);
    assert_int_equal(
        put_offsets(f, "c", "[{\"partition\":{\"p\":1},\"offset\":{\"o\":5}}]"), 0);
    assert_int_equal(tb_store_status_put(f->store, "c", 0, TB_STATE_RUNNING, NULL, f->err,
                                         sizeof(f->err)),
                     0);
    assert_int_equal(atomic_load(&wal_syncs), before);
    put_connector(f, "c", "{\"k\":\"v\"}", TB_TARGET_PAUSED);
    assert_true(atomic_load(&wal_syncs) > before);
    before = atomic_load(&wal_syncs);
    assert_int_equal(tb_store_connector_delete(f->store, "c", f->err, sizeof(f->err)), 0);
    assert_true(atomic_load(&wal_syncs) > before);
}

/* The log is checkpointed, with its syncs, on the store's own thread: a
 * writer never pays for it in a commit (SQLite's automatic checkpoint would
 * run in the commit that takes the log past 1 000 pages). */
static void test_checkpoints_run_off_the_writers_thread(void **state)
{
    fixture_t *f = *state;
    char text[96];

    put_connector(f, "c", "{}", TB_TARGET_STARTED);
    atomic_store(&store_syncs_on_watched, 0);
    atomic_store(&store_syncs_elsewhere, 0);
    watched_thread = pthread_self();
    atomic_store(&watched_thread_set, true);
    /* Each offsets write adds a page or two to the log: 5 000 take it well past
     * the threshold; stop early once a checkpoint has run. */
    for (int i = 0; i < 5000 && atomic_load(&store_syncs_elsewhere) == 0; i++) {
        snprintf(text, sizeof(text), "[{\"partition\":{\"p\":%d},\"offset\":{\"o\":%d}}]",
                 i % 50, i);
        assert_int_equal(put_offsets(f, "c", text), 0);
    }
    for (int waited = 0; waited < 1000 && atomic_load(&store_syncs_elsewhere) == 0;
         waited++) {
        usleep(10 * 1000);
    }
    atomic_store(&watched_thread_set, false);
    assert_true(atomic_load(&store_syncs_elsewhere) > 0);
    assert_int_equal(atomic_load(&store_syncs_on_watched), 0);
}

/* ---- threads ---- */

#define THREADS 4
#define WRITES 50

typedef struct {
    tb_store_t *store;
    int id;
    int failures;
} worker_t;

static void *worker_main(void *opaque)
{
    worker_t *w = opaque;
    char err[256];

    for (int i = 0; i < WRITES; i++) {
        json_t *offsets = json_pack("[{s:{s:i}, s:{s:i}}]", "partition", "worker", w->id,
                                    "offset", "n", i);

        if (tb_store_status_put(w->store, "c", w->id, TB_STATE_RUNNING, NULL, err,
                                sizeof(err)) != 0 ||
            tb_store_offsets_put(w->store, "c", offsets, err, sizeof(err)) != 0) {
            w->failures++;
        }
        json_decref(offsets);
    }
    return NULL;
}

static void test_concurrent_writers(void **state)
{
    fixture_t *f = *state;
    pthread_t threads[THREADS];
    worker_t workers[THREADS];
    json_t *offsets;

    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker_t){f->store, t, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, worker_main, &workers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        assert_int_equal(workers[t].failures, 0);
    }
    offsets = tb_store_offsets_get(f->store, "c", f->err, sizeof(f->err));
    assert_non_null(offsets);
    assert_int_equal(json_array_size(offsets), THREADS);
    /* Ordered by partition text: {"worker":0} ... {"worker":3}. */
    for (size_t i = 0; i < json_array_size(offsets); i++) {
        json_t *partition = json_object_get(json_array_get(offsets, i), "partition");
        json_t *offset = json_object_get(json_array_get(offsets, i), "offset");

        assert_int_equal(json_integer_value(json_object_get(partition, "worker")), i);
        assert_int_equal(json_integer_value(json_object_get(offset, "n")), WRITES - 1);
    }
    assert_int_equal(tb_store_status_put(f->store, "c", -1, TB_STATE_RUNNING, NULL,
                                         f->err, sizeof(f->err)),
                     0);
    assert_status(f, "c",
                  "{\"connector\":{\"state\":\"RUNNING\"},\"tasks\":{"
                  "\"0\":{\"state\":\"RUNNING\"},\"1\":{\"state\":\"RUNNING\"},"
                  "\"2\":{\"state\":\"RUNNING\"},\"3\":{\"state\":\"RUNNING\"}}}");
    json_decref(offsets);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_null_is_noop),
        cmocka_unit_test(test_open_unwritable_path_fails),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_open_sets_schema_and_wal),
        T(test_checkpoints_run_off_the_writers_thread),
        T(test_future_schema_version_refused),
        T(test_empty_store_takes_the_first_mode_for_good),
        T(test_kafka_store_stays_kafka),
        T(test_content_without_mode_is_kafka),
        T(test_connector_create_and_load_in_name_order),
        T(test_load_empty_store),
        T(test_load_stops_on_callback_value),
        T(test_load_callback_may_call_store),
        T(test_connector_replace_keeps_status_offsets),
        T(test_connector_put_rejects_bad_input),
        T(test_connector_row_replaced_whole),
        T(test_config_writes_sync_the_log_offsets_do_not),
        T(test_task_configs_replace_and_clear),
        T(test_task_configs_bad_input_refused),
        T(test_delete_connector_keeps_offsets),
        T(test_delete_unknown_connector_succeeds),
        T(test_status_put_get_with_and_without_trace),
        T(test_status_unknown_connector),
        T(test_status_put_rejects_bad_input),
        T(test_offsets_put_get_tombstone_delete),
        T(test_offsets_partition_key_is_canonical),
        T(test_offsets_invalid_refused_nothing_written),
        T(test_reopen_keeps_everything),
        T(test_write_survives_sigkill),
        T(test_concurrent_writers),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
