/*
 * JsonSchemaConverter - io.confluent.connect.json.JsonSchemaConverter: JSON
 * in Confluent's wire format under a JSON Schema from the registry. Values
 * are validated against the schema before they are encoded
 * (registry/json_schema/tb_json_schema.h lists the keywords); decoding checks that the
 * payload is JSON and hands it over compacted. Both write each real in its
 * shortest spelling (core/tb_text.h). Connect data maps as
 * tb_json_schema_data.h says.
 */
#include <stdio.h>
#include <stdlib.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_schema_data.h"
#include "connectors/converters/tb_registry_converter.h"
#include "registry/json_schema/tb_json_schema.h"
#include "core/tb_text.h"

#define PARSE_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

static void *js_compile(const char *text, const json_t *references, char *errstr,
                        size_t errstr_size)
{
    return tb_json_schema_create(text, references, errstr, errstr_size);
}

static void js_destroy(void *compiled)
{
    tb_json_schema_destroy(compiled);
}

static const char *js_record_name(const void *compiled)
{
    return tb_json_schema_title(compiled);
}

static bool js_takes_text(const void *compiled)
{
    return tb_json_schema_takes_text(compiled) != 0;
}

static int js_decode(const void *compiled, const uint8_t *payload, size_t len,
                     tb_buf_t *out, char *errstr, size_t errstr_size)
{
    json_error_t error;
    json_t *value = json_loadb((const char *)payload, len, PARSE_FLAGS, &error);
    (void)compiled; /* the payload is read, not validated, as Confluent's reader does */
    if (value == NULL) {
        snprintf(errstr, errstr_size, "the payload is not JSON: %s", error.text);
        return -1;
    }
    tb_text_json(out, value);
    json_decref(value);
    if (out->failed) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

static int js_encode(const void *compiled, const json_t *value, tb_buf_t *out,
                     char *errstr, size_t errstr_size)
{
    if (tb_json_schema_validate(compiled, value, errstr, errstr_size) != 0) {
        return -1;
    }
    tb_text_json(out, value);
    if (out->failed) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

static tb_schema_t *js_to_connect(const void *compiled, const uint8_t *payload,
                                  size_t len, char *errstr, size_t errstr_size)
{
    (void)payload; /* a schema has one part */
    (void)len;
    return tb_json_schema_to_connect(compiled, errstr, errstr_size);
}

/* The payload is Connect's JSON payload form; a Decimal written as a number
 * keeps every digit. */
static int js_to_value(const void *compiled, const tb_schema_t *connect,
                       const uint8_t *payload, size_t len, tb_value_t **value,
                       char *errstr, size_t errstr_size)
{
    (void)compiled;
    return tb_json_value_read(connect, (const char *)payload, len, value, errstr,
                              errstr_size);
}

/* Connect data fits the schema derived from its Connect schema, so it is
 * written without validation; reals as Jackson spells them, Decimals as
 * numbers of their exact digits. */
static int js_from_value(const void *compiled, const tb_schema_t *schema,
                         const tb_value_t *value, tb_buf_t *out, char *errstr,
                         size_t errstr_size)
{
    json_t *json = NULL;
    size_t len;
    (void)compiled;
    if (tb_json_value_dump(schema, value, TB_DECIMAL_NUMERIC, &json, errstr,
                           errstr_size) != 0) {
        return -1;
    }
    char *text = tb_json_write(json, &len);
    json_decref(json);
    if (text == NULL) {
        snprintf(errstr, errstr_size, "the value cannot be written as JSON");
        return -1;
    }
    tb_buf_append(out, text, len);
    free(text);
    return 0;
}

static const tb_registry_format_t json_schema_format = {
    .type = TB_SCHEMA_JSON,
    .name = "JSON Schema",
    .compile = js_compile,
    .destroy = js_destroy,
    .record_name = js_record_name,
    .takes_text = js_takes_text,
    .decode = js_decode,
    .encode = js_encode,
    .infer = tb_json_schema_infer,
    .to_connect = js_to_connect,
    .from_connect = tb_json_schema_from_connect,
    .to_value = js_to_value,
    .from_value = js_from_value,
};

static void *js_create(const json_t *values, bool for_key, char *errstr,
                       size_t errstr_size)
{
    return tb_registry_converter_create(&json_schema_format, values, for_key, errstr,
                                        errstr_size);
}

const tb_converter_class_t tb_json_schema_converter = {
    .name = "io.confluent.connect.json.JsonSchemaConverter",
    .alias = "JsonSchemaConverter",
    .config = &tb_json_schema_converter_config,
    .create = js_create,
    .destroy = tb_registry_converter_destroy,
    .to_plugin = tb_registry_converter_to_plugin,
    .from_plugin_topic = tb_registry_converter_from_plugin,
    .to_typed = tb_registry_converter_to_typed,
    .from_typed = tb_registry_converter_from_typed,
};
