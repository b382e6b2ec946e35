/* The JDBC sink's metrics, per task (tb_jdbc.h). */
#include <stdio.h>

#include "connectors/jdbc/tb_jdbc.h"

static const char *const labels[] = {"connector", "task", NULL};
static const double second_buckets[] = {0.0005, 0.001, 0.005, 0.01, 0.05,
                                        0.1,    0.5,   1,     5,    30};
static const double row_buckets[] = {1, 10, 100, 500, 1000, 5000, 10000, 50000};

#define COUNTER(var, metric, text)                                                       \
    static const tb_metric_def_t var = {                                                 \
        .name = metric, .type = TB_METRIC_COUNTER, .help = text, .labels = labels}

COUNTER(rows_written, "tributary_jdbc_rows_written_total",
        "Rows a JDBC sink task committed (inserted, upserted, updated or deleted).");
COUNTER(rows_skipped, "tributary_jdbc_rows_skipped_total",
        "Rows not written again because the offsets table showed them written.");
COUNTER(statements, "tributary_jdbc_statements_total",
        "SQL statements a JDBC sink task ran, transaction control included.");
COUNTER(retries, "tributary_jdbc_retries_total",
        "Batches retried after a lost connection or a serialization conflict.");

static const tb_metric_def_t statement_seconds = {
    .name = "tributary_jdbc_statement_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time of one SQL statement of a JDBC sink task.",
    .labels = labels,
    .buckets = second_buckets,
    .bucket_count = sizeof(second_buckets) / sizeof(second_buckets[0])};
static const tb_metric_def_t transaction_rows = {
    .name = "tributary_jdbc_transaction_rows",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Rows in one committed transaction of a JDBC sink task.",
    .labels = labels,
    .buckets = row_buckets,
    .bucket_count = sizeof(row_buckets) / sizeof(row_buckets[0])};

void tb_jdbc_metrics_take(tb_jdbc_metrics_t *m, const char *connector, int task)
{
    char id[16];
    snprintf(id, sizeof(id), "%d", task);
    const char *values[] = {connector, id};
    m->rows_written = tb_metrics_series(&rows_written, values);
    m->rows_skipped = tb_metrics_series(&rows_skipped, values);
    m->statements = tb_metrics_series(&statements, values);
    m->retries = tb_metrics_series(&retries, values);
    m->statement_seconds = tb_metrics_series(&statement_seconds, values);
    m->transaction_rows = tb_metrics_series(&transaction_rows, values);
}

void tb_jdbc_metrics_release(tb_jdbc_metrics_t *m)
{
    tb_series_release(m->rows_written);
    tb_series_release(m->rows_skipped);
    tb_series_release(m->statements);
    tb_series_release(m->retries);
    tb_series_release(m->statement_seconds);
    tb_series_release(m->transaction_rows);
    *m = (tb_jdbc_metrics_t){0};
}
