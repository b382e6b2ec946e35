#include "tb_test.h"

#include <string.h>

#include "connectors/runtime/sink/tb_sink_start.h"

static tb_start_t resolve(int64_t stored, int64_t committed, int64_t low, int64_t high,
                          tb_reset_policy_t reset)
{
    tb_start_inputs_t in = {.stored = stored,
                            .committed = committed,
                            .low = low,
                            .high = high,
                            .reset = reset};
    return tb_sink_start_resolve(&in);
}

static void test_stored_wins_over_reset(void **state)
{
    (void)state;
    tb_start_t s = resolve(40, TB_OFFSET_NONE, 0, 100, TB_RESET_LATEST);
    assert_int_equal(s.origin, TB_START_STORED);
    assert_int_equal(s.offset, 40);
}

static void test_group_ahead_is_adopted_and_counted(void **state)
{
    (void)state;
    tb_start_t s = resolve(40, 90, 0, 100, TB_RESET_EARLIEST);
    assert_int_equal(s.origin, TB_START_GROUP);
    assert_int_equal(s.offset, 90);
    assert_int_equal(s.skipped, 50);
    assert_non_null(strstr(s.reason, "adopted"));
}

static void test_group_behind_is_ignored(void **state)
{
    (void)state;
    tb_start_t s = resolve(40, 10, 0, 100, TB_RESET_EARLIEST);
    assert_int_equal(s.origin, TB_START_STORED);
    assert_int_equal(s.offset, 40);
    assert_true(s.group_ignored);
}

static void test_group_past_end_stops(void **state)
{
    (void)state;
    tb_start_t s = resolve(40, 500, 0, 100, TB_RESET_EARLIEST);
    assert_int_equal(s.origin, TB_START_STOPPED);
    assert_non_null(strstr(s.reason, "past the end"));
    assert_string_equal(s.cause, "group offset past end");
    s = resolve(TB_OFFSET_NONE, 500, 0, 100, TB_RESET_EARLIEST);
    assert_int_equal(s.origin, TB_START_STOPPED);
}

static void test_recreated_topic_stops(void **state)
{
    (void)state;
    tb_start_t s = resolve(40, TB_OFFSET_NONE, 0, 3, TB_RESET_EARLIEST);
    assert_int_equal(s.origin, TB_START_STOPPED);
    assert_non_null(strstr(s.reason, "recreated or truncated"));
    assert_string_equal(s.cause, "topic recreated");
}

static void test_retention_gap_continues_at_low(void **state)
{
    (void)state;
    tb_start_t s = resolve(40, TB_OFFSET_NONE, 70, 100, TB_RESET_EARLIEST);
    assert_int_equal(s.origin, TB_START_STORED);
    assert_int_equal(s.offset, 70);
    assert_int_equal(s.deleted, 30);
    assert_int_equal(s.skipped, 0);
    assert_non_null(strstr(s.reason, "deleted by retention"));
}

static void test_reset_policies(void **state)
{
    (void)state;
    assert_int_equal(
        resolve(TB_OFFSET_NONE, TB_OFFSET_NONE, 5, 9, TB_RESET_EARLIEST).offset, 5);
    tb_start_t latest = resolve(TB_OFFSET_NONE, TB_OFFSET_NONE, 5, 9, TB_RESET_LATEST);
    assert_int_equal(latest.offset, 9);
    assert_int_equal(latest.origin, TB_START_RESET);
    assert_int_equal(resolve(TB_OFFSET_NONE, TB_OFFSET_NONE, 5, 9, TB_RESET_NONE).origin,
                     TB_START_STOPPED);
    tb_start_t group = resolve(TB_OFFSET_NONE, 7, 5, 9, TB_RESET_NONE);
    assert_int_equal(group.origin, TB_START_GROUP);
    assert_int_equal(group.offset, 7);
}

/* Kafka's names and librdkafka's aliases; nothing else. */
static void test_reset_policy_names(void **state)
{
    (void)state;
    const struct {
        const char *text;
        tb_reset_policy_t policy;
    } known[] = {{"earliest", TB_RESET_EARLIEST},  {"smallest", TB_RESET_EARLIEST},
                 {"beginning", TB_RESET_EARLIEST}, {"latest", TB_RESET_LATEST},
                 {"largest", TB_RESET_LATEST},     {"end", TB_RESET_LATEST},
                 {"none", TB_RESET_NONE},          {"error", TB_RESET_NONE}};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        tb_reset_policy_t policy = TB_RESET_EARLIEST;
        assert_int_equal(tb_reset_policy_parse(known[i].text, &policy), 0);
        assert_int_equal(policy, known[i].policy);
    }
    tb_reset_policy_t policy;
    assert_int_equal(tb_reset_policy_parse("Latest", &policy), -1);
    assert_int_equal(tb_reset_policy_parse("", &policy), -1);
}

/* Issue 12: unreadable watermarks decide nothing, whatever else is known:
 * the partition waits and is asked again, with a growing bounded delay. */
static void test_unreadable_watermarks_wait(void **state)
{
    (void)state;
    tb_start_inputs_t in = {.stored = 40,
                            .committed = 500,
                            .reset = TB_RESET_NONE,
                            .watermarks_error = "Broker: Not leader for partition"};
    tb_start_t s = tb_sink_start_resolve(&in);
    assert_int_equal(s.origin, TB_START_WAITING);
    assert_string_equal(tb_start_origin_name(s.origin), "waiting");
    assert_non_null(strstr(s.reason, "waiting for its watermarks"));
    assert_non_null(strstr(s.reason, "Not leader for partition"));
    assert_int_equal(tb_sink_start_retry_delay_ms(1), 500);
    assert_int_equal(tb_sink_start_retry_delay_ms(2), 1000);
    assert_int_equal(tb_sink_start_retry_delay_ms(3), 2000);
    assert_int_equal(tb_sink_start_retry_delay_ms(100), 30000);
}

/* Issue 21: a plugin that keeps its offsets with its data (a JDBC sink's
 * offsets table) is authoritative: it wins over the store and over a group
 * offset ahead of it, and is still clamped to what the partition holds. */
static void test_plugin_offset_is_authoritative(void **state)
{
    (void)state;
    tb_start_inputs_t in = {.stored = 40,
                            .committed = 90,
                            .low = 0,
                            .high = 100,
                            .reset = TB_RESET_EARLIEST,
                            .has_plugin = true,
                            .plugin = 30};
    tb_start_t s = tb_sink_start_resolve(&in);
    assert_int_equal(s.origin, TB_START_PLUGIN);
    assert_string_equal(tb_start_origin_name(s.origin), "plugin");
    assert_int_equal(s.offset, 30);
    assert_int_equal(s.skipped, 0);

    in.low = 35; /* retention deleted what the plugin wants next */
    s = tb_sink_start_resolve(&in);
    assert_int_equal(s.offset, 35);
    assert_int_equal(s.deleted, 5);

    in.plugin = 150; /* past the end: the topic was recreated */
    s = tb_sink_start_resolve(&in);
    assert_int_equal(s.origin, TB_START_STOPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stored_wins_over_reset),
        cmocka_unit_test(test_group_ahead_is_adopted_and_counted),
        cmocka_unit_test(test_group_behind_is_ignored),
        cmocka_unit_test(test_group_past_end_stops),
        cmocka_unit_test(test_recreated_topic_stops),
        cmocka_unit_test(test_retention_gap_continues_at_low),
        cmocka_unit_test(test_reset_policies),
        cmocka_unit_test(test_unreadable_watermarks_wait),
        cmocka_unit_test(test_reset_policy_names),
        cmocka_unit_test(test_plugin_offset_is_authoritative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
