/* The Avro codec of the registry formats: schemas, JSON <-> binary round
 * trips, logical types, unions, defaults, and malformed data. */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "registry/avro/tb_avro.h"

#define RECORD_SCHEMA                                                                    \
    "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"shop\",\"fields\":["        \
    "{\"name\":\"id\",\"type\":\"long\"},"                                               \
    "{\"name\":\"item\",\"type\":\"string\"},"                                           \
    "{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null},"               \
    "{\"name\":\"price\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\","      \
    "\"precision\":10,\"scale\":2}},"                                                    \
    "{\"name\":\"day\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"           \
    "{\"name\":\"at\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}" \
    "},"                                                                                 \
    "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"            \
    "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"               \
    "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"Kind\",\"symbols\":"      \
    "[\"A\",\"B\"]}},"                                                                   \
    "{\"name\":\"ratio\",\"type\":\"double\"},"                                          \
    "{\"name\":\"ok\",\"type\":\"boolean\",\"default\":true},"                           \
    "{\"name\":\"raw\",\"type\":{\"type\":\"fixed\",\"name\":\"Two\",\"size\":2}}]}"

static tb_avro_schema_t *compile(const char *text)
{
    char errstr[256] = "";
    tb_avro_schema_t *schema = tb_avro_schema_create(text, NULL, errstr, sizeof(errstr));
    if (schema == NULL) {
        fail_msg("%s", errstr);
    }
    return schema;
}

/* Encodes json under schema, decodes it back, and returns the JSON text. */
static char *round_trip(const tb_avro_schema_t *schema, const char *json)
{
    char errstr[256] = "";
    json_t *value = json_loads(json, JSON_DECODE_ANY, NULL);
    tb_buf_t bin = {0};
    tb_buf_t text = {0};
    size_t n;
    assert_non_null(value);
    if (tb_avro_encode(schema, value, &bin, errstr, sizeof(errstr)) != 0) {
        fail_msg("encode: %s", errstr);
    }
    if (tb_avro_decode(schema, (const uint8_t *)bin.data, bin.len, &text, errstr,
                       sizeof(errstr)) != 0) {
        fail_msg("decode: %s", errstr);
    }
    json_decref(value);
    tb_buf_release(&bin);
    return tb_buf_take(&text, &n);
}

static void test_record_round_trip(void **state)
{
    (void)state;
    tb_avro_schema_t *schema = compile(RECORD_SCHEMA);
    assert_string_equal(tb_avro_schema_name(schema), "shop.Order");
    char *text = round_trip(
        schema, "{\"id\":7,\"item\":\"tea\",\"price\":\"-12.30\",\"day\":\"2024-01-02\","
                "\"at\":\"2024-01-02T03:04:05.678Z\",\"tags\":[\"a\",\"b\"],"
                "\"attrs\":{\"x\":1},\"kind\":\"B\",\"ratio\":0.5,\"raw\":\"AAE=\"}");
    assert_string_equal(text,
                        "{\"id\":7,\"item\":\"tea\",\"note\":null,\"price\":-12.30,"
                        "\"day\":19724,\"at\":1704164645678,\"tags\":[\"a\",\"b\"],"
                        "\"attrs\":{\"x\":1},\"kind\":\"B\",\"ratio\":0.5,\"ok\":true,"
                        "\"raw\":\"AAE=\"}");
    free(text);
    tb_avro_schema_destroy(schema);
}

static void test_union_branches(void **state)
{
    (void)state;
    tb_avro_schema_t *schema = compile("[\"null\",\"long\",\"string\"]");
    char *a = round_trip(schema, "\"x\"");
    char *b = round_trip(schema, "{\"long\":5}");
    char *c = round_trip(schema, "null");
    assert_string_equal(a, "\"x\"");
    assert_string_equal(b, "5");
    assert_string_equal(c, "null");
    free(a);
    free(b);
    free(c);
    tb_avro_schema_destroy(schema);
}

static void test_decimal_spellings(void **state)
{
    (void)state;
    tb_avro_schema_t *schema =
        compile("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":30,"
                "\"scale\":3}");
    char *a = round_trip(schema, "12345678901234567890.125");
    char *b = round_trip(schema, "\"-0.001\"");
    char *c = round_trip(schema, "0");
    assert_string_equal(b, "-0.001");
    assert_string_equal(c, "0.000");
    assert_non_null(strstr(a, "12345678901234567"));
    free(a);
    free(b);
    free(c);
    tb_avro_schema_destroy(schema);
}

/* Reals read back as written by people: the shortest exact spelling, not
 * "%.17g"'s 0.10000000000000001; a whole real keeps its ".0". */
static void test_reals_in_their_shortest_spelling(void **state)
{
    (void)state;
    const char *cases[][3] = {
        /* schema, written, read back */
        {"\"double\"", "0.1", "0.1"},
        {"\"double\"", "4729.01", "4729.01"},
        {"\"double\"", "3", "3.0"},
        {"\"double\"", "-2.5e-300", "-2.5e-300"},
        {"\"double\"", "1.7976931348623157e308", "1.7976931348623157e+308"},
        {"\"double\"", "0.30000000000000004", "0.30000000000000004"},
        {"\"float\"", "0.1", "0.1"},
        {"\"float\"", "4729.01", "4729.01"},
        {"\"float\"", "16777216", "16777216.0"},
        {"\"float\"", "0.30000000000000004", "0.3"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb_avro_schema_t *schema = compile(cases[i][0]);
        char *text = round_trip(schema, cases[i][1]);
        assert_string_equal(text, cases[i][2]);
        free(text);
        tb_avro_schema_destroy(schema);
    }
}

/* Regression (found by fuzz_avro): a scale longer than the digits of a
 * short unscaled value overflowed the digit buffer. */
static void test_decimal_scale_beyond_the_digits(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_buf_t text = {0};
    tb_avro_schema_t *schema =
        compile("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":40,"
                "\"scale\":6}");
    static const uint8_t one[] = {0x02, 0xff}; /* -1 unscaled */
    assert_int_equal(
        tb_avro_decode(schema, one, sizeof(one), &text, errstr, sizeof(errstr)), 0);
    assert_string_equal(text.data, "-0.000001");
    tb_buf_release(&text);
    tb_avro_schema_destroy(schema);
}

static void test_mismatch_names_the_field(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_buf_t bin = {0};
    tb_avro_schema_t *schema = compile(RECORD_SCHEMA);
    json_t *value = json_loads("{\"id\":\"seven\"}", 0, NULL);
    assert_int_equal(tb_avro_encode(schema, value, &bin, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "id"));
    json_decref(value);
    value = json_loads("{\"id\":1,\"extra\":1}", 0, NULL);
    assert_int_equal(tb_avro_encode(schema, value, &bin, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "extra"));
    json_decref(value);
    tb_buf_release(&bin);
    tb_avro_schema_destroy(schema);
}

static void test_malformed_data_is_refused(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_buf_t text = {0};
    tb_avro_schema_t *schema = compile(RECORD_SCHEMA);
    /* a string length far beyond the data */
    static const uint8_t huge[] = {0x0e, 0xfe, 0xff, 0xff, 0xff, 0x0f};
    /* an array of nulls claiming a billion items */
    tb_avro_schema_t *nulls = compile("{\"type\":\"array\",\"items\":\"null\"}");
    static const uint8_t many[] = {0x80, 0xa8, 0xd6, 0xb9, 0x07};
    assert_int_equal(
        tb_avro_decode(schema, huge, sizeof(huge), &text, errstr, sizeof(errstr)), -1);
    assert_int_equal(
        tb_avro_decode(nulls, many, sizeof(many), &text, errstr, sizeof(errstr)), -1);
    assert_int_equal(tb_avro_decode(schema, huge, 0, &text, errstr, sizeof(errstr)), -1);
    tb_buf_release(&text);
    tb_avro_schema_destroy(nulls);
    tb_avro_schema_destroy(schema);
}

static void test_invalid_schema_and_references(void **state)
{
    (void)state;
    char errstr[256] = "";
    assert_null(
        tb_avro_schema_create("{\"type\":\"record\"}", NULL, errstr, sizeof(errstr)));
    assert_null(tb_avro_schema_create("\"shop.Missing\"", NULL, errstr, sizeof(errstr)));
    json_t *refs = json_pack("{s:s}", "kind.avsc",
                             "{\"type\":\"enum\",\"name\":\"Kind\",\"namespace\":"
                             "\"shop\",\"symbols\":[\"A\"]}");
    tb_avro_schema_t *schema =
        tb_avro_schema_create("{\"type\":\"record\",\"name\":\"R\",\"namespace\":"
                              "\"shop\",\"fields\":[{\"name\":"
                              "\"k\",\"type\":\"Kind\"}]}",
                              refs, errstr, sizeof(errstr));
    if (schema == NULL) {
        fail_msg("%s", errstr);
    }
    char *text = round_trip(schema, "{\"k\":\"A\"}");
    assert_string_equal(text, "{\"k\":\"A\"}");
    free(text);
    tb_avro_schema_destroy(schema);
    json_decref(refs);
}

static void test_infer_connect_default(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *value =
        json_loads("{\"a\":1,\"b\":{\"c\":\"x\"},\"d\":null,\"e\":[1.5]}", 0, NULL);
    char *text = tb_avro_infer(value, errstr, sizeof(errstr));
    assert_non_null(text);
    tb_avro_schema_t *schema = compile(text);
    assert_string_equal(tb_avro_schema_name(schema),
                        "io.confluent.connect.avro.ConnectDefault");
    char *back =
        round_trip(schema, "{\"a\":1,\"b\":{\"c\":\"x\"},\"d\":null,\"e\":[1.5]}");
    assert_string_equal(back, "{\"a\":1,\"b\":{\"c\":\"x\"},\"d\":null,\"e\":[1.5]}");
    free(back);
    free(text);
    json_decref(value);
    tb_avro_schema_destroy(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_round_trip),
        cmocka_unit_test(test_union_branches),
        cmocka_unit_test(test_decimal_spellings),
        cmocka_unit_test(test_reals_in_their_shortest_spelling),
        cmocka_unit_test(test_decimal_scale_beyond_the_digits),
        cmocka_unit_test(test_mismatch_names_the_field),
        cmocka_unit_test(test_malformed_data_is_refused),
        cmocka_unit_test(test_invalid_schema_and_references),
        cmocka_unit_test(test_infer_connect_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
