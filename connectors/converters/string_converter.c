/*
 * StringConverter - text passes through both ways as UTF-8 bytes.
 *
 * Connect decodes with converter.encoding; tributary hands plugins the bytes
 * themselves, so only UTF-8 is accepted. A plugin's JSON text is written as
 * is.
 */
#include "connectors/converters/tb_converter_class.h"

static const char *const encodings[] = {"UTF8", "UTF-8", NULL};

static const tb_config_def_t string_keys[] = {
    {.name = "converter.encoding",
     .type = TB_CONFIG_STRING,
     .default_value = "UTF8",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Converter",
     .order = 1,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Converter encoding",
     .one_of = encodings,
     .documentation = "The character encoding of the strings. tributary passes "
                      "the bytes through unchanged, so only UTF-8 is supported."},
};

/* Connect's StringConverter reads every message as an optional string. */
static int string_to_typed(void *state, const void *data, size_t len,
                           tb_schema_t **schema, tb_value_t **value, char *errstr,
                           size_t errstr_size)
{
    (void)state;
    (void)errstr;
    (void)errstr_size;
    *schema = tb_schema_new(TB_TYPE_STRING);
    tb_schema_set_optional(*schema, true);
    *value = tb_value_string(data, len);
    return 0;
}

/* A string is written as its text; other data as its JSON (where Connect
 * writes Java's toString()). */
static int string_from_typed(void *state, const char *topic, const tb_schema_t *schema,
                             const tb_value_t *value, void **out, size_t *out_len,
                             char *errstr, size_t errstr_size)
{
    (void)topic; /* the format names no subject */
    (void)state;
    return tb_typed_to_plugin(schema, value, out, out_len, errstr, errstr_size);
}

static const tb_config_table_t string_table =
    TB_CONFIG_TABLE("org.apache.kafka.connect.storage.StringConverter", string_keys);

const tb_converter_class_t tb_string_converter = {
    .name = "org.apache.kafka.connect.storage.StringConverter",
    .alias = "StringConverter",
    .config = &string_table,
    .to_typed = string_to_typed,
    .from_typed = string_from_typed,
};
