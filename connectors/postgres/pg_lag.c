/* The slot's lag gauges (tb_pg_lag.h). */
#include <stdio.h>
#include <stdlib.h>

#include "connectors/postgres/tb_pg_lag.h"
#include "core/tb_metrics.h"

/* Transactions read and not yet confirmed, oldest first; when full, the
 * newest are not kept (the oldest tells the age). */
#define PENDING 1024

static const char *const labels[] = {"connector", "task", NULL};
static const tb_metric_def_t lag_bytes = {
    .name = "tributary_postgres_slot_lag_bytes",
    .type = TB_METRIC_GAUGE,
    .help = "WAL between the slot's confirmed flush position and the server's end.",
    .labels = labels};
static const tb_metric_def_t lag_seconds = {
    .name = "tributary_postgres_slot_lag_seconds",
    .type = TB_METRIC_GAUGE,
    .help = "Age of the oldest transaction read and not yet confirmed to the slot.",
    .labels = labels};

struct tb_pg_lag {
    tb_series_t *bytes;
    tb_series_t *seconds;
    struct {
        uint64_t lsn;
        int64_t commit_us;
    } pending[PENDING];
    size_t head;
    size_t count;
};

tb_pg_lag_t *tb_pg_lag_create(const char *connector, int task)
{
    char id[16];
    snprintf(id, sizeof(id), "%d", task);
    const char *values[] = {connector, id};
    tb_pg_lag_t *lag = calloc(1, sizeof(*lag));
    if (lag == NULL) {
        return NULL;
    }
    lag->bytes = tb_metrics_series(&lag_bytes, values);
    lag->seconds = tb_metrics_series(&lag_seconds, values);
    return lag;
}

void tb_pg_lag_commit(tb_pg_lag_t *lag, uint64_t lsn, int64_t commit_us)
{
    if (lag->count < PENDING) {
        size_t at = (lag->head + lag->count++) % PENDING;
        lag->pending[at].lsn = lsn;
        lag->pending[at].commit_us = commit_us;
    }
}

void tb_pg_lag_update(tb_pg_lag_t *lag, uint64_t server_lsn, uint64_t confirmed,
                      int64_t now_us)
{
    while (lag->count > 0 && lag->pending[lag->head].lsn <= confirmed) {
        lag->head = (lag->head + 1) % PENDING;
        lag->count--;
    }
    double age = 0;
    if (lag->count > 0 && now_us > lag->pending[lag->head].commit_us) {
        age = (double)(now_us - lag->pending[lag->head].commit_us) / 1e6;
    }
    tb_series_set(lag->bytes,
                  server_lsn > confirmed ? (double)(server_lsn - confirmed) : 0);
    tb_series_set(lag->seconds, age);
}

void tb_pg_lag_destroy(tb_pg_lag_t *lag)
{
    if (lag != NULL) {
        tb_series_release(lag->bytes);
        tb_series_release(lag->seconds);
        free(lag);
    }
}
