/*
 * connect_metrics.c - Kafka Connect's metric names as aliases of
 * tributary's series. One table per group maps a Connect name to the
 * tributary handle it reads. All are untyped, as a JMX exporter serves
 * them, and as promtool accepts names such as connector_count.
 */
#include "connectors/runtime/tb_connect_metrics.h"

#include <ctype.h>
#include <stddef.h>

static const char *const task_labels[] = {"connector", "task", NULL};
static const char *const task_status_labels[] = {"connector", "task", "status", NULL};
static const char *const connector_status_labels[] = {"connector", "status", NULL};

#define TASK_FAMILY(var, metric, text)                                                   \
    static const tb_metric_def_t var = {                                                 \
        .name = metric, .type = TB_METRIC_UNTYPED, .help = text, .labels = task_labels}

TASK_FAMILY(sink_read, "kafka_connect_sink_task_metrics_sink_record_read_total",
            "Connect's sink-record-read-total: tributary_task_records_read_total.");
TASK_FAMILY(sink_send, "kafka_connect_sink_task_metrics_sink_record_send_total",
            "Connect's sink-record-send-total: tributary_task_records_written_total.");
TASK_FAMILY(source_poll, "kafka_connect_source_task_metrics_source_record_poll_total",
            "Connect's source-record-poll-total: tributary_task_records_read_total.");
TASK_FAMILY(source_write, "kafka_connect_source_task_metrics_source_record_write_total",
            "Connect's source-record-write-total: tributary_task_records_written_total.");
TASK_FAMILY(source_active, "kafka_connect_source_task_metrics_source_record_active_count",
            "Connect's source-record-active-count: tributary_source_in_flight_records.");
TASK_FAMILY(skipped, "kafka_connect_task_error_metrics_total_records_skipped",
            "Connect's total-records-skipped: tributary_task_records_dropped_total.");
TASK_FAMILY(
    dlq_requests, "kafka_connect_task_error_metrics_deadletterqueue_produce_requests",
    "Connect's deadletterqueue-produce-requests: tributary_task_records_dlq_total.");

static const tb_metric_def_t task_status = {
    .name = "kafka_connect_connector_task_metrics_status",
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
static const tb_metric_def_t connector_count = {
    .name = "kafka_connect_connect_worker_metrics_connector_count",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's connector-count: the connectors of this worker."};
static const tb_metric_def_t task_count = {
    .name = "kafka_connect_connect_worker_metrics_task_count",
    .type = TB_METRIC_UNTYPED,
    .help = "Connect's task-count: the tasks of this worker."};

/* A Connect name over the handle at offset field of a tributary struct. */
typedef struct {
    const tb_metric_def_t *def;
    size_t field;
} alias_rule_t;

static const alias_rule_t sink_rules[] = {
    {&sink_read, offsetof(tb_task_metrics_t, records_read)},
    {&sink_send, offsetof(tb_task_metrics_t, records_written)},
    {&skipped, offsetof(tb_task_metrics_t, records_dropped)},
    {&dlq_requests, offsetof(tb_task_metrics_t, records_dlq)},
};
static const alias_rule_t source_task_rules[] = {
    {&source_poll, offsetof(tb_task_metrics_t, records_read)},
    {&source_write, offsetof(tb_task_metrics_t, records_written)},
    {&skipped, offsetof(tb_task_metrics_t, records_dropped)},
    {&dlq_requests, offsetof(tb_task_metrics_t, records_dlq)},
};
static const alias_rule_t source_delivery_rules[] = {
    {&source_active, offsetof(tb_source_metrics_t, in_flight)},
};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

_Static_assert(COUNT(sink_rules) <= TB_CONNECT_ALIASES_MAX, "room for the sink's");
_Static_assert(COUNT(source_task_rules) <= TB_CONNECT_ALIASES_MAX, "and a source's");
_Static_assert(TB_SHOWN_STATE_COUNT <= TB_CONNECT_ALIASES_MAX, "and the states");

static void take_rules(tb_connect_metrics_t *c, const void *owner,
                       const alias_rule_t *rules, size_t count, const char *connector,
                       const char *task)
{
    const char *values[] = {connector, task, NULL};
    for (size_t i = 0; i < count; i++) {
        tb_series_t *source =
            *(tb_series_t *const *)((const char *)owner + rules[i].field);
        c->aliases[i] = tb_metrics_alias(rules[i].def, values, source);
    }
}

void tb_connect_task_take(tb_connect_metrics_t *c, const tb_task_metrics_t *m,
                          const char *connector, const char *task, int sink)
{
    *c = (tb_connect_metrics_t){0};
    if (sink) {
        take_rules(c, m, sink_rules, COUNT(sink_rules), connector, task);
    } else {
        take_rules(c, m, source_task_rules, COUNT(source_task_rules), connector, task);
    }
}

void tb_connect_source_take(tb_connect_metrics_t *c, const tb_source_metrics_t *m,
                            const char *connector, const char *task)
{
    *c = (tb_connect_metrics_t){0};
    take_rules(c, m, source_delivery_rules, COUNT(source_delivery_rules), connector,
               task);
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

void tb_connect_state_take(tb_connect_metrics_t *c, const tb_state_metrics_t *m,
                           const char *connector, const char *task)
{
    *c = (tb_connect_metrics_t){0};
    for (size_t i = 0; i < TB_SHOWN_STATE_COUNT; i++) {
        char status[32];
        status_text(tb_shown_states[i], status, sizeof(status));
        const char *task_values[] = {connector, task, status, NULL};
        const char *connector_values[] = {connector, status, NULL};
        c->aliases[i] =
            task != NULL
                ? tb_metrics_alias(&task_status, task_values, m->states[i])
                : tb_metrics_alias(&connector_status, connector_values, m->states[i]);
    }
    c->worker_count =
        tb_metrics_series(task != NULL ? &task_count : &connector_count, NULL);
    tb_series_add(c->worker_count, 1);
}

void tb_connect_release(tb_connect_metrics_t *c)
{
    for (size_t i = 0; i < TB_CONNECT_ALIASES_MAX; i++) {
        tb_series_release(c->aliases[i]);
        c->aliases[i] = NULL;
    }
    tb_series_add(c->worker_count, -1);
    tb_series_release(c->worker_count);
    c->worker_count = NULL;
}
