/*
 * tb_json_data.h - Connect's JSON form of schemas and values, as
 * JsonConverter reads and writes them, over the data model (core/tb_data.h).
 *
 * Schemas: {"type","optional","name","version","doc","parameters",
 * "default"} plus "fields" (struct, each with "field"), "items" (array) or
 * "keys" and "values" (map), written in JsonConverter's member order.
 * Values: a payload under its schema, or schemaless (schema NULL: objects
 * are maps with string keys, integers INT64, reals FLOAT64). Logical types
 * are written as Connect writes them: Decimal as the base64 text of its
 * unscaled bytes (or a number with TB_DECIMAL_NUMERIC, exact to the last
 * digit both ways), Date and Time as int32, Timestamp as int64.
 *
 * Nothing here keeps what it is given; every result is new and the
 * caller's.
 */
#ifndef TB_JSON_DATA_H
#define TB_JSON_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_data.h"

/* How a Decimal is written: the base64 text of its unscaled bytes; a JSON
 * number with its exact digits (which only tb_json_write() spells: keep
 * such JSON away from jansson's writer); or a JSON string of those digits,
 * as the registry codecs take it. */
typedef enum {
    TB_DECIMAL_BASE64 = 0,
    TB_DECIMAL_NUMERIC,
    TB_DECIMAL_TEXT
} tb_decimal_format_t;

/* The schema a JSON schema object describes; NULL with Connect's message
 * in errstr (e.g. "Unknown schema type: x"). */
tb_schema_t *tb_json_schema_parse(const json_t *json, char *errstr, size_t errstr_size);

/* The JSON schema object of schema. New reference, NULL on no memory. */
json_t *tb_json_schema_dump(const tb_schema_t *schema);

/* The value of payload under schema (NULL: schemaless) into *out (NULL for
 * a null). Returns 0, or -1 with the reason in errstr. */
int tb_json_value_parse(const tb_schema_t *schema, const json_t *payload,
                        tb_value_t **out, char *errstr, size_t errstr_size);

/* As tb_json_value_parse(), for a payload jansson read from text[0..len):
 * a Decimal written as a number takes its exact digits from the text
 * (jansson reads numbers as doubles). */
int tb_json_value_parse_text(const tb_schema_t *schema, const json_t *payload,
                             const char *text, size_t len, tb_value_t **out, char *errstr,
                             size_t errstr_size);

/* The value of the JSON text[0..len) under schema, as
 * tb_json_value_parse_text(); -1 with errstr for text that is no JSON too.
 * Read in one pass when it can be (tb_json_reader.h). */
int tb_json_value_read(const tb_schema_t *schema, const char *text, size_t len,
                       tb_value_t **out, char *errstr, size_t errstr_size);

/* The bytes of base64 text[0..len) as a BYTES value, as JsonConverter reads
 * bytes; NULL when it is no base64 (or on no memory). */
tb_value_t *tb_json_base64_bytes(const char *text, size_t len);

/* The payload of value under schema (NULL: schemaless) into *out. A null
 * under a schema with a default is the default. Returns 0, or -1 with the
 * reason in errstr. */
int tb_json_value_dump(const tb_schema_t *schema, const tb_value_t *value,
                       tb_decimal_format_t decimals, json_t **out, char *errstr,
                       size_t errstr_size);

/* The schema JsonConverter infers for a JSON value a source plugin wrote:
 * object -> struct (fields in key order), string, integer -> int64, real ->
 * double, boolean, array -> array of its first element's schema (an
 * optional string when empty), null -> optional string. */
tb_schema_t *tb_json_infer_schema(const json_t *json);

/* json as compact text, spelled as Jackson writes it (reals as Java's
 * Double.toString, "1.0E10"). malloc'd, NUL-terminated; *len may be NULL.
 * NULL on no memory or a non-finite real. */
char *tb_json_write(const json_t *json, size_t *len);

#endif
