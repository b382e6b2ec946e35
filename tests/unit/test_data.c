#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_data.h"

/* struct person { int32 id; optional string name; array<int64> tags } */
static tb_schema_t *person_schema(void)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_t *name = tb_schema_new(TB_TYPE_STRING);
    tb_schema_set_optional(name, true);
    assert_int_equal(tb_schema_set_name(s, "person"), 0);
    tb_schema_set_version(s, true, 2);
    assert_int_equal(tb_schema_add_field(s, "id", tb_schema_new(TB_TYPE_INT32)), 0);
    assert_int_equal(tb_schema_add_field(s, "name", name), 0);
    assert_int_equal(
        tb_schema_add_field(s, "tags", tb_schema_array(tb_schema_new(TB_TYPE_INT64))), 0);
    return s;
}

static tb_value_t *person(tb_schema_t *schema, int id, const char *name)
{
    tb_value_t *v = tb_value_struct(schema);
    tb_value_t *tags = tb_value_array();
    assert_int_equal(tb_value_array_append(tags, tb_value_int(TB_TYPE_INT64, 7)), 0);
    assert_int_equal(tb_value_struct_set(v, "id", tb_value_int(TB_TYPE_INT32, id)), 0);
    if (name != NULL) {
        assert_int_equal(
            tb_value_struct_set(v, "name", tb_value_string(name, strlen(name))), 0);
    }
    assert_int_equal(tb_value_struct_set(v, "tags", tags), 0);
    return v;
}

static void test_struct_fields_by_name_and_index(void **state)
{
    (void)state;
    tb_schema_t *s = person_schema();
    tb_value_t *v = person(s, 1, "ann");
    assert_int_equal(tb_schema_field_count(s), 3);
    assert_int_equal(tb_schema_field(s, "tags")->index, 2);
    assert_null(tb_schema_field(s, "missing"));
    assert_int_equal(tb_value_int64(tb_value_struct_get(v, "id")), 1);
    assert_string_equal(tb_value_text(tb_value_struct_get_at(v, 1), NULL), "ann");
    assert_int_equal(tb_value_size(tb_value_struct_get(v, "tags")), 1);
    /* a field the schema does not have is refused and the value released */
    assert_int_equal(tb_value_struct_set(v, "age", tb_value_int(TB_TYPE_INT8, 3)), -1);
    /* a repeated field name is refused */
    assert_int_equal(tb_schema_add_field(s, "id", tb_schema_new(TB_TYPE_INT8)), -1);
    tb_value_free(v);
    tb_schema_decref(s);
}

static void test_copy_is_deep_and_equal(void **state)
{
    (void)state;
    tb_schema_t *s = person_schema();
    tb_value_t *v = person(s, 1, "ann");
    tb_value_t *copy = tb_value_copy(v);
    tb_schema_t *schema_copy = tb_schema_copy(s);
    assert_true(tb_value_equal(v, copy));
    assert_true(tb_schema_equal(s, schema_copy));
    assert_int_equal(tb_value_struct_set(copy, "name", NULL), 0);
    assert_false(tb_value_equal(v, copy));
    assert_string_equal(tb_value_text(tb_value_struct_get(v, "name"), NULL), "ann");
    tb_schema_set_version(schema_copy, true, 3);
    assert_false(tb_schema_equal(s, schema_copy));
    tb_value_free(copy);
    tb_value_free(v);
    tb_schema_decref(schema_copy);
    tb_schema_decref(s);
}

static void test_types_and_widths_differ(void **state)
{
    (void)state;
    tb_value_t *a = tb_value_int(TB_TYPE_INT32, 5);
    tb_value_t *b = tb_value_int(TB_TYPE_INT64, 5);
    tb_value_t *c = tb_value_string("5", 1);
    tb_value_t *d = tb_value_bytes("5", 1);
    assert_false(tb_value_equal(a, b));
    assert_false(tb_value_equal(c, d));
    assert_true(tb_value_equal(NULL, NULL));
    assert_false(tb_value_equal(a, NULL));
    tb_value_free(a);
    tb_value_free(b);
    tb_value_free(c);
    tb_value_free(d);
}

static void test_schemaless_map(void **state)
{
    (void)state;
    tb_value_t *m = tb_value_map();
    assert_int_equal(tb_value_map_put(m, tb_value_string("a", 1), tb_value_bool(true)),
                     0);
    assert_int_equal(
        tb_value_map_put(m, tb_value_string("a", 1), tb_value_int(TB_TYPE_INT64, 2)), 0);
    assert_int_equal(tb_value_map_put(m, tb_value_int(TB_TYPE_INT32, 1), NULL), 0);
    assert_int_equal(tb_value_size(m), 2);
    assert_int_equal(tb_value_int64(tb_value_map_get_string(m, "a")), 2);
    tb_value_t *copy = tb_value_copy(m);
    assert_true(tb_value_equal(m, copy));
    tb_value_free(copy);
    tb_value_free(m);
}

static void test_logical_types_by_name(void **state)
{
    (void)state;
    tb_schema_t *d = tb_schema_decimal(2);
    tb_schema_t *ts = tb_schema_timestamp();
    tb_schema_t *date = tb_schema_date();
    assert_int_equal(tb_schema_type(d), TB_TYPE_BYTES);
    assert_string_equal(tb_schema_parameter(d, TB_DECIMAL_SCALE), "2");
    assert_true(tb_schema_is_logical(d, TB_LOGICAL_DECIMAL));
    assert_false(tb_schema_is_logical(d, TB_LOGICAL_DATE));
    assert_int_equal(tb_schema_type(ts), TB_TYPE_INT64);
    assert_true(tb_schema_is_logical(ts, TB_LOGICAL_TIMESTAMP));
    assert_int_equal(tb_schema_type(date), TB_TYPE_INT32);
    assert_int_equal(tb_schema_version(date), 1);
    tb_schema_decref(d);
    tb_schema_decref(ts);
    tb_schema_decref(date);
}

static void test_validate_with_connect_messages(void **state)
{
    (void)state;
    char errstr[256];
    tb_schema_t *s = person_schema();
    tb_value_t *v = person(s, 1, NULL); /* name is optional */
    assert_int_equal(tb_value_validate(s, v, errstr, sizeof(errstr)), 0);
    assert_int_equal(tb_value_struct_set(v, "id", NULL), 0);
    assert_int_equal(tb_value_validate(s, v, errstr, sizeof(errstr)), -1);
    assert_string_equal(errstr, "Invalid value: null used for required field: \"id\", "
                                "schema type: INT32");
    assert_int_equal(tb_value_struct_set(v, "id", tb_value_string("x", 1)), 0);
    assert_int_equal(tb_value_validate(s, v, errstr, sizeof(errstr)), -1);
    assert_string_equal(errstr, "Invalid Java object for schema with type INT32: class "
                                "java.lang.String for field: \"id\"");
    assert_int_equal(tb_value_validate(s, NULL, errstr, sizeof(errstr)), -1);
    assert_string_equal(
        errstr, "Invalid value: null used for required value, schema type: STRUCT");
    tb_schema_t *other = tb_schema_copy(s);
    tb_schema_set_name(other, "other");
    tb_value_t *w = person(other, 1, NULL);
    assert_int_equal(tb_value_validate(s, w, errstr, sizeof(errstr)), -1);
    assert_string_equal(errstr, "Struct schemas do not match.");
    tb_value_free(w);
    tb_value_free(v);
    tb_schema_decref(other);
    tb_schema_decref(s);
}

static void test_default_value_kept_and_compared(void **state)
{
    (void)state;
    tb_schema_t *a = tb_schema_new(TB_TYPE_INT32);
    tb_schema_t *b = tb_schema_new(TB_TYPE_INT32);
    tb_schema_set_default(a, tb_value_int(TB_TYPE_INT32, 4));
    assert_false(tb_schema_equal(a, b));
    tb_schema_set_default(b, tb_value_int(TB_TYPE_INT32, 4));
    assert_true(tb_schema_equal(a, b));
    assert_int_equal(tb_value_int64(tb_schema_default(a)), 4);
    tb_schema_decref(a);
    tb_schema_decref(b);
}

/* The bytes of a decimal text under scale, as hex. */
static void assert_decimal(const char *text, int scale, const char *hex)
{
    char errstr[256] = "";
    char got[128] = "";
    size_t len;
    tb_value_t *v = tb_decimal_parse(text, strlen(text), scale, errstr, sizeof(errstr));
    if (v == NULL) {
        fail_msg("%s: %s", text, errstr);
    }
    const unsigned char *b = (const unsigned char *)tb_value_text(v, &len);
    for (size_t i = 0; i < len; i++) {
        snprintf(got + 2 * i, sizeof(got) - 2 * i, "%02x", b[i]);
    }
    assert_string_equal(got, hex);
    tb_value_free(v);
}

static void assert_decimal_text(const char *hex, int scale, const char *text)
{
    unsigned char b[64];
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        sscanf(hex + 2 * i, "%2hhx", &b[i]);
    }
    char *got = tb_decimal_text(b, n, scale);
    assert_string_equal(got, text);
    free(got);
}

static void test_decimals_exact_beyond_a_double(void **state)
{
    (void)state;
    char errstr[256] = "";
    /* 29 digits: a double holds 17 */
    assert_decimal("12345678901234567890.123456789", 9, "27e41b3246bec9b16e398115");
    assert_decimal("-12345678901234567890.123456789", 9, "d81be4cdb941364e91c67eeb");
    assert_decimal_text("27e41b3246bec9b16e398115", 9, "12345678901234567890.123456789");
    assert_decimal_text("d81be4cdb941364e91c67eeb", 9, "-12345678901234567890.123456789");
    /* fewer decimals than the scale, exponents, zeros, sign bytes */
    assert_decimal("15", 2, "05dc");
    assert_decimal("1.5E+1", 2, "05dc");
    assert_decimal("150.000", 1, "05dc");
    assert_decimal("1.28", 2, "0080");
    assert_decimal("-1.25", 2, "83");
    assert_decimal("-0.00", 2, "00");
    assert_decimal("-1", 0, "ff");
    assert_decimal_text("00", 3, "0.000");
    assert_decimal_text("83", 2, "-1.25");
    assert_decimal_text("05dc", 0, "1500");
    assert_decimal_text("0f", -2, "1500");
    assert_null(tb_decimal_text("\x0f", 1, 2000000000)); /* no 2 GB of zeros */
    /* bad text, and digits the scale cannot hold, are named */
    assert_null(tb_decimal_parse("1.234", 5, 2, errstr, sizeof(errstr)));
    assert_string_equal(errstr,
                        "decimal \"1.234\" has more decimals than the scale 2 holds");
    assert_null(tb_decimal_parse("1.2.3", 5, 2, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "decimal \"1.2.3\" is not a number");
    assert_null(tb_decimal_parse("12e", 3, 0, errstr, sizeof(errstr)));
    assert_null(tb_decimal_parse("", 0, 0, errstr, sizeof(errstr)));
    assert_null(tb_decimal_parse("1e99999", 7, 0, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "decimal \"1e99999\" has too many digits");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_struct_fields_by_name_and_index),
        cmocka_unit_test(test_copy_is_deep_and_equal),
        cmocka_unit_test(test_types_and_widths_differ),
        cmocka_unit_test(test_schemaless_map),
        cmocka_unit_test(test_logical_types_by_name),
        cmocka_unit_test(test_validate_with_connect_messages),
        cmocka_unit_test(test_default_value_kept_and_compared),
        cmocka_unit_test(test_decimals_exact_beyond_a_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
