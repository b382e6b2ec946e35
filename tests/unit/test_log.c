#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "core/tb_log.h"

static int reset(void **state)
{
    (void)state;
    tb_log_shutdown();
    return 0;
}

static void test_children_inherit_and_override(void **state)
{
    (void)state;
    assert_true(tb_log_enabled(TB_LOG_INFO, "tributary.http"));
    assert_false(tb_log_enabled(TB_LOG_DEBUG, "tributary.http"));
    json_decref(tb_log_level_set("tributary.http", TB_LOG_DEBUG, 1000));
    assert_true(tb_log_enabled(TB_LOG_DEBUG, "tributary.http"));
    assert_false(tb_log_enabled(TB_LOG_DEBUG, "tributary.store"));
    /* a name that merely starts with the same letters is not a child */
    assert_false(tb_log_enabled(TB_LOG_DEBUG, "tributary.httpx"));
}

static void test_set_returns_sorted_affected_names(void **state)
{
    (void)state;
    json_t *affected = tb_log_level_set("tributary", TB_LOG_WARN, 5);
    assert_true(json_array_size(affected) > 3);
    assert_string_equal(json_string_value(json_array_get(affected, 0)), "tributary");
    for (size_t i = 1; i < json_array_size(affected); i++) {
        assert_true(strcmp(json_string_value(json_array_get(affected, i - 1)),
                           json_string_value(json_array_get(affected, i))) < 0);
    }
    json_decref(affected);
    assert_false(tb_log_enabled(TB_LOG_INFO, "tributary.store"));
    json_t *all = tb_log_levels_get();
    json_t *root = json_object_get(all, "root");
    assert_string_equal(json_string_value(json_object_get(root, "level")), "INFO");
    assert_true(json_is_null(json_object_get(root, "last_modified")));
    json_t *store = json_object_get(all, "tributary.store");
    assert_int_equal(json_integer_value(json_object_get(store, "last_modified")), 5);
    json_decref(all);
}

static void test_get_one_known_inherited_and_unknown(void **state)
{
    (void)state;
    json_t *one = tb_log_level_get("tributary.store");
    assert_string_equal(json_string_value(json_object_get(one, "level")), "INFO");
    json_decref(one);
    assert_null(tb_log_level_get("org.nothing"));
}

static void test_level_names(void **state)
{
    (void)state;
    tb_log_level_t level;
    assert_int_equal(tb_log_level_parse("debug", &level), 0);
    assert_int_equal(level, TB_LOG_DEBUG);
    assert_int_equal(tb_log_level_parse("ALL", &level), 0);
    assert_int_equal(level, TB_LOG_TRACE);
    assert_int_equal(tb_log_level_parse("loud", &level), -1);
    assert_string_equal(tb_log_level_name(TB_LOG_WARN), "WARN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_children_inherit_and_override, reset),
        cmocka_unit_test_setup(test_set_returns_sorted_affected_names, reset),
        cmocka_unit_test_setup(test_get_one_known_inherited_and_unknown, reset),
        cmocka_unit_test_setup(test_level_names, reset),
    };
    return cmocka_run_group_tests(tests, NULL, reset);
}
