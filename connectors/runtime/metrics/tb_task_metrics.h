/*
 * tb_task_metrics.h - the metrics of a connector's tasks: one place that
 * names every family the engines update, so that the names in
 * docs/OPERATIONS.md can be found here.
 *
 * A task takes its series once when its engine starts and releases them
 * when it stops; the per-record path only adds to handles.
 */
#ifndef TB_TASK_METRICS_H
#define TB_TASK_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tb_metrics.h"
#include "core/tb_state.h"

/* The Connect-named aliases (connect_metrics.c) served over a group of the
 * series below, taken and released with them. */
#define TB_CONNECT_ALIASES_MAX 64
#define TB_CONNECT_TASK_COUNTS                                                           \
    7                                 /* total, running, paused, failed, unassigned,     \
                                         restarting, destroyed */
#define TB_CONNECT_INFO_COUNT 3       /* connector class, type, version */
#define TB_CONNECT_STRING_FAMILIES 3  /* the names a string is served under */
#define TB_CONNECT_RATIOS 2           /* a task's running-ratio, pause-ratio */
#define TB_CONNECT_TASK_INFO_COUNT 11 /* KIP-891's task tags (tb_connect_metrics.h) */
typedef struct {
    tb_series_t *aliases[TB_CONNECT_ALIASES_MAX];
    tb_series_t *worker_count;    /* connector-count or task-count, this one's 1 */
    tb_series_t *last_error;      /* a task's last-error-timestamp, in ms */
    tb_series_t *commit_skips;    /* a sink's offset-commit-skip-total: always 0 */
    tb_series_t *since_rebalance; /* a cluster's time-since-last-rebalance, in s */
    /* the state group's: the connector's task counts on this worker
     * (connector-*-task-count), a task adding 1 to the total and to the
     * count of its status (index counted, -1 for none); the status, 1
     * labelled with the current one, and a connector's class, type and
     * version, under each family that serves them (Strimzi's exporter
     * rules', Confluent's, Strimzi's metrics reporter's); and the labels
     * these need */
    tb_series_t *task_counts[TB_CONNECT_TASK_COUNTS];
    int counted;
    tb_series_t *ratios[TB_CONNECT_RATIOS]; /* a task's time shares */
    tb_series_t *status[TB_CONNECT_STRING_FAMILIES];
    tb_series_t *info[TB_CONNECT_INFO_COUNT][TB_CONNECT_STRING_FAMILIES];
    tb_series_t *task_info[TB_CONNECT_TASK_INFO_COUNT];
    tb_series_t **chain_info; /* a transform's or predicate's class and version */
    size_t chain_info_count;
    char *connector;
    char task[16]; /* "" for a connector */
} tb_connect_metrics_t;

/* An active record count, Connect's sink- and source-record-active-count:
 * the count (a gauge), and the same count observed at each change (a
 * histogram that keeps its max), from which Connect's -avg and -max are
 * worked out at render. Set by the task's thread only. */
typedef struct {
    tb_series_t *count;
    tb_series_t *changes;
    double last;
} tb_active_records_t;

/* Sets a's count to n, and observes n when it differs from the last. */
void tb_active_records_set(tb_active_records_t *a, double n);

/* The states tb_state_metrics_t shows, in the order of its states[]. */
#define TB_SHOWN_STATE_COUNT 6
extern const tb_state_t tb_shown_states[TB_SHOWN_STATE_COUNT];

/* Per task, labels connector and task. */
typedef struct {
    tb_series_t *records_read;    /* sink: consumed; source: polled */
    tb_series_t *records_written; /* sink: taken by the plugin; source: acknowledged */
    tb_series_t *records_dropped; /* skipped under errors.tolerance=all */
    tb_series_t *records_dlq;     /* sent to the dead letter queue */
    tb_series_t *bytes;           /* key and value bytes read */
    tb_series_t *batches;
    tb_series_t *batch_seconds; /* sink: put(); source: poll(); keeps its max */
    tb_series_t *batch_records; /* records per put() or poll(); keeps its max */
    tb_series_t *key_conversion_errors;
    tb_series_t *value_conversion_errors;
    /* offset commits: recording offsets in the store (a sink's after its
     * plugin's flush, and then committed to the group) */
    tb_series_t *commit_seconds; /* keeps its max */
    tb_series_t *commits_succeeded;
    tb_series_t *commits_failed;
    /* records that failed in a stage (after its retries), whatever
     * errors.tolerance made of them; attempts that failed, retried ones
     * included; attempts made again under errors.retry.* */
    tb_series_t *record_errors;
    tb_series_t *failed_attempts;
    tb_series_t *retries;
    tb_series_t *errors_logged; /* errors.log.enable lines */
    tb_series_t *dlq_failures;  /* records the dead letter queue refused */
    tb_series_t *partitions;    /* a sink's assigned partitions; NULL for a source */
    /* a sink's pause at each rebalance of its consumer group: from its
     * partitions revoked (or lost) to the group's next assignment; NULL
     * for a source */
    tb_series_t *rebalance_pause;
    /* a sink's records read from Kafka whose offsets are not committed
     * yet (tb_sink_count_active); NULL series for a source */
    tb_active_records_t active;
    tb_connect_metrics_t connect;
} tb_task_metrics_t;

/* Takes the task's series (released with tb_task_metrics_release). */
void tb_task_metrics_take(tb_task_metrics_t *m, const char *connector, int task,
                          int sink);
void tb_task_metrics_release(tb_task_metrics_t *m);

/* Counts an offset commit begun at started_us (tb_monotonic_us) that
 * succeeded or not. */
void tb_task_metrics_commit(tb_task_metrics_t *m, int64_t started_us, bool succeeded);
/* Counts a record that failed in a stage, its retries spent. */
void tb_task_metrics_record_error(tb_task_metrics_t *m);
/* Counts an attempt that failed and is made again under errors.retry.*. */
void tb_task_metrics_retry(tb_task_metrics_t *m);

/* Per sink partition, labels connector, topic and partition (the skipped
 * counters also task and reason). Taking one counts it in its task's
 * partitions, releasing it uncounts it. */
typedef struct {
    tb_series_t *committed; /* what the broker acknowledged */
    tb_series_t *position;
    tb_series_t *end;               /* the high watermark */
    tb_series_t *lag;               /* end - committed (before a commit: end - start) */
    tb_series_t *skipped_retention; /* deleted by retention before read */
    tb_series_t *skipped_group;     /* passed by an adopted group offset */
    tb_series_t *stopped;           /* 1 while stopped by an error (label reason) */
    tb_series_t *task_partitions;   /* the task's partitions, counting this one */
} tb_partition_metrics_t;

void tb_partition_metrics_take(tb_partition_metrics_t *m, const char *connector, int task,
                               const char *topic, int32_t partition);
/* Marks the partition stopped, with a short reason label ("topic recreated",
 * "group offset past end", ...). */
void tb_partition_metrics_stop(tb_partition_metrics_t *m, const char *connector,
                               const char *topic, int32_t partition, const char *reason);
void tb_partition_metrics_release(tb_partition_metrics_t *m);

/* The state of a connector (task -1) or task: one gauge per state, 1 for
 * the current one; and a task's restart count. Held by the connector or
 * task for its whole life. */
typedef struct {
    tb_series_t *states[TB_SHOWN_STATE_COUNT];
    tb_series_t *restarts; /* NULL for a connector */
    /* The worker's startups of connectors (or of tasks), shared by all:
     * entering RUNNING or PAUSED from another state succeeded, entering
     * FAILED other than from RUNNING or PAUSED failed; every one is an
     * attempt. */
    tb_series_t *startup_attempts;
    tb_series_t *startups_succeeded;
    tb_series_t *startups_failed;
    tb_state_t current;
    tb_connect_metrics_t connect;
} tb_state_metrics_t;

void tb_state_metrics_take(tb_state_metrics_t *m, const char *connector, int task);
void tb_state_metrics_set(tb_state_metrics_t *m, tb_state_t current, int restarts);
void tb_state_metrics_release(tb_state_metrics_t *m);

/* Source delivery. */
typedef struct {
    tb_active_records_t in_flight; /* produced, not yet acknowledged */
    tb_series_t *produce_seconds;  /* produce -> acknowledgement */
    tb_series_t *txn_commits;      /* exactly-once transactions committed */
    tb_series_t *txn_aborts;       /* and aborted */
    tb_connect_metrics_t connect;
} tb_source_metrics_t;

void tb_source_metrics_take(tb_source_metrics_t *m, const char *connector, int task);
void tb_source_metrics_release(tb_source_metrics_t *m);
/* The counter of delivery errors named error_name (librdkafka's error
 * name); a new reference the caller keeps and releases. */
tb_series_t *tb_source_metrics_delivery_errors(const char *connector, int task,
                                               const char *error_name);

#endif
