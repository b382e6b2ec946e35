#include "server/tb_http.h"

#include <ctype.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/tb_log.h"

#define MAX_LISTENERS 8
#define MAX_SEGMENTS 16

typedef struct {
    struct MHD_Daemon *daemon;
    char base_url[300];
    const tb_http_options_t *options; /* the server's, borrowed */
} listener_t;

struct tb_http_server {
    tb_http_options_t options;
    listener_t listeners[MAX_LISTENERS];
    size_t count;
};

/* Per-request state, freed in the request-completed callback. */
typedef struct {
    char *body;
    size_t len;
    bool too_large;
} request_state_t;

int tb_http_listener_parse(const char *listener, char *scheme, size_t scheme_size,
                           char *host, size_t host_size, unsigned *port, char *errstr,
                           size_t errstr_size)
{
    const char *sep = strstr(listener, "://");
    const char *host_start, *host_end, *colon;
    char *end;

    if (sep == NULL ||
        (strncmp(listener, "http", 4) != 0 && strncmp(listener, "https", 5) != 0)) {
        goto bad;
    }
    snprintf(scheme, scheme_size, "%.*s", (int)(sep - listener), listener);
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        goto bad;
    }
    host_start = sep + 3;
    if (*host_start == '[') {
        host_end = strchr(host_start, ']');
        if (host_end == NULL || host_end[1] != ':') {
            goto bad;
        }
        colon = host_end + 1;
        host_start++;
    } else {
        colon = strrchr(host_start, ':');
        if (colon == NULL) {
            goto bad;
        }
        host_end = colon;
    }
    snprintf(host, host_size, "%.*s", (int)(host_end - host_start), host_start);
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (end == colon + 1 || (*end != '\0' && *end != '/') || p > 65535) {
        goto bad;
    }
    *port = (unsigned)p;
    return 0;

bad:
    snprintf(errstr, errstr_size,
             "Invalid value %s for configuration listeners: expected "
             "http://host:port",
             listener);
    return -1;
}

/* Decodes %XX escapes and '+' (in query strings) in place. */
static void url_decode(char *s, bool plus_is_space)
{
    char *out = s;
    for (char *in = s; *in != '\0'; in++) {
        if (*in == '%' && isxdigit((unsigned char)in[1]) &&
            isxdigit((unsigned char)in[2])) {
            char hex[3] = {in[1], in[2], '\0'};
            *out++ = (char)strtol(hex, NULL, 16);
            in += 2;
        } else if (*in == '+' && plus_is_space) {
            *out++ = ' ';
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
}

/* libmicrohttpd would decode the path before we split it, turning an
 * escaped '/' in a connector name into a separator; keep it raw and decode
 * each segment and query argument ourselves. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    json_t *query = cls;
    (void)kind;
    char *name = strdup(key);
    char *text = strdup(value != NULL ? value : "");
    url_decode(name, true);
    url_decode(text, true);
    json_t *list = json_object_get(query, name);
    if (list == NULL) {
        list = json_array();
        json_object_set_new(query, name, list);
    }
    json_array_append_new(list, json_string(text));
    free(name);
    free(text);
    return MHD_YES;
}

/* Splits a path into decoded segments (in buf). Returns the count, or -1
 * when there are too many. */
static int split_path(const char *path, char *buf, size_t size,
                      char *segments[MAX_SEGMENTS])
{
    int n = 0;
    snprintf(buf, size, "%s", path);
    char *q = strchr(buf, '?');
    if (q != NULL) {
        *q = '\0';
    }
    for (char *p = buf; *p != '\0';) {
        while (*p == '/') {
            *p++ = '\0';
        }
        if (*p == '\0') {
            break;
        }
        if (n == MAX_SEGMENTS) {
            return -1;
        }
        segments[n++] = p;
        while (*p != '\0' && *p != '/') {
            p++;
        }
    }
    for (int i = 0; i < n; i++) {
        url_decode(segments[i], false);
    }
    return n;
}

/* Does template match the segments? Fills params with captures. */
static bool template_matches(const char *template, char *const *segments, int count,
                             const char **params)
{
    char buf[256];
    char *parts[MAX_SEGMENTS];
    int n = split_path(template, buf, sizeof(buf), parts);
    int captured = 0;
    if (n != count) {
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(parts[i], "{}") == 0) {
            if (captured < TB_API_MAX_PARAMS) {
                params[captured++] = segments[i];
            }
        } else if (strcmp(parts[i], segments[i]) != 0) {
            return false;
        }
    }
    return true;
}

static void dispatch(tb_api_request_t *req, tb_api_response_t *res)
{
    char buf[4096];
    char *segments[MAX_SEGMENTS];
    int count = split_path(req->path, buf, sizeof(buf), segments);
    bool path_known = false;

    for (const tb_api_route_t *route = tb_api_routes();
         count >= 0 && route->method != NULL; route++) {
        const char *params[TB_API_MAX_PARAMS] = {0};
        if (!template_matches(route->template, segments, count, params)) {
            continue;
        }
        path_known = true;
        if (strcmp(route->method, req->method) == 0) {
            memcpy(req->params, params, sizeof(params));
            route->handler(req, res);
            return;
        }
    }
    if (path_known) {
        tb_api_reply_error(res, TB_ERR_METHOD, "HTTP 405 Method Not Allowed");
    } else {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "HTTP 404 Not Found");
    }
}

static enum MHD_Result send_response(struct MHD_Connection *connection,
                                     tb_api_response_t *res)
{
    char *text = NULL;
    size_t len = 0;
    const char *type = res->content_type ? res->content_type : "application/json";

    if (res->body != NULL) {
        text = json_dumps(res->body, JSON_COMPACT | JSON_ENCODE_ANY);
        len = text ? strlen(text) : 0;
    } else if (res->text != NULL) {
        text = res->text;
        res->text = NULL;
        len = strlen(text);
    }
    struct MHD_Response *response = MHD_create_response_from_buffer(
        len, text != NULL ? text : "",
        text != NULL ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (len > 0) {
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    }
    if (res->location != NULL) {
        MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION, res->location);
    }
    enum MHD_Result result = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *connection,
                                      const char *url, const char *method,
                                      const char *version, const char *upload,
                                      size_t *upload_size, void **con_cls)
{
    const listener_t *listener = cls;
    const tb_http_options_t *options = listener->options;
    request_state_t *state = *con_cls;
    (void)version;

    if (state == NULL) {
        *con_cls = calloc(1, sizeof(request_state_t));
        return *con_cls != NULL ? MHD_YES : MHD_NO;
    }
    if (*upload_size > 0) {
        if (!state->too_large && state->len + *upload_size <= options->body_max_bytes) {
            char *grown = realloc(state->body, state->len + *upload_size + 1);
            if (grown == NULL) {
                return MHD_NO;
            }
            memcpy(grown + state->len, upload, *upload_size);
            state->body = grown;
            state->len += *upload_size;
            state->body[state->len] = '\0';
        } else {
            state->too_large = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }

    json_t *query = json_object();
    tb_api_request_t req = {
        .method = method,
        .path = url,
        .query = query,
        .body = state->body,
        .body_len = state->len,
        .base_url = listener->base_url,
        .ctx = options->ctx,
    };
    tb_api_response_t res = {0};
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, collect_query, query);
    if (state->too_large) {
        tb_api_reply_error(&res, TB_ERR_TOO_LARGE,
                           "Request body is larger than %zu bytes "
                           "(rest.request.body.max.bytes)",
                           options->body_max_bytes);
    } else {
        dispatch(&req, &res);
    }
    TB_LOG(TB_LOG_DEBUG, "tributary.http", "%s %s -> %u", method, url, res.status);
    enum MHD_Result result = send_response(connection, &res);
    json_decref(res.body);
    free(res.text);
    free(res.location);
    json_decref(query);
    return result;
}

static void request_completed(void *cls, struct MHD_Connection *connection,
                              void **con_cls, enum MHD_RequestTerminationCode code)
{
    request_state_t *state = *con_cls;
    (void)cls;
    (void)connection;
    (void)code;
    if (state != NULL) {
        free(state->body);
        free(state);
        *con_cls = NULL;
    }
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char message[1024];
    (void)cls;
    vsnprintf(message, sizeof(message), fmt, ap);
    message[strcspn(message, "\n")] = '\0';
    TB_LOG(TB_LOG_WARN, "tributary.http", "%s", message);
}

/* Binds one listener URL. */
static int listener_start(tb_http_server_t *server, listener_t *listener, const char *url,
                          char *errstr, size_t errstr_size)
{
    char scheme[16], host[256], port_text[8];
    unsigned port;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *addr = NULL;

    if (tb_http_listener_parse(url, scheme, sizeof(scheme), host, sizeof(host), &port,
                               errstr, errstr_size) != 0) {
        return -1;
    }
    if (strcmp(scheme, "http") != 0) {
        snprintf(errstr, errstr_size,
                 "listener %s: only http:// listeners are supported so far", url);
        return -1;
    }
    snprintf(port_text, sizeof(port_text), "%u", port);
    int rc = getaddrinfo(host[0] ? host : NULL, port_text, &hints, &addr);
    if (rc != 0) {
        snprintf(errstr, errstr_size, "listener %s: %s", url, gai_strerror(rc));
        return -1;
    }
    listener->options = &server->options;
    snprintf(listener->base_url, sizeof(listener->base_url), "%s://%s%s%s:%u", scheme,
             strchr(host, ':') ? "[" : "", host[0] ? host : "localhost",
             strchr(host, ':') ? "]" : "", port);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
                     (addr->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    listener->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, handle_request, listener,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR, addr->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, server->options.threads,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped,
        NULL, MHD_OPTION_NOTIFY_COMPLETED, request_completed, NULL, MHD_OPTION_END);
    freeaddrinfo(addr);
    if (listener->daemon == NULL) {
        snprintf(errstr, errstr_size,
                 "listener %s: cannot bind (address in use or not permitted)", url);
        return -1;
    }
    TB_LOG(TB_LOG_INFO, "tributary.http", "REST API listening on %s", url);
    return 0;
}

tb_http_server_t *tb_http_start(const tb_http_options_t *options, char *errstr,
                                size_t errstr_size)
{
    tb_http_server_t *server = calloc(1, sizeof(*server));
    char *urls = strdup(options->listeners);
    char *save = NULL;

    server->options = *options;
    tb_api_routes(); /* build the route list before any request thread */
    for (char *url = strtok_r(urls, ",", &save); url != NULL;
         url = strtok_r(NULL, ",", &save)) {
        while (*url == ' ') {
            url++;
        }
        if (server->count == MAX_LISTENERS) {
            snprintf(errstr, errstr_size, "listeners: at most %d are supported",
                     MAX_LISTENERS);
            goto fail;
        }
        if (listener_start(server, &server->listeners[server->count], url, errstr,
                           errstr_size) != 0) {
            goto fail;
        }
        server->count++;
    }
    if (server->count == 0) {
        snprintf(errstr, errstr_size, "listeners: no listener configured");
        goto fail;
    }
    free(urls);
    return server;

fail:
    free(urls);
    tb_http_stop(server);
    return NULL;
}

void tb_http_stop(tb_http_server_t *server)
{
    if (server == NULL) {
        return;
    }
    for (size_t i = 0; i < server->count; i++) {
        MHD_stop_daemon(server->listeners[i].daemon);
    }
    free(server);
}
