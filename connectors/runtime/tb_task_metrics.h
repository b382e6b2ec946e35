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

#include <stdint.h>

#include "core/tb_metrics.h"
#include "core/tb_state.h"

/* The Connect-named aliases (connect_metrics.c) served over a group of the
 * series below, taken and released with them. */
#define TB_CONNECT_ALIASES_MAX 8
typedef struct {
    tb_series_t *aliases[TB_CONNECT_ALIASES_MAX];
    tb_series_t *worker_count; /* connector-count or task-count, this one's 1 */
} tb_connect_metrics_t;

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
    tb_series_t *batch_seconds; /* sink: put(); source: poll() */
    tb_series_t *key_conversion_errors;
    tb_series_t *value_conversion_errors;
    tb_connect_metrics_t connect;
} tb_task_metrics_t;

/* Takes the task's series (released with tb_task_metrics_release). */
void tb_task_metrics_take(tb_task_metrics_t *m, const char *connector, int task,
                          int sink);
void tb_task_metrics_release(tb_task_metrics_t *m);

/* Per sink partition, labels connector, topic and partition (the skipped
 * counters also task and reason). */
typedef struct {
    tb_series_t *committed; /* what the broker acknowledged */
    tb_series_t *position;
    tb_series_t *end;               /* the high watermark */
    tb_series_t *lag;               /* end - committed (before a commit: end - start) */
    tb_series_t *skipped_retention; /* deleted by retention before read */
    tb_series_t *skipped_group;     /* passed by an adopted group offset */
    tb_series_t *stopped;           /* 1 while stopped by an error (label reason) */
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
    tb_connect_metrics_t connect;
} tb_state_metrics_t;

void tb_state_metrics_take(tb_state_metrics_t *m, const char *connector, int task);
void tb_state_metrics_set(tb_state_metrics_t *m, tb_state_t current, int restarts);
void tb_state_metrics_release(tb_state_metrics_t *m);

/* Source delivery. */
typedef struct {
    tb_series_t *in_flight;
    tb_series_t *produce_seconds; /* produce -> acknowledgement */
    tb_series_t *txn_commits;     /* exactly-once transactions committed */
    tb_series_t *txn_aborts;      /* and aborted */
    tb_connect_metrics_t connect;
} tb_source_metrics_t;

void tb_source_metrics_take(tb_source_metrics_t *m, const char *connector, int task);
void tb_source_metrics_release(tb_source_metrics_t *m);
/* The counter of delivery errors named error_name (librdkafka's error
 * name); a new reference the caller keeps and releases. */
tb_series_t *tb_source_metrics_delivery_errors(const char *connector, int task,
                                               const char *error_name);

#endif
