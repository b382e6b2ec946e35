/*
 * tb_pg_catalog.h - what the PostgreSQL source asks the catalog: the
 * tables to capture, a table's columns (types resolved: domains to their
 * base, enums with their labels, arrays with their elements; nullability;
 * primary key), the slot and the publication.
 */
#ifndef TB_PG_CATALOG_H
#define TB_PG_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "connectors/postgres/tb_pg_config.h"
#include "connectors/postgres/tb_pg_filter.h"
#include "connectors/postgres/tb_pg_relation.h"

/* A table: its OID and names. */
typedef struct {
    uint32_t oid;
    char *schema_name;
    char *table_name;
} tb_pg_table_t;

/* The ordinary and partitioned tables the filter captures, by schema and
 * name, into a new array (*n entries; tb_pg_tables_free). Returns 0 or -1
 * with errstr. */
int tb_pg_catalog_tables(PGconn *conn, const tb_pg_filter_t *filter,
                         tb_pg_table_t **tables, size_t *n, char *errstr,
                         size_t errstr_size);

void tb_pg_tables_free(tb_pg_table_t *tables, size_t n);

/* The columns of table oid, in attribute order, into a new array (*n
 * entries; tb_pg_column_info_free). Returns 0 or -1 with errstr. */
int tb_pg_catalog_columns(PGconn *conn, uint32_t oid, tb_pg_column_info_t **columns,
                          size_t *n, char *errstr, size_t errstr_size);

/* The slot's confirmed flush LSN: 1 when the slot exists (*lsn set; 0 when
 * it has none), 0 when it does not, -1 with errstr on failure or when it
 * exists with another plugin or database. */
int tb_pg_catalog_slot(PGconn *conn, const tb_pg_options_t *o, uint64_t *lsn,
                       char *errstr, size_t errstr_size);

/* Drops the slot. Returns 0 or -1 with errstr. */
int tb_pg_catalog_drop_slot(PGconn *conn, const char *slot, char *errstr,
                            size_t errstr_size);

/* Makes sure the publication exists, creating it per
 * publication.autocreate.mode (filtered: for tables). Returns 0 or -1 with
 * errstr. */
int tb_pg_catalog_publication(PGconn *conn, const tb_pg_options_t *o,
                              const tb_pg_table_t *tables, size_t ntables, char *errstr,
                              size_t errstr_size);

#endif
