/*
 * tb_worker.h - what this worker runs: the task pool, the worker's link to
 * the Kafka cluster and the client settings every connector's clients start
 * from, and for each connector assigned to it its instance (state, trace)
 * and its tasks. It also tracks the topics each connector used.
 *
 * It starts and stops tasks as the herder tells it, from the config state
 * (tb_config_state.h) and the assignment (tb_assignor.h); it decides
 * nothing about configs.
 *
 * Ownership: the worker owns its pool, its cluster link, its tasks and its
 * copies of the options' JSON; it borrows the store. Tasks detached with
 * tb_worker_detach_tasks belong to the caller until tb_worker_stop_tasks.
 *
 * Locking: the connector instances and their tasks have no lock of their
 * own; the herder calls every function that reads or changes them under
 * its lock, and tb_worker_stop_tasks (which waits for each task's graceful
 * stop) with it released. Topic tracking has a lock of its own, since task
 * threads report topics while the herder, holding its lock, may wait for
 * them; task steps take no other lock of the worker's.
 */
#ifndef TB_WORKER_H
#define TB_WORKER_H

/* How many threads of its own one tb_worker_stop_tasks starts, at most. */
#define TB_WORKER_STOP_THREADS 15

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/runtime/assignment/tb_assignor.h"
#include "connectors/runtime/config/tb_config_state.h"
#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "connectors/runtime/source/eos/tb_fencing.h"
#include "connectors/runtime/worker/tb_task.h"
#include "connectors/tb_limits.h"
#include "core/tb_secret.h"
#include "store/tb_store.h"

typedef struct tb_worker tb_worker_t;

/* What the worker file says about running connectors: the herder's and
 * the worker's settings (tb_herder_create copies them). */
typedef struct {
    const char *store_path; /* the store file, or distributed the data directory's */
    /* Distributed mode: the Kafka store (tb_store_kafka.h), handed over to
     * the herder, which closes it; NULL: the herder opens store_path's SQLite
     * store. */
    tb_store_t *store;
    /* Distributed mode: what this worker runs is what tb_herder_assignment_set
     * says (tb_cluster.h), not the standalone assignor's everything. */
    bool distributed;
    const json_t *kafka_props; /* the worker's client keys: common ones, and
                              producer./consumer./admin. ones */
    bool overrides_allowed;    /* connector.client.config.override.policy */
    const json_t *override_allowlist;
    bool literal_secrets;             /* secrets.literal.allowed; distributed, they
                                         are sealed under the key tb_secret_seal.h
                                         keeps (refused without one) */
    bool downgrade_allowed;           /* connector.client.security.downgrade.allowed */
    bool producers_shared;            /* connector.producer.sharing.enabled */
    tb_secret_policy_t secret_policy; /* config.providers.*, what references reach */
    tb_limits_t limits;               /* file.allowed.dirs, http.sink.allowed.hosts */
    const json_t *converter_config;   /* worker key.converter, value.converter and
                                         their settings, defaults applied */
    bool dev;                         /* run an in-process mock Kafka cluster */
    bool exactly_once_source;         /* exactly.once.source.support=enabled */
    tb_eos_settings_t eos;            /* where exactly-once sources keep offsets */
    const char *worker_id;            /* host:port shown in status */
    int task_threads;                 /* size of the task pool */
    long long offset_flush_interval_ms;
    long long shutdown_timeout_ms;
    long long restart_backoff_initial_ms; /* 0: failed tasks stay FAILED */
    long long restart_backoff_max_ms;
} tb_worker_options_t;

/* The settings connectors' clients start from, for a worker of options
 * (borrowing its kafka_props and override_allowlist). */
tb_client_settings_t tb_worker_client_settings(const tb_worker_options_t *options);

/* Whether a worker of options can run sources in transactions:
 * exactly.once.source.support=enabled and a real Kafka cluster
 * (librdkafka's mock cluster does not keep transactions as a broker
 * does). */
bool tb_worker_options_exactly_once(const tb_worker_options_t *options);

/* Checks the worker's client keys (errors name the worker key; the ones
 * without effect are logged), connects its own client in the background,
 * and starts the task pool. Returns NULL with errstr on failure. */
tb_worker_t *tb_worker_create(const tb_worker_options_t *options, tb_store_t *store,
                              char *errstr, size_t errstr_size);

/* Stops every task gracefully (recording offsets) and releases everything.
 * NULL is a no-op. */
void tb_worker_destroy(tb_worker_t *worker);

/* host:port, as status shows it. */
const char *tb_worker_id(const tb_worker_t *worker);

/* The settings connectors' clients start from, with the bootstrap servers
 * tasks use. Valid for the worker's life. */
const tb_client_settings_t *tb_worker_client(const tb_worker_t *worker);

/* The fencing of exactly-once sources' task generations (tb_fencing.h)
 * that this worker's tasks wait for. Valid for the worker's life. */
tb_fencing_t *tb_worker_fencing(const tb_worker_t *worker);

/* tb_worker_options_exactly_once of this worker's options. */
bool tb_worker_exactly_once_available(const tb_worker_t *worker);

/* Copies the Kafka cluster id into buf; false while it is not known. */
bool tb_worker_cluster_id(const tb_worker_t *worker, char *buf, size_t size);

/* The bootstrap servers tasks use (the mock cluster's in dev mode). */
const char *tb_worker_bootstrap(const tb_worker_t *worker);

/* How long the task pool has run nothing, in ms: a heartbeat job beats
 * every second while the pool runs. */
int64_t tb_worker_pool_silence_ms(tb_worker_t *worker);

/* Records the state of connector name's instance (trace: why it FAILED,
 * or NULL), in memory and in its metric, and hands it to the status writer
 * for the store (tb_status_writer.h): never waits on the store. */
void tb_worker_connector_state_set(tb_worker_t *worker, const char *name,
                                   tb_state_t state, const char *trace);

/* The state of connector name's instance; *trace (borrowed until its next
 * change) why it FAILED, or NULL. UNASSIGNED before its first state. */
tb_state_t tb_worker_connector_state(tb_worker_t *worker, const char *name,
                                     const char **trace);

/* Brings c's tasks here to its target state: each running task gets it,
 * and each task config assigned to this worker that runs no task gets
 * one. */
void tb_worker_apply(tb_worker_t *worker, const tb_known_connector_t *c,
                     const tb_assignment_t *assignment);

/* How many tasks of connector name may run here: the slots numbered by
 * task; a slot of a task assigned elsewhere holds none. */
size_t tb_worker_task_slots(tb_worker_t *worker, const char *name);

/* Whether any task of connector name runs here. */
bool tb_worker_runs_tasks(tb_worker_t *worker, const char *name);

/* Task task of connector name: its state (UNASSIGNED when it does not run
 * here) and a copy of its failure trace (free()) or NULL. */
tb_state_t tb_worker_task_state(tb_worker_t *worker, const char *name, int task,
                                char **trace);

/* How often that task was restarted; 0 when it does not run here. */
int tb_worker_task_restarts(tb_worker_t *worker, const char *name, int task);

/* Restarts each task of connector name running here whose secrets changed
 * since it started (tb_task_secrets_changed), logging it, and appends
 * "<name>-<task>" of each to restarted. A task whose reference cannot be
 * resolved now is logged and left running. */
void tb_worker_secrets_reload(tb_worker_t *worker, const char *name, json_t *restarted);

/* Restarts that task; false when it does not run here. */
bool tb_worker_task_restart(tb_worker_t *worker, const char *name, int task);

/* How many of c's running tasks a config change keeps: a started
 * connector keeps every task, in order, whose task config (in fresh, the
 * new task configs) and framework keys (the config's keys but the
 * plugin's own) are unchanged; an exactly-once source whose task configs
 * change keeps none (the fencing of the old ones fences them too). Call
 * before the config state changes. */
size_t tb_worker_tasks_kept(tb_worker_t *worker, const tb_known_connector_t *c,
                            const tb_plugin_t *plugin, const json_t *config,
                            const json_t *fresh);

/* Takes the tasks of connector name from number keep on out of the
 * worker; *count gets how many. Stop them with tb_worker_stop_tasks. */
tb_task_t **tb_worker_detach_tasks(tb_worker_t *worker, const char *name, size_t keep,
                                   size_t *count);

/* Takes out of the worker the tasks of connector name that run here and
 * that assignment gives to no slot of this worker (their slots stay,
 * empty); *count gets how many. Stop them with tb_worker_stop_tasks. */
tb_task_t **tb_worker_detach_unassigned(tb_worker_t *worker, const char *name,
                                        const tb_assignment_t *assignment, size_t *count);

/* Stops and frees detached tasks: each stops gracefully, recording its
 * offsets, within task.shutdown.graceful.timeout.ms (tb_task_destroy).
 * Up to TB_WORKER_STOP_THREADS + 1 tasks stop at once (threads of the call,
 * and the calling thread), so that the call takes about
 * ceil(count / (TB_WORKER_STOP_THREADS + 1)) such bounds, not count of
 * them. Call without the herder's lock. */
void tb_worker_stop_tasks(tb_task_t **tasks, size_t count);

/* Forgets connector name's instance, its states not written to the store
 * yet and the topics it used; its tasks were detached and stopped. */
void tb_worker_connector_forget(tb_worker_t *worker, const char *name);

/* The topics connector name used since they were last forgotten: an array
 * of names, new reference. */
json_t *tb_worker_topics(tb_worker_t *worker, const char *name);

/* Forgets the topics connector name used; any name. */
void tb_worker_topics_forget(tb_worker_t *worker, const char *name);

#endif
