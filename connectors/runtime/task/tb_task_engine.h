/*
 * tb_task_engine.h - what moves records for a task: the source engine
 * (plugin -> Kafka) or the sink engine (Kafka -> plugin). Internal to the
 * runtime: tb_task.c drives an engine through these calls from the pool.
 */
#ifndef TB_TASK_ENGINE_H
#define TB_TASK_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/kafka/tb_client_props.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "connectors/runtime/source/eos/tb_fencing.h"
#include "connectors/runtime/task/tb_dlq.h"
#include "connectors/tb_limits.h"
#include "connectors/tb_plugin.h"
#include "core/tb_pool.h"
#include "store/tb_store.h"

/* What an engine needs to know about its task. Owned by the task; valid
 * for the engine's whole life. */
typedef struct {
    const char *connector;
    int id;
    const tb_plugin_t *plugin;
    json_t *config;           /* the task config */
    json_t *connector_config; /* the connector config (framework keys) */
    /* connector_config parsed by its tables (framework and plugin keys,
     * defaults applied, enum values in their listed spelling) */
    json_t *settings;
    /* the framework's keys of settings, typed: what the engine reads them
     * from (borrows from settings) */
    tb_connector_settings_t framework;
    bool exactly_once_available;  /* the worker runs sources in transactions */
    const tb_eos_settings_t *eos; /* and where (the worker's) */
    /* a transactional task's first transaction waits until
     * tb_fencing_passes(fencing, connector, task_generation) */
    tb_fencing_t *fencing;
    unsigned long task_generation;
    int task_count;                     /* the connector's tasks, this one among them */
    bool cluster_creates_topics;        /* CreateTopics works (not dev mode) */
    const tb_client_settings_t *client; /* the worker's side of its Kafka clients */
    const tb_limits_t *limits;          /* what the plugin may reach */
    const atomic_bool *stopping;        /* the plugin's ctx->stopping */
    json_t *worker_config;              /* the worker's converter keys (defaults) */
    tb_store_t *store;
    /* Makes the task run soon; safe from any thread, including librdkafka's,
     * until the engine's stop returns. */
    void (*wake)(void *task);
    void *task;
    /* Says what the task waits for (a partition whose start cannot be
     * resolved yet; an exactly-once task's start), shown as the trace of its
     * RUNNING or PAUSED status, or of its UNASSIGNED one while it starts;
     * NULL: nothing. Copied; called from the engine's steps only. May be
     * NULL (no one to tell). */
    void (*waiting_for)(void *task, const char *what);
    /* Topic tracking: called once per topic the engine reads or writes. */
    void (*topic_used)(void *opaque, const char *connector, const char *topic);
    void *topic_opaque;
    long long offset_flush_interval_ms;
    long long shutdown_timeout_ms;
} tb_task_env_t;

typedef struct {
    /* Starts the plugin task and the Kafka client. */
    int (*start)(const tb_task_env_t *env, void **engine, char *errstr,
                 size_t errstr_size);
    /* One bounded step. Returns what a pool job returns (TB_POOL_PARK,
     * TB_POOL_RUN_AGAIN or a delay in ms), or -2 on a failure described in
     * errstr. */
    int64_t (*step)(void *engine, bool paused, char *errstr, size_t errstr_size);
    /* Stops gracefully within env->shutdown_timeout_ms and frees. */
    void (*stop)(void *engine);
    /* Whether the engine has started: a start that waits on Kafka goes on
     * in its steps, and the task shows RUNNING only once it is done. NULL:
     * started when start returns. */
    bool (*started)(const void *engine);
} tb_task_engine_t;

#define TB_TASK_STEP_FAILED (-2)

/* Starts the plugin's task with its config's secrets resolved, after
 * setting ctx->limits to the task's. Returns what task_start returns;
 * *plugin_task is NULL on failure. */
int tb_task_start_plugin(const tb_task_env_t *env, tb_task_context_t *ctx,
                         void **plugin_task, char *errstr, size_t errstr_size);

/* The converter of a task's keys (which = "key") or values ("value"): the
 * connector's key.converter / value.converter and their settings, else the
 * worker's. NULL with errstr when it cannot be created. */
tb_converter_t *tb_task_converter_create(const tb_task_env_t *env, const char *which,
                                         char *errstr, size_t errstr_size);

/* The task's dead letter queue: errors.deadletterqueue.topic.name with
 * errors.tolerance=all, through a producer with the connector's settings.
 * Its topic is created first when it does not exist (tb_dlq_topic.h), with
 * the connector's admin settings, except in dev mode. Returns 0 with *dlq
 * NULL when the connector has none, -1 with errstr when the topic or the
 * producer cannot be made. The caller owns *dlq (tb_dlq_destroy). */
int tb_task_dlq_create(const tb_task_env_t *env, tb_dlq_t **dlq, char *errstr,
                       size_t errstr_size);

extern const tb_task_engine_t tb_source_engine;
extern const tb_task_engine_t tb_sink_engine;

#endif
