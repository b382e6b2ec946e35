#include "tb_test.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_metrics.h"

static const char *const connector_task[] = {"connector", "task", NULL};
static const char *const route_label[] = {"route", NULL};
static const double latency_buckets[] = {0.25, 1, 2.5};

static const tb_metric_def_t records_def = {
    .name = "tb_test_records_total",
    .type = TB_METRIC_COUNTER,
    .help = "Records moved.",
    .labels = connector_task,
};

static const tb_metric_def_t depth_def = {
    .name = "tb_test_queue_depth",
    .type = TB_METRIC_GAUGE,
    .help = "Records waiting.",
};

static const tb_metric_def_t latency_def = {
    .name = "tb_test_latency_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time to answer.",
    .labels = route_label,
    .buckets = latency_buckets,
    .bucket_count = 3,
};

static int reset(void **state)
{
    (void)state;
    tb_metrics_reset();
    tb_metrics_ms_names_set(false);
    return 0;
}

/* Asserts that the series page is exactly expected. */
static void assert_page(const char *expected)
{
    char *page = tb_metrics_render_series();
    assert_non_null(page);
    assert_string_equal(page, expected);
    free(page);
}

static tb_series_t *records(const char *connector, const char *task)
{
    const char *values[] = {connector, task};
    return tb_metrics_series(&records_def, values);
}

static tb_series_t *latency(const char *route)
{
    const char *values[] = {route};
    return tb_metrics_series(&latency_def, values);
}

static void test_empty_registry_renders_nothing(void **state)
{
    (void)state;
    assert_page("");
}

static void test_counter_gauge_histogram_render_exactly(void **state)
{
    (void)state;
    tb_series_t *b = records("b", "0");
    tb_series_t *a1 = records("a", "1");
    tb_series_t *a0 = records("a", "0");
    tb_series_t *depth = tb_metrics_series(&depth_def, NULL);
    tb_series_t *root = latency("/");
    tb_series_t *connectors = latency("/connectors");
    tb_series_add(b, 3);
    tb_series_add(a0, 2.5);
    tb_series_add(a0, 4);
    tb_series_set(depth, 7);
    tb_series_add(depth, -2);
    tb_series_observe(root, 0.125);
    tb_series_observe(root, 0.25); /* bounds are inclusive */
    tb_series_observe(root, 2);
    tb_series_observe(root, 4);
    assert_page("# HELP tb_test_latency_seconds Time to answer.\n"
                "# TYPE tb_test_latency_seconds histogram\n"
                "tb_test_latency_seconds_bucket{route=\"/\",le=\"0.25\"} 2\n"
                "tb_test_latency_seconds_bucket{route=\"/\",le=\"1\"} 2\n"
                "tb_test_latency_seconds_bucket{route=\"/\",le=\"2.5\"} 3\n"
                "tb_test_latency_seconds_bucket{route=\"/\",le=\"+Inf\"} 4\n"
                "tb_test_latency_seconds_sum{route=\"/\"} 6.375\n"
                "tb_test_latency_seconds_count{route=\"/\"} 4\n"
                "tb_test_latency_seconds_bucket{route=\"/connectors\",le=\"0.25\"} 0\n"
                "tb_test_latency_seconds_bucket{route=\"/connectors\",le=\"1\"} 0\n"
                "tb_test_latency_seconds_bucket{route=\"/connectors\",le=\"2.5\"} 0\n"
                "tb_test_latency_seconds_bucket{route=\"/connectors\",le=\"+Inf\"} 0\n"
                "tb_test_latency_seconds_sum{route=\"/connectors\"} 0\n"
                "tb_test_latency_seconds_count{route=\"/connectors\"} 0\n"
                "# HELP tb_test_queue_depth Records waiting.\n"
                "# TYPE tb_test_queue_depth gauge\n"
                "tb_test_queue_depth 5\n"
                "# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"a\",task=\"0\"} 6.5\n"
                "tb_test_records_total{connector=\"a\",task=\"1\"} 0\n"
                "tb_test_records_total{connector=\"b\",task=\"0\"} 3\n");
    tb_series_release(a0);
    tb_series_release(a1);
    tb_series_release(b);
    tb_series_release(depth);
    tb_series_release(root);
    tb_series_release(connectors);
    assert_page("");
}

/* count observations at once, and a batch of them gathered apart, render as
 * count observations one by one. */
static void test_observe_many_counts_each_observation(void **state)
{
    (void)state;
    tb_series_t *one_by_one = latency("/one");
    tb_series_t *at_once = latency("/many");
    tb_series_t *batched = latency("/batch");
    tb_observations_t batch = {0};
    for (int i = 0; i < 3; i++) {
        tb_series_observe(one_by_one, 0.5);
        tb_observations_add(&batch, &latency_def, 0.5);
    }
    tb_series_observe(one_by_one, 3);
    tb_observations_add(&batch, &latency_def, 3);
    tb_series_observe_many(at_once, 0.5, 3);
    tb_series_observe_many(at_once, 3, 1);
    tb_series_observe_many(at_once, 2, 0); /* nothing */
    tb_series_observe_many(NULL, 1, 2);
    tb_series_observe_batch(batched, &batch);
    assert_int_equal(batch.count, 0); /* emptied: published once */
    tb_series_observe_batch(batched, &batch);
    tb_series_observe_batch(NULL, &batch);
    char *page = tb_metrics_render_series();
    assert_non_null(page);
    /* each line of the histogram: name suffix, le label, value */
    const char *expected[][3] = {{"_bucket", ",le=\"0.25\"", "0"},
                                 {"_bucket", ",le=\"1\"", "3"},
                                 {"_bucket", ",le=\"2.5\"", "3"},
                                 {"_bucket", ",le=\"+Inf\"", "4"},
                                 {"_sum", "", "4.5"},
                                 {"_count", "", "4"}};
    const char *routes[] = {"/one", "/many", "/batch"};
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        for (size_t r = 0; r < 3; r++) {
            char line[160];
            snprintf(line, sizeof(line), "tb_test_latency_seconds%s{route=\"%s\"%s} %s\n",
                     expected[i][0], routes[r], expected[i][1], expected[i][2]);
            assert_non_null(strstr(page, line));
        }
    }
    free(page);
    tb_series_release(one_by_one);
    tb_series_release(at_once);
    tb_series_release(batched);
}

static void test_label_values_and_help_are_escaped(void **state)
{
    (void)state;
    static const tb_metric_def_t def = {
        .name = "tb_test_escaped",
        .type = TB_METRIC_GAUGE,
        .help = "A \"quoted\" back\\slash\nand a new line.",
        .labels = route_label,
    };
    const char *values[] = {"a\"b\\c\nd"};
    tb_series_t *series = tb_metrics_series(&def, values);
    assert_page("# HELP tb_test_escaped A \"quoted\" back\\\\slash\\nand a new line.\n"
                "# TYPE tb_test_escaped gauge\n"
                "tb_test_escaped{route=\"a\\\"b\\\\c\\nd\"} 0\n");
    tb_series_release(series);
}

static void test_numbers_are_spelled_the_prometheus_way(void **state)
{
    (void)state;
    static const char *const value_label[] = {"v", NULL};
    static const tb_metric_def_t def = {
        .name = "tb_test_number",
        .type = TB_METRIC_GAUGE,
        .help = "Numbers.",
        .labels = value_label,
    };
    const struct {
        const char *label;
        double value;
    } cases[] = {
        {"a", 0.1},       {"b", 1e21}, {"c", -0.5},    {"d", INFINITY},
        {"e", -INFINITY}, {"f", NAN},  {"g", 1.0 / 3}, {"h", 123456789},
    };
    tb_series_t *series[sizeof(cases) / sizeof(cases[0])];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *values[] = {cases[i].label};
        series[i] = tb_metrics_series(&def, values);
        tb_series_set(series[i], cases[i].value);
    }
    assert_page("# HELP tb_test_number Numbers.\n"
                "# TYPE tb_test_number gauge\n"
                "tb_test_number{v=\"a\"} 0.1\n"
                "tb_test_number{v=\"b\"} 1e+21\n"
                "tb_test_number{v=\"c\"} -0.5\n"
                "tb_test_number{v=\"d\"} +Inf\n"
                "tb_test_number{v=\"e\"} -Inf\n"
                "tb_test_number{v=\"f\"} NaN\n"
                "tb_test_number{v=\"g\"} 0.3333333333333333\n"
                "tb_test_number{v=\"h\"} 123456789\n");
    for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
        tb_series_release(series[i]);
    }
}

static void test_same_key_gives_same_handle(void **state)
{
    (void)state;
    tb_series_t *first = records("a", "0");
    tb_series_t *again = records("a", "0");
    tb_series_t *other = records("a", "1");
    assert_non_null(first);
    assert_ptr_equal(first, again);
    assert_ptr_not_equal(first, other);
    tb_series_release(other);
    tb_series_release(again);
    /* first still holds a reference */
    tb_series_add(first, 1);
    assert_page("# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"a\",task=\"0\"} 1\n");
    tb_series_release(first);
    assert_page("");
}

static void test_release_removes_the_series_then_the_family(void **state)
{
    (void)state;
    tb_series_t *a = records("a", "0");
    tb_series_t *b = records("b", "0");
    tb_series_add(b, 2);
    tb_series_release(a);
    assert_page("# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"b\",task=\"0\"} 2\n");
    tb_series_release(b);
    assert_page("");
    /* a new series of the same key starts from zero */
    b = records("b", "0");
    assert_page("# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"b\",task=\"0\"} 0\n");
    tb_series_release(b);
    tb_series_release(NULL);
}

/* Label value comparisons made to take one series of records_def that is
 * there already and one that is not, then to release that one. */
static size_t compares_for_one_take(const char *connector)
{
    size_t before = tb_metrics_label_compares();
    tb_series_t *old = records("held-0", "0");
    tb_series_t *fresh = records(connector, "0");
    assert_non_null(old);
    assert_non_null(fresh);
    tb_series_release(fresh);
    tb_series_release(old);
    return tb_metrics_label_compares() - before;
}

/* Issue 41: each connector takes tens of series; a take that compared the
 * new labels with every series of the family made creating the n-th
 * connector cost n. Counts comparisons, not time. */
static void test_take_and_release_cost_does_not_grow_with_series(void **state)
{
    (void)state;
    enum { FEW = 10, MANY = 20000 };
    tb_series_t **held = calloc(MANY, sizeof(held[0]));
    assert_non_null(held);
    char name[32];
    for (size_t i = 0; i < MANY; i++) {
        snprintf(name, sizeof(name), "held-%zu", i);
        held[i] = records(name, "0");
        assert_non_null(held[i]);
        if (i + 1 == FEW) {
            /* one compare finds the old series; the new one needs none */
            assert_true(compares_for_one_take("new-few") <= 2);
        }
    }
    assert_true(compares_for_one_take("new-many") <= 2);
    for (size_t i = 0; i < MANY; i++) {
        tb_series_release(held[i]);
    }
    free(held);
    assert_page("");
}

/* Series taken and released in any order render sorted by label values,
 * also after a render sorted the family and more came. */
static void test_series_render_sorted_whatever_order_they_came_in(void **state)
{
    (void)state;
    static const char *const names[] = {"m", "c", "x", "a", "q", "b", "z", "k"};
    enum { COUNT = sizeof(names) / sizeof(names[0]) };
    tb_series_t *series[COUNT];
    for (size_t i = 0; i < COUNT; i++) {
        series[i] = records(names[i], "0");
        assert_non_null(series[i]);
        tb_series_add(series[i], (double)i);
    }
    tb_series_release(series[2]); /* x */
    tb_series_release(series[3]); /* a */
    assert_page("# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"b\",task=\"0\"} 5\n"
                "tb_test_records_total{connector=\"c\",task=\"0\"} 1\n"
                "tb_test_records_total{connector=\"k\",task=\"0\"} 7\n"
                "tb_test_records_total{connector=\"m\",task=\"0\"} 0\n"
                "tb_test_records_total{connector=\"q\",task=\"0\"} 4\n"
                "tb_test_records_total{connector=\"z\",task=\"0\"} 6\n");
    series[2] = records("d", "1");
    series[3] = records("d", "0");
    tb_series_release(series[7]); /* k */
    tb_series_release(series[0]); /* m */
    assert_page("# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"b\",task=\"0\"} 5\n"
                "tb_test_records_total{connector=\"c\",task=\"0\"} 1\n"
                "tb_test_records_total{connector=\"d\",task=\"0\"} 0\n"
                "tb_test_records_total{connector=\"d\",task=\"1\"} 0\n"
                "tb_test_records_total{connector=\"q\",task=\"0\"} 4\n"
                "tb_test_records_total{connector=\"z\",task=\"0\"} 6\n");
    for (size_t i = 1; i < 7; i++) {
        tb_series_release(series[i]);
    }
    assert_page("");
}

static const char *const task_label[] = {"task", NULL};
static const tb_metric_def_t read_alias_def = {
    .name = "kafka_test_read_total",
    .type = TB_METRIC_COUNTER,
    .help = "Records read, another name.",
    .labels = task_label,
};
static const tb_metric_def_t depth_alias_def = {
    .name = "kafka_test_active_count",
    .type = TB_METRIC_UNTYPED,
    .help = "Records waiting, another name.",
};

static void test_alias_renders_its_sources_value_under_its_own_name(void **state)
{
    (void)state;
    tb_series_t *source = records("a", "0");
    const char *task[] = {"0"};
    tb_series_t *alias = tb_metrics_alias(&read_alias_def, task, source);
    tb_series_t *depth = tb_metrics_series(&depth_def, NULL);
    tb_series_t *active = tb_metrics_alias(&depth_alias_def, NULL, depth);
    tb_series_t *root = latency("/");
    assert_non_null(alias);
    assert_non_null(active);
    assert_null(tb_metrics_alias(&read_alias_def, task, NULL));
    assert_null(tb_metrics_alias(&latency_def, task, source));
    assert_null(tb_metrics_alias(&read_alias_def, task, root));
    tb_series_release(root);
    tb_series_add(source, 5);
    tb_series_set(depth, -2);
    tb_series_add(alias, 100); /* no visible effect */
    assert_page("# HELP kafka_test_active_count Records waiting, another name.\n"
                "# TYPE kafka_test_active_count untyped\n"
                "kafka_test_active_count -2\n"
                "# HELP kafka_test_read_total Records read, another name.\n"
                "# TYPE kafka_test_read_total counter\n"
                "kafka_test_read_total{task=\"0\"} 5\n"
                "# HELP tb_test_queue_depth Records waiting.\n"
                "# TYPE tb_test_queue_depth gauge\n"
                "tb_test_queue_depth -2\n"
                "# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"a\",task=\"0\"} 5\n");
    /* the alias keeps its source on the page; nothing keeps a released alias */
    tb_series_release(depth);
    tb_series_release(alias);
    assert_page("# HELP kafka_test_active_count Records waiting, another name.\n"
                "# TYPE kafka_test_active_count untyped\n"
                "kafka_test_active_count -2\n"
                "# HELP tb_test_queue_depth Records waiting.\n"
                "# TYPE tb_test_queue_depth gauge\n"
                "tb_test_queue_depth -2\n"
                "# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"a\",task=\"0\"} 5\n");
    tb_series_release(active);
    tb_series_release(source);
    assert_page("");
}

/* The windows' clock, set by the tests. */
static int64_t fake_now_ms;

static int64_t fake_clock(void)
{
    return fake_now_ms;
}

static int with_fake_clock(void **state)
{
    fake_now_ms = 0;
    tb_metrics_clock_set(fake_clock);
    return reset(state);
}

static int real_clock(void **state)
{
    tb_metrics_clock_set(NULL);
    return reset(state);
}

/* The value the series page shows for the sample line named name (with its
 * labels, if any); NaN's spelling comes back as NaN. */
static double page_value(const char *page, const char *name)
{
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "\n%s ", name);
    const char *line = strstr(page, prefix);
    assert_non_null(line);
    return strtod(line + strlen(prefix), NULL);
}

static double value_of(const char *name)
{
    char *page = tb_metrics_render_series();
    assert_non_null(page);
    double value = page_value(page, name);
    free(page);
    return value;
}

static const tb_metric_def_t windowed_def = {
    .name = "tb_test_windowed",
    .type = TB_METRIC_UNTYPED,
    .help = "A window.",
};
static const tb_metric_def_t max_latency_def = {
    .name = "tb_test_max_latency_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "Time to answer, with its maximum and minimum.",
    .buckets = latency_buckets,
    .bucket_count = 3,
    .keep_max = true,
    .keep_min = true,
};

static void test_rate_is_the_increase_per_second_over_the_last_minute(void **state)
{
    (void)state;
    tb_series_t *counter = records("a", "0");
    tb_series_t *rate = tb_metrics_window(
        &windowed_def, NULL, &(tb_window_t){.kind = TB_WINDOW_RATE, .a = counter});
    assert_non_null(rate);
    assert_null(tb_metrics_window(&windowed_def, NULL,
                                  &(tb_window_t){.kind = TB_WINDOW_RATE, .a = NULL}));
    tb_series_add(counter, 60);
    fake_now_ms = 10000; /* over at least 30 s, as in Kafka */
    assert_true(value_of("tb_test_windowed") == 2);
    fake_now_ms = 40000;
    assert_true(value_of("tb_test_windowed") == 1.5);
    fake_now_ms = 110000; /* nothing since 40 s: the reading then is the base */
    assert_true(value_of("tb_test_windowed") == 0);
    tb_series_add(counter, 90);
    fake_now_ms = 130000;
    assert_true(value_of("tb_test_windowed") == 1);
    tb_series_release(rate);
    tb_series_release(counter);
    assert_page("");
}

static void test_ratio_max_and_min_over_a_histogram(void **state)
{
    (void)state;
    tb_series_t *plain = latency("/");
    tb_series_t *timed = tb_metrics_series(&max_latency_def, NULL);
    const char *avg_label[] = {"avg"};
    const char *max_label[] = {"max"};
    const char *min_label[] = {"min"};
    static const char *const which[] = {"which", NULL};
    static const tb_metric_def_t labelled = {
        .name = "tb_test_windowed", .type = TB_METRIC_UNTYPED, .labels = which};
    tb_series_t *avg = tb_metrics_window(
        &labelled, avg_label,
        &(tb_window_t){.kind = TB_WINDOW_RATIO, .a = timed, .b = timed, .none = NAN});
    tb_series_t *max = tb_metrics_window(
        &labelled, max_label, &(tb_window_t){.kind = TB_WINDOW_MAX, .a = timed});
    tb_series_t *min = tb_metrics_window(
        &labelled, min_label, &(tb_window_t){.kind = TB_WINDOW_MIN, .a = timed});
    assert_non_null(avg);
    assert_non_null(max);
    assert_non_null(min);
    /* a maximum or minimum needs a histogram that keeps it */
    assert_null(tb_metrics_window(&labelled, max_label,
                                  &(tb_window_t){.kind = TB_WINDOW_MAX, .a = plain}));
    assert_null(tb_metrics_window(&labelled, min_label,
                                  &(tb_window_t){.kind = TB_WINDOW_MIN, .a = plain}));
    assert_true(isnan(value_of("tb_test_windowed{which=\"avg\"}")));
    assert_true(isnan(value_of("tb_test_windowed{which=\"max\"}")));
    assert_true(isnan(value_of("tb_test_windowed{which=\"min\"}")));
    tb_series_observe(timed, 1);
    tb_series_observe(timed, 3);
    assert_true(value_of("tb_test_windowed{which=\"avg\"}") == 2);
    assert_true(value_of("tb_test_windowed{which=\"max\"}") == 3);
    assert_true(value_of("tb_test_windowed{which=\"min\"}") == 1);
    fake_now_ms = 35000; /* the previous sample still counts */
    tb_series_observe(timed, 2);
    assert_true(value_of("tb_test_windowed{which=\"max\"}") == 3);
    assert_true(value_of("tb_test_windowed{which=\"min\"}") == 1);
    fake_now_ms = 65000;
    assert_true(value_of("tb_test_windowed{which=\"max\"}") == 2);
    assert_true(value_of("tb_test_windowed{which=\"min\"}") == 2);
    fake_now_ms = 95000;
    assert_true(isnan(value_of("tb_test_windowed{which=\"max\"}")));
    assert_true(isnan(value_of("tb_test_windowed{which=\"min\"}")));
    /* a batch's extremes are its smallest and largest, in the sample of its
     * publication */
    tb_observations_t batch = {0};
    tb_observations_add(&batch, &max_latency_def, 0.5);
    tb_observations_add(&batch, &max_latency_def, 4);
    tb_observations_add(&batch, &max_latency_def, 0.75);
    tb_series_observe_batch(timed, &batch);
    assert_true(value_of("tb_test_windowed{which=\"max\"}") == 4);
    assert_true(value_of("tb_test_windowed{which=\"min\"}") == 0.5);
    tb_series_release(plain);
    tb_series_release(avg);
    tb_series_release(max);
    tb_series_release(min);
    tb_series_release(timed);
    assert_page("");
}

/* A share counts outcomes, one update each, so a page rendered between a
 * commit's timing and its result never shows it half-counted. */
static void test_share_is_one_outcome_among_both_in_the_window(void **state)
{
    (void)state;
    tb_series_t *succeeded = records("a", "ok");
    tb_series_t *failed = records("a", "failed");
    tb_series_t *timed = tb_metrics_series(&max_latency_def, NULL);
    tb_series_t *share = tb_metrics_window(
        &windowed_def, NULL,
        &(tb_window_t){.kind = TB_WINDOW_SHARE, .a = succeeded, .b = failed});
    assert_non_null(share);
    /* the outcomes are counted, not observed */
    assert_null(tb_metrics_window(
        &windowed_def, NULL,
        &(tb_window_t){.kind = TB_WINDOW_SHARE, .a = succeeded, .b = timed}));
    assert_null(tb_metrics_window(
        &windowed_def, NULL, &(tb_window_t){.kind = TB_WINDOW_SHARE, .a = succeeded}));
    assert_true(value_of("tb_test_windowed") == 0); /* none yet */
    tb_series_observe(timed, 1); /* another count moving does not matter */
    tb_series_add(succeeded, 3);
    assert_true(value_of("tb_test_windowed") == 1);
    tb_series_add(failed, 1);
    assert_true(value_of("tb_test_windowed") == 0.75);
    fake_now_ms = 20000;
    assert_true(value_of("tb_test_windowed") == 0.75); /* a reading at 15 s or later */
    tb_series_add(succeeded, 4);
    fake_now_ms = 80000; /* the window starts at 20 s: four successes since */
    assert_true(value_of("tb_test_windowed") == 1);
    tb_series_release(share);
    tb_series_release(timed);
    tb_series_release(failed);
    tb_series_release(succeeded);
    assert_page("");
}

static void test_calls_that_do_not_fit_the_type_are_ignored(void **state)
{
    (void)state;
    static const double with_inf[] = {1, INFINITY};
    static const tb_metric_def_t explicit_inf = {
        .name = "tb_test_explicit_inf",
        .type = TB_METRIC_HISTOGRAM,
        .help = "Lists +Inf itself.",
        .buckets = with_inf,
        .bucket_count = 2,
    };
    tb_series_t *counter = records("a", "0");
    tb_series_t *histogram = tb_metrics_series(&explicit_inf, NULL);
    tb_series_add(counter, 2);
    tb_series_add(counter, -1);
    tb_series_add(counter, NAN);
    tb_series_observe(counter, 5);
    tb_series_add(histogram, 5);
    tb_series_set(histogram, 5);
    tb_series_observe(histogram, 3);
    tb_series_add(NULL, 1);
    tb_series_set(NULL, 1);
    tb_series_observe(NULL, 1);
    assert_page("# HELP tb_test_explicit_inf Lists +Inf itself.\n"
                "# TYPE tb_test_explicit_inf histogram\n"
                "tb_test_explicit_inf_bucket{le=\"1\"} 0\n"
                "tb_test_explicit_inf_bucket{le=\"+Inf\"} 1\n"
                "tb_test_explicit_inf_sum 3\n"
                "tb_test_explicit_inf_count 1\n"
                "# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"a\",task=\"0\"} 2\n");
    tb_series_release(counter);
    tb_series_release(histogram);
}

/* Counts the lines of page that start with prefix. */
static size_t count_lines(const char *page, const char *prefix)
{
    size_t n = 0;
    size_t len = strlen(prefix);
    for (const char *line = page; *line != '\0'; line = strchr(line, '\n') + 1) {
        if (strncmp(line, prefix, len) == 0) {
            n++;
        }
    }
    return n;
}

static void test_full_page_adds_process_and_build_metrics_in_name_order(void **state)
{
    (void)state;
    static const tb_metric_def_t early = {
        .name = "a_first",
        .type = TB_METRIC_GAUGE,
        .help = "Sorts first.",
    };
    tb_series_t *first = tb_metrics_series(&early, NULL);
    tb_series_t *last = records("a", "0");
    char *page = tb_metrics_render();
    assert_non_null(page);
    const char *names[] = {
        "# HELP a_first ",
        "# HELP process_cpu_seconds_total ",
        "# HELP process_max_fds ",
        "# HELP process_open_fds ",
        "# HELP process_resident_memory_bytes ",
        "# HELP process_start_time_seconds ",
        "# HELP process_virtual_memory_bytes ",
        "# HELP tb_test_records_total ",
        "# HELP tributary_build_info ",
        "# HELP tributary_uptime_seconds ",
    };
    const char *at = page;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *found = strstr(at, names[i]);
        assert_non_null(found);
        at = found;
        assert_int_equal(count_lines(page, names[i]), 1);
    }
    assert_int_equal(count_lines(page, "# TYPE tributary_build_info gauge\n"), 1);
    assert_int_equal(count_lines(page, "tributary_build_info{version=\""), 1);
    double resident = 0;
    const char *sample = strstr(page, "\nprocess_resident_memory_bytes ");
    assert_non_null(sample);
    assert_int_equal(sscanf(sample, " process_resident_memory_bytes %lf", &resident), 1);
    assert_true(resident > 0);
    free(page);
    tb_series_release(first);
    tb_series_release(last);
}

#define THREADS 4
#define ADDS 100000

static void *add_many(void *arg)
{
    (void)arg;
    tb_series_t *counter = records("shared", "0");
    tb_series_t *histogram = latency("/shared");
    for (int i = 0; i < ADDS; i++) {
        tb_series_add(counter, 1);
        tb_series_observe(histogram, (double)(i % 4));
    }
    tb_series_release(counter);
    tb_series_release(histogram);
    return NULL;
}

static void test_concurrent_updates_sum_exactly(void **state)
{
    (void)state;
    pthread_t threads[THREADS];
    /* held here so the series outlive every thread's own reference */
    tb_series_t *counter = records("shared", "0");
    tb_series_t *histogram = latency("/shared");
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_create(&threads[i], NULL, add_many, NULL), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
    }
    /* each thread observed 0, 1, 2, 3 ADDS / 4 times each: 6 * ADDS / 4 */
    assert_page("# HELP tb_test_latency_seconds Time to answer.\n"
                "# TYPE tb_test_latency_seconds histogram\n"
                "tb_test_latency_seconds_bucket{route=\"/shared\",le=\"0.25\"} 100000\n"
                "tb_test_latency_seconds_bucket{route=\"/shared\",le=\"1\"} 200000\n"
                "tb_test_latency_seconds_bucket{route=\"/shared\",le=\"2.5\"} 300000\n"
                "tb_test_latency_seconds_bucket{route=\"/shared\",le=\"+Inf\"} 400000\n"
                "tb_test_latency_seconds_sum{route=\"/shared\"} 600000\n"
                "tb_test_latency_seconds_count{route=\"/shared\"} 400000\n"
                "# HELP tb_test_records_total Records moved.\n"
                "# TYPE tb_test_records_total counter\n"
                "tb_test_records_total{connector=\"shared\",task=\"0\"} 400000\n");
    tb_series_release(counter);
    tb_series_release(histogram);
}

#define CHURN_ROUNDS 2000
#define CHURN_KEYS 8

/* Thread bodies count their failures: cmocka's asserts belong to the main
 * thread. */
static void *churn(void *arg)
{
    int *seed_then_failures = arg;
    int seed = *seed_then_failures;
    char task[16];
    *seed_then_failures = 0;
    for (int i = 0; i < CHURN_ROUNDS; i++) {
        snprintf(task, sizeof(task), "%d", (seed + i) % CHURN_KEYS);
        tb_series_t *counter = records("churn", task);
        tb_series_t *histogram = latency(task);
        *seed_then_failures += counter == NULL || histogram == NULL;
        tb_series_add(counter, 1);
        tb_series_observe(histogram, i % 3);
        tb_series_release(counter);
        tb_series_release(histogram);
    }
    return NULL;
}

static void *render_many(void *arg)
{
    int *failures = arg;
    for (int i = 0; i < CHURN_ROUNDS / 10; i++) {
        char *page = i % 2 == 0 ? tb_metrics_render() : tb_metrics_render_series();
        *failures += page == NULL;
        free(page);
    }
    return NULL;
}

static void test_create_release_render_concurrently(void **state)
{
    (void)state;
    pthread_t churners[THREADS];
    pthread_t renderer;
    int seeds[THREADS];
    int render_failures = 0;
    assert_int_equal(pthread_create(&renderer, NULL, render_many, &render_failures), 0);
    for (int i = 0; i < THREADS; i++) {
        seeds[i] = i;
        assert_int_equal(pthread_create(&churners[i], NULL, churn, &seeds[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(churners[i], NULL);
        assert_int_equal(seeds[i], 0);
    }
    pthread_join(renderer, NULL);
    assert_int_equal(render_failures, 0);
    assert_page("");
}

/* A time_share series shows the share of its life it spent set non-zero,
 * whatever the renders, and so does an alias of it; adds do nothing. */
static void test_time_share_is_the_share_of_life_spent_on(void **state)
{
    (void)state;
    static const tb_metric_def_t share_def = {
        .name = "tb_test_running_ratio",
        .type = TB_METRIC_UNTYPED,
        .help = "Time running.",
        .time_share = true,
    };
    static const tb_metric_def_t alias_def = {
        .name = "tb_test_running_ratio_alias",
        .type = TB_METRIC_UNTYPED,
        .help = "The same.",
    };
    fake_now_ms = 1000;
    tb_series_t *share = tb_metrics_series(&share_def, NULL);
    tb_series_t *alias = tb_metrics_alias(&alias_def, NULL, share);
    assert_true(value_of("tb_test_running_ratio") == 0);
    fake_now_ms = 2000; /* off for 1 s, then on for 3 s */
    tb_series_set(share, 1);
    tb_series_set(share, 1); /* already on: no change */
    fake_now_ms = 5000;
    assert_true(value_of("tb_test_running_ratio") == 0.75);
    assert_true(value_of("tb_test_running_ratio_alias") == 0.75);
    tb_series_set(share, 0); /* then off for 4 s */
    tb_series_add(share, 5);
    fake_now_ms = 9000;
    assert_true(value_of("tb_test_running_ratio") == 3.0 / 8);
    tb_series_set(share, 2); /* any non-zero value is on: on for 8 s more */
    fake_now_ms = 17000;
    assert_true(value_of("tb_test_running_ratio") == 11.0 / 16);
    tb_series_release(alias);
    tb_series_release(share);
    assert_page("");
}

/* An ms_name family is served under its _ms name too, in ms, only while
 * the ms names are on; a window shows one value under both names, however
 * many readings it keeps. */
static void test_ms_name_serves_a_seconds_family_in_ms_when_on(void **state)
{
    (void)state;
    static const tb_metric_def_t time_def = {
        .name = "tb_test_time_seconds",
        .type = TB_METRIC_UNTYPED,
        .help = "A time.",
        .ms_name = true,
    };
    static const tb_metric_def_t avg_def = {
        .name = "tb_test_avg_time_seconds",
        .type = TB_METRIC_UNTYPED,
        .help = "A mean time.",
        .ms_name = true,
    };
    static const tb_metric_def_t max_def = {
        .name = "tb_test_time_seconds_max", /* as MM2 names a -max */
        .type = TB_METRIC_UNTYPED,
        .help = "A longest time.",
        .ms_name = true,
    };
    tb_series_t *time = tb_metrics_series(&time_def, NULL);
    tb_series_set(time, 0.25);
    assert_page("# HELP tb_test_time_seconds A time.\n"
                "# TYPE tb_test_time_seconds untyped\n"
                "tb_test_time_seconds 0.25\n");
    tb_metrics_ms_names_set(true);
    assert_page("# HELP tb_test_time_ms A time.\n"
                "# TYPE tb_test_time_ms untyped\n"
                "tb_test_time_ms 250\n"
                "# HELP tb_test_time_seconds A time.\n"
                "# TYPE tb_test_time_seconds untyped\n"
                "tb_test_time_seconds 0.25\n");
    tb_series_t *timed = tb_metrics_series(&max_latency_def, NULL);
    tb_series_t *avg = tb_metrics_window(
        &avg_def, NULL,
        &(tb_window_t){.kind = TB_WINDOW_RATIO, .a = timed, .b = timed, .none = NAN});
    tb_series_t *max = tb_metrics_window(
        &max_def, NULL, &(tb_window_t){.kind = TB_WINDOW_MAX, .a = timed});
    for (int step = 1; step <= 12; step++) {
        fake_now_ms = step * 15000;
        tb_series_observe(timed, step);
        char *page = tb_metrics_render_series();
        assert_non_null(page);
        double seconds = page_value(page, "tb_test_avg_time_seconds");
        assert_true(seconds > 0);
        assert_true(page_value(page, "tb_test_avg_time_ms") == seconds * 1000);
        assert_true(page_value(page, "tb_test_time_seconds_max") == step);
        assert_true(page_value(page, "tb_test_time_ms_max") == step * 1000);
        free(page);
    }
    tb_metrics_ms_names_set(false);
    char *page = tb_metrics_render_series();
    assert_non_null(page);
    assert_null(strstr(page, "_ms"));
    free(page);
    tb_series_release(avg);
    tb_series_release(max);
    tb_series_release(timed);
    tb_series_release(time);
    assert_page("");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_empty_registry_renders_nothing, reset),
        cmocka_unit_test_setup(test_counter_gauge_histogram_render_exactly, reset),
        cmocka_unit_test_setup(test_observe_many_counts_each_observation, reset),
        cmocka_unit_test_setup(test_label_values_and_help_are_escaped, reset),
        cmocka_unit_test_setup(test_numbers_are_spelled_the_prometheus_way, reset),
        cmocka_unit_test_setup(test_same_key_gives_same_handle, reset),
        cmocka_unit_test_setup(test_release_removes_the_series_then_the_family, reset),
        cmocka_unit_test_setup(test_take_and_release_cost_does_not_grow_with_series,
                               reset),
        cmocka_unit_test_setup(test_series_render_sorted_whatever_order_they_came_in,
                               reset),
        cmocka_unit_test_setup(test_calls_that_do_not_fit_the_type_are_ignored, reset),
        cmocka_unit_test_setup_teardown(
            test_rate_is_the_increase_per_second_over_the_last_minute, with_fake_clock,
            real_clock),
        cmocka_unit_test_setup_teardown(test_ratio_max_and_min_over_a_histogram,
                                        with_fake_clock, real_clock),
        cmocka_unit_test_setup_teardown(
            test_share_is_one_outcome_among_both_in_the_window, with_fake_clock,
            real_clock),
        cmocka_unit_test_setup(test_alias_renders_its_sources_value_under_its_own_name,
                               reset),
        cmocka_unit_test_setup_teardown(test_time_share_is_the_share_of_life_spent_on,
                                        with_fake_clock, real_clock),
        cmocka_unit_test_setup_teardown(
            test_ms_name_serves_a_seconds_family_in_ms_when_on, with_fake_clock,
            real_clock),
        cmocka_unit_test_setup(
            test_full_page_adds_process_and_build_metrics_in_name_order, reset),
        cmocka_unit_test_setup(test_concurrent_updates_sum_exactly, reset),
        cmocka_unit_test_setup(test_create_release_render_concurrently, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
