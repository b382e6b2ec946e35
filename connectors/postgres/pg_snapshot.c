/* The initial snapshot (tb_pg_snapshot.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_conn.h"
#include "connectors/postgres/tb_pg_snapshot.h"

/* A row copied out of its result: cells point into data. */
typedef struct {
    bool present;
    size_t table;
    tb_pg_cell_t *cells;
    size_t ncells;
    char *data;
} copied_t;

struct tb_pg_snapshot {
    PGconn *conn;
    const tb_pg_table_t *tables;
    size_t ntables;
    int fetch;
    bool in_transaction;
    /* the raw reader: the table being read, its open cursor and last fetch */
    size_t table;
    bool cursor_open;
    PGresult *batch;
    int batch_row;
    bool batch_full; /* the last fetch returned fetch rows: more may follow */
    /* the row handed out, the one after it, and the table last handed out */
    copied_t current;
    copied_t ahead;
    bool started;
    bool any_returned;
    size_t last_table;
    tb_pg_snapshot_row_t row;
};

static void copied_free(copied_t *c)
{
    free(c->cells);
    free(c->data);
    memset(c, 0, sizeof(*c));
}

static int copy_row(PGresult *res, int row, size_t table, copied_t *out)
{
    int n = PQnfields(res);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        total += (size_t)PQgetlength(res, row, i) + 1;
    }
    out->cells = calloc((size_t)n + 1, sizeof(*out->cells));
    out->data = malloc(total + 1);
    if (out->cells == NULL || out->data == NULL) {
        copied_free(out);
        return -1;
    }
    char *p = out->data;
    for (int i = 0; i < n; i++) {
        if (PQgetisnull(res, row, i)) {
            continue; /* data NULL: a null */
        }
        size_t len = (size_t)PQgetlength(res, row, i);
        memcpy(p, PQgetvalue(res, row, i), len);
        p[len] = '\0';
        out->cells[i].data = p;
        out->cells[i].len = len;
        p += len + 1;
    }
    out->present = true;
    out->table = table;
    out->ncells = (size_t)n;
    return 0;
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
static int raw_next(tb_pg_snapshot_t *s, copied_t *out, char *errstr, size_t errstr_size)
{
    char sql[64];
    memset(out, 0, sizeof(*out));
    while (s->table < s->ntables) {
        if (s->batch != NULL && s->batch_row < PQntuples(s->batch)) {
            if (copy_row(s->batch, s->batch_row++, s->table, out) != 0) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
            }
            return 0;
        }
        PQclear(s->batch);
        s->batch = NULL;
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
    s->in_transaction = true;
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
    copied_free(&s->current);
    s->current = s->ahead;
    memset(&s->ahead, 0, sizeof(s->ahead));
    if (!s->current.present) {
        s->in_transaction = false;
        return run(s, "cannot end the snapshot", "COMMIT", errstr, errstr_size) == 0 ? 0
                                                                                     : -1;
    }
    if (raw_next(s, &s->ahead, errstr, errstr_size) != 0) {
        return -1;
    }
    bool first_in_table = !s->any_returned || s->current.table != s->last_table;
    s->row = (tb_pg_snapshot_row_t){.table = s->current.table,
                                    .cells = s->current.cells,
                                    .ncells = s->current.ncells,
                                    .marker = marker(s, first_in_table)};
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
    if (s->in_transaction) {
        PQclear(PQexec(s->conn, "ROLLBACK"));
    }
    copied_free(&s->current);
    copied_free(&s->ahead);
    free(s);
}
