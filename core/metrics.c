/*
 * metrics.c - the registry of metric series and its Prometheus text page.
 *
 * Values. A counter's or gauge's value, and a histogram's sum, is a double
 * kept as its 64-bit pattern in an _Atomic uint64_t: set is one atomic
 * store, add a compare-exchange loop on the pattern. Doubles rather than
 * scaled integers because values come in every unit and magnitude (bytes,
 * seconds, ratios): a fixed scale would round small fractions away or
 * overflow large totals, while a double stays exact for integer counts up
 * to 2^53. A histogram counts observations per bucket (not cumulated) in
 * atomic integers; its _count is the total of its buckets, added up while
 * rendering, so the +Inf bucket and _count always agree even while
 * observations race with the render. Relaxed ordering suffices: each value
 * stands alone, and a series is published to its updaters through the
 * registry mutex.
 *
 * The registry. Families form a list sorted by name, each holding its
 * series in a hash table by label values and in a list that a render sorts
 * by them when a series came since the last, behind one mutex that
 * tb_metrics_series(), tb_series_release() and rendering take - updaters
 * never do. Finding, adding or dropping a series costs the same with ten
 * series in its family as with ten thousand: each connector and task
 * takes some tens of series, and a sorted list walked on every take made
 * creating connectors slow down as they grew (issue 41; a render's sort
 * is n log n, and only after a change). The reference count of a series
 * changes under that mutex; the last release unlinks and
 * frees the series, and its family when it was the family's last. Rendering
 * holds the mutex while it walks and formats, so it can never read a freed
 * series. The price is that creating or releasing a series waits for a
 * render in progress (some 7 ms for a thousand series, half of them
 * histograms); that happens when tasks start and stop, never per record. A
 * retire list would avoid the wait but needs epochs or hazard pointers to
 * know when a retired series is no longer read: not worth it for this.
 *
 * Aliases. An alias is a series of its own family whose value is read, at
 * render time, from the series it holds a reference on, so the page can
 * carry a second name for a value without a second update per record.
 *
 * Windows. A windowed series is an alias that keeps readings of its sources
 * taken at renders (at most one per quarter of the window, under the
 * registry mutex that rendering holds) and shows the change since the
 * oldest reading still in the window: a rate or a ratio over the last
 * minute, with no cost to the updaters. The reading taken when it is
 * created is its first, so the first scrape already has a baseline. A
 * maximum cannot be made from readings: a histogram whose def keeps_max
 * also keeps, per 30 s sample, its largest observation (one atomic
 * maximum per observation), and TB_WINDOW_MAX shows the larger of the
 * current and the previous sample's, as Kafka's Max does; keep_min and
 * TB_WINDOW_MIN the same for the smallest, as Kafka's Min.
 */
#include "core/tb_metrics.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/tb_time.h"
#include "tb_version.h"

/* Kafka's sampled statistics: two samples of 30 s. */
#define SAMPLE_MS 30000
#define WINDOW_MS (2 * SAMPLE_MS)
/* Readings a window keeps: one per WINDOW_MS / (READINGS - 2) at most, plus
 * the one before the window that the change is measured from. */
#define READINGS 6

typedef struct {
    int64_t at_ms;
    double a, b;
} reading_t;

typedef struct {
    tb_window_kind_t kind;
    tb_series_t *b; /* a is the series' source; one reference each */
    double none;
    reading_t readings[READINGS]; /* oldest first */
    size_t reading_count;
} window_t;

/* A histogram's largest or smallest observation per sample (a double's
 * bits), and the sample each slot holds (its start / SAMPLE_MS). */
typedef struct {
    _Atomic uint64_t bits[2];
    _Atomic int64_t sample[2];
} extreme_t;

typedef struct family {
    const tb_metric_def_t *def; /* the first definition seen of this name */
    size_t label_count;
    size_t bound_count; /* a histogram's finite bucket bounds */
    /* Never empty when linked; sorted by label values when sorted is set
     * (a new series goes first and clears it, a render sorts). */
    tb_series_t *series;
    bool sorted;
    tb_series_t **buckets; /* bucket_count chains through series->chain */
    size_t bucket_count;   /* a power of two; 0 before the first series */
    size_t series_count;
    struct family *next;
} family_t;

struct tb_series {
    family_t *family;
    tb_series_t *next, *prev; /* in family->series */
    tb_series_t *chain;       /* the next in its hash bucket */
    uint64_t hash;            /* of its label values */
    size_t refs;              /* under registry_lock */
    char **values;            /* label_count copies */
    /* An alias's: the series its value is read from (one reference held);
     * NULL for a series with a value of its own. */
    tb_series_t *source;
    window_t *window;   /* a windowed series' (its a is source); else NULL */
    int64_t created_ms; /* when it was made, by the metrics clock */
    /* A counter's or gauge's value, a histogram's sum: a double's bits. */
    _Atomic uint64_t value;
    extreme_t max; /* a keep_max histogram's */
    extreme_t min; /* a keep_min histogram's */
    /* A histogram's observations per finite bound, then over the last. */
    _Atomic uint64_t counts[];
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static family_t *families;    /* sorted by name */
static size_t label_compares; /* under registry_lock */
static int64_t (*_Atomic clock_ms)(void) = tb_monotonic_ms;
static atomic_bool ms_names;

void tb_metrics_clock_set(int64_t (*clock)(void))
{
    atomic_store(&clock_ms, clock != NULL ? clock : tb_monotonic_ms);
}

static const char *const type_names[] = {
    [TB_METRIC_COUNTER] = "counter",
    [TB_METRIC_GAUGE] = "gauge",
    [TB_METRIC_HISTOGRAM] = "histogram",
    [TB_METRIC_UNTYPED] = "untyped",
};

/* ---- values ---- */

static uint64_t double_bits(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    return bits;
}

static double bits_double(uint64_t bits)
{
    double value;
    memcpy(&value, &bits, sizeof(value));
    return value;
}

static double atomic_double_load(_Atomic uint64_t *cell)
{
    return bits_double(atomic_load_explicit(cell, memory_order_relaxed));
}

/* A time_share series' value: ON_BIT while on, and in the other bits the
 * ms spent on when off, or when on the time it was turned on less the ms
 * spent on before; so both turns store now less the other bits. */
#define ON_BIT (UINT64_C(1) << 63)

static void time_share_set(tb_series_t *series, bool on)
{
    int64_t now_ms = atomic_load(&clock_ms)();
    uint64_t seen = atomic_load_explicit(&series->value, memory_order_relaxed);
    uint64_t next;
    do {
        if (((seen & ON_BIT) != 0) == on) {
            return;
        }
        next = (uint64_t)(now_ms - (int64_t)(seen & ~ON_BIT)) | (on ? ON_BIT : 0);
    } while (!atomic_compare_exchange_weak_explicit(
        &series->value, &seen, next, memory_order_relaxed, memory_order_relaxed));
}

static double time_share_value(tb_series_t *series, int64_t now_ms)
{
    uint64_t seen = atomic_load_explicit(&series->value, memory_order_relaxed);
    int64_t bits = (int64_t)(seen & ~ON_BIT);
    int64_t spent = (seen & ON_BIT) != 0 ? now_ms - bits : bits;
    int64_t life = now_ms - series->created_ms;
    return life > 0 ? (double)spent / (double)life : 0;
}

static void atomic_double_add(_Atomic uint64_t *cell, double amount)
{
    uint64_t seen = atomic_load_explicit(cell, memory_order_relaxed);
    /* On failure seen is reloaded, and the sum recomputed from it. */
    while (!atomic_compare_exchange_weak_explicit(
        cell, &seen, double_bits(bits_double(seen) + amount), memory_order_relaxed,
        memory_order_relaxed)) {
    }
}

void tb_series_add(tb_series_t *series, double amount)
{
    if (series == NULL) {
        return;
    }
    tb_metric_type_t type = series->family->def->type;
    /* A counter never goes down; !(amount >= 0) also refuses NaN. */
    if (type == TB_METRIC_HISTOGRAM || series->family->def->time_share ||
        (type == TB_METRIC_COUNTER && !(amount >= 0))) {
        return;
    }
    atomic_double_add(&series->value, amount);
}

void tb_series_set(tb_series_t *series, double value)
{
    if (series == NULL || series->family->def->type == TB_METRIC_HISTOGRAM) {
        return;
    }
    if (series->family->def->time_share) {
        time_share_set(series, value != 0);
        return;
    }
    atomic_store_explicit(&series->value, double_bits(value), memory_order_relaxed);
}

/* Whether value goes past kept: above it for a maximum, below for a
 * minimum. */
static bool beyond(double value, double kept, bool largest)
{
    return largest ? value > kept : value < kept;
}

/* Folds value into the maximum (largest) or minimum of sample, starting the
 * sample over when its slot still holds the one two samples back.
 * Concurrent observers of one series may lose one value at a sample's
 * start; a task observes its series from one thread at a time. */
static void keep_extreme(extreme_t *extreme, double value, int64_t sample, bool largest)
{
    size_t slot = (size_t)(sample & 1);
    if (atomic_load_explicit(&extreme->sample[slot], memory_order_relaxed) != sample) {
        atomic_store_explicit(&extreme->bits[slot], double_bits(value),
                              memory_order_relaxed);
        atomic_store_explicit(&extreme->sample[slot], sample, memory_order_relaxed);
        return;
    }
    uint64_t seen = atomic_load_explicit(&extreme->bits[slot], memory_order_relaxed);
    while (beyond(value, bits_double(seen), largest) &&
           !atomic_compare_exchange_weak_explicit(
               &extreme->bits[slot], &seen, double_bits(value), memory_order_relaxed,
               memory_order_relaxed)) {
    }
}

void tb_series_observe(tb_series_t *series, double value)
{
    tb_series_observe_many(series, value, 1);
}

/* The bucket of value among a histogram's bound_count finite bounds:
 * upper bounds are inclusive; NaN lands in the +Inf bucket (bound_count). */
static size_t bucket_of(const double *bounds, size_t bound_count, double value)
{
    size_t bucket = 0;
    while (bucket < bound_count && !(value <= bounds[bucket])) {
        bucket++;
    }
    return bucket;
}

/* Folds the smallest and largest of observations just counted into the
 * extremes a keep_max or keep_min histogram keeps: one clock read. */
static void keep_extremes(tb_series_t *series, double min, double max)
{
    const tb_metric_def_t *def = series->family->def;
    if (def->keep_max || def->keep_min) {
        int64_t sample = atomic_load(&clock_ms)() / SAMPLE_MS;
        if (def->keep_max) {
            keep_extreme(&series->max, max, sample, true);
        }
        if (def->keep_min) {
            keep_extreme(&series->min, min, sample, false);
        }
    }
}

void tb_series_observe_many(tb_series_t *series, double value, uint64_t count)
{
    if (series == NULL || series->family->def->type != TB_METRIC_HISTOGRAM ||
        count == 0) {
        return;
    }
    const family_t *family = series->family;
    size_t bucket = bucket_of(family->def->buckets, family->bound_count, value);
    atomic_fetch_add_explicit(&series->counts[bucket], count, memory_order_relaxed);
    atomic_double_add(&series->value, value * (double)count);
    keep_extremes(series, value, value);
}

static size_t finite_bounds(const tb_metric_def_t *def);

void tb_observations_add(tb_observations_t *batch, const tb_metric_def_t *def,
                         double value)
{
    size_t bounds = finite_bounds(def);
    if (bounds > TB_OBSERVATIONS_BOUNDS) {
        bounds = TB_OBSERVATIONS_BOUNDS; /* refused by tb_series_observe_batch */
    }
    batch->counts[bucket_of(def->buckets, bounds, value)]++;
    batch->sum += value;
    if (batch->count == 0 || value < batch->min) {
        batch->min = value;
    }
    if (batch->count == 0 || value > batch->max) {
        batch->max = value;
    }
    batch->count++;
}

void tb_series_observe_batch(tb_series_t *series, tb_observations_t *batch)
{
    if (series != NULL && series->family->def->type == TB_METRIC_HISTOGRAM &&
        batch->count > 0 && series->family->bound_count <= TB_OBSERVATIONS_BOUNDS) {
        for (size_t i = 0; i <= series->family->bound_count; i++) {
            if (batch->counts[i] > 0) {
                atomic_fetch_add_explicit(&series->counts[i], batch->counts[i],
                                          memory_order_relaxed);
            }
        }
        atomic_double_add(&series->value, batch->sum);
        keep_extremes(series, batch->min, batch->max);
    }
    memset(batch, 0, sizeof(*batch));
}

/* ---- the registry ---- */

static size_t count_labels(const tb_metric_def_t *def)
{
    size_t n = 0;
    while (def->labels != NULL && def->labels[n] != NULL) {
        n++;
    }
    return n;
}

/* A histogram's bounds without a trailing +Inf: that bucket always exists. */
static size_t finite_bounds(const tb_metric_def_t *def)
{
    size_t n = def->type == TB_METRIC_HISTOGRAM ? def->bucket_count : 0;
    if (n > 0 && isinf(def->buckets[n - 1])) {
        n--;
    }
    return n;
}

/* The link that holds, or would hold, the family called name. Call locked. */
static family_t **family_link(const char *name)
{
    family_t **link = &families;
    while (*link != NULL && strcmp((*link)->def->name, name) < 0) {
        link = &(*link)->next;
    }
    return link;
}

static int compare_values(char *const *stored, const char *const *values, size_t n)
{
    label_compares++;
    for (size_t i = 0; i < n; i++) {
        int order = strcmp(stored[i], values[i]);
        if (order != 0) {
            return order;
        }
    }
    return 0;
}

/* FNV-1a over the values, each with its terminating NUL so that ("ab", "")
 * and ("a", "b") differ. */
static uint64_t hash_values(const char *const *values, size_t n)
{
    uint64_t hash = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *at = (const unsigned char *)values[i];
        do {
            hash = (hash ^ *at) * UINT64_C(1099511628211);
        } while (*at++ != '\0');
    }
    return hash;
}

/* The series of family with values (of that hash), or NULL. Call locked. */
static tb_series_t *series_find(const family_t *family, const char *const *values,
                                uint64_t hash)
{
    if (family->bucket_count == 0) {
        return NULL;
    }
    tb_series_t *series = family->buckets[hash & (family->bucket_count - 1)];
    while (series != NULL &&
           (series->hash != hash ||
            compare_values(series->values, values, family->label_count) != 0)) {
        series = series->chain;
    }
    return series;
}

/* Makes room in family's table for one more series, doubling it at one
 * series per bucket; false on no memory for a first table (a full one
 * still works, with longer chains). Call locked. */
static bool buckets_reserve(family_t *family)
{
    if (family->series_count < family->bucket_count) {
        return true;
    }
    size_t count = family->bucket_count != 0 ? 2 * family->bucket_count : 8;
    tb_series_t **buckets = calloc(count, sizeof(buckets[0]));
    if (buckets == NULL) {
        return family->bucket_count != 0;
    }
    for (tb_series_t *series = family->series; series != NULL; series = series->next) {
        size_t at = series->hash & (count - 1);
        series->chain = buckets[at];
        buckets[at] = series;
    }
    free(family->buckets);
    family->buckets = buckets;
    family->bucket_count = count;
    return true;
}

/* Links series into family's table (room reserved) and at the head of its
 * list, which is then no longer known sorted. Call locked. */
static void series_link(family_t *family, tb_series_t *series)
{
    tb_series_t **bucket = &family->buckets[series->hash & (family->bucket_count - 1)];
    series->chain = *bucket;
    *bucket = series;
    series->prev = NULL;
    series->next = family->series;
    if (family->series != NULL) {
        family->series->prev = series;
    }
    family->series = series;
    family->series_count++;
    family->sorted = false;
}

/* Unlinks series from family's table and list. Call locked. */
static void series_unlink(family_t *family, tb_series_t *series)
{
    tb_series_t **link = &family->buckets[series->hash & (family->bucket_count - 1)];
    while (*link != series) {
        link = &(*link)->chain;
    }
    *link = series->chain;
    if (series->prev != NULL) {
        series->prev->next = series->next;
    } else {
        family->series = series->next;
    }
    if (series->next != NULL) {
        series->next->prev = series->prev;
    }
    family->series_count--;
}

/* Sorts family's list by label values: a bottom-up merge sort of runs of
 * width 1, 2, 4, ... (n log n compares, no memory), then the prev links
 * set again. Call locked. */
static void family_sort(family_t *family)
{
    if (family->sorted) {
        return;
    }
    tb_series_t *list = family->series;
    for (size_t width = 1;; width *= 2) {
        tb_series_t *merged = NULL;
        tb_series_t **tail = &merged;
        size_t merges = 0;
        while (list != NULL) {
            tb_series_t *a = list;
            tb_series_t *b = list;
            size_t a_left = 0;
            while (b != NULL && a_left < width) {
                b = b->next;
                a_left++;
            }
            size_t b_left = width;
            while (a_left > 0 || (b_left > 0 && b != NULL)) {
                bool take_a = a_left > 0 &&
                              (b_left == 0 || b == NULL ||
                               compare_values(a->values, (const char *const *)b->values,
                                              family->label_count) <= 0);
                tb_series_t *taken;
                if (take_a) {
                    taken = a;
                    a = a->next;
                    a_left--;
                } else {
                    taken = b;
                    b = b->next;
                    b_left--;
                }
                *tail = taken;
                tail = &taken->next;
            }
            list = b;
            merges++;
        }
        *tail = NULL;
        list = merged;
        if (merges <= 1) {
            break;
        }
    }
    family->series = list;
    for (tb_series_t *series = list, *prev = NULL; series != NULL;
         prev = series, series = series->next) {
        series->prev = prev;
    }
    family->sorted = true;
}

size_t tb_metrics_label_compares(void)
{
    pthread_mutex_lock(&registry_lock);
    size_t count = label_compares;
    pthread_mutex_unlock(&registry_lock);
    return count;
}

static void series_unref(tb_series_t *series);

/* Frees an unlinked series, also one series_create() left half built, and
 * drops the reference an alias holds on its source. Call locked. */
static void series_free(tb_series_t *series)
{
    if (series->source != NULL) {
        series_unref(series->source);
    }
    if (series->window != NULL && series->window->b != NULL) {
        series_unref(series->window->b);
    }
    free(series->window);
    for (size_t i = 0; series->values != NULL && i < series->family->label_count; i++) {
        free(series->values[i]);
    }
    free(series->values);
    free(series);
}

static tb_series_t *series_create(family_t *family, const char *const *values)
{
    size_t slots = family->def->type == TB_METRIC_HISTOGRAM ? family->bound_count + 1 : 0;
    tb_series_t *series = calloc(1, sizeof(*series) + slots * sizeof(series->counts[0]));
    if (series == NULL) {
        return NULL;
    }
    series->family = family;
    series->refs = 1;
    series->created_ms = atomic_load(&clock_ms)();
    /* 0.0's bits are 0: a time_share series starts off, 0 ms spent on */
    atomic_init(&series->value, double_bits(0.0));
    for (size_t i = 0; i < 2; i++) {
        atomic_init(&series->max.bits[i], double_bits(NAN));
        atomic_init(&series->max.sample[i], INT64_MIN);
        atomic_init(&series->min.bits[i], double_bits(NAN));
        atomic_init(&series->min.sample[i], INT64_MIN);
    }
    for (size_t i = 0; i < slots; i++) {
        atomic_init(&series->counts[i], 0);
    }
    /* One more slot than labels, so that no labels is not calloc(0). */
    series->values = calloc(family->label_count + 1, sizeof(series->values[0]));
    if (series->values == NULL) {
        goto fail;
    }
    for (size_t i = 0; i < family->label_count; i++) {
        series->values[i] = strdup(values[i]);
        if (series->values[i] == NULL) {
            goto fail;
        }
    }
    return series;

fail:
    series_free(series);
    return NULL;
}

/* The family of def's name, linked in, created if needed; NULL on no
 * memory. Call locked. */
static family_t *family_acquire(const tb_metric_def_t *def)
{
    family_t **link = family_link(def->name);
    if (*link != NULL && strcmp((*link)->def->name, def->name) == 0) {
        return *link;
    }
    family_t *family = calloc(1, sizeof(*family));
    if (family == NULL) {
        return NULL;
    }
    family->def = def;
    family->label_count = count_labels(def);
    family->bound_count = finite_bounds(def);
    family->next = *link;
    *link = family;
    return family;
}

/* Unlinks and frees a family that has no series left. Call locked. */
static void family_remove(family_t *family)
{
    *family_link(family->def->name) = family->next;
    free(family->buckets);
    free(family);
}

/* The series of family with values, with one more reference, linked in
 * and created if needed; NULL on no memory. Call locked. */
static tb_series_t *series_acquire(family_t *family, const char *const *values)
{
    uint64_t hash = hash_values(values, family->label_count);
    tb_series_t *series = series_find(family, values, hash);
    if (series != NULL) {
        series->refs++;
        return series;
    }
    if (!buckets_reserve(family)) {
        return NULL;
    }
    series = series_create(family, values);
    if (series != NULL) {
        series->hash = hash;
        series_link(family, series);
    }
    return series;
}

/* The series of def with values, with one more reference, created (and
 * its family) if needed; NULL on no memory. Call locked. */
static tb_series_t *series_take(const tb_metric_def_t *def, const char *const *values)
{
    tb_series_t *series = NULL;
    family_t *family = family_acquire(def);
    if (family != NULL) {
        series = series_acquire(family, values);
        /* A family made for a series that could not be made. */
        if (family->series == NULL) {
            family_remove(family);
        }
    }
    return series;
}

tb_series_t *tb_metrics_series(const tb_metric_def_t *def, const char *const *values)
{
    pthread_mutex_lock(&registry_lock);
    tb_series_t *series = series_take(def, values);
    pthread_mutex_unlock(&registry_lock);
    return series;
}

/* Drops one reference; the last unlinks and frees the series, and its
 * family when it was the family's last. Call locked. */
static void series_unref(tb_series_t *series)
{
    if (--series->refs == 0) {
        family_t *family = series->family;
        series_unlink(family, series);
        series_free(series);
        if (family->series == NULL) {
            family_remove(family);
        }
    }
}

tb_series_t *tb_metrics_alias(const tb_metric_def_t *def, const char *const *values,
                              tb_series_t *source)
{
    if (source == NULL || def->type == TB_METRIC_HISTOGRAM ||
        source->family->def->type == TB_METRIC_HISTOGRAM) {
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    /* Under the lock throughout, so no render sees an alias without its
     * source; a second take of the same alias finds its source set. */
    tb_series_t *alias = series_take(def, values);
    if (alias != NULL && alias->source == NULL) {
        source->refs++;
        alias->source = source;
    }
    pthread_mutex_unlock(&registry_lock);
    return alias;
}

static reading_t take_reading(const window_t *window, tb_series_t *a, int64_t now_ms);

/* Whether window's sources fit its kind. */
static bool window_fits(const tb_window_t *window)
{
    const tb_metric_def_t *a = window->a != NULL ? window->a->family->def : NULL;
    switch (window->kind) {
    case TB_WINDOW_RATE:
        return a != NULL;
    case TB_WINDOW_RATIO:
        return a != NULL && window->b != NULL;
    case TB_WINDOW_SHARE:
        return a != NULL && a->type != TB_METRIC_HISTOGRAM && window->b != NULL &&
               window->b->family->def->type != TB_METRIC_HISTOGRAM;
    case TB_WINDOW_MAX:
        return a != NULL && a->type == TB_METRIC_HISTOGRAM && a->keep_max;
    case TB_WINDOW_MIN:
        return a != NULL && a->type == TB_METRIC_HISTOGRAM && a->keep_min;
    }
    return false;
}

tb_series_t *tb_metrics_window(const tb_metric_def_t *def, const char *const *values,
                               const tb_window_t *window)
{
    if (def->type == TB_METRIC_HISTOGRAM || !window_fits(window)) {
        return NULL;
    }
    window_t *kept = calloc(1, sizeof(*kept));
    if (kept == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    /* as an alias: a second take of the same series finds it made */
    tb_series_t *series = series_take(def, values);
    if (series != NULL && series->source == NULL) {
        *kept = (window_t){.kind = window->kind, .b = window->b, .none = window->none};
        kept->readings[0] = take_reading(kept, window->a, atomic_load(&clock_ms)());
        kept->reading_count = 1;
        window->a->refs++;
        series->source = window->a;
        if (window->b != NULL) {
            window->b->refs++;
        }
        series->window = kept;
        kept = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
    free(kept);
    return series;
}

void tb_series_release(tb_series_t *series)
{
    if (series == NULL) {
        return;
    }
    pthread_mutex_lock(&registry_lock);
    series_unref(series);
    pthread_mutex_unlock(&registry_lock);
}

void tb_metrics_reset(void)
{
    pthread_mutex_lock(&registry_lock);
    while (families != NULL) {
        family_t *family = families;
        while (family->series != NULL) {
            tb_series_t *series = family->series;
            family->series = series->next;
            series->source = NULL; /* freed in this loop too */
            if (series->window != NULL) {
                series->window->b = NULL;
            }
            series_free(series);
        }
        families = family->next;
        free(family->buckets);
        free(family);
    }
    pthread_mutex_unlock(&registry_lock);
}

/* ---- the process's own metrics ---- */

/* Rendered among the registry's families in name order, so keep them
 * sorted by name. */
typedef enum {
    BUILTIN_CPU_SECONDS = 0,
    BUILTIN_MAX_FDS,
    BUILTIN_OPEN_FDS,
    BUILTIN_RESIDENT_BYTES,
    BUILTIN_START_TIME,
    BUILTIN_VIRTUAL_BYTES,
    BUILTIN_BUILD_INFO,
    BUILTIN_UPTIME,
    BUILTIN_COUNT,
} builtin_t;

typedef struct {
    const char *name;
    tb_metric_type_t type;
    const char *help;
    const char *labels; /* written out whole; "" for none */
} builtin_def_t;

/* TB_VERSION and TB_GIT_COMMIT hold digits, dots, letters: nothing to escape. */
static const builtin_def_t builtin_defs[BUILTIN_COUNT] = {
    [BUILTIN_CPU_SECONDS] = {"process_cpu_seconds_total", TB_METRIC_COUNTER,
                             "Total user and system CPU time spent in seconds.", ""},
    [BUILTIN_MAX_FDS] = {"process_max_fds", TB_METRIC_GAUGE,
                         "Maximum number of open file descriptors.", ""},
    [BUILTIN_OPEN_FDS] = {"process_open_fds", TB_METRIC_GAUGE,
                          "Number of open file descriptors.", ""},
    [BUILTIN_RESIDENT_BYTES] = {"process_resident_memory_bytes", TB_METRIC_GAUGE,
                                "Resident memory size in bytes.", ""},
    [BUILTIN_START_TIME] = {"process_start_time_seconds", TB_METRIC_GAUGE,
                            "Start time of the process since unix epoch in seconds.", ""},
    [BUILTIN_VIRTUAL_BYTES] = {"process_virtual_memory_bytes", TB_METRIC_GAUGE,
                               "Virtual memory size in bytes.", ""},
    [BUILTIN_BUILD_INFO] = {"tributary_build_info", TB_METRIC_GAUGE,
                            "The version and git commit tributary was built from; "
                            "always 1.",
                            "{version=\"" TB_VERSION "\",commit=\"" TB_GIT_COMMIT "\"}"},
    [BUILTIN_UPTIME] = {"tributary_uptime_seconds", TB_METRIC_GAUGE,
                        "Seconds since the process started.", ""},
};

/* What one render found out; a value not known (no /proc) is left out. */
typedef struct {
    double value[BUILTIN_COUNT];
    bool known[BUILTIN_COUNT];
} readings_t;

static void reading_set(readings_t *readings, builtin_t which, double value)
{
    readings->value[which] = value;
    readings->known[which] = true;
}

/* Reads a small file whole into buf, NUL-terminated. Returns 0 or -1. */
static int read_small_file(const char *path, char *buf, size_t size)
{
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        return -1;
    }
    size_t n = fread(buf, 1, size - 1, file);
    fclose(file);
    buf[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* The boot time, in seconds since the epoch, from /proc/stat's btime. */
static int read_boot_time(double *boot_time)
{
    FILE *file = fopen("/proc/stat", "r");
    if (file == NULL) {
        return -1;
    }
    char *line = NULL;
    size_t size = 0;
    long long seconds;
    int found = -1;
    while (found != 0 && getline(&line, &size, file) != -1) {
        if (sscanf(line, "btime %lld", &seconds) == 1) {
            *boot_time = (double)seconds;
            found = 0;
        }
    }
    free(line);
    fclose(file);
    return found;
}

/* CPU time, memory sizes, start time and uptime from /proc/self/stat. */
static void read_process_stat(readings_t *readings)
{
    char stat[4096];
    unsigned long user_ticks, system_ticks, virtual_bytes;
    unsigned long long start_ticks;
    long resident_pages;
    struct timespec now;
    double boot_time;

    if (read_small_file("/proc/self/stat", stat, sizeof(stat)) != 0) {
        return;
    }
    /* Fields 14, 15 and 22 to 24 (proc(5)), counted after the command
     * name, which is in parentheses and may itself hold spaces. */
    const char *after_name = strrchr(stat, ')');
    if (after_name == NULL ||
        sscanf(after_name + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu"
               " %*d %*d %*d %*d %*d %*d %llu %lu %ld",
               &user_ticks, &system_ticks, &start_ticks, &virtual_bytes,
               &resident_pages) != 5) {
        return;
    }
    double ticks_per_second = (double)sysconf(_SC_CLK_TCK);
    double started_after_boot = (double)start_ticks / ticks_per_second;
    reading_set(readings, BUILTIN_CPU_SECONDS,
                (double)(user_ticks + system_ticks) / ticks_per_second);
    reading_set(readings, BUILTIN_VIRTUAL_BYTES, (double)virtual_bytes);
    reading_set(readings, BUILTIN_RESIDENT_BYTES,
                (double)resident_pages * (double)sysconf(_SC_PAGESIZE));
    if (read_boot_time(&boot_time) == 0) {
        reading_set(readings, BUILTIN_START_TIME, boot_time + started_after_boot);
    }
    /* CLOCK_BOOTTIME counts from boot, as start_ticks does. */
    if (clock_gettime(CLOCK_BOOTTIME, &now) == 0) {
        reading_set(readings, BUILTIN_UPTIME,
                    (double)now.tv_sec + (double)now.tv_nsec / 1e9 - started_after_boot);
    }
}

static void read_fds(readings_t *readings)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        reading_set(readings, BUILTIN_MAX_FDS,
                    limit.rlim_cur == RLIM_INFINITY ? INFINITY : (double)limit.rlim_cur);
    }
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL) {
        return;
    }
    double open_fds = 0;
    for (struct dirent *entry = readdir(dir); entry != NULL; entry = readdir(dir)) {
        if (entry->d_name[0] != '.') {
            open_fds++;
        }
    }
    closedir(dir);
    /* Not counting the descriptor that listed them. */
    reading_set(readings, BUILTIN_OPEN_FDS, open_fds - 1);
}

static void read_builtins(readings_t *readings)
{
    memset(readings, 0, sizeof(*readings));
    reading_set(readings, BUILTIN_BUILD_INFO, 1);
    read_process_stat(readings);
    read_fds(readings);
}

/* ---- the text format ---- */

/* Room for "-1.2345678901234567e-308" and its NUL. */
#define NUMBER_SIZE 32

/* Prometheus' spelling of value: the shortest of 15, 16 or 17 significant
 * digits that reads back as the same double, or +Inf, -Inf, NaN. */
static void format_number(double value, char *text, size_t size)
{
    if (isnan(value)) {
        snprintf(text, size, "NaN");
        return;
    }
    if (isinf(value)) {
        snprintf(text, size, "%s", value > 0 ? "+Inf" : "-Inf");
        return;
    }
    int digits = 15;
    snprintf(text, size, "%.*g", digits, value);
    while (digits < 17 && strtod(text, NULL) != value) {
        digits++;
        snprintf(text, size, "%.*g", digits, value);
    }
}

static void put_number(FILE *out, double value)
{
    char text[NUMBER_SIZE];
    format_number(value, text, sizeof(text));
    fputs(text, out);
}

/* Writes text with backslash and newline escaped, and double quotes too
 * when quoted (a label value; HELP text keeps its quotes). */
static void put_escaped(FILE *out, const char *text, bool quoted)
{
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\\') {
            fputs("\\\\", out);
        } else if (*c == '\n') {
            fputs("\\n", out);
        } else if (*c == '"' && quoted) {
            fputs("\\\"", out);
        } else {
            fputc(*c, out);
        }
    }
}

static void put_header(FILE *out, const char *name, tb_metric_type_t type,
                       const char *help)
{
    fprintf(out, "# HELP %s ", name);
    put_escaped(out, help != NULL ? help : "", false);
    fprintf(out, "\n# TYPE %s %s\n", name, type_names[type]);
}

/* One sample line: name and suffix, the series' labels and le when it is
 * not NULL, and value. */
static void put_sample(FILE *out, const char *name, const tb_series_t *series,
                       const char *suffix, const char *le, double value)
{
    const family_t *family = series->family;
    bool braces = family->label_count > 0 || le != NULL;
    fprintf(out, "%s%s%s", name, suffix, braces ? "{" : "");
    for (size_t i = 0; i < family->label_count; i++) {
        fprintf(out, "%s%s=\"", i > 0 ? "," : "", family->def->labels[i]);
        put_escaped(out, series->values[i], true);
        fputc('"', out);
    }
    if (le != NULL) {
        fprintf(out, "%sle=\"%s\"", family->label_count > 0 ? "," : "", le);
    }
    fputs(braces ? "} " : " ", out);
    put_number(out, value);
    fputc('\n', out);
}

static void put_histogram(FILE *out, tb_series_t *series)
{
    const family_t *family = series->family;
    const char *name = family->def->name;
    char le[NUMBER_SIZE];
    uint64_t total = 0;
    for (size_t i = 0; i < family->bound_count; i++) {
        total += atomic_load_explicit(&series->counts[i], memory_order_relaxed);
        format_number(family->def->buckets[i], le, sizeof(le));
        put_sample(out, name, series, "_bucket", le, (double)total);
    }
    total +=
        atomic_load_explicit(&series->counts[family->bound_count], memory_order_relaxed);
    put_sample(out, name, series, "_bucket", "+Inf", (double)total);
    put_sample(out, name, series, "_sum", NULL, atomic_double_load(&series->value));
    put_sample(out, name, series, "_count", NULL, (double)total);
}

/* A histogram's observations, all buckets. */
static uint64_t histogram_count(tb_series_t *series)
{
    uint64_t total = 0;
    for (size_t i = 0; i <= series->family->bound_count; i++) {
        total += atomic_load_explicit(&series->counts[i], memory_order_relaxed);
    }
    return total;
}

/* What a window reads of series: a histogram's count, or its sum where a
 * numerator is read; any other's value. */
static double reading_of(tb_series_t *series, bool numerator)
{
    if (series->family->def->type == TB_METRIC_HISTOGRAM && !numerator) {
        return (double)histogram_count(series);
    }
    return atomic_double_load(&series->value);
}

/* The larger (largest) or smaller of the current and the previous sample's
 * maximum or minimum; NaN when neither has an observation. */
static double window_extreme(extreme_t *extreme, int64_t now_ms, bool largest)
{
    int64_t sample = now_ms / SAMPLE_MS;
    double found = NAN;
    for (size_t i = 0; i < 2; i++) {
        int64_t held = atomic_load_explicit(&extreme->sample[i], memory_order_relaxed);
        double value =
            bits_double(atomic_load_explicit(&extreme->bits[i], memory_order_relaxed));
        if (held >= sample - 1 && held <= sample &&
            (isnan(found) || beyond(value, found, largest))) {
            found = value;
        }
    }
    return found;
}

/* A rate reads a's increase as b; a ratio or a share reads a and its b. */
static reading_t take_reading(const window_t *window, tb_series_t *a, int64_t now_ms)
{
    return (reading_t){
        .at_ms = now_ms,
        .a = reading_of(a, true),
        .b = reading_of(window->b != NULL ? window->b : a, false),
    };
}

/* A rate, a ratio or a share: the change since the newest reading at or before the
 * window's start (else the oldest), then a new reading when the last is a
 * quarter of a window old. Call locked. */
static double window_change(window_t *window, tb_series_t *a, int64_t now_ms)
{
    reading_t now = take_reading(window, a, now_ms);
    while (window->reading_count > 1 && window->readings[1].at_ms <= now_ms - WINDOW_MS) {
        memmove(&window->readings[0], &window->readings[1],
                --window->reading_count * sizeof(window->readings[0]));
    }
    const reading_t *from = &window->readings[0];
    double value;
    if (window->kind == TB_WINDOW_RATE) {
        int64_t span = now_ms - from->at_ms;
        value =
            (now.b - from->b) * 1000.0 / (double)(span > SAMPLE_MS ? span : SAMPLE_MS);
    } else {
        double part = now.a - from->a;
        double whole =
            window->kind == TB_WINDOW_SHARE ? part + (now.b - from->b) : now.b - from->b;
        value = whole > 0 ? part / whole : window->none;
    }
    const reading_t *last = &window->readings[window->reading_count - 1];
    if (now_ms - last->at_ms >= WINDOW_MS / (READINGS - 2)) {
        if (window->reading_count == READINGS) {
            memmove(&window->readings[0], &window->readings[1],
                    --window->reading_count * sizeof(window->readings[0]));
        }
        window->readings[window->reading_count++] = now;
    }
    return value;
}

/* A counter's or gauge's value; an alias's read from its source, a
 * window's worked out from it. Call locked. */
static double series_value(tb_series_t *series, int64_t now_ms)
{
    if (series->window == NULL) {
        tb_series_t *source = series->source != NULL ? series->source : series;
        return source->family->def->time_share ? time_share_value(source, now_ms)
                                               : atomic_double_load(&source->value);
    }
    if (series->window->kind == TB_WINDOW_MAX) {
        return window_extreme(&series->source->max, now_ms, true);
    }
    if (series->window->kind == TB_WINDOW_MIN) {
        return window_extreme(&series->source->min, now_ms, false);
    }
    return window_change(series->window, series->source, now_ms);
}

/* family under name, each value times scale (a histogram's unscaled). */
static void put_family(FILE *out, const family_t *family, const char *name, double scale,
                       int64_t now_ms)
{
    put_header(out, name, family->def->type, family->def->help);
    for (tb_series_t *series = family->series; series != NULL; series = series->next) {
        if (family->def->type == TB_METRIC_HISTOGRAM) {
            put_histogram(out, series);
        } else {
            put_sample(out, name, series, "", NULL, scale * series_value(series, now_ms));
        }
    }
}

void tb_metrics_ms_names_set(bool on)
{
    atomic_store(&ms_names, on);
}

/* family's ms_name twin, when it has one and the names are on: the name
 * with its last _seconds as _ms (<base>_seconds, or <base>_seconds_max as
 * MM2 names a -max), rendered just before the family. A window read twice
 * in one render shows the same value: the second read measures from the
 * same reading and takes none (its clock has not moved a quarter window). */
static void put_ms_twin(FILE *out, const family_t *family, int64_t now_ms)
{
    static const char unit[] = "_seconds";
    const char *name = family->def->name;
    const char *at = NULL;
    char twin[256];
    for (const char *next = strstr(name, unit); next != NULL;
         next = strstr(next + 1, unit)) {
        at = next;
    }
    if (!family->def->ms_name || !atomic_load(&ms_names) || at == NULL ||
        (at[sizeof(unit) - 1] != '\0' && at[sizeof(unit) - 1] != '_') ||
        strlen(name) + sizeof("_ms") > sizeof(twin)) {
        return;
    }
    snprintf(twin, sizeof(twin), "%.*s_ms%s", (int)(at - name), name,
             at + sizeof(unit) - 1);
    put_family(out, family, twin, 1000, now_ms);
}

static void put_builtin(FILE *out, const readings_t *readings, builtin_t which)
{
    const builtin_def_t *def = &builtin_defs[which];
    if (!readings->known[which]) {
        return;
    }
    put_header(out, def->name, def->type, def->help);
    fprintf(out, "%s%s ", def->name, def->labels);
    put_number(out, readings->value[which]);
    fputc('\n', out);
}

/* Every family and every known builtin, merged in name order. */
static void put_page(FILE *out, const readings_t *readings)
{
    builtin_t next = 0;
    pthread_mutex_lock(&registry_lock);
    int64_t now_ms = atomic_load(&clock_ms)();
    for (family_t *family = families; family != NULL; family = family->next) {
        while (next < BUILTIN_COUNT &&
               strcmp(builtin_defs[next].name, family->def->name) < 0) {
            put_builtin(out, readings, next++);
        }
        family_sort(family);
        put_ms_twin(out, family, now_ms);
        put_family(out, family, family->def->name, 1, now_ms);
    }
    pthread_mutex_unlock(&registry_lock);
    while (next < BUILTIN_COUNT) {
        put_builtin(out, readings, next++);
    }
}

static char *render(const readings_t *readings)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (out == NULL) {
        return NULL;
    }
    put_page(out, readings);
    bool failed = ferror(out) != 0;
    if (fclose(out) != 0 || failed) {
        free(text);
        return NULL;
    }
    return text;
}

char *tb_metrics_render(void)
{
    readings_t readings;
    read_builtins(&readings);
    return render(&readings);
}

char *tb_metrics_render_series(void)
{
    readings_t none = {0};
    return render(&none);
}
