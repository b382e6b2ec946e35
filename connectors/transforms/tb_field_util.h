/*
 * tb_field_util.h - what the transformation classes of this folder share:
 * Connect's requireStruct/requireMap checks and messages, the one
 * replace.null.with.default definition and its reading of a struct's
 * field, copying a schema's basics, the $Key/$Value class pair, the
 * NonEmptyList and NonEmptyString checks.
 */
#ifndef TB_FIELD_UTIL_H
#define TB_FIELD_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/transforms/tb_transform.h"

/* The replace.null.with.default key, as every Connect 3.9 transform that
 * reads a struct's fields defines it, filled into T's bool replace_null. */
#define TB_REPLACE_NULL_WITH_DEFAULT_DEF(T)                                              \
    {                                                                                    \
        .name = "replace.null.with.default", .type = TB_CONFIG_BOOLEAN,                  \
        .default_value = "true", .importance = TB_IMPORTANCE_MEDIUM,                     \
        .documentation = "Whether a null field whose schema has a default reads as that" \
                         " default (true) or stays null (false).",                       \
        .field = TB_CONFIG_AT(T, replace_null)                                           \
    }

/* field.syntax.version (KIP-821) of the transformations that take it:
 * ExtractField (Connect 3.8) and ValueToKey (4.4). Only V1, field names
 * read as they are, is had; V2 (nested paths) is refused, naming the key. */
#define TB_FIELD_SYNTAX_VERSION_DEF                                                      \
    {                                                                                    \
        .name = "field.syntax.version", .type = TB_CONFIG_STRING, .default_value = "V1", \
        .importance = TB_IMPORTANCE_HIGH, .one_of = (const char *const[]){"V1", NULL},   \
        .documentation = "Defines the version of the syntax to access fields. V1 reads " \
                         "field names as they are (tributary has no V2, nested paths, "  \
                         "yet)."                                                         \
    }

/* Defines the classes Name$Key and Name$Value (var##_key, var##_value):
 * one implementation, two sides, whose typed config is a config_type
 * filled from table. check_fn and edit_fn may be NULL; the chain uses
 * edit_fn on the $Value side only. */
#define TB_SIDED_CLASS(var, side_value, suffix, simple, table, config_type, check_fn,    \
                       create_fn, destroy_fn, apply_fn, edit_fn)                         \
    const tb_transform_class_t var = {.name = TB_TRANSFORMS_PACKAGE simple suffix,       \
                                      .side = (side_value),                              \
                                      .config = &(table),                                \
                                      .config_size = sizeof(config_type),                \
                                      .check = (check_fn),                               \
                                      .create = (create_fn),                             \
                                      .destroy = (destroy_fn),                           \
                                      .apply = (apply_fn),                               \
                                      .edit = (edit_fn)}
#define TB_SIDED_CLASSES(var, simple, table, config_type, check_fn, create_fn,           \
                         destroy_fn, apply_fn, edit_fn)                                  \
    TB_SIDED_CLASS(var##_key, TB_SIDE_KEY, "$Key", simple, table, config_type, check_fn, \
                   create_fn, destroy_fn, apply_fn, edit_fn);                            \
    TB_SIDED_CLASS(var##_value, TB_SIDE_VALUE, "$Value", simple, table, config_type,     \
                   check_fn, create_fn, destroy_fn, apply_fn, edit_fn)

/* The schema a transform made of the last schema it was given, so that a
 * run of records under one schema builds it once (Connect keeps such a
 * cache too). A use's own: the chain applies it from one thread. */
typedef struct {
    tb_schema_t *in;
    tb_schema_t *out;
} tb_schema_cache_t;

/* What c holds for a schema equal to in (a new reference), or NULL. */
tb_schema_t *tb_schema_cache_get(tb_schema_cache_t *c, const tb_schema_t *in);

/* Remembers that in makes out (a reference to each is taken). */
void tb_schema_cache_put(tb_schema_cache_t *c, tb_schema_t *in, tb_schema_t *out);

/* Drops what c holds. */
void tb_schema_cache_clear(tb_schema_cache_t *c);

/* The state of a use that needs only its side and its typed config. */
typedef struct {
    tb_side_t side;
    const void *config; /* the chain's (tb_transform_class_t.create) */
} tb_field_use_t;

/* A tb_field_use_t of config (borrowed); destroy frees it (NULL: no-op). */
void *tb_field_use_create(const void *config, tb_side_t side, char *errstr,
                          size_t errstr_size);
void tb_field_use_destroy(void *state);

/* The typed side, checked to be a struct (with a schema) or a map
 * (without), as Connect's requireStruct and requireMap. NULL with
 * Connect's message for purpose ("field replacement") otherwise. */
tb_record_side_t *tb_field_structured(tb_record_t *record, tb_side_t side,
                                      const char *purpose, char *errstr,
                                      size_t errstr_size);

/* The value of field f of st as Connect's Struct.get reads it with
 * replace_null set (a null is the field schema's default) or
 * getWithoutDefault without. Borrowed; NULL is a null. */
const tb_value_t *tb_field_get(const tb_value_t *st, const tb_field_t *f,
                               bool replace_null);

/* As tb_field_get(), taking the value out of st (the caller's; a
 * default is copied): for the struct a transform replaces by a new one. */
tb_value_t *tb_field_take(tb_value_t *st, const tb_field_t *f, bool replace_null);

/* An empty STRUCT schema with from's name, version, doc and parameters
 * (Connect's SchemaUtil.copySchemaBasics), or NULL on no memory. */
tb_schema_t *tb_field_struct_like(const tb_schema_t *from);

/* Copies from's name, version, doc and parameters onto to (being built).
 * -1 on no memory. */
int tb_field_copy_basics(const tb_schema_t *from, tb_schema_t *to);

/* Sets side to schema and value (steals both) once value conforms to
 * schema (when there is one); -1 with Connect's message otherwise. */
int tb_field_set_checked(tb_record_t *record, tb_side_t side, tb_schema_t *schema,
                         tb_value_t *value, char *errstr, size_t errstr_size);

/* A STRING value of s. */
tb_value_t *tb_field_string(const char *s);

/* tb_config_def_t checks as Connect's NonEmptyListValidator ("Empty
 * list") and NonEmptyString ("String must be non-empty"). */
int tb_field_non_empty_list(const json_t *value, char *reason, size_t reason_size);
int tb_field_non_empty_string(const json_t *value, char *reason, size_t reason_size);

/* Whether schema s is Date, Time or Timestamp (a java.util.Date in
 * Connect). */
bool tb_field_is_date(const tb_schema_t *s);

/* "out of memory" in errstr; -1. */
int tb_field_oom(char *errstr, size_t errstr_size);

#endif
