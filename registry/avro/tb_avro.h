/*
 * tb_avro.h - Avro schemas and Avro binary <-> JSON, for the registry
 * formats.
 *
 * libavro parses and checks each schema (names, namespaces, types); the
 * codec below walks a compiled form of the same JSON that also keeps what
 * libavro 1.11 drops: logical types and field defaults. Decoding checks
 * every length and count against the bytes left, so no input makes it
 * allocate or loop beyond what the input could hold.
 *
 * JSON form of Avro data (both directions):
 *   null, boolean, int, long, float, double, string: the JSON value (a NaN
 *     or infinite float as the string "NaN", "Infinity", "-Infinity")
 *   bytes, fixed: the base64 text
 *   record: an object; map: an object; array: an array; enum: the symbol
 *   union: the value of its branch (encoding picks the first branch the
 *     value fits; {"<branch type name>": value} is also accepted)
 *   decimal (bytes or fixed): a JSON number with exactly scale decimals
 *     (encoding also takes a string)
 *   date: days since 1970-01-01; time-millis/-micros: since midnight;
 *     timestamp-*: since the epoch, in the unit of the type (encoding also
 *     takes "YYYY-MM-DD" for a date and RFC 3339 text for a timestamp)
 *   uuid: the string
 */
#ifndef TB_AVRO_H
#define TB_AVRO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/tb_buf.h"

typedef struct tb_avro_schema tb_avro_schema_t;

/*
 * Compiles schema text. references (borrowed; NULL = none) maps reference
 * names to the text of schemas that define named types text uses, as the
 * registry resolves them. Returns NULL with errstr when a schema is invalid.
 */
tb_avro_schema_t *tb_avro_schema_create(const char *text, const json_t *references,
                                        char *errstr, size_t errstr_size);

/* NULL is a no-op. */
void tb_avro_schema_destroy(tb_avro_schema_t *schema);

/* The full name of the schema's top-level named type, or NULL (a primitive,
 * array, map or union). Valid while schema is. */
const char *tb_avro_schema_name(const tb_avro_schema_t *schema);

/* True when the schema's top level is a string or bytes (so text from a
 * plugin is encoded as it is, not read as JSON). */
int tb_avro_schema_takes_text(const tb_avro_schema_t *schema);

/* Appends the JSON text of the Avro binary datum data[0..len) to out; the
 * datum must fill len exactly. Returns 0, or -1 with errstr. */
int tb_avro_decode(const tb_avro_schema_t *schema, const uint8_t *data, size_t len,
                   tb_buf_t *out, char *errstr, size_t errstr_size);

/* Appends the Avro binary of value to out. Returns 0, or -1 with errstr
 * naming the field that does not fit. */
int tb_avro_encode(const tb_avro_schema_t *schema, const json_t *value, tb_buf_t *out,
                   char *errstr, size_t errstr_size);

/* A schema for value, as Connect's AvroConverter would derive it from the
 * schema JsonConverter infers: an object is a record named ConnectDefault
 * (ConnectDefault2... for nested ones) in namespace io.confluent.connect.avro,
 * integers are long, reals double, null an optional string. Returns the
 * schema text (malloc'd), or NULL with errstr. */
char *tb_avro_infer(const json_t *value, char *errstr, size_t errstr_size);

#endif
