/*
 * http_metrics.c - the REST server's request metrics (tb_http_metrics.h).
 *
 * Requests are counted by route template, method and status, and timed by
 * route template and method. Every label value comes from a fixed set: the
 * templates of tb_api_routes() with their "{}" named after the segment
 * before them ("/connectors/{connector}/tasks/{task}/status"), "unmatched"
 * for any other path, the usual methods and "other", and the few statuses
 * the server answers with. So the series handles are taken once, on first
 * use, and kept for the life of the process in a table indexed by template,
 * method and status slot: after warm-up a request takes no lock and
 * allocates nothing (the registry's mutex, which a /metrics render holds
 * while it writes the page, is only met on the first request of each
 * combination). The handles are never released, so tb_metrics_reset()
 * must not run while a server has answered requests.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_metrics.h"
#include "server/tb_http_metrics.h"

static const char *const metric_methods[] = {"GET",   "HEAD",   "POST",   "PUT",
                                             "PATCH", "DELETE", "OPTIONS"};
#define METRIC_METHODS (sizeof(metric_methods) / sizeof(metric_methods[0]) + 1)
/* Distinct status codes counted without a lock; more than the server
 * sends. */
#define METRIC_STATUSES 24
#define UNMATCHED_ROUTE "unmatched"

static const char *const route_labels[] = {"route", "method", NULL};
static const char *const request_labels[] = {"route", "method", "status", NULL};
static const double request_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                         0.1,    0.25,  0.5,    1,     2.5,  5,     10};

static const tb_metric_def_t http_requests = {
    .name = "tributary_http_requests_total",
    .type = TB_METRIC_COUNTER,
    .help = "REST requests answered, by route template, method and status code.",
    .labels = request_labels};
static const tb_metric_def_t http_seconds = {
    .name = "tributary_http_request_seconds",
    .type = TB_METRIC_HISTOGRAM,
    .help = "From a REST request's headers to its response being queued, by route "
            "template and method.",
    .labels = route_labels,
    .buckets = request_buckets,
    .bucket_count = sizeof(request_buckets) / sizeof(request_buckets[0])};

typedef struct {
    size_t route_count;     /* entries of tb_api_routes() */
    size_t template_count;  /* distinct templates, then "unmatched" */
    char **templates;       /* template_count + 1 labels */
    size_t *route_template; /* route index -> template index */
    /* [template][method] and [template][method][status slot] */
    _Atomic(tb_series_t *) *seconds;
    _Atomic(tb_series_t *) *requests;
} request_metrics_t;

static request_metrics_t request_metrics;
static pthread_once_t request_metrics_once = PTHREAD_ONCE_INIT;
/* The status code of each slot, claimed on first use; 0 while free. */
static _Atomic unsigned status_slots[METRIC_STATUSES];

/* What a "{}" after segment is called in a route label. */
static const char *param_name(const char *segment, size_t len)
{
    static const struct {
        const char *segment;
        const char *name;
    } names[] = {{"connectors", "connector"},
                 {"tasks", "task"},
                 {"connector-plugins", "plugin"},
                 {"loggers", "logger"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i].segment) == len &&
            strncmp(names[i].segment, segment, len) == 0) {
            return names[i].name;
        }
    }
    return "param";
}

/* The label of template: each "{}" named after the segment before it.
 * malloc'd; NULL on no memory. */
static char *template_label(const char *template)
{
    size_t size = strlen(template) * 2 + 64;
    char *label = malloc(size);
    size_t n = 0;
    const char *segment = template;  /* the segment being copied */
    const char *previous = template; /* the one before it */
    size_t previous_len = 0;

    if (label == NULL) {
        return NULL;
    }
    for (const char *p = template; *p != '\0' && n + 32 < size;) {
        if (strncmp(p, "{}", 2) == 0) {
            n += (size_t)snprintf(label + n, size - n, "{%s}",
                                  param_name(previous, previous_len));
            p += 2;
            continue;
        }
        if (*p == '/') {
            previous = segment;
            previous_len = (size_t)(p - segment);
            segment = p + 1;
        }
        label[n++] = *p++;
    }
    label[n] = '\0';
    return label;
}

/* Builds the template table from tb_api_routes(). On no memory the table
 * stays empty and requests are not counted. */
static void request_metrics_build(void)
{
    request_metrics_t m = {0};
    const tb_api_route_t *routes = tb_api_routes();

    while (routes[m.route_count].method != NULL) {
        m.route_count++;
    }
    m.templates = calloc(m.route_count + 1, sizeof(*m.templates));
    m.route_template = calloc(m.route_count + 1, sizeof(*m.route_template));
    if (m.templates == NULL || m.route_template == NULL) {
        goto fail;
    }
    /* A template seen at an earlier route shares that route's index. */
    for (size_t r = 0; r < m.route_count; r++) {
        size_t earlier = 0;
        while (earlier < r && strcmp(routes[earlier].template, routes[r].template) != 0) {
            earlier++;
        }
        if (earlier < r) {
            m.route_template[r] = m.route_template[earlier];
            continue;
        }
        m.templates[m.template_count] = template_label(routes[r].template);
        if (m.templates[m.template_count] == NULL) {
            goto fail;
        }
        m.route_template[r] = m.template_count++;
    }
    m.templates[m.template_count] = strdup(UNMATCHED_ROUTE);
    size_t cells = (m.template_count + 1) * METRIC_METHODS;
    m.seconds = calloc(cells, sizeof(*m.seconds));
    m.requests = calloc(cells * METRIC_STATUSES, sizeof(*m.requests));
    if (m.templates[m.template_count] == NULL || m.seconds == NULL ||
        m.requests == NULL) {
        goto fail;
    }
    for (size_t i = 0; i < cells; i++) {
        atomic_init(&m.seconds[i], NULL);
    }
    for (size_t i = 0; i < cells * METRIC_STATUSES; i++) {
        atomic_init(&m.requests[i], NULL);
    }
    request_metrics = m;
    return;

fail:
    for (size_t t = 0; m.templates != NULL && t <= m.template_count; t++) {
        free(m.templates[t]);
    }
    free(m.templates);
    free(m.route_template);
    free(m.seconds);
    free(m.requests);
}

/* The index of method in metric_methods, or the last one ("other"). */
static size_t method_index(const char *method)
{
    size_t i = 0;
    while (i < METRIC_METHODS - 1 && strcmp(metric_methods[i], method) != 0) {
        i++;
    }
    return i;
}

/* The slot counting status, claimed if it is new; -1 when every slot is
 * taken by another status. */
static int status_slot(unsigned status)
{
    for (int i = 0; i < METRIC_STATUSES; i++) {
        unsigned seen = atomic_load_explicit(&status_slots[i], memory_order_acquire);
        if (seen == 0 && atomic_compare_exchange_strong_explicit(
                             &status_slots[i], &seen, status, memory_order_acq_rel,
                             memory_order_acquire)) {
            return i;
        }
        /* seen is now the slot's code, also when another thread won it. */
        if (seen == status) {
            return i;
        }
    }
    return -1;
}

/* The series in slot, taken on first use. Two threads racing to fill it
 * take the same series; the loser drops its extra reference. */
static tb_series_t *cached_series(_Atomic(tb_series_t *) *slot,
                                  const tb_metric_def_t *def, const char *const *values)
{
    tb_series_t *series = atomic_load_explicit(slot, memory_order_acquire);
    if (series != NULL) {
        return series;
    }
    tb_series_t *fresh = tb_metrics_series(def, values);
    if (fresh == NULL || atomic_compare_exchange_strong_explicit(slot, &series, fresh,
                                                                 memory_order_acq_rel,
                                                                 memory_order_acquire)) {
        return fresh;
    }
    tb_series_release(fresh);
    return series;
}

void tb_http_metrics_observe(const tb_api_route_t *route, const char *method,
                             unsigned status, const struct timespec *start)
{
    const request_metrics_t *m = &request_metrics;
    struct timespec now;
    char code[16];

    pthread_once(&request_metrics_once, request_metrics_build);
    if (m->seconds == NULL) {
        return;
    }
    size_t index = route != NULL ? (size_t)(route - tb_api_routes()) : m->route_count;
    size_t template =
        index < m->route_count ? m->route_template[index] : m->template_count;
    size_t verb = method_index(method);
    size_t cell = template * METRIC_METHODS + verb;
    const char *name = verb < METRIC_METHODS - 1 ? metric_methods[verb] : "other";
    const char *route_values[] = {m->templates[template], name, NULL};
    const char *request_values[] = {m->templates[template], name, code, NULL};
    int slot = status_slot(status);

    snprintf(code, sizeof(code), "%u", status);
    if (slot >= 0) {
        tb_series_add(cached_series(&m->requests[cell * METRIC_STATUSES + (size_t)slot],
                                    &http_requests, request_values),
                      1);
    } else {
        /* Never in practice (the server sends a dozen statuses): the
         * reference is kept, as the cached ones are, so that the count
         * stays on the page. */
        tb_series_add(tb_metrics_series(&http_requests, request_values), 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    tb_series_observe(cached_series(&m->seconds[cell], &http_seconds, route_values),
                      (double)(now.tv_sec - start->tv_sec) +
                          (double)(now.tv_nsec - start->tv_nsec) / 1e9);
}

void tb_http_metrics_prepare(void)
{
    pthread_once(&request_metrics_once, request_metrics_build);
}
