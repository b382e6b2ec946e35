/*
 * tb_assignment.h - who runs what: which worker runs each connector
 * instance and each task the config state knows.
 *
 * An assignor is a function of the config state and the live workers, so
 * that a worker in a group can plug in its own; standalone, the one worker
 * runs everything (tb_assignor_standalone). The herder asks for an
 * assignment whenever it brings a connector to its target state, and its
 * worker starts what is assigned to it.
 *
 * Ownership: the caller owns the assignment (tb_assignment_destroy). Its
 * connector names are borrowed from the config state and its worker ids
 * from the caller's array: use it before either changes.
 *
 * Locking: none; an assignor reads the config state under the caller's
 * lock (the herder's).
 */
#ifndef TB_ASSIGNMENT_H
#define TB_ASSIGNMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/runtime/tb_config_state.h"

/* The task number of a connector instance's own entry. */
#define TB_ASSIGNED_CONNECTOR (-1)

typedef struct {
    const char *connector;
    int task; /* a task's number, or TB_ASSIGNED_CONNECTOR */
    const char *worker;
} tb_assigned_t;

typedef struct {
    tb_assigned_t *items;
    size_t count;
} tb_assignment_t;

/* Assigns every connector instance and task of state among workers
 * (worker_count >= 1 ids). Returns a new assignment. */
typedef tb_assignment_t *(*tb_assignor_fn)(const tb_config_state_t *state,
                                           const char *const *workers,
                                           size_t worker_count);

/* Everything to workers[0]: the standalone worker. */
tb_assignment_t *tb_assignor_standalone(const tb_config_state_t *state,
                                        const char *const *workers, size_t worker_count);

/* Whether the assignment gives task (or TB_ASSIGNED_CONNECTOR) of connector
 * to worker. */
bool tb_assignment_runs(const tb_assignment_t *assignment, const char *worker,
                        const char *connector, int task);

/* NULL is a no-op. */
void tb_assignment_destroy(tb_assignment_t *assignment);

#endif
