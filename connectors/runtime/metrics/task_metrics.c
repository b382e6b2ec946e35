#include "connectors/runtime/metrics/tb_task_metrics.h"

#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "core/tb_time.h"

#include <stdio.h>
#include <string.h>

static const char *const task_labels[] = {"connector", "task", NULL};
static const char *const stage_labels[] = {"connector", "task", "stage", NULL};
static const char *const partition_labels[] = {"connector", "topic", "partition", NULL};
static const char *const stopped_labels[] = {"connector", "topic", "partition", "reason",
                                             NULL};
static const char *const skipped_labels[] = {"connector", "task",   "topic",
                                             "partition", "reason", NULL};
static const char *const state_labels[] = {"connector", "task", "state", NULL};
static const char *const error_labels[] = {"connector", "task", "error", NULL};
static const char *const result_labels[] = {"connector", "task", "result", NULL};
static const char *const worker_result_labels[] = {"result", NULL};

static const double batch_buckets[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05,
                                       0.1,    0.5,    1,     5,     30};
static const double record_buckets[] = {1, 8, 64, 256, 512, 1024};
static const double commit_buckets[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30};
static const double pause_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60};

#define COUNTER(var, metric, text)                                                       \
    static const tb_metric_def_t var = {                                                 \
        .name = metric, .type = TB_METRIC_COUNTER, .help = text, .labels = task_labels}
#define PARTITION_GAUGE(var, metric, text)                                               \
    static const tb_metric_def_t var = {.name = metric,                                  \
                                        .type = TB_METRIC_GAUGE,                         \
                                        .help = text,                                    \
                                        .labels = partition_labels}

COUNTER(
    records_read, "tributary_task_records_read_total",
    "Records read: consumed from Kafka by a sink, polled from its plugin by a source.");
COUNTER(records_written, "tributary_task_records_written_total",
        "Records written: taken by a sink plugin, acknowledged by Kafka for a source.");
COUNTER(records_dropped, "tributary_task_records_dropped_total",
        "Records skipped under errors.tolerance=all.");
COUNTER(records_dlq, "tributary_task_records_dlq_total",
        "Records sent to the dead letter queue.");
COUNTER(bytes_read, "tributary_task_bytes_total", "Key and value bytes read.");
COUNTER(batches, "tributary_task_batches_total",
        "Batches handed to or taken from plugins.");
COUNTER(restarts, "tributary_task_restarts_total",
        "Restarts of a task, automatic or asked for.");
COUNTER(record_errors, "tributary_task_record_errors_total",
        "Records that failed in a stage after its retries, tolerated or not.");
COUNTER(failed_attempts, "tributary_task_failed_attempts_total",
        "Attempts at a record or batch that failed, the retried ones included.");
COUNTER(retries, "tributary_task_retries_total",
        "Attempts made again under errors.retry.timeout.");
COUNTER(errors_logged, "tributary_task_errors_logged_total",
        "Failed records logged under errors.log.enable.");
COUNTER(dlq_failures, "tributary_task_dlq_failures_total",
        "Records the dead letter queue refused.");

static const tb_metric_def_t commits = {
    .name = "tributary_task_offset_commits_total",
    .type = TB_METRIC_COUNTER,
    .help = "Offset commits (offsets recorded in the store), by result.",
    .labels = result_labels};
static const tb_metric_def_t commit_seconds = {
    .name = "tributary_task_offset_commit_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time of one offset commit: a sink's flush, the store, the group's commit "
            "sent.",
    .labels = task_labels,
    .buckets = commit_buckets,
    .bucket_count = sizeof(commit_buckets) / sizeof(commit_buckets[0]),
    .keep_max = true};
static const tb_metric_def_t batch_records = {
    .name = "tributary_task_batch_records",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Records of one plugin call: put() for sinks, poll() for sources.",
    .labels = task_labels,
    .buckets = record_buckets,
    .bucket_count = sizeof(record_buckets) / sizeof(record_buckets[0]),
    .keep_max = true};
static const tb_metric_def_t partitions = {.name = "tributary_sink_task_partitions",
                                           .type = TB_METRIC_GAUGE,
                                           .help =
                                               "The partitions assigned to a sink task.",
                                           .labels = task_labels};

static const tb_metric_def_t rebalance_pause = {
    .name = "tributary_sink_rebalance_pause_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time a sink task read nothing at a rebalance of its consumer group (eager, "
            "the default): from its partitions revoked to the group's next assignment.",
    .labels = task_labels,
    .buckets = pause_buckets,
    .bucket_count = sizeof(pause_buckets) / sizeof(pause_buckets[0])};

static const tb_metric_def_t sink_active = {
    .name = "tributary_sink_active_records",
    .type = TB_METRIC_GAUGE,
    .help = "Records a sink task read from Kafka whose offsets are not committed yet.",
    .labels = task_labels};
static const double active_buckets[] = {0, 10, 100, 1000, 10000, 100000};
static const tb_metric_def_t active_changes = {
    .name = "tributary_task_active_records",
    .type = TB_METRIC_HISTOGRAM,
    .help = "A task's active records (tributary_sink_active_records, "
            "tributary_source_in_flight_records), observed at each change.",
    .labels = task_labels,
    .buckets = active_buckets,
    .bucket_count = sizeof(active_buckets) / sizeof(active_buckets[0]),
    .keep_max = true};

static const tb_metric_def_t connector_startups = {
    .name = "tributary_connector_startups_total",
    .type = TB_METRIC_COUNTER,
    .help = "Connectors of this worker that started (result=success) or failed to.",
    .labels = worker_result_labels};
static const tb_metric_def_t task_startups = {
    .name = "tributary_task_startups_total",
    .type = TB_METRIC_COUNTER,
    .help = "Tasks of this worker that started (result=success) or failed to.",
    .labels = worker_result_labels};
static const tb_metric_def_t connector_startup_attempts = {
    .name = "tributary_connector_startup_attempts_total",
    .type = TB_METRIC_COUNTER,
    .help = "Startups of connectors of this worker, successful or not."};
static const tb_metric_def_t task_startup_attempts = {
    .name = "tributary_task_startup_attempts_total",
    .type = TB_METRIC_COUNTER,
    .help = "Startups of tasks of this worker, successful or not."};

static const tb_metric_def_t batch_seconds = {
    .name = "tributary_task_batch_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time of one plugin call: put() for sinks, poll() for sources.",
    .labels = task_labels,
    .buckets = batch_buckets,
    .bucket_count = sizeof(batch_buckets) / sizeof(batch_buckets[0]),
    .keep_max = true};
static const tb_metric_def_t conversion_errors = {
    .name = "tributary_task_conversion_errors_total",
    .type = TB_METRIC_COUNTER,
    .help = "Records a converter could not convert, by stage.",
    .labels = stage_labels};

PARTITION_GAUGE(committed, "tributary_sink_partition_committed_offset",
                "The offset the broker acknowledged for the connector's group.");
PARTITION_GAUGE(position, "tributary_sink_partition_position",
                "The consumer's position in the partition.");
PARTITION_GAUGE(end_offset, "tributary_sink_partition_end_offset",
                "The partition's end offset (high watermark) as last fetched.");
PARTITION_GAUGE(lag, "tributary_sink_partition_lag",
                "End offset minus committed offset: 0 when caught up, also on "
                "transactional topics.");
static const tb_metric_def_t stopped = {
    .name = "tributary_sink_partition_stopped",
    .type = TB_METRIC_GAUGE,
    .help = "1 while a partition is stopped by an error; the reason label says why.",
    .labels = stopped_labels};

static const tb_metric_def_t records_skipped = {
    .name = "tributary_sink_records_skipped_total",
    .type = TB_METRIC_COUNTER,
    .help = "Records a sink never read, by reason: deleted by retention before they "
            "were read, or passed by a group offset adopted at start.",
    .labels = skipped_labels};

static const tb_metric_def_t state = {
    .name = "tributary_state",
    .type = TB_METRIC_GAUGE,
    .help = "1 for the current state of a connector (task=connector) or of a task.",
    .labels = state_labels};

static const tb_metric_def_t in_flight = {
    .name = "tributary_source_in_flight_records",
    .type = TB_METRIC_GAUGE,
    .help = "Records produced and not yet acknowledged.",
    .labels = task_labels};
static const double produce_buckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                         0.25,  0.5,   1,    2.5,   5,    10};
static const tb_metric_def_t produce_seconds = {
    .name = "tributary_source_produce_latency_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help =
        "From handing a record to librdkafka to its acknowledgement: every record, "
        "timed from its batch's hand-off to the step that served its delivery report.",
    .labels = task_labels,
    .buckets = produce_buckets,
    .bucket_count = sizeof(produce_buckets) / sizeof(produce_buckets[0])};
static const tb_metric_def_t txn_commits = {
    .name = "tributary_source_transactions_committed_total",
    .type = TB_METRIC_COUNTER,
    .help = "Exactly-once transactions committed.",
    .labels = task_labels};
static const tb_metric_def_t txn_aborts = {
    .name = "tributary_source_transactions_aborted_total",
    .type = TB_METRIC_COUNTER,
    .help = "Exactly-once transactions aborted (and tried again with fewer records).",
    .labels = task_labels};
static const tb_metric_def_t delivery_errors = {
    .name = "tributary_source_delivery_errors_total",
    .type = TB_METRIC_COUNTER,
    .help = "Records Kafka did not acknowledge, by librdkafka's error name.",
    .labels = error_labels};

static const char *task_text(int task, char *buf, size_t size)
{
    if (task < 0) {
        return "connector";
    }
    snprintf(buf, size, "%d", task);
    return buf;
}

/* a's series: the count under def, its changes under active_changes */
static void active_take(tb_active_records_t *a, const tb_metric_def_t *def,
                        const char *const *values)
{
    a->count = tb_metrics_series(def, values);
    a->changes = tb_metrics_series(&active_changes, values);
    a->last = 0;
}

static void active_release(tb_active_records_t *a)
{
    tb_series_release(a->count);
    tb_series_release(a->changes);
    *a = (tb_active_records_t){0};
}

void tb_active_records_set(tb_active_records_t *a, double n)
{
    tb_series_set(a->count, n);
    if (n != a->last) {
        tb_series_observe(a->changes, n);
        a->last = n;
    }
}

void tb_task_metrics_take(tb_task_metrics_t *m, const char *connector, int task, int sink)
{
    char id[16];
    const char *values[] = {connector, task_text(task, id, sizeof(id)), NULL};
    const char *key_stage[] = {connector, id, "KEY_CONVERTER", NULL};
    const char *value_stage[] = {connector, id, "VALUE_CONVERTER", NULL};
    const char *succeeded[] = {connector, id, "success", NULL};
    const char *failed[] = {connector, id, "failure", NULL};
    m->records_read = tb_metrics_series(&records_read, values);
    m->records_written = tb_metrics_series(&records_written, values);
    m->records_dropped = tb_metrics_series(&records_dropped, values);
    m->records_dlq = tb_metrics_series(&records_dlq, values);
    m->bytes = tb_metrics_series(&bytes_read, values);
    m->batches = tb_metrics_series(&batches, values);
    m->batch_seconds = tb_metrics_series(&batch_seconds, values);
    m->batch_records = tb_metrics_series(&batch_records, values);
    m->key_conversion_errors = tb_metrics_series(&conversion_errors, key_stage);
    m->value_conversion_errors = tb_metrics_series(&conversion_errors, value_stage);
    m->commit_seconds = tb_metrics_series(&commit_seconds, values);
    m->commits_succeeded = tb_metrics_series(&commits, succeeded);
    m->commits_failed = tb_metrics_series(&commits, failed);
    m->record_errors = tb_metrics_series(&record_errors, values);
    m->failed_attempts = tb_metrics_series(&failed_attempts, values);
    m->retries = tb_metrics_series(&retries, values);
    m->errors_logged = tb_metrics_series(&errors_logged, values);
    m->dlq_failures = tb_metrics_series(&dlq_failures, values);
    m->partitions = sink ? tb_metrics_series(&partitions, values) : NULL;
    m->rebalance_pause = sink ? tb_metrics_series(&rebalance_pause, values) : NULL;
    m->active = (tb_active_records_t){0};
    if (sink) {
        active_take(&m->active, &sink_active, values);
    }
    tb_connect_task_take(&m->connect, m, connector, id, sink);
}

void tb_task_metrics_commit(tb_task_metrics_t *m, int64_t started_us, bool succeeded)
{
    tb_series_observe(m->commit_seconds, (double)(tb_monotonic_us() - started_us) / 1e6);
    tb_series_add(succeeded ? m->commits_succeeded : m->commits_failed, 1);
}

/* A failed attempt, at the time Connect's last-error-timestamp shows. */
static void count_failed_attempt(tb_task_metrics_t *m)
{
    tb_series_add(m->failed_attempts, 1);
    tb_series_set(m->connect.last_error, (double)tb_wall_ms());
}

void tb_task_metrics_record_error(tb_task_metrics_t *m)
{
    tb_series_add(m->record_errors, 1);
    count_failed_attempt(m);
}

void tb_task_metrics_retry(tb_task_metrics_t *m)
{
    tb_series_add(m->retries, 1);
    count_failed_attempt(m);
}

void tb_task_metrics_release(tb_task_metrics_t *m)
{
    tb_connect_release(&m->connect);
    active_release(&m->active);
    tb_series_t **all[] = {&m->records_read,
                           &m->records_written,
                           &m->records_dropped,
                           &m->records_dlq,
                           &m->bytes,
                           &m->batches,
                           &m->batch_seconds,
                           &m->batch_records,
                           &m->key_conversion_errors,
                           &m->value_conversion_errors,
                           &m->commit_seconds,
                           &m->commits_succeeded,
                           &m->commits_failed,
                           &m->record_errors,
                           &m->failed_attempts,
                           &m->retries,
                           &m->errors_logged,
                           &m->dlq_failures,
                           &m->partitions,
                           &m->rebalance_pause};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        tb_series_release(*all[i]);
        *all[i] = NULL;
    }
}

void tb_partition_metrics_take(tb_partition_metrics_t *m, const char *connector, int task,
                               const char *topic, int32_t partition)
{
    char number[16];
    char id[16];
    snprintf(number, sizeof(number), "%d", (int)partition);
    const char *values[] = {connector, topic, number, NULL};
    const char *retention[] = {
        connector, task_text(task, id, sizeof(id)), topic, number, "retention", NULL};
    const char *group[] = {connector, id, topic, number, "group offset", NULL};
    const char *task_values[] = {connector, id, NULL};
    m->skipped_retention = tb_metrics_series(&records_skipped, retention);
    m->skipped_group = tb_metrics_series(&records_skipped, group);
    m->committed = tb_metrics_series(&committed, values);
    m->position = tb_metrics_series(&position, values);
    m->end = tb_metrics_series(&end_offset, values);
    m->lag = tb_metrics_series(&lag, values);
    m->stopped = NULL;
    m->task_partitions = tb_metrics_series(&partitions, task_values);
    tb_series_add(m->task_partitions, 1);
}

void tb_partition_metrics_stop(tb_partition_metrics_t *m, const char *connector,
                               const char *topic, int32_t partition, const char *reason)
{
    char number[16];
    snprintf(number, sizeof(number), "%d", (int)partition);
    const char *values[] = {connector, topic, number, reason, NULL};
    tb_series_release(m->stopped);
    m->stopped = tb_metrics_series(&stopped, values);
    tb_series_set(m->stopped, 1);
}

void tb_partition_metrics_release(tb_partition_metrics_t *m)
{
    tb_series_add(m->task_partitions, -1);
    tb_series_t **all[] = {&m->committed, &m->position,          &m->end,
                           &m->lag,       &m->skipped_retention, &m->skipped_group,
                           &m->stopped,   &m->task_partitions};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        tb_series_release(*all[i]);
        *all[i] = NULL;
    }
}

const tb_state_t tb_shown_states[TB_SHOWN_STATE_COUNT] = {
    TB_STATE_UNASSIGNED, TB_STATE_RUNNING, TB_STATE_PAUSED,
    TB_STATE_STOPPED,    TB_STATE_FAILED,  TB_STATE_RESTARTING};

void tb_state_metrics_take(tb_state_metrics_t *m, const char *connector, int task)
{
    char id[16];
    const char *who = task_text(task, id, sizeof(id));
    for (size_t i = 0; i < TB_SHOWN_STATE_COUNT; i++) {
        const char *values[] = {connector, who, tb_state_name(tb_shown_states[i]), NULL};
        m->states[i] = tb_metrics_series(&state, values);
    }
    const char *values[] = {connector, who, NULL};
    const char *succeeded[] = {"success", NULL};
    const char *failed[] = {"failure", NULL};
    const tb_metric_def_t *startups = task >= 0 ? &task_startups : &connector_startups;
    m->restarts = task >= 0 ? tb_metrics_series(&restarts, values) : NULL;
    m->startup_attempts = tb_metrics_series(
        task >= 0 ? &task_startup_attempts : &connector_startup_attempts, NULL);
    m->startups_succeeded = tb_metrics_series(startups, succeeded);
    m->startups_failed = tb_metrics_series(startups, failed);
    m->current = TB_STATE_UNASSIGNED;
    tb_connect_state_take(&m->connect, m, connector, task >= 0 ? who : NULL);
}

static bool started(tb_state_t state)
{
    return state == TB_STATE_RUNNING || state == TB_STATE_PAUSED;
}

void tb_state_metrics_set(tb_state_metrics_t *m, tb_state_t current, int restart_count)
{
    for (size_t i = 0; i < TB_SHOWN_STATE_COUNT; i++) {
        tb_series_set(m->states[i], tb_shown_states[i] == current ? 1 : 0);
    }
    tb_series_set(m->restarts, restart_count);
    /* a startup ends in a started state, or in FAILED before one */
    bool succeeded = started(current) && !started(m->current);
    bool failed = current == TB_STATE_FAILED && !started(m->current);
    if (succeeded || failed) {
        tb_series_add(m->startup_attempts, 1);
        tb_series_add(succeeded ? m->startups_succeeded : m->startups_failed, 1);
    }
    if (current != m->current) {
        tb_connect_state_set(&m->connect, current);
    }
    m->current = current;
}

void tb_state_metrics_release(tb_state_metrics_t *m)
{
    tb_connect_release(&m->connect);
    for (size_t i = 0; i < TB_SHOWN_STATE_COUNT; i++) {
        tb_series_release(m->states[i]);
        m->states[i] = NULL;
    }
    tb_series_t **all[] = {&m->restarts, &m->startup_attempts, &m->startups_succeeded,
                           &m->startups_failed};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        tb_series_release(*all[i]);
        *all[i] = NULL;
    }
}

void tb_source_metrics_take(tb_source_metrics_t *m, const char *connector, int task)
{
    char id[16];
    const char *values[] = {connector, task_text(task, id, sizeof(id)), NULL};
    active_take(&m->in_flight, &in_flight, values);
    m->produce_seconds = tb_metrics_series(&produce_seconds, values);
    m->txn_commits = tb_metrics_series(&txn_commits, values);
    m->txn_aborts = tb_metrics_series(&txn_aborts, values);
    tb_connect_source_take(&m->connect, m, connector, id);
}

void tb_source_metrics_release(tb_source_metrics_t *m)
{
    tb_connect_release(&m->connect);
    active_release(&m->in_flight);
    tb_series_release(m->produce_seconds);
    tb_series_release(m->txn_commits);
    tb_series_release(m->txn_aborts);
    m->produce_seconds = m->txn_commits = m->txn_aborts = NULL;
}

tb_series_t *tb_source_metrics_delivery_errors(const char *connector, int task,
                                               const char *error_name)
{
    char id[16];
    const char *values[] = {connector, task_text(task, id, sizeof(id)), error_name, NULL};
    return tb_metrics_series(&delivery_errors, values);
}
