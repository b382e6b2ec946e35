/*
 * tb_pg_more_types.h - the PostgreSQL types beyond the numbers, strings,
 * dates and times of pg_types.c, as Debezium 3.0 maps them: bit strings
 * (io.debezium.data.Bits, BOOLEAN for a single bit), point
 * (io.debezium.data.geometry.Point), and the types of the hstore, citext,
 * ltree and isn extensions, which have no fixed OID and are told by their
 * type name (hstore as JSON or a map per hstore.handling.mode), and the
 * arrays of the extension types (Debezium maps none of bits or points).
 * pg_types.c asks here for the types it does not know.
 */
#ifndef TB_PG_MORE_TYPES_H
#define TB_PG_MORE_TYPES_H

#include <stddef.h>

#include "connectors/postgres/tb_pg_types.h"

/* The schema of a column of type t (required), or NULL when t is none of
 * these types. */
tb_schema_t *tb_pg_more_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes);

/* The items' schema of an array whose elements are of type elem, as
 * Debezium's (optional, but for isbn's), or NULL when elem is none of the
 * extension types. */
tb_schema_t *tb_pg_more_items_schema(const tb_pg_type_t *elem,
                                     const tb_pg_modes_t *modes);

/* The value of the NUL-terminated text under schema (from
 * tb_pg_more_schema for t, which tells the handling mode): 1 with *out set
 * (NULL: the text cannot be read as such a value), or 0 when t is none of
 * these types. */
int tb_pg_more_value(const tb_pg_type_t *t, const tb_schema_t *schema, const char *text,
                     tb_value_t **out);

#endif
