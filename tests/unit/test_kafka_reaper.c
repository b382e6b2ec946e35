/* A librdkafka client destroyed within a bound (tb_kafka_reaper.h): a
 * destroy that finishes is waited for, one that hangs is left behind and
 * still finishes later. */
#include "tb_test.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_reaper.h"
#include "core/tb_time.h"

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_open = PTHREAD_COND_INITIALIZER;
static bool gate_closed;

/* librdkafka's log lines block while the gate is closed: a destroy that logs
 * (debug=generic) hangs as one waiting for a broker that does not answer. */
static void gated_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
    pthread_mutex_lock(&gate_lock);
    while (gate_closed) {
        pthread_cond_wait(&gate_open, &gate_lock);
    }
    pthread_mutex_unlock(&gate_lock);
}

static rd_kafka_t *producer(void)
{
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", "127.0.0.1:1", errstr,
                                       sizeof(errstr)),
                     RD_KAFKA_CONF_OK);
    assert_int_equal(rd_kafka_conf_set(conf, "debug", "generic", errstr, sizeof(errstr)),
                     RD_KAFKA_CONF_OK);
    rd_kafka_conf_set_log_cb(conf, gated_log);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    assert_non_null(rk);
    return rk;
}

static void set_gate(bool closed)
{
    pthread_mutex_lock(&gate_lock);
    gate_closed = closed;
    pthread_cond_broadcast(&gate_open);
    pthread_mutex_unlock(&gate_lock);
}

static void test_a_destroy_that_finishes_is_waited_for(void **state)
{
    (void)state;
    assert_true(tb_kafka_destroy_within(producer(), 0, tb_monotonic_ms() + 10000));
    assert_int_equal(rd_kafka_wait_destroyed(0), 0);
}

static void test_a_destroy_that_hangs_is_left_to_finish(void **state)
{
    (void)state;
    rd_kafka_t *rk = producer();
    set_gate(true);
    assert_false(tb_kafka_destroy_within(rk, 0, tb_monotonic_ms()));
    assert_int_not_equal(rd_kafka_wait_destroyed(0), 0); /* still under way */
    set_gate(false);
    assert_int_equal(rd_kafka_wait_destroyed(10000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_destroy_that_finishes_is_waited_for),
        cmocka_unit_test(test_a_destroy_that_hangs_is_left_to_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
