/* libpq connections and the replication stream (tb_pg_conn.h). */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "connectors/postgres/tb_pg_conn.h"
#include "connectors/postgres/tb_pgoutput.h"

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
    char port[16];
    snprintf(port, sizeof(port), "%d", o->port);
    const char *keys[] = {"host",
                          "port",
                          "user",
                          "password",
                          "dbname",
                          "application_name",
                          "options",
                          "connect_timeout",
                          replication ? "replication" : NULL,
                          NULL};
    const char *values[] = {o->host,
                            port,
                            o->user,
                            o->password,
                            o->dbname,
                            "tributary",
                            "-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=iso_8601 "
                            "-c lc_monetary=C -c extra_float_digits=3",
                            "10",
                            "database",
                            NULL};
    PGconn *conn = PQconnectdbParams(keys, values, 0);
    if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
        char what[300];
        snprintf(what, sizeof(what), "cannot connect to PostgreSQL at %s:%d as %s",
                 o->host, o->port, o->user);
        copy_error(what, conn != NULL ? PQerrorMessage(conn) : "out of memory", errstr,
                   errstr_size);
        PQfinish(conn);
        return NULL;
    }
    return conn;
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

PGresult *tb_pg_exec(PGconn *conn, const char *what, const char *sql, char *errstr,
                     size_t errstr_size)
{
    return checked(conn, PQexec(conn, sql), what, errstr, errstr_size);
}

PGresult *tb_pg_exec1(PGconn *conn, const char *what, const char *sql, const char *param,
                      char *errstr, size_t errstr_size)
{
    const char *params[] = {param};
    return checked(conn, PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0), what,
                   errstr, errstr_size);
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
    if (PQsetnonblocking(conn, 1) != 0) {
        copy_error("cannot make the stream non-blocking", PQerrorMessage(conn), errstr,
                   errstr_size);
        return -1;
    }
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
