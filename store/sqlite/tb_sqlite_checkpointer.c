/*
 * tb_sqlite_checkpointer.c - the WAL checkpoint off the writers' threads
 * (see tb_sqlite_checkpointer.h).
 */
#include "store/sqlite/tb_sqlite_checkpointer.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/tb_log.h"
#include "core/tb_metrics.h"

#define TB_LOG_FACILITY "tributary.store"

static const double tb_checkpoint_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                               0.05,   0.1,   0.25,   0.5,   1,    5};
static const tb_metric_def_t tb_checkpoint_seconds = {
    .name = "tributary_store_checkpoint_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "One checkpoint of the standalone store's write-ahead log, run on the "
            "store's own thread, its syncs included.",
    .buckets = tb_checkpoint_buckets,
    .bucket_count = sizeof(tb_checkpoint_buckets) / sizeof(tb_checkpoint_buckets[0])};

struct tb_sqlite_checkpointer {
    sqlite3 *writer; /* borrowed: carries the hook */
    sqlite3 *db;     /* owned: the checkpoint's own connection */
    tb_series_t *seconds;
    pthread_t thread;
    pthread_mutex_t lock; /* guards due and stopping */
    pthread_cond_t wake;
    bool due;      /* a commit left the log past the threshold */
    bool stopping; /* stop was asked */
    bool failed;   /* a failure was logged: log the next success, not each failure */
};

/* The writer's WAL hook, on the committing thread: only a wake-up. */
static int tb_checkpointer_on_commit(void *arg, sqlite3 *db, const char *schema,
                                     int pages)
{
    tb_sqlite_checkpointer_t *c = arg;

    (void)db;
    (void)schema;
    if (pages >= TB_SQLITE_CHECKPOINT_PAGES) {
        pthread_mutex_lock(&c->lock);
        c->due = true;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
    }
    return SQLITE_OK;
}

static double tb_seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) +
           (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* One PASSIVE checkpoint: it copies what no reader still needs and never
 * waits for a lock; a later one finishes what it leaves. */
static void tb_checkpointer_run_once(tb_sqlite_checkpointer_t *c)
{
    struct timespec start;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &start);
    rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    tb_series_observe(c->seconds, tb_seconds_since(&start));
    if (rc != SQLITE_OK && rc != SQLITE_BUSY && !c->failed) {
        c->failed = true;
        TB_LOG(TB_LOG_WARN, TB_LOG_FACILITY,
               "store: cannot checkpoint the write-ahead log: %s; the log grows until a "
               "checkpoint succeeds",
               sqlite3_errmsg(c->db));
    } else if (rc == SQLITE_OK && c->failed) {
        c->failed = false;
        TB_LOG(TB_LOG_INFO, TB_LOG_FACILITY,
               "store: the write-ahead log checkpoints again");
    }
}

static void *tb_checkpointer_main(void *arg)
{
    tb_sqlite_checkpointer_t *c = arg;

    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        if (!c->due) {
            pthread_cond_wait(&c->wake, &c->lock);
            continue;
        }
        c->due = false;
        pthread_mutex_unlock(&c->lock);
        tb_checkpointer_run_once(c);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

tb_sqlite_checkpointer_t *tb_sqlite_checkpointer_start(sqlite3 *writer, const char *path,
                                                       char *why, size_t why_size)
{
    tb_sqlite_checkpointer_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    c->writer = writer;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(why, why_size, "checkpoint connection: %s", sqlite3_errmsg(c->db));
        goto fail;
    }
    /* A connection learns that the file is in WAL mode when it first reads
     * it; until then a checkpoint does nothing. */
    if (sqlite3_exec(c->db, "PRAGMA schema_version", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(why, why_size, "checkpoint connection: %s", sqlite3_errmsg(c->db));
        goto fail;
    }
    c->seconds = tb_metrics_series(&tb_checkpoint_seconds, NULL);
    if (pthread_create(&c->thread, NULL, tb_checkpointer_main, c) != 0) {
        snprintf(why, why_size, "cannot start the checkpoint thread");
        goto fail;
    }
    /* Registering a hook turns SQLite's automatic checkpoint off. */
    sqlite3_wal_hook(writer, tb_checkpointer_on_commit, c);
    return c;
fail:
    sqlite3_close(c->db);
    tb_series_release(c->seconds);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return NULL;
}

void tb_sqlite_checkpointer_stop(tb_sqlite_checkpointer_t *c)
{
    if (c == NULL) {
        return;
    }
    sqlite3_wal_hook(c->writer, NULL, NULL);
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    sqlite3_close(c->db);
    tb_series_release(c->seconds);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
