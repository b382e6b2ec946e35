/*
 * tb_http.h - the REST listeners, over libmicrohttpd.
 *
 * Parses `listeners` (Connect's syntax: comma-separated http://host:port),
 * accepts requests, enforces the body limit, matches routes from
 * tb_api_routes() and writes replies. One libmicrohttpd daemon per listener,
 * each with a small thread pool of its own.
 */
#ifndef TB_HTTP_H
#define TB_HTTP_H

#include <stddef.h>

#include "api/tb_api.h"

typedef struct tb_http_server tb_http_server_t;

typedef struct {
    const char *listeners;       /* e.g. "http://127.0.0.1:8083" */
    size_t body_max_bytes;       /* larger bodies get 413 */
    unsigned threads;            /* per listener */
    const tb_api_context_t *ctx; /* borrowed; must outlive the server */
} tb_http_options_t;

/* Binds every listener and starts serving. Returns NULL and fills errstr
 * (naming the listener) on failure. */
tb_http_server_t *tb_http_start(const tb_http_options_t *options, char *errstr,
                                size_t errstr_size);

/* Stops accepting, finishes requests in flight, frees. NULL is a no-op. */
void tb_http_stop(tb_http_server_t *server);

/* Splits one listener URL into scheme, host and port. Returns -1 and fills
 * errstr when it is not http(s)://host:port. host is "" for "http://:8083",
 * and IPv6 hosts come without brackets. */
int tb_http_listener_parse(const char *listener, char *scheme, size_t scheme_size,
                           char *host, size_t host_size, unsigned *port, char *errstr,
                           size_t errstr_size);

#endif
