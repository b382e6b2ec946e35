#include "tb_converter_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/converters/tb_json_data.h"

#define JSON_CLASS "org.apache.kafka.connect.json.JsonConverter"

/* An envelope as Connect 3.9's JsonConverter writes it: member order,
 * logical types (Timestamp, Date, Decimal as base64 of its unscaled bytes:
 * 123.45 is 12345 = 0x3039 = "MDk="), reals as Java spells them. */
#define CONNECT_ENVELOPE                                                                 \
    "{\"schema\":{\"type\":\"struct\",\"fields\":["                                      \
    "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"                          \
    "{\"type\":\"string\",\"optional\":true,\"field\":\"name\"},"                        \
    "{\"type\":\"int64\",\"optional\":false,\"name\":"                                   \
    "\"org.apache.kafka.connect.data.Timestamp\",\"version\":1,\"field\":\"ts\"},"       \
    "{\"type\":\"int32\",\"optional\":true,\"name\":"                                    \
    "\"org.apache.kafka.connect.data.Date\",\"version\":1,\"field\":\"day\"},"           \
    "{\"type\":\"bytes\",\"optional\":false,\"name\":"                                   \
    "\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":"            \
    "{\"scale\":\"2\"},\"field\":\"price\"},"                                            \
    "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":false},"            \
    "\"optional\":false,\"field\":\"tags\"},"                                            \
    "{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":false},\"values\":"    \
    "{\"type\":\"double\",\"optional\":false},\"optional\":false,\"field\":\"scores\"}," \
    "{\"type\":\"float\",\"optional\":false,\"field\":\"ratio\"},"                       \
    "{\"type\":\"boolean\",\"optional\":false,\"default\":true,\"field\":\"active\"}],"  \
    "\"optional\":false,\"name\":\"com.example.Order\",\"version\":3},"                  \
    "\"payload\":{\"id\":42,\"name\":null,\"ts\":1700000000000,\"day\":19675,"           \
    "\"price\":\"MDk=\",\"tags\":[\"a\",\"b\"],\"scores\":{\"x\":1.5,\"y\":1.0E10},"     \
    "\"ratio\":0.1,\"active\":false}}"

static void test_connect_envelope_round_trips_byte_for_byte(void **state)
{
    (void)state;
    tb_converter_t *c = converter_of(JSON_CLASS, "{}");
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    typed_of(c, CONNECT_ENVELOPE, &schema, &value);

    assert_string_equal(tb_schema_name(schema), "com.example.Order");
    assert_int_equal(tb_schema_version(schema), 3);
    assert_int_equal(tb_value_int64(tb_value_struct_get(value, "id")), 42);
    assert_int_equal(tb_value_type(tb_value_struct_get(value, "id")), TB_TYPE_INT32);
    assert_null(tb_value_struct_get(value, "name"));
    const tb_field_t *price = tb_schema_field(schema, "price");
    assert_true(tb_schema_is_logical(price->schema, TB_LOGICAL_DECIMAL));
    size_t len;
    const char *unscaled = tb_value_text(tb_value_struct_get(value, "price"), &len);
    assert_int_equal(len, 2);
    assert_memory_equal(unscaled, "\x30\x39", 2);
    assert_true(tb_schema_is_logical(tb_schema_field(schema, "ts")->schema,
                                     TB_LOGICAL_TIMESTAMP));
    assert_int_equal(tb_value_int64(tb_value_struct_get(value, "ts")), 1700000000000LL);
    assert_int_equal(tb_value_type(tb_value_struct_get(value, "ratio")), TB_TYPE_FLOAT32);
    assert_false(tb_value_boolean(tb_value_struct_get(value, "active")));
    const tb_value_t *scores = tb_value_struct_get(value, "scores");
    assert_true(tb_value_double(tb_value_map_get_string(scores, "y")) == 1e10);

    char *back = text_of(c, schema, value);
    assert_string_equal(back, CONNECT_ENVELOPE);
    free(back);
    tb_value_free(value);
    tb_schema_decref(schema);
    tb_converter_destroy(c);
}

static void test_decimal_numeric_and_defaults(void **state)
{
    (void)state;
    tb_converter_t *base64 = converter_of(JSON_CLASS, "{}");
    tb_converter_t *numeric =
        converter_of(JSON_CLASS, "{\"decimal.format\":\"numeric\"}");
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    typed_of(base64, CONNECT_ENVELOPE, &schema, &value);
    char *text = text_of(numeric, schema, value);
    assert_non_null(strstr(text, "\"price\":123.45,"));
    /* a NUMERIC decimal reads back to the same unscaled bytes */
    tb_schema_t *again_schema = NULL;
    tb_value_t *again = NULL;
    typed_of(numeric, text, &again_schema, &again);
    assert_true(tb_value_equal(value, again));
    /* a null under a schema with a default is written as the default */
    tb_value_struct_set(again, "active", NULL);
    free(text);
    text = text_of(base64, again_schema, again);
    assert_non_null(strstr(text, "\"active\":true}}"));
    free(text);
    tb_value_free(again);
    tb_schema_decref(again_schema);
    tb_value_free(value);
    tb_schema_decref(schema);
    tb_converter_destroy(numeric);
    tb_converter_destroy(base64);
}

/* A Decimal that no double holds keeps every digit through NUMERIC and
 * BASE64, both ways. */
#define BIG_DECIMAL                                                                      \
    "{\"type\":\"bytes\",\"optional\":false,\"name\":\"org.apache.kafka.connect.data."   \
    "Decimal\",\"version\":1,\"parameters\":{\"scale\":\"9\"}}"
#define BIG_DECIMAL_SCHEMA                                                               \
    "{\"type\":\"struct\",\"fields\":[{\"type\":\"array\",\"items\":" BIG_DECIMAL        \
    ",\"optional\":false,\"field\":\"amounts\"},{\"type\":\"map\",\"keys\":{\"type\":"   \
    "\"int32\",\"optional\":false},\"values\":" BIG_DECIMAL ",\"optional\":false,"       \
    "\"field\":\"by_id\"},{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":" \
    "false},\"values\":" BIG_DECIMAL ",\"optional\":false,\"field\":\"by_name\"}],"      \
    "\"optional\":false}"
#define BIG "12345678901234567890.123456789"

static void test_decimal_exact_beyond_a_double(void **state)
{
    (void)state;
    tb_converter_t *base64 = converter_of(JSON_CLASS, "{}");
    tb_converter_t *numeric =
        converter_of(JSON_CLASS, "{\"decimal.format\":\"NUMERIC\"}");
    const char *message = "{\"schema\":" BIG_DECIMAL_SCHEMA ",\"payload\":{\"amounts\":"
                          "[" BIG ",-0.5,7],\"by_id\":[[1,-" BIG "]],\"by_name\":{"
                          "\"a\":9" BIG "}}}";
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    typed_of(numeric, message, &schema, &value);
    const tb_value_t *amounts = tb_value_struct_get(value, "amounts");
    size_t len;
    const char *unscaled = tb_value_text(tb_value_array_get(amounts, 0), &len);
    char *digits = tb_decimal_text(unscaled, len, 9);
    assert_string_equal(digits, "12345678901234567890.123456789");
    free(digits);
    /* a sink plugin gets a Decimal alone as its digits, as Connect's toString */
    char errstr[256] = "";
    void *plain = NULL;
    size_t plain_len = 0;
    assert_int_equal(
        tb_typed_to_plugin(tb_schema_items(tb_schema_field(schema, "amounts")->schema),
                           tb_value_array_get(amounts, 0), &plain, &plain_len, errstr,
                           sizeof(errstr)),
        0);
    assert_int_equal(plain_len, strlen("12345678901234567890.123456789"));
    assert_memory_equal(plain, "12345678901234567890.123456789", plain_len);
    free(plain);
    char *text = text_of(numeric, schema, value);
    assert_string_equal(text, "{\"schema\":" BIG_DECIMAL_SCHEMA ",\"payload\":{"
                              "\"amounts\":[" BIG ",-0.500000000,7.000000000],"
                              "\"by_id\":[[1,-" BIG "]],\"by_name\":{\"a\":9" BIG "}}}");
    free(text);
    text = text_of(base64, schema, value);
    assert_non_null(strstr(text, "\"amounts\":[\"J+QbMka+ybFuOYEV\","));
    tb_schema_t *again_schema = NULL;
    tb_value_t *again = NULL;
    typed_of(base64, text, &again_schema, &again);
    assert_true(tb_value_equal(value, again));
    tb_value_free(again);
    tb_schema_decref(again_schema);
    /* whitespace anywhere, a repeated key (the last wins, as in jansson) */
    const char *spaced =
        "{ \"payload\" : 1 ,\n \"schema\" : " BIG_DECIMAL_SCHEMA
        " ,\t\"payload\" :{ \"by_name\" : { \"a\" : 9" BIG " } ,"
        " \"by_id\" : [ [ 1 , -" BIG " ] ] , \"amounts\" : [ " BIG " , -0.5 , 7 ] } }";
    typed_of(numeric, spaced, &again_schema, &again);
    assert_true(tb_value_equal(value, again));
    free(text);
    tb_value_free(again);
    tb_schema_decref(again_schema);
    tb_value_free(value);
    tb_schema_decref(schema);
    tb_converter_destroy(numeric);
    tb_converter_destroy(base64);
}

/* A scale-0 Decimal beyond 64 bits is an integer no double holds either. */
static void test_decimal_integer_beyond_64_bits(void **state)
{
    (void)state;
    char errstr[512] = "";
    tb_converter_t *numeric =
        converter_of(JSON_CLASS, "{\"decimal.format\":\"NUMERIC\"}");
    const char *message =
        "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\","
        "\"optional\":false,\"field\":\"n\"},{\"type\":\"bytes\",\"optional\":false,"
        "\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,"
        "\"parameters\":{\"scale\":\"0\"},\"field\":\"d\"}],\"optional\":false},"
        "\"payload\":{\"n\":9223372036854775807,\"d\":-123456789012345678901234}}";
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    typed_of(numeric, message, &schema, &value);
    assert_int_equal(tb_value_int64(tb_value_struct_get(value, "n")), INT64_MAX);
    char *text = text_of(numeric, schema, value);
    assert_string_equal(text, message);
    free(text);
    tb_value_free(value);
    tb_schema_decref(schema);
    /* an INT64 beyond 64 bits is refused, naming the type */
    const char *too_big = "{\"schema\":{\"type\":\"int64\",\"optional\":false},"
                          "\"payload\":9223372036854775808}";
    assert_int_equal(tb_converter_to_typed(numeric, too_big, strlen(too_big), &schema,
                                           &value, errstr, sizeof(errstr)),
                     -1);
    assert_string_equal(errstr, "Invalid value for schema type INT64: a JSON NUMBER");
    tb_converter_destroy(numeric);
}

static void test_schemaless_data(void **state)
{
    (void)state;
    tb_converter_t *c = converter_of(JSON_CLASS, "{\"schemas.enable\":\"false\"}");
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    typed_of(c, "{\"a\":1,\"b\":[true,null],\"c\":2.5}", &schema, &value);
    assert_null(schema);
    assert_int_equal(tb_value_type(value), TB_TYPE_MAP);
    assert_int_equal(tb_value_type(tb_value_map_get_string(value, "a")), TB_TYPE_INT64);
    assert_int_equal(tb_value_type(tb_value_map_get_string(value, "c")), TB_TYPE_FLOAT64);
    char *back = text_of(c, NULL, value);
    assert_string_equal(back, "{\"a\":1,\"b\":[true,null],\"c\":2.5}");
    free(back);
    tb_value_free(value);

    /* an envelope with a null schema holds schemaless data */
    tb_converter_t *enveloped = converter_of(JSON_CLASS, "{}");
    typed_of(enveloped, "{\"schema\":null,\"payload\":[1]}", &schema, &value);
    assert_null(schema);
    back = text_of(enveloped, NULL, value);
    assert_string_equal(back, "{\"schema\":null,\"payload\":[1]}");
    free(back);
    tb_value_free(value);
    tb_converter_destroy(enveloped);
    tb_converter_destroy(c);
}

static void test_bad_envelopes_name_the_problem(void **state)
{
    (void)state;
    char errstr[512];
    tb_converter_t *c = converter_of(JSON_CLASS, "{}");
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    static const struct {
        const char *text;
        const char *error;
    } cases[] = {
        {"{\"schema\":{\"type\":\"int32\",\"optional\":false},\"payload\":null}",
         "Invalid null value for required INT32 field"},
        {"{\"schema\":{\"type\":\"int32\"},\"payload\":\"x\"}",
         "Invalid value for schema type INT32: a JSON STRING"},
        {"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int8\"}]},"
         "\"payload\":{}}",
         "Struct schema's field name not specified properly"},
        {"{\"schema\":{\"type\":\"array\"},\"payload\":[]}",
         "Array schema did not specify the element type"},
        {"{\"schema\":{\"type\":\"bytes\"},\"payload\":\"@@\"}", "Invalid bytes field"},
        {"{\"schema\":{\"type\":\"uuid\"},\"payload\":1}", "Unknown schema type: uuid"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(tb_converter_to_typed(c, cases[i].text, strlen(cases[i].text),
                                               &schema, &value, errstr, sizeof(errstr)),
                         -1);
        assert_string_equal(errstr, cases[i].error);
        assert_null(schema);
    }
    tb_converter_destroy(c);
}

static void test_reals_spelled_as_java(void **state)
{
    (void)state;
    static const struct {
        double value;
        const char *text;
    } cases[] = {
        {100.0, "100.0"},
        {0.001, "0.001"},
        {1e-4, "1.0E-4"},
        {1234567.0, "1234567.0"},
        {1.2345678e7, "1.2345678E7"},
        {-2.5, "-2.5"},
        {0.1, "0.1"},
        {1e10, "1.0E10"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *real = json_real(cases[i].value);
        char *text = tb_json_write(real, NULL);
        assert_string_equal(text, cases[i].text);
        free(text);
        json_decref(real);
    }
}

static void test_string_converter_and_plugin_text(void **state)
{
    (void)state;
    char errstr[256];
    tb_converter_t *c =
        tb_converter_create("StringConverter", NULL, false, errstr, sizeof(errstr));
    tb_schema_t *schema = NULL;
    tb_value_t *value = NULL;
    assert_int_equal(
        tb_converter_to_typed(c, "hi", 2, &schema, &value, errstr, sizeof(errstr)), 0);
    assert_int_equal(tb_schema_type(schema), TB_TYPE_STRING);
    assert_true(tb_schema_optional(schema));
    assert_string_equal(tb_value_text(value, NULL), "hi");
    tb_value_free(value);
    tb_schema_decref(schema);
    tb_converter_destroy(c);

    /* a source plugin's JSON text gets the schema JsonConverter infers */
    const char *line = "{\"b\":2,\"a\":\"x\"}";
    assert_int_equal(tb_plugin_data_to_typed(TB_DATA_JSON, line, strlen(line), &schema,
                                             &value, errstr, sizeof(errstr)),
                     0);
    assert_int_equal(tb_schema_type(tb_schema_field(schema, "b")->schema), TB_TYPE_INT64);
    void *out = NULL;
    size_t len = 0;
    assert_int_equal(
        tb_typed_to_plugin(schema, value, &out, &len, errstr, sizeof(errstr)), 0);
    assert_int_equal(len, strlen(line));
    assert_memory_equal(out, line, len);
    free(out);
    tb_value_free(value);
    tb_schema_decref(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_envelope_round_trips_byte_for_byte),
        cmocka_unit_test(test_decimal_numeric_and_defaults),
        cmocka_unit_test(test_decimal_exact_beyond_a_double),
        cmocka_unit_test(test_decimal_integer_beyond_64_bits),
        cmocka_unit_test(test_schemaless_data),
        cmocka_unit_test(test_bad_envelopes_name_the_problem),
        cmocka_unit_test(test_reals_spelled_as_java),
        cmocka_unit_test(test_string_converter_and_plugin_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
