/*
 * registry.c - the transformation and predicate classes tributary has.
 */
#include <string.h>

#include "connectors/transforms/tb_transform.h"

extern const tb_transform_class_t tb_regex_router, tb_timestamp_router, tb_insert_header,
    tb_drop_headers, tb_filter, tb_hoist_field_key, tb_hoist_field_value,
    tb_extract_field_key, tb_extract_field_value, tb_insert_field_key,
    tb_insert_field_value, tb_value_to_key, tb_topic_name_matches, tb_has_header_key,
    tb_record_is_tombstone, tb_replace_field_key, tb_replace_field_value,
    tb_mask_field_key, tb_mask_field_value, tb_cast_key, tb_cast_value, tb_flatten_key,
    tb_flatten_value, tb_header_from_key, tb_header_from_value,
    tb_set_schema_metadata_key, tb_set_schema_metadata_value, tb_timestamp_converter_key,
    tb_timestamp_converter_value;

const tb_transform_class_t *const tb_transform_classes[] = {
    &tb_cast_key,
    &tb_cast_value,
    &tb_drop_headers,
    &tb_extract_field_key,
    &tb_extract_field_value,
    &tb_filter,
    &tb_flatten_key,
    &tb_flatten_value,
    &tb_header_from_key,
    &tb_header_from_value,
    &tb_hoist_field_key,
    &tb_hoist_field_value,
    &tb_insert_field_key,
    &tb_insert_field_value,
    &tb_insert_header,
    &tb_mask_field_key,
    &tb_mask_field_value,
    &tb_regex_router,
    &tb_replace_field_key,
    &tb_replace_field_value,
    &tb_set_schema_metadata_key,
    &tb_set_schema_metadata_value,
    &tb_timestamp_converter_key,
    &tb_timestamp_converter_value,
    &tb_timestamp_router,
    &tb_value_to_key,
    &tb_has_header_key,
    &tb_record_is_tombstone,
    &tb_topic_name_matches,
    NULL,
};

/* The class name without its package. */
static const char *simple_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot != NULL ? dot + 1 : name;
}

const tb_transform_class_t *tb_transform_class_find(const char *name)
{
    for (size_t i = 0; tb_transform_classes[i] != NULL; i++) {
        const char *cls = tb_transform_classes[i]->name;
        if (strcmp(name, cls) == 0 || strcmp(name, simple_name(cls)) == 0) {
            return tb_transform_classes[i];
        }
    }
    return NULL;
}
