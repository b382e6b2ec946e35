/*
 * tb_json_schema_cache.h - JsonConverter's memory of the schemas it has
 * seen, so that a run of records under one schema (a CDC table's, a
 * topic's) builds the schema's JSON, or parses it, once (Connect keeps
 * such caches too). For json_converter.c.
 *
 * Ownership: a cache holds a reference to each schema in it (taken when
 * the entry is made, dropped when it is replaced or the cache cleared), so
 * a schema it knows by address cannot be freed, and its address reused,
 * while it is there. Schemas are read only once shared (core/tb_data.h),
 * so the text of a schema known by address stays its text, and a schema
 * handed out from a cache must not be edited (copy it). A cache is its
 * converter's, used by one thread at a time; it holds at most
 * TB_JSON_SCHEMA_CACHE_SIZE schemas, replacing the oldest. Start it
 * zeroed.
 */
#ifndef TB_JSON_SCHEMA_CACHE_H
#define TB_JSON_SCHEMA_CACHE_H

#include <stddef.h>

#include <jansson.h>

#include "connectors/converters/tb_json_text.h"
#include "core/tb_data.h"

#define TB_JSON_SCHEMA_CACHE_SIZE 16

typedef struct {
    tb_schema_t *schema; /* a reference the cache holds; NULL: unused */
    char *text;          /* its JSON text (owned) */
    size_t len;
} tb_json_schema_entry_t;

typedef struct {
    tb_json_schema_entry_t entries[TB_JSON_SCHEMA_CACHE_SIZE];
    size_t next;   /* the entry replaced next */
    size_t latest; /* the entry found or made last */
} tb_json_schema_cache_t;

/* The JSON text of schema as JsonConverter writes it (tb_json_schema_dump,
 * tb_json_write), made on first sight of the schema (by address: CDC
 * sources and the field transforms hand over one schema for a run of
 * records). Borrowed from the cache until its next call; NULL on no
 * memory. */
const char *tb_json_schema_cache_text(tb_json_schema_cache_t *c,
                                      const tb_schema_t *schema, size_t *len);

/* The schema that the JSON text[0..len) describes: a new reference,
 * parsed (jansson, tb_json_schema_parse) on first sight of the exact text.
 * NULL when the text is no JSON or no schema, or on no memory. A cache
 * used here is not used for tb_json_schema_cache_text(): the text kept
 * here is the message's, not JsonConverter's. */
tb_schema_t *tb_json_schema_cache_parse(tb_json_schema_cache_t *c, const char *text,
                                        size_t len);

/* The text of the entry found or made last (n 0 when none), borrowed from
 * the cache until its next call. */
tb_json_span_t tb_json_schema_cache_latest(const tb_json_schema_cache_t *c);

/* Drops every entry. */
void tb_json_schema_cache_clear(tb_json_schema_cache_t *c);

#endif
