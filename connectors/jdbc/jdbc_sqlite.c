/*
 * jdbc_sqlite.c - the SQLite dialect: a database file in the connector's
 * reach (file.allowed.dirs, never the worker's data directory), opened
 * through the SQLite the store links.
 *
 * A constraint, a datatype mismatch or a value too big is the row's fault;
 * a busy or locked database is retried; anything else stops the task.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "connectors/jdbc/tb_jdbc.h"
#include "connectors/tb_limits.h"

#define BUSY_TIMEOUT_MS 5000

struct tb_jdbc_conn {
    sqlite3 *db;
};

static tb_jdbc_conn_t *sqlite_connect(const tb_jdbc_settings_t *s,
                                      const tb_limits_t *limits, tb_jdbc_rc_t *rc,
                                      char *errstr, size_t errstr_size)
{
    const char *path = s->url.path;
    bool memory = strcmp(path, ":memory:") == 0;
    *rc = TB_JDBC_FATAL;
    if (strncmp(path, "file:", 5) == 0) {
        snprintf(errstr, errstr_size,
                 "SQLite URI file names (jdbc:sqlite:file:...) are not supported: give "
                 "the path of the database file");
        return NULL;
    }
    /* checks the limits, and creates the file when it is missing */
    FILE *probe =
        memory ? NULL : tb_limits_fopen(limits, path, true, errstr, errstr_size);
    if (!memory && probe == NULL) {
        return NULL;
    }
    if (probe != NULL) {
        fclose(probe);
    }
    tb_jdbc_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    int err = sqlite3_open_v2(
        path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
        NULL);
    if (err != SQLITE_OK) {
        snprintf(errstr, errstr_size, "cannot open the SQLite database %s: %s", path,
                 c->db != NULL ? sqlite3_errmsg(c->db) : sqlite3_errstr(err));
        sqlite3_close(c->db);
        free(c);
        return NULL;
    }
    sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
    *rc = TB_JDBC_OK;
    return c;
}

/* An open file is ready at once. */
static tb_jdbc_rc_t sqlite_connect_poll(tb_jdbc_conn_t *c, int wait_ms, char *errstr,
                                        size_t errstr_size)
{
    (void)c, (void)wait_ms, (void)errstr, (void)errstr_size;
    return TB_JDBC_OK;
}

static void sqlite_disconnect(tb_jdbc_conn_t *c)
{
    if (c != NULL) {
        sqlite3_close(c->db);
        free(c);
    }
}

static tb_jdbc_rc_t classify(int err)
{
    switch (err & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
        return TB_JDBC_BAD_ROW;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return TB_JDBC_CONFLICT;
    default:
        return TB_JDBC_FATAL;
    }
}

static int bind(sqlite3_stmt *stmt, int i, const tb_jdbc_param_t *p)
{
    switch (p->kind) {
    case TB_JDBC_P_NULL:
        return sqlite3_bind_null(stmt, i);
    case TB_JDBC_P_BOOL:
    case TB_JDBC_P_INT:
        return sqlite3_bind_int64(stmt, i, p->i);
    case TB_JDBC_P_DOUBLE:
        return sqlite3_bind_double(stmt, i, p->d);
    case TB_JDBC_P_TEXT:
        return sqlite3_bind_text(stmt, i, p->data,
                                 (int)(p->len > 0 ? p->len : strlen(p->data)),
                                 SQLITE_STATIC);
    default:
        return sqlite3_bind_blob(stmt, i, p->len > 0 ? p->data : "", (int)p->len,
                                 SQLITE_STATIC);
    }
}

static tb_jdbc_rc_t sqlite_exec(tb_jdbc_conn_t *c, const char *sql,
                                const tb_jdbc_param_t *params, size_t n, json_t **rows,
                                char *errstr, size_t errstr_size)
{
    sqlite3_stmt *stmt = NULL;
    int err = sqlite3_prepare_v2(c->db, sql, -1, &stmt, NULL);
    for (size_t i = 0; err == SQLITE_OK && i < n; i++) {
        err = bind(stmt, (int)i + 1, &params[i]);
    }
    json_t *out = rows != NULL ? json_array() : NULL;
    while (err == SQLITE_OK && (err = sqlite3_step(stmt)) == SQLITE_ROW) {
        json_t *row = json_array();
        for (int f = 0; f < sqlite3_column_count(stmt); f++) {
            const unsigned char *text = sqlite3_column_text(stmt, f);
            json_array_append_new(row, text != NULL ? json_string((const char *)text)
                                                    : json_null());
        }
        if (out != NULL) {
            json_array_append_new(out, row);
        } else {
            json_decref(row);
        }
        err = SQLITE_OK;
    }
    tb_jdbc_rc_t rc = TB_JDBC_OK;
    if (err != SQLITE_DONE && err != SQLITE_OK) {
        snprintf(errstr, errstr_size, "%s", sqlite3_errmsg(c->db));
        rc = classify(sqlite3_extended_errcode(c->db));
        json_decref(out);
        out = NULL;
    }
    sqlite3_finalize(stmt);
    if (rows != NULL) {
        *rows = out;
    }
    return rc;
}

const tb_jdbc_dialect_t tb_jdbc_sqlite = {
    .name = "SQLite",
    .connect = sqlite_connect,
    .connect_poll = sqlite_connect_poll,
    .disconnect = sqlite_disconnect,
    .exec = sqlite_exec,
    .columns_sql = "SELECT name FROM pragma_table_info(?2, COALESCE(?1, 'main'))",
    .column_type = tb_jdbc_sqlite_type,
    .begin = "BEGIN IMMEDIATE",
    .lock_rows = "",
    .param_prefix = '?',
    .max_params = 32766,
};
