/*
 * tb_http.h - the REST listeners, over libmicrohttpd.
 *
 * Parses `listeners` (Connect's syntax: comma-separated http(s)://host:port),
 * accepts requests, enforces the body limit, matches routes from
 * tb_api_routes() and writes replies. One libmicrohttpd daemon per listener,
 * each with a small thread pool of its own.
 *
 * Security, in the order a request meets it:
 * - A listener holds at most connections_max connections (more wait in the
 *   listening socket's backlog); each client (an IPv4 address, or an IPv6
 *   /64) at most connections_per_client of them (more are closed at
 *   accept); a connection whose request's headers took header_timeout_ms
 *   is closed, trickled bytes or not (tb_http_conns.h), and one idle for
 *   connection_timeout_ms too.
 * - https:// listeners use libmicrohttpd's TLS (GnuTLS) with the PEM
 *   certificate and key read into memory at start and again by
 *   tb_http_tls_reload (tb_http_tls.h), TLS 1.2 and 1.3 only. With a CA and
 * client authentication "requested", a client certificate is asked for and, when one is
 * presented, must verify against the CA; "required" also refuses a request without one.
 * Either refusal is a 401 (the TLS handshake itself completes: libmicrohttpd only offers
 * GnuTLS's "request" mode).
 * - CORS (off unless access.control.allow.origin is set): a preflight
 *   OPTIONS from an allowed origin is answered 204 without authentication;
 *   every reply to an allowed origin carries Access-Control-Allow-Origin.
 * - rest.auth: a request without valid credentials gets 401 with
 *   WWW-Authenticate, before its body is read; a client backing off after
 *   failed attempts gets 429 without its credentials being checked
 *   (tb_auth.h: the cache of verified headers and the per-client backoff).
 * - admin.listeners: admin routes are served on the main listeners, on
 *   their own listeners only (404 elsewhere), or nowhere (404).
 */
#ifndef TB_HTTP_H
#define TB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "api/tb_api.h"
#include "server/tb_auth.h"

typedef struct tb_http_server tb_http_server_t;

typedef enum {
    TB_HTTP_CLIENT_AUTH_NONE = 0,
    TB_HTTP_CLIENT_AUTH_REQUESTED,
    TB_HTTP_CLIENT_AUTH_REQUIRED,
} tb_http_client_auth_t;

/* Every string is borrowed and must outlive the server; NULL means unset. */
typedef struct {
    const char *listeners; /* e.g. "http://127.0.0.1:8083" */
    /* NULL: admin routes on the listeners; "": admin routes off; otherwise
     * listeners serving the admin routes only. */
    const char *admin_listeners;
    size_t body_max_bytes;           /* larger bodies get 413 */
    unsigned threads;                /* per listener */
    unsigned connections_max;        /* open at once, per listener */
    unsigned connections_per_client; /* at once, per client (IPv6: per /64) */
    unsigned connection_timeout_ms;  /* idle connections closed after it */
    unsigned header_timeout_ms;      /* for a request's headers to arrive */
    long long request_timeout_ms;    /* a write's deadline (tb_http_handlers.h);
                                        0: 90000, rest.request.timeout.ms's default */
    tb_auth_mode_t auth;             /* rest.auth */
    const char *auth_credentials_file;
    bool allow_unauthenticated_remote;
    /* PEM files of every https:// listener. */
    const char *ssl_certificate_location;
    const char *ssl_key_location;
    const char *ssl_key_password; /* a secret: never logged */
    const char *ssl_ca_location;
    tb_http_client_auth_t ssl_client_auth;
    /* CORS: "" or NULL is off, "*" any origin, else a comma-separated list. */
    const char *cors_allow_origin;
    const char *cors_allow_methods; /* "" or NULL: GET,POST,HEAD */
    const tb_api_context_t *ctx;    /* borrowed; must outlive the server */
} tb_http_options_t;

/* Parses "none", "requested" or "required" (any case); -1 when unknown. */
int tb_http_client_auth_parse(const char *text, tb_http_client_auth_t *out);

/* Is host (as tb_http_listener_parse returns it) a loopback address:
 * 127.0.0.0/8, ::1 or localhost? "" (every interface) is not. */
bool tb_http_host_is_loopback(const char *host);

/* Refuses options that would serve the API to other hosts unauthenticated:
 * a listener or admin listener on a non-loopback address while rest.auth is
 * none, unless allow_unauthenticated_remote is set (an https listener with
 * client authentication required counts as authenticated). Returns -1 and
 * fills errstr, naming rest.auth and rest.allow.unauthenticated.remote;
 * also -1 when a listener does not parse. Starts nothing. */
int tb_http_check_exposure(const tb_http_options_t *options, char *errstr,
                           size_t errstr_size);

/* Checks exposure (as tb_http_check_exposure), the credentials file and
 * the TLS files (a key password is only tried by tb_http_serve), then binds
 * every listener and admin listener, before the worker starts anything:
 * its port is its own from then on, and connections wait in the backlog
 * until tb_http_serve. Returns NULL and fills errstr, naming the key or the
 * listener, on the first problem. */
tb_http_server_t *tb_http_bind(const tb_http_options_t *options, char *errstr,
                               size_t errstr_size);

/* The port listener (a URL of listeners, as configured) is bound to: the
 * kernel's pick when it names port 0; 0 when server has no such listener. */
unsigned tb_http_port(const tb_http_server_t *server, const char *listener);

/* Starts answering on the bound listeners. Returns -1 and fills errstr,
 * naming the listener, when one cannot start (its TLS key rejected). */
int tb_http_serve(tb_http_server_t *server, char *errstr, size_t errstr_size);

/* Stops accepting, answers the requests in flight (for up to 10 s: a
 * worker stopped by SIGTERM answers what it accepted), frees; also a
 * server bound and never served. NULL is a no-op. */
void tb_http_stop(tb_http_server_t *server);

/* Reads the https listeners' certificate and key files again (the paths
 * of the options; key_password, borrowed, decrypts the key: NULL when it
 * is not encrypted) and makes them the ones every later handshake gets;
 * connections already open keep theirs. Returns 0 (serial, at least 41
 * bytes, gets the new certificate's serial number in hex), 1 when no
 * listener is https, or -1 with errstr naming the key at fault: the
 * current certificate stays. */
int tb_http_tls_reload(tb_http_server_t *server, const char *key_password, char *serial,
                       char *errstr, size_t errstr_size);

/* Splits one listener URL into scheme, host and port. Returns -1 and fills
 * errstr when it is not http(s)://host:port. host is "" for "http://:8083",
 * and IPv6 hosts come without brackets. */
int tb_http_listener_parse(const char *listener, char *scheme, size_t scheme_size,
                           char *host, size_t host_size, unsigned *port, char *errstr,
                           size_t errstr_size);

#endif
