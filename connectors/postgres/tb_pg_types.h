/*
 * tb_pg_types.h - PostgreSQL column types as Debezium's PostgreSQL
 * connector maps them to Connect schemas, and the text form of a value
 * (what pgoutput and a text-mode query send) as the Connect value under
 * that schema, per decimal.handling.mode, time.precision.mode and
 * binary.handling.mode.
 *
 * The connections set TimeZone=UTC, DateStyle=ISO, IntervalStyle=iso_8601
 * and lc_monetary=C (pg_conn.c), which the parsing relies on.
 */
#ifndef TB_PG_TYPES_H
#define TB_PG_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connectors/postgres/tb_pg_config.h"
#include "core/tb_data.h"

/* A column's type, as the catalog resolves it (pg_catalog.c). */
typedef struct {
    uint32_t oid;      /* the type; a domain's base type */
    int32_t typmod;    /* -1: none */
    uint32_t elem_oid; /* an array's element type, else 0 */
    char *enum_labels; /* an enum's (an enum array's element's) labels, "a,b,c"
                        * (owned), else NULL */
    char *name;        /* format_type(), for messages (owned) */
    char *base_name;   /* the base type's pg_type.typname (owned), or NULL */
    char *elem_name;   /* an array's element's pg_type.typname (owned), or NULL */
    bool opaque;       /* a type Debezium does not know, written as the bytes
                        * of its text (include.unknown.datatypes) */
} tb_pg_type_t;

/* Frees what t owns. */
void tb_pg_type_release(tb_pg_type_t *t);

/* The OID of the array type whose elements are elem, or 0 (built-in
 * arrays only); and the element of a built-in array type, or 0. */
uint32_t tb_pg_array_elem(uint32_t array_oid);

/* A required schema of type with Debezium's logical name, version 1; an
 * optional schema of a primitive type (or an empty struct). NULL on no
 * memory. */
tb_schema_t *tb_pg_named_schema(tb_type_t type, const char *name);
tb_schema_t *tb_pg_optional_schema(tb_type_t type);

/* An array's element type: its OID and name, the array's typmod, and an
 * enum array's labels (borrowed from array). */
tb_pg_type_t tb_pg_array_element(const tb_pg_type_t *array);

/* The schema of a column of type t (required; the caller makes it
 * optional for a nullable column), or NULL when the type is none tributary
 * maps (pg_unknown.c tells what becomes of it), with errstr naming the
 * type. An opaque type has binary.handling.mode's schema (an array of
 * them, required, for an array), as Debezium's unknown types. */
tb_schema_t *tb_pg_type_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes,
                               char *errstr, size_t errstr_size);

/* The value of text[0..len) under schema (made by tb_pg_type_schema for
 * t). Returns 0 with *out the caller's, or -1 with errstr when the text
 * cannot be read as such a value. */
int tb_pg_type_value(const tb_pg_type_t *t, const tb_schema_t *schema,
                     const tb_pg_modes_t *modes, const char *text, size_t len,
                     tb_value_t **out, char *errstr, size_t errstr_size);

/* data[0..n) under binary.handling.mode: bytes, or their base64,
 * base64-url-safe or hex text. NULL on no memory. */
tb_value_t *tb_pg_binary_value(const tb_pg_modes_t *modes, const uint8_t *data, size_t n);

/* The default Debezium puts in the schema of a column of type t whose
 * default expression (pg_get_expr) is expr: a constant's value under schema;
 * for an expression that calls a function (nextval(), now()) or a current
 * date or time, the type's placeholder (0, "", 1970-01-01, ...); NULL for no
 * default (a null, a type Debezium has no default for, or a value that
 * cannot be read). */
tb_value_t *tb_pg_type_default(const tb_pg_type_t *t, const tb_schema_t *schema,
                               const tb_pg_modes_t *modes, const char *expr);

#endif
