/*
 * tb_connect_metrics.h - Kafka Connect's metric names, served next to
 * tributary's own for dashboards built on Connect's JMX metrics.
 *
 * The names are what a JMX exporter makes of Connect's MBeans: an attribute
 * A of kafka.connect:type=T becomes kafka_connect_<T>_<A>, lowercase with
 * '-' as '_', labelled connector and task where the MBean has them
 * (docs/OPERATIONS.md lists each with its source); a time in ms is served
 * in seconds, its name ending _seconds. Every one is an alias
 * (tb_metrics_alias) of a tributary series, or a window over tributary
 * series (tb_metrics_window: Connect's -rate, -avg, -max and -percentage
 * attributes), so no record is counted twice; only connector-count,
 * task-count, the per-connector task counts, last-error-timestamp,
 * offset-commit-skip-total, time-since-last-rebalance-ms and leader-name
 * have values of their own, changed when a connector or task comes and
 * goes or changes status, when an attempt fails, never, at each tick of
 * the cluster's thread, and when the leader changes; and running-ratio and
 * pause-ratio, time shares (tb_metric_def_t's time_share) turned on and
 * off as a task's status changes.
 *
 * Each is also served under the name Strimzi's JMX exporter rules give it
 * (kafka_connect_worker_connector_count, ...), when in the same unit; and
 * Strimzi's status, connector class, type and version series (1, labelled
 * with the value), which its stock Connect dashboard queries; the few
 * names Confluent's exporter rules give otherwise (kafka_connect_app,
 * kafka_connect_connector_metrics, ..._completed_rebalances), which its
 * Connect dashboard queries; and those Strimzi's metrics reporter gives
 * otherwise (..._status_info, ..._connector_class_info,
 * kafka_connect_connect_coordinator_metrics_*), which its dashboard for
 * that reporter queries.
 */
#ifndef TB_CONNECT_METRICS_H
#define TB_CONNECT_METRICS_H

#include "connectors/runtime/metrics/tb_task_metrics.h"

/* Each take fills c with the aliases of one group of tributary series,
 * already taken in m; release them with tb_connect_release() before m's. */

/* sink-task-metrics or source-task-metrics, connector-task-metrics and
 * task-error-metrics. c must be &m->connect. */
void tb_connect_task_take(tb_connect_metrics_t *c, const tb_task_metrics_t *m,
                          const char *connector, const char *task, int sink);
/* source-task-metrics over the source's delivery. */
void tb_connect_source_take(tb_connect_metrics_t *c, const tb_source_metrics_t *m,
                            const char *connector, const char *task);
/* connector-metrics (task NULL) or connector-task-metrics status, and
 * connect-worker-metrics connector-count and connector-startup-* or
 * task-count and task-startup-*. */
void tb_connect_state_take(tb_connect_metrics_t *c, const tb_state_metrics_t *m,
                           const char *connector, const char *task);

/* A connector's or task's new status: the status series of Strimzi's,
 * Confluent's and Strimzi's metrics reporter's names (1, labelled with
 * it), and a task's place in its connector's task counts. */
void tb_connect_state_set(tb_connect_metrics_t *c, tb_state_t state);

/* A connector's class, type ("source" or "sink") and version, as Strimzi's,
 * Confluent's and Strimzi's metrics reporter's names serve connector-metrics'
 * (1, labelled with the value); again when they change. c is the
 * connector's state group. */
void tb_connect_info_set(tb_connect_metrics_t *c, const char *class_name,
                         const char *type, const char *version);

/* KIP-891's connector-task-metrics strings (Connect 4.1) of a task, served
 * as Strimzi serves connector-metrics' (1, labelled with the value):
 * kafka_connect_connector_task_<attribute>{connector,task,<attribute>} for
 * connector-class, connector-version, connector-type, task-class,
 * task-version, key-converter-class, key-converter-version,
 * value-converter-class, value-converter-version, header-converter-class
 * and header-converter-version, values in that order (copied). c is the
 * task's group (&m->connect); released with it. */
void tb_connect_task_info_set(tb_connect_metrics_t *c, const char *connector,
                              const char *task,
                              const char *const values[TB_CONNECT_TASK_INFO_COUNT]);

/* connector-transform-metrics (kind "transform") or
 * connector-predicate-metrics (kind "predicate", KIP-891) of one alias of
 * the task's chain: kafka_connect_connector_<kind>_<kind>_class and
 * _<kind>_version, labelled connector, task, <kind> (the alias) and the
 * value. Released with c. -1 on no memory. */
int tb_connect_chain_info_add(tb_connect_metrics_t *c, const char *connector,
                              const char *task, const char *kind, const char *alias,
                              const char *class_name, const char *version);

/* connect-worker-rebalance-metrics over a distributed worker's cluster
 * series (tb_cluster_metrics.h): completed-rebalances-total, epoch,
 * rebalancing, rebalance-max-time-ms and rebalance-avg-time-ms, and
 * time-since-last-rebalance-ms (c->since_rebalance, set by its owner). */
struct tb_cluster_metrics;
void tb_connect_rebalance_take(tb_connect_metrics_t *c,
                               const struct tb_cluster_metrics *m);

/* Connect's app-info with its client-id tag (Connect 4.2, KIP-1120),
 * client_id the worker's id (host:port of its REST URL, as Connect's
 * worker id): version and commit-id as Strimzi serves strings
 * (kafka_connect_app_info_version{client_id,version} 1, _commit_id),
 * start-time-ms in seconds (kafka_connect_app_info_start_time_seconds),
 * and the three as Confluent's rules serve them (kafka_connect_app
 * {client_id,version|commit_id|start_time_ms} 1). out (all NULL) gets the
 * six series, for the caller to release. */
#define TB_CONNECT_APP_INFO_COUNT 6
void tb_connect_app_info_take(tb_series_t *out[TB_CONNECT_APP_INFO_COUNT],
                              const char *client_id, const char *version,
                              const char *commit, double start_seconds);

/* Connect's leader-name: a new series labelled with the leader's url, for
 * its owner to set to 1 and release when the leader changes. */
tb_series_t *tb_connect_leader_name(const char *url);

/* Releases what a take filled in; a zeroed c is a no-op. */
void tb_connect_release(tb_connect_metrics_t *c);

#endif
