/* libpq connections and the replication stream (tb_pg_conn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <libpq-events.h>

#include "connectors/postgres/tb_pg_conn.h"
#include "connectors/libpq/tb_pg_wait.h"
#include "connectors/postgres/tb_pgoutput.h"
#include "core/tb_time.h"

/* What a connection keeps beside it: libpq instance data of
 * connection_event, freed with the connection. */
typedef struct {
    const tb_pg_options_t *o; /* its bounds */
    bool gave_up;
} connection_t;

static int connection_event(PGEventId id, void *info, void *pass)
{
    (void)pass;
    if (id == PGEVT_CONNDESTROY) {
        free(PQinstanceData(((PGEventConnDestroy *)info)->conn, connection_event));
    }
    return 1;
}

bool tb_pg_gave_up(PGconn *conn)
{
    const connection_t *c = PQinstanceData(conn, connection_event);
    return c != NULL && c->gave_up;
}

/* libpq's message without its trailing newline. */
static void copy_error(const char *what, const char *message, char *errstr,
                       size_t errstr_size)
{
    size_t n = strlen(message);
    while (n > 0 && (message[n - 1] == '\n' || message[n - 1] == ' ')) {
        n--;
    }
    snprintf(errstr, errstr_size, "%s: %.*s", what, (int)n, message);
}

PGconn *tb_pg_connect(const tb_pg_options_t *o, bool replication, char *errstr,
                      size_t errstr_size)
{
    char port[16], user_timeout[24];
    snprintf(port, sizeof(port), "%d", o->port);
    snprintf(user_timeout, sizeof(user_timeout), "%lld", (long long)o->query_timeout_ms);
    const char *keys[16] = {
        "host", "port", "user", "password", "dbname", "application_name", "options"};
    const char *values[16] = {
        o->host,
        port,
        o->user,
        o->password,
        o->dbname,
        "tributary",
        "-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=iso_8601 "
        "-c lc_monetary=C -c extra_float_digits=3"};
    size_t n = tb_pg_wait_keepalives(keys, values, 7, user_timeout);
    if (replication) {
        keys[n] = "replication";
        values[n++] = "database";
    }
    keys[n] = values[n] = NULL;
    PGconn *conn = PQconnectStartParams(keys, values, 0);
    connection_t *state = calloc(1, sizeof(*state));
    PostgresPollingStatusType polling =
        PGRES_POLLING_WRITING; /* as libpq says to begin */
    tb_pg_wait_rc_t rc = TB_PG_WAIT_FAILED;
    if (conn != NULL && state != NULL && PQstatus(conn) != CONNECTION_BAD) {
        rc = tb_pg_wait_connect(
            conn, &polling, tb_monotonic_ms() + TB_PG_CONNECT_TIMEOUT_MS, o->stopping);
    }
    if (rc == TB_PG_WAIT_DONE &&
        PQregisterEventProc(conn, connection_event, "tributary", NULL) != 0 &&
        PQsetInstanceData(conn, connection_event, state) != 0) {
        state->o = o;
        return conn;
    }
    free(state);
    char what[300];
    snprintf(what, sizeof(what), "cannot connect to PostgreSQL at %s:%d as %s", o->host,
             o->port, o->user);
    copy_error(what,
               rc == TB_PG_WAIT_EXPIRED   ? "no answer within 10 s"
               : rc == TB_PG_WAIT_STOPPED ? "the task is stopping"
               : conn != NULL             ? PQerrorMessage(conn)
                                          : "out of memory",
               errstr, errstr_size);
    PQfinish(conn);
    return NULL;
}

static PGresult *checked(PGconn *conn, PGresult *res, const char *what, char *errstr,
                         size_t errstr_size)
{
    ExecStatusType status = PQresultStatus(res);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK ||
        status == PGRES_COPY_BOTH) {
        return res;
    }
    copy_error(what, res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(conn),
               errstr, errstr_size);
    PQclear(res);
    return NULL;
}

/* The answer to a statement sent on conn (sent: what PQsend* returned),
 * waited for within the connection's bounds; checked. */
static PGresult *answer(PGconn *conn, int sent, const char *what, char *errstr,
                        size_t errstr_size)
{
    connection_t *c = PQinstanceData(conn, connection_event); /* tb_pg_connect's */
    tb_pg_wait_rc_t rc = TB_PG_WAIT_FAILED;
    PGresult *res = NULL;
    if (sent) { /* libpq refuses to send on a connection that gave up */
        res = tb_pg_wait_result(conn, tb_monotonic_ms() + c->o->query_timeout_ms,
                                c->o->stopping, &rc);
    }
    if (rc == TB_PG_WAIT_EXPIRED || rc == TB_PG_WAIT_STOPPED) {
        char message[128];
        snprintf(message, sizeof(message),
                 rc == TB_PG_WAIT_STOPPED
                     ? "the task is stopping"
                     : "no answer from the server within database.query.timeout.ms=%lld",
                 (long long)c->o->query_timeout_ms);
        c->gave_up = true;
        copy_error(what, message, errstr, errstr_size);
        return NULL;
    }
    return checked(conn, res, what, errstr, errstr_size);
}

PGresult *tb_pg_exec(PGconn *conn, const char *what, const char *sql, char *errstr,
                     size_t errstr_size)
{
    return answer(conn, PQsendQuery(conn, sql), what, errstr, errstr_size);
}

PGresult *tb_pg_exec1(PGconn *conn, const char *what, const char *sql, const char *param,
                      char *errstr, size_t errstr_size)
{
    const char *params[] = {param};
    return answer(conn, PQsendQueryParams(conn, sql, 1, NULL, params, NULL, NULL, 0),
                  what, errstr, errstr_size);
}

int tb_pg_slot_create(PGconn *conn, const char *slot, bool export, uint64_t *lsn,
                      char *snapshot, size_t snapshot_size, char *errstr,
                      size_t errstr_size)
{
    char sql[256];
    char *ident = PQescapeIdentifier(conn, slot, strlen(slot));
    snprintf(sql, sizeof(sql), "CREATE_REPLICATION_SLOT %s LOGICAL pgoutput %s",
             ident != NULL ? ident : slot,
             export ? "EXPORT_SNAPSHOT" : "NOEXPORT_SNAPSHOT");
    PQfreemem(ident);
    PGresult *res =
        tb_pg_exec(conn, "cannot create the replication slot", sql, errstr, errstr_size);
    if (res == NULL) {
        return -1;
    }
    /* slot_name, consistent_point, snapshot_name, output_plugin */
    int rc = tb_pg_lsn_parse(PQgetvalue(res, 0, 1), lsn);
    if (snapshot != NULL) {
        snprintf(snapshot, snapshot_size, "%s", PQgetvalue(res, 0, 2));
    }
    if (rc != 0) {
        snprintf(errstr, errstr_size, "the slot's consistent point %s is no LSN",
                 PQgetvalue(res, 0, 1));
    }
    PQclear(res);
    return rc;
}

int tb_pg_stream_start(PGconn *conn, const char *slot, const char *publication,
                       uint64_t lsn, char *errstr, size_t errstr_size)
{
    char sql[512], at[32];
    tb_pg_lsn_format(lsn, at, sizeof(at));
    char *ident = PQescapeIdentifier(conn, slot, strlen(slot));
    /* publication_names is a literal holding a list of identifiers */
    char *pub = PQescapeIdentifier(conn, publication, strlen(publication));
    char *literal = pub != NULL ? PQescapeLiteral(conn, pub, strlen(pub)) : NULL;
    snprintf(sql, sizeof(sql),
             "START_REPLICATION SLOT %s LOGICAL %s (proto_version '1', "
             "publication_names %s)",
             ident != NULL ? ident : "", at, literal != NULL ? literal : "''");
    PQfreemem(ident);
    PQfreemem(pub);
    PQfreemem(literal);
    PGresult *res =
        tb_pg_exec(conn, "cannot start streaming the slot", sql, errstr, errstr_size);
    if (res == NULL) {
        return -1;
    }
    PQclear(res);
    return 0;
}

/* Whether a stream that ended with res (NULL: none) lost its connection
 * (a connection exception, or an operator's intervention such as a server
 * shutdown or pg_terminate_backend) rather than failed for good. */
static bool connection_lost(PGconn *conn, const PGresult *res)
{
    const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return PQstatus(conn) == CONNECTION_BAD || state == NULL ||
           strncmp(state, "08", 2) == 0 || strncmp(state, "57", 2) == 0;
}

int tb_pg_stream_read(PGconn *conn, char **buf, char *errstr, size_t errstr_size)
{
    *buf = NULL;
    int n = PQgetCopyData(conn, buf, 1);
    if (n == 0) {
        if (PQconsumeInput(conn) == 0) {
            copy_error("the replication connection failed", PQerrorMessage(conn), errstr,
                       errstr_size);
            return TB_PG_STREAM_LOST;
        }
        n = PQgetCopyData(conn, buf, 1);
    }
    if (n >= 0) {
        return n;
    }
    if (n == -1) { /* the server ended the stream: its result says why */
        PGresult *res = PQgetResult(conn);
        copy_error("the server ended the replication stream",
                   res != NULL && PQresultErrorMessage(res)[0] != '\0'
                       ? PQresultErrorMessage(res)
                       : "no reason given",
                   errstr, errstr_size);
        bool lost = connection_lost(conn, res);
        PQclear(res);
        return lost ? TB_PG_STREAM_LOST : TB_PG_STREAM_FAILED;
    }
    copy_error("the replication connection failed", PQerrorMessage(conn), errstr,
               errstr_size);
    return TB_PG_STREAM_LOST;
}

int tb_pg_stream_status(PGconn *conn, uint64_t lsn, bool reply, char *errstr,
                        size_t errstr_size)
{
    uint8_t msg[TB_PG_STATUS_LEN];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    int64_t now_us = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec - TB_PG_EPOCH_OFFSET_US;
    tb_pg_status_update(msg, lsn, now_us, reply);
    if (PQputCopyData(conn, (const char *)msg, sizeof(msg)) != 1 || PQflush(conn) < 0) {
        copy_error("cannot send the slot's flush position", PQerrorMessage(conn), errstr,
                   errstr_size);
        return -1;
    }
    return 0;
}
