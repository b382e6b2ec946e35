/*
 * tb_http_conns.h - a REST listener's open connections, before and between
 * requests: what libmicrohttpd does not bound by itself.
 *
 * - Per client: a connection beyond rest.connections.per.client.max of its
 *   client is shut down as soon as it is registered. A client is an IPv4
 *   address, or the /64 of an IPv6 one (a host commonly holds a whole /64,
 *   so counting IPv6 addresses one by one would bound nothing).
 * - The header deadline: a connection whose request's headers have not all
 *   arrived within rest.request.header.timeout.ms, counted from its accept
 *   or from the end of its previous request, is shut down whatever it sent
 *   meanwhile (libmicrohttpd's own timeout is an idle one, which a byte a
 *   second resets). A timer thread checks every TB_HTTP_SWEEP_MS.
 *
 * A connection is shut down with shutdown(2): libmicrohttpd then reads its
 * end and closes it as usual. Closures are logged together, at most once a
 * minute, never one line per connection.
 */
#ifndef TB_HTTP_CONNS_H
#define TB_HTTP_CONNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define TB_HTTP_SWEEP_MS 200

/* Byte 0 the family (4 or 6), then the IPv4 address or the IPv6 /64. */
#define TB_HTTP_CLIENT_KEY_SIZE 9

/* The client addr counts as (an IPv4-mapped IPv6 address is its IPv4
 * address). Returns 0, or -1 for another family (then the connection
 * counts for no client). */
int tb_http_client_key(const struct sockaddr *addr, unsigned char *key);

typedef struct tb_http_conns tb_http_conns_t;
typedef struct tb_http_conn tb_http_conn_t;

/* The registry of one listener (url, borrowed, names it in the log), with
 * its timer thread. NULL on no memory or no thread. */
tb_http_conns_t *tb_http_conns_create(const char *url, unsigned per_client,
                                      unsigned header_timeout_ms);

/* Stops the timer; every connection must be closed already (the daemon
 * stopped). NULL is a no-op. */
void tb_http_conns_destroy(tb_http_conns_t *conns);

/* Registers a connection accepted on fd from addr, waiting for its first
 * request's headers; shuts it down at once when its client holds
 * per_client connections already. NULL on no memory (the connection then
 * goes unbounded by the registry; libmicrohttpd's idle timeout remains).
 * Thread-safe. */
tb_http_conn_t *tb_http_conn_open(tb_http_conns_t *conns, int fd,
                                  const struct sockaddr *addr);

/* A request's headers arrived (its deadline no longer runs), or its answer
 * is done (the next request's deadline starts). NULL conn is a no-op. */
void tb_http_conn_request(tb_http_conns_t *conns, tb_http_conn_t *conn, bool begins);

/* Unregisters and frees conn, before its socket is closed. NULL is a
 * no-op. */
void tb_http_conn_close(tb_http_conns_t *conns, tb_http_conn_t *conn);

#endif
