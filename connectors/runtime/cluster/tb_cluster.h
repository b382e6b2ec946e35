/*
 * tb_cluster.h - a distributed worker's part in its cluster: who leads,
 * who runs what, and what the others changed.
 *
 * A cluster joins the worker group (tb_worker_group.h) over the
 * coordination topic "<group.id>.tributary-cluster" (compacted, one
 * partition, created if missing), whose one key "assignment" holds the
 * leader's latest assignment: {"epoch":n,"leader":"<worker>","workers":
 * {"<worker>":[["<connector>",<task>],...]}} (tb_assignment_json.h), with
 * "revoking":true on the first step of a move (below).
 *
 * Its thread, every TB_CLUSTER_TICK_MS and whenever the group changes:
 * 1. applies what other workers wrote to the store (tb_herder_refresh);
 *    once it has since the group last changed, a leader answers writes
 *    (tb_cluster_leader);
 * 2. reads the coordination topic and, when the assignment changed, makes
 *    it what this worker runs (tb_herder_assignment_set);
 * 3. on the leader only, computes the next assignment (tb_herder_assign)
 *    from the live members, the last assignment and the members that left
 *    less than scheduled.rebalance.max.delay.ms ago (whose work it holds
 *    back for them), and publishes it when it differs. When a live worker
 *    would lose work, the leader first publishes the revocation (every
 *    worker keeps only what it keeps) and publishes the rest no sooner
 *    than TB_CLUSTER_REVOKE_PAUSE_MS later, so that the work stopped
 *    before it starts elsewhere.
 * Its metrics (tb_cluster_metrics.h) count and time the rebalances.
 *
 * The thread also follows the cluster's session key (tb_session_key.h),
 * which the leader writes and rotates.
 *
 * Ownership: the cluster borrows the herder, which must outlive it; it
 * copies its options. Locking: the thread is the only user of the group's
 * consumer, the coordination log and its own state; tb_cluster_leader
 * reads the group's view, which has a lock of its own, and the count of
 * the view the thread last caught up with, under the cluster's lock.
 */
#ifndef TB_CLUSTER_H
#define TB_CLUSTER_H

#include <stddef.h>

#include <jansson.h>

#include "connectors/runtime/cluster/tb_session_key.h"
#include "connectors/runtime/herder/tb_herder.h"

#define TB_CLUSTER_TICK_MS 250
#define TB_CLUSTER_REVOKE_PAUSE_MS 1000

typedef struct tb_cluster tb_cluster_t;

typedef struct {
    tb_herder_t *herder;
    const char *group_id;         /* group.id */
    const char *worker_url;       /* scheme://<worker_id>, this worker's REST URL */
    const json_t *client_props;   /* bootstrap.servers and the security keys */
    int replication_factor;       /* of the coordination topic when created */
    bool no_topic_creation;       /* never create it (KIP-1209's key false) */
    int session_timeout_ms;       /* session.timeout.ms */
    int heartbeat_interval_ms;    /* heartbeat.interval.ms */
    long long rebalance_delay_ms; /* scheduled.rebalance.max.delay.ms */
    /* the session key's: config topic, inter.worker.key.* (client_props
     * and the topic's replication factor are filled in by the cluster) */
    tb_session_keys_options_t session_keys;
} tb_cluster_options_t;

/* Opens the coordination topic, joins the group and starts the thread.
 * NULL with errstr on failure. */
tb_cluster_t *tb_cluster_start(const tb_cluster_options_t *options, char *errstr,
                               size_t errstr_size);

/* Stops the thread and leaves the group (the others rebalance at once).
 * NULL is a no-op. */
void tb_cluster_stop(tb_cluster_t *cluster);

/* Who answers writes now: 1 this worker (it leads, and has read the store
 * to its end since it became leader, so that it writes on top of what the
 * leader before it wrote), 0 another (its REST URL copied into url), -1
 * nobody yet (no leader known, or this worker leads and is still
 * catching up, or the group names it before its own assignment does). */
int tb_cluster_leader(tb_cluster_t *cluster, char *url, size_t url_size);

/* The cluster's session keys, borrowed for the cluster's life. */
tb_session_keys_t *tb_cluster_session_keys(tb_cluster_t *cluster);

#endif
