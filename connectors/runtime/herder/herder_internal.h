/*
 * herder_internal.h - the herder's state, shared by its files and by
 * nothing else (tb_herder.h is its public face, one function per REST
 * operation):
 *
 *   herder.c             the herder's life (store, worker, load, health),
 *                        the claims on connector names, and bringing a
 *                        connector to its target state
 *   herder_connectors.c  the connectors and their configs: list, create,
 *                        replace, patch, read, validate, task configs,
 *                        pause/resume/stop, delete
 *   herder_status.c      what runs where: connector and task statuses,
 *                        the active topics
 *   herder_restart.c     restarts of connectors and tasks
 *   herder_offsets.c     reading and changing a connector's offsets
 *   herder_cluster.c     distributed mode: assignments, changes other
 *                        workers wrote, restart requests, fencing
 *
 * Ownership: the herder owns every pointer in it but options' borrowed
 * ones (tb_herder_create says which). Locking: see lock below.
 */
#ifndef TB_HERDER_INTERNAL_H
#define TB_HERDER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/runtime/assignment/tb_assignor.h"
#include "connectors/runtime/config/tb_config_state.h"
#include "connectors/runtime/config/tb_connector_validate.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "connectors/runtime/herder/tb_offsets_ops.h"
#include "connectors/runtime/worker/tb_worker.h"
#include "store/tb_store.h"

struct tb_herder {
    /* as given; its JSON and worker_id are the worker's copies, not these */
    tb_worker_options_t options;
    tb_store_t *store;
    tb_config_state_t *config_state; /* what the cluster knows */
    tb_worker_t *worker;             /* what this worker runs */
    tb_assignor_fn assignor;         /* who runs what, standalone */
    tb_assignment_t assignment;      /* who runs what, distributed: the leader's */
    tb_connector_checks_t checks;    /* what this worker allows */
    /* the herder's own copies of options.secret_policy's allowed paths
     * (an array) and env pattern (a string, or NULL), which point into
     * them; replaced under the lock by tb_herder_secret_policy_set */
    json_t *policy_paths;
    json_t *policy_pattern;
    tb_offsets_env_t offsets;
    /* Guards the config state, the worker's connector instances and tasks,
     * and the claims. It is never held through slow work (stopping tasks,
     * Kafka admin calls): an operation that writes a connector claims its
     * name and does that work with the lock released, so reads and other
     * connectors go on while operations on the same connector wait for it,
     * in turn (idle). */
    pthread_mutex_t lock;
    pthread_cond_t idle; /* broadcast when a claim ends */
    json_t *claims;      /* connector name -> true while an operation holds it */
    /* this worker fences exactly-once sources' old tasks (tb_fencing.h):
     * standalone always, distributed while it leads */
    bool fences;
};

/* Writes the message (a printf format) to msg and returns err. */
__attribute__((format(printf, 4, 5))) tb_err_t
tb_herder_fail(tb_err_t err, char *msg, size_t msg_size, const char *fmt, ...);

/* Waits until no operation holds connector name, then claims the name for
 * the caller, who ends the claim with tb_herder_release() whatever it finds,
 * and returns TB_OK with *c the connector, or NULL when there is none. A
 * claimed connector changes only through its claimant, under the lock; the
 * claimant may read it without the lock. The wait ends at the calling
 * thread's deadline (tb_deadline_get(): a REST write's), if it has one:
 * then nothing is claimed, and it returns TB_ERR_UNAVAILABLE with msg
 * saying so. Call with the lock held; it stays held. */
tb_err_t tb_herder_claim(tb_herder_t *herder, const char *name, tb_known_connector_t **c,
                         char *msg, size_t msg_size);

/* Ends a claim. Call with the lock held. */
void tb_herder_release(tb_herder_t *herder, const char *name);

/* Finds connector name and returns it with the lock held; or returns NULL,
 * unlocked, with msg set from not_found (a format taking the name). */
tb_known_connector_t *tb_herder_lock_connector(tb_herder_t *herder, const char *name,
                                               const char *not_found, char *msg,
                                               size_t msg_size);

/* Stops and frees detached tasks with the lock released, then takes it
 * again. */
void tb_herder_stop_unlocked(tb_herder_t *herder, tb_task_t **tasks, size_t count);

/* Records the state of c's connector instance on this worker. */
void tb_herder_record_state(tb_herder_t *herder, const tb_known_connector_t *c,
                            tb_state_t state, const char *trace);

/* Gives c the task configs its target state asks for (tb_task_configs_for),
 * in the store and in memory; a connector whose row cannot be written is
 * FAILED. Call with the lock held, c claimed (claimed: the lock is released
 * across the store's write) or the herder loading (the lock is kept: the
 * load walks the view). */
int tb_herder_settle_task_configs(tb_herder_t *herder, tb_known_connector_t *c,
                                  bool claimed);

/* Brings c's instance and tasks to its target state, as the assignor
 * assigns them: a stopped connector has had its tasks detached; others get
 * a task for every task config assigned here. Call with the lock held. */
void tb_herder_apply_target(tb_herder_t *herder, tb_known_connector_t *c);

/* Whether c's tasks run in transactions here and have task configs: the
 * ones the fencing holds. */
bool tb_herder_fenced_source(const tb_herder_t *herder, const tb_known_connector_t *c);

/* Notes the generation of an exactly-once source's task configs with the
 * fencing, which holds their tasks until the previous tasks' producers are
 * fenced; view is the store's (tb_store_fencing_get), or NULL to read it.
 * Call with the lock held. */
void tb_herder_note_generation(tb_herder_t *herder, const tb_known_connector_t *c,
                               const tb_store_fencing_t *view);

/* ConnectorStateInfo; restarting_tasks[i] (when given) and
 * restarting_connector mark instances shown as RESTARTING. Call with the
 * lock held. */
json_t *tb_herder_status_of(const tb_herder_t *herder, const tb_known_connector_t *c,
                            const bool *restarting_tasks, bool restarting_connector);

/* Restarts what this worker runs of c, per the flags. Call with c
 * claimed. */
void tb_herder_restart_here(tb_herder_t *herder, tb_known_connector_t *c,
                            bool include_tasks, bool only_failed);

#endif
