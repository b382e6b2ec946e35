/*
 * ByteArrayConverter - bytes pass through both ways; it has no settings.
 */
#include <stdio.h>

#include "connectors/converters/tb_converter_class.h"

static const tb_config_table_t byte_array_table = {
    .name = "org.apache.kafka.connect.converters.ByteArrayConverter",
    .defs = NULL,
    .count = 0,
};

/* Connect's ByteArrayConverter reads every message as optional bytes. */
static int bytes_to_typed(void *state, const void *data, size_t len, tb_schema_t **schema,
                          tb_value_t **value, char *errstr, size_t errstr_size)
{
    (void)state;
    (void)errstr;
    (void)errstr_size;
    *schema = tb_schema_new(TB_TYPE_BYTES);
    tb_schema_set_optional(*schema, true);
    *value = tb_value_bytes(data, len);
    return 0;
}

static int bytes_from_typed(void *state, const char *topic, const tb_schema_t *schema,
                            const tb_value_t *value, void **out, size_t *out_len,
                            char *errstr, size_t errstr_size)
{
    (void)topic; /* the format names no subject */
    (void)state;
    if (schema != NULL && tb_schema_type(schema) != TB_TYPE_BYTES) {
        snprintf(errstr, errstr_size, "Invalid schema type for ByteArrayConverter: %s",
                 tb_type_name(tb_schema_type(schema)));
        return -1;
    }
    if (value != NULL && tb_value_type(value) != TB_TYPE_BYTES) {
        snprintf(errstr, errstr_size,
                 "ByteArrayConverter is not compatible with objects of type %s",
                 tb_type_name(tb_value_type(value)));
        return -1;
    }
    return tb_typed_to_plugin(schema, value, out, out_len, errstr, errstr_size);
}

const tb_converter_class_t tb_byte_array_converter = {
    .name = "org.apache.kafka.connect.converters.ByteArrayConverter",
    .alias = "ByteArrayConverter",
    .config = &byte_array_table,
    .to_typed = bytes_to_typed,
    .from_typed = bytes_from_typed,
};
