/*
 * tb_pg_snapshot.h - the initial snapshot: every row of the captured
 * tables, read through a cursor per table in one REPEATABLE READ
 * transaction that adopts the snapshot the slot's creation exported, so
 * that the stream from the slot's consistent point continues exactly where
 * the snapshot's view ends.
 *
 * Rows come one at a time, each with Debezium's snapshot marker (first,
 * first_in_data_collection, true, last_in_data_collection, last), which
 * needs one row of lookahead. Rows are not copied: a fetch is kept while a
 * row of it may be handed out.
 */
#ifndef TB_PG_SNAPSHOT_H
#define TB_PG_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "connectors/postgres/tb_pg_catalog.h"
#include "connectors/postgres/tb_pg_relation.h"

typedef struct tb_pg_snapshot tb_pg_snapshot_t;

/* One row, owned by the snapshot until the next call. */
typedef struct {
    size_t table; /* index into the tables given */
    tb_pg_cell_t *cells;
    size_t ncells;
    const char *marker; /* Debezium's SnapshotRecord, lower case */
} tb_pg_snapshot_row_t;

/* Begins the snapshot transaction on conn (borrowed; it stays in the
 * transaction until the snapshot's end, or until the caller closes it),
 * adopting exported (NULL: the
 * transaction's own view). tables (borrowed) are read in order, fetch rows
 * at a time. *xid gets the transaction's id. NULL with errstr. */
tb_pg_snapshot_t *tb_pg_snapshot_begin(PGconn *conn, const char *exported,
                                       const tb_pg_table_t *tables, size_t ntables,
                                       int fetch, int64_t *xid, char *errstr,
                                       size_t errstr_size);

/* The next row: 1 with *row, 0 when every table was read (the transaction
 * is then committed), -1 with errstr. */
int tb_pg_snapshot_next(tb_pg_snapshot_t *s, const tb_pg_snapshot_row_t **row,
                        char *errstr, size_t errstr_size);

/* Frees s, without a word to the server (which may not answer): a
 * transaction still open ends with its connection, which the caller
 * closes. NULL is a no-op. */
void tb_pg_snapshot_destroy(tb_pg_snapshot_t *s);

#endif
