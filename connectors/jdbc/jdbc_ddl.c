/*
 * jdbc_ddl.c - the tables a task writes to: CREATE TABLE (auto.create),
 * ALTER TABLE ... ADD (auto.evolve), and what the task knows of each
 * table's columns, so that the database is asked once per table, and again
 * only when a record brings a column the task has not seen there.
 *
 * DDL runs in its own transaction, before the rows' transaction, so a
 * rolled-back write never leaves the cache wrong. Two tasks that create or
 * evolve one table at the same time are fine: CREATE TABLE IF NOT EXISTS,
 * and a column another task added is found when the columns are read again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"

void tb_jdbc_sql_append(tb_jdbc_sql_t *sql, const char *fmt, ...)
{
    va_list ap;
    for (int attempt = 0; !sql->failed && attempt < 2; attempt++) {
        size_t room = sql->cap - sql->len;
        va_start(ap, fmt);
        int n = vsnprintf(sql->data != NULL ? sql->data + sql->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            sql->len += (size_t)n;
            return;
        }
        size_t cap = (sql->cap > 0 ? sql->cap * 2 : 256) + (n > 0 ? (size_t)n : 0);
        char *grown = n >= 0 ? realloc(sql->data, cap) : NULL;
        if (grown == NULL) {
            tb_jdbc_sql_free(sql);
            sql->failed = true;
            return;
        }
        sql->data = grown;
        sql->cap = cap;
    }
}

void tb_jdbc_sql_bytes(tb_jdbc_sql_t *sql, const void *data, size_t len)
{
    if (sql->failed) {
        return;
    }
    if (sql->cap - sql->len <= len) {
        size_t cap = (sql->cap > 0 ? sql->cap * 2 : 256) + len;
        char *grown = realloc(sql->data, cap);
        if (grown == NULL) {
            tb_jdbc_sql_free(sql);
            sql->failed = true;
            return;
        }
        sql->data = grown;
        sql->cap = cap;
    }
    memcpy(sql->data + sql->len, data, len);
    sql->len += len;
    sql->data[sql->len] = '\0';
}

void tb_jdbc_sql_free(tb_jdbc_sql_t *sql)
{
    free(sql->data);
    *sql = (tb_jdbc_sql_t){0};
}

/* Whether name[0..len) reads as an identifier without quotes. */
static bool plain(const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && c >= '0' && c <= '9'))) {
            return false;
        }
    }
    return len > 0;
}

/* Appends one identifier part, quoted when asked or when it must be (a
 * topic's hyphens, say). */
static void identifier_part(tb_jdbc_sql_t *sql, const char *name, size_t len, bool quote)
{
    if (!quote && plain(name, len)) {
        tb_jdbc_sql_append(sql, "%.*s", (int)len, name);
        return;
    }
    tb_jdbc_sql_append(sql, "\"");
    for (size_t i = 0; i < len; i++) {
        tb_jdbc_sql_append(sql, name[i] == '"' ? "\"\"" : "%c", name[i]);
    }
    tb_jdbc_sql_append(sql, "\"");
}

void tb_jdbc_sql_identifier(tb_jdbc_sql_t *sql, const char *name, bool quote)
{
    const char *dot = strchr(name, '.');
    if (dot != NULL) {
        identifier_part(sql, name, (size_t)(dot - name), quote);
        tb_jdbc_sql_append(sql, ".");
        name = dot + 1;
    }
    identifier_part(sql, name, strlen(name), quote);
}

/* Splits a dotted table name: *schema (a new string, NULL when none) and
 * the table's own name (borrowed from name). */
static const char *split_table(const char *name, char **schema)
{
    const char *dot = strchr(name, '.');
    *schema = dot != NULL ? strndup(name, (size_t)(dot - name)) : NULL;
    return dot != NULL ? dot + 1 : name;
}

/* Reads the columns of table into the cache. */
static tb_jdbc_rc_t refresh(tb_jdbc_tables_t *cache, const tb_jdbc_dialect_t *d,
                            tb_jdbc_conn_t *c, const char *table, json_t **known,
                            char *errstr, size_t errstr_size)
{
    char *schema = NULL;
    const char *own = split_table(table, &schema);
    tb_jdbc_param_t params[2] = {
        {.kind = schema != NULL ? TB_JDBC_P_TEXT : TB_JDBC_P_NULL,
         .data = schema,
         .len = schema != NULL ? strlen(schema) : 0},
        {.kind = TB_JDBC_P_TEXT, .data = own, .len = strlen(own)}};
    json_t *rows = NULL;
    tb_jdbc_rc_t rc = d->exec(c, d->columns_sql, params, 2, &rows, errstr, errstr_size);
    free(schema);
    if (rc != TB_JDBC_OK) {
        return rc;
    }
    json_t *set = json_object();
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        json_object_set_new(set, json_string_value(json_array_get(row, 0)), json_true());
    }
    json_decref(rows);
    if (cache->tables == NULL) {
        cache->tables = json_object();
    }
    json_object_set_new(cache->tables, table, set);
    *known = set;
    return TB_JDBC_OK;
}

/* A column's definition: name, type, NULL or NOT NULL. */
static int column_definition(tb_jdbc_sql_t *sql, const tb_jdbc_dialect_t *d,
                             const tb_jdbc_settings_t *s, const tb_jdbc_column_t *col,
                             char *errstr, size_t errstr_size)
{
    const char *type = d->column_type(col->schema);
    if (type == NULL) {
        snprintf(errstr, errstr_size, "field '%s' has no %s column type", col->name,
                 d->name);
        return -1;
    }
    tb_jdbc_sql_identifier(sql, col->name, s->quote);
    tb_jdbc_sql_append(sql, " %s%s", type,
                       col->key || !tb_schema_optional(col->schema) ? " NOT NULL"
                                                                    : " NULL");
    return 0;
}

static tb_jdbc_rc_t create_table(const tb_jdbc_dialect_t *d, tb_jdbc_conn_t *c,
                                 const tb_jdbc_settings_t *s, const tb_jdbc_row_t *row,
                                 char *errstr, size_t errstr_size)
{
    tb_jdbc_sql_t sql = {0};
    tb_jdbc_sql_append(&sql, "CREATE TABLE IF NOT EXISTS ");
    tb_jdbc_sql_identifier(&sql, row->table, s->quote);
    tb_jdbc_sql_append(&sql, " (");
    for (size_t i = 0; i < row->count; i++) {
        tb_jdbc_sql_append(&sql, i > 0 ? ",\n" : "\n");
        if (column_definition(&sql, d, s, &row->columns[i], errstr, errstr_size) != 0) {
            tb_jdbc_sql_free(&sql);
            return TB_JDBC_FATAL;
        }
    }
    for (size_t i = 0; i < row->key_count; i++) {
        tb_jdbc_sql_append(&sql, i == 0 ? ",\nPRIMARY KEY(" : ",");
        tb_jdbc_sql_identifier(&sql, row->columns[i].name, s->quote);
    }
    tb_jdbc_sql_append(&sql, row->key_count > 0 ? "))" : ")");
    if (sql.data == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    tb_jdbc_rc_t rc = d->exec(c, sql.data, NULL, 0, NULL, errstr, errstr_size);
    tb_jdbc_sql_free(&sql);
    return rc;
}

static tb_jdbc_rc_t add_column(const tb_jdbc_dialect_t *d, tb_jdbc_conn_t *c,
                               const tb_jdbc_settings_t *s, const char *table,
                               const tb_jdbc_column_t *col, char *errstr,
                               size_t errstr_size)
{
    if (!tb_schema_optional(col->schema) && tb_schema_default(col->schema) == NULL) {
        snprintf(errstr, errstr_size,
                 "Cannot ALTER TABLE %s to add missing field %s, as the field is not "
                 "optional and does not have a default value",
                 table, col->name);
        return TB_JDBC_FATAL;
    }
    tb_jdbc_sql_t sql = {0};
    tb_jdbc_sql_append(&sql, "ALTER TABLE ");
    tb_jdbc_sql_identifier(&sql, table, s->quote);
    tb_jdbc_sql_append(&sql, " ADD ");
    tb_jdbc_column_t optional = *col;
    optional.key = false;
    /* a required field with a default still gets a NULL column: the rows
     * already there have no value for it */
    tb_jdbc_rc_t rc = TB_JDBC_FATAL;
    if (column_definition(&sql, d, s, &optional, errstr, errstr_size) == 0) {
        char *nullable = sql.data != NULL ? strstr(sql.data, " NOT NULL") : NULL;
        if (nullable != NULL) {
            memmove(nullable, " NULL", strlen(" NULL") + 1);
        }
        rc = sql.data != NULL ? d->exec(c, sql.data, NULL, 0, NULL, errstr, errstr_size)
                              : TB_JDBC_FATAL;
    }
    tb_jdbc_sql_free(&sql);
    return rc;
}

tb_jdbc_rc_t tb_jdbc_ddl_ensure(tb_jdbc_tables_t *cache, const tb_jdbc_dialect_t *d,
                                tb_jdbc_conn_t *c, const tb_jdbc_settings_t *s,
                                const tb_jdbc_row_t *row, char *errstr,
                                size_t errstr_size)
{
    json_t *known =
        cache->tables != NULL ? json_object_get(cache->tables, row->table) : NULL;
    tb_jdbc_rc_t rc = TB_JDBC_OK;
    bool missing = false;
    for (size_t i = 0; known != NULL && i < row->count && !missing; i++) {
        missing = json_object_get(known, row->columns[i].name) == NULL;
    }
    if (known != NULL && !missing) {
        return TB_JDBC_OK;
    }
    /* not seen yet, or a column is new: what does the database have now? */
    if ((rc = refresh(cache, d, c, row->table, &known, errstr, errstr_size)) != 0) {
        return rc;
    }
    if (json_object_size(known) == 0) {
        if (!s->auto_create) {
            snprintf(errstr, errstr_size,
                     "Table %s is missing and auto-creation is disabled", row->table);
            return TB_JDBC_FATAL;
        }
        rc = create_table(d, c, s, row, errstr, errstr_size);
        return rc != TB_JDBC_OK
                   ? rc
                   : refresh(cache, d, c, row->table, &known, errstr, errstr_size);
    }
    char absent[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < row->count; i++) {
        if (json_object_get(known, row->columns[i].name) == NULL &&
            used < sizeof(absent)) {
            used += (size_t)snprintf(absent + used, sizeof(absent) - used, "%s%s",
                                     used ? ", " : "", row->columns[i].name);
        }
    }
    if (used == 0) {
        return TB_JDBC_OK;
    }
    if (!s->auto_evolve) {
        snprintf(errstr, errstr_size,
                 "Table %s is missing fields (%s) and auto-evolution is disabled",
                 row->table, absent);
        return TB_JDBC_FATAL;
    }
    for (size_t i = 0; i < row->count && rc == TB_JDBC_OK; i++) {
        if (json_object_get(known, row->columns[i].name) == NULL) {
            rc = add_column(d, c, s, row->table, &row->columns[i], errstr, errstr_size);
        }
    }
    return rc != TB_JDBC_OK
               ? rc
               : refresh(cache, d, c, row->table, &known, errstr, errstr_size);
}

void tb_jdbc_ddl_forget(tb_jdbc_tables_t *cache)
{
    json_decref(cache->tables);
    cache->tables = NULL;
}
