/*
 * tb_pg_relation.h - a captured table as the records need it: its columns
 * (in the order the stream and the snapshot send them) with their types
 * and Connect schemas, its topic, and its key, value and envelope schemas;
 * and the cache of them by relation OID.
 *
 * A relation is built from a column list (a pgoutput Relation message, or
 * the catalog for a snapshot) and what the catalog adds per column
 * (nullability, primary key membership, enum labels, array elements, the
 * default, which Debezium writes into the field's schema). A column whose
 * type Debezium leaves out has no field, as in Debezium's records. A
 * Relation message mid-stream (an ALTER TABLE) replaces the cached one, so
 * the records after it carry the new schemas.
 */
#ifndef TB_PG_RELATION_H
#define TB_PG_RELATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connectors/postgres/tb_pg_config.h"
#include "connectors/postgres/tb_pg_filter.h"
#include "connectors/postgres/tb_pg_types.h"
#include "core/tb_data.h"

/* One column as the catalog tells it. */
typedef struct {
    char *name;
    uint32_t declared_oid; /* the column's own type (a domain, not its base) */
    tb_pg_type_t type;
    bool not_null;
    bool primary_key;
    char *default_expr; /* pg_get_expr() of its default, or NULL */
} tb_pg_column_info_t;

typedef struct {
    char *name;
    tb_pg_type_t type;
    bool key;            /* in the primary key */
    bool included;       /* written (column filters) */
    tb_schema_t *schema; /* the field's schema in .Value (and .Key); NULL when
                          * the column is left out */
} tb_pg_column_t;

typedef struct {
    uint32_t oid;
    char *schema_name;
    char *table_name;
    char *topic; /* <prefix>.<schema>.<table> */
    size_t ncolumns;
    tb_pg_column_t *columns;
    tb_schema_t *key_schema; /* NULL: no primary key (records have a null key) */
    tb_schema_t *value_schema;
    tb_schema_t *envelope_schema;
} tb_pg_relation_t;

/* What building needs besides the columns. Borrowed. */
typedef struct {
    const char *prefix;
    const tb_pg_modes_t *modes;
    const tb_pg_filter_t *filter;
    tb_schema_t *source_schema;
    /* told of each column left out or written opaque (tb_pg_unknown.h):
     * its "schema.table.column" and what becomes of it; NULL: not told */
    void (*notice)(void *arg, const char *column, const char *what);
    void *notice_arg;
} tb_pg_relation_ctx_t;

/* Builds a relation of ncolumns columns (names and types, whose strings
 * are copied) of which info, of ninfo entries (borrowed), tells
 * nullability and key membership by name. Returns NULL with errstr naming
 * the column whose type is not supported. */
tb_pg_relation_t *tb_pg_relation_build(const tb_pg_relation_ctx_t *ctx, uint32_t oid,
                                       const char *schema_name, const char *table_name,
                                       const tb_pg_column_info_t *columns,
                                       size_t ncolumns, const tb_pg_column_info_t *info,
                                       size_t ninfo, char *errstr, size_t errstr_size);

/* NULL is a no-op. */
void tb_pg_relation_free(tb_pg_relation_t *r);

/* Frees the catalog's column list. */
void tb_pg_column_info_free(tb_pg_column_info_t *info, size_t n);

/* A row of r: tuple column i's text (NULL: a SQL null; unchanged[i] true:
 * a TOASTed value the server did not send) into the .Value struct, or
 * the .Key struct when key (NULL when r has no key). Returns 0 with *out
 * the caller's, or -1 with errstr naming the column. */
typedef struct {
    const char *data; /* NULL: null */
    size_t len;
    bool unchanged;
} tb_pg_cell_t;

int tb_pg_relation_row(const tb_pg_relation_t *r, const tb_pg_modes_t *modes,
                       const tb_pg_cell_t *cells, size_t ncells, bool key,
                       tb_value_t **out, char *errstr, size_t errstr_size);

/* The cache: relations by OID. */
typedef struct {
    tb_pg_relation_t **items;
    size_t count;
    size_t cap;
} tb_pg_relations_t;

/* The cached relation of oid, or NULL. */
tb_pg_relation_t *tb_pg_relations_find(const tb_pg_relations_t *cache, uint32_t oid);

/* Puts r (stolen), replacing and freeing one of the same oid. -1 on no
 * memory (r is freed). */
int tb_pg_relations_put(tb_pg_relations_t *cache, tb_pg_relation_t *r);

void tb_pg_relations_clear(tb_pg_relations_t *cache);

#endif
