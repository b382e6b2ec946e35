/* Catalog queries of the PostgreSQL source (tb_pg_catalog.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_catalog.h"
#include "connectors/postgres/tb_pg_conn.h"
#include "connectors/postgres/tb_pgoutput.h"

void tb_pg_tables_free(tb_pg_table_t *tables, size_t n)
{
    for (size_t i = 0; tables != NULL && i < n; i++) {
        free(tables[i].schema_name);
        free(tables[i].table_name);
    }
    free(tables);
}

int tb_pg_catalog_tables(PGconn *conn, const tb_pg_filter_t *filter,
                         tb_pg_table_t **tables, size_t *n, char *errstr,
                         size_t errstr_size)
{
    PGresult *res = tb_pg_exec(
        conn, "cannot list the tables",
        "SELECT c.oid, n.nspname, c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') "
        "AND NOT c.relispartition ORDER BY n.nspname, c.relname",
        errstr, errstr_size);
    *tables = NULL;
    *n = 0;
    if (res == NULL) {
        return -1;
    }
    *tables = calloc((size_t)PQntuples(res) + 1, sizeof(**tables));
    for (int i = 0; *tables != NULL && i < PQntuples(res); i++) {
        if (tb_pg_filter_table(filter, PQgetvalue(res, i, 1), PQgetvalue(res, i, 2))) {
            tb_pg_table_t *t = &(*tables)[(*n)++];
            t->oid = (uint32_t)strtoul(PQgetvalue(res, i, 0), NULL, 10);
            t->schema_name = strdup(PQgetvalue(res, i, 1));
            t->table_name = strdup(PQgetvalue(res, i, 2));
        }
    }
    PQclear(res);
    if (*tables == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

/* The type of a column: a domain's base type (and its name), an array's
 * element (and its name), an enum's labels (an enum array's element's), and
 * format_type's name; and its default expression. */
#define COLUMNS_SQL                                                                      \
    "SELECT a.attname, "                                                                 \
    "CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, "                 \
    "CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END, "                  \
    "a.attnotnull, "                                                                     \
    "EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid "                    \
    "AND i.indisprimary AND a.attnum = ANY (i.indkey)), "                                \
    "format_type(a.atttypid, a.atttypmod), "                                             \
    "CASE WHEN b.typcategory = 'A' THEN b.typelem ELSE 0 END, "                          \
    "(SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e "      \
    "WHERE e.enumtypid = CASE WHEN b.typcategory = 'A' THEN b.typelem ELSE b.oid END), " \
    "pg_get_expr(d.adbin, d.adrelid), a.atttypid, b.typname, "                           \
    "(SELECT l.typname FROM pg_type l WHERE l.oid = b.typelem AND b.typcategory = 'A') " \
    "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "                          \
    "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "           \
    "JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype "            \
    "ELSE a.atttypid END "                                                               \
    "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped "                \
    "ORDER BY a.attnum"

int tb_pg_catalog_columns(PGconn *conn, uint32_t oid, tb_pg_column_info_t **columns,
                          size_t *n, char *errstr, size_t errstr_size)
{
    char param[16];
    snprintf(param, sizeof(param), "%u", (unsigned)oid);
    PGresult *res = tb_pg_exec1(conn, "cannot read a table's columns", COLUMNS_SQL, param,
                                errstr, errstr_size);
    *columns = NULL;
    *n = 0;
    if (res == NULL) {
        return -1;
    }
    *columns = calloc((size_t)PQntuples(res) + 1, sizeof(**columns));
    for (int i = 0; *columns != NULL && i < PQntuples(res); i++, (*n)++) {
        tb_pg_column_info_t *c = &(*columns)[i];
        c->name = strdup(PQgetvalue(res, i, 0));
        c->type.oid = (uint32_t)strtoul(PQgetvalue(res, i, 1), NULL, 10);
        c->type.typmod = (int32_t)strtol(PQgetvalue(res, i, 2), NULL, 10);
        c->not_null = PQgetvalue(res, i, 3)[0] == 't';
        c->primary_key = PQgetvalue(res, i, 4)[0] == 't';
        c->type.name = strdup(PQgetvalue(res, i, 5));
        c->type.elem_oid = (uint32_t)strtoul(PQgetvalue(res, i, 6), NULL, 10);
        c->type.enum_labels =
            PQgetisnull(res, i, 7) ? NULL : strdup(PQgetvalue(res, i, 7));
        c->default_expr = PQgetisnull(res, i, 8) ? NULL : strdup(PQgetvalue(res, i, 8));
        c->declared_oid = (uint32_t)strtoul(PQgetvalue(res, i, 9), NULL, 10);
        c->type.base_name = strdup(PQgetvalue(res, i, 10));
        c->type.elem_name =
            PQgetisnull(res, i, 11) ? NULL : strdup(PQgetvalue(res, i, 11));
    }
    PQclear(res);
    if (*columns == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

int tb_pg_catalog_slot(PGconn *conn, const tb_pg_options_t *o, uint64_t *lsn,
                       char *errstr, size_t errstr_size)
{
    PGresult *res = tb_pg_exec1(conn, "cannot read the replication slot",
                                "SELECT plugin, database, confirmed_flush_lsn "
                                "FROM pg_replication_slots WHERE slot_name = $1",
                                o->slot, errstr, errstr_size);
    if (res == NULL) {
        return -1;
    }
    int rc = PQntuples(res) > 0;
    *lsn = 0;
    if (rc && (strcmp(PQgetvalue(res, 0, 0), "pgoutput") != 0 ||
               strcmp(PQgetvalue(res, 0, 1), o->dbname) != 0)) {
        snprintf(errstr, errstr_size,
                 "slot.name: the replication slot %s exists for plugin %s on database "
                 "%s, not pgoutput on %s",
                 o->slot, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), o->dbname);
        rc = -1;
    } else if (rc && !PQgetisnull(res, 0, 2)) {
        tb_pg_lsn_parse(PQgetvalue(res, 0, 2), lsn);
    }
    PQclear(res);
    return rc;
}

int tb_pg_catalog_drop_slot(PGconn *conn, const char *slot, char *errstr,
                            size_t errstr_size)
{
    PGresult *res =
        tb_pg_exec1(conn, "cannot drop the replication slot",
                    "SELECT pg_drop_replication_slot($1)", slot, errstr, errstr_size);
    PQclear(res);
    return res != NULL ? 0 : -1;
}

/* "CREATE PUBLICATION p FOR TABLE a.b, c.d" into a new malloc'd string. */
static char *filtered_sql(PGconn *conn, const char *pub, const tb_pg_table_t *tables,
                          size_t ntables)
{
    size_t cap = 64 + strlen(pub) * 2;
    for (size_t i = 0; i < ntables; i++) {
        cap += (strlen(tables[i].schema_name) + strlen(tables[i].table_name)) * 2 + 8;
    }
    char *sql = malloc(cap);
    if (sql == NULL) {
        return NULL;
    }
    size_t n = (size_t)snprintf(sql, cap, "CREATE PUBLICATION %s FOR TABLE ", pub);
    for (size_t i = 0; i < ntables; i++) {
        char *s = PQescapeIdentifier(conn, tables[i].schema_name,
                                     strlen(tables[i].schema_name));
        char *t =
            PQescapeIdentifier(conn, tables[i].table_name, strlen(tables[i].table_name));
        n += (size_t)snprintf(sql + n, cap - n, "%s%s.%s", i > 0 ? ", " : "",
                              s != NULL ? s : "", t != NULL ? t : "");
        PQfreemem(s);
        PQfreemem(t);
    }
    return sql;
}

int tb_pg_catalog_publication(PGconn *conn, const tb_pg_options_t *o,
                              const tb_pg_table_t *tables, size_t ntables, char *errstr,
                              size_t errstr_size)
{
    PGresult *res = tb_pg_exec1(conn, "cannot read the publication",
                                "SELECT 1 FROM pg_publication WHERE pubname = $1",
                                o->publication, errstr, errstr_size);
    if (res == NULL) {
        return -1;
    }
    bool exists = PQntuples(res) > 0;
    PQclear(res);
    if (exists) {
        return 0;
    }
    if (o->publication_mode == TB_PG_PUBLICATION_DISABLED) {
        snprintf(errstr, errstr_size,
                 "publication.name: the publication %s does not exist, and "
                 "publication.autocreate.mode=disabled does not create it",
                 o->publication);
        return -1;
    }
    if (o->publication_mode == TB_PG_PUBLICATION_FILTERED && ntables == 0) {
        snprintf(errstr, errstr_size,
                 "publication.autocreate.mode=filtered: no table matches the filters, "
                 "so the publication %s cannot be created",
                 o->publication);
        return -1;
    }
    char *pub = PQescapeIdentifier(conn, o->publication, strlen(o->publication));
    char *sql = NULL;
    if (pub != NULL && o->publication_mode == TB_PG_PUBLICATION_FILTERED) {
        sql = filtered_sql(conn, pub, tables, ntables);
    } else if (pub != NULL && (sql = malloc(strlen(pub) + 48)) != NULL) {
        sprintf(sql, "CREATE PUBLICATION %s FOR ALL TABLES", pub);
    }
    PQfreemem(pub);
    if (sql == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    res = tb_pg_exec(conn, "cannot create the publication", sql, errstr, errstr_size);
    free(sql);
    PQclear(res);
    return res != NULL ? 0 : -1;
}
