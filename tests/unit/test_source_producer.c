/*
 * The source engine's producer teardown (issue 34 item 7). librdkafka
 * 2.0.2 calls a queue's event callback from its own threads; a destroy cut
 * short by the task's stop goes on in the background after the task is
 * freed. Whether a report reaches the main queue in that window depends on
 * librdkafka's threads: on_destroy interceptors run in its main thread
 * before the main queue is disabled, so one that waits there holds the
 * window open, and a purge from it puts a report on the queue then.
 */
#include "tb_test.h"

#include <librdkafka/rdkafka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "connectors/runtime/source/source_engine_internal.h"
#include "core/tb_time.h"

#define WAIT_MS 30000

/* The interceptor's state: the test lets it go once the teardown returned */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static bool teardown_returned;
static bool purged;
static int events; /* the queue's event callback calls */

/* Waits (bounded) until *flag, lock held. */
static void wait_for(const bool *flag)
{
    int64_t until = tb_monotonic_ms() + WAIT_MS;
    struct timespec at = {.tv_sec = (time_t)(until / 1000),
                          .tv_nsec = (long)(until % 1000) * 1000000L};
    while (!*flag && pthread_cond_clockwait(&changed, &lock, CLOCK_MONOTONIC, &at) == 0) {
    }
}

static void set(bool *flag)
{
    pthread_mutex_lock(&lock);
    *flag = true;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_event(rd_kafka_t *rk, void *opaque)
{
    (void)rk, (void)opaque;
    pthread_mutex_lock(&lock);
    events++;
    pthread_mutex_unlock(&lock);
}

/* In librdkafka's main thread, the main queue still enabled: waits for the
 * teardown to return, then puts a delivery report on the main queue. */
static rd_kafka_resp_err_t on_destroy(rd_kafka_t *rk, void *ic_opaque)
{
    (void)ic_opaque;
    pthread_mutex_lock(&lock);
    wait_for(&teardown_returned);
    pthread_mutex_unlock(&lock);
    rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_NON_BLOCKING);
    set(&purged);
    return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t on_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf,
                                  void *ic_opaque, char *errstr, size_t errstr_size)
{
    (void)conf, (void)errstr, (void)errstr_size;
    return rd_kafka_interceptor_add_on_destroy(rk, "hold", on_destroy, ic_opaque);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque)
{
    (void)rk, (void)message, (void)opaque;
}

/* A producer destroy that finishes in the background never calls the
 * queue's event callback after the teardown returned. The producer's
 * broker accepts the connection and never answers: nothing reaches the
 * main queue before the purge (an error would, and a queue that is not
 * empty calls no callback). */
static void test_a_destroy_in_the_background_calls_nothing(void **state)
{
    (void)state;
    char errstr[512];
    int silent = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET,
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof(address);
    assert_int_equal(bind(silent, (struct sockaddr *)&address, sizeof(address)), 0);
    assert_int_equal(listen(silent, 4), 0);
    assert_int_equal(getsockname(silent, (struct sockaddr *)&address, &length), 0);
    char bootstrap[64];
    snprintf(bootstrap, sizeof(bootstrap), "127.0.0.1:%d", ntohs(address.sin_port));

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    assert_int_equal(
        rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof(errstr)),
        RD_KAFKA_CONF_OK);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    assert_int_equal(rd_kafka_conf_interceptor_add_on_new(conf, "hold", on_new, NULL),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    assert_non_null(rk);
    rd_kafka_queue_t *main_queue = rd_kafka_queue_get_main(rk);
    rd_kafka_queue_cb_event_enable(main_queue, on_event, NULL);
    rd_kafka_queue_destroy(main_queue);
    /* without metadata, the record waits in librdkafka's queue until the
     * purge */
    assert_int_equal(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("t"),
                                       RD_KAFKA_V_VALUE("v", 1), RD_KAFKA_V_END),
                     RD_KAFKA_RESP_ERR_NO_ERROR);

    source_engine_t *engine = calloc(1, sizeof(*engine));
    assert_non_null(engine);
    engine->rk = rk;
    /* held by the interceptor: cut short */
    assert_false(tb_source_producer_destroy(engine, tb_monotonic_ms()));
    assert_null(engine->rk);
    free(engine);
    set(&teardown_returned);

    pthread_mutex_lock(&lock);
    wait_for(&purged);
    assert_true(purged);
    assert_int_equal(events, 0);
    pthread_mutex_unlock(&lock);

    close(silent); /* the destroy's requests fail */
    assert_int_equal(rd_kafka_wait_destroyed(WAIT_MS), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_destroy_in_the_background_calls_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
