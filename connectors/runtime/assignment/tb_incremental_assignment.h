/*
 * tb_incremental_assignment.h - who runs what in a cluster: the leader's
 * computation of the next assignment from the last one, as KIP-415's
 * incremental cooperative rebalancing intends.
 *
 * A pure function: no I/O, no clock, no lock. The rules:
 * - Work a live worker holds and that still exists stays where it is.
 * - Work of a departed worker that is still in its grace period
 *   (scheduled.rebalance.max.delay.ms, kept by the caller) is held back for
 *   it, unassigned; if it comes back in time it gets that work again.
 * - Connectors and tasks are balanced separately: no worker holds more than
 *   the ceiling of its fair share of either. A worker above it gives up only
 *   its excess; the rest of its work keeps running.
 * - Work that is new, released by a worker above its share, or left by a
 *   worker whose grace is over goes to the least loaded workers.
 * Equal inputs give equal outputs (workers and work are taken in sorted
 * order), so a new leader computes what the old one would have.
 */
#ifndef TB_INCREMENTAL_ASSIGNMENT_H
#define TB_INCREMENTAL_ASSIGNMENT_H

#include <stddef.h>

/* One unit of work: a connector itself (task -1) or one of its tasks. */
typedef struct {
    const char *connector;
    int task;
} tb_work_t;

/* The work one worker holds. */
typedef struct {
    const char *worker;
    const tb_work_t *work;
    size_t count;
} tb_worker_work_t;

typedef struct tb_assignment_input {
    const char *const *live; /* the workers in the group now */
    size_t live_count;
    /* Departed workers still in their grace period: their work waits. */
    const char *const *waiting;
    size_t waiting_count;
    const tb_worker_work_t *previous; /* the last assignment, departed workers included */
    size_t previous_count;
    const tb_work_t *work; /* everything that should run: connectors and their tasks */
    size_t work_count;
} tb_assignment_input_t;

/* The result: one entry per live worker, sorted by worker. Everything in it
 * is owned by the result (strings copied), freed by
 * tb_assignment_clear(). */
typedef struct tb_assignment {
    tb_worker_work_t *workers;
    size_t count;
} tb_assignment_t;

/* Computes the next assignment into *out. Returns 0, or -1 when out of
 * memory (with *out empty). */
int tb_assignment_compute(const tb_assignment_input_t *in, tb_assignment_t *out);

void tb_assignment_clear(tb_assignment_t *assignment);

#endif
