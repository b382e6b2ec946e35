/*
 * tb_metrics.h - the process's metrics, rendered in Prometheus' text format.
 *
 * Code that counts owns nothing here: it asks once (at task start, say) for
 * a handle to a series - a metric name plus its label values - and then
 * updates it with atomic operations, so the per-record path takes no lock
 * and allocates nothing. The /metrics page is rendered from the same
 * memory without blocking any updater.
 *
 * Names follow Prometheus conventions (_total, _seconds, _bytes). Label
 * values must be bounded (connector names, task ids, topics, route
 * templates; never raw paths or record data).
 */
#ifndef TB_METRICS_H
#define TB_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    TB_METRIC_COUNTER = 0,
    TB_METRIC_GAUGE,
    TB_METRIC_HISTOGRAM,
    /* A value of unknown kind, updated as a gauge: what a JMX exporter
     * serves, and what promtool's naming rules (_total only for counters,
     * no _count outside histograms) leave alone. */
    TB_METRIC_UNTYPED,
} tb_metric_type_t;

/* A metric family: defined once, statically, by the code that updates it. */
typedef struct {
    const char *name;
    tb_metric_type_t type;
    const char *help;
    const char *const *labels; /* label names, NULL-terminated (may be NULL) */
    const double *buckets;     /* histogram upper bounds, ascending */
    size_t bucket_count;
} tb_metric_def_t;

typedef struct tb_series tb_series_t;

/* The series of def with these label values (as many as def->labels names,
 * in order), created on first use. The handle stays valid until
 * tb_series_release() drops the last reference; a series whose last
 * reference is gone disappears from the page. Thread-safe. NULL only on
 * out-of-memory. */
tb_series_t *tb_metrics_series(const tb_metric_def_t *def, const char *const *values);

/* An alias: the series of def (not a histogram) with these label values,
 * whose value is not its own but source's (a counter's or a gauge's), read
 * when the page is rendered. So one set of counters serves a second set of
 * names at no cost to the updaters. Takes a reference on source, dropped
 * when the alias's last reference is; the caller keeps its own. Updating an
 * alias has no visible effect. NULL on out-of-memory, or when source is
 * NULL or either is a histogram. */
tb_series_t *tb_metrics_alias(const tb_metric_def_t *def, const char *const *values,
                              tb_series_t *source);

/* Drops one reference taken by tb_metrics_series() or tb_metrics_alias().
 * NULL is a no-op. */
void tb_series_release(tb_series_t *series);

/* Counters: add a non-negative amount. Gauges and untyped: set or add (may
 * be negative). Histograms: observe one value. Lock-free. A NULL series (what
 * tb_metrics_series() returns out of memory) is a no-op, and so is a call
 * that does not fit the type (add or set on a histogram, observe on a
 * counter or gauge, a negative or NaN add to a counter). */
void tb_series_add(tb_series_t *series, double amount);
void tb_series_set(tb_series_t *series, double value);
void tb_series_observe(tb_series_t *series, double value);

/* Renders every live series, families in name order, as Prometheus text
 * exposition format 0.0.4, plus process metrics (resident memory, CPU
 * seconds, open file descriptors, start time). Returns a malloc'd string. */
char *tb_metrics_render(void);

/* tb_metrics_render() without the process and build metrics: only what
 * tb_metrics_series() created, so a test can compare the whole page.
 * Returns a malloc'd string ("" when no series is live), NULL on no memory. */
char *tb_metrics_render_series(void);

/* Forgets every series (tests and process exit). */
void tb_metrics_reset(void);

#endif
