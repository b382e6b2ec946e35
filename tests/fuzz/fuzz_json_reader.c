/*
 * libFuzzer target: JsonConverter's one-pass reader and direct writer
 * (connectors/converters/tb_json_reader.h, tb_json_writer.h), against the
 * jansson path they stand in for. The first byte picks a schema (none, or
 * one of every kind of field); the rest is JSON text. Whatever the reader
 * accepts, jansson's path must read as an equal value; whatever value
 * jansson's path reads, the writer must write as tb_json_write() writes
 * tb_json_value_dump()'s tree, or fail as it does. The text is also read
 * as an envelope (with a known schema text, which it skips unchecked): what
 * that accepts must be an object jansson reads with exactly the members
 * "schema" and "payload".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_reader.h"
#include "connectors/converters/tb_json_writer.h"

static const char *const schemas[] = {
    NULL,
    "{\"type\":\"struct\",\"fields\":["
    "{\"field\":\"i\",\"type\":\"int32\"},"
    "{\"field\":\"l\",\"type\":\"int64\",\"optional\":true},"
    "{\"field\":\"f\",\"type\":\"float\",\"optional\":true},"
    "{\"field\":\"d\",\"type\":\"double\",\"default\":1.5},"
    "{\"field\":\"b\",\"type\":\"boolean\",\"optional\":true},"
    "{\"field\":\"s\",\"type\":\"string\",\"optional\":true},"
    "{\"field\":\"y\",\"type\":\"bytes\",\"optional\":true},"
    "{\"field\":\"dec\",\"type\":\"bytes\",\"optional\":true,\"name\":"
    "\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"3\"}},"
    "{\"field\":\"a\",\"type\":\"array\",\"optional\":true,\"items\":"
    "{\"type\":\"int16\",\"optional\":true}},"
    "{\"field\":\"m\",\"type\":\"map\",\"optional\":true,\"keys\":{\"type\":\"string\"},"
    "\"values\":{\"type\":\"string\",\"optional\":true}},"
    "{\"field\":\"p\",\"type\":\"map\",\"optional\":true,\"keys\":{\"type\":\"int8\"},"
    "\"values\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
    "\"parameters\":{\"scale\":\"0\"}}},"
    "{\"field\":\"n\",\"type\":\"struct\",\"optional\":true,\"fields\":["
    "{\"field\":\"x\",\"type\":\"string\",\"optional\":true}]}]}",
    "{\"type\":\"array\",\"items\":{\"type\":\"double\",\"optional\":true}}",
    "{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":true},"
    "\"values\":{\"type\":\"int64\"}}",
    "{\"type\":\"string\",\"optional\":true}",
};

#define SCHEMA_COUNT (sizeof(schemas) / sizeof(schemas[0]))

static tb_schema_t *compiled[SCHEMA_COUNT];

static void compile(void)
{
    char errstr[256];
    for (size_t i = 0; i < SCHEMA_COUNT; i++) {
        if (schemas[i] != NULL && compiled[i] == NULL) {
            json_t *json = json_loads(schemas[i], 0, NULL);
            compiled[i] = tb_json_schema_parse(json, errstr, sizeof(errstr));
            json_decref(json);
            if (compiled[i] == NULL) {
                __builtin_trap();
            }
        }
    }
}

/* The writer against the jansson route, for a value jansson's path read. */
static void check_writer(const tb_schema_t *schema, const tb_value_t *value,
                         tb_decimal_format_t decimals)
{
    char errstr[256];
    char dump_errstr[256];
    json_t *json = NULL;
    tb_buf_t b = {0};
    int written =
        tb_json_write_value(&b, schema, value, decimals, errstr, sizeof(errstr));
    int dumped = tb_json_value_dump(schema, value, decimals, &json, dump_errstr,
                                    sizeof(dump_errstr));
    size_t len = 0;
    char *text = written == 0 ? tb_buf_take(&b, &len) : NULL;
    size_t jansson_len = 0;
    char *jansson_text = dumped == 0 ? tb_json_write(json, &jansson_len) : NULL;
    if (written != dumped || (written != 0 && strcmp(errstr, dump_errstr) != 0) ||
        (text == NULL) != (jansson_text == NULL) ||
        (text != NULL && (len != jansson_len || memcmp(text, jansson_text, len) != 0))) {
        __builtin_trap();
    }
    tb_buf_release(&b);
    free(text);
    free(jansson_text);
    json_decref(json);
}

static void check_envelope(const char *text, size_t len)
{
    /* a schema text "read before", as JsonConverter passes its latest */
    static const char known[] = "{\"type\":\"int64\"}";
    tb_json_span_t schema;
    tb_json_span_t payload;
    if (!tb_json_read_envelope(text, len, (tb_json_span_t){known, sizeof(known) - 1},
                               &schema, &payload)) {
        return;
    }
    json_t *json = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(json) || json_object_size(json) != 2 ||
        json_object_get(json, "schema") == NULL ||
        json_object_get(json, "payload") == NULL) {
        __builtin_trap();
    }
    json_decref(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    if (size < 1) {
        return 0;
    }
    compile();
    const tb_schema_t *schema = compiled[data[0] % SCHEMA_COUNT];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    tb_value_t *fast = NULL;
    tb_value_t *slow = NULL;
    bool accepted = tb_json_read_value(schema, text, len, &fast);
    json_t *json = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    int rc = json != NULL ? tb_json_value_parse_text(schema, json, text, len, &slow,
                                                     errstr, sizeof(errstr))
                          : -1;
    if (accepted && (rc != 0 || !tb_value_equal(fast, slow))) {
        __builtin_trap();
    }
    if (rc == 0) {
        check_writer(schema, slow, (tb_decimal_format_t)(data[0] / SCHEMA_COUNT % 3));
    }
    check_envelope(text, len);
    json_decref(json);
    tb_value_free(fast);
    tb_value_free(slow);
    return 0;
}
