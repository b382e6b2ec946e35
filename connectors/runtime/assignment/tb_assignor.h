/*
 * tb_assignor.h - who runs what: the assignor the herder asks, whenever it
 * brings a connector to its target state, which connector instances and
 * tasks of the config state each live worker runs; its worker then starts
 * what is assigned to it.
 *
 * An assignor is a function. Distributed mode's leader calls
 * tb_assignor_compute with the last assignment and the departed workers
 * (tb_cluster.h); its other workers run what the leader published. The
 * assignment is tb_incremental_assignment.h's tb_assignment_t, and both
 * compute it with tb_assignment_compute: standalone mode is its one-worker
 * case, not a second implementation.
 *
 * Ownership: the caller owns the assignment (tb_assignment_clear). Locking:
 * none; an assignor reads the config state under the caller's lock (the
 * herder's).
 */
#ifndef TB_ASSIGNOR_H
#define TB_ASSIGNOR_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/runtime/assignment/tb_incremental_assignment.h"
#include "connectors/runtime/config/tb_config_state.h"

/* The task number of a connector instance's own unit of work. */
#define TB_ASSIGNOR_CONNECTOR (-1)

/* Assigns every connector instance and task of state among workers
 * (worker_count ids) into *out. Returns 0, or -1 when out of memory (with
 * *out empty). */
typedef int (*tb_assignor_fn)(const tb_config_state_t *state, const char *const *workers,
                              size_t worker_count, tb_assignment_t *out);

/* Assigns every connector instance and task of state as
 * tb_assignment_compute does from base (live and waiting workers, the
 * previous assignment; its work is ignored). Returns 0, or -1 when out of
 * memory (with *out empty). */
int tb_assignor_compute(const tb_config_state_t *state, const tb_assignment_input_t *base,
                        tb_assignment_t *out);

/* The standalone worker's assignor: no previous assignment and no departed
 * worker, so its one live worker gets everything. */
int tb_assignor_standalone(const tb_config_state_t *state, const char *const *workers,
                           size_t worker_count, tb_assignment_t *out);

/* Whether the assignment gives task (or TB_ASSIGNOR_CONNECTOR) of connector
 * to worker. */
bool tb_assignor_runs(const tb_assignment_t *assignment, const char *worker,
                      const char *connector, int task);

#endif
