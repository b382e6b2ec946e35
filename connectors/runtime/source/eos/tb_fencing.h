/*
 * tb_fencing.h - zombie fencing of exactly-once sources' task generations,
 * as Connect's KIP-618: the tasks of an exactly-once source's new task
 * configs begin no transaction until every producer of its previous tasks
 * is fenced, so that a zombie of the old generation (a task on a worker
 * cut off from its cluster, or a stopped task's open transaction) can
 * commit nothing once a new task runs.
 *
 * The herder notes each generation of task configs (tb_fencing_note) and
 * says whether the store shows it waiting for a fencing, and whether this
 * worker does the fencing (the cluster's leader, or the standalone worker).
 * That worker fences the transactional ids <prefix>-<connector>-<n> of the
 * previous generation in a pool job, through tb_txn_fence.h's bounded steps
 * (no pool thread waits on a broker for long), then records the new task
 * count: a store that keeps fencing records (the Kafka store's
 * tasks-fencing-<connector>) is written by tb_fencing_tick, on the caller's
 * thread, and other workers learn it from the store; a SQLite store keeps
 * none. Tasks ask tb_fencing_passes before their first transaction.
 *
 * Ownership: the fencing owns its entries, their jobs and copies; it
 * borrows the pool, the store and the client settings, which outlive it.
 *
 * Locking: a lock of its own; tb_fencing_passes may be called from any
 * thread. The herder calls tb_fencing_note under its lock, which the
 * fencing never takes.
 */
#ifndef TB_FENCING_H
#define TB_FENCING_H

#include <stdbool.h>

#include <jansson.h>

#include "connectors/kafka/tb_client_props.h"
#include "core/tb_pool.h"
#include "store/tb_store.h"

typedef struct tb_fencing tb_fencing_t;

/* Fences through producers made from client's settings, with transactional
 * ids under prefix (copied). */
tb_fencing_t *tb_fencing_create(tb_pool_t *pool, tb_store_t *store,
                                const tb_client_settings_t *client, const char *prefix);

/* Stops the fencing jobs (waiting for a running step) and frees. NULL is a
 * no-op. */
void tb_fencing_destroy(tb_fencing_t *fencing);

/* What the herder knows of one generation of an exactly-once source's task
 * configs. */
typedef struct {
    const char *connector;
    const json_t *config;     /* the connector config: its producer settings */
    unsigned long generation; /* tb_known_connector_t's task_generation */
    int task_count;           /* its tasks (> 0) */
    tb_store_fencing_t store; /* tb_store_fencing_get's view */
    bool fences;              /* this worker fences: leader or standalone */
} tb_fencing_generation_t;

/* Notes generation g (any number of times). Its tasks may start at once
 * when the store shows it fenced, or, with a store that keeps no records,
 * when it is the first generation noted (nothing of this process ran
 * before). Otherwise they wait; when g->fences, a job fences the ids of
 * the previous tasks: tasks [0, n) for n the largest of the store's last
 * record, the task count of the previous generation noted, and (a store
 * without any record: tasks of an older release, or of Connect) g's own
 * count. One task before and after needs no fencing (it fences its own
 * predecessor). */
void tb_fencing_note(tb_fencing_t *fencing, const tb_fencing_generation_t *g);

/* Whether tasks of connector's generation may begin transactions. */
bool tb_fencing_passes(tb_fencing_t *fencing, const char *connector,
                       unsigned long generation);

/* Fences, on the caller's thread, every producer connector's tasks may
 * have run (ids [0, n) for n the largest of the store's last record, the
 * task count last noted and task_count), as Connect does before an
 * exactly-once source's offsets change, so that no zombie commits offsets
 * over the change. For a caller that may wait (a REST operation, without
 * the herder's lock): each id may take up to TB_TXN_FENCE_TIMEOUT_MS.
 * Returns 0, or -1 with errstr. */
int tb_fencing_fence_now(tb_fencing_t *fencing, const char *connector,
                         const json_t *config, int task_count, char *errstr,
                         size_t errstr_size);

/* Writes the record of each fencing done to a store that keeps them, then
 * lets its tasks start. Call from a thread that may wait on the store (the
 * cluster's), without the herder's lock. */
void tb_fencing_tick(tb_fencing_t *fencing);

#endif
