/*
 * tb_json_writer.h - JSON text written straight into a growing buffer, as
 * Jackson spells it for JsonConverter: compact, strings escaped as Jackson
 * escapes them (", \, \b \t \n \f \r, other controls as \u00XX, the rest
 * as its UTF-8), integers in decimal, reals as Java's Double.toString
 * ("1.0E10", "-0.0", "0.001"). tb_json_write_value() writes Connect data
 * under its schema this way with no jansson tree in between, exactly the
 * text tb_json_write(tb_json_value_dump(...)) gives (tb_json_data.h).
 *
 * Everything appends to a tb_buf_t (core/tb_buf.h), the caller's:
 * running out of memory marks it failed, and tb_buf_take() then returns
 * NULL.
 */
#ifndef TB_JSON_WRITER_H
#define TB_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connectors/converters/tb_json_data.h"
#include "core/tb_data.h"
#include "core/tb_buf.h"

/* Appends s[0..n) as a JSON string literal. */
void tb_json_put_string(tb_buf_t *b, const char *s, size_t n);

/* Appends i in decimal. */
void tb_json_put_int(tb_buf_t *b, int64_t i);

/* Appends a finite d as Java's Double.toString writes it (or, with
 * is_float, as Float.toString writes the float d holds): the shortest
 * digits that read back as d. */
void tb_json_put_real(tb_buf_t *b, double d, bool is_float);

/* The double that Java's Float.toString text of the float f reads as, so
 * that a FLOAT32 is written as Java writes the float ("0.1", not
 * "0.10000000149011612"). NaN and the infinities are returned as they are. */
double tb_json_float32_as_double(double f);

/* Whether map is written as a JSON object (else as an array of [key,
 * value] pairs): under a schema whose keys are strings, or schemaless when
 * every key is a string. */
bool tb_json_map_is_object(const tb_schema_t *schema, const tb_value_t *map);

/* What JsonConverter writes for *v under schema (NULL: schemaless): *v,
 * or for a null the schema's default (*v stays NULL when there is none: a
 * null is written). -1 with Connect's message for a required null without
 * a default, or a value of another type than the schema's. For both
 * writers, tb_json_write_value() and tb_json_value_dump(). */
int tb_json_value_to_write(const tb_schema_t *schema, const tb_value_t **v, char *errstr,
                           size_t errstr_size);

/* Appends the JSON of value under schema (NULL: schemaless), as
 * tb_json_value_dump() and tb_json_write() would write it together: a null
 * under a schema with a default is the default, decimals as asked, a map
 * with string keys (by its key schema, or all its keys when schemaless) an
 * object and any other map an array of [key, value] pairs. Returns 0, or -1
 * with tb_json_value_dump()'s reason in errstr (a required null, a type or
 * struct schema that does not match, text that is not UTF-8, a real that
 * is not finite); b then holds part of the value. */
int tb_json_write_value(tb_buf_t *b, const tb_schema_t *schema, const tb_value_t *value,
                        tb_decimal_format_t decimals, char *errstr, size_t errstr_size);

#endif
