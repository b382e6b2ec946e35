#include "tb_converter_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_reader.h"
#include "connectors/converters/tb_json_writer.h"

/* The schema of JsonConverter's JSON text s (NULL for "null"). */
static tb_schema_t *schema_of(const char *s)
{
    char errstr[256] = "";
    if (strcmp(s, "null") == 0) {
        return NULL;
    }
    json_t *json = json_loads(s, 0, NULL);
    tb_schema_t *schema = tb_json_schema_parse(json, errstr, sizeof(errstr));
    json_decref(json);
    if (schema == NULL) {
        fail_msg("%s: %s", s, errstr);
    }
    return schema;
}

/* What jansson's path reads text as: 0 and *out, or -1. */
static int read_slowly(const tb_schema_t *schema, const char *text, tb_value_t **out)
{
    char errstr[256];
    size_t len = strlen(text);
    json_t *json = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    *out = NULL;
    int rc = json != NULL ? tb_json_value_parse_text(schema, json, text, len, out, errstr,
                                                     sizeof(errstr))
                          : -1;
    json_decref(json);
    return rc;
}

static char *written_text(const tb_schema_t *schema, const tb_value_t *v)
{
    char errstr[256] = "";
    tb_buf_t b = {0};
    if (tb_json_write_value(&b, schema, v, TB_DECIMAL_NUMERIC, errstr, sizeof(errstr)) !=
        0) {
        tb_buf_release(&b);
        return strdup(errstr);
    }
    return tb_buf_take(&b, &(size_t){0});
}

/* The reader takes text under schema and gives what jansson's path gives,
 * written back as expected (NUMERIC decimals). */
static void assert_read(const char *schema_json, const char *text, const char *expected)
{
    tb_schema_t *schema = schema_of(schema_json);
    tb_value_t *fast = NULL;
    tb_value_t *slow = NULL;
    if (!tb_json_read_value(schema, text, strlen(text), &fast)) {
        fail_msg("declined under %s: %s", schema_json, text);
    }
    assert_int_equal(read_slowly(schema, text, &slow), 0);
    assert_true(tb_value_equal(fast, slow));
    char *written = written_text(schema, fast);
    assert_string_equal(written, expected);
    free(written);
    tb_value_free(fast);
    tb_value_free(slow);
    tb_schema_decref(schema);
}

/* The reader declines text under schema; *slow_ok says whether jansson's
 * path reads it. */
static void assert_declined(const char *schema_json, const char *text, size_t len,
                            bool slow_ok)
{
    tb_schema_t *schema = schema_of(schema_json);
    tb_value_t *fast = NULL;
    tb_value_t *slow = NULL;
    char *copy = malloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (tb_json_read_value(schema, copy, len, &fast)) {
        fail_msg("accepted under %s: %s", schema_json, copy);
    }
    assert_null(fast);
    if (len == strlen(copy)) {
        assert_int_equal(read_slowly(schema, copy, &slow), slow_ok ? 0 : -1);
    }
    tb_value_free(slow);
    free(copy);
    tb_schema_decref(schema);
}

#define DECLINED(schema, text, slow_ok)                                                  \
    assert_declined(schema, text, strlen(text), slow_ok)

#define STRING_SCHEMA "{\"type\":\"string\"}"
#define DOUBLE_SCHEMA "{\"type\":\"double\"}"
#define LONG_SCHEMA "{\"type\":\"int64\"}"

static void test_strings_and_unicode_escapes(void **state)
{
    (void)state;
    assert_read(STRING_SCHEMA, " \"plain\" ", "\"plain\"");
    assert_read(STRING_SCHEMA,
                "\"\\u00e9\\u00E9 \\ud83d\\ude00 \\\" \\\\ \\/ \\b\\f\\n\\r\\t\"",
                "\"\xc3\xa9\xc3\xa9 \xf0\x9f\x98\x80 \\\" \\\\ / \\b\\f\\n\\r\\t\"");
    assert_read(STRING_SCHEMA, "\"nul\\u0000end\"", "\"nul\\u0000end\"");
    assert_read(STRING_SCHEMA, "\"\xc3\xa9\xf0\x9f\x98\x80\"",
                "\"\xc3\xa9\xf0\x9f\x98\x80\"");
    DECLINED(STRING_SCHEMA, "\"\\ud800\"", false);        /* a lone high surrogate */
    DECLINED(STRING_SCHEMA, "\"\\udc00\"", false);        /* a lone low one */
    DECLINED(STRING_SCHEMA, "\"\\ud800\\u0041\"", false); /* high, then no low */
    DECLINED(STRING_SCHEMA, "\"\\x\"", false);
    DECLINED(STRING_SCHEMA, "\"\\u12\"", false);
    DECLINED(STRING_SCHEMA, "\"a\tb\"", false); /* a raw control character */
    DECLINED(STRING_SCHEMA, "\"\xc3\"", false);
    DECLINED(STRING_SCHEMA, "\"\xed\xa0\x80\"", false);
    DECLINED(STRING_SCHEMA, "\"open", false);
    assert_declined(STRING_SCHEMA, "\"a\0b\"", 5, false);
    DECLINED(STRING_SCHEMA, "5", false);
}

static void test_numbers(void **state)
{
    (void)state;
    assert_read(LONG_SCHEMA, "-9223372036854775808", "-9223372036854775808");
    assert_read(LONG_SCHEMA, "9223372036854775807", "9223372036854775807");
    assert_read(LONG_SCHEMA, "-0", "0");
    assert_read("{\"type\":\"int8\"}", "1000", "1000"); /* as Connect: unchecked */
    assert_read(DOUBLE_SCHEMA, "-0.0", "-0.0");
    assert_read(DOUBLE_SCHEMA, "12", "12.0");
    assert_read(DOUBLE_SCHEMA, "1.5E+3", "1500.0");
    assert_read(DOUBLE_SCHEMA, "1e308", "1.0E308");
    assert_read(DOUBLE_SCHEMA, "1e-400", "0.0");
    assert_read("{\"type\":\"float\"}", "0.1", "0.1");
    DECLINED(DOUBLE_SCHEMA, "1e309", false);             /* beyond a double */
    DECLINED(LONG_SCHEMA, "9223372036854775808", false); /* beyond 64 bits */
    DECLINED(LONG_SCHEMA, "1.0", false);                 /* a real */
    DECLINED(DOUBLE_SCHEMA, "01", false);
    DECLINED(DOUBLE_SCHEMA, "1.", false);
    DECLINED(DOUBLE_SCHEMA, ".5", false);
    DECLINED(DOUBLE_SCHEMA, "+1", false);
    DECLINED(DOUBLE_SCHEMA, "1e", false);
    DECLINED(DOUBLE_SCHEMA, "-", false);
    DECLINED(DOUBLE_SCHEMA, "NaN", false);
    DECLINED(DOUBLE_SCHEMA, "Infinity", false);
    DECLINED(DOUBLE_SCHEMA, "1 2", false);
}

#define DECIMAL_SCHEMA                                                                   \
    "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","            \
    "\"parameters\":{\"scale\":\"2\"}}"

static void test_decimals_and_bytes(void **state)
{
    (void)state;
    /* the digits the text has, beyond what a double holds */
    assert_read(DECIMAL_SCHEMA, "12345678901234567890.12", "12345678901234567890.12");
    assert_read(DECIMAL_SCHEMA, "-1.5", "-1.50");
    /* beyond 64 bits jansson refuses it (JsonConverter then reads it widened) */
    DECLINED(DECIMAL_SCHEMA, "123456789012345678902", false);
    assert_read(DECIMAL_SCHEMA, "\"/gw=\"", "-5.00");
    DECLINED(DECIMAL_SCHEMA, "1.234", false); /* more decimals than the scale */
    assert_read("{\"type\":\"bytes\"}", "\"AP8Q\"", "\"AP8Q\"");
    DECLINED("{\"type\":\"bytes\"}", "\"AP8\"", false); /* no base64 */
}

#define STRUCT_SCHEMA                                                                    \
    "{\"type\":\"struct\",\"fields\":["                                                  \
    "{\"field\":\"id\",\"type\":\"int32\"},"                                             \
    "{\"field\":\"name\",\"type\":\"string\",\"optional\":true},"                        \
    "{\"field\":\"n\",\"type\":\"int32\",\"default\":7},"                                \
    "{\"field\":\"inner\",\"type\":\"struct\",\"optional\":true,\"fields\":["            \
    "{\"field\":\"ok\",\"type\":\"boolean\"}]},"                                         \
    "{\"field\":\"tags\",\"type\":\"array\",\"items\":"                                  \
    "{\"type\":\"int64\",\"optional\":true},\"optional\":true},"                         \
    "{\"field\":\"m\",\"type\":\"map\",\"keys\":{\"type\":\"string\"},"                  \
    "\"values\":{\"type\":\"double\"},\"optional\":true},"                               \
    "{\"field\":\"ids\",\"type\":\"map\",\"keys\":{\"type\":\"int32\"},"                 \
    "\"values\":{\"type\":\"string\"},\"optional\":true}]}"

static void test_structs_maps_arrays_and_nulls(void **state)
{
    (void)state;
    assert_read(
        STRUCT_SCHEMA,
        "{ \"id\" : 1 , \"name\":null, \"n\":null, \"inner\":{\"ok\":true},"
        "\"tags\":[1,null,-3],\"m\":{\"a\":1.5,\"b\":2},\"ids\":[[1,\"x\"],[2,\"y\"]]}",
        "{\"id\":1,\"name\":null,\"n\":7,\"inner\":{\"ok\":true},\"tags\":[1,null,-3],"
        "\"m\":{\"a\":1.5,\"b\":2.0},\"ids\":[[1,\"x\"],[2,\"y\"]]}");
    /* members in another order, absent, unknown (passed over), repeated (the
     * last counts, as in jansson) */
    assert_read(STRUCT_SCHEMA,
                "{\"zzz\":{\"deep\":[1,{\"x\":null}]},\"inner\":{\"ok\":false},\"id\":1,"
                "\"id\":2,\"m\":{\"a\":1,\"b\":2,\"a\":3}}",
                "{\"id\":2,\"name\":null,\"n\":7,\"inner\":{\"ok\":false},\"tags\":null,"
                "\"m\":{\"a\":3.0,\"b\":2.0},\"ids\":null}");
    DECLINED(STRUCT_SCHEMA, "{\"name\":\"x\"}", false);                 /* id required */
    DECLINED(STRUCT_SCHEMA, "{\"id\":null}", false);                    /* id required */
    DECLINED(STRUCT_SCHEMA, "[]", false);                               /* no object */
    DECLINED(STRUCT_SCHEMA, "{\"id\":1,\"ids\":[[1]]}", false);         /* no pair */
    DECLINED(STRUCT_SCHEMA, "{\"id\":1,\"ids\":{\"1\":\"x\"}}", false); /* keys */
    DECLINED(STRUCT_SCHEMA, "{\"id\":1,\"tags\":5}", false);
    DECLINED(STRUCT_SCHEMA, "{\"id\":1,}", false);
    DECLINED(STRUCT_SCHEMA, "{\"id\":1", false);
    DECLINED(STRUCT_SCHEMA, "{\"\\u0069d\":1}", true); /* an escaped key */
    /* deeper than the reader goes: jansson's path reads it */
    char deep[2 * TB_JSON_READER_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i <= TB_JSON_READER_MAX_DEPTH; i++) {
        deep[n++] = '[';
    }
    for (int i = 0; i <= TB_JSON_READER_MAX_DEPTH; i++) {
        deep[n++] = ']';
    }
    deep[n] = '\0';
    DECLINED("null", deep, true);
}

static void test_schemaless(void **state)
{
    (void)state;
    assert_read("null",
                "{\"id\":5,\"amount\":23645.05,\"ok\":true,\"no\":false,"
                "\"x\":null,\"list\":[\"a\",{}],\"id\":6}",
                "{\"id\":6,\"amount\":23645.05,\"ok\":true,\"no\":false,\"x\":null,"
                "\"list\":[\"a\",{}]}");
    assert_read("null", "null", "null");
    assert_read("null", " [ ] ", "[]");
    DECLINED("null", "", false);
    DECLINED("null", "tru", false);
    DECLINED("null", "true false", false);
    DECLINED("null", "{\"a\" 1}", false);
}

static int to_typed(tb_converter_t *c, const char *text, tb_schema_t **schema,
                    tb_value_t **value, char *errstr, size_t errstr_size)
{
    *schema = NULL;
    *value = NULL;
    return tb_converter_to_typed(c, text, strlen(text), schema, value, errstr,
                                 errstr_size);
}

/* The envelope: its schema parsed once per text, the same schema given to
 * every record under it; bad envelopes still get Connect's messages. */
static void test_envelope_schema_parsed_once(void **state)
{
    (void)state;
    char errstr[512] = "";
    tb_converter_t *c = converter_of("JsonConverter", NULL);
    tb_schema_t *first;
    tb_schema_t *again;
    tb_schema_t *other;
    tb_value_t *v1;
    tb_value_t *v2;
    tb_value_t *v3;
    const char *message = "{\"schema\":" STRUCT_SCHEMA ",\"payload\":{\"id\":1}}";
    assert_int_equal(to_typed(c, message, &first, &v1, errstr, sizeof(errstr)), 0);
    assert_int_equal(to_typed(c, message, &again, &v2, errstr, sizeof(errstr)), 0);
    assert_ptr_equal(first, again);
    assert_true(tb_value_equal(v1, v2));
    assert_int_equal(to_typed(c, "{\"payload\":5,\"schema\":" LONG_SCHEMA "}", &other,
                              &v3, errstr, sizeof(errstr)),
                     0);
    assert_int_equal(tb_schema_type(other), TB_TYPE_INT64);
    assert_int_equal(tb_value_int64(v3), 5);
    tb_schema_decref(first);
    tb_schema_decref(again);
    tb_schema_decref(other);
    tb_value_free(v1);
    tb_value_free(v2);
    tb_value_free(v3);

    assert_int_equal(to_typed(c, "{\"schema\":null,\"payload\":{\"a\":[1]}}", &other, &v1,
                              errstr, sizeof(errstr)),
                     0);
    assert_null(other);
    assert_int_equal(tb_value_type(v1), TB_TYPE_MAP);
    tb_value_free(v1);

    assert_int_equal(to_typed(c, "{\"schema\":null,\"payload\":1,\"x\":2}", &other, &v1,
                              errstr, sizeof(errstr)),
                     -1);
    assert_non_null(strstr(errstr, "requires \"schema\" and \"payload\" fields"));
    assert_int_equal(to_typed(c, "{\"schema\":{\"type\":\"x\"},\"payload\":1}", &other,
                              &v1, errstr, sizeof(errstr)),
                     -1);
    assert_string_equal(errstr, "Unknown schema type: x");
    assert_int_equal(
        to_typed(c, "{\"schema\":" STRUCT_SCHEMA ",\"payload\":{\"name\":\"x\"}}", &other,
                 &v1, errstr, sizeof(errstr)),
        -1);
    assert_string_equal(errstr, "Invalid null value for required INT32 field");
    tb_converter_destroy(c);
}

static void test_envelope_members(void **state)
{
    (void)state;
    tb_json_span_t none = {"", 0};
    tb_json_span_t schema;
    tb_json_span_t payload;
    const char *text = " { \"payload\" : [1, 2] , \"schema\":{\"type\":\"x\"},"
                       "\"schema\" : null } ";
    assert_true(tb_json_read_envelope(text, strlen(text), none, &schema, &payload));
    assert_int_equal(schema.n, 4);
    assert_memory_equal(schema.s, "null", 4);
    assert_int_equal(payload.n, 6);
    assert_memory_equal(payload.s, "[1, 2]", 6);
    /* a known schema text is taken as it is, but only as a whole value */
    tb_json_span_t known = {"1", 1};
    text = "{\"schema\":1,\"payload\":2}";
    assert_true(tb_json_read_envelope(text, strlen(text), known, &schema, &payload));
    assert_int_equal(schema.n, 1);
    text = "{\"schema\":12 ,\"payload\":2}";
    assert_true(tb_json_read_envelope(text, strlen(text), known, &schema, &payload));
    assert_int_equal(schema.n, 2);
    text = "{\"schema\":1x,\"payload\":2}";
    assert_false(tb_json_read_envelope(text, strlen(text), known, &schema, &payload));
    static const char *const declined[] = {
        "{\"schema\":null}",
        "{\"payload\":1}",
        "{\"schema\":null,\"payload\":1,\"x\":1}",
        "[]",
        "{\"schema\":null,\"payload\":1",
        "{\"schema\":null,\"payload\":1}x",
        "{\"schema\":nul,\"payload\":1}",
    };
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++) {
        assert_false(tb_json_read_envelope(declined[i], strlen(declined[i]), none,
                                           &schema, &payload));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_and_unicode_escapes),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_decimals_and_bytes),
        cmocka_unit_test(test_structs_maps_arrays_and_nulls),
        cmocka_unit_test(test_schemaless),
        cmocka_unit_test(test_envelope_schema_parsed_once),
        cmocka_unit_test(test_envelope_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
