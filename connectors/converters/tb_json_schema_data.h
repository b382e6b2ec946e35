/*
 * tb_json_schema_data.h - JSON Schemas <-> Connect schemas (core/tb_data.h),
 * as Confluent's JsonSchemaConverter maps them; for
 * json_schema_converter.c.
 *
 * Connect -> JSON Schema: integers are "integer" and reals "number", with
 * "connect.type" (int8 ... int64, float32, float64) saying which; BYTES is
 * a "string" with connect.type bytes (its value base64); STRUCT an
 * "object" with "properties" in field order, each with "connect.index",
 * and "required" listing the fields that are not optional; ARRAY an
 * "array"; MAP with STRING keys an "object" with "additionalProperties"
 * and connect.type map. An optional schema is {"oneOf":[{"type":"null"},
 * S]}. A name is the "title" (Decimal, Date, Time and Timestamp too:
 * Decimal a "number" with connect.type bytes, its value a JSON number of
 * its exact digits), a doc the "description"; version, parameters and
 * default are "connect.version", "connect.parameters" and "default".
 *
 * JSON Schema -> Connect: the other way round; "integer" without
 * connect.type is INT64, "number" FLOAT64; a "type" array or a oneOf or
 * anyOf of null and one schema is optional; a property missing from
 * "required" is optional; "$ref" is followed. Schemas of other shapes
 * (several types, no type) have no Connect form here.
 */
#ifndef TB_JSON_SCHEMA_DATA_H
#define TB_JSON_SCHEMA_DATA_H

#include <stddef.h>

#include "core/tb_data.h"
#include "registry/json_schema/tb_json_schema.h"

/* The Connect schema of a JSON Schema (a new reference), or NULL with
 * errstr naming the property that has none. */
tb_schema_t *tb_json_schema_to_connect(const tb_json_schema_t *schema, char *errstr,
                                       size_t errstr_size);

/* The JSON Schema text (malloc'd) of a Connect schema, or NULL with errstr
 * naming the field that has none. */
char *tb_json_schema_from_connect(const tb_schema_t *schema, char *errstr,
                                  size_t errstr_size);

#endif
