/* The Protobuf codec of the registry formats (registry/protobuf/tb_protobuf.h): .proto
 * schemas with imports, JSON <-> binary round trips (nested messages, enums,
 * repeated and map fields, well-known types), message indexes, and
 * malformed data. */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "registry/protobuf/tb_protobuf.h"
#include "registry/tb_wire.h"

#define ORDER_PROTO                                                                      \
    "syntax = \"proto3\";\n"                                                             \
    "package shop;\n"                                                                    \
    "import \"google/protobuf/timestamp.proto\";\n"                                      \
    "import \"google/protobuf/wrappers.proto\";\n"                                       \
    "message Order {\n"                                                                  \
    "  int64 id = 1;\n"                                                                  \
    "  string item = 2;\n"                                                               \
    "  Kind kind = 3;\n"                                                                 \
    "  repeated string tags = 4;\n"                                                      \
    "  map<string, int32> counts = 5;\n"                                                 \
    "  Address address = 6;\n"                                                           \
    "  google.protobuf.Timestamp at = 7;\n"                                              \
    "  double ratio = 8;\n"                                                              \
    "  bytes raw = 9;\n"                                                                 \
    "  float f = 10;\n"                                                                  \
    "  uint64 big = 11;\n"                                                               \
    "  google.protobuf.StringValue note = 12;\n"                                         \
    "  optional int32 maybe = 13;\n"                                                     \
    "  message Line { string sku = 1; int32 qty = 2; }\n"                                \
    "  repeated Line lines = 14;\n"                                                      \
    "  oneof pay { string card = 15; int64 cash = 16; }\n"                               \
    "  map<int32, Address> by_id = 17;\n"                                                \
    "}\n"                                                                                \
    "enum Kind { KIND_UNKNOWN = 0; A = 1; B = 2; }\n"                                    \
    "message Address { string city = 1; }\n"

/* Every field set; the JSON is in the decoder's form (declaration order). */
#define FULL_ORDER                                                                       \
    "{\"id\":9007199254740993,\"item\":\"b\xc3\xa9"                                      \
    "ret\",\"kind\":\"B\","                                                              \
    "\"tags\":[\"x\",\"y\"],\"counts\":{\"a\":1},\"address\":{\"city\":\"Oslo\"},"       \
    "\"at\":\"2024-01-02T03:04:05.678Z\",\"ratio\":0.1,\"raw\":\"AAH/\","                \
    "\"f\":1.1,\"big\":1234567890123456789,\"note\":\"hi\",\"maybe\":0,"                 \
    "\"lines\":[{\"sku\":\"s1\",\"qty\":2}],\"cash\":-5,"                                \
    "\"by_id\":{\"7\":{\"city\":\"Rome\"}}}"

static tb_protobuf_schema_t *compile_with(const char *text, const json_t *references)
{
    char errstr[256] = "";
    tb_protobuf_schema_t *schema =
        tb_protobuf_schema_create(text, references, errstr, sizeof(errstr));
    if (schema == NULL) {
        fail_msg("%s", errstr);
    }
    return schema;
}

static tb_protobuf_schema_t *compile(const char *text)
{
    return compile_with(text, NULL);
}

static char *decode_ok(const tb_protobuf_schema_t *schema, const tb_buf_t *bin)
{
    char errstr[256] = "";
    tb_buf_t text = {0};
    size_t n;
    if (tb_protobuf_decode(schema, (const uint8_t *)bin->data, bin->len, &text, errstr,
                           sizeof(errstr)) != 0) {
        fail_msg("decode: %s", errstr);
    }
    return tb_buf_take(&text, &n);
}

static void encode_ok(const tb_protobuf_schema_t *schema, const char *json, tb_buf_t *bin)
{
    char errstr[256] = "";
    json_t *value = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(value);
    if (tb_protobuf_encode(schema, value, bin, errstr, sizeof(errstr)) != 0) {
        fail_msg("encode: %s", errstr);
    }
    json_decref(value);
}

/* Encodes json, decodes it back, and returns the JSON text. */
static char *round_trip(const tb_protobuf_schema_t *schema, const char *json)
{
    tb_buf_t bin = {0};
    encode_ok(schema, json, &bin);
    char *text = decode_ok(schema, &bin);
    tb_buf_release(&bin);
    return text;
}

/* Decoding that must fail; returns the reason (static). */
static const char *decode_fails(const tb_protobuf_schema_t *schema, const void *data,
                                size_t len)
{
    static char errstr[256];
    tb_buf_t text = {0};
    errstr[0] = '\0';
    assert_int_equal(tb_protobuf_decode(schema, data, len, &text, errstr, sizeof(errstr)),
                     -1);
    tb_buf_release(&text);
    assert_true(errstr[0] != '\0');
    return errstr;
}

static void test_round_trip_of_every_kind(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    assert_string_equal(tb_protobuf_schema_name(schema), "shop.Order");
    char *text = round_trip(schema, FULL_ORDER);
    assert_string_equal(text, FULL_ORDER);
    free(text);
    tb_protobuf_schema_destroy(schema);
}

static void test_unset_fields_take_defaults_or_null(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    char *text = round_trip(schema, "{}");
    assert_string_equal(text, "{\"id\":0,\"item\":\"\",\"kind\":\"KIND_UNKNOWN\","
                              "\"tags\":[],\"counts\":{},\"address\":null,\"at\":null,"
                              "\"ratio\":0,\"raw\":\"\",\"f\":0,\"big\":0,\"note\":null,"
                              "\"maybe\":null,\"lines\":[],\"by_id\":{}}");
    free(text);
    tb_protobuf_schema_destroy(schema);
}

static void test_encoding_reads_protobuf_json(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    /* lowerCamelCase names, 64-bit integers as strings, enums by number,
     * null for unset, NaN as text */
    char *text = round_trip(schema, "{\"byId\":{\"1\":{}},\"id\":\"12\",\"kind\":1,"
                                    "\"note\":null,\"ratio\":\"NaN\",\"card\":\"c\","
                                    "\"at\":\"1970-01-01T00:00:01Z\"}");
    assert_non_null(strstr(text, "\"id\":12,"));
    assert_non_null(strstr(text, "\"kind\":\"A\""));
    assert_non_null(strstr(text, "\"ratio\":\"NaN\""));
    assert_non_null(strstr(text, "\"card\":\"c\""));
    assert_null(strstr(text, "\"cash\""));
    assert_non_null(strstr(text, "\"at\":\"1970-01-01T00:00:01Z\""));
    assert_non_null(strstr(text, "\"by_id\":{\"1\":{\"city\":\"\"}}"));
    free(text);
    tb_protobuf_schema_destroy(schema);
}

static void test_encoding_refuses_what_does_not_fit(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    const char *bad[] = {"{\"nope\":1}", "{\"id\":\"x\"}", "{\"kind\":\"C\"}",
                         "{\"at\":\"monday\"}", "[1]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char errstr[256] = "";
        tb_buf_t bin = {0};
        json_t *value = json_loads(bad[i], 0, NULL);
        assert_non_null(value);
        assert_int_equal(tb_protobuf_encode(schema, value, &bin, errstr, sizeof(errstr)),
                         -1);
        assert_true(errstr[0] != '\0');
        json_decref(value);
        tb_buf_release(&bin);
    }
    tb_protobuf_schema_destroy(schema);
}

/* The JSON mapping's corners, read by reflection (registry/protobuf/tb_protobuf.h). */
static void test_encoding_reads_the_json_mapping_corners(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    const char *good[][2] = {
        /* written, read back (a fragment of the decoded form) */
        {"{\"big\":\"18446744073709551615\"}", "\"big\":18446744073709551615"},
        {"{\"id\":3.0}", "\"id\":3,"},
        {"{\"kind\":7}", "\"kind\":7"},            /* proto3 enums are open */
        {"{\"raw\":\"-_8\"}", "\"raw\":\"+/8=\""}, /* URL-safe base64 */
        {"{\"f\":\"-Infinity\"}", "\"f\":\"-Infinity\""},
        {"{\"lines\":[{\"sku\":\"a\"},{\"qty\":\"4\"}]}",
         "\"lines\":[{\"sku\":\"a\",\"qty\":0},{\"sku\":\"\",\"qty\":4}]"},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char *text = round_trip(schema, good[i][0]);
        if (strstr(text, good[i][1]) == NULL) {
            fail_msg("%s read back as %s", good[i][0], text);
        }
        free(text);
    }
    const char *bad[] = {"{\"id\":1.5}",
                         "{\"id\":9.25e18}",
                         "{\"big\":-1}",
                         "{\"maybe\":3000000000}",
                         "{\"f\":1e300}",
                         "{\"tags\":[null]}",
                         "{\"card\":\"c\",\"cash\":1}",
                         "{\"raw\":\"*\"}",
                         "{\"counts\":{\"a\":\"x\"}}",
                         "{\"address\":[1]}",
                         "{\"item\":5}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char errstr[256] = "";
        tb_buf_t bin = {0};
        json_t *value = json_loads(bad[i], 0, NULL);
        assert_non_null(value);
        if (tb_protobuf_encode(schema, value, &bin, errstr, sizeof(errstr)) != -1) {
            fail_msg("%s was encoded", bad[i]);
        }
        assert_non_null(strstr(errstr, "the value does not fit shop.Order: "));
        json_decref(value);
        tb_buf_release(&bin);
    }
    tb_protobuf_schema_destroy(schema);
}

static void test_message_indexes(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    tb_buf_t bin = {0};

    /* the first message is the single byte 0 */
    encode_ok(schema, "{\"id\":1}", &bin);
    assert_int_equal(bin.data[0], 0);
    assert_int_equal(bin.data[1], 0x08); /* field 1, varint */
    tb_buf_release(&bin);

    /* [1]: the second top-level message (Address) */
    const int32_t address[] = {1};
    tb_wire_write_indexes(&bin, address, 1);
    assert_int_equal(bin.len, 2);
    assert_memory_equal(bin.data, "\x02\x02", 2); /* count 1, index 1, zigzag */
    tb_buf_append(&bin,
                  "\x0a\x02"
                  "ab",
                  4);
    char *text = decode_ok(schema, &bin);
    assert_string_equal(text, "{\"city\":\"ab\"}");
    free(text);
    tb_buf_release(&bin);

    /* [0, 1]: Order's second nested type (the map entry of counts is the
     * first, as in the descriptor Confluent counts in) */
    const int32_t line[] = {0, 1};
    tb_wire_write_indexes(&bin, line, 2);
    assert_memory_equal(bin.data, "\x04\x00\x02", 3);
    tb_buf_append(&bin, "\x0a\x01s\x10\x03", 5);
    text = decode_ok(schema, &bin);
    assert_string_equal(text, "{\"sku\":\"s\",\"qty\":3}");
    free(text);
    tb_buf_release(&bin);

    /* indexes the schema does not have */
    assert_non_null(strstr(decode_fails(schema, "\x02\x06", 2), "message index [3]"));
    assert_non_null(
        strstr(decode_fails(schema, "\x04\x00\x0a", 3), "message index [0,5]"));
    /* a count with no indexes, a negative index, an endless varint */
    assert_non_null(strstr(decode_fails(schema, "\x04\x00", 2), "message index"));
    assert_non_null(strstr(decode_fails(schema, "\x02\x01", 2), "message index"));
    assert_non_null(
        strstr(decode_fails(schema, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11),
               "message index"));
    assert_non_null(strstr(decode_fails(schema, "", 0), "message index"));
    tb_protobuf_schema_destroy(schema);
}

static void test_malformed_payloads(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema = compile(ORDER_PROTO);
    tb_buf_t bin = {0};
    encode_ok(schema, FULL_ORDER, &bin);
    /* every truncation of the message either fails or decodes: never
     * crashes; cutting inside the nested address fails */
    for (size_t n = 0; n < bin.len; n++) {
        char errstr[256];
        tb_buf_t text = {0};
        (void)tb_protobuf_decode(schema, (const uint8_t *)bin.data, n, &text, errstr,
                                 sizeof(errstr));
        tb_buf_release(&text);
    }
    tb_buf_release(&bin);
    /* a length running past the end */
    assert_non_null(strstr(decode_fails(schema,
                                        "\x00\x12\x09"
                                        "ab",
                                        5),
                           "not a valid shop.Order"));
    /* a wire type the field does not have: group end */
    assert_non_null(strstr(decode_fails(schema, "\x00\x0c", 2), "not a valid"));
    /* a string that is not UTF-8 */
    assert_non_null(
        strstr(decode_fails(schema, "\x00\x12\x02\xff\xfe", 5), "shop.Order"));
    tb_protobuf_schema_destroy(schema);
}

static void test_schemas_with_imports_and_errors(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *references = json_pack(
        "{s:s}", "common/address.proto",
        "syntax = \"proto3\"; package common; message Address { string city = 1; }");
    const char *text = "syntax = \"proto3\";\n"
                       "import \"common/address.proto\";\n"
                       "message Person { string name = 1; common.Address home = 2; }\n";
    tb_protobuf_schema_t *schema = compile_with(text, references);
    assert_string_equal(tb_protobuf_schema_name(schema), "Person");
    char *json = round_trip(schema, "{\"name\":\"n\",\"home\":{\"city\":\"c\"}}");
    assert_string_equal(json, "{\"name\":\"n\",\"home\":{\"city\":\"c\"}}");
    free(json);
    tb_protobuf_schema_destroy(schema);

    /* an import that is not referenced */
    assert_null(tb_protobuf_schema_create(text, NULL, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "common/address.proto"));
    /* a syntax error names its line */
    assert_null(
        tb_protobuf_schema_create("syntax = \"proto3\";\nmessage M {\n int32 = 1;\n}",
                                  NULL, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, ":3:"));
    /* an unknown type */
    assert_null(tb_protobuf_schema_create(
        "syntax = \"proto3\"; message M { Nope n = 1; }", NULL, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "Nope"));
    /* base64 that is no descriptor */
    assert_null(tb_protobuf_schema_create("AAAA", NULL, errstr, sizeof(errstr)));
    /* a file with no message decodes nothing and encodes nothing */
    schema = compile("syntax = \"proto3\"; enum E { Z = 0; }");
    assert_null(tb_protobuf_schema_name(schema));
    assert_non_null(strstr(decode_fails(schema, "\x00", 1), "message index [0]"));
    tb_protobuf_schema_destroy(schema);
    json_decref(references);
}

static void test_base64_descriptor_schema(void **state)
{
    (void)state;
    /* what confluent-kafka's serializers register: a base64
     * FileDescriptorProto, here of: syntax="proto3"; package t;
     * message P { string s = 1; } (made with protoc --descriptor_set_out) */
    tb_protobuf_schema_t *schema =
        compile("CgdwLnByb3RvEgF0IhEKAVASDAoBcxgBIAEoCVIBc2IGcHJvdG8z");
    assert_string_equal(tb_protobuf_schema_name(schema), "t.P");
    char *text = round_trip(schema, "{\"s\":\"v\"}");
    assert_string_equal(text, "{\"s\":\"v\"}");
    free(text);
    tb_protobuf_schema_destroy(schema);
}

static void test_proto2_required_and_defaults(void **state)
{
    (void)state;
    tb_protobuf_schema_t *schema =
        compile("syntax = \"proto2\"; message M { required int32 a = 1; "
                "optional string b = 2 [default = \"d\"]; }");
    char errstr[256] = "";
    tb_buf_t bin = {0};
    json_t *value = json_pack("{s:s}", "b", "x");
    assert_int_equal(tb_protobuf_encode(schema, value, &bin, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "M lacks required fields: a"));
    json_decref(value);
    tb_buf_release(&bin);
    assert_non_null(strstr(decode_fails(schema, "\x00\x12\x01x", 4), "required"));
    char *text = round_trip(schema, "{\"a\":1}");
    assert_string_equal(text, "{\"a\":1,\"b\":null}");
    free(text);
    tb_protobuf_schema_destroy(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_of_every_kind),
        cmocka_unit_test(test_unset_fields_take_defaults_or_null),
        cmocka_unit_test(test_encoding_reads_protobuf_json),
        cmocka_unit_test(test_encoding_refuses_what_does_not_fit),
        cmocka_unit_test(test_encoding_reads_the_json_mapping_corners),
        cmocka_unit_test(test_message_indexes),
        cmocka_unit_test(test_malformed_payloads),
        cmocka_unit_test(test_schemas_with_imports_and_errors),
        cmocka_unit_test(test_base64_descriptor_schema),
        cmocka_unit_test(test_proto2_required_and_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
