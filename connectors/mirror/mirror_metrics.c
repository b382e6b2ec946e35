/*
 * mirror_metrics.c - MM2's sensors of a time (tb_mirror.h): the last value
 * is set, the histogram observes, and the -max, -min and -avg are windows
 * over the histogram, worked out when the page is rendered. A batch's times
 * are gathered in the sensor and published once.
 */
#include <math.h>

#include "connectors/mirror/tb_mirror.h"

/* From a millisecond to a day: replication runs from ms to hours behind. */
const double tb_mirror_timing_buckets[TB_MIRROR_TIMING_BUCKET_COUNT] = {
    0.001, 0.01, 0.1, 0.5, 1, 5, 30, 300, 3600, 86400};

void tb_mirror_timing_start(tb_mirror_timing_t *timing,
                            const tb_mirror_timing_defs_t *defs,
                            const char *const *values)
{
    *timing = (tb_mirror_timing_t){.def = &defs->observed};
    timing->last = tb_metrics_series(&defs->last, values);
    timing->observed = tb_metrics_series(&defs->observed, values);
    timing->max = tb_metrics_window(
        &defs->max, values, &(tb_window_t){.kind = TB_WINDOW_MAX, .a = timing->observed});
    timing->min = tb_metrics_window(
        &defs->min, values, &(tb_window_t){.kind = TB_WINDOW_MIN, .a = timing->observed});
    timing->avg = tb_metrics_window(&defs->avg, values,
                                    &(tb_window_t){.kind = TB_WINDOW_RATIO,
                                                   .a = timing->observed,
                                                   .b = timing->observed,
                                                   .none = NAN});
}

void tb_mirror_timing_record(tb_mirror_timing_t *timing, double seconds)
{
    tb_mirror_timing_add(timing, seconds);
    tb_mirror_timing_publish(timing);
}

void tb_mirror_timing_add(tb_mirror_timing_t *timing, double seconds)
{
    tb_observations_add(&timing->batch, timing->def, seconds);
    timing->latest = seconds;
}

void tb_mirror_timing_publish(tb_mirror_timing_t *timing)
{
    if (timing->batch.count > 0) {
        tb_series_set(timing->last, timing->latest);
        tb_series_observe_batch(timing->observed, &timing->batch);
    }
}

void tb_mirror_timing_stop(tb_mirror_timing_t *timing)
{
    tb_series_release(timing->last);
    tb_series_release(timing->observed);
    tb_series_release(timing->max);
    tb_series_release(timing->min);
    tb_series_release(timing->avg);
    *timing = (tb_mirror_timing_t){0};
}
