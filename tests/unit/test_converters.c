#include "tb_converter_test.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_converter.h"

#define STRING_CLASS "org.apache.kafka.connect.storage.StringConverter"
#define BYTES_CLASS "org.apache.kafka.connect.converters.ByteArrayConverter"
#define JSON_CLASS "org.apache.kafka.connect.json.JsonConverter"

#define ENVELOPE_ERROR                                                                   \
    "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and "  \
    "may not contain additional fields. If you are trying to deserialize plain JSON "    \
    "data, set schemas.enable=false in your converter configuration."

/* Connect's example envelope (connect-rest-api.md, section 5). */
#define CONNECT_EXAMPLE                                                                  \
    "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":"     \
    "false,\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,\"field\":\"n\"}],"  \
    "\"optional\":false,\"name\":\"rec\"},\"payload\":{\"id\":1,\"n\":\"x\"}}"

static tb_converter_t *json_converter(bool schemas_enable)
{
    return converter_of(JSON_CLASS,
                        schemas_enable ? "{}" : "{\"schemas.enable\":\"false\"}");
}

static void expect_create_error(const char *name, const char *settings,
                                const char *message)
{
    char errstr[512] = "";
    json_t *raw = json_loads(settings, 0, NULL);
    assert_null(tb_converter_create(name, raw, false, errstr, sizeof(errstr)));
    assert_string_equal(errstr, message);
    json_decref(raw);
}

static void expect_to_plugin(tb_converter_t *c, const char *input, const char *expected)
{
    char errstr[512] = "";
    const void *out;
    size_t out_len;
    bool owned;
    int rc = tb_converter_to_plugin(c, input, strlen(input), &out, &out_len, &owned,
                                    errstr, sizeof(errstr));
    if (rc != 0) {
        fail_msg("%s: %s", input, errstr);
    }
    assert_non_null(out);
    assert_int_equal(out_len, strlen(expected));
    assert_memory_equal(out, expected, out_len);
    if (owned) {
        free((void *)out);
    }
}

static void expect_to_plugin_error(tb_converter_t *c, const char *input,
                                   const char *message)
{
    char errstr[512] = "";
    const void *out;
    size_t out_len;
    bool owned;
    assert_int_equal(tb_converter_to_plugin(c, input, strlen(input), &out, &out_len,
                                            &owned, errstr, sizeof(errstr)),
                     -1);
    assert_string_equal(errstr, message);
}

/* Converts len bytes of data and returns the NUL-terminated result. */
static char *from_plugin(tb_converter_t *c, tb_data_kind_t kind, const void *data,
                         size_t len)
{
    char errstr[512] = "";
    void *out;
    size_t out_len;
    char *text;
    if (tb_converter_from_plugin(c, kind, data, len, &out, &out_len, errstr,
                                 sizeof(errstr)) != 0) {
        fail_msg("from_plugin: %s", errstr);
    }
    assert_non_null(out);
    text = malloc(out_len + 1);
    memcpy(text, out, out_len);
    text[out_len] = '\0';
    assert_int_equal(strlen(text), out_len);
    free(out);
    return text;
}

static void expect_from_plugin(tb_converter_t *c, tb_data_kind_t kind, const char *input,
                               const char *expected)
{
    char *text = from_plugin(c, kind, input, strlen(input));
    assert_string_equal(text, expected);
    free(text);
}

static void expect_from_plugin_error_prefix(tb_converter_t *c, tb_data_kind_t kind,
                                            const char *input, size_t len,
                                            const char *prefix)
{
    char errstr[512] = "";
    void *out;
    size_t out_len;
    assert_int_equal(tb_converter_from_plugin(c, kind, input, len, &out, &out_len, errstr,
                                              sizeof(errstr)),
                     -1);
    assert_null(out);
    assert_memory_equal(errstr, prefix, strlen(prefix));
}

static void test_canonical_names_and_aliases(void **state)
{
    (void)state;
    assert_string_equal(tb_converter_canonical_name(STRING_CLASS), STRING_CLASS);
    assert_string_equal(tb_converter_canonical_name(BYTES_CLASS), BYTES_CLASS);
    assert_string_equal(tb_converter_canonical_name(JSON_CLASS), JSON_CLASS);
    assert_string_equal(tb_converter_canonical_name("StringConverter"), STRING_CLASS);
    assert_string_equal(tb_converter_canonical_name("ByteArrayConverter"), BYTES_CLASS);
    assert_string_equal(tb_converter_canonical_name("JsonConverter"), JSON_CLASS);
    assert_null(tb_converter_canonical_name("jsonconverter"));
    assert_null(tb_converter_canonical_name("Json"));
    assert_string_equal(
        tb_converter_canonical_name("io.confluent.connect.protobuf.ProtobufConverter"),
        "io.confluent.connect.protobuf.ProtobufConverter");
    assert_null(tb_converter_canonical_name(""));
    assert_null(tb_converter_canonical_name(NULL));
}

static void test_config_tables(void **state)
{
    (void)state;
    const tb_config_table_t *json = tb_converter_config("JsonConverter");
    assert_non_null(json);
    assert_ptr_equal(json, tb_converter_config(JSON_CLASS));
    assert_string_equal(json->name, JSON_CLASS);
    assert_int_equal(json->count, 5);
    assert_string_equal(json->defs[0].name, "schemas.enable");
    assert_string_equal(json->defs[0].default_value, "true");
    assert_string_equal(json->defs[1].name, "schemas.cache.size");
    assert_string_equal(json->defs[1].default_value, "1000");
    assert_string_equal(json->defs[2].name, "schema.content");
    assert_null(json->defs[2].default_value);
    assert_string_equal(json->defs[3].name, "decimal.format");
    assert_string_equal(json->defs[3].default_value, "BASE64");
    assert_string_equal(json->defs[4].name, "replace.null.with.default");
    assert_string_equal(json->defs[4].default_value, "true");

    const tb_config_table_t *string = tb_converter_config(STRING_CLASS);
    assert_int_equal(string->count, 1);
    assert_string_equal(string->defs[0].name, "converter.encoding");
    assert_int_equal(tb_converter_config("ByteArrayConverter")->count, 0);
    assert_null(tb_converter_config("NoSuchConverter"));
}

static void test_unknown_class(void **state)
{
    (void)state;
    expect_create_error("com.example.MyConverter", "{}",
                        "Class com.example.MyConverter could not be found.");
}

static void test_bad_settings(void **state)
{
    (void)state;
    expect_create_error(JSON_CLASS, "{\"schemas.enable\":\"maybe\"}",
                        "Invalid value maybe for configuration schemas.enable: Expected "
                        "value to be either true or false");
    expect_create_error(JSON_CLASS, "{\"replace.null.with.default\":\"yes\"}",
                        "Invalid value yes for configuration replace.null.with.default: "
                        "Expected value to be either true or false");
    expect_create_error(JSON_CLASS, "{\"schemas.cache.size\":\"lots\"}",
                        "Invalid value lots for configuration schemas.cache.size: Not a "
                        "number of type INT");
    expect_create_error(JSON_CLASS, "{\"decimal.format\":\"HEX\"}",
                        "Invalid value HEX for configuration decimal.format: String must "
                        "be one of: BASE64, NUMERIC");
    expect_create_error("StringConverter", "{\"converter.encoding\":\"ISO-8859-1\"}",
                        "Invalid value ISO-8859-1 for configuration converter.encoding: "
                        "String must be one of: UTF8, UTF-8");
}

static void test_good_settings_and_unknown_keys_accepted(void **state)
{
    (void)state;
    tb_converter_destroy(converter_of(JSON_CLASS,
                                      "{\"schemas.enable\":\"FALSE\","
                                      "\"schemas.cache.size\":\"50\","
                                      "\"decimal.format\":\"numeric\","
                                      "\"replace.null.with.default\":\"false\","
                                      "\"some.other.key\":\"x\"}"));
    tb_converter_destroy(
        converter_of("StringConverter", "{\"converter.encoding\":\"utf-8\"}"));
    tb_converter_destroy(
        converter_of("StringConverter", "{\"converter.encoding\":\"UTF8\"}"));
    tb_converter_destroy(converter_of("ByteArrayConverter", "{\"anything\":\"goes\"}"));
    tb_converter_destroy(converter_of(JSON_CLASS, NULL));
    tb_converter_destroy(NULL);
}

static void test_passthrough_flags(void **state)
{
    (void)state;
    tb_converter_t *string = converter_of("StringConverter", "{}");
    tb_converter_t *bytes = converter_of(BYTES_CLASS, "{}");
    tb_converter_t *json = json_converter(true);
    tb_converter_t *plain = json_converter(false);
    assert_true(tb_converter_passthrough(string));
    assert_true(tb_converter_passthrough(bytes));
    assert_false(tb_converter_passthrough(json));
    assert_false(tb_converter_passthrough(plain));
    tb_converter_destroy(string);
    tb_converter_destroy(bytes);
    tb_converter_destroy(json);
    tb_converter_destroy(plain);
}

/* to_plugin hands the input itself over; from_plugin copies it, whatever
 * its kind. */
static void check_passthrough(tb_converter_t *c, const void *data, size_t len)
{
    char errstr[256];
    const void *view;
    size_t view_len;
    bool owned;
    void *copy;
    size_t copy_len;

    assert_int_equal(tb_converter_to_plugin(c, data, len, &view, &view_len, &owned,
                                            errstr, sizeof(errstr)),
                     0);
    assert_ptr_equal(view, data);
    assert_int_equal(view_len, len);
    assert_false(owned);
    for (int kind = TB_DATA_BYTES; kind <= TB_DATA_JSON; kind++) {
        assert_int_equal(tb_converter_from_plugin(c, (tb_data_kind_t)kind, data, len,
                                                  &copy, &copy_len, errstr,
                                                  sizeof(errstr)),
                         0);
        assert_non_null(copy);
        assert_ptr_not_equal(copy, data);
        assert_int_equal(copy_len, len);
        assert_memory_equal(copy, data, len);
        free(copy);
    }
}

static void test_string_converter_passes_through(void **state)
{
    (void)state;
    tb_converter_t *c = converter_of(STRING_CLASS, "{}");
    const char *text = "h\xc3\xa9llo {\"not\": \"parsed\"}";
    check_passthrough(c, text, strlen(text));
    check_passthrough(c, "", 0);
    tb_converter_destroy(c);
}

static void test_byte_array_converter_passes_through(void **state)
{
    (void)state;
    tb_converter_t *c = converter_of("ByteArrayConverter", "{}");
    const unsigned char bytes[] = {0x00, 0xff, 0x7b, 0x00, 0x80};
    check_passthrough(c, bytes, sizeof(bytes));
    tb_converter_destroy(c);
}

static void check_nulls(tb_converter_t *c)
{
    char errstr[256];
    const void *view = "x";
    size_t view_len = 1;
    bool owned = true;
    assert_int_equal(tb_converter_to_plugin(c, NULL, 0, &view, &view_len, &owned, errstr,
                                            sizeof(errstr)),
                     0);
    assert_null(view);
    assert_int_equal(view_len, 0);
    assert_false(owned);
    for (int kind = TB_DATA_BYTES; kind <= TB_DATA_JSON; kind++) {
        void *out = "x";
        size_t out_len = 1;
        assert_int_equal(tb_converter_from_plugin(c, (tb_data_kind_t)kind, NULL, 0, &out,
                                                  &out_len, errstr, sizeof(errstr)),
                         0);
        assert_null(out);
        assert_int_equal(out_len, 0);
    }
}

static void test_null_is_null_everywhere(void **state)
{
    (void)state;
    tb_converter_t *all[] = {converter_of(STRING_CLASS, "{}"),
                             converter_of(BYTES_CLASS, "{}"), json_converter(true),
                             json_converter(false)};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        check_nulls(all[i]);
        tb_converter_destroy(all[i]);
    }
}

static void test_json_connect_example_round_trip(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    const char *payload = "{\"id\":1,\"n\":\"x\"}";
    const char *envelope =
        "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":"
        "false,\"field\":\"id\"},{\"type\":\"string\",\"optional\":false,\"field\":"
        "\"n\"}],\"optional\":false},\"payload\":{\"id\":1,\"n\":\"x\"}}";
    char *produced;

    expect_to_plugin(c, CONNECT_EXAMPLE, payload);
    produced = from_plugin(c, TB_DATA_JSON, payload, strlen(payload));
    assert_string_equal(produced, envelope);
    expect_to_plugin(c, produced, payload);
    free(produced);
    tb_converter_destroy(c);
}

static void test_json_compact_payload_is_not_copied(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    const char *message = CONNECT_EXAMPLE;
    char errstr[256];
    const void *out;
    size_t out_len;
    bool owned;

    assert_int_equal(tb_converter_to_plugin(c, message, strlen(message), &out, &out_len,
                                            &owned, errstr, sizeof(errstr)),
                     0);
    assert_false(owned);
    assert_ptr_equal(out, strstr(message, "{\"id\""));
    assert_int_equal(out_len, strlen("{\"id\":1,\"n\":\"x\"}"));
    tb_converter_destroy(c);
}

static void test_json_spaced_envelope_is_compacted(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_to_plugin(c,
                     " {\n  \"payload\" : { \"a b\" : [ 1 , 2.50 , 1e3 ] ,\t\"c\": "
                     "\"x , y\" } ,\r\n  \"schema\" : null }\n",
                     "{\"a b\":[1,2.50,1e3],\"c\":\"x , y\"}");
    tb_converter_destroy(c);
}

static void test_json_payload_found_past_tricky_strings(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_to_plugin(c,
                     "{\"schema\":{\"type\":\"string\",\"optional\":false,\"doc\":"
                     "\"a \\\"payload\\\": } ]\"},\"payload\":\"\\\\\\\"}\"}",
                     "\\\"}");
    expect_to_plugin(c, "{\"schema\":null,\"pay\\u006coad\":1}", "1");
    expect_to_plugin(c, "{\"schema\":null,\"payload\":-0.5e-3}", "-0.5e-3");
    expect_to_plugin(c, "{\"schema\":null,\"payload\":true }", "true");
    tb_converter_destroy(c);
}

static void test_json_envelope_required(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_to_plugin_error(c, "{\"id\":1,\"n\":\"x\"}", ENVELOPE_ERROR);
    expect_to_plugin_error(c, "{\"schema\":null}", ENVELOPE_ERROR);
    expect_to_plugin_error(c, "{\"payload\":1}", ENVELOPE_ERROR);
    expect_to_plugin_error(c, "{\"schema\":null,\"payload\":1,\"extra\":2}",
                           ENVELOPE_ERROR);
    expect_to_plugin_error(c, "[{\"schema\":null,\"payload\":1}]", ENVELOPE_ERROR);
    expect_to_plugin_error(c, "\"text\"", ENVELOPE_ERROR);
    expect_to_plugin_error(c, "42", ENVELOPE_ERROR);
    expect_to_plugin_error(c, "null", ENVELOPE_ERROR);
    tb_converter_destroy(c);
}

static void test_json_envelope_schema_checked(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_to_plugin_error(c, "{\"schema\":{\"optional\":true},\"payload\":1}",
                           "Schema must contain 'type' field");
    expect_to_plugin_error(c, "{\"schema\":\"int32\",\"payload\":1}",
                           "Schema must contain 'type' field");
    expect_to_plugin_error(c, "{\"schema\":{\"type\":\"int128\"},\"payload\":1}",
                           "Unknown schema type: int128");
    expect_to_plugin(c, "{\"schema\":{\"type\":\"float\"},\"payload\":1.5}", "1.5");
    tb_converter_destroy(c);
}

static void test_json_invalid_json(void **state)
{
    (void)state;
    tb_converter_t *with = json_converter(true);
    tb_converter_t *without = json_converter(false);
    const char *bad[] = {"{\"a\":", "{a:1}", "[1,]", "{} x", "", "\xff"};
    const char *prefix =
        "Converting byte[] to Kafka Connect data failed due to serialization error: ";

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char errstr[512] = "";
        const void *out;
        size_t out_len;
        bool owned;
        assert_int_equal(tb_converter_to_plugin(with, bad[i], strlen(bad[i]), &out,
                                                &out_len, &owned, errstr, sizeof(errstr)),
                         -1);
        assert_memory_equal(errstr, prefix, strlen(prefix));
        assert_int_equal(tb_converter_to_plugin(without, bad[i], strlen(bad[i]), &out,
                                                &out_len, &owned, errstr, sizeof(errstr)),
                         -1);
        assert_memory_equal(errstr, prefix, strlen(prefix));
    }
    expect_to_plugin_error(without, "{\"a\":",
                           "Converting byte[] to Kafka Connect data failed due to "
                           "serialization error: unexpected token near end of file "
                           "(line 1, column 5)");
    tb_converter_destroy(with);
    tb_converter_destroy(without);
}

static void test_json_null_payload_is_null(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    const char *messages[] = {
        "{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":null}",
        "{\"schema\":null,\"payload\":null}",
    };
    for (size_t i = 0; i < 2; i++) {
        char errstr[256];
        const void *out = "x";
        size_t out_len = 1;
        bool owned = true;
        assert_int_equal(tb_converter_to_plugin(c, messages[i], strlen(messages[i]), &out,
                                                &out_len, &owned, errstr, sizeof(errstr)),
                         0);
        assert_null(out);
        assert_int_equal(out_len, 0);
        assert_false(owned);
    }
    tb_converter_destroy(c);
}

static void test_json_string_payload_is_its_text(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_to_plugin(c,
                     "{\"schema\":{\"type\":\"string\",\"optional\":false},"
                     "\"payload\":\"hi \\\"there\\\"\\n\"}",
                     "hi \"there\"\n");
    tb_converter_destroy(c);
}

static void test_json_bytes_payload_is_base64_text(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_to_plugin(c,
                     "{\"schema\":{\"type\":\"bytes\",\"optional\":false},"
                     "\"payload\":\"AAH+/w==\"}",
                     "AAH+/w==");
    tb_converter_destroy(c);
}

static void test_json_schemas_disabled_to_plugin(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(false);
    expect_to_plugin(c, " { \"a\" : [1, 2.50, \"x y\"] , \"b\":null }\n",
                     "{\"a\":[1,2.50,\"x y\"],\"b\":null}");
    expect_to_plugin(c, "{\"schema\":null,\"payload\":1}",
                     "{\"schema\":null,\"payload\":1}");
    expect_to_plugin(c, "42", "42");
    expect_to_plugin(c, "\"text\"", "text");
    expect_to_plugin(c, "null", "null");
    expect_to_plugin(c, "{\"big\":123456789012345678901234567890}",
                     "{\"big\":123456789012345678901234567890}");
    expect_to_plugin(c, "[\"\\u0000\"]", "[\"\\u0000\"]");
    tb_converter_destroy(c);
}

/* KIP-1054: schema.content makes each message a payload alone, read under
 * that schema; source data keeps its envelope. */
#define CONTENT_SETTINGS(schemas_enable)                                                 \
    "{\"schemas.enable\":\"" schemas_enable "\",\"schema.content\":"                     \
    "\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"type\\\":\\\"int32\\\","        \
    "\\\"optional\\\":false,\\\"field\\\":\\\"id\\\"}],\\\"optional\\\":true}\"}"

static void test_json_schema_content(void **state)
{
    (void)state;
    tb_converter_t *c = converter_of(JSON_CLASS, CONTENT_SETTINGS("true"));
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    char *produced;

    expect_to_plugin(c, " {\"id\": 7} ", "{\"id\":7}");
    expect_to_plugin_error(c, "{\"schema\":null,\"payload\":{\"id\":7}}",
                           "Invalid null value for required INT32 field");
    expect_to_plugin_error(c, "{\"id\":\"seven\"}",
                           "Invalid value for schema type INT32: a JSON STRING");
    typed_of(c, "{\"id\":7}", &schema, &value);
    assert_int_equal(tb_schema_type(schema), TB_TYPE_STRUCT);
    assert_int_equal(tb_value_int64(tb_value_struct_get(value, "id")), 7);
    tb_schema_decref(schema);
    tb_value_free(value);
    typed_of(c, "null", &schema, &value);
    assert_non_null(schema);
    assert_null(value);
    tb_schema_decref(schema);
    produced = from_plugin(c, TB_DATA_JSON, "{\"id\":7}", 8);
    assert_string_equal(produced, "{\"schema\":{\"type\":\"struct\",\"fields\":[{"
                                  "\"type\":\"int64\",\"optional\":false,\"field\":"
                                  "\"id\"}],\"optional\":false},\"payload\":{\"id\":7}}");
    free(produced);
    tb_converter_destroy(c);

    /* without schemas.enable the key does not apply */
    c = converter_of(JSON_CLASS, CONTENT_SETTINGS("false"));
    expect_to_plugin(c, "{\"schema\":null,\"payload\":1}",
                     "{\"schema\":null,\"payload\":1}");
    tb_converter_destroy(c);

    expect_create_error(JSON_CLASS, "{\"schema.content\":\"{\\\"type\\\":\\\"x\\\"}\"}",
                        "Invalid value {\"type\":\"x\"} for configuration "
                        "schema.content: Unknown schema type: x");
    expect_create_error(JSON_CLASS, "{\"schema.content\":\"[1]\"}",
                        "Invalid value [1] for configuration schema.content: A schema "
                        "is a JSON object, as in an envelope's \"schema\"");
}

static void test_json_from_string(void **state)
{
    (void)state;
    tb_converter_t *with = json_converter(true);
    tb_converter_t *without = json_converter(false);
    const char nul[] = {'a', '\0', 'b'};
    char *text;

    expect_from_plugin(with, TB_DATA_STRING, "h\xc3\xa9 \"q\"\n",
                       "{\"schema\":{\"type\":\"string\",\"optional\":false},"
                       "\"payload\":\"h\xc3\xa9 \\\"q\\\"\\n\"}");
    expect_from_plugin(without, TB_DATA_STRING, "h\xc3\xa9 \"q\"\n",
                       "\"h\xc3\xa9 \\\"q\\\"\\n\"");
    expect_from_plugin(without, TB_DATA_STRING, "  {not json}  ", "\"  {not json}  \"");
    expect_from_plugin(without, TB_DATA_STRING, "", "\"\"");
    text = from_plugin(without, TB_DATA_STRING, nul, sizeof(nul));
    assert_string_equal(text, "\"a\\u0000b\"");
    free(text);
    expect_from_plugin_error_prefix(with, TB_DATA_STRING, "\xc3(", 2,
                                    "Converting Kafka Connect data to byte[] failed "
                                    "due to serialization error: ");
    tb_converter_destroy(with);
    tb_converter_destroy(without);
}

/* The base64 text of a JSON string literal decodes to want. */
static void check_base64_literal(const char *literal, const unsigned char *want,
                                 size_t want_len)
{
    size_t n = strlen(literal);
    unsigned char decoded[64];
    int decoded_len;

    assert_true(n >= 2 && literal[0] == '"' && literal[n - 1] == '"');
    assert_true(n - 2 < sizeof(decoded));
    decoded_len =
        EVP_DecodeBlock(decoded, (const unsigned char *)literal + 1, (int)(n - 2));
    assert_true(decoded_len >= 0);
    /* EVP_DecodeBlock counts the padding's bytes too. */
    decoded_len -= (n > 3 && literal[n - 2] == '=') + (n > 4 && literal[n - 3] == '=');
    assert_int_equal(decoded_len, want_len);
    assert_memory_equal(decoded, want, want_len);
}

static void test_json_from_bytes(void **state)
{
    (void)state;
    tb_converter_t *with = json_converter(true);
    tb_converter_t *without = json_converter(false);
    const unsigned char bytes[] = {0x00, 0x01, 0xfe, 0xff};
    const char *literals[] = {"\"\"", "\"AA==\"", "\"AAE=\"", "\"AAH+\"", "\"AAH+/w==\""};
    char *text;

    for (size_t len = 0; len <= sizeof(bytes); len++) {
        text = from_plugin(without, TB_DATA_BYTES, bytes, len);
        assert_string_equal(text, literals[len]);
        check_base64_literal(text, bytes, len);
        free(text);
    }
    text = from_plugin(with, TB_DATA_BYTES, bytes, sizeof(bytes));
    assert_string_equal(text, "{\"schema\":{\"type\":\"bytes\",\"optional\":false},"
                              "\"payload\":\"AAH+/w==\"}");
    expect_to_plugin(with, text, "AAH+/w==");
    free(text);
    tb_converter_destroy(with);
    tb_converter_destroy(without);
}

static void test_json_from_json_infers_nested_schema(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_from_plugin(
        c, TB_DATA_JSON,
        "{\"id\": 7, \"name\": \"ada\", \"score\": 1.5, \"ok\": true,\n"
        " \"tags\": [\"a\", \"b\"], \"address\": {\"city\": \"Oslo\", \"zip\": null},\n"
        " \"note\": null, \"empty\": [], \"points\": [{\"x\": 1}]}",
        "{\"schema\":{\"type\":\"struct\",\"fields\":["
        "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
        "{\"type\":\"string\",\"optional\":false,\"field\":\"name\"},"
        "{\"type\":\"double\",\"optional\":false,\"field\":\"score\"},"
        "{\"type\":\"boolean\",\"optional\":false,\"field\":\"ok\"},"
        "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":false},"
        "\"optional\":false,\"field\":\"tags\"},"
        "{\"type\":\"struct\",\"fields\":["
        "{\"type\":\"string\",\"optional\":false,\"field\":\"city\"},"
        "{\"type\":\"string\",\"optional\":true,\"field\":\"zip\"}],"
        "\"optional\":false,\"field\":\"address\"},"
        "{\"type\":\"string\",\"optional\":true,\"field\":\"note\"},"
        "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true},"
        "\"optional\":false,\"field\":\"empty\"},"
        "{\"type\":\"array\",\"items\":{\"type\":\"struct\",\"fields\":["
        "{\"type\":\"int64\",\"optional\":false,\"field\":\"x\"}],\"optional\":false},"
        "\"optional\":false,\"field\":\"points\"}],"
        "\"optional\":false},"
        "\"payload\":{\"id\":7,\"name\":\"ada\",\"score\":1.5,\"ok\":true,"
        "\"tags\":[\"a\",\"b\"],\"address\":{\"city\":\"Oslo\",\"zip\":null},"
        "\"note\":null,\"empty\":[],\"points\":[{\"x\":1}]}}");
    tb_converter_destroy(c);
}

static void test_json_from_json_scalars(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(true);
    expect_from_plugin(c, TB_DATA_JSON, " 5 ",
                       "{\"schema\":{\"type\":\"int64\",\"optional\":false},"
                       "\"payload\":5}");
    expect_from_plugin(c, TB_DATA_JSON, "0.1",
                       "{\"schema\":{\"type\":\"double\",\"optional\":false},"
                       "\"payload\":0.1}");
    expect_from_plugin(c, TB_DATA_JSON, "\"s p\"",
                       "{\"schema\":{\"type\":\"string\",\"optional\":false},"
                       "\"payload\":\"s p\"}");
    expect_from_plugin(c, TB_DATA_JSON, "false",
                       "{\"schema\":{\"type\":\"boolean\",\"optional\":false},"
                       "\"payload\":false}");
    expect_from_plugin(c, TB_DATA_JSON, "null",
                       "{\"schema\":{\"type\":\"string\",\"optional\":true},"
                       "\"payload\":null}");
    tb_converter_destroy(c);
}

static void test_json_from_json_schemas_disabled(void **state)
{
    (void)state;
    tb_converter_t *c = json_converter(false);
    expect_from_plugin(c, TB_DATA_JSON, "{ \"a\" : [ 1, 2.50 ], \"s\" : \"x  y\" }\n",
                       "{\"a\":[1,2.50],\"s\":\"x  y\"}");
    expect_from_plugin(c, TB_DATA_JSON, "123456789012345678901234567890",
                       "123456789012345678901234567890");
    expect_from_plugin(c, TB_DATA_JSON, "null", "null");
    tb_converter_destroy(c);
}

static void test_json_from_json_invalid(void **state)
{
    (void)state;
    const char *prefix =
        "Converting Kafka Connect data to byte[] failed due to serialization error: ";
    for (int enable = 0; enable <= 1; enable++) {
        tb_converter_t *c = json_converter(enable);
        expect_from_plugin_error_prefix(c, TB_DATA_JSON, "{\"a\":}", 6, prefix);
        expect_from_plugin_error_prefix(c, TB_DATA_JSON, "plain text", 10, prefix);
        expect_from_plugin_error_prefix(c, TB_DATA_JSON, "", 0, prefix);
        tb_converter_destroy(c);
    }
}

static void test_json_key_converter_works_alike(void **state)
{
    (void)state;
    char errstr[256];
    tb_converter_t *c =
        tb_converter_create("JsonConverter", NULL, true, errstr, sizeof(errstr));
    assert_non_null(c);
    expect_to_plugin(c, CONNECT_EXAMPLE, "{\"id\":1,\"n\":\"x\"}");
    expect_from_plugin(c, TB_DATA_STRING, "k",
                       "{\"schema\":{\"type\":\"string\",\"optional\":false},"
                       "\"payload\":\"k\"}");
    tb_converter_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_names_and_aliases),
        cmocka_unit_test(test_config_tables),
        cmocka_unit_test(test_unknown_class),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_good_settings_and_unknown_keys_accepted),
        cmocka_unit_test(test_passthrough_flags),
        cmocka_unit_test(test_string_converter_passes_through),
        cmocka_unit_test(test_byte_array_converter_passes_through),
        cmocka_unit_test(test_null_is_null_everywhere),
        cmocka_unit_test(test_json_connect_example_round_trip),
        cmocka_unit_test(test_json_compact_payload_is_not_copied),
        cmocka_unit_test(test_json_spaced_envelope_is_compacted),
        cmocka_unit_test(test_json_payload_found_past_tricky_strings),
        cmocka_unit_test(test_json_envelope_required),
        cmocka_unit_test(test_json_envelope_schema_checked),
        cmocka_unit_test(test_json_invalid_json),
        cmocka_unit_test(test_json_null_payload_is_null),
        cmocka_unit_test(test_json_string_payload_is_its_text),
        cmocka_unit_test(test_json_bytes_payload_is_base64_text),
        cmocka_unit_test(test_json_schemas_disabled_to_plugin),
        cmocka_unit_test(test_json_schema_content),
        cmocka_unit_test(test_json_from_string),
        cmocka_unit_test(test_json_from_bytes),
        cmocka_unit_test(test_json_from_json_infers_nested_schema),
        cmocka_unit_test(test_json_from_json_scalars),
        cmocka_unit_test(test_json_from_json_schemas_disabled),
        cmocka_unit_test(test_json_from_json_invalid),
        cmocka_unit_test(test_json_key_converter_works_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
