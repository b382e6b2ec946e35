#include "connectors/runtime/metrics/tb_cluster_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "core/tb_time.h"

static const double rebalance_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                           2,    5,    10,  30,   60};

static const tb_metric_def_t leader_def = {
    .name = "tributary_cluster_leader",
    .type = TB_METRIC_GAUGE,
    .help = "1 while this worker leads its cluster, else 0."};
static const tb_metric_def_t epoch_def = {
    .name = "tributary_cluster_assignment_epoch",
    .type = TB_METRIC_GAUGE,
    .help = "The epoch of the assignment this worker runs (the leader's count of "
            "publications)."};
static const tb_metric_def_t rebalances_def = {
    .name = "tributary_cluster_rebalances_total",
    .type = TB_METRIC_COUNTER,
    .help = "Rebalances this worker completed since it started: changes of the "
            "assignment, a move's two steps counted once."};
static const tb_metric_def_t rebalancing_def = {
    .name = "tributary_cluster_rebalancing",
    .type = TB_METRIC_GAUGE,
    .help = "1 while a rebalance is under way on this worker, else 0."};
static const tb_metric_def_t rebalance_seconds_def = {
    .name = "tributary_cluster_rebalance_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time of each rebalance on this worker: from the new assignment's arrival "
            "until this worker runs the final one (its lost work stopped, its new work "
            "started).",
    .buckets = rebalance_buckets,
    .bucket_count = sizeof(rebalance_buckets) / sizeof(rebalance_buckets[0]),
    .keep_max = true};
static const tb_metric_def_t last_rebalance_def = {
    .name = "tributary_cluster_last_rebalance_timestamp_seconds",
    .type = TB_METRIC_GAUGE,
    .help = "When this worker last completed a rebalance, in seconds since the epoch; "
            "0 before the first."};
static const tb_metric_def_t assigned_def = {
    .name = "tributary_cluster_assigned",
    .type = TB_METRIC_GAUGE,
    .help = "Connector instances (kind=\"connector\") and tasks (kind=\"task\") the "
            "assignment gives this worker.",
    .labels = (const char *const[]){"kind", NULL}};

void tb_cluster_metrics_take(tb_cluster_metrics_t *m)
{
    *m = (tb_cluster_metrics_t){
        .leader = tb_metrics_series(&leader_def, NULL),
        .epoch = tb_metrics_series(&epoch_def, NULL),
        .rebalances = tb_metrics_series(&rebalances_def, NULL),
        .rebalancing = tb_metrics_series(&rebalancing_def, NULL),
        .rebalance_seconds = tb_metrics_series(&rebalance_seconds_def, NULL),
        .last_rebalance = tb_metrics_series(&last_rebalance_def, NULL),
        .connectors =
            tb_metrics_series(&assigned_def, (const char *const[]){"connector"}),
        .tasks = tb_metrics_series(&assigned_def, (const char *const[]){"task"}),
        .began_ms = -1,
        .completed_ms = -1,
    };
    tb_connect_rebalance_take(&m->connect, m);
}

void tb_cluster_metrics_release(tb_cluster_metrics_t *m)
{
    tb_connect_release(&m->connect);
    tb_series_t **all[] = {&m->leader,
                           &m->epoch,
                           &m->rebalances,
                           &m->rebalancing,
                           &m->rebalance_seconds,
                           &m->last_rebalance,
                           &m->connectors,
                           &m->tasks,
                           &m->leader_name};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        tb_series_release(*all[i]);
        *all[i] = NULL;
    }
    free(m->leader_url);
    m->leader_url = NULL;
}

void tb_cluster_metrics_applied(tb_cluster_metrics_t *m, int64_t arrived_ms,
                                bool revoking, long long epoch, size_t connectors,
                                size_t tasks)
{
    if (m->began_ms < 0) {
        m->began_ms = arrived_ms;
        tb_series_set(m->rebalancing, 1);
    }
    tb_series_set(m->epoch, (double)epoch);
    tb_series_set(m->connectors, (double)connectors);
    tb_series_set(m->tasks, (double)tasks);
    if (revoking) {
        return;
    }
    int64_t now = tb_monotonic_ms();
    tb_series_observe(m->rebalance_seconds, (double)(now - m->began_ms) / 1000.0);
    tb_series_add(m->rebalances, 1);
    tb_series_set(m->last_rebalance, (double)tb_wall_ms() / 1000.0);
    tb_series_set(m->rebalancing, 0);
    m->completed_ms = now;
    m->began_ms = -1;
}

void tb_cluster_metrics_tick(tb_cluster_metrics_t *m, bool leader, const char *leader_url)
{
    tb_series_set(m->leader, leader ? 1 : 0);
    tb_series_set(m->connect.since_rebalance,
                  m->completed_ms < 0
                      ? INFINITY
                      : (double)(tb_monotonic_ms() - m->completed_ms) / 1000.0);
    bool same = leader_url == NULL
                    ? m->leader_url == NULL
                    : m->leader_url != NULL && strcmp(leader_url, m->leader_url) == 0;
    if (same) {
        return;
    }
    tb_series_release(m->leader_name);
    free(m->leader_url);
    m->leader_url = leader_url != NULL ? strdup(leader_url) : NULL;
    m->leader_name = m->leader_url != NULL ? tb_connect_leader_name(m->leader_url) : NULL;
    tb_series_set(m->leader_name, 1);
}
