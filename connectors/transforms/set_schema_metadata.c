/*
 * SetSchemaMetadata: gives the key's or value's schema the name
 * schema.name and the version schema.version (those set), keeping the rest
 * of it; a struct is rebuilt under the renamed schema. Schemaless data is
 * refused, except a null without schema, which passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_transform.h"

/* SetSchemaMetadata's keys, filled from metadata_keys. */
typedef struct {
    const char *name;      /* NULL: keeps its name */
    const json_t *version; /* an integer; null: keeps its version */
    bool replace_null;
} tb_metadata_keys_t;

static const char *metadata_check(const void *config, char *message, size_t message_size)
{
    const tb_metadata_keys_t *keys = config;
    if (keys->name == NULL && json_is_null(keys->version)) {
        snprintf(message, message_size, "Neither schema name nor version configured");
        return "schema.name";
    }
    return NULL;
}

static int metadata_apply(void *state, tb_record_t *record, char *errstr,
                          size_t errstr_size)
{
    tb_field_use_t *use = state;
    const tb_metadata_keys_t *keys = use->config;
    const char *name = keys->name;
    tb_record_side_t *s = tb_record_typed(record, use->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->schema == NULL && s->value == NULL) {
        return 0;
    }
    if (s->schema == NULL) {
        snprintf(errstr, errstr_size, "Schema required for [updating schema metadata]");
        return -1;
    }
    tb_schema_t *schema = tb_schema_copy(s->schema);
    if (schema == NULL || (name != NULL && tb_schema_set_name(schema, name) != 0)) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    if (!json_is_null(keys->version)) {
        tb_schema_set_version(schema, true, (int)json_integer_value(keys->version));
    }
    tb_value_t *value = NULL;
    if (s->value != NULL && tb_value_type(s->value) == TB_TYPE_STRUCT) {
        bool replace_null = keys->replace_null;
        value = tb_value_struct(schema);
        for (size_t i = 0; value != NULL && i < tb_schema_field_count(schema); i++) {
            const tb_field_t *f = tb_schema_field_at(s->schema, i);
            tb_value_struct_set_at(
                value, i, tb_value_copy(tb_field_get(s->value, f, replace_null)));
        }
    } else {
        value = tb_value_copy(s->value);
    }
    if (s->value != NULL && value == NULL) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    return tb_field_set_checked(record, use->side, schema, value, errstr, errstr_size);
}

static const tb_config_def_t metadata_keys[] = {
    {.name = "schema.name",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation = "The name the schema gets; unset keeps its name.",
     .field = TB_CONFIG_AT(tb_metadata_keys_t, name)},
    {.name = "schema.version",
     .type = TB_CONFIG_INT,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation = "The version the schema gets; unset keeps its version.",
     .field = TB_CONFIG_VALUE_AT(tb_metadata_keys_t, version)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_metadata_keys_t),
};

static const tb_config_table_t metadata_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "SetSchemaMetadata", metadata_keys);

TB_SIDED_CLASSES(tb_set_schema_metadata, "SetSchemaMetadata", metadata_table,
                 tb_metadata_keys_t, metadata_check, tb_field_use_create,
                 tb_field_use_destroy, metadata_apply, NULL);
