/*
 * Plugin version ranges (core/tb_version_range.h): Maven's version order
 * and range syntax, as Connect 4.1 reads a requested plugin version.
 */
#include "tb_test.h"

#include "core/tb_version_range.h"

static void test_versions_are_ordered_as_maven_orders_them(void **state)
{
    (void)state;
    assert_true(tb_version_compare("1.10", "1.9") > 0);
    assert_true(tb_version_compare("1.0", "1.0.0") == 0);
    assert_true(tb_version_compare("3.9.0", "3.9") == 0);
    assert_true(tb_version_compare("3.0.7.Final", "3.0.7") == 0);
    assert_true(tb_version_compare("1.0-alpha", "1.0-beta") < 0);
    assert_true(tb_version_compare("1.0-rc1", "1.0") < 0);
    assert_true(tb_version_compare("1.0-SNAPSHOT", "1.0") < 0);
    assert_true(tb_version_compare("1.0-sp", "1.0") > 0);
    assert_true(tb_version_compare("1.0.1", "1.0-sp") > 0);
    assert_true(tb_version_compare("010", "10") == 0);
}

static tb_version_range_match_t match(const char *spec, const char *version, char *text)
{
    return tb_version_range_match(spec, version, text, 128);
}

static void test_ranges_and_bare_versions_match_as_in_connect(void **state)
{
    (void)state;
    char text[128];
    static const char *const inside[] = {NULL,      "",           "latest",
                                         "3.9.0",   "3.9",        " 3.9.0 ",
                                         "[3.9.0]", "[3.0,4.0)",  "(,3.9.0]",
                                         "[3.9,)",  "(3.0, 4.0)", "[1.0,2.0),[3.0,4.0)"};
    for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
        assert_int_equal(match(inside[i], "3.9.0", text), TB_VERSION_RANGE_INSIDE);
    }
    /* outside: the range as Connect prints it, a bare version made [v,v] */
    assert_int_equal(match("1.0", "3.9.0", text), TB_VERSION_RANGE_OUTSIDE);
    assert_string_equal(text, "[1.0,1.0]");
    assert_int_equal(match("[1.0,2.0)", "3.9.0", text), TB_VERSION_RANGE_OUTSIDE);
    assert_string_equal(text, "[1.0,2.0)");
    assert_int_equal(match("( , 3.9.0 )", "3.9.0", text), TB_VERSION_RANGE_OUTSIDE);
    assert_string_equal(text, "(,3.9.0)");
    assert_int_equal(match("[1.0,2.0],[4.0,)", "3.9.0", text), TB_VERSION_RANGE_OUTSIDE);
    assert_string_equal(text, "[1.0,2.0],[4.0,)");
}

static void test_malformed_ranges_say_why_as_maven_does(void **state)
{
    (void)state;
    char text[128];
    static const struct {
        const char *spec, *reason;
    } cases[] = {
        {"[1.0", "Unbounded range: [1.0"},
        {"(1.0)", "Single version must be surrounded by []: (1.0)"},
        {"[1.0,1.0)", "Range cannot have identical boundaries: [1.0,1.0)"},
        {"[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"},
        {"[1.0,3.0),[2.0,4.0)", "Ranges overlap: [1.0,3.0),[2.0,4.0)"},
        {"[1.0,2.0)x", "Only fully-qualified sets allowed in multiple set scenario: "
                       "[1.0,2.0)x"},
        /* a bare version is read as [v], so its mistakes show that way */
        {"1.0]", "Only fully-qualified sets allowed in multiple set scenario: [1.0]]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(match(cases[i].spec, "3.9.0", text), TB_VERSION_RANGE_MALFORMED);
        assert_string_equal(text, cases[i].reason);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions_are_ordered_as_maven_orders_them),
        cmocka_unit_test(test_ranges_and_bare_versions_match_as_in_connect),
        cmocka_unit_test(test_malformed_ranges_say_why_as_maven_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
