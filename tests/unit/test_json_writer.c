#include "tb_converter_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_writer.h"

#define NOT_WRITABLE                                                                     \
    "Conversion error: the value cannot be written as JSON (not UTF-8, or not a "        \
    "finite number)"

static char *real_text(double d)
{
    tb_buf_t b = {0};
    tb_json_put_real(&b, d, false);
    return tb_buf_take(&b, &(size_t){0});
}

static void test_reals_as_java_writes_them(void **state)
{
    (void)state;
    static const struct {
        double d;
        const char *text;
    } cases[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {1.0, "1.0"},
        {-1.5, "-1.5"},
        {100.0, "100.0"},
        {0.1, "0.1"},
        {0.001, "0.001"},
        {9.99e-4, "9.99E-4"},
        {9999999.0, "9999999.0"},
        {1e7, "1.0E7"},
        {12345678.0, "1.2345678E7"},
        {23645.05, "23645.05"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1.0 / 3, "0.3333333333333333"},
        {9007199254740992.0, "9.007199254740992E15"},
        {123456789012345678.0, "1.2345678901234568E17"},
        {1e22, "1.0E22"},
        {1e23, "1.0E23"},
        {DBL_MAX, "1.7976931348623157E308"},
        {DBL_MIN, "2.2250738585072014E-308"},
        {-2.5e-5, "-2.5E-5"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = real_text(cases[i].d);
        assert_string_equal(text, cases[i].text);
        free(text);
    }
}

/* The digits Double.toString shows, found the slow and sure way: the least
 * precision whose correctly rounded digits read back as d. */
static void reference_digits(double d, char *digits, int *exp10)
{
    char text[40];
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(text, sizeof(text), "%.*e", precision - 1, fabs(d));
        if (strtod(text, NULL) == fabs(d)) {
            break;
        }
    }
    size_t n = 0;
    char *e = strchr(text, 'e');
    for (char *p = text; p < e; p++) {
        if (*p != '.') {
            digits[n++] = *p;
        }
    }
    while (n > 1 && digits[n - 1] == '0') {
        n--;
    }
    digits[n] = '\0';
    *exp10 = atoi(e + 1);
}

/* The digits and exponent of a Java real's text ("-12.5" -> "125", 1). */
static void text_digits(const char *text, char *digits, int *exp10)
{
    size_t n = 0;
    int point = -1;
    int first = -1;
    int position = 0;
    const char *p = text[0] == '-' ? text + 1 : text;
    for (; *p != '\0' && *p != 'E'; p++) {
        if (*p == '.') {
            point = position;
            continue;
        }
        if (first < 0 && *p != '0') {
            first = position;
        }
        if (first >= 0) {
            digits[n++] = *p;
        }
        position++;
    }
    while (n > 1 && digits[n - 1] == '0') {
        n--;
    }
    digits[n] = '\0';
    *exp10 = point - first - 1 + (*p == 'E' ? atoi(p + 1) : 0);
}

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The quick path agrees with the search on random doubles of every kind,
 * and on decimal-looking ones (a money amount, a ratio), where it is
 * taken. */
static void test_reals_quick_path_agrees_with_search(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 200000; i++) {
        double d;
        uint64_t bits = next_random(&x);
        if (i % 2 == 0) {
            memcpy(&d, &bits, sizeof(d));
            if (!isfinite(d) || d == 0) {
                continue;
            }
        } else {
            static const double scales[] = {1, 10, 100, 1000, 1e6, 1e9, 1e15};
            d = (double)(int64_t)(bits % 100000000000ULL) / scales[(bits >> 40) % 7];
            if (d == 0) {
                continue;
            }
        }
        char expected[24];
        char got[24];
        int expected_exp;
        int got_exp;
        char *text = real_text(d);
        reference_digits(d, expected, &expected_exp);
        text_digits(text, got, &got_exp);
        if (strcmp(expected, got) != 0 || expected_exp != got_exp ||
            strtod(text, NULL) != d) {
            fail_msg("%.17g written %s, want digits %s exp %d", d, text, expected,
                     expected_exp);
        }
        free(text);
    }
}

static void test_integers(void **state)
{
    (void)state;
    static const struct {
        int64_t i;
        const char *text;
    } cases[] = {
        {0, "0"},
        {-1, "-1"},
        {42, "42"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
        {1700000000000, "1700000000000"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb_buf_t b = {0};
        tb_json_put_int(&b, cases[i].i);
        char *text = tb_buf_take(&b, &(size_t){0});
        assert_string_equal(text, cases[i].text);
        free(text);
    }
}

/* What tb_json_write_value() writes for value under schema (NULL on a
 * failure, errstr then says why), after checking that it is what the
 * jansson route writes. */
static char *written(const tb_schema_t *schema, const tb_value_t *value,
                     tb_decimal_format_t decimals, char *errstr, size_t errstr_size)
{
    tb_buf_t b = {0};
    char dump_errstr[256] = "";
    json_t *json = NULL;
    int dumped = tb_json_value_dump(schema, value, decimals, &json, dump_errstr,
                                    sizeof(dump_errstr));
    if (tb_json_write_value(&b, schema, value, decimals, errstr, errstr_size) != 0) {
        tb_buf_release(&b);
        assert_int_equal(dumped, -1);
        assert_string_equal(errstr, dump_errstr);
        return NULL;
    }
    char *text = tb_buf_take(&b, &(size_t){0});
    assert_int_equal(dumped, 0);
    char *jansson_text = tb_json_write(json, NULL);
    assert_string_equal(text, jansson_text);
    free(jansson_text);
    json_decref(json);
    return text;
}

static void assert_written(const tb_schema_t *schema, const tb_value_t *value,
                           tb_decimal_format_t decimals, const char *expected)
{
    char errstr[256] = "";
    char *text = written(schema, value, decimals, errstr, sizeof(errstr));
    if (text == NULL) {
        fail_msg("%s", errstr);
    }
    assert_string_equal(text, expected);
    free(text);
}

static void assert_refused(const tb_schema_t *schema, const tb_value_t *value,
                           const char *reason)
{
    char errstr[256] = "";
    assert_null(written(schema, value, TB_DECIMAL_BASE64, errstr, sizeof(errstr)));
    assert_string_equal(errstr, reason);
}

static void test_strings_escaped_as_jackson(void **state)
{
    (void)state;
    static const char raw[] = "q\" b\\ \b\f\n\r\t \x01\x1f\x7f \xc3\xa9 \xf0\x9f\x98\x80 "
                              "nul\0end";
    tb_value_t *v = tb_value_string(raw, sizeof(raw) - 1);
    assert_written(NULL, v, TB_DECIMAL_BASE64,
                   "\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001\\u001F\x7f \xc3\xa9 "
                   "\xf0\x9f\x98\x80 nul\\u0000end\"");
    tb_value_free(v);

    static const char *const invalid[] = {"\xc3", "\xc0\xaf", "\xed\xa0\x80",
                                          "\xf4\x90\x80\x80", "a\xffz"};
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        v = tb_value_string(invalid[i], strlen(invalid[i]));
        assert_refused(NULL, v, NOT_WRITABLE);
        tb_value_free(v);
    }
}

static tb_schema_t *optional(tb_schema_t *s)
{
    tb_schema_set_optional(s, true);
    return s;
}

/* A struct of every kind, nested, with defaults and nulls. */
static void test_connect_data_as_jsonconverter_writes_it(void **state)
{
    (void)state;
    tb_schema_t *inner = optional(tb_schema_new(TB_TYPE_STRUCT));
    tb_schema_set_name(inner, "Inner");
    tb_schema_add_field(inner, "f32", tb_schema_new(TB_TYPE_FLOAT32));
    tb_schema_add_field(inner, "when", optional(tb_schema_timestamp()));
    tb_schema_t *with_default = tb_schema_new(TB_TYPE_INT32);
    tb_schema_set_default(with_default, tb_value_int(TB_TYPE_INT32, 7));

    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_add_field(s, "i8", tb_schema_new(TB_TYPE_INT8));
    tb_schema_add_field(s, "long", tb_schema_new(TB_TYPE_INT64));
    tb_schema_add_field(s, "neg0", tb_schema_new(TB_TYPE_FLOAT64));
    tb_schema_add_field(s, "price", tb_schema_decimal(2));
    tb_schema_add_field(s, "blob", optional(tb_schema_new(TB_TYPE_BYTES)));
    tb_schema_add_field(s, "dflt", with_default);
    tb_schema_add_field(s, "nothing", optional(tb_schema_new(TB_TYPE_STRING)));
    tb_schema_add_field(s, "inner", tb_schema_incref(inner));
    tb_schema_add_field(s, "tags",
                        tb_schema_array(optional(tb_schema_new(TB_TYPE_INT16))));
    tb_schema_add_field(s, "by_name",
                        tb_schema_map(optional(tb_schema_new(TB_TYPE_STRING)),
                                      tb_schema_new(TB_TYPE_BOOLEAN)));
    tb_schema_add_field(
        s, "by_id",
        tb_schema_map(tb_schema_new(TB_TYPE_INT32), tb_schema_new(TB_TYPE_STRING)));

    static const unsigned char unscaled[] = {0xFE, 0x0C}; /* -500: -5.00 */
    tb_value_t *in = tb_value_struct(inner);
    tb_value_struct_set(in, "f32", tb_value_float(TB_TYPE_FLOAT32, 0.1));
    tb_value_struct_set(in, "when", tb_value_int(TB_TYPE_INT64, -1));
    tb_value_t *tags = tb_value_array();
    tb_value_array_append(tags, tb_value_int(TB_TYPE_INT16, -32768));
    tb_value_array_append(tags, NULL);
    tb_value_t *by_name = tb_value_map();
    tb_value_map_put(by_name, tb_value_string("a", 1), tb_value_bool(true));
    tb_value_map_put(by_name, NULL, tb_value_bool(false));
    tb_value_t *by_id = tb_value_map();
    tb_value_map_put(by_id, tb_value_int(TB_TYPE_INT32, 1), tb_value_string("one", 3));
    tb_value_t *v = tb_value_struct(s);
    tb_value_struct_set(v, "i8", tb_value_int(TB_TYPE_INT8, -128));
    tb_value_struct_set(v, "long", tb_value_int(TB_TYPE_INT64, INT64_MIN));
    tb_value_struct_set(v, "neg0", tb_value_float(TB_TYPE_FLOAT64, -0.0));
    tb_value_struct_set(v, "price", tb_value_bytes(unscaled, sizeof(unscaled)));
    tb_value_struct_set(v, "blob", tb_value_bytes("\x00\xff\x10", 3));
    tb_value_struct_set(v, "inner", in);
    tb_value_struct_set(v, "tags", tags);
    tb_value_struct_set(v, "by_name", by_name);
    tb_value_struct_set(v, "by_id", by_id);

    const char *head = "{\"i8\":-128,\"long\":-9223372036854775808,\"neg0\":-0.0,";
    const char *tail = ",\"blob\":\"AP8Q\",\"dflt\":7,\"nothing\":null,"
                       "\"inner\":{\"f32\":0.1,\"when\":-1},\"tags\":[-32768,null],"
                       "\"by_name\":{\"a\":true,\"null\":false},\"by_id\":[[1,\"one\"]]}";
    char expected[512];
    snprintf(expected, sizeof(expected), "%s\"price\":\"/gw=\"%s", head, tail);
    assert_written(s, v, TB_DECIMAL_BASE64, expected);
    snprintf(expected, sizeof(expected), "%s\"price\":-5.00%s", head, tail);
    assert_written(s, v, TB_DECIMAL_NUMERIC, expected);
    snprintf(expected, sizeof(expected), "%s\"price\":\"-5.00\"%s", head, tail);
    assert_written(s, v, TB_DECIMAL_TEXT, expected);
    /* without a schema: the struct's own, and maps by their keys */
    snprintf(expected, sizeof(expected), "%s\"price\":\"/gw=\"%s", head, tail);
    assert_written(NULL, v, TB_DECIMAL_BASE64, expected);

    tb_value_free(v);
    tb_schema_decref(s);
    tb_schema_decref(inner);
}

static void test_schemaless_maps_and_arrays(void **state)
{
    (void)state;
    tb_value_t *map = tb_value_map();
    tb_value_map_put(map, tb_value_string("x", 1), tb_value_float(TB_TYPE_FLOAT64, 1e10));
    tb_value_map_put(map, tb_value_string("e", 1), tb_value_array());
    tb_value_map_put(map, tb_value_string("m", 1), tb_value_map());
    assert_written(NULL, map, TB_DECIMAL_BASE64, "{\"x\":1.0E10,\"e\":[],\"m\":{}}");
    tb_value_map_put(map, tb_value_int(TB_TYPE_INT32, 2), NULL);
    assert_written(NULL, map, TB_DECIMAL_BASE64,
                   "[[\"x\",1.0E10],[\"e\",[]],[\"m\",{}],[2,null]]");
    tb_value_free(map);
}

static void test_what_cannot_be_written(void **state)
{
    (void)state;
    tb_value_t *nan = tb_value_float(TB_TYPE_FLOAT64, NAN);
    tb_value_t *inf = tb_value_float(TB_TYPE_FLOAT32, -INFINITY);
    assert_refused(NULL, nan, NOT_WRITABLE);
    assert_refused(NULL, inf, NOT_WRITABLE);
    tb_schema_t *required = tb_schema_new(TB_TYPE_STRING);
    assert_refused(required, NULL,
                   "Conversion error: null value for field that is required and has no "
                   "default value");
    assert_refused(required, nan, "Invalid type for STRING: class java.lang.Double");
    tb_schema_t *a = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_t *b = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_set_name(b, "other");
    tb_value_t *st = tb_value_struct(a);
    assert_refused(b, st, "Mismatching schema.");
    tb_value_free(st);
    tb_schema_decref(a);
    tb_schema_decref(b);
    tb_schema_decref(required);
    tb_value_free(nan);
    tb_value_free(inf);
}

/* JsonConverter writes each schema's JSON once and reuses it, and writes it
 * again after more schemas than it keeps went by; a schema freed by its
 * owner while the converter keeps it stays valid (the converter holds a
 * reference), so no later schema at its address gets its text. Equal
 * schemas at two addresses get each its own text (their parameters' order
 * may differ). */
static void test_envelope_schema_written_once_per_schema(void **state)
{
    (void)state;
    tb_converter_t *c = converter_of("JsonConverter", NULL);
    tb_value_t *v = tb_value_int(TB_TYPE_INT64, 5);
    char expected[256];
    for (int round = 0; round < 2; round++) {
        for (int version = 1; version <= 20; version++) {
            tb_schema_t *s = tb_schema_new(TB_TYPE_INT64);
            tb_schema_set_version(s, true, version);
            char *text = text_of(c, s, v);
            tb_schema_decref(s); /* the converter may keep it */
            snprintf(expected, sizeof(expected),
                     "{\"schema\":{\"type\":\"int64\",\"optional\":false,"
                     "\"version\":%d},\"payload\":5}",
                     version);
            assert_string_equal(text, expected);
            free(text);
        }
    }
    tb_schema_t *ab = tb_schema_new(TB_TYPE_INT64);
    tb_schema_t *ba = tb_schema_new(TB_TYPE_INT64);
    tb_schema_set_parameter(ab, "a", "1");
    tb_schema_set_parameter(ab, "b", "2");
    tb_schema_set_parameter(ba, "b", "2");
    tb_schema_set_parameter(ba, "a", "1");
    assert_true(tb_schema_equal(ab, ba));
    char *text = text_of(c, ab, v);
    assert_string_equal(text, "{\"schema\":{\"type\":\"int64\",\"optional\":false,"
                              "\"parameters\":{\"a\":\"1\",\"b\":\"2\"}},\"payload\":5}");
    free(text);
    text = text_of(c, ba, v);
    assert_string_equal(text, "{\"schema\":{\"type\":\"int64\",\"optional\":false,"
                              "\"parameters\":{\"b\":\"2\",\"a\":\"1\"}},\"payload\":5}");
    free(text);
    tb_schema_decref(ab);
    tb_schema_decref(ba);
    text = text_of(c, NULL, v);
    assert_string_equal(text, "{\"schema\":null,\"payload\":5}");
    free(text);
    tb_value_free(v);
    tb_converter_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reals_as_java_writes_them),
        cmocka_unit_test(test_reals_quick_path_agrees_with_search),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_strings_escaped_as_jackson),
        cmocka_unit_test(test_connect_data_as_jsonconverter_writes_it),
        cmocka_unit_test(test_schemaless_maps_and_arrays),
        cmocka_unit_test(test_what_cannot_be_written),
        cmocka_unit_test(test_envelope_schema_written_once_per_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
