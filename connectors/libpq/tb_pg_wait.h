/*
 * tb_pg_wait.h - libpq in bounded waits, for every PostgreSQL client of
 * tributary (the CDC source in connectors/postgres/, the JDBC sink's dialect in
 * connectors/jdbc/jdbc_pg.c).
 *
 * A connection is used in libpq's non-blocking mode: connecting, sending a
 * statement, COPY data and collecting results each wait on the
 * connection's socket in slices of at most TB_PG_WAIT_SLICE_MS, until a
 * deadline or until the task is being stopped, whichever comes first. A
 * server that stops answering without closing its sockets (a frozen
 * process, a lost network) so holds its caller until the deadline, and a
 * stopping task at most one slice.
 *
 * A wait that expired or was stopped leaves the connection in the middle of
 * a statement: the caller drops it (PQfinish never blocks on a
 * non-blocking connection). No cancel request is sent: libpq 15's
 * PQcancel connects to the same silent server and blocks on it; the
 * server rolls the open transaction back when it reads the closed socket.
 *
 * Every connection also asks the kernel to notice a peer that vanished:
 * TCP keepalives (TB_PG_WAIT_KEEPALIVE_IDLE_S, then every
 * TB_PG_WAIT_KEEPALIVE_INTERVAL_S, TB_PG_WAIT_KEEPALIVE_COUNT probes) and
 * tcp_user_timeout (sent data unacknowledged that long ends the
 * connection).
 */
#ifndef TB_PG_WAIT_H
#define TB_PG_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#define TB_PG_WAIT_SLICE_MS 100
#define TB_PG_WAIT_KEEPALIVE_IDLE_S 30
#define TB_PG_WAIT_KEEPALIVE_INTERVAL_S 10
#define TB_PG_WAIT_KEEPALIVE_COUNT 3

/* The keywords tb_pg_wait_keepalives adds. */
#define TB_PG_WAIT_KEEPALIVE_KEYWORDS 5

typedef enum {
    TB_PG_WAIT_DONE = 0,
    TB_PG_WAIT_FAILED,  /* libpq failed: PQerrorMessage says why */
    TB_PG_WAIT_EXPIRED, /* the deadline passed first */
    TB_PG_WAIT_STOPPED, /* the task is being stopped */
} tb_pg_wait_rc_t;

/* Appends the keepalive keywords and tcp_user_timeout (user_timeout_ms,
 * as text, which the caller keeps alive while libpq reads the arrays) to
 * keywords and values at index n; there must be room for
 * TB_PG_WAIT_KEEPALIVE_KEYWORDS more. Returns the new count. */
size_t tb_pg_wait_keepalives(const char **keywords, const char **values, size_t n,
                             const char *user_timeout_ms);

/* Drives a connection that PQconnectStartParams started: *polling is what
 * PQconnectPoll said last (PGRES_POLLING_WRITING to begin). DONE once
 * connected (the connection is then made non-blocking), FAILED when libpq
 * gave up, EXPIRED when until_ms (tb_monotonic_ms) came first, STOPPED
 * when *stopping (NULL: never) was set. */
tb_pg_wait_rc_t tb_pg_wait_connect(PGconn *conn, PostgresPollingStatusType *polling,
                                   int64_t until_ms, const atomic_bool *stopping);

/* After a PQsend* call on a non-blocking connection: sends what is queued
 * and collects the results as PQexec does (the last one; the start of a
 * COPY ends the wait), until until_ms. Returns the result (PQclear it) with
 * *rc DONE, or NULL with *rc saying why. */
PGresult *tb_pg_wait_result(PGconn *conn, int64_t until_ms, const atomic_bool *stopping,
                            tb_pg_wait_rc_t *rc);

/* PQputCopyData and PQputCopyEnd (error NULL: a good end), waiting for the
 * socket to take the data until until_ms. */
tb_pg_wait_rc_t tb_pg_wait_copy_data(PGconn *conn, const char *data, int len,
                                     int64_t until_ms, const atomic_bool *stopping);
tb_pg_wait_rc_t tb_pg_wait_copy_end(PGconn *conn, const char *error, int64_t until_ms,
                                    const atomic_bool *stopping);

#endif
