#include "server/tb_http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <openssl/crypto.h>

#include "core/tb_log.h"
#include "core/tb_time.h"
#include "server/tb_forward.h"
#include "server/tb_http_conns.h"
#include "server/tb_http_handlers.h"
#include "server/tb_http_metrics.h"
#include "server/tb_http_router.h"
#include "server/tb_http_tls.h"
#include "server/tb_request_signature.h"

#define MAX_LISTENERS 8
/* How long a stopping server goes on answering the requests it accepted. */
#define DRAIN_MS 10000
#define DRAIN_POLL_MS 10
#define FIRST_REQUEST_MS 1000
/* How long the answers of the writes aborted at the stop may take to go
 * out before the daemons stop. */
#define ABORT_SEND_MS 2000
#define REQUEST_TIMEOUT_DEFAULT_MS 90000
/* Jetty's CrossOriginFilter defaults, which Connect uses, plus
 * Authorization for rest.auth. */
#define CORS_DEFAULT_METHODS "GET,POST,HEAD"
#define CORS_ALLOW_HEADERS "X-Requested-With,Content-Type,Accept,Origin,Authorization"
#define CORS_MAX_AGE "1800"
/* GnuTLS priorities of the https listeners: TLS 1.3 and 1.2 only, ciphers
 * of 128 bits and more with forward secrecy (no RSA key exchange), no SHA-1
 * MACs, the server's preference first. */
#define TLS_PRIORITIES                                                                   \
    "SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA:-SHA1:%SERVER_PRECEDENCE"

typedef struct {
    struct MHD_Daemon *daemon; /* NULL until served */
    MHD_socket socket;         /* bound and listening; the daemon's once served */
    char url[300];             /* as configured */
    char base_url[300];
    unsigned port; /* bound: the kernel's pick for a configured port 0 */
    bool ipv6;
    bool tls;
    bool admin_only;          /* an admin.listeners entry */
    bool serves_admin;        /* admin routes are served here */
    tb_http_server_t *server; /* borrowed */
    tb_http_conns_t *conns;   /* its open connections; NULL until served */
} listener_t;

struct tb_http_server {
    tb_http_options_t options;
    tb_auth_t *auth; /* NULL when rest.auth is none */
    /* the https listeners' certificate and key (tb_http_tls_reload swaps
     * them) and CA, read at start; NULL without https listeners */
    tb_http_tls_t *tls;
    char *tls_ca;
    listener_t listeners[MAX_LISTENERS];
    size_t count;
    atomic_size_t in_flight; /* requests begun and not yet completed */
    atomic_size_t unserved;  /* connections open whose first request has not begun */
    /* connections drain took from a quiesced listener's backlog, not yet
     * started by libmicrohttpd (then they are in unserved) */
    atomic_size_t adopted;
    tb_http_handlers_t *handlers; /* the writes' pool; NULL until served */
};

typedef enum {
    CERT_UNCHECKED = 0,
    CERT_ABSENT,
    CERT_VALID,
    CERT_INVALID,
} cert_state_t;

/* Per-connection state (libmicrohttpd's socket context), from accept to
 * close: what was verified once need not be verified per request. */
typedef struct {
    const listener_t *listener;
    cert_state_t cert;
    bool served;                /* a request of it began; until then in unserved */
    tb_http_conn_t *registered; /* in its listener's conns; NULL: not */
} connection_state_t;

/* Per-request state, freed in the request-completed callback. */
typedef struct {
    char *body;
    size_t len;
    bool too_large;
    struct timespec start; /* when the request's headers arrived */
    /* a write answered on the handler pool, its connection suspended
     * meanwhile, or NULL */
    tb_http_call_t *call;
    const tb_api_route_t *path_route; /* the route call counts under */
} request_state_t;

/* What a write answered on the handler pool needs, copied: its
 * connection's strings are not to be read from there, and the call may
 * outlive its request (answered 503 at its deadline). */
typedef struct {
    const listener_t *listener;
    struct MHD_Connection *connection;
    char *method;
    char *path;
    char *body;
    size_t body_len;
    json_t *query;
    char *authorization;
    char *forwarded_by;
    char *signature;
    char *signature_algorithm;
} deferred_t;

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

int tb_http_client_auth_parse(const char *text, tb_http_client_auth_t *out)
{
    static const char *const names[] = {[TB_HTTP_CLIENT_AUTH_NONE] = "none",
                                        [TB_HTTP_CLIENT_AUTH_REQUESTED] = "requested",
                                        [TB_HTTP_CLIENT_AUTH_REQUIRED] = "required"};
    for (size_t i = 0; text != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(text, names[i]) == 0) {
            *out = (tb_http_client_auth_t)i;
            return 0;
        }
    }
    return -1;
}

bool tb_http_host_is_loopback(const char *host)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (strcasecmp(host, "localhost") == 0) {
        return true;
    }
    if (inet_pton(AF_INET, host, &v4) == 1) {
        return (ntohl(v4.s_addr) >> 24) == 127;
    }
    if (inet_pton(AF_INET6, host, &v6) == 1) {
        return IN6_IS_ADDR_LOOPBACK(&v6) ||
               (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    }
    return false;
}

static bool is_set(const char *s)
{
    return s != NULL && s[0] != '\0';
}

typedef int (*url_fn)(void *arg, const char *url, char *errstr, size_t errstr_size);

/* Calls fn for each URL of a comma-separated list until one fails. */
static int for_each_url(const char *list, url_fn fn, void *arg, char *errstr,
                        size_t errstr_size)
{
    char *urls = strdup(list);
    char *save = NULL;
    int rc = 0;
    if (urls == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    for (char *url = strtok_r(urls, ",", &save); rc == 0 && url != NULL;
         url = strtok_r(NULL, ",", &save)) {
        while (*url == ' ') {
            url++;
        }
        rc = fn(arg, url, errstr, errstr_size);
    }
    free(urls);
    return rc;
}

static int check_url_exposure(void *arg, const char *url, char *errstr,
                              size_t errstr_size)
{
    const tb_http_options_t *options = arg;
    char scheme[16], host[256];
    unsigned port;
    if (tb_http_listener_parse(url, scheme, sizeof(scheme), host, sizeof(host), &port,
                               errstr, errstr_size) != 0) {
        return -1;
    }
    bool authenticated = options->auth != TB_AUTH_NONE ||
                         (strcmp(scheme, "https") == 0 &&
                          options->ssl_client_auth == TB_HTTP_CLIENT_AUTH_REQUIRED);
    if (authenticated || options->allow_unauthenticated_remote ||
        tb_http_host_is_loopback(host)) {
        return 0;
    }
    snprintf(errstr, errstr_size,
             "listener %s binds %s, not a loopback address, while rest.auth is "
             "none: set rest.auth to basic or bearer (with "
             "rest.auth.credentials.file), or set "
             "rest.allow.unauthenticated.remote=true to serve the REST API "
             "unauthenticated to other hosts",
             url, host[0] ? host : "every interface");
    return -1;
}

int tb_http_check_exposure(const tb_http_options_t *options, char *errstr,
                           size_t errstr_size)
{
    if (for_each_url(options->listeners, check_url_exposure, (void *)options, errstr,
                     errstr_size) != 0) {
        return -1;
    }
    if (is_set(options->admin_listeners)) {
        return for_each_url(options->admin_listeners, check_url_exposure, (void *)options,
                            errstr, errstr_size);
    }
    return 0;
}

/* Runs the handler of req's route; 405 when only the path is known, 404
 * when not even that. Returns the route the request counts under. */
static const tb_api_route_t *dispatch(const listener_t *listener, tb_api_request_t *req,
                                      tb_api_response_t *res)
{
    char buf[TB_HTTP_PATH_BUF_SIZE];
    const tb_api_route_t *path_route;
    const tb_api_route_t *route =
        tb_http_route_find(listener->serves_admin, listener->admin_only, req->path,
                           req->method, buf, req->params, &path_route);

    if (strcspn(req->path, "?") >= TB_HTTP_PATH_BUF_SIZE) {
        tb_api_reply_error(res, TB_ERR_URI_TOO_LONG,
                           "HTTP 414 URI Too Long: the path is longer than %d bytes",
                           TB_HTTP_PATH_BUF_SIZE - 1);
    } else if (route != NULL) {
        const tb_api_context_t *ctx = req->ctx;
        req->route = route;
        if (ctx == NULL || ctx->forward == NULL ||
            !ctx->forward(ctx->forward_opaque, req, res)) {
            route->handler(req, res);
        }
    } else if (path_route != NULL) {
        tb_api_reply_error(res, TB_ERR_METHOD, "HTTP 405 Method Not Allowed");
    } else {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "HTTP 404 Not Found");
    }
    return path_route;
}

/* The Access-Control-Allow-Origin of a reply: "*" or the request's Origin
 * when access.control.allow.origin allows it; NULL when CORS is off, the
 * request has no Origin or the origin is not allowed. */
static const char *cors_origin(const tb_http_server_t *server,
                               struct MHD_Connection *connection)
{
    const char *allowed = server->options.cors_allow_origin;
    const char *origin =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
    if (!is_set(allowed) || !is_set(origin)) {
        return NULL;
    }
    size_t origin_len = strlen(origin);
    for (const char *p = allowed; *p != '\0'; p += *p == ',') {
        while (*p == ' ') {
            p++;
        }
        size_t len = strcspn(p, ",");
        size_t item_len = len;
        while (item_len > 0 && p[item_len - 1] == ' ') {
            item_len--;
        }
        if (item_len == 1 && *p == '*') {
            return "*";
        }
        if (item_len == origin_len && strncasecmp(p, origin, origin_len) == 0) {
            return origin;
        }
        p += len;
    }
    return NULL;
}

/* The connection's state, or NULL when it could not be allocated. */
static connection_state_t *connection_state(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

/* Registers a new connection with its listener's conns (which may shut
 * it down at once: its client holds too many). */
static tb_http_conn_t *register_connection(const listener_t *listener,
                                           struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *client =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return fd != NULL ? tb_http_conn_open(listener->conns, fd->connect_fd,
                                          client != NULL ? client->client_addr : NULL)
                      : NULL;
}

static void connection_notify(void *cls, struct MHD_Connection *connection,
                              void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    const listener_t *listener = cls;
    tb_http_server_t *server = listener->server;
    connection_state_t *state = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        state = calloc(1, sizeof(connection_state_t));
        *socket_context = state;
        if (state != NULL) {
            state->listener = listener;
            atomic_fetch_add(&server->unserved, 1);
            state->registered = register_connection(listener, connection);
        }
        /* unserved first: drain reads adopted before it */
        size_t adopted = atomic_load(&server->adopted);
        while (adopted > 0 &&
               !atomic_compare_exchange_weak(&server->adopted, &adopted, adopted - 1)) {
        }
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && state != NULL) {
        if (!state->served) {
            atomic_fetch_sub(&server->unserved, 1);
        }
        tb_http_conn_close(listener->conns, state->registered);
        OPENSSL_cleanse(*socket_context, sizeof(connection_state_t));
        free(*socket_context);
        *socket_context = NULL;
    }
}

/* Verifies the TLS client certificate against the CA, once per
 * connection. */
static cert_state_t client_cert(struct MHD_Connection *connection,
                                connection_state_t *conn)
{
    cert_state_t cert = CERT_INVALID;
    unsigned count = 0, status = 0;
    if (conn != NULL && conn->cert != CERT_UNCHECKED) {
        return conn->cert;
    }
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info != NULL && info->tls_session != NULL) {
        gnutls_session_t session = info->tls_session;
        if (gnutls_certificate_get_peers(session, &count) == NULL || count == 0) {
            cert = CERT_ABSENT;
        } else if (gnutls_certificate_verify_peers2(session, &status) == 0 &&
                   status == 0) {
            cert = CERT_VALID;
        }
    }
    if (conn != NULL) {
        conn->cert = cert;
    }
    return cert;
}

/* Decides from the headers alone whether a request is answered before its
 * body is read: a 401 (client certificate or, unless route is one of the
 * unauthenticated probes, rest.auth) or a CORS preflight (204). Returns
 * true with res, and *challenge for a 401 of rest.auth, filled when it
 * is. */
static bool screen(const listener_t *listener, struct MHD_Connection *connection,
                   const char *method, const tb_api_route_t *route,
                   tb_api_response_t *res, const char **challenge)
{
    const tb_http_server_t *server = listener->server;
    tb_http_client_auth_t client_auth = server->options.ssl_client_auth;
    connection_state_t *conn = connection_state(connection);

    if (listener->tls && client_auth != TB_HTTP_CLIENT_AUTH_NONE) {
        cert_state_t cert = client_cert(connection, conn);
        if (cert == CERT_INVALID) {
            tb_api_reply_error(res, TB_ERR_UNAUTHORIZED,
                               "The client certificate does not verify against "
                               "listeners.https.ssl.ca.location");
            return true;
        }
        if (cert == CERT_ABSENT && client_auth == TB_HTTP_CLIENT_AUTH_REQUIRED) {
            tb_api_reply_error(res, TB_ERR_UNAUTHORIZED,
                               "A client certificate is required "
                               "(listeners.https.ssl.client.auth=required)");
            return true;
        }
    }
    if (strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0 &&
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                    MHD_HTTP_HEADER_ACCESS_CONTROL_REQUEST_METHOD) !=
            NULL &&
        cors_origin(server, connection) != NULL) {
        res->status = MHD_HTTP_NO_CONTENT;
        return true;
    }
    if (server->auth != NULL &&
        (route == NULL || (route->flags & TB_API_UNAUTHENTICATED) == 0)) {
        const char *header = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                         MHD_HTTP_HEADER_AUTHORIZATION);
        const union MHD_ConnectionInfo *client =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        int64_t wait_ms = 0;
        tb_auth_result_t result = tb_auth_check(
            server->auth, header, client != NULL ? client->client_addr : NULL, &wait_ms);
        if (result == TB_AUTH_THROTTLED) {
            tb_api_reply_error(res, TB_ERR_TOO_MANY,
                               "Too many failed authentication attempts from this "
                               "client: credentials are not checked for another %lld ms",
                               (long long)wait_ms);
            return true;
        }
        if (result != TB_AUTH_OK) {
            *challenge = tb_auth_challenge(server->auth);
            tb_api_reply_error(res, TB_ERR_UNAUTHORIZED,
                               result == TB_AUTH_MISSING
                                   ? "Authentication required: send %s credentials "
                                     "in the Authorization header"
                                   : "Invalid %s credentials",
                               server->options.auth == TB_AUTH_BEARER ? "Bearer"
                                                                      : "Basic");
            return true;
        }
    }
    return false;
}

/* Queues res (freeing its parts) with the CORS headers the request's
 * origin gets and, for a 401 of rest.auth, WWW-Authenticate. */
static enum MHD_Result send_response(const listener_t *listener,
                                     struct MHD_Connection *connection,
                                     const char *method, const char *url,
                                     tb_api_response_t *res, const char *challenge)
{
    const tb_http_options_t *options = &listener->server->options;
    char *text = NULL;
    size_t len = 0;
    const char *type = res->content_type ? res->content_type : "application/json";
    const char *origin = cors_origin(listener->server, connection);

    TB_LOG(TB_LOG_DEBUG, "tributary.http", "%s %s -> %u", method, url, res->status);
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
    if (challenge != NULL) {
        MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge);
    }
    if (res->retry_after_s > 0) {
        char seconds[16];
        snprintf(seconds, sizeof(seconds), "%u", res->retry_after_s);
        MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, seconds);
    }
    if (origin != NULL) {
        /* A listed origin may send credentials; "*" may not (browsers
         * refuse credentials with a wildcard anyway). */
        MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN,
                                origin);
        if (strcmp(origin, "*") != 0) {
            MHD_add_response_header(response, MHD_HTTP_HEADER_VARY,
                                    MHD_HTTP_HEADER_ORIGIN);
            MHD_add_response_header(
                response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
        }
    }
    if (origin != NULL && res->status == MHD_HTTP_NO_CONTENT &&
        strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0) {
        MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_METHODS,
                                is_set(options->cors_allow_methods)
                                    ? options->cors_allow_methods
                                    : CORS_DEFAULT_METHODS);
        MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_HEADERS,
                                CORS_ALLOW_HEADERS);
        MHD_add_response_header(response, MHD_HTTP_HEADER_ACCESS_CONTROL_MAX_AGE,
                                CORS_MAX_AGE);
    }
    enum MHD_Result result = MHD_queue_response(connection, res->status, response);
    MHD_destroy_response(response);
    json_decref(res->body);
    free(res->text);
    free(res->location);
    return result;
}

static void deferred_free(void *arg)
{
    deferred_t *d = arg;
    free(d->method);
    free(d->path);
    free(d->body);
    json_decref(d->query);
    free(d->authorization);
    free(d->forwarded_by);
    free(d->signature);
    free(d->signature_algorithm);
    free(d);
}

/* tb_http_call_fn: the write's route, on a handler thread. */
static void deferred_run(void *arg, tb_api_response_t *res)
{
    deferred_t *d = arg;
    tb_api_request_t req = {
        .method = d->method,
        .path = d->path,
        .query = d->query,
        .body = d->body,
        .body_len = d->body_len,
        .base_url = d->listener->base_url,
        .authorization = d->authorization,
        .forwarded_by = d->forwarded_by,
        .signature = d->signature,
        .signature_algorithm = d->signature_algorithm,
        .ctx = d->listener->server->options.ctx,
    };
    dispatch(d->listener, &req, res);
}

/* tb_http_ready_fn: the answer is in; the connection sends it. */
static void deferred_ready(void *arg)
{
    deferred_t *d = arg;
    MHD_resume_connection(d->connection);
}

static char *header_copy(struct MHD_Connection *connection, const char *name)
{
    const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
    return value != NULL ? strdup(value) : NULL;
}

/* Whether the request is a write, which the handler pool answers: any
 * method but GET and HEAD on a route that exists (a forward to the leader,
 * a claim, a stop or a store write may wait). *path_route: what
 * tb_http_route_find says. */
static bool is_write(const listener_t *listener, const char *url, const char *method,
                     const tb_api_route_t **path_route)
{
    const char *params[TB_API_MAX_PARAMS];
    char buf[TB_HTTP_PATH_BUF_SIZE];
    const tb_api_route_t *route =
        tb_http_route_find(listener->serves_admin, listener->admin_only, url, method, buf,
                           params, path_route);
    return route != NULL && strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
           strcmp(method, MHD_HTTP_METHOD_HEAD) != 0;
}

/* Hands the write to the handler pool and suspends its connection until
 * its answer is in. Returns false when out of memory (nothing suspended:
 * the caller answers). Takes the request's body and query. */
static bool defer(const listener_t *listener, struct MHD_Connection *connection,
                  const char *url, const char *method, request_state_t *state,
                  json_t *query)
{
    char what[512];
    deferred_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return false;
    }
    *d = (deferred_t){
        .listener = listener,
        .connection = connection,
        .method = strdup(method),
        .path = strdup(url),
        .body = state->body,
        .body_len = state->len,
        .query = json_incref(query),
        .authorization = header_copy(connection, MHD_HTTP_HEADER_AUTHORIZATION),
        .forwarded_by = header_copy(connection, TB_FORWARDED_HEADER),
        .signature = header_copy(connection, TB_SIGNATURE_HEADER),
        .signature_algorithm = header_copy(connection, TB_SIGNATURE_ALGORITHM_HEADER),
    };
    state->body = NULL;
    snprintf(what, sizeof(what), "%s %.400s", method, url);
    tb_http_call_t *call =
        d->method == NULL || d->path == NULL
            ? NULL
            : tb_http_call_new(listener->server->handlers, deferred_run, deferred_ready,
                               deferred_free, what, d);
    if (call == NULL) {
        state->body = d->body; /* the caller's again */
        d->body = NULL;
        deferred_free(d);
        return false;
    }
    state->call = call;
    MHD_suspend_connection(connection);
    tb_http_handlers_submit(listener->server->handlers, call);
    return true;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *connection,
                                      const char *url, const char *method,
                                      const char *version, const char *upload,
                                      size_t *upload_size, void **con_cls)
{
    const listener_t *listener = cls;
    const tb_http_options_t *options = &listener->server->options;
    request_state_t *state = *con_cls;
    tb_api_response_t res = {0};
    (void)version;

    if (state == NULL) {
        const char *challenge = NULL;
        const tb_api_route_t *path_route;
        const char *params[TB_API_MAX_PARAMS];
        char buf[TB_HTTP_PATH_BUF_SIZE];
        state = calloc(1, sizeof(request_state_t));
        *con_cls = state;
        if (state == NULL) {
            return MHD_NO;
        }
        atomic_fetch_add(&listener->server->in_flight, 1);
        connection_state_t *conn = connection_state(connection);
        if (conn != NULL && !conn->served) {
            conn->served = true; /* in flight first (drain reads unserved first) */
            atomic_fetch_sub(&listener->server->unserved, 1);
        }
        if (conn != NULL) { /* the headers are in: their deadline stops */
            tb_http_conn_request(listener->conns, conn->registered, true);
        }
        clock_gettime(CLOCK_MONOTONIC, &state->start);
        const tb_api_route_t *route =
            tb_http_route_find(listener->serves_admin, listener->admin_only, url, method,
                               buf, params, &path_route);
        if (!screen(listener, connection, method, route, &res, &challenge)) {
            return MHD_YES;
        }
        unsigned status = res.status;
        enum MHD_Result result =
            send_response(listener, connection, method, url, &res, challenge);
        tb_http_metrics_observe(path_route, method, status, &state->start);
        return result;
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
    if (state->call != NULL) { /* resumed: the handler pool's answer is in */
        tb_http_call_take(listener->server->handlers, state->call, &res);
        unsigned status = res.status;
        enum MHD_Result result =
            send_response(listener, connection, method, url, &res, NULL);
        tb_http_metrics_observe(state->path_route, method, status, &state->start);
        return result;
    }

    json_t *query = json_object();
    tb_api_request_t req = {
        .method = method,
        .path = url,
        .query = query,
        .body = state->body,
        .body_len = state->len,
        .base_url = listener->base_url,
        .authorization = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_AUTHORIZATION),
        .forwarded_by =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, TB_FORWARDED_HEADER),
        .signature =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, TB_SIGNATURE_HEADER),
        .signature_algorithm = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                           TB_SIGNATURE_ALGORITHM_HEADER),
        .ctx = options->ctx,
    };
    const tb_api_route_t *path_route = NULL;
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, tb_http_query_collect,
                              query);
    if (!state->too_large && is_write(listener, url, method, &state->path_route) &&
        defer(listener, connection, url, method, state, query)) {
        json_decref(query);
        return MHD_YES;
    }
    if (state->too_large) {
        const char *params[TB_API_MAX_PARAMS];
        char buf[TB_HTTP_PATH_BUF_SIZE];
        tb_http_route_find(listener->serves_admin, listener->admin_only, url, method, buf,
                           params, &path_route);
        tb_api_reply_error(&res, TB_ERR_TOO_LARGE,
                           "Request body is larger than %zu bytes "
                           "(rest.request.body.max.bytes)",
                           options->body_max_bytes);
    } else {
        path_route = dispatch(listener, &req, &res);
    }
    unsigned status = res.status;
    enum MHD_Result result = send_response(listener, connection, method, url, &res, NULL);
    json_decref(query);
    tb_http_metrics_observe(path_route, method, status, &state->start);
    return result;
}

static void request_completed(void *cls, struct MHD_Connection *connection,
                              void **con_cls, enum MHD_RequestTerminationCode code)
{
    const listener_t *listener = cls;
    request_state_t *state = *con_cls;
    (void)code;
    if (state != NULL) {
        if (state->call != NULL) {
            tb_http_call_release(listener->server->handlers, state->call);
        }
        free(state->body);
        free(state);
        *con_cls = NULL;
        atomic_fetch_sub(&listener->server->in_flight, 1);
        connection_state_t *conn = connection_state(connection);
        if (conn != NULL) { /* the next request's headers have their deadline */
            tb_http_conn_request(listener->conns, conn->registered, false);
        }
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

/* For an https URL, reads the certificate, key and CA of the https
 * listeners (once). */
static int tls_load(void *arg, const char *url, char *errstr, size_t errstr_size)
{
    tb_http_server_t *server = arg;
    const tb_http_options_t *options = &server->options;
    char scheme[16], host[256];
    unsigned port;
    size_t len;
    if (tb_http_listener_parse(url, scheme, sizeof(scheme), host, sizeof(host), &port,
                               errstr, errstr_size) != 0) {
        return -1;
    }
    if (strcmp(scheme, "https") != 0 || server->tls != NULL) {
        return 0;
    }
    if (!is_set(options->ssl_certificate_location) ||
        !is_set(options->ssl_key_location)) {
        snprintf(errstr, errstr_size,
                 "listener %s: an https listener needs "
                 "listeners.https.ssl.certificate.location and "
                 "listeners.https.ssl.key.location",
                 url);
        return -1;
    }
    if (options->ssl_client_auth != TB_HTTP_CLIENT_AUTH_NONE &&
        !is_set(options->ssl_ca_location)) {
        snprintf(errstr, errstr_size,
                 "listener %s: listeners.https.ssl.client.auth needs "
                 "listeners.https.ssl.ca.location",
                 url);
        return -1;
    }
    char serial[48];
    server->tls = tb_http_tls_create();
    if (server->tls == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    if (tb_http_tls_load(server->tls, options->ssl_certificate_location,
                         options->ssl_key_location, options->ssl_key_password, serial,
                         errstr, errstr_size) != 0 ||
        (options->ssl_client_auth != TB_HTTP_CLIENT_AUTH_NONE &&
         tb_http_tls_read_pem(options->ssl_ca_location, "listeners.https.ssl.ca.location",
                              &server->tls_ca, &len, errstr, errstr_size) != 0)) {
        return -1;
    }
    TB_LOG(TB_LOG_INFO, "tributary.http", "https listeners' certificate: serial %s",
           serial);
    return 0;
}

/* libmicrohttpd counts idle time in whole seconds: ms rounded up. */
static unsigned timeout_s(unsigned ms)
{
    return ms / 1000 + (ms % 1000 != 0);
}

/* A listening socket on addr, as libmicrohttpd makes its own: address
 * reuse, IPv6 only on an IPv6 address, non-blocking. MHD_INVALID_SOCKET
 * with errno set on failure. */
static MHD_socket listening_socket(const struct addrinfo *addr)
{
    int fd = socket(addr->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return MHD_INVALID_SOCKET;
    }
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
        (addr->ai_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) != 0) ||
        bind(fd, addr->ai_addr, addr->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return MHD_INVALID_SOCKET;
    }
    return fd;
}

/* Binds one listener URL; admin_only for an admin.listeners entry. Its
 * connections wait in the socket's backlog until listener_serve. */
static int listener_bind(tb_http_server_t *server, listener_t *listener, const char *url,
                         bool admin_only, char *errstr, size_t errstr_size)
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
    snprintf(port_text, sizeof(port_text), "%u", port);
    int rc = getaddrinfo(host[0] ? host : NULL, port_text, &hints, &addr);
    if (rc != 0) {
        snprintf(errstr, errstr_size, "listener %s: %s", url, gai_strerror(rc));
        return -1;
    }
    listener->socket = listening_socket(addr);
    listener->ipv6 = addr->ai_family == AF_INET6;
    freeaddrinfo(addr);
    if (listener->socket == MHD_INVALID_SOCKET) {
        snprintf(errstr, errstr_size, "listener %s: cannot bind: %s", url,
                 strerror(errno));
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bound_size = sizeof(bound);
    if (getsockname(listener->socket, (struct sockaddr *)&bound, &bound_size) != 0) {
        snprintf(errstr, errstr_size, "listener %s: cannot read its port: %s", url,
                 strerror(errno));
        close(listener->socket);
        return -1;
    }
    port = ntohs(bound.ss_family == AF_INET6
                     ? ((const struct sockaddr_in6 *)&bound)->sin6_port
                     : ((const struct sockaddr_in *)&bound)->sin_port);
    listener->port = port;
    listener->tls = strcmp(scheme, "https") == 0;
    if (!listener->tls && server->auth != NULL && !tb_http_host_is_loopback(host)) {
        TB_LOG(TB_LOG_WARN, "tributary.http",
               "listener %s is not https: rest.auth credentials cross the network "
               "in clear text",
               url);
    }
    listener->server = server;
    listener->admin_only = admin_only;
    listener->serves_admin = admin_only || server->options.admin_listeners == NULL;
    snprintf(listener->url, sizeof(listener->url), "%s", url);
    snprintf(listener->base_url, sizeof(listener->base_url), "%s://%s%s%s:%u", scheme,
             strchr(host, ':') ? "[" : "", host[0] ? host : "localhost",
             strchr(host, ':') ? "]" : "", port);
    return 0;
}

/* GnuTLS's question, at each handshake of an https listener: which
 * certificate and key (tb_http_tls.h). MHD makes the session's pointer its
 * connection, whose socket context (connection_notify, before the
 * handshake) names the listener. */
static int tls_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
                           int nreqs, const gnutls_pk_algorithm_t *pk_algos,
                           int pk_algos_length, gnutls_pcert_st **certs, unsigned *count,
                           gnutls_privkey_t *key)
{
    (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
    struct MHD_Connection *connection = gnutls_session_get_ptr(session);
    const union MHD_ConnectionInfo *info =
        connection != NULL
            ? MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT)
            : NULL;
    const connection_state_t *state = info != NULL ? info->socket_context : NULL;
    if (state == NULL) { /* out of memory at its accept: refused */
        return -1;
    }
    return tb_http_tls_select(state->listener->server->tls, certs, count, key);
}

int tb_http_tls_reload(tb_http_server_t *server, const char *key_password, char *serial,
                       char *errstr, size_t errstr_size)
{
    const tb_http_options_t *options = &server->options;
    if (server->tls == NULL) {
        return 1;
    }
    return tb_http_tls_load(server->tls, options->ssl_certificate_location,
                            options->ssl_key_location, key_password, serial, errstr,
                            errstr_size);
}

/* Starts answering on a bound listener; its daemon takes the socket. */
static int listener_serve(tb_http_server_t *server, listener_t *listener, char *errstr,
                          size_t errstr_size)
{
    struct MHD_OptionItem tls_options[6];
    size_t n = 0;
    if (listener->tls) {
        tls_options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0,
                                                   (void *)tls_certificate};
        tls_options[n++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, TLS_PRIORITIES};
        if (server->tls_ca != NULL) {
            /* libmicrohttpd then asks every client for a certificate
             * (GnuTLS's "request" mode); screen() decides what a missing
             * one means. */
            tls_options[n++] =
                (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, server->tls_ca};
        }
    }
    tls_options[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    listener->conns =
        tb_http_conns_create(listener->url, server->options.connections_per_client,
                             server->options.header_timeout_ms);
    if (listener->conns == NULL) {
        snprintf(errstr, errstr_size, "listener %s: cannot start: out of memory",
                 listener->url);
        return -1;
    }
    /* MHD_USE_POLL: select(), libmicrohttpd's default, cannot take a socket
     * numbered 1024 or above, and each connector's Kafka client holds a few
     * descriptors: with about 170 connectors the API refused every new
     * connection. Not epoll: libmicrohttpd 0.9.75's MHD_quiesce_daemon (see
     * MHD_USE_ITC) and its epoll loop both take the listening socket out of
     * the epoll set, unlocked, and the loser of that race aborts the process
     * ("Failed to remove listen FD from epoll set", seen on a worker stopped
     * right after it started). Its poll() loop quiesces through the ITC. */
    /* MHD_USE_ITC: tb_http_stop quiesces the daemon first */
    /* MHD_ALLOW_SUSPEND_RESUME: writes wait on the handler pool */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
                     MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
                     (listener->ipv6 ? MHD_USE_IPv6 : 0) |
                     (listener->tls ? MHD_USE_TLS : 0);
    listener->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle_request, listener, MHD_OPTION_EXTERNAL_LOGGER,
        mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, listener->socket,
        MHD_OPTION_THREAD_POOL_SIZE, server->options.threads,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_s(server->options.connection_timeout_ms),
        MHD_OPTION_CONNECTION_LIMIT, server->options.connections_max,
        MHD_OPTION_UNESCAPE_CALLBACK, tb_http_unescape_none, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, listener,
        MHD_OPTION_NOTIFY_CONNECTION, connection_notify, listener, MHD_OPTION_ARRAY,
        tls_options, MHD_OPTION_END);
    /* The daemon's now, also when it failed: libmicrohttpd closes it on its
     * failure paths (a worker that cannot serve stops at once). */
    listener->socket = MHD_INVALID_SOCKET;
    if (listener->daemon == NULL) {
        snprintf(errstr, errstr_size,
                 listener->tls ? "listener %s: cannot start (the certificate, key or key "
                                 "password rejected: see the line before)"
                               : "listener %s: cannot start (see the line before)",
                 listener->url);
        return -1;
    }
    TB_LOG(TB_LOG_INFO, "tributary.http", "REST API listening on %s (port %u)%s",
           listener->url, listener->port,
           listener->admin_only ? " (admin endpoints only)" : "");
    return 0;
}

typedef struct {
    tb_http_server_t *server;
    bool admin_only;
} bind_arg_t;

unsigned tb_http_port(const tb_http_server_t *server, const char *listener)
{
    for (size_t i = 0; i < server->count; i++) {
        if (!server->listeners[i].admin_only &&
            strcmp(server->listeners[i].url, listener) == 0) {
            return server->listeners[i].port;
        }
    }
    return 0;
}

static int bind_url(void *arg, const char *url, char *errstr, size_t errstr_size)
{
    bind_arg_t *start = arg;
    tb_http_server_t *server = start->server;
    if (server->count == MAX_LISTENERS) {
        snprintf(errstr, errstr_size,
                 "listeners: at most %d are supported (admin.listeners included)",
                 MAX_LISTENERS);
        return -1;
    }
    if (listener_bind(server, &server->listeners[server->count], url, start->admin_only,
                      errstr, errstr_size) != 0) {
        return -1;
    }
    server->count++;
    return 0;
}

/* Everything but binding: the exposure rule, the credentials file and the
 * TLS files, into server. */
static int server_prepare(tb_http_server_t *server, char *errstr, size_t errstr_size)
{
    const tb_http_options_t *options = &server->options;
    char reason[512];

    if (tb_http_check_exposure(options, errstr, errstr_size) != 0) {
        return -1;
    }
    if (options->connections_max < options->threads) {
        snprintf(errstr, errstr_size,
                 "rest.connections.max=%u is below rest.threads=%u: each REST thread "
                 "takes its share of the connections",
                 options->connections_max, options->threads);
        return -1;
    }
    if (options->auth != TB_AUTH_NONE && !is_set(options->auth_credentials_file)) {
        snprintf(errstr, errstr_size, "rest.auth=%s needs rest.auth.credentials.file",
                 options->auth == TB_AUTH_BEARER ? "bearer" : "basic");
        return -1;
    }
    if (options->auth != TB_AUTH_NONE) {
        server->auth = tb_auth_create(options->auth, options->auth_credentials_file,
                                      reason, sizeof(reason));
        if (server->auth == NULL) {
            snprintf(errstr, errstr_size, "rest.auth.credentials.file %s", reason);
            return -1;
        }
    }
    if (for_each_url(options->listeners, tls_load, server, errstr, errstr_size) != 0) {
        return -1;
    }
    if (is_set(options->admin_listeners)) {
        return for_each_url(options->admin_listeners, tls_load, server, errstr,
                            errstr_size);
    }
    return 0;
}

tb_http_server_t *tb_http_bind(const tb_http_options_t *options, char *errstr,
                               size_t errstr_size)
{
    tb_http_server_t *server = calloc(1, sizeof(*server));
    bind_arg_t main_listeners = {.server = server, .admin_only = false};
    bind_arg_t admin_listeners = {.server = server, .admin_only = true};

    if (server == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    server->options = *options;
    if (server_prepare(server, errstr, errstr_size) != 0 ||
        for_each_url(options->listeners, bind_url, &main_listeners, errstr,
                     errstr_size) != 0) {
        goto fail;
    }
    if (server->count == 0) {
        snprintf(errstr, errstr_size, "listeners: no listener configured");
        goto fail;
    }
    if (is_set(options->admin_listeners) &&
        for_each_url(options->admin_listeners, bind_url, &admin_listeners, errstr,
                     errstr_size) != 0) {
        goto fail;
    }
    return server;

fail:
    tb_http_stop(server);
    return NULL;
}

int tb_http_serve(tb_http_server_t *server, char *errstr, size_t errstr_size)
{
    const tb_http_options_t *options = &server->options;
    tb_api_routes(); /* build the route list before any request thread */
    tb_http_metrics_prepare();
    server->handlers = tb_http_handlers_create(options->request_timeout_ms > 0
                                                   ? options->request_timeout_ms
                                                   : REQUEST_TIMEOUT_DEFAULT_MS);
    if (server->handlers == NULL) {
        snprintf(errstr, errstr_size, "cannot start the REST handler threads");
        return -1;
    }
    for (size_t i = 0; i < server->count; i++) {
        if (listener_serve(server, &server->listeners[i], errstr, errstr_size) != 0) {
            return -1;
        }
    }
    TB_LOG(TB_LOG_INFO, "tributary.http",
           "REST API authentication: %s; admin endpoints: %s; CORS: %s",
           options->auth == TB_AUTH_BASIC    ? "basic"
           : options->auth == TB_AUTH_BEARER ? "bearer"
                                             : "none",
           options->admin_listeners == NULL   ? "on the listeners"
           : is_set(options->admin_listeners) ? "on admin.listeners only"
                                              : "disabled",
           is_set(options->cors_allow_origin) ? options->cors_allow_origin : "off");
    return 0;
}

/* Hands the daemon the connections the kernel completed on its quiesced
 * listening socket that it had not accepted yet: closing the socket would
 * reset them, and their clients would not know whether their request was
 * carried out. The socket is non-blocking (listening_socket). */
static void adopt_backlog(tb_http_server_t *server, const listener_t *listener,
                          MHD_socket listening)
{
    for (;;) {
        struct sockaddr_storage addr;
        socklen_t len = sizeof(addr);
        int fd = accept4(listening, (struct sockaddr *)&addr, &len, SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR) {
            continue;
        }
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                TB_LOG(TB_LOG_WARN, "tributary.rest",
                       "listener %s: cannot accept the connections waiting at the stop "
                       "(they are reset): %s",
                       listener->url, strerror(errno));
            }
            return;
        }
        atomic_fetch_add(&server->adopted, 1);
        if (MHD_add_connection(listener->daemon, fd, (struct sockaddr *)&addr, len) !=
            MHD_YES) { /* libmicrohttpd closed it and said why */
            atomic_fetch_sub(&server->adopted, 1);
        }
    }
}

/* Waits up to ms for no request to be in flight. */
static void wait_in_flight(tb_http_server_t *server, int64_t ms)
{
    int64_t deadline = tb_monotonic_ms() + ms;
    while (atomic_load(&server->in_flight) > 0 && tb_monotonic_ms() < deadline) {
        struct timespec pause = {0, DRAIN_POLL_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
}

/* Stops accepting connections, then waits until no request is in flight,
 * up to DRAIN_MS, so that a request accepted before the stop is answered:
 * also one whose connection was open but had not sent it yet, for up to
 * FIRST_REQUEST_MS (a connection silent that long is idle), and one whose
 * connection was still in the listening socket's backlog. */
static void drain(tb_http_server_t *server)
{
    for (size_t i = 0; i < server->count; i++) {
        listener_t *listener = &server->listeners[i];
        if (listener->daemon == NULL) { /* bound and never served, or failed to */
            if (listener->socket != MHD_INVALID_SOCKET) {
                close(listener->socket);
            }
            continue;
        }
        MHD_socket listening = MHD_quiesce_daemon(listener->daemon);
        if (listening != MHD_INVALID_SOCKET) {
            adopt_backlog(server, listener, listening);
            close(listening);
        }
    }
    int64_t started = tb_monotonic_ms();
    size_t silent = atomic_load(&server->adopted) + atomic_load(&server->unserved);
    if (silent > 0) {
        TB_LOG(TB_LOG_INFO, "tributary.rest",
               "waiting up to %d ms for the first request of %zu open connection(s)",
               FIRST_REQUEST_MS, silent);
    }
    size_t left = atomic_load(&server->in_flight);
    if (left > 0) {
        TB_LOG(TB_LOG_INFO, "tributary.rest", "answering %zu request(s) in flight", left);
    }
    for (;;) {
        int64_t waited = tb_monotonic_ms() - started;
        /* adopted, then unserved: a connection leaves each only once it is
         * in the next */
        bool unsent =
            (atomic_load(&server->adopted) > 0 || atomic_load(&server->unserved) > 0) &&
            waited < FIRST_REQUEST_MS;
        left = atomic_load(&server->in_flight);
        if ((left == 0 && !unsent) || waited >= DRAIN_MS) {
            break;
        }
        struct timespec pause = {0, DRAIN_POLL_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
    if (left > 0) {
        TB_LOG(TB_LOG_WARN, "tributary.rest",
               "stopping with %zu request(s) still in flight after %d ms", left,
               DRAIN_MS);
    }
}

void tb_http_stop(tb_http_server_t *server)
{
    if (server == NULL) {
        return;
    }
    drain(server);
    if (server->handlers != NULL) {
        /* the writes still waiting are answered (503), so that no
         * connection stays suspended as the daemons stop */
        tb_http_handlers_abort(server->handlers);
        wait_in_flight(server, ABORT_SEND_MS);
    }
    for (size_t i = 0; i < server->count; i++) {
        if (server->listeners[i].daemon != NULL) {
            MHD_stop_daemon(server->listeners[i].daemon);
        }
        tb_http_conns_destroy(server->listeners[i].conns); /* once all are closed */
    }
    tb_http_handlers_destroy(server->handlers); /* every call released */
    tb_auth_destroy(server->auth);
    tb_http_tls_destroy(server->tls);
    free(server->tls_ca);
    free(server);
}
