#include "connectors/runtime/worker/tb_task.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/metrics/tb_task_metrics.h"
#include "connectors/runtime/task/tb_task_engine.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

struct tb_task {
    tb_task_env_t env;
    tb_status_writer_t *status;
    tb_pool_job_t *job;   /* guarded by lock; NULL once the task is stopping */
    atomic_bool stopping; /* set as job is taken: the plugin's ctx->stopping */
    char *connector;
    const tb_task_engine_t *engine;
    void *engine_state;   /* touched only by the pool job, or after it ends */
    char *invalid_config; /* set at creation: why the connector config does not
                             validate, or NULL */
    pthread_mutex_t lock;
    tb_state_metrics_t state_metrics;
    /* guarded by lock */
    tb_state_t state;
    char *trace;
    int restarts;
    tb_target_state_t target;
    bool restart_requested;
    /* the secrets behind env.config when the task last started
     * (tb_task_secrets_changed); secrets_known: taken */
    unsigned char secrets[32];
    bool secrets_known;
    /* owned by the pool job */
    char *waiting; /* what the engine waits for (waiting_for), or NULL */
    int64_t started_ms;
    int64_t retry_at_ms; /* when a failed task starts again; 0: never */
    long long backoff_ms;
    long long backoff_initial_ms;
    long long backoff_max_ms;
};

static void set_state(tb_task_t *task, tb_state_t state, const char *trace)
{
    pthread_mutex_lock(&task->lock);
    bool changed = task->state != state;
    task->state = state;
    free(task->trace);
    task->trace = trace != NULL ? strdup(trace) : NULL;
    tb_state_metrics_set(&task->state_metrics, state, task->restarts);
    pthread_mutex_unlock(&task->lock);
    if (changed || trace != NULL) {
        tb_status_writer_put(task->status, task->connector, task->env.id, state, trace);
    }
}

/* Marks the task FAILED and plans its automatic restart. Returns what the
 * pool job should return. */
static int64_t fail(tb_task_t *task, const char *reason)
{
    int64_t now = tb_monotonic_ms();
    TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", task->connector, task->env.id,
                "task failed: %s", reason);
    set_state(task, TB_STATE_FAILED, reason);
    if (task->backoff_initial_ms <= 0) {
        task->retry_at_ms = 0;
        return TB_POOL_PARK;
    }
    /* a task that ran well for a while starts its backoff afresh */
    if (now - task->started_ms > task->backoff_max_ms || task->backoff_ms == 0) {
        task->backoff_ms = task->backoff_initial_ms;
    } else if (task->backoff_ms * 2 <= task->backoff_max_ms) {
        task->backoff_ms *= 2;
    } else {
        task->backoff_ms = task->backoff_max_ms;
    }
    task->retry_at_ms = now + task->backoff_ms;
    TB_LOG_TASK(TB_LOG_INFO, "tributary.task", task->connector, task->env.id,
                "restarting in %lld ms", task->backoff_ms);
    return task->backoff_ms;
}

static void stop_engine(tb_task_t *task)
{
    if (task->engine_state != NULL) {
        task->engine->stop(task->engine_state);
        task->engine_state = NULL;
    }
    free(task->waiting);
    task->waiting = NULL;
}

/* The engine's waiting_for: shown at once as the trace of a running,
 * paused or starting (UNASSIGNED) task, and whenever it shows RUNNING or
 * PAUSED again. */
static void waiting_for(void *opaque, const char *what)
{
    tb_task_t *task = opaque;
    if (what == task->waiting ||
        (what != NULL && task->waiting != NULL && strcmp(what, task->waiting) == 0)) {
        return;
    }
    free(task->waiting);
    task->waiting = what != NULL ? strdup(what) : NULL;
    pthread_mutex_lock(&task->lock);
    tb_state_t state = task->state;
    pthread_mutex_unlock(&task->lock);
    if (state == TB_STATE_RUNNING || state == TB_STATE_PAUSED ||
        state == TB_STATE_UNASSIGNED) {
        set_state(task, state, task->waiting);
    }
}

/* Starts the engine when it is not running. Returns 0 when it runs, or what
 * the pool job should return. */
static int64_t ensure_started(tb_task_t *task, bool restart_requested)
{
    char errstr[1024];
    if (task->engine_state != NULL) {
        return 0;
    }
    if (!restart_requested && task->state == TB_STATE_FAILED) {
        if (task->retry_at_ms == 0) {
            return TB_POOL_PARK;
        }
        int64_t wait = task->retry_at_ms - tb_monotonic_ms();
        if (wait > 0) {
            return wait;
        }
    }
    if (task->state == TB_STATE_FAILED || restart_requested) {
        pthread_mutex_lock(&task->lock);
        task->restarts++;
        pthread_mutex_unlock(&task->lock);
    }
    task->started_ms = tb_monotonic_ms();
    /* before the plugin resolves them: a secret that changes in between
     * only makes the next reload restart the task once more */
    unsigned char secrets[32];
    bool known = tb_connector_config_secrets_digest(task->env.config, secrets, errstr,
                                                    sizeof(errstr)) == 0;
    pthread_mutex_lock(&task->lock);
    memcpy(task->secrets, secrets, sizeof(secrets));
    task->secrets_known = known;
    pthread_mutex_unlock(&task->lock);
    if (task->invalid_config != NULL) {
        return fail(task, task->invalid_config);
    }
    if (task->engine->start(&task->env, &task->engine_state, errstr, sizeof(errstr)) !=
        0) {
        task->engine_state = NULL;
        return fail(task, errstr);
    }
    return 0;
}

/* Shows the task RUNNING (PAUSED when paused) once its engine has
 * started. */
static void show_started(tb_task_t *task, bool paused)
{
    tb_state_t shown = paused ? TB_STATE_PAUSED : TB_STATE_RUNNING;
    pthread_mutex_lock(&task->lock);
    bool changed = task->state != shown;
    pthread_mutex_unlock(&task->lock);
    if (changed &&
        (task->engine->started == NULL || task->engine->started(task->engine_state))) {
        set_state(task, shown, task->waiting);
    }
}

static int64_t run(void *opaque)
{
    tb_task_t *task = opaque;
    char errstr[1024];

    pthread_mutex_lock(&task->lock);
    tb_target_state_t target = task->target;
    bool restart_requested = task->restart_requested;
    task->restart_requested = false;
    pthread_mutex_unlock(&task->lock);

    if (restart_requested) {
        stop_engine(task);
        set_state(task, TB_STATE_RESTARTING, NULL);
    }
    int64_t waiting = ensure_started(task, restart_requested);
    if (waiting != 0) {
        return waiting;
    }
    bool paused = target == TB_TARGET_PAUSED;
    show_started(task, paused);
    int64_t next = task->engine->step(task->engine_state, paused, errstr, sizeof(errstr));
    if (next == TB_TASK_STEP_FAILED) {
        stop_engine(task);
        return fail(task, errstr);
    }
    /* the step that started it (an exactly-once start) may have moved
     * records already: shown at once, not at the next run */
    show_started(task, paused);
    return next;
}

/* The engine's way to make the task run; a no-op once the task stops. */
static void wake(void *opaque)
{
    tb_task_t *task = opaque;
    pthread_mutex_lock(&task->lock);
    if (task->job != NULL) {
        tb_pool_job_wake(task->job);
    }
    pthread_mutex_unlock(&task->lock);
}

/* Parses the task's connector config into env.settings. The herder
 * validated it before storing it; a config stored by a build that accepted
 * what this one refuses is kept in invalid_config, and the task fails with
 * it instead of running on defaults. */
static void parse_settings(tb_task_t *task)
{
    char problems[1024];
    json_t *named = json_deep_copy(task->env.connector_config);
    json_t *errors = json_object();
    json_object_set_new(named, "name", json_string(task->connector));
    task->env.settings = tb_connector_config_validate(task->env.plugin, named, errors);
    tb_connector_settings_fill(task->env.plugin, task->env.settings,
                               &task->env.framework);
    if (tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", problems, sizeof(problems));
        task->invalid_config = strdup(problems);
    }
    json_decref(errors);
    json_decref(named);
}

tb_task_t *tb_task_create(const tb_task_options_t *options)
{
    tb_task_t *task = calloc(1, sizeof(*task));
    pthread_mutex_init(&task->lock, NULL);
    atomic_init(&task->stopping, false);
    task->connector = strdup(options->connector);
    task->status = options->status;
    task->engine =
        options->plugin->kind == TB_PLUGIN_SINK ? &tb_sink_engine : &tb_source_engine;
    task->state = TB_STATE_UNASSIGNED;
    task->target = options->target;
    task->backoff_initial_ms = options->restart_backoff_initial_ms;
    task->backoff_max_ms = options->restart_backoff_max_ms;
    task->env = (tb_task_env_t){
        .connector = task->connector,
        .id = options->id,
        .plugin = options->plugin,
        .config = json_deep_copy(options->config),
        .connector_config = json_deep_copy(options->connector_config),
        .exactly_once_available = options->exactly_once_available,
        .eos = options->eos,
        .fencing = options->fencing,
        .task_generation = options->task_generation,
        .task_count = options->task_count,
        .cluster_creates_topics = options->cluster_creates_topics,
        .client = options->client,
        .limits = options->limits,
        .stopping = &task->stopping,
        .worker_config = json_deep_copy(options->worker_config),
        .store = options->store,
        .offset_flush_interval_ms = options->offset_flush_interval_ms,
        .shutdown_timeout_ms = options->shutdown_timeout_ms,
        .wake = wake,
        .waiting_for = waiting_for,
        .task = task,
        .topic_used = options->topic_used,
        .topic_opaque = options->topic_opaque,
    };
    parse_settings(task);
    tb_state_metrics_take(&task->state_metrics, task->connector, options->id);
    task->job = tb_pool_job_create(options->pool, run, task);
    set_state(task, TB_STATE_UNASSIGNED, NULL);
    wake(task);
    return task;
}

void tb_task_set_target(tb_task_t *task, tb_target_state_t target)
{
    pthread_mutex_lock(&task->lock);
    task->target = target;
    pthread_mutex_unlock(&task->lock);
    wake(task);
}

void tb_task_restart(tb_task_t *task)
{
    pthread_mutex_lock(&task->lock);
    task->restart_requested = true;
    task->state = TB_STATE_RESTARTING;
    pthread_mutex_unlock(&task->lock);
    wake(task);
}

int tb_task_secrets_changed(tb_task_t *task, char *errstr, size_t errstr_size)
{
    unsigned char now[32];
    if (tb_connector_config_secrets_digest(task->env.config, now, errstr, errstr_size) !=
        0) {
        return -1;
    }
    pthread_mutex_lock(&task->lock);
    bool changed = task->secrets_known && memcmp(now, task->secrets, sizeof(now)) != 0;
    pthread_mutex_unlock(&task->lock);
    return changed ? 1 : 0;
}

tb_state_t tb_task_state(tb_task_t *task, char **trace)
{
    pthread_mutex_lock(&task->lock);
    tb_state_t state = task->state;
    *trace = task->trace != NULL ? strdup(task->trace) : NULL;
    pthread_mutex_unlock(&task->lock);
    return state;
}

int tb_task_restarts(tb_task_t *task)
{
    pthread_mutex_lock(&task->lock);
    int restarts = task->restarts;
    pthread_mutex_unlock(&task->lock);
    return restarts;
}

void tb_task_destroy(tb_task_t *task)
{
    if (task == NULL) {
        return;
    }
    pthread_mutex_lock(&task->lock);
    tb_pool_job_t *job = task->job;
    task->job = NULL;
    pthread_mutex_unlock(&task->lock);
    atomic_store(&task->stopping, true); /* a plugin's wait ends at its next slice */
    tb_pool_job_destroy(job);
    stop_engine(task); /* librdkafka may still call wake() until this returns */
    json_decref(task->env.config);
    json_decref(task->env.connector_config);
    json_decref(task->env.settings);
    json_decref(task->env.worker_config);
    tb_state_metrics_release(&task->state_metrics);
    pthread_mutex_destroy(&task->lock);
    free(task->trace);
    free(task->invalid_config);
    free(task->connector);
    free(task);
}
