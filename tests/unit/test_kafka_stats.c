#include "tb_test.h"

#include "connectors/kafka/tb_kafka_stats.h"

static void test_fetch_state_of_a_partition(void **state)
{
    (void)state;
    json_t *stats = json_loads(
        "{\"name\":\"c\",\"topics\":{\"orders\":{\"partitions\":{"
        "\"0\":{\"fetch_state\":\"active\"},\"1\":{\"fetch_state\":\"offset-query\"},"
        "\"-1\":{\"fetch_state\":\"none\"}}}}}",
        0, NULL);
    assert_string_equal(tb_kafka_stats_fetch_state(stats, "orders", 0), "active");
    assert_string_equal(tb_kafka_stats_fetch_state(stats, "orders", 1), "offset-query");
    assert_null(tb_kafka_stats_fetch_state(stats, "orders", 2));
    assert_null(tb_kafka_stats_fetch_state(stats, "other", 0));
    json_decref(stats);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetch_state_of_a_partition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
