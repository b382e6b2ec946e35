/*
 * tb_http_metrics.h - the REST server's request metrics:
 * tributary_http_requests_total by route template, method and status, and
 * tributary_http_request_seconds by route template and method
 * (http_metrics.c says how the series are kept).
 */
#ifndef TB_HTTP_METRICS_H
#define TB_HTTP_METRICS_H

#include <time.h>

#include "api/tb_api.h"

/* Builds the table of route labels; called before any request thread (a
 * later call is a no-op). */
void tb_http_metrics_prepare(void);

/* Counts and times one answered request; route is where its path matched
 * (NULL: unmatched), start when its headers arrived (CLOCK_MONOTONIC). */
void tb_http_metrics_observe(const tb_api_route_t *route, const char *method,
                             unsigned status, const struct timespec *start);

#endif
