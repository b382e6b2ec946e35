/*
 * tb_herder.h - the worker's herder: one function per REST operation.
 *
 * As in Kafka Connect, the herder joins what the cluster knows (the config
 * state, tb_config_state.h: connectors' configs, target states and task
 * configs, kept in the store), who runs what (tb_assignor.h) and what
 * this worker runs (tb_worker.h: the task pool and the tasks); it checks
 * configs (tb_connector_validate.h), keeps literal secrets out of the store
 * (tb_connector_secrets.h) and changes offsets (tb_offsets_ops.h). A
 * standalone worker is the one-worker case: its assignor gives it
 * everything. A distributed worker runs what its cluster's leader assigned
 * it (tb_herder_assignment_set, from tb_cluster.h), learns other workers'
 * changes from the Kafka store (tb_herder_refresh), and shows the status
 * of work that runs elsewhere from the status topic. The REST layer calls
 * it and translates the result; nothing here knows about HTTP.
 *
 * Every function may be called from any thread: one lock (herder_internal.h) guards
 * the config state and the worker's tasks, and is never held through slow
 * work.
 *
 * Operations return TB_OK, or an error code with Connect's message for it in
 * msg. JSON results are new references in *out, only on TB_OK. Every config
 * that leaves the herder has its PASSWORD values shown as "[hidden]".
 */
#ifndef TB_HERDER_H
#define TB_HERDER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/runtime/config/tb_connector_validate.h"
#include "connectors/runtime/worker/tb_worker.h"
#include "core/tb_error.h"
#include "core/tb_state.h"

typedef struct tb_herder tb_herder_t;

typedef struct tb_store tb_store_t;
struct tb_assignment;
struct tb_assignment_input;

/* The checks a worker of options makes of a connector config, for
 * validation without a worker (tributary validate): no store, no Kafka.
 * Fills *client; the result borrows it and options. */
tb_connector_checks_t tb_herder_offline_checks(const tb_worker_options_t *options,
                                               tb_client_settings_t *client);

/* Opens the store, connects to Kafka (in the background), loads every
 * stored connector and starts it in its target state. Returns NULL and fills
 * errstr on failure. */
tb_herder_t *tb_herder_create(const tb_worker_options_t *options, char *errstr,
                              size_t errstr_size);

/* Stops every task gracefully (recording offsets) and releases everything.
 * NULL is a no-op. */
void tb_herder_destroy(tb_herder_t *herder);

/* Distributed mode, for tb_cluster.h. */

/* Computes the next assignment into *out from base (live and waiting
 * workers, the previous assignment) and the work of every connector the
 * config state knows (base's work is ignored). Returns 0, or -1 when out of
 * memory. */
int tb_herder_assign(tb_herder_t *herder, const struct tb_assignment_input *base,
                     struct tb_assignment *out);

/* Makes assignment (copied) what this worker runs: every task it no longer
 * gives this worker stops (gracefully, before the call returns), every
 * task it gives this worker and that runs nowhere here starts. */
void tb_herder_assignment_set(tb_herder_t *herder,
                              const struct tb_assignment *assignment);

/* Applies what other workers wrote to the store (tb_store_refresh): each
 * connector created, changed or deleted elsewhere is brought here to its
 * new config, target state and task configs, under the current
 * assignment; each restart request read (tb_store_restarts_take)
 * restarts what this worker runs of its connector. Returns 0, or -1 with
 * errstr when the store cannot be read. */
int tb_herder_refresh(tb_herder_t *herder, char *errstr, size_t errstr_size);

/* Exactly-once sources' zombie fencing (tb_fencing.h), each tick: notes
 * what the store says of every connector's task configs (another worker
 * recorded their fencing, or they wait for one), with leader telling
 * whether this worker does the fencing, and writes the records of
 * fencings done. Call without the herder's lock. */
void tb_herder_fencing_tick(tb_herder_t *herder, bool leader);

typedef enum {
    TB_HEALTH_STARTING = 0,
    TB_HEALTH_HEALTHY,
    TB_HEALTH_UNHEALTHY,
} tb_health_t;

/* The worker's health, with a sentence saying why, as /health shows it. */
tb_health_t tb_herder_health(tb_herder_t *herder, char *message, size_t message_size);

/* Copies the Kafka cluster id into buf; false while it is not known. */
bool tb_herder_cluster_id(tb_herder_t *herder, char *buf, size_t size);

/* The bootstrap servers tasks use (the mock cluster's in dev mode). */
const char *tb_herder_bootstrap(const tb_herder_t *herder);

/* Names of every connector, sorted. */
json_t *tb_herder_connectors(tb_herder_t *herder);

/*
 * Creates a connector, or with replace set replaces its config (PUT
 * .../config). *created tells which happened. initial_state applies only to
 * a new connector. *out is its ConnectorInfo.
 */
tb_err_t tb_herder_connector_put(tb_herder_t *herder, const char *name,
                                 const json_t *config, tb_target_state_t initial_state,
                                 bool replace, bool *created, json_t **out, char *msg,
                                 size_t msg_size);

/* Connect's ConfigInfos for a config of plugin (a tb_plugin_t), with what
 * this worker refuses (secrets, client settings, exactly-once) among the
 * errors. New reference. */
struct tb_plugin;
json_t *tb_herder_validate(tb_herder_t *herder, const struct tb_plugin *plugin,
                           const json_t *config);

/* Replaces what connectors' references may reach (config.providers.*),
 * for the configs validated from now on; copies what it needs. A stored
 * connector that the new policy refuses is logged, and keeps running. */
void tb_herder_secret_policy_set(tb_herder_t *herder, const tb_secret_policy_t *policy);

/* Restarts every task running here whose connector has
 * config.action.reload=restart (the default) and a secret behind whose
 * config changed since it started (tb_worker_secrets_reload). Returns the
 * tasks restarted, "<connector>-<task>" (new reference). */
json_t *tb_herder_secrets_reload(tb_herder_t *herder);

/* True when connector name exists with config as its stored config (name
 * set to name): putting config again would change nothing. */
bool tb_herder_connector_config_is(tb_herder_t *herder, const char *name,
                                   const json_t *config);

/* Merges patch into the config (a null value deletes the key). */
tb_err_t tb_herder_connector_patch(tb_herder_t *herder, const char *name,
                                   const json_t *patch, json_t **out, char *msg,
                                   size_t msg_size);

/* ConnectorInfo: {name, config, tasks:[{connector,task}], type}. */
tb_err_t tb_herder_connector_info(tb_herder_t *herder, const char *name, json_t **out,
                                  char *msg, size_t msg_size);

/* The connector's config as given (secrets hidden). */
tb_err_t tb_herder_connector_config(tb_herder_t *herder, const char *name, json_t **out,
                                    char *msg, size_t msg_size);

/* ConnectorStateInfo. */
tb_err_t tb_herder_connector_status(tb_herder_t *herder, const char *name, json_t **out,
                                    char *msg, size_t msg_size);

/* {"id","state","worker_id","trace"?} of one task. */
tb_err_t tb_herder_task_status(tb_herder_t *herder, const char *name, int task,
                               json_t **out, char *msg, size_t msg_size);

/* [{"id":{connector,task},"config":{...}}]. */
tb_err_t tb_herder_tasks(tb_herder_t *herder, const char *name, json_t **out, char *msg,
                         size_t msg_size);

/* {"<name>-<n>":{...}}. */
tb_err_t tb_herder_tasks_config(tb_herder_t *herder, const char *name, json_t **out,
                                char *msg, size_t msg_size);

/* Restarts the connector and, per the flags, its tasks. *out is NULL when
 * both flags are false (Connect answers 204), else the ConnectorStateInfo
 * with the restarted instances shown as RESTARTING. Distributed (on the
 * leader), the instances are chosen from the cluster's statuses and the
 * restart is a request every worker carries out (tb_store_restart_request,
 * tb_herder_refresh). */
tb_err_t tb_herder_connector_restart(tb_herder_t *herder, const char *name,
                                     bool include_tasks, bool only_failed, json_t **out,
                                     char *msg, size_t msg_size);

tb_err_t tb_herder_task_restart(tb_herder_t *herder, const char *name, int task,
                                char *msg, size_t msg_size);

/* Pause (PAUSED), resume (STARTED) or stop (STOPPED: tasks released, task
 * configs emptied). */
tb_err_t tb_herder_target_state_set(tb_herder_t *herder, const char *name,
                                    tb_target_state_t target, char *msg, size_t msg_size);

tb_err_t tb_herder_connector_delete(tb_herder_t *herder, const char *name, char *msg,
                                    size_t msg_size);

/* ConnectorOffsets {"offsets":[{partition, offset}]}. */
tb_err_t tb_herder_offsets_get(tb_herder_t *herder, const char *name, json_t **out,
                               char *msg, size_t msg_size);

/* Alters (offsets given) or resets (offsets NULL) a STOPPED connector's
 * offsets. *out is Connect's {"message":...}. */
tb_err_t tb_herder_offsets_alter(tb_herder_t *herder, const char *name,
                                 const json_t *offsets, json_t **out, char *msg,
                                 size_t msg_size);

/* {"<name>":{"topics":[...]}}: the topics the connector used since its
 * topics were last reset. */
json_t *tb_herder_topics(tb_herder_t *herder, const char *name);

/* Forgets the topics a connector used; like Connect, for any name. */
void tb_herder_topics_reset(tb_herder_t *herder, const char *name);

#endif
