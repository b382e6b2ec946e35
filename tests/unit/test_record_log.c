#include "tb_test.h"

#include <string.h>

#include "connectors/runtime/task/tb_record_log.h"

static void test_coordinates_only_without_messages(void **state)
{
    (void)state;
    char buf[256];
    tb_sink_record_t r = {
        .topic = "t", .partition = 2, .offset = 9, .key = "k", .key_len = 1};
    tb_record_log_describe(&r, false, buf, sizeof(buf));
    assert_string_equal(buf, "record t-2 at offset 9");
}

static void test_key_and_value_escaped_with_messages(void **state)
{
    (void)state;
    char buf[256];
    tb_sink_record_t r = {.topic = "t",
                          .partition = 0,
                          .offset = 1,
                          .value = "a\"\\\n\xff",
                          .value_len = 5};
    tb_record_log_describe(&r, true, buf, sizeof(buf));
    assert_string_equal(
        buf, "record t-0 at offset 1 (key null, value \"a\\x22\\x5c\\x0a\\xff\")");
}

static void test_a_long_value_is_cut_and_counted(void **state)
{
    (void)state;
    char value[TB_RECORD_LOG_SHOWN + 10];
    char buf[1024];
    memset(value, 'v', sizeof(value));
    tb_sink_record_t r = {.topic = "t", .value = value, .value_len = sizeof(value)};
    tb_record_log_describe(&r, true, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"... (266 bytes))"));
    const char *shown = strstr(buf, "value \"") + strlen("value \"");
    assert_int_equal(strspn(shown, "v"), TB_RECORD_LOG_SHOWN);
}

static void test_a_small_buffer_is_cut_and_terminated(void **state)
{
    (void)state;
    char buf[12];
    tb_sink_record_t r = {.topic = "topic", .value = "value", .value_len = 5};
    tb_record_log_describe(&r, true, buf, sizeof(buf));
    assert_string_equal(buf, "record topi");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coordinates_only_without_messages),
        cmocka_unit_test(test_key_and_value_escaped_with_messages),
        cmocka_unit_test(test_a_long_value_is_cut_and_counted),
        cmocka_unit_test(test_a_small_buffer_is_cut_and_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
