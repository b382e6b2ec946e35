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

static const tb_config_table_t string_table =
    TB_CONFIG_TABLE("org.apache.kafka.connect.storage.StringConverter", string_keys);

const tb_converter_class_t tb_string_converter = {
    .name = "org.apache.kafka.connect.storage.StringConverter",
    .alias = "StringConverter",
    .config = &string_table,
};
