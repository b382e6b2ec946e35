/*
 * connect_metrics.c - Kafka Connect's metric names over tributary's series.
 * One table per group maps a Connect name to the tributary handle it reads:
 * as an alias (a total, a count), or as a window over it (tb_metrics_window:
 * a -rate, an -avg, a -max, a -percentage). All are untyped, as a JMX
 * exporter serves them, and as promtool accepts names such as
 * connector_count. Connect's times in ms are served in seconds, under
 * _seconds instead of _ms (promtool refuses abbreviated units), as a JMX
 * exporter rule with a valueFactor of 0.001 would; with
 * metrics.milliseconds.names, under Connect's _ms names in ms too (their
 * defs' ms_name, which core/metrics.c renders).
 */
#include "connectors/runtime/metrics/tb_connect_metrics.h"

#include "connectors/runtime/metrics/tb_cluster_metrics.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const task_labels[] = {"connector", "task", NULL};
static const char *const task_status_labels[] = {"connector", "task", "status", NULL};
static const char *const connector_status_labels[] = {"connector", "status", NULL};
static const char *const leader_name_labels[] = {"leader_name", NULL};

#define FAMILY(var, metric, labelled, ms, text)                                          \
    static const tb_metric_def_t var = {.name = metric,                                  \
                                        .type = TB_METRIC_UNTYPED,                       \
                                        .help = text,                                    \
                                        .labels = labelled,                              \
                                        .ms_name = ms}
#define TASK_FAMILY(var, metric, text) FAMILY(var, metric, task_labels, false, text)
#define WORKER_FAMILY(var, metric, text) FAMILY(var, metric, NULL, false, text)
/* A time Connect gives in ms: served in seconds under its _seconds name,
 * and under Connect's _ms name in ms too with metrics.milliseconds.names. */
#define IN_SECONDS " In seconds (in ms under the _ms name)."
#define TASK_TIME(var, metric, text)                                                     \
    FAMILY(var, metric "_seconds", task_labels, true, text IN_SECONDS)
#define WORKER_TIME(var, metric, text)                                                   \
    FAMILY(var, metric "_seconds", NULL, true, text IN_SECONDS)

#define SINK "kafka_connect_sink_task_metrics_"
#define SOURCE "kafka_connect_source_task_metrics_"
#define TASK "kafka_connect_connector_task_metrics_"
#define ERRORS "kafka_connect_task_error_metrics_"
#define WORKER "kafka_connect_connect_worker_metrics_"
#define REBALANCE "kafka_connect_connect_worker_rebalance_metrics_"

TASK_FAMILY(sink_read, SINK "sink_record_read_total",
            "Connect's sink-record-read-total: tributary_task_records_read_total.");
TASK_FAMILY(sink_read_rate, SINK "sink_record_read_rate",
            "Connect's sink-record-read-rate: sink-record-read-total per second.");
TASK_FAMILY(sink_send, SINK "sink_record_send_total",
            "Connect's sink-record-send-total: tributary_task_records_written_total.");
TASK_FAMILY(sink_send_rate, SINK "sink_record_send_rate",
            "Connect's sink-record-send-rate: sink-record-send-total per second.");
TASK_FAMILY(partition_count, SINK "partition_count",
            "Connect's partition-count: tributary_sink_task_partitions.");
TASK_FAMILY(completions, SINK "offset_commit_completion_total",
            "Connect's offset-commit-completion-total: "
            "tributary_task_offset_commits_total{result=\"success\"}.");
TASK_FAMILY(completion_rate, SINK "offset_commit_completion_rate",
            "Connect's offset-commit-completion-rate: completions per second.");
TASK_FAMILY(skips, SINK "offset_commit_skip_total",
            "Connect's offset-commit-skip-total: always 0, tributary skips no commit.");
TASK_FAMILY(skip_rate, SINK "offset_commit_skip_rate",
            "Connect's offset-commit-skip-rate: always 0.");
TASK_FAMILY(sink_active, SINK "sink_record_active_count",
            "Connect's sink-record-active-count: tributary_sink_active_records.");
TASK_FAMILY(sink_active_max, SINK "sink_record_active_count_max",
            "Connect's sink-record-active-count-max: the most active records.");
TASK_FAMILY(sink_active_avg, SINK "sink_record_active_count_avg",
            "Connect's sink-record-active-count-avg: the mean of the active records "
            "at each change.");
TASK_TIME(put_max, SINK "put_batch_max_time",
          "Connect's put-batch-max-time-ms: the longest put().");
TASK_TIME(put_avg, SINK "put_batch_avg_time",
          "Connect's put-batch-avg-time-ms: the mean put().");

TASK_FAMILY(source_poll, SOURCE "source_record_poll_total",
            "Connect's source-record-poll-total: tributary_task_records_read_total.");
TASK_FAMILY(source_poll_rate, SOURCE "source_record_poll_rate",
            "Connect's source-record-poll-rate: source-record-poll-total per second.");
TASK_FAMILY(source_write, SOURCE "source_record_write_total",
            "Connect's source-record-write-total: tributary_task_records_written_total.");
TASK_FAMILY(source_write_rate, SOURCE "source_record_write_rate",
            "Connect's source-record-write-rate: source-record-write-total per second.");
TASK_FAMILY(source_active, SOURCE "source_record_active_count",
            "Connect's source-record-active-count: tributary_source_in_flight_records.");
TASK_FAMILY(source_active_max, SOURCE "source_record_active_count_max",
            "Connect's source-record-active-count-max: the most records in flight.");
TASK_FAMILY(source_active_avg, SOURCE "source_record_active_count_avg",
            "Connect's source-record-active-count-avg: the mean of the records in "
            "flight at each change.");
TASK_TIME(poll_max, SOURCE "poll_batch_max_time",
          "Connect's poll-batch-max-time-ms: the longest poll().");
TASK_TIME(poll_avg, SOURCE "poll_batch_avg_time",
          "Connect's poll-batch-avg-time-ms: the mean poll().");

TASK_TIME(commit_max, TASK "offset_commit_max_time",
          "Connect's offset-commit-max-time-ms: the longest commit.");
TASK_TIME(commit_avg, TASK "offset_commit_avg_time",
          "Connect's offset-commit-avg-time-ms: the mean commit.");
TASK_FAMILY(commit_success, TASK "offset_commit_success_percentage",
            "Connect's offset-commit-success-percentage: the share (0 to 1) of "
            "commits that succeeded.");
TASK_FAMILY(commit_failure, TASK "offset_commit_failure_percentage",
            "Connect's offset-commit-failure-percentage: the share (0 to 1) of "
            "commits that failed.");
TASK_FAMILY(batch_max, TASK "batch_size_max",
            "Connect's batch-size-max: the most records of one put() or poll().");
TASK_FAMILY(batch_avg, TASK "batch_size_avg",
            "Connect's batch-size-avg: the mean records of one put() or poll().");

TASK_FAMILY(errors, ERRORS "total_record_errors",
            "Connect's total-record-errors: tributary_task_record_errors_total.");
TASK_FAMILY(failures, ERRORS "total_record_failures",
            "Connect's total-record-failures: tributary_task_failed_attempts_total.");
TASK_FAMILY(skipped, ERRORS "total_records_skipped",
            "Connect's total-records-skipped: tributary_task_records_dropped_total.");
TASK_FAMILY(retries, ERRORS "total_retries",
            "Connect's total-retries: tributary_task_retries_total.");
TASK_FAMILY(logged, ERRORS "total_errors_logged",
            "Connect's total-errors-logged: tributary_task_errors_logged_total.");
TASK_FAMILY(dlq_requests, ERRORS "deadletterqueue_produce_requests",
            "Connect's deadletterqueue-produce-requests: "
            "tributary_task_records_dlq_total.");
TASK_FAMILY(dlq_failures, ERRORS "deadletterqueue_produce_failures",
            "Connect's deadletterqueue-produce-failures: "
            "tributary_task_dlq_failures_total.");
TASK_FAMILY(last_error, ERRORS "last_error_timestamp",
            "Connect's last-error-timestamp: when an attempt last failed, in ms since "
            "the epoch; 0 before.");

WORKER_FAMILY(connector_count, WORKER "connector_count",
              "Connect's connector-count: the connectors of this worker.");
WORKER_FAMILY(task_count, WORKER "task_count",
              "Connect's task-count: the tasks of this worker.");
WORKER_FAMILY(connector_attempts, WORKER "connector_startup_attempts_total",
              "Connect's connector-startup-attempts-total: "
              "tributary_connector_startup_attempts_total.");
WORKER_FAMILY(connector_successes, WORKER "connector_startup_success_total",
              "Connect's connector-startup-success-total: "
              "tributary_connector_startups_total{result=\"success\"}.");
WORKER_FAMILY(connector_failures, WORKER "connector_startup_failure_total",
              "Connect's connector-startup-failure-total: "
              "tributary_connector_startups_total{result=\"failure\"}.");
WORKER_FAMILY(connector_success_share, WORKER "connector_startup_success_percentage",
              "Connect's connector-startup-success-percentage: the share (0 to 1) of "
              "connector startups that succeeded.");
WORKER_FAMILY(connector_failure_share, WORKER "connector_startup_failure_percentage",
              "Connect's connector-startup-failure-percentage: the share (0 to 1) of "
              "connector startups that failed.");
WORKER_FAMILY(task_attempts, WORKER "task_startup_attempts_total",
              "Connect's task-startup-attempts-total: "
              "tributary_task_startup_attempts_total.");
WORKER_FAMILY(task_successes, WORKER "task_startup_success_total",
              "Connect's task-startup-success-total: "
              "tributary_task_startups_total{result=\"success\"}.");
WORKER_FAMILY(task_failures, WORKER "task_startup_failure_total",
              "Connect's task-startup-failure-total: "
              "tributary_task_startups_total{result=\"failure\"}.");
WORKER_FAMILY(task_success_share, WORKER "task_startup_success_percentage",
              "Connect's task-startup-success-percentage: the share (0 to 1) of task "
              "startups that succeeded.");
WORKER_FAMILY(task_failure_share, WORKER "task_startup_failure_percentage",
              "Connect's task-startup-failure-percentage: the share (0 to 1) of task "
              "startups that failed.");

WORKER_FAMILY(
    completed_rebalances, REBALANCE "completed_rebalances_total",
    "Connect's completed-rebalances-total: tributary_cluster_rebalances_total.");
WORKER_FAMILY(rebalance_epoch, REBALANCE "epoch",
              "Connect's epoch: tributary_cluster_assignment_epoch, the epoch of the "
              "assignment this worker runs.");
WORKER_FAMILY(rebalancing, REBALANCE "rebalancing",
              "Connect's rebalancing: tributary_cluster_rebalancing, 1 while a "
              "rebalance is under way.");
WORKER_TIME(rebalance_max, REBALANCE "rebalance_max_time",
            "Connect's rebalance-max-time-ms: the longest rebalance "
            "(tributary_cluster_rebalance_seconds).");
WORKER_TIME(rebalance_avg, REBALANCE "rebalance_avg_time",
            "Connect's rebalance-avg-time-ms: the mean rebalance "
            "(tributary_cluster_rebalance_seconds).");
WORKER_TIME(since_rebalance, REBALANCE "time_since_last_rebalance",
            "Connect's time-since-last-rebalance-ms: since this worker last completed a "
            "rebalance; +Inf before the first.");
static const tb_metric_def_t leader_name = {
    .name = REBALANCE "leader_name",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's leader-name: 1, labelled with the REST URL of the leader this "
            "worker knows.",
    .labels = leader_name_labels};

/* running-ratio and pause-ratio: the share of the task's life (on this
 * worker) spent in that status, as Connect's StateTracker gives it. In the
 * order of tb_connect_metrics_t's ratios. */
static const tb_metric_def_t ratio_defs[TB_CONNECT_RATIOS] = {
    {.name = TASK "running_ratio",
     .type = TB_METRIC_UNTYPED,
     .help = "Connect's running-ratio: the share (0 to 1) of the task's time on this "
             "worker spent running.",
     .labels = task_labels,
     .time_share = true},
    {.name = TASK "pause_ratio",
     .type = TB_METRIC_UNTYPED,
     .help = "Connect's pause-ratio: the share (0 to 1) of the task's time on this "
             "worker spent paused.",
     .labels = task_labels,
     .time_share = true},
};
static const tb_state_t ratio_states[TB_CONNECT_RATIOS] = {TB_STATE_RUNNING,
                                                           TB_STATE_PAUSED};

static const tb_metric_def_t task_status = {
    .name = TASK "status",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's connector-task-metrics status, as tributary_state: 1 for the "
            "task's current status, 0 for the others.",
    .labels = task_status_labels};
static const tb_metric_def_t connector_status = {
    .name = "kafka_connect_connector_metrics_status",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's connector-metrics status, as tributary_state{task=\"connector\"}: "
            "1 for the connector's current status, 0 for the others.",
    .labels = connector_status_labels};

/* Connect's per-connector task counts of connect-worker-metrics (labelled
 * connector), values of their own: each task adds itself to the total and
 * to the count of its status. In the order of tb_connect_metrics_t's
 * task_counts. */
static const char *const connector_labels[] = {"connector", NULL};
static const tb_metric_def_t task_count_defs[TB_CONNECT_TASK_COUNTS] = {
#define TASK_COUNT(kind)                                                                 \
    {                                                                                    \
        .name = WORKER "connector_" kind "_task_count", .type = TB_METRIC_UNTYPED,       \
        .help =                                                                          \
            "Connect's connector-" kind "-task-count: the connector's tasks on this "    \
            "worker that are " kind " (total: all of them).",                            \
        .labels = connector_labels                                                       \
    }
    TASK_COUNT("total"),     TASK_COUNT("running"),    TASK_COUNT("paused"),
    TASK_COUNT("failed"),    TASK_COUNT("unassigned"), TASK_COUNT("restarting"),
    TASK_COUNT("destroyed"),
#undef TASK_COUNT
};

/* The names Strimzi's JMX exporter rules give Connect's metrics (its
 * metrics-config for Connect, which its stock Grafana dashboard queries):
 * kafka_connect_<group>_<attribute> with the group's "-metrics" dropped and
 * connect-worker as worker; the same values, in Connect's units (so a time
 * in ms, which Strimzi serves unscaled, has no Strimzi name here). */
#define STRIMZI(var, metric, labelled, connect)                                          \
    static const tb_metric_def_t var = {.name = metric,                                  \
                                        .type = TB_METRIC_UNTYPED,                       \
                                        .help = "Strimzi's name for Connect's " connect, \
                                        .labels = labelled}
#define S_SINK "kafka_connect_sink_task_"
#define S_SOURCE "kafka_connect_source_task_"
#define S_TASK "kafka_connect_connector_task_"
#define S_ERRORS "kafka_connect_task_error_"
#define S_WORKER "kafka_connect_worker_"
#define S_REBALANCE "kafka_connect_worker_rebalance_"
STRIMZI(s_sink_read, S_SINK "sink_record_read_total", task_labels,
        "sink-record-read-total");
STRIMZI(s_sink_read_rate, S_SINK "sink_record_read_rate", task_labels,
        "sink-record-read-rate");
STRIMZI(s_sink_send, S_SINK "sink_record_send_total", task_labels,
        "sink-record-send-total");
STRIMZI(s_sink_send_rate, S_SINK "sink_record_send_rate", task_labels,
        "sink-record-send-rate");
STRIMZI(s_partition_count, S_SINK "partition_count", task_labels, "partition-count");
STRIMZI(s_completions, S_SINK "offset_commit_completion_total", task_labels,
        "offset-commit-completion-total");
STRIMZI(s_completion_rate, S_SINK "offset_commit_completion_rate", task_labels,
        "offset-commit-completion-rate");
STRIMZI(s_skips, S_SINK "offset_commit_skip_total", task_labels,
        "offset-commit-skip-total");
STRIMZI(s_skip_rate, S_SINK "offset_commit_skip_rate", task_labels,
        "offset-commit-skip-rate");
STRIMZI(s_sink_active, S_SINK "sink_record_active_count", task_labels,
        "sink-record-active-count");
STRIMZI(s_sink_active_max, S_SINK "sink_record_active_count_max", task_labels,
        "sink-record-active-count-max");
STRIMZI(s_sink_active_avg, S_SINK "sink_record_active_count_avg", task_labels,
        "sink-record-active-count-avg");
STRIMZI(s_source_poll, S_SOURCE "source_record_poll_total", task_labels,
        "source-record-poll-total");
STRIMZI(s_source_poll_rate, S_SOURCE "source_record_poll_rate", task_labels,
        "source-record-poll-rate");
STRIMZI(s_source_write, S_SOURCE "source_record_write_total", task_labels,
        "source-record-write-total");
STRIMZI(s_source_write_rate, S_SOURCE "source_record_write_rate", task_labels,
        "source-record-write-rate");
STRIMZI(s_source_active, S_SOURCE "source_record_active_count", task_labels,
        "source-record-active-count");
STRIMZI(s_source_active_max, S_SOURCE "source_record_active_count_max", task_labels,
        "source-record-active-count-max");
STRIMZI(s_source_active_avg, S_SOURCE "source_record_active_count_avg", task_labels,
        "source-record-active-count-avg");
STRIMZI(s_commit_success, S_TASK "offset_commit_success_percentage", task_labels,
        "offset-commit-success-percentage");
STRIMZI(s_commit_failure, S_TASK "offset_commit_failure_percentage", task_labels,
        "offset-commit-failure-percentage");
STRIMZI(s_batch_max, S_TASK "batch_size_max", task_labels, "batch-size-max");
STRIMZI(s_running_ratio, S_TASK "running_ratio", task_labels, "running-ratio");
STRIMZI(s_pause_ratio, S_TASK "pause_ratio", task_labels, "pause-ratio");
STRIMZI(s_batch_avg, S_TASK "batch_size_avg", task_labels, "batch-size-avg");
STRIMZI(s_errors, S_ERRORS "total_record_errors", task_labels, "total-record-errors");
STRIMZI(s_failures, S_ERRORS "total_record_failures", task_labels,
        "total-record-failures");
STRIMZI(s_skipped, S_ERRORS "total_records_skipped", task_labels,
        "total-records-skipped");
STRIMZI(s_retries, S_ERRORS "total_retries", task_labels, "total-retries");
STRIMZI(s_logged, S_ERRORS "total_errors_logged", task_labels, "total-errors-logged");
STRIMZI(s_dlq_requests, S_ERRORS "deadletterqueue_produce_requests", task_labels,
        "deadletterqueue-produce-requests");
STRIMZI(s_dlq_failures, S_ERRORS "deadletterqueue_produce_failures", task_labels,
        "deadletterqueue-produce-failures");
STRIMZI(s_last_error, S_ERRORS "last_error_timestamp", task_labels,
        "last-error-timestamp");
STRIMZI(s_connector_count, S_WORKER "connector_count", NULL, "connector-count");
STRIMZI(s_task_count, S_WORKER "task_count", NULL, "task-count");
STRIMZI(s_connector_attempts, S_WORKER "connector_startup_attempts_total", NULL,
        "connector-startup-attempts-total");
STRIMZI(s_connector_successes, S_WORKER "connector_startup_success_total", NULL,
        "connector-startup-success-total");
STRIMZI(s_connector_failures, S_WORKER "connector_startup_failure_total", NULL,
        "connector-startup-failure-total");
STRIMZI(s_connector_success_share, S_WORKER "connector_startup_success_percentage", NULL,
        "connector-startup-success-percentage");
STRIMZI(s_connector_failure_share, S_WORKER "connector_startup_failure_percentage", NULL,
        "connector-startup-failure-percentage");
STRIMZI(s_task_attempts, S_WORKER "task_startup_attempts_total", NULL,
        "task-startup-attempts-total");
STRIMZI(s_task_successes, S_WORKER "task_startup_success_total", NULL,
        "task-startup-success-total");
STRIMZI(s_task_failures, S_WORKER "task_startup_failure_total", NULL,
        "task-startup-failure-total");
STRIMZI(s_task_success_share, S_WORKER "task_startup_success_percentage", NULL,
        "task-startup-success-percentage");
STRIMZI(s_task_failure_share, S_WORKER "task_startup_failure_percentage", NULL,
        "task-startup-failure-percentage");
STRIMZI(s_total_tasks, S_WORKER "connector_total_task_count", connector_labels,
        "connector-total-task-count");
STRIMZI(s_running_tasks, S_WORKER "connector_running_task_count", connector_labels,
        "connector-running-task-count");
STRIMZI(s_paused_tasks, S_WORKER "connector_paused_task_count", connector_labels,
        "connector-paused-task-count");
STRIMZI(s_failed_tasks, S_WORKER "connector_failed_task_count", connector_labels,
        "connector-failed-task-count");
STRIMZI(s_unassigned_tasks, S_WORKER "connector_unassigned_task_count", connector_labels,
        "connector-unassigned-task-count");
STRIMZI(s_restarting_tasks, S_WORKER "connector_restarting_task_count", connector_labels,
        "connector-restarting-task-count");
STRIMZI(s_destroyed_tasks, S_WORKER "connector_destroyed_task_count", connector_labels,
        "connector-destroyed-task-count");
STRIMZI(s_assigned_connectors, "kafka_connect_coordinator_assigned_connectors", NULL,
        "connect-coordinator-metrics assigned-connectors: the connectors this worker "
        "runs (standalone too)");
STRIMZI(s_assigned_tasks, "kafka_connect_coordinator_assigned_tasks", NULL,
        "connect-coordinator-metrics assigned-tasks: the tasks this worker runs "
        "(standalone too)");
STRIMZI(s_completed_rebalances, S_REBALANCE "completed_rebalances_total", NULL,
        "completed-rebalances-total");
STRIMZI(s_rebalance_epoch, S_REBALANCE "epoch", NULL, "epoch");
STRIMZI(s_rebalancing, S_REBALANCE "rebalancing", NULL, "rebalancing");
static const char *const s_connector_status_labels[] = {"connector", "status", NULL};
static const char *const s_task_status_labels[] = {"connector", "task", "status", NULL};
STRIMZI(s_connector_status, "kafka_connect_connector_status", s_connector_status_labels,
        "connector-metrics status: 1, labelled with the connector's status");
STRIMZI(s_task_status, "kafka_connect_connector_task_status", s_task_status_labels,
        "connector-task-metrics status: 1, labelled with the task's status");
static const char *const s_class_labels[] = {"connector", "connector_class", NULL};
static const char *const s_type_labels[] = {"connector", "connector_type", NULL};
static const char *const s_version_labels[] = {"connector", "connector_version", NULL};

/* The names Confluent's JMX exporter rules for Connect give (in its
 * jmx-monitoring-stacks, whose Connect dashboard queries them) where they
 * are not Connect's names above: connector-metrics' and app-info's string
 * attributes as one family each, every series 1 and labelled with one
 * attribute (the family's other labels empty, which Prometheus reads as
 * absent), and completed-rebalances-total without its _total. */
static const tb_metric_def_t c_connector_info = {
    .name = "kafka_connect_connector_metrics",
    .type = TB_METRIC_UNTYPED,
    .help = "Confluent's name for Connect's connector-metrics strings: 1, labelled "
            "with the status, the class, the type or the version.",
    .labels = (const char *const[]){"connector", "status", "connector_class",
                                    "connector_type", "connector_version", NULL}};
static const tb_metric_def_t c_app_info = {
    .name = "kafka_connect_app",
    .type = TB_METRIC_UNTYPED,
    .help = "Confluent's name for Connect's app-info strings: 1, labelled with the "
            "version, the commit-id or the start-time-ms.",
    .labels = (const char *const[]){"client_id", "version", "commit_id", "start_time_ms",
                                    NULL}};
WORKER_FAMILY(c_completed_rebalances, REBALANCE "completed_rebalances",
              "Confluent's name for Connect's completed-rebalances-total: "
              "tributary_cluster_rebalances_total.");

/* The names Strimzi's metrics reporter gives (its other metrics config,
 * whose Connect dashboard queries them) where they are not Connect's above:
 * a string attribute as <group>_<attribute>_info, 1 labelled with the
 * value; and connect-coordinator-metrics under its group's name. */
#define REPORTER_STRING(var, metric, attribute, labelled)                                \
    static const tb_metric_def_t var = {                                                 \
        .name = metric "_info",                                                          \
        .type = TB_METRIC_UNTYPED,                                                       \
        .help = "Strimzi's metrics reporter's name for Connect's " attribute             \
                ": 1, labelled with the value.",                                         \
        .labels = labelled}
REPORTER_STRING(r_connector_status, "kafka_connect_connector_metrics_status",
                "connector-metrics status", s_connector_status_labels);
REPORTER_STRING(r_task_status, "kafka_connect_connector_task_metrics_status",
                "connector-task-metrics status", s_task_status_labels);
REPORTER_STRING(r_class, "kafka_connect_connector_metrics_connector_class",
                "connector-metrics connector-class", s_class_labels);
REPORTER_STRING(r_type, "kafka_connect_connector_metrics_connector_type",
                "connector-metrics connector-type", s_type_labels);
REPORTER_STRING(r_version, "kafka_connect_connector_metrics_connector_version",
                "connector-metrics connector-version", s_version_labels);
#undef REPORTER_STRING
STRIMZI(r_assigned_connectors,
        "kafka_connect_connect_coordinator_metrics_assigned_connectors", NULL,
        "connect-coordinator-metrics assigned-connectors, as its metrics reporter "
        "names it");
STRIMZI(r_assigned_tasks, "kafka_connect_connect_coordinator_metrics_assigned_tasks",
        NULL,
        "connect-coordinator-metrics assigned-tasks, as its metrics reporter names it");

/* Every family a string attribute is served under (Connect's status aside,
 * whose series are per state), NULL-terminated: Strimzi's exporter rules',
 * Confluent's and Strimzi's metrics reporter's. */
static const tb_metric_def_t
    *const connector_status_defs[TB_CONNECT_STRING_FAMILIES + 1] = {
        &s_connector_status, &c_connector_info, &r_connector_status, NULL};
static const tb_metric_def_t *const task_status_defs[TB_CONNECT_STRING_FAMILIES + 1] = {
    &s_task_status, &r_task_status, NULL};
/* class, type and version, in tb_connect_info_set's order, with the label
 * each is served under */
static const struct {
    const char *label;
    const tb_metric_def_t *defs[TB_CONNECT_STRING_FAMILIES + 1];
} info_defs[TB_CONNECT_INFO_COUNT] = {
    {"connector_class",
     {&(const tb_metric_def_t){.name = "kafka_connect_connector_connector_class",
                               .type = TB_METRIC_UNTYPED,
                               .help = "Strimzi's name for Connect's connector-metrics "
                                       "connector-class: 1, labelled with the class.",
                               .labels = s_class_labels},
      &c_connector_info, &r_class, NULL}},
    {"connector_type",
     {&(const tb_metric_def_t){.name = "kafka_connect_connector_connector_type",
                               .type = TB_METRIC_UNTYPED,
                               .help = "Strimzi's name for Connect's connector-metrics "
                                       "connector-type: 1, labelled source or sink.",
                               .labels = s_type_labels},
      &c_connector_info, &r_type, NULL}},
    {"connector_version",
     {&(const tb_metric_def_t){.name = "kafka_connect_connector_connector_version",
                               .type = TB_METRIC_UNTYPED,
                               .help = "Strimzi's name for Connect's connector-metrics "
                                       "connector-version: 1, labelled with the version.",
                               .labels = s_version_labels},
      &c_connector_info, &r_version, NULL}},
};

/* app-info, with Connect 4.2's client-id tag (KIP-1120). */
static const tb_metric_def_t app_version = {
    .name = "kafka_connect_app_info_version",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's app-info version: 1, labelled with the Connect version "
            "implemented.",
    .labels = (const char *const[]){"client_id", "version", NULL}};
static const tb_metric_def_t app_commit = {
    .name = "kafka_connect_app_info_commit_id",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's app-info commit-id: 1, labelled with tributary's commit.",
    .labels = (const char *const[]){"client_id", "commit_id", NULL}};
static const tb_metric_def_t app_start = {
    .name = "kafka_connect_app_info_start_time_seconds",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's app-info start-time-ms: when the worker started, since the "
            "epoch." IN_SECONDS,
    .labels = (const char *const[]){"client_id", NULL},
    .ms_name = true};

/* KIP-891's task tags, in the order tb_connect_task_info_set takes them. */
#define TASK_INFO(attribute, text)                                                       \
    &(const tb_metric_def_t)                                                             \
    {                                                                                    \
        .name = S_TASK attribute, .type = TB_METRIC_UNTYPED,                             \
        .help = "Connect 4.1's connector-task-metrics " text                             \
                " (KIP-891): 1, labelled with the value.",                               \
        .labels = (const char *const[])                                                  \
        {                                                                                \
            "connector", "task", attribute, NULL                                         \
        }                                                                                \
    }
static const tb_metric_def_t *const task_info[TB_CONNECT_TASK_INFO_COUNT] = {
    TASK_INFO("connector_class", "connector-class"),
    TASK_INFO("connector_version", "connector-version"),
    TASK_INFO("connector_type", "connector-type"),
    TASK_INFO("task_class", "task-class"),
    TASK_INFO("task_version", "task-version"),
    TASK_INFO("key_converter_class", "key-converter-class"),
    TASK_INFO("key_converter_version", "key-converter-version"),
    TASK_INFO("value_converter_class", "value-converter-class"),
    TASK_INFO("value_converter_version", "value-converter-version"),
    TASK_INFO("header_converter_class", "header-converter-class"),
    TASK_INFO("header_converter_version", "header-converter-version"),
};
#undef TASK_INFO

/* connector-transform-metrics and connector-predicate-metrics: [kind][0]
 * the class, [kind][1] the version; kind 0 a transform, 1 a predicate. */
#define CHAIN_INFO(group, attribute, label, text)                                        \
    &(const tb_metric_def_t)                                                             \
    {                                                                                    \
        .name = "kafka_connect_connector_" group "_" attribute,                          \
        .type = TB_METRIC_UNTYPED,                                                       \
        .help = "Connect 4.1's connector-" group "-metrics " text                        \
                " (KIP-891): 1, labelled with the value.",                               \
        .labels = (const char *const[])                                                  \
        {                                                                                \
            "connector", "task", group, label, NULL                                      \
        }                                                                                \
    }
static const tb_metric_def_t *const chain_info[2][2] = {
    {CHAIN_INFO("transform", "transform_class", "transform_class", "transform-class"),
     CHAIN_INFO("transform", "transform_version", "transform_version",
                "transform-version")},
    {CHAIN_INFO("predicate", "predicate_class", "predicate_class", "predicate-class"),
     CHAIN_INFO("predicate", "predicate_version", "predicate_version",
                "predicate-version")},
};
#undef CHAIN_INFO

/* A Connect name over the handles at offsets a (and b) of a tributary
 * struct: an alias of a, or a window; and the name Strimzi's exporter rules
 * give it, when Strimzi serves it in the same unit. */
typedef struct {
    const tb_metric_def_t *def;
    const tb_metric_def_t *strimzi;
    bool windowed;
    tb_window_kind_t kind;
    size_t a, b;
    double none;
} rule_t;

#define NO_FIELD ((size_t)-1)
#define ALIAS(def, strimzi, type, field)                                                 \
    {                                                                                    \
        def, strimzi, false, 0, offsetof(type, field), NO_FIELD, 0                       \
    }
#define RATE(def, strimzi, type, field)                                                  \
    {                                                                                    \
        def, strimzi, true, TB_WINDOW_RATE, offsetof(type, field), NO_FIELD, 0           \
    }
#define MAX(def, strimzi, type, field)                                                   \
    {                                                                                    \
        def, strimzi, true, TB_WINDOW_MAX, offsetof(type, field), NO_FIELD, 0            \
    }
/* Kafka's Avg is NaN without samples, its Frequencies 0. */
#define AVG(def, strimzi, type, field)                                                   \
    {                                                                                    \
        def, strimzi, true, TB_WINDOW_RATIO, offsetof(type, field),                      \
            offsetof(type, field), NAN                                                   \
    }
#define SHARE(def, strimzi, type, part, other)                                           \
    {                                                                                    \
        def, strimzi, true, TB_WINDOW_SHARE, offsetof(type, part),                       \
            offsetof(type, other), 0                                                     \
    }

#define T tb_task_metrics_t
static const rule_t sink_rules[] = {
    ALIAS(&sink_read, &s_sink_read, T, records_read),
    RATE(&sink_read_rate, &s_sink_read_rate, T, records_read),
    ALIAS(&sink_send, &s_sink_send, T, records_written),
    RATE(&sink_send_rate, &s_sink_send_rate, T, records_written),
    ALIAS(&partition_count, &s_partition_count, T, partitions),
    ALIAS(&completions, &s_completions, T, commits_succeeded),
    RATE(&completion_rate, &s_completion_rate, T, commits_succeeded),
    ALIAS(NULL, &s_skips, T, connect.commit_skips),
    RATE(&skip_rate, &s_skip_rate, T, connect.commit_skips),
    ALIAS(&sink_active, &s_sink_active, T, active.count),
    MAX(&sink_active_max, &s_sink_active_max, T, active.changes),
    AVG(&sink_active_avg, &s_sink_active_avg, T, active.changes),
    MAX(&put_max, NULL, T, batch_seconds),
    AVG(&put_avg, NULL, T, batch_seconds),
};
static const rule_t source_task_rules[] = {
    ALIAS(&source_poll, &s_source_poll, T, records_read),
    RATE(&source_poll_rate, &s_source_poll_rate, T, records_read),
    ALIAS(&source_write, &s_source_write, T, records_written),
    RATE(&source_write_rate, &s_source_write_rate, T, records_written),
    MAX(&poll_max, NULL, T, batch_seconds),
    AVG(&poll_avg, NULL, T, batch_seconds),
};
/* connector-task-metrics and task-error-metrics, of sinks and sources */
static const rule_t task_rules[] = {
    MAX(&commit_max, NULL, T, commit_seconds),
    AVG(&commit_avg, NULL, T, commit_seconds),
    SHARE(&commit_success, &s_commit_success, T, commits_succeeded, commits_failed),
    SHARE(&commit_failure, &s_commit_failure, T, commits_failed, commits_succeeded),
    MAX(&batch_max, &s_batch_max, T, batch_records),
    AVG(&batch_avg, &s_batch_avg, T, batch_records),
    ALIAS(&errors, &s_errors, T, record_errors),
    ALIAS(&failures, &s_failures, T, failed_attempts),
    ALIAS(&skipped, &s_skipped, T, records_dropped),
    ALIAS(&retries, &s_retries, T, retries),
    ALIAS(&logged, &s_logged, T, errors_logged),
    ALIAS(&dlq_requests, &s_dlq_requests, T, records_dlq),
    ALIAS(&dlq_failures, &s_dlq_failures, T, dlq_failures),
    ALIAS(NULL, &s_last_error, T, connect.last_error),
};
#undef T
#define D tb_source_metrics_t
static const rule_t source_delivery_rules[] = {
    ALIAS(&source_active, &s_source_active, D, in_flight.count),
    MAX(&source_active_max, &s_source_active_max, D, in_flight.changes),
    AVG(&source_active_avg, &s_source_active_avg, D, in_flight.changes),
};
#undef D
#define S tb_state_metrics_t
static const rule_t connector_worker_rules[] = {
    ALIAS(&connector_attempts, &s_connector_attempts, S, startup_attempts),
    ALIAS(&connector_successes, &s_connector_successes, S, startups_succeeded),
    ALIAS(&connector_failures, &s_connector_failures, S, startups_failed),
    SHARE(&connector_success_share, &s_connector_success_share, S, startups_succeeded,
          startups_failed),
    SHARE(&connector_failure_share, &s_connector_failure_share, S, startups_failed,
          startups_succeeded),
};
static const rule_t task_worker_rules[] = {
    ALIAS(&task_attempts, &s_task_attempts, S, startup_attempts),
    ALIAS(&task_successes, &s_task_successes, S, startups_succeeded),
    ALIAS(&task_failures, &s_task_failures, S, startups_failed),
    SHARE(&task_success_share, &s_task_success_share, S, startups_succeeded,
          startups_failed),
    SHARE(&task_failure_share, &s_task_failure_share, S, startups_failed,
          startups_succeeded),
};
/* the worker's own counts, and its share of each connector's task counts */
static const rule_t connector_count_rules[] = {
    ALIAS(NULL, &s_connector_count, S, connect.worker_count),
    ALIAS(NULL, &s_assigned_connectors, S, connect.worker_count),
    ALIAS(NULL, &r_assigned_connectors, S, connect.worker_count),
};
static const rule_t task_count_rules[] = {
    ALIAS(NULL, &s_task_count, S, connect.worker_count),
    ALIAS(NULL, &s_assigned_tasks, S, connect.worker_count),
    ALIAS(NULL, &r_assigned_tasks, S, connect.worker_count),
};
static const rule_t task_ratio_rules[] = {
    ALIAS(NULL, &s_running_ratio, S, connect.ratios[0]),
    ALIAS(NULL, &s_pause_ratio, S, connect.ratios[1]),
};
static const rule_t connector_task_count_rules[] = {
    ALIAS(NULL, &s_total_tasks, S, connect.task_counts[0]),
    ALIAS(NULL, &s_running_tasks, S, connect.task_counts[1]),
    ALIAS(NULL, &s_paused_tasks, S, connect.task_counts[2]),
    ALIAS(NULL, &s_failed_tasks, S, connect.task_counts[3]),
    ALIAS(NULL, &s_unassigned_tasks, S, connect.task_counts[4]),
    ALIAS(NULL, &s_restarting_tasks, S, connect.task_counts[5]),
    ALIAS(NULL, &s_destroyed_tasks, S, connect.task_counts[6]),
};
#undef S
#define C tb_cluster_metrics_t
static const rule_t rebalance_rules[] = {
    ALIAS(&completed_rebalances, &s_completed_rebalances, C, rebalances),
    ALIAS(&c_completed_rebalances, NULL, C, rebalances),
    ALIAS(&rebalance_epoch, &s_rebalance_epoch, C, epoch),
    ALIAS(&rebalancing, &s_rebalancing, C, rebalancing),
    MAX(&rebalance_max, NULL, C, rebalance_seconds),
    AVG(&rebalance_avg, NULL, C, rebalance_seconds),
};
#undef C

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* each rule takes at most two aliases: Connect's name and Strimzi's */
_Static_assert(2 * (COUNT(sink_rules) + COUNT(task_rules)) <= TB_CONNECT_ALIASES_MAX,
               "room for the sink's");
_Static_assert(2 * (COUNT(source_task_rules) + COUNT(task_rules)) <=
                   TB_CONNECT_ALIASES_MAX,
               "and a source's");
_Static_assert(TB_SHOWN_STATE_COUNT +
                       2 * (COUNT(task_worker_rules) + COUNT(task_count_rules) +
                            COUNT(task_ratio_rules) +
                            COUNT(connector_task_count_rules)) <=
                   TB_CONNECT_ALIASES_MAX,
               "and the states");
_Static_assert(2 * COUNT(rebalance_rules) <= TB_CONNECT_ALIASES_MAX, "and a cluster's");

static tb_series_t *handle_at(const void *owner, size_t field)
{
    return field == NO_FIELD ? NULL
                             : *(tb_series_t *const *)((const char *)owner + field);
}

/* The series of def (an alias, or a window) over rule's handles in owner. */
static tb_series_t *take_rule(const rule_t *rule, const tb_metric_def_t *def,
                              const void *owner, const char *const *values)
{
    tb_series_t *a = handle_at(owner, rule->a);
    return rule->windowed
               ? tb_metrics_window(def, values,
                                   &(tb_window_t){.kind = rule->kind,
                                                  .a = a,
                                                  .b = handle_at(owner, rule->b),
                                                  .none = rule->none})
               : tb_metrics_alias(def, values, a);
}

/* Fills c's aliases from *next on with the rules over owner's handles,
 * under Connect's names and Strimzi's. */
static void take_rules(tb_connect_metrics_t *c, size_t *next, const void *owner,
                       const rule_t *rules, size_t count, const char *const *values)
{
    for (size_t i = 0; i < count; i++) {
        if (rules[i].def != NULL) {
            c->aliases[(*next)++] = take_rule(&rules[i], rules[i].def, owner, values);
        }
        if (rules[i].strimzi != NULL) {
            c->aliases[(*next)++] = take_rule(&rules[i], rules[i].strimzi, owner, values);
        }
    }
}

void tb_connect_task_take(tb_connect_metrics_t *c, const tb_task_metrics_t *m,
                          const char *connector, const char *task, int sink)
{
    const char *values[] = {connector, task, NULL};
    size_t next = 0;
    *c = (tb_connect_metrics_t){0};
    c->last_error = tb_metrics_series(&last_error, values);
    if (sink) {
        c->commit_skips = tb_metrics_series(&skips, values);
    }
    /* c is m->connect: the rules read its commit_skips through m */
    take_rules(c, &next, m, sink ? sink_rules : source_task_rules,
               sink ? COUNT(sink_rules) : COUNT(source_task_rules), values);
    take_rules(c, &next, m, task_rules, COUNT(task_rules), values);
}

void tb_connect_source_take(tb_connect_metrics_t *c, const tb_source_metrics_t *m,
                            const char *connector, const char *task)
{
    const char *values[] = {connector, task, NULL};
    size_t next = 0;
    *c = (tb_connect_metrics_t){0};
    take_rules(c, &next, m, source_delivery_rules, COUNT(source_delivery_rules), values);
}

/* Connect's spelling of a state: "RUNNING" as "running". */
static void status_text(tb_state_t state, char *buf, size_t size)
{
    const char *name = tb_state_name(state);
    size_t n = 0;
    for (; name[n] != '\0' && n + 1 < size; n++) {
        buf[n] = (char)tolower((unsigned char)name[n]);
    }
    buf[n] = '\0';
}

/* The index in task_counts of a task in state; -1 for none. */
static int task_count_index(tb_state_t state)
{
    static const tb_state_t counted[TB_CONNECT_TASK_COUNTS] = {
        [1] = TB_STATE_RUNNING,    [2] = TB_STATE_PAUSED,     [3] = TB_STATE_FAILED,
        [4] = TB_STATE_UNASSIGNED, [5] = TB_STATE_RESTARTING,
    };
    for (int i = 1; i <= 5; i++) {
        if (counted[i] == state) {
            return i;
        }
    }
    return -1;
}

void tb_connect_state_take(tb_connect_metrics_t *c, const tb_state_metrics_t *m,
                           const char *connector, const char *task)
{
    size_t next = 0;
    const char *connector_values[] = {connector, NULL};
    *c = (tb_connect_metrics_t){.counted = -1};
    for (size_t i = 0; i < TB_SHOWN_STATE_COUNT; i++) {
        char status[32];
        status_text(tb_shown_states[i], status, sizeof(status));
        const char *task_values[] = {connector, task, status, NULL};
        const char *status_values[] = {connector, status, NULL};
        c->aliases[next++] =
            task != NULL
                ? tb_metrics_alias(&task_status, task_values, m->states[i])
                : tb_metrics_alias(&connector_status, status_values, m->states[i]);
    }
    c->worker_count =
        tb_metrics_series(task != NULL ? &task_count : &connector_count, NULL);
    tb_series_add(c->worker_count, 1);
    for (size_t i = 0; i < TB_CONNECT_TASK_COUNTS; i++) {
        c->task_counts[i] = tb_metrics_series(&task_count_defs[i], connector_values);
    }
    take_rules(c, &next, m, task != NULL ? task_worker_rules : connector_worker_rules,
               task != NULL ? COUNT(task_worker_rules) : COUNT(connector_worker_rules),
               NULL);
    take_rules(c, &next, m, task != NULL ? task_count_rules : connector_count_rules,
               task != NULL ? COUNT(task_count_rules) : COUNT(connector_count_rules),
               NULL);
    take_rules(c, &next, m, connector_task_count_rules, COUNT(connector_task_count_rules),
               connector_values);
    c->connector = strdup(connector);
    if (task != NULL) {
        snprintf(c->task, sizeof(c->task), "%s", task);
        tb_series_add(c->task_counts[0], 1);
        for (size_t i = 0; i < TB_CONNECT_RATIOS; i++) {
            c->ratios[i] = tb_metrics_series(
                &ratio_defs[i], (const char *const[]){connector, task, NULL});
        }
        take_rules(c, &next, m, task_ratio_rules, COUNT(task_ratio_rules),
                   (const char *const[]){connector, task, NULL});
    }
    tb_connect_state_set(c, TB_STATE_UNASSIGNED);
}

/* Points *slot at the series of def with values, set to 1, and releases
 * the one it held after the new one is on the page (the same series when
 * the values did not change): a string attribute as a JMX exporter serves
 * it. */
static void label_series_set(tb_series_t **slot, const tb_metric_def_t *def,
                             const char *const *values)
{
    tb_series_t *old = *slot;
    *slot = tb_metrics_series(def, values);
    tb_series_set(*slot, 1);
    tb_series_release(old);
}

/* Sets slots[i] to the series of defs[i] (NULL-terminated) for a string
 * attribute of c's connector or task: each family's label named label
 * takes value, connector and task take c's, any other is empty. */
static void string_series_set(tb_series_t **slots, const tb_metric_def_t *const *defs,
                              const tb_connect_metrics_t *c, const char *label,
                              const char *value)
{
    for (size_t i = 0; defs[i] != NULL; i++) {
        const char *values[8];
        size_t n = 0;
        for (; defs[i]->labels[n] != NULL && n + 1 < COUNT(values); n++) {
            const char *name = defs[i]->labels[n];
            values[n] = strcmp(name, label) == 0         ? value
                        : strcmp(name, "connector") == 0 ? c->connector
                        : strcmp(name, "task") == 0      ? c->task
                                                         : "";
        }
        values[n] = NULL;
        label_series_set(&slots[i], defs[i], values);
    }
}

void tb_connect_state_set(tb_connect_metrics_t *c, tb_state_t state)
{
    char status[32];
    status_text(state, status, sizeof(status));
    string_series_set(c->status,
                      c->task[0] != '\0' ? task_status_defs : connector_status_defs, c,
                      "status", status);
    if (c->task[0] == '\0') {
        return;
    }
    for (size_t i = 0; i < TB_CONNECT_RATIOS; i++) {
        tb_series_set(c->ratios[i], state == ratio_states[i]);
    }
    if (c->counted >= 0) {
        tb_series_add(c->task_counts[c->counted], -1);
    }
    c->counted = task_count_index(state);
    if (c->counted >= 0) {
        tb_series_add(c->task_counts[c->counted], 1);
    }
}

void tb_connect_info_set(tb_connect_metrics_t *c, const char *class_name,
                         const char *type, const char *version)
{
    const char *values[TB_CONNECT_INFO_COUNT] = {class_name, type, version};
    for (size_t i = 0; i < TB_CONNECT_INFO_COUNT; i++) {
        string_series_set(c->info[i], info_defs[i].defs, c, info_defs[i].label,
                          values[i]);
    }
}

void tb_connect_task_info_set(tb_connect_metrics_t *c, const char *connector,
                              const char *task,
                              const char *const values[TB_CONNECT_TASK_INFO_COUNT])
{
    for (size_t i = 0; i < TB_CONNECT_TASK_INFO_COUNT; i++) {
        label_series_set(&c->task_info[i], task_info[i],
                         (const char *const[]){connector, task, values[i], NULL});
    }
}

int tb_connect_chain_info_add(tb_connect_metrics_t *c, const char *connector,
                              const char *task, const char *kind, const char *alias,
                              const char *class_name, const char *version)
{
    const tb_metric_def_t *const *defs = chain_info[strcmp(kind, "predicate") == 0];
    const char *values[2] = {class_name, version};
    tb_series_t **grown =
        realloc(c->chain_info, (c->chain_info_count + 2) * sizeof(*grown));
    if (grown == NULL) {
        return -1;
    }
    c->chain_info = grown;
    for (size_t i = 0; i < 2; i++) {
        tb_series_t *series = tb_metrics_series(
            defs[i], (const char *const[]){connector, task, alias, values[i], NULL});
        tb_series_set(series, 1);
        c->chain_info[c->chain_info_count++] = series;
    }
    return 0;
}

void tb_connect_rebalance_take(tb_connect_metrics_t *c, const tb_cluster_metrics_t *m)
{
    size_t next = 0;
    *c = (tb_connect_metrics_t){0};
    take_rules(c, &next, m, rebalance_rules, COUNT(rebalance_rules), NULL);
    c->since_rebalance = tb_metrics_series(&since_rebalance, NULL);
}

void tb_connect_app_info_take(tb_series_t *out[TB_CONNECT_APP_INFO_COUNT],
                              const char *client_id, const char *version,
                              const char *commit, double start_seconds)
{
    char start_ms[32];
    snprintf(start_ms, sizeof(start_ms), "%.0f", start_seconds * 1000);
    label_series_set(&out[0], &app_version,
                     (const char *const[]){client_id, version, NULL});
    label_series_set(&out[1], &app_commit,
                     (const char *const[]){client_id, commit, NULL});
    out[2] = tb_metrics_series(&app_start, (const char *const[]){client_id, NULL});
    tb_series_set(out[2], start_seconds);
    label_series_set(&out[3], &c_app_info,
                     (const char *const[]){client_id, version, "", "", NULL});
    label_series_set(&out[4], &c_app_info,
                     (const char *const[]){client_id, "", commit, "", NULL});
    label_series_set(&out[5], &c_app_info,
                     (const char *const[]){client_id, "", "", start_ms, NULL});
}

tb_series_t *tb_connect_leader_name(const char *url)
{
    return tb_metrics_series(&leader_name, (const char *const[]){url, NULL});
}

void tb_connect_release(tb_connect_metrics_t *c)
{
    for (size_t i = 0; i < TB_CONNECT_ALIASES_MAX; i++) {
        tb_series_release(c->aliases[i]);
        c->aliases[i] = NULL;
    }
    tb_series_add(c->worker_count, -1);
    if (c->task[0] != '\0') {
        tb_series_add(c->task_counts[0], -1);
        if (c->counted >= 0) {
            tb_series_add(c->task_counts[c->counted], -1);
        }
    }
    tb_series_t **own[] = {&c->worker_count, &c->last_error, &c->commit_skips,
                           &c->since_rebalance};
    for (size_t i = 0; i < COUNT(own); i++) {
        tb_series_release(*own[i]);
        *own[i] = NULL;
    }
    for (size_t i = 0; i < TB_CONNECT_TASK_COUNTS; i++) {
        tb_series_release(c->task_counts[i]);
        c->task_counts[i] = NULL;
    }
    for (size_t i = 0; i < TB_CONNECT_RATIOS; i++) {
        tb_series_release(c->ratios[i]);
        c->ratios[i] = NULL;
    }
    for (size_t i = 0; i < TB_CONNECT_STRING_FAMILIES; i++) {
        tb_series_release(c->status[i]);
        c->status[i] = NULL;
        for (size_t j = 0; j < TB_CONNECT_INFO_COUNT; j++) {
            tb_series_release(c->info[j][i]);
            c->info[j][i] = NULL;
        }
    }
    for (size_t i = 0; i < TB_CONNECT_TASK_INFO_COUNT; i++) {
        tb_series_release(c->task_info[i]);
        c->task_info[i] = NULL;
    }
    for (size_t i = 0; i < c->chain_info_count; i++) {
        tb_series_release(c->chain_info[i]);
    }
    free(c->chain_info);
    c->chain_info = NULL;
    c->chain_info_count = 0;
    free(c->connector);
    c->connector = NULL;
    c->task[0] = '\0';
    c->counted = -1;
}
