/*
 * AvroConverter - io.confluent.connect.avro.AvroConverter: Avro records in
 * Confluent's wire format, through the schema registry (registry/avro/tb_avro.h
 * says how Avro data maps to JSON, tb_avro_data.h how Avro schemas map to
 * Connect's).
 */
#include "connectors/converters/tb_avro_data.h"
#include "connectors/converters/tb_registry_converter.h"
#include "registry/avro/tb_avro.h"

static void *avro_compile(const char *text, const json_t *references, char *errstr,
                          size_t errstr_size)
{
    return tb_avro_schema_create(text, references, errstr, errstr_size);
}

static void avro_destroy(void *compiled)
{
    tb_avro_schema_destroy(compiled);
}

static const char *avro_record_name(const void *compiled)
{
    return tb_avro_schema_name(compiled);
}

static bool avro_takes_text(const void *compiled)
{
    return tb_avro_schema_takes_text(compiled) != 0;
}

static int avro_decode(const void *compiled, const uint8_t *payload, size_t len,
                       tb_buf_t *out, char *errstr, size_t errstr_size)
{
    return tb_avro_decode(compiled, payload, len, out, errstr, errstr_size);
}

static int avro_encode(const void *compiled, const json_t *value, tb_buf_t *out,
                       char *errstr, size_t errstr_size)
{
    return tb_avro_encode(compiled, value, out, errstr, errstr_size);
}

static tb_schema_t *avro_to_connect(const void *compiled, const uint8_t *payload,
                                    size_t len, char *errstr, size_t errstr_size)
{
    (void)payload; /* a schema has one part */
    (void)len;
    return tb_avro_to_connect(compiled, errstr, errstr_size);
}

static int avro_to_value(const void *compiled, const tb_schema_t *connect,
                         const uint8_t *payload, size_t len, tb_value_t **value,
                         char *errstr, size_t errstr_size)
{
    return tb_avro_to_value(compiled, connect, payload, len, value, errstr, errstr_size);
}

static int avro_from_value(const void *compiled, const tb_schema_t *schema,
                           const tb_value_t *value, tb_buf_t *out, char *errstr,
                           size_t errstr_size)
{
    return tb_avro_from_value(compiled, schema, value, out, errstr, errstr_size);
}

static const tb_registry_format_t avro_format = {
    .type = TB_SCHEMA_AVRO,
    .name = "Avro",
    .compile = avro_compile,
    .destroy = avro_destroy,
    .record_name = avro_record_name,
    .takes_text = avro_takes_text,
    .decode = avro_decode,
    .encode = avro_encode,
    .infer = tb_avro_infer,
    .to_connect = avro_to_connect,
    .from_connect = tb_avro_from_connect,
    .to_value = avro_to_value,
    .from_value = avro_from_value,
};

static void *avro_create(const json_t *values, bool for_key, char *errstr,
                         size_t errstr_size)
{
    return tb_registry_converter_create(&avro_format, values, for_key, errstr,
                                        errstr_size);
}

const tb_converter_class_t tb_avro_converter = {
    .name = "io.confluent.connect.avro.AvroConverter",
    .alias = "AvroConverter",
    .config = &tb_avro_converter_config,
    .create = avro_create,
    .destroy = tb_registry_converter_destroy,
    .to_plugin = tb_registry_converter_to_plugin,
    .from_plugin_topic = tb_registry_converter_from_plugin,
    .to_typed = tb_registry_converter_to_typed,
    .from_typed = tb_registry_converter_from_typed,
};
