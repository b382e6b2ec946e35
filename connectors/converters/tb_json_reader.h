/*
 * tb_json_reader.h - JSON text read straight into Connect data in one
 * pass, with no jansson tree in between, for JsonConverter's common case.
 *
 * The reader is a fast path, not a second judge: it accepts only JSON that
 * jansson accepts (with JSON_DECODE_ANY | JSON_ALLOW_NUL) and then gives
 * exactly what tb_json_value_read() gives; whatever it is not sure of it
 * declines, and the caller takes the jansson path, which gives the value
 * or says what is wrong with Connect's words. It declines text that is not
 * JSON, data that does not fit the schema (a required null, a wrong type,
 * bytes that are no base64), an integer beyond 64 bits, a real beyond a
 * double, nesting deeper than TB_JSON_READER_MAX_DEPTH, and object keys
 * written with an escape (jansson's path matches keys by their text).
 * Nothing it declines leaves anything allocated.
 */
#ifndef TB_JSON_READER_H
#define TB_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/converters/tb_json_text.h"
#include "core/tb_data.h"

#define TB_JSON_READER_MAX_DEPTH 256

/* The value of the JSON text[0..len) under schema (NULL: schemaless) into
 * *out (NULL for a null; the caller's). False: declined. */
bool tb_json_read_value(const tb_schema_t *schema, const char *text, size_t len,
                        tb_value_t **out);

/* The members of JsonConverter's envelope, text[0..len) being an object
 * whose members are all called "schema" or "payload", both there (the last
 * of a repeated one counts, as in jansson): their values' text. known is
 * the text of a schema that jansson has read (n 0: none): a schema written
 * with exactly those bytes is not checked again, which is most of the work
 * on a run of records under one schema. False: declined (not such an
 * object, or not JSON). */
bool tb_json_read_envelope(const char *text, size_t len, tb_json_span_t known,
                           tb_json_span_t *schema, tb_json_span_t *payload);

#endif
