/*
 * tb_json_schema.h - JSON Schema (draft 7) for the registry formats:
 * validation of values, and schemas inferred from values.
 *
 * Keywords checked: type, enum, const, properties, required,
 * additionalProperties, patternProperties, propertyNames, minProperties,
 * maxProperties, dependencies, items (one schema or a tuple),
 * additionalItems, contains, minItems, maxItems, uniqueItems, minimum,
 * maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength,
 * maxLength, pattern, allOf, anyOf, oneOf, not, if/then/else, and $ref to
 * "#", "#/definitions/..." or "#/$defs/..." of the same schema or, by its
 * reference name, to a referenced schema. format is an annotation, as draft
 * 7 leaves it by default. pattern uses POSIX extended regular expressions,
 * which agree with ECMA 262 for the patterns in common use (no lookaround,
 * no \d: use [0-9]).
 */
#ifndef TB_JSON_SCHEMA_H
#define TB_JSON_SCHEMA_H

#include <stddef.h>

#include <jansson.h>

typedef struct tb_json_schema tb_json_schema_t;

/* Compiles schema text; references (borrowed; NULL = none) maps reference
 * names to schema texts. Returns NULL with errstr. */
tb_json_schema_t *tb_json_schema_create(const char *text, const json_t *references,
                                        char *errstr, size_t errstr_size);

/* NULL is a no-op. */
void tb_json_schema_destroy(tb_json_schema_t *schema);

/* The schema's JSON, borrowed from schema. */
const json_t *tb_json_schema_root(const tb_json_schema_t *schema);

/* The schema a $ref names: "#..." in the root, else a referenced schema by
 * its reference name (optionally followed by "#..."); NULL when none.
 * Borrowed from schema. */
const json_t *tb_json_schema_resolve(const tb_json_schema_t *schema, const char *ref);

/* The schema's title (Confluent's record name for JSON Schema), or NULL. */
const char *tb_json_schema_title(const tb_json_schema_t *schema);

/* Whether the schema's type is "string" alone. */
int tb_json_schema_takes_text(const tb_json_schema_t *schema);

/* 0 when value is valid, else -1 with errstr naming the keyword and where
 * in value it failed. */
int tb_json_schema_validate(const tb_json_schema_t *schema, const json_t *value,
                            char *errstr, size_t errstr_size);

/* A schema for value (an object: {"type":"object","title":"ConnectDefault",
 * "properties":...} with every member required but nulls), malloc'd text,
 * or NULL with errstr. */
char *tb_json_schema_infer(const json_t *value, char *errstr, size_t errstr_size);

#endif
