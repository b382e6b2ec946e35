/*
 * Zombie fencing of exactly-once sources' task generations (tb_fencing.h).
 * One entry per connector noted, each with one pool job that fences the
 * generation waiting, a bounded step at a time.
 */
#include "connectors/runtime/source/eos/tb_fencing.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/source/eos/tb_txn_fence.h"
#include "core/tb_log.h"
#include "core/tb_seam.h"
#include "core/tb_time.h"

#define FENCE_STEP_MS 500   /* a step's wait, as a task's transactional calls */
#define FENCE_RETRY_MS 5000 /* after a failed fencing */

typedef struct entry {
    struct tb_fencing *fencing;
    char *name;
    json_t *config;       /* of the generation noted last */
    unsigned long noted;  /* the newest generation noted */
    int noted_count;      /* its task count */
    int ids;              /* while it waits: the tasks whose ids to fence */
    unsigned long fenced; /* the newest generation whose tasks may start */
    bool fences;          /* this worker fences the connector */
    /* the job's: the generation it fences now (0: none), with its count */
    unsigned long running;
    int running_count;
    tb_txn_fence_t *fence;   /* the job's alone, while running */
    bool fence_warned;       /* the job's: a failure was logged */
    unsigned long to_record; /* fenced, its record not yet written (0: none) */
    int record_count;
    bool record_warned;
    int64_t start_at_ms; /* the running fencing's start (the test seam) */
    tb_pool_job_t *job;
    struct entry *next;
} entry_t;

struct tb_fencing {
    tb_pool_t *pool;
    tb_store_t *store;
    const tb_client_settings_t *client;
    char *prefix;
    bool records; /* the store keeps fencing records */
    pthread_mutex_t lock;
    entry_t *entries;
};

tb_fencing_t *tb_fencing_create(tb_pool_t *pool, tb_store_t *store,
                                const tb_client_settings_t *client, const char *prefix)
{
    tb_fencing_t *fencing = calloc(1, sizeof(*fencing));
    fencing->pool = pool;
    fencing->store = store;
    fencing->client = client;
    fencing->prefix = strdup(prefix);
    tb_store_fencing_t probe;
    tb_store_fencing_get(store, "", &probe);
    fencing->records = probe.kept;
    pthread_mutex_init(&fencing->lock, NULL);
    return fencing;
}

void tb_fencing_destroy(tb_fencing_t *fencing)
{
    if (fencing == NULL) {
        return;
    }
    while (fencing->entries != NULL) {
        entry_t *e = fencing->entries;
        fencing->entries = e->next;
        tb_pool_job_destroy(e->job);
        tb_txn_fence_destroy(e->fence);
        json_decref(e->config);
        free(e->name);
        free(e);
    }
    pthread_mutex_destroy(&fencing->lock);
    free(fencing->prefix);
    free(fencing);
}

/* Connector's entry, or NULL. Call with the lock held. */
static entry_t *find(const tb_fencing_t *fencing, const char *connector)
{
    for (entry_t *e = fencing->entries; e != NULL; e = e->next) {
        if (strcmp(e->name, connector) == 0) {
            return e;
        }
    }
    return NULL;
}

static int larger(int a, int b)
{
    return a > b ? a : b;
}

/* The transactional ids of connector's tasks [0, ids): a new array. */
static json_t *ids_of(const tb_fencing_t *fencing, const char *connector, int ids)
{
    json_t *list = json_array();
    for (int n = 0; n < ids; n++) {
        char id[400];
        snprintf(id, sizeof(id), "%s-%s-%d", fencing->prefix, connector, n);
        json_array_append_new(list, json_string(id));
    }
    return list;
}

/* The test seam TB_SEAM_FENCING_DELAY_MS (tb_seam.h). */
static int64_t test_delay_ms(void)
{
    const char *seam = tb_seam(TB_SEAM_FENCING_DELAY_MS);
    return seam != NULL ? atoll(seam) : 0;
}

/* The fencing's first step: the generation waiting is taken under the
 * lock, then (after the test seam's delay) the producer settings and the
 * ids. Returns when to run next. */
static int64_t fence_begin(entry_t *e)
{
    tb_fencing_t *fencing = e->fencing;
    pthread_mutex_lock(&fencing->lock);
    if (e->running == 0 && e->fences && e->noted > e->fenced && e->to_record == 0) {
        e->running = e->noted;
        e->running_count = e->noted_count;
        e->start_at_ms = tb_monotonic_ms() + test_delay_ms();
    }
    int ids = e->ids;
    int count = e->running_count;
    bool waiting = e->running != 0;
    int64_t delay = e->start_at_ms - tb_monotonic_ms();
    json_t *config = json_incref(e->config);
    pthread_mutex_unlock(&fencing->lock);
    if (!waiting || delay > 0) {
        json_decref(config);
        return waiting ? delay : TB_POOL_PARK;
    }
    char errstr[512];
    json_t *props = tb_client_props_resolved(fencing->client, TB_CLIENT_PRODUCER, config,
                                             errstr, sizeof(errstr));
    json_decref(config);
    if (props == NULL) {
        if (!e->fence_warned) { /* once, until a fencing succeeds */
            TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", e->name, -1,
                        "cannot fence its previous tasks' producers: %s; trying again "
                        "every %d ms",
                        errstr, FENCE_RETRY_MS);
        }
        pthread_mutex_lock(&fencing->lock);
        e->fence_warned = true;
        e->running = 0;
        pthread_mutex_unlock(&fencing->lock);
        return FENCE_RETRY_MS;
    }
    /* one task before and after: the new one fences its predecessor */
    json_t *list = ids_of(fencing, e->name, ids == 1 && count == 1 ? 0 : ids);
    TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", e->name, -1,
                "new task configs (%d task(s)) wait for the fencing of %zu "
                "transactional id(s) of the previous tasks",
                count, json_array_size(list));
    e->fence = tb_txn_fence_create(props, list);
    json_decref(list);
    json_decref(props);
    return TB_POOL_RUN_AGAIN;
}

/* The job: fences the generation waiting, one bounded step at a time; a
 * store that keeps records is written by tb_fencing_tick. */
static int64_t run(void *opaque)
{
    entry_t *e = opaque;
    tb_fencing_t *fencing = e->fencing;
    if (e->fence == NULL) {
        return fence_begin(e);
    }
    char errstr[512];
    int rc = tb_txn_fence_step(e->fence, FENCE_STEP_MS, errstr, sizeof(errstr));
    if (rc == 0) {
        return TB_POOL_RUN_AGAIN;
    }
    tb_txn_fence_destroy(e->fence);
    e->fence = NULL;
    pthread_mutex_lock(&fencing->lock);
    if (rc < 0 && !e->fence_warned) { /* once, until a fencing succeeds */
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", e->name, -1,
                    "%s; its new tasks wait, the fencing is tried again every %d ms",
                    errstr, FENCE_RETRY_MS);
    }
    e->fence_warned = rc < 0;
    if (rc > 0 && fencing->records) {
        e->to_record = e->running;
        e->record_count = e->running_count;
    } else if (rc > 0 && e->running > e->fenced) {
        e->fenced = e->running;
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", e->name, -1,
                    "its previous tasks' producers are fenced: %d new task(s) may start",
                    e->running_count);
    }
    e->running = 0;
    pthread_mutex_unlock(&fencing->lock);
    return rc < 0 ? FENCE_RETRY_MS : TB_POOL_RUN_AGAIN; /* a newer generation? */
}

void tb_fencing_note(tb_fencing_t *fencing, const tb_fencing_generation_t *g)
{
    pthread_mutex_lock(&fencing->lock);
    entry_t *e = find(fencing, g->connector);
    bool first = e == NULL;
    if (first) {
        e = calloc(1, sizeof(*e));
        e->fencing = fencing;
        e->name = strdup(g->connector);
        e->next = fencing->entries;
        fencing->entries = e;
    }
    if (g->generation > e->noted) {
        int previous = first ? 0 : e->noted_count;
        bool no_record = g->store.kept && g->store.task_count < 0;
        e->ids = larger(larger(e->ids, previous),
                        larger(g->store.task_count, no_record ? g->task_count : 0));
        e->noted = g->generation;
        e->noted_count = g->task_count;
        json_decref(e->config);
        e->config = json_deep_copy(g->config);
        bool waits = g->store.kept ? g->store.pending : !first;
        if (!waits) {
            e->fenced = g->generation;
        }
    } else if (g->generation == e->noted && g->store.kept && !g->store.pending &&
               e->fenced < e->noted) {
        e->fenced = e->noted; /* another worker recorded its fencing */
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", e->name, -1,
                    "the config topic records its fencing: %d new task(s) may start",
                    e->noted_count);
    }
    if (e->fenced >= e->noted) {
        e->ids = 0;
    }
    e->fences = g->fences;
    if (e->fences && e->noted > e->fenced && e->running == 0 && e->to_record == 0) {
        if (e->job == NULL) {
            e->job = tb_pool_job_create(fencing->pool, run, e);
        }
        tb_pool_job_wake(e->job);
    }
    pthread_mutex_unlock(&fencing->lock);
}

bool tb_fencing_passes(tb_fencing_t *fencing, const char *connector,
                       unsigned long generation)
{
    pthread_mutex_lock(&fencing->lock);
    const entry_t *e = find(fencing, connector);
    bool passes = e != NULL && generation <= e->fenced;
    pthread_mutex_unlock(&fencing->lock);
    return passes;
}

int tb_fencing_fence_now(tb_fencing_t *fencing, const char *connector,
                         const json_t *config, int task_count, char *errstr,
                         size_t errstr_size)
{
    tb_store_fencing_t view;
    tb_store_fencing_get(fencing->store, connector, &view);
    pthread_mutex_lock(&fencing->lock);
    const entry_t *e = find(fencing, connector);
    int ids = larger(larger(view.task_count, task_count), e != NULL ? e->noted_count : 0);
    pthread_mutex_unlock(&fencing->lock);
    json_t *props = tb_client_props_resolved(fencing->client, TB_CLIENT_PRODUCER, config,
                                             errstr, errstr_size);
    if (props == NULL) {
        return -1;
    }
    json_t *list = ids_of(fencing, connector, ids);
    tb_txn_fence_t *fence = tb_txn_fence_create(props, list);
    int rc;
    while ((rc = tb_txn_fence_step(fence, FENCE_STEP_MS, errstr, errstr_size)) == 0) {
    }
    tb_txn_fence_destroy(fence);
    json_decref(list);
    json_decref(props);
    if (rc > 0) {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", connector, -1,
                    "fenced %d task(s)' producers before changing its offsets", ids);
    }
    return rc > 0 ? 0 : -1;
}

void tb_fencing_tick(tb_fencing_t *fencing)
{
    pthread_mutex_lock(&fencing->lock);
    json_t *due = json_array();
    for (entry_t *e = fencing->entries; e != NULL; e = e->next) {
        if (!e->fences) {
            e->to_record = 0; /* no longer the leader: its successor fences */
        }
        if (e->to_record != 0) {
            json_array_append_new(due, json_pack("{s:s, s:i, s:I}", "name", e->name,
                                                 "count", e->record_count, "generation",
                                                 (json_int_t)e->to_record));
        }
    }
    pthread_mutex_unlock(&fencing->lock);
    size_t i;
    json_t *item;
    json_array_foreach (due, i, item) {
        const char *name = json_string_value(json_object_get(item, "name"));
        int count = (int)json_integer_value(json_object_get(item, "count"));
        char errstr[512];
        int rc =
            tb_store_fencing_put(fencing->store, name, count, errstr, sizeof(errstr));
        pthread_mutex_lock(&fencing->lock);
        entry_t *e = find(fencing, name);
        unsigned long generation =
            (unsigned long)json_integer_value(json_object_get(item, "generation"));
        if (rc != 0 && !e->record_warned) {
            TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1,
                        "its previous tasks' producers are fenced, but the record "
                        "cannot be written: %s; trying again",
                        errstr);
        }
        e->record_warned = rc != 0;
        if (rc == 0) {
            e->to_record = 0;
            if (generation > e->fenced) {
                e->fenced = generation;
            }
            TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1,
                        "its previous tasks' producers are fenced (tasks-fencing-%s: "
                        "%d): its new task(s) may start",
                        name, count);
            tb_pool_job_wake(e->job);
        }
        pthread_mutex_unlock(&fencing->lock);
    }
    json_decref(due);
}
