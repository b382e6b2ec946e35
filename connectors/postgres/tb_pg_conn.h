/*
 * tb_pg_conn.h - libpq connections of the PostgreSQL source: a plain one
 * (catalog queries and the snapshot) and a replication one (the slot and
 * its stream), both in UTC with ISO dates, ISO 8601 intervals and money in
 * the C locale, as tb_pg_types.h reads them.
 *
 * The stream is read without blocking: tb_pg_stream_read() takes what has
 * arrived and returns at once. Every other wait is bounded (tb_pg_wait.h):
 * connecting by TB_PG_CONNECT_TIMEOUT_MS, a statement by the options'
 * database.query.timeout.ms, and either by one slice once the task is
 * stopping. Errors come back in errstr as libpq words them; the password is
 * never part of them.
 */
#ifndef TB_PG_CONN_H
#define TB_PG_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "connectors/postgres/tb_pg_config.h"

#define TB_PG_CONNECT_TIMEOUT_MS 10000

/* Opens a connection (replication: a logical replication connection to
 * the database), non-blocking, with TCP keepalives. NULL with errstr.
 * Close with PQfinish(). The connection borrows o for its life. */
PGconn *tb_pg_connect(const tb_pg_options_t *o, bool replication, char *errstr,
                      size_t errstr_size);

/* Whether a wait on conn gave up (no answer within
 * database.query.timeout.ms, or the task stopping): conn is then in the
 * middle of a statement and good for nothing but PQfinish. */
bool tb_pg_gave_up(PGconn *conn);

/* Runs sql; returns its result (PQclear() it) when it succeeded, else NULL
 * with "<what>: <server's message>" in errstr. */
PGresult *tb_pg_exec(PGconn *conn, const char *what, const char *sql, char *errstr,
                     size_t errstr_size);

/* As tb_pg_exec with one text parameter ($1). */
PGresult *tb_pg_exec1(PGconn *conn, const char *what, const char *sql, const char *param,
                      char *errstr, size_t errstr_size);

/* Creates a logical slot with pgoutput on a replication connection. With
 * export, the snapshot it exports (valid until the next command on conn)
 * goes to snapshot (at least 64 bytes). *lsn gets the consistent point.
 * Returns 0, or -1 with errstr. */
int tb_pg_slot_create(PGconn *conn, const char *slot, bool export, uint64_t *lsn,
                      char *snapshot, size_t snapshot_size, char *errstr,
                      size_t errstr_size);

/* Starts streaming slot from lsn with publication (pgoutput proto_version
 * 1). Returns 0, or -1 with errstr. */
int tb_pg_stream_start(PGconn *conn, const char *slot, const char *publication,
                       uint64_t lsn, char *errstr, size_t errstr_size);

/* The next CopyData message that has arrived: returns its length with *buf
 * (PQfreemem() it), 0 when none has, TB_PG_STREAM_LOST when the connection
 * was lost (reconnecting may help), or TB_PG_STREAM_FAILED when the server
 * refused to go on (errstr says why). Never blocks. */
#define TB_PG_STREAM_FAILED (-1)
#define TB_PG_STREAM_LOST (-2)
int tb_pg_stream_read(PGconn *conn, char **buf, char *errstr, size_t errstr_size);

/* Sends a standby status update: everything up to lsn is flushed. Returns
 * 0, or -1 with errstr. */
int tb_pg_stream_status(PGconn *conn, uint64_t lsn, bool reply, char *errstr,
                        size_t errstr_size);

#endif
