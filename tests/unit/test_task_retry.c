#include "tb_test.h"

#include <jansson.h>

#include "connectors/runtime/task/tb_task_retry.h"

static tb_task_retry_t schedule(long long timeout_ms, long long delay_max_ms)
{
    tb_connector_settings_t settings = {.errors_retry_timeout = timeout_ms,
                                        .errors_retry_delay_max_ms = delay_max_ms};
    return tb_task_retry_from(&settings);
}

static void test_no_timeout_gives_up_at_the_first_failure(void **state)
{
    (void)state;
    char why[64] = "registry down";
    tb_task_retry_t retry = schedule(0, 60000);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), -1);
    assert_string_equal(why, "registry down (errors.retry.timeout=0 ms spent)");
    /* and starts afresh: the next operation gets its own (empty) timeout */
    assert_int_equal(retry.since_ms, 0);
}

static void test_delays_double_up_to_the_maximum(void **state)
{
    (void)state;
    char why[64] = "";
    tb_task_retry_t retry = schedule(-1, 300);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 100);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 200);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 300);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 300);
    for (int i = 0; i < 100; i++) { /* -1: forever */
        assert_true(tb_task_retry_next(&retry, why, sizeof(why)) > 0);
    }
    tb_task_retry_reset(&retry);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 100);
}

static void test_a_small_maximum_bounds_the_first_delay(void **state)
{
    (void)state;
    char why[64] = "";
    tb_task_retry_t retry = schedule(-1, 40);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 40);
    retry = schedule(-1, 0);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 1);
}

static void test_a_timeout_passed_gives_up(void **state)
{
    (void)state;
    char why[64] = "";
    tb_task_retry_t retry = schedule(60000, 1000);
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), 100);
    retry.since_ms -= 60000; /* as if the first failure were a minute back */
    assert_int_equal(tb_task_retry_next(&retry, why, sizeof(why)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_timeout_gives_up_at_the_first_failure),
        cmocka_unit_test(test_delays_double_up_to_the_maximum),
        cmocka_unit_test(test_a_small_maximum_bounds_the_first_delay),
        cmocka_unit_test(test_a_timeout_passed_gives_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
