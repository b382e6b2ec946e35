#include "connectors/runtime/worker/tb_status_writer.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_log.h"
#include "core/tb_time.h"

#define RETRY_INITIAL_MS 100
#define RETRY_MAX_MS 10000

typedef struct entry {
    struct entry *next;
    char *name;
    int task_id;
    tb_state_t state;
    char *trace;
    int attempts;   /* failed writes of this state so far */
    int64_t due_ms; /* when it may be written (monotonic) */
} entry_t;

struct tb_status_writer {
    tb_store_t *store;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a new entry, or stopping */
    /* guarded by lock */
    entry_t *pending; /* in the order they were first put */
    const entry_t *writing;
    bool writing_forgotten; /* writing's connector is forgotten: no retry */
    bool stopping;
    bool failing; /* the last write failed: logged once per run of failures */
};

static void entry_free(entry_t *e)
{
    if (e != NULL) {
        free(e->name);
        free(e->trace);
        free(e);
    }
}

/* The pending entry of name's task_id, or NULL; *link is where it hangs. */
static entry_t *find(tb_status_writer_t *writer, const char *name, int task_id,
                     entry_t ***link)
{
    for (entry_t **at = &writer->pending; *at != NULL; at = &(*at)->next) {
        if ((*at)->task_id == task_id && strcmp((*at)->name, name) == 0) {
            *link = at;
            return *at;
        }
    }
    return NULL;
}

static void append(tb_status_writer_t *writer, entry_t *e)
{
    entry_t **at = &writer->pending;
    while (*at != NULL) {
        at = &(*at)->next;
    }
    e->next = NULL;
    *at = e;
}

/* Takes out the first entry due by now; else *wait_ms says how long until
 * one is (-1: none pending). */
static entry_t *take_due(tb_status_writer_t *writer, int64_t now, int64_t *wait_ms)
{
    *wait_ms = -1;
    for (entry_t **at = &writer->pending; *at != NULL; at = &(*at)->next) {
        entry_t *e = *at;
        if (e->due_ms <= now) {
            *at = e->next;
            return e;
        }
        if (*wait_ms < 0 || e->due_ms - now < *wait_ms) {
            *wait_ms = e->due_ms - now;
        }
    }
    return NULL;
}

/* Writes e with lock released. Returns 0 when written. */
static int write_unlocked(tb_status_writer_t *writer, entry_t *e)
{
    char errstr[512];
    writer->writing = e;
    pthread_mutex_unlock(&writer->lock);
    int rc = tb_store_status_put(writer->store, e->name, e->task_id, e->state, e->trace,
                                 errstr, sizeof(errstr));
    pthread_mutex_lock(&writer->lock);
    writer->writing = NULL;
    if (rc != 0 && !writer->failing) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.status", e->name, e->task_id,
                    "cannot record state %s: %s; trying again, every %d ms at most, "
                    "until the store takes it",
                    tb_state_name(e->state), errstr, RETRY_MAX_MS);
    } else if (rc != 0) {
        TB_LOG_TASK(TB_LOG_DEBUG, "tributary.status", e->name, e->task_id,
                    "cannot record state %s yet: %s", tb_state_name(e->state), errstr);
    } else if (writer->failing) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.status", e->name, e->task_id,
                    "state %s recorded: the store takes status writes again",
                    tb_state_name(e->state));
    }
    writer->failing = rc != 0;
    return rc;
}

/* After a failed write of e: tried again later, unless a newer state of
 * its task was put meanwhile. */
static void retry_later(tb_status_writer_t *writer, entry_t *e)
{
    entry_t **link;
    if (writer->writing_forgotten || find(writer, e->name, e->task_id, &link) != NULL) {
        entry_free(e);
        return;
    }
    long long backoff = RETRY_INITIAL_MS;
    for (int i = 0; i < e->attempts && backoff < RETRY_MAX_MS; i++) {
        backoff *= 2;
    }
    e->attempts++;
    e->due_ms = tb_monotonic_ms() + (backoff < RETRY_MAX_MS ? backoff : RETRY_MAX_MS);
    append(writer, e);
}

/* The last pass at destroy: each pending entry once, until one fails. */
static void drain(tb_status_writer_t *writer)
{
    while (writer->pending != NULL && !writer->failing) {
        entry_t *e = writer->pending;
        writer->pending = e->next;
        write_unlocked(writer, e);
        entry_free(e);
    }
    size_t left = 0;
    while (writer->pending != NULL) {
        entry_t *e = writer->pending;
        writer->pending = e->next;
        entry_free(e);
        left++;
    }
    if (left > 0) {
        TB_LOG(TB_LOG_WARN, "tributary.status",
               "stopping with %zu connector and task states not recorded: the store "
               "did not take them",
               left);
    }
}

static void *run(void *opaque)
{
    tb_status_writer_t *writer = opaque;
    pthread_mutex_lock(&writer->lock);
    while (!writer->stopping) {
        int64_t wait_ms;
        entry_t *e = take_due(writer, tb_monotonic_ms(), &wait_ms);
        if (e != NULL) {
            if (write_unlocked(writer, e) != 0) {
                retry_later(writer, e);
            } else {
                entry_free(e);
            }
            writer->writing_forgotten = false;
            continue;
        }
        if (wait_ms < 0) {
            pthread_cond_wait(&writer->wake, &writer->lock);
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += wait_ms / 1000;
        until.tv_nsec += (wait_ms % 1000) * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&writer->wake, &writer->lock, &until);
    }
    drain(writer);
    pthread_mutex_unlock(&writer->lock);
    return NULL;
}

tb_status_writer_t *tb_status_writer_create(tb_store_t *store)
{
    tb_status_writer_t *writer = calloc(1, sizeof(*writer));
    pthread_condattr_t attr;
    if (writer == NULL) {
        return NULL;
    }
    writer->store = store;
    pthread_mutex_init(&writer->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&writer->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&writer->thread, NULL, run, writer) != 0) {
        goto fail;
    }
    return writer;

fail:
    pthread_cond_destroy(&writer->wake);
    pthread_mutex_destroy(&writer->lock);
    free(writer);
    return NULL;
}

void tb_status_writer_put(tb_status_writer_t *writer, const char *name, int task_id,
                          tb_state_t state, const char *trace)
{
    char *copy = trace != NULL ? strdup(trace) : NULL;
    entry_t **link;
    pthread_mutex_lock(&writer->lock);
    entry_t *e = find(writer, name, task_id, &link);
    if (e == NULL) {
        e = calloc(1, sizeof(*e));
        e->name = strdup(name);
        e->task_id = task_id;
        append(writer, e);
    }
    free(e->trace);
    e->trace = copy;
    e->state = state;
    e->attempts = 0;
    e->due_ms = 0; /* the newest state goes at once */
    pthread_cond_signal(&writer->wake);
    pthread_mutex_unlock(&writer->lock);
}

void tb_status_writer_forget(tb_status_writer_t *writer, const char *name)
{
    pthread_mutex_lock(&writer->lock);
    if (writer->writing != NULL && strcmp(writer->writing->name, name) == 0) {
        writer->writing_forgotten = true;
    }
    entry_t **at = &writer->pending;
    while (*at != NULL) {
        entry_t *e = *at;
        if (strcmp(e->name, name) == 0) {
            *at = e->next;
            entry_free(e);
        } else {
            at = &e->next;
        }
    }
    pthread_mutex_unlock(&writer->lock);
}

void tb_status_writer_destroy(tb_status_writer_t *writer)
{
    if (writer == NULL) {
        return;
    }
    pthread_mutex_lock(&writer->lock);
    writer->stopping = true;
    pthread_cond_signal(&writer->wake);
    pthread_mutex_unlock(&writer->lock);
    pthread_join(writer->thread, NULL);
    pthread_cond_destroy(&writer->wake);
    pthread_mutex_destroy(&writer->lock);
    free(writer);
}
