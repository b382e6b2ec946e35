/* libpq in bounded waits (tb_pg_wait.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>

#include "connectors/libpq/tb_pg_wait.h"
#include "core/tb_time.h"

#define TEXT(x) #x
#define NUMBER(x) TEXT(x)

size_t tb_pg_wait_keepalives(const char **keywords, const char **values, size_t n,
                             const char *user_timeout_ms)
{
    static const char *const names[] = {"keepalives", "keepalives_idle",
                                        "keepalives_interval", "keepalives_count"};
    static const char *const settings[] = {"1", NUMBER(TB_PG_WAIT_KEEPALIVE_IDLE_S),
                                           NUMBER(TB_PG_WAIT_KEEPALIVE_INTERVAL_S),
                                           NUMBER(TB_PG_WAIT_KEEPALIVE_COUNT)};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        keywords[n] = names[i];
        values[n++] = settings[i];
    }
    keywords[n] = "tcp_user_timeout";
    values[n++] = user_timeout_ms;
    return n;
}

/* Waits for events on conn's socket, a slice at a time. */
static tb_pg_wait_rc_t wait_socket(PGconn *conn, short events, int64_t until_ms,
                                   const atomic_bool *stopping)
{
    for (;;) {
        if (stopping != NULL && atomic_load(stopping)) {
            return TB_PG_WAIT_STOPPED;
        }
        int64_t left = until_ms - tb_monotonic_ms();
        if (left <= 0) {
            return TB_PG_WAIT_EXPIRED;
        }
        struct pollfd fd = {.fd = PQsocket(conn), .events = events};
        if (fd.fd < 0) {
            return TB_PG_WAIT_FAILED;
        }
        int ready =
            poll(&fd, 1, (int)(left < TB_PG_WAIT_SLICE_MS ? left : TB_PG_WAIT_SLICE_MS));
        if (ready > 0) {
            return TB_PG_WAIT_DONE;
        }
        if (ready < 0 && errno != EINTR) {
            return TB_PG_WAIT_FAILED;
        }
    }
}

tb_pg_wait_rc_t tb_pg_wait_connect(PGconn *conn, PostgresPollingStatusType *polling,
                                   int64_t until_ms, const atomic_bool *stopping)
{
    for (;;) {
        if (*polling == PGRES_POLLING_OK) {
            return PQsetnonblocking(conn, 1) == 0 ? TB_PG_WAIT_DONE : TB_PG_WAIT_FAILED;
        }
        if (*polling == PGRES_POLLING_FAILED) {
            return TB_PG_WAIT_FAILED;
        }
        tb_pg_wait_rc_t rc =
            wait_socket(conn, *polling == PGRES_POLLING_READING ? POLLIN : POLLOUT,
                        until_ms, stopping);
        if (rc != TB_PG_WAIT_DONE) {
            return rc;
        }
        *polling = PQconnectPoll(conn);
    }
}

/* Sends what libpq queued, reading what arrives meanwhile (a server that
 * answers while it is sent to must not block on a full socket either). */
static tb_pg_wait_rc_t flush(PGconn *conn, int64_t until_ms, const atomic_bool *stopping)
{
    int pending;
    while ((pending = PQflush(conn)) == 1) {
        tb_pg_wait_rc_t rc = wait_socket(conn, POLLIN | POLLOUT, until_ms, stopping);
        if (rc != TB_PG_WAIT_DONE) {
            return rc;
        }
        if (PQconsumeInput(conn) == 0) {
            return TB_PG_WAIT_FAILED;
        }
    }
    return pending == 0 ? TB_PG_WAIT_DONE : TB_PG_WAIT_FAILED;
}

PGresult *tb_pg_wait_result(PGconn *conn, int64_t until_ms, const atomic_bool *stopping,
                            tb_pg_wait_rc_t *rc)
{
    PGresult *last = NULL;
    *rc = flush(conn, until_ms, stopping);
    while (*rc == TB_PG_WAIT_DONE) {
        while (*rc == TB_PG_WAIT_DONE && PQisBusy(conn)) {
            *rc = wait_socket(conn, POLLIN, until_ms, stopping);
            if (*rc == TB_PG_WAIT_DONE && PQconsumeInput(conn) == 0) {
                *rc = TB_PG_WAIT_FAILED;
            }
        }
        PGresult *res = *rc == TB_PG_WAIT_DONE ? PQgetResult(conn) : NULL;
        if (res == NULL) {
            break;
        }
        PQclear(last);
        last = res;
        ExecStatusType status = PQresultStatus(res);
        if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT ||
            status == PGRES_COPY_BOTH || PQstatus(conn) == CONNECTION_BAD) {
            break;
        }
    }
    if (*rc == TB_PG_WAIT_DONE && last == NULL) {
        *rc = TB_PG_WAIT_FAILED;
    }
    if (*rc != TB_PG_WAIT_DONE) {
        PQclear(last);
        last = NULL;
    }
    return last;
}

tb_pg_wait_rc_t tb_pg_wait_copy_data(PGconn *conn, const char *data, int len,
                                     int64_t until_ms, const atomic_bool *stopping)
{
    int queued;
    while ((queued = PQputCopyData(conn, data, len)) == 0) {
        tb_pg_wait_rc_t rc = flush(conn, until_ms, stopping);
        if (rc != TB_PG_WAIT_DONE) {
            return rc;
        }
    }
    return queued == 1 ? TB_PG_WAIT_DONE : TB_PG_WAIT_FAILED;
}

tb_pg_wait_rc_t tb_pg_wait_copy_end(PGconn *conn, const char *error, int64_t until_ms,
                                    const atomic_bool *stopping)
{
    int queued;
    while ((queued = PQputCopyEnd(conn, error)) == 0) {
        tb_pg_wait_rc_t rc = flush(conn, until_ms, stopping);
        if (rc != TB_PG_WAIT_DONE) {
            return rc;
        }
    }
    return queued == 1 ? flush(conn, until_ms, stopping) : TB_PG_WAIT_FAILED;
}
