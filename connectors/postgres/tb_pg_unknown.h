/*
 * tb_pg_unknown.h - what becomes of a column whose type tributary does not
 * map (tb_pg_type_schema gives no schema), as Debezium 3.0 treats it:
 *
 * - a type Debezium does not know (tsvector, tsquery, pg_lsn,
 *   txid_snapshot, a composite type, an array of a domain, ...) is left
 *   out of the records, or with include.unknown.datatypes written as the
 *   bytes of its text (an array: an array of them);
 * - the arrays Debezium never maps (of interval, money, name, xml, point,
 *   bit varying) are left out whatever the key;
 * - a type Debezium maps and tributary does not (PostGIS's geometry and
 *   geography, pgvector's types, arrays of bits or of a mapped type tributary
 *   has no array for), and the geometric types Debezium writes in its JDBC
 *   driver's own text when it includes unknown types, are refused.
 */
#ifndef TB_PG_UNKNOWN_H
#define TB_PG_UNKNOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connectors/postgres/tb_pg_types.h"

typedef enum {
    TB_PG_REFUSED = 0, /* an error naming the column */
    TB_PG_LEFT_OUT,    /* no field in the records */
    TB_PG_OPAQUE       /* the bytes of its text (tb_pg_type_t.opaque) */
} tb_pg_fate_t;

/* The fate of type t, which tb_pg_type_schema does not map, under modes;
 * reason gets a sentence on it, for the log or the error. */
tb_pg_fate_t tb_pg_unknown_fate(const tb_pg_type_t *t, const tb_pg_modes_t *modes,
                                char *reason, size_t reason_size);

/* Whether Debezium leaves out an array of elem_oid, though it maps the
 * element (its converter has no schema for the array). */
bool tb_pg_array_left_out(uint32_t elem_oid);

#endif
