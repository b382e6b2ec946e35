/*
 * tb_task.h - one running task of a connector, driven by the task pool.
 *
 * A task owns its plugin state and its Kafka client. It runs as a pool job:
 * each run does a bounded step of work (serve delivery reports, move one
 * batch, record offsets when due) and parks until its Kafka queue, a timer
 * or the herder wakes it. A failed task restarts itself with exponential
 * backoff when auto-restart is on; its state, trace and restart count are
 * readable at any time and handed to the status writer on every change.
 */
#ifndef TB_TASK_H
#define TB_TASK_H

#include <jansson.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "connectors/runtime/source/eos/tb_fencing.h"
#include "connectors/runtime/worker/tb_status_writer.h"
#include "connectors/tb_limits.h"
#include "connectors/tb_plugin.h"
#include "core/tb_pool.h"
#include "core/tb_state.h"
#include "store/tb_store.h"

typedef struct tb_task tb_task_t;

typedef struct {
    const char *connector;
    int id;
    const tb_plugin_t *plugin;
    int task_count;                     /* the connector's tasks */
    const json_t *config;               /* the task config (borrowed, copied) */
    const json_t *connector_config;     /* its connector's (borrowed, copied) */
    const tb_client_settings_t *client; /* the worker's client settings (borrowed) */
    const tb_limits_t *limits;          /* what connectors may reach (borrowed) */
    const json_t *worker_config; /* the worker's converter keys (borrowed, copied) */
    /* exactly.once.source.support=enabled on a real Kafka cluster: sources
     * with exactly.once.support=requested run in transactions too */
    bool exactly_once_available;
    const tb_eos_settings_t *eos; /* where they keep their offsets (borrowed) */
    /* when their first transaction may begin: once task_generation, the
     * connector's task configs', is fenced (borrowed) */
    tb_fencing_t *fencing;
    unsigned long task_generation;
    /* the cluster answers CreateTopics: false for dev mode's mock cluster,
     * which creates a topic when it is first written */
    bool cluster_creates_topics;
    tb_target_state_t target; /* STARTED or PAUSED */
    tb_pool_t *pool;
    tb_store_t *store;
    tb_status_writer_t *status; /* takes its state changes (borrowed) */
    long long offset_flush_interval_ms;
    long long shutdown_timeout_ms;
    long long restart_backoff_initial_ms; /* 0: no automatic restart */
    long long restart_backoff_max_ms;
    /* Told the first time the task reads or writes a topic (topic tracking);
     * called from the task's thread without any herder lock held. */
    void (*topic_used)(void *opaque, const char *connector, const char *topic);
    void *topic_opaque;
} tb_task_options_t;

/* Creates the task and schedules its start on the pool. Never fails: a
 * task that cannot start is FAILED with a trace saying why. */
tb_task_t *tb_task_create(const tb_task_options_t *options);

/* Pauses (PAUSED) or resumes (STARTED) the task. */
void tb_task_set_target(tb_task_t *task, tb_target_state_t target);

/* Restarts the task now: stops its plugin and client, starts them again. */
void tb_task_restart(tb_task_t *task);

/* Whether a secret behind the task's config changed since the task last
 * started (tb_connector_config_secrets_digest): 1 when one did, 0 when
 * none did or the task has not started yet, -1 with errstr when a
 * reference cannot be resolved now. */
int tb_task_secrets_changed(tb_task_t *task, char *errstr, size_t errstr_size);

/* The task's state; *trace gets a copy of its failure trace (free()) or
 * NULL. */
tb_state_t tb_task_state(tb_task_t *task, char **trace);

/* How often the task has been restarted (by itself or by an operator). */
int tb_task_restarts(tb_task_t *task);

/* Stops the task gracefully: no new records, waits up to the shutdown
 * timeout for deliveries or flushes, records offsets, releases everything.
 * NULL is a no-op. */
void tb_task_destroy(tb_task_t *task);

#endif
