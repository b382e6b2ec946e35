/*
 * tb_cluster_metrics.h - a distributed worker's metrics of its cluster:
 * leadership, the assignment it runs and its rebalances, with Kafka
 * Connect's connect-worker-rebalance-metrics names beside them
 * (tb_connect_metrics.h). docs/OPERATIONS.md lists them.
 *
 * A rebalance, as a worker counts it, is one change of the assignment the
 * cluster's leader publishes (tb_cluster.h): it begins when an assignment
 * that differs from the last one reaches this worker, and it completes
 * once this worker runs one that is not a revocation step, the work it
 * lost stopped and the work it gained started. Its time is how long this
 * worker's share of the cluster's work was being rearranged: a move
 * takes the revocation, the leader's pause after it and both applications.
 * Tasks that stay on their worker are not stopped by a rebalance (their
 * pause, when their sink's consumer group rebalances, is
 * tributary_sink_rebalance_pause_seconds, tb_task_metrics.h).
 *
 * Ownership: the series are the struct's, taken by tb_cluster_metrics_take
 * and released by tb_cluster_metrics_release. Locking: none; the cluster's
 * thread is its only user (the series themselves are lock-free).
 */
#ifndef TB_CLUSTER_METRICS_H
#define TB_CLUSTER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connectors/runtime/metrics/tb_task_metrics.h"

typedef struct tb_cluster_metrics {
    tb_series_t *leader;             /* 1 while this worker leads */
    tb_series_t *epoch;              /* of the assignment this worker runs */
    tb_series_t *rebalances;         /* rebalances completed */
    tb_series_t *rebalancing;        /* 1 while one is under way */
    tb_series_t *rebalance_seconds;  /* the time of each; keeps its max */
    tb_series_t *last_rebalance;     /* when the last one completed, unix seconds */
    tb_series_t *connectors, *tasks; /* what the assignment gives this worker */
    tb_series_t *leader_name;        /* Connect's leader-name, of leader_url */
    char *leader_url;
    int64_t began_ms;     /* tb_monotonic_ms() the rebalance under way began; -1 */
    int64_t completed_ms; /* when the last one completed; -1 before the first */
    tb_connect_metrics_t connect;
} tb_cluster_metrics_t;

void tb_cluster_metrics_take(tb_cluster_metrics_t *m);
void tb_cluster_metrics_release(tb_cluster_metrics_t *m);

/* An assignment that arrived at arrived_ms (tb_monotonic_ms) now runs
 * here, giving this worker connectors and tasks; revoking says it is the
 * first of a move's two steps, so the rebalance goes on. */
void tb_cluster_metrics_applied(tb_cluster_metrics_t *m, int64_t arrived_ms,
                                bool revoking, long long epoch, size_t connectors,
                                size_t tasks);

/* At each of the cluster's ticks: who leads (leader_url NULL while nobody
 * is known) and the time since the last rebalance. */
void tb_cluster_metrics_tick(tb_cluster_metrics_t *m, bool leader,
                             const char *leader_url);

#endif
