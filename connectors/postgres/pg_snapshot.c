/* The initial snapshot (tb_pg_snapshot.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_conn.h"
#include "connectors/postgres/tb_pg_snapshot.h"

/* A row of a fetched result, which is kept while the row is. */
typedef struct {
    bool present;
    size_t table;
    PGresult *res;
    int row;
} row_ref_t;

struct tb_pg_snapshot {
    PGconn *conn;
    const tb_pg_table_t *tables;
    size_t ntables;
    int fetch;
    /* the raw reader: the table being read, its open cursor and last fetch */
    size_t table;
    bool cursor_open;
    PGresult *batch;
    int batch_row;
    bool batch_full; /* the last fetch returned fetch rows: more may follow */
    /* the fetch before batch: the row handed out may still be one of its */
    PGresult *previous;
    /* the row handed out, the one after it, and the table last handed out */
    row_ref_t current;
    row_ref_t ahead;
    bool started;
    bool any_returned;
    size_t last_table;
    tb_pg_cell_t *cells; /* the current row's, pointing into its result */
    size_t cells_cap;
    tb_pg_snapshot_row_t row;
};

/* The cells of ref's row, into s->cells (the values stay in the result,
 * NUL-terminated as libpq keeps them). 0, or -1 on no memory. */
static int row_cells(tb_pg_snapshot_t *s, const row_ref_t *ref)
{
    size_t n = (size_t)PQnfields(ref->res);
    if (n + 1 > s->cells_cap) {
        tb_pg_cell_t *grown = realloc(s->cells, (n + 1) * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        s->cells = grown;
        s->cells_cap = n + 1;
    }
    for (size_t i = 0; i < n; i++) {
        bool null = PQgetisnull(ref->res, ref->row, (int)i);
        s->cells[i] =
            (tb_pg_cell_t){.data = null ? NULL : PQgetvalue(ref->res, ref->row, (int)i),
                           .len = (size_t)PQgetlength(ref->res, ref->row, (int)i)};
    }
    s->row.cells = s->cells;
    s->row.ncells = n;
    return 0;
}

/* Done with the batch: kept as previous while a row of it may be handed
 * out (a batch with no rows has none). */
static void retire_batch(tb_pg_snapshot_t *s)
{
    if (s->batch != NULL && PQntuples(s->batch) > 0) {
        PQclear(s->previous);
        s->previous = s->batch;
    } else {
        PQclear(s->batch);
    }
    s->batch = NULL;
}

static int run(tb_pg_snapshot_t *s, const char *what, const char *sql, char *errstr,
               size_t errstr_size)
{
    PGresult *res = tb_pg_exec(s->conn, what, sql, errstr, errstr_size);
    PQclear(res);
    return res != NULL ? 0 : -1;
}

static int open_cursor(tb_pg_snapshot_t *s, char *errstr, size_t errstr_size)
{
    const tb_pg_table_t *t = &s->tables[s->table];
    char *schema = PQescapeIdentifier(s->conn, t->schema_name, strlen(t->schema_name));
    char *table = PQescapeIdentifier(s->conn, t->table_name, strlen(t->table_name));
    size_t cap =
        (schema != NULL ? strlen(schema) : 0) + (table != NULL ? strlen(table) : 0) + 96;
    char *sql = malloc(cap);
    int rc = -1;
    if (schema != NULL && table != NULL && sql != NULL) {
        snprintf(sql, cap, "DECLARE tb_snapshot NO SCROLL CURSOR FOR SELECT * FROM %s.%s",
                 schema, table);
        rc = run(s, "cannot read a table for the snapshot", sql, errstr, errstr_size);
    } else {
        snprintf(errstr, errstr_size, "out of memory");
    }
    PQfreemem(schema);
    PQfreemem(table);
    free(sql);
    s->cursor_open = rc == 0;
    return rc;
}

/* The next row in table order into out (out->present false at the end).
 * Returns 0 or -1 with errstr. */
static int raw_next(tb_pg_snapshot_t *s, row_ref_t *out, char *errstr, size_t errstr_size)
{
    char sql[64];
    memset(out, 0, sizeof(*out));
    while (s->table < s->ntables) {
        if (s->batch != NULL && s->batch_row < PQntuples(s->batch)) {
            *out = (row_ref_t){.present = true,
                               .table = s->table,
                               .res = s->batch,
                               .row = s->batch_row++};
            return 0;
        }
        retire_batch(s);
        if (s->cursor_open && !s->batch_full) { /* the table is done */
            s->cursor_open = false;
            s->table++;
            if (run(s, "cannot close a snapshot cursor", "CLOSE tb_snapshot", errstr,
                    errstr_size) != 0) {
                return -1;
            }
            continue;
        }
        if (!s->cursor_open && open_cursor(s, errstr, errstr_size) != 0) {
            return -1;
        }
        snprintf(sql, sizeof(sql), "FETCH FORWARD %d FROM tb_snapshot", s->fetch);
        s->batch = tb_pg_exec(s->conn, "cannot read rows for the snapshot", sql, errstr,
                              errstr_size);
        if (s->batch == NULL) {
            return -1;
        }
        s->batch_row = 0;
        s->batch_full = PQntuples(s->batch) == s->fetch;
    }
    return 0;
}

tb_pg_snapshot_t *tb_pg_snapshot_begin(PGconn *conn, const char *exported,
                                       const tb_pg_table_t *tables, size_t ntables,
                                       int fetch, int64_t *xid, char *errstr,
                                       size_t errstr_size)
{
    tb_pg_snapshot_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    s->conn = conn;
    s->tables = tables;
    s->ntables = ntables;
    s->fetch = fetch;
    if (run(s, "cannot begin the snapshot", "BEGIN ISOLATION LEVEL REPEATABLE READ",
            errstr, errstr_size) != 0) {
        goto fail;
    }
    if (exported != NULL) {
        char sql[128];
        snprintf(sql, sizeof(sql), "SET TRANSACTION SNAPSHOT '%.64s'", exported);
        if (run(s, "cannot adopt the slot's snapshot", sql, errstr, errstr_size) != 0) {
            goto fail;
        }
    }
    PGresult *res = tb_pg_exec(conn, "cannot read the snapshot's transaction id",
                               "SELECT txid_current()", errstr, errstr_size);
    if (res == NULL) {
        goto fail;
    }
    *xid = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return s;

fail:
    tb_pg_snapshot_destroy(s);
    return NULL;
}

/* Debezium's marker of the current row, from where the next one is. */
static const char *marker(const tb_pg_snapshot_t *s, bool first_in_table)
{
    bool last_in_table = !s->ahead.present || s->ahead.table != s->current.table;
    if (!s->ahead.present) {
        return "last";
    }
    if (first_in_table && !s->any_returned) {
        return "first";
    }
    if (last_in_table) {
        return "last_in_data_collection";
    }
    return first_in_table ? "first_in_data_collection" : "true";
}

int tb_pg_snapshot_next(tb_pg_snapshot_t *s, const tb_pg_snapshot_row_t **row,
                        char *errstr, size_t errstr_size)
{
    if (!s->started) {
        s->started = true;
        if (raw_next(s, &s->ahead, errstr, errstr_size) != 0) {
            return -1;
        }
    }
    s->current = s->ahead;
    memset(&s->ahead, 0, sizeof(s->ahead));
    if (!s->current.present) {
        return run(s, "cannot end the snapshot", "COMMIT", errstr, errstr_size) == 0 ? 0
                                                                                     : -1;
    }
    if (raw_next(s, &s->ahead, errstr, errstr_size) != 0) {
        return -1;
    }
    bool first_in_table = !s->any_returned || s->current.table != s->last_table;
    if (row_cells(s, &s->current) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    s->row.table = s->current.table;
    s->row.marker = marker(s, first_in_table);
    s->any_returned = true;
    s->last_table = s->current.table;
    *row = &s->row;
    return 1;
}

void tb_pg_snapshot_destroy(tb_pg_snapshot_t *s)
{
    if (s == NULL) {
        return;
    }
    PQclear(s->batch);
    PQclear(s->previous);
    free(s->cells);
    free(s);
}
