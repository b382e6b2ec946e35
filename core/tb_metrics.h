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

#include <stdbool.h>
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
    /* A histogram that also keeps the largest value observed in the window
     * (below), for TB_WINDOW_MAX: one more clock read per observation. */
    bool keep_max;
    /* The same for the smallest value, for TB_WINDOW_MIN. */
    bool keep_min;
    /* A gauge or untyped family whose series each show the share (0 to 1)
     * of the time since it was created that it spent set to a non-zero
     * value, as Kafka Connect's running-ratio: tb_series_set() turns it on
     * or off (one compare-and-swap), the share is worked out at render.
     * tb_series_add() leaves it alone; it is no window's source. */
    bool time_share;
    /* A gauge or untyped family named <base>_seconds (or
     * <base>_seconds_<suffix>, as MM2's record-age-ms-max) that is also
     * served as <base>_ms (<base>_ms_<suffix>), each value times 1000,
     * while tb_metrics_ms_names_set()
     * has it on: Kafka Connect's name for a time in ms, which promtool's
     * lint refuses (an abbreviated unit), so it stays off by default. The
     * twin reads the same series at render; it costs the updaters nothing. */
    bool ms_name;
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

/* A windowed series shows what its sources did in the last minute, as
 * Kafka's sampled statistics do (two samples of 30 s, which Kafka Connect's
 * -rate, -avg and -max metrics use). Its value is worked out when the page
 * is rendered, from readings of its sources taken at renders, so it costs
 * the updaters nothing. A reading is a counter's or gauge's value; a
 * histogram reads as its sum where a numerator is read, as its count
 * where a denominator (or a rate's increase) is. */
typedef enum {
    /* The increase of a per second, over the window (at least 30 s, as in
     * Kafka, so that a task that just started shows no burst). */
    TB_WINDOW_RATE = 0,
    /* The increase of a over that of b (an average: a histogram's sum over
     * its count); `none` when b did not increase. */
    TB_WINDOW_RATIO,
    /* The increase of a over that of a and b together: the share of one
     * outcome (a) among two counted apart (a, b), as Kafka's Frequencies
     * give it. Each outcome is one update, so a render never sees one
     * half-counted. `none` when neither increased. */
    TB_WINDOW_SHARE,
    /* The largest value histogram a (its def keeps_max) observed in the
     * current sample or the one before; NaN when none. */
    TB_WINDOW_MAX,
    /* The smallest value histogram a (its def keeps_min) observed in the
     * current sample or the one before; NaN when none. */
    TB_WINDOW_MIN,
} tb_window_kind_t;

typedef struct {
    tb_window_kind_t kind;
    tb_series_t *a;
    tb_series_t *b; /* TB_WINDOW_RATIO's denominator, TB_WINDOW_SHARE's other
                       outcome; else NULL */
    double none;    /* their value when the denominator did not increase */
} tb_window_t;

/* The windowed series of def (not a histogram) with these label values, over
 * window's sources; it takes a reference on each, dropped with its last one.
 * Updating it has no visible effect. NULL on out-of-memory, or when a source
 * it needs is NULL or does not fit (TB_WINDOW_MAX or TB_WINDOW_MIN over
 * anything but a histogram that keeps its max or min). */
tb_series_t *tb_metrics_window(const tb_metric_def_t *def, const char *const *values,
                               const tb_window_t *window);

/* The monotonic clock, in ms, that windows read; NULL restores
 * tb_monotonic_ms(). For tests. */
void tb_metrics_clock_set(int64_t (*clock_ms)(void));

/* Drops one reference taken by tb_metrics_series(), tb_metrics_alias() or
 * tb_metrics_window(). NULL is a no-op. */
void tb_series_release(tb_series_t *series);

/* Counters: add a non-negative amount. Gauges and untyped: set or add (may
 * be negative). Histograms: observe one value. Lock-free. A NULL series (what
 * tb_metrics_series() returns out of memory) is a no-op, and so is a call
 * that does not fit the type (add or set on a histogram, observe on a
 * counter or gauge, a negative or NaN add to a counter). */
void tb_series_add(tb_series_t *series, double amount);
void tb_series_set(tb_series_t *series, double value);
void tb_series_observe(tb_series_t *series, double value);
/* A histogram's count observations of the same value at the cost of one
 * (the same page as count tb_series_observe calls); 0 is a no-op. */
void tb_series_observe_many(tb_series_t *series, double value, uint64_t count);

/* A histogram's observations gathered by one thread, without atomics or a
 * clock read (tb_observations_add), and published at once at the cost of one
 * observation (tb_series_observe_batch): a batch's worth of values costs the
 * page's readers and the updater one update. For families of at most
 * TB_OBSERVATIONS_BOUNDS finite bounds. Zero it before the first add. */
#define TB_OBSERVATIONS_BOUNDS 16
typedef struct {
    uint64_t count;
    double sum, min, max;
    uint64_t counts[TB_OBSERVATIONS_BOUNDS + 1]; /* per bound, then over the last */
} tb_observations_t;

/* Adds value to batch, in the bucket of histogram family def. */
void tb_observations_add(tb_observations_t *batch, const tb_metric_def_t *def,
                         double value);
/* Publishes batch's observations to series (a histogram of the family the
 * batch was gathered for): the same page as one tb_series_observe call per
 * value, but for the extremes' sample, which is the publication's; then
 * empties batch. An empty batch, a NULL series, or a family of more than
 * TB_OBSERVATIONS_BOUNDS finite bounds is a no-op (the batch is emptied). */
void tb_series_observe_batch(tb_series_t *series, tb_observations_t *batch);

/* Whether the page also serves each ms_name family under its _ms name
 * (metrics.milliseconds.names); off until set. Thread-safe. */
void tb_metrics_ms_names_set(bool on);

/* Renders every live series, families in name order, as Prometheus text
 * exposition format 0.0.4, plus process metrics (resident memory, CPU
 * seconds, open file descriptors, start time). Returns a malloc'd string. */
char *tb_metrics_render(void);

/* tb_metrics_render() without the process and build metrics: only what
 * tb_metrics_series() created, so a test can compare the whole page.
 * Returns a malloc'd string ("" when no series is live), NULL on no memory. */
char *tb_metrics_render_series(void);

/* How many times the registry has compared one series' label values with
 * another's (to find a series, or to sort a family for a render): the work
 * a test counts to see that finding or adding a series does not grow with
 * the number of series. */
size_t tb_metrics_label_compares(void);

/* Forgets every series (tests and process exit). */
void tb_metrics_reset(void);

#endif
