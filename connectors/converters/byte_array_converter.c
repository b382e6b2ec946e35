/*
 * ByteArrayConverter - bytes pass through both ways; it has no settings.
 */
#include "connectors/converters/tb_converter_class.h"

static const tb_config_table_t byte_array_table = {
    .name = "org.apache.kafka.connect.converters.ByteArrayConverter",
    .defs = NULL,
    .count = 0,
};

const tb_converter_class_t tb_byte_array_converter = {
    .name = "org.apache.kafka.connect.converters.ByteArrayConverter",
    .alias = "ByteArrayConverter",
    .config = &byte_array_table,
};
