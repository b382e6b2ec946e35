#include "tb_test.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <string.h>

#include "connectors/runtime/task/tb_dlq.h"
#include "core/tb_time.h"

#define PRODUCE_API_KEY 0 /* Kafka's ApiKey of Produce requests */
#define FLUSH_MS 10000

/* A librdkafka mock cluster, the one fault a real broker cannot make on
 * demand: a Produce request to the dead letter queue that is refused. */
typedef struct {
    rd_kafka_t *owner; /* the handle the mock cluster lives in */
    rd_kafka_mock_cluster_t *cluster;
    tb_dlq_t *dlq;
} fixture_t;

static int setup(void **state)
{
    static fixture_t f;
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr)); /* no servers */
    f.owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    f.cluster = rd_kafka_mock_cluster_new(f.owner, 1);
    rd_kafka_mock_topic_create(f.cluster, "dlq", 1, 1);
    json_t *props = json_pack("{s:s}", "bootstrap.servers",
                              rd_kafka_mock_cluster_bootstraps(f.cluster));
    f.dlq = tb_dlq_create(props, "dlq", true, errstr, sizeof(errstr));
    json_decref(props);
    assert_non_null(f.dlq);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    tb_dlq_destroy(f->dlq, tb_monotonic_ms() + FLUSH_MS);
    rd_kafka_mock_cluster_destroy(f->cluster);
    rd_kafka_destroy(f->owner);
    return 0;
}

static void send_one(tb_dlq_t *dlq)
{
    char errstr[512];
    tb_sink_record_t record = {.topic = "orders",
                               .partition = 0,
                               .offset = 7,
                               .timestamp = -1,
                               .value = "bad",
                               .value_len = 3};
    tb_dlq_context_t context = {.connector = "c",
                                .stage = "VALUE_CONVERTER",
                                .class_name = "JsonConverter",
                                .reason = "not JSON"};
    assert_int_equal(tb_dlq_send(dlq, &record, &context, errstr, sizeof(errstr)), 0);
}

static void test_a_written_record_flushes(void **state)
{
    fixture_t *f = *state;
    char errstr[512];
    send_one(f->dlq);
    assert_int_equal(tb_dlq_flush(f->dlq, FLUSH_MS, errstr, sizeof(errstr)), 0);
}

/* The caller records offsets after a flush that succeeds: once a record
 * failed, no later flush of that queue may succeed, or the offsets would
 * pass a record that never reached the queue. */
static void test_a_failed_write_fails_every_later_flush(void **state)
{
    fixture_t *f = *state;
    char errstr[512];
    rd_kafka_mock_push_request_errors(f->cluster, PRODUCE_API_KEY, 1,
                                      RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    send_one(f->dlq);
    assert_int_equal(tb_dlq_flush(f->dlq, FLUSH_MS, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "dead letter queue dlq"));
    send_one(f->dlq);
    errstr[0] = '\0';
    assert_int_equal(tb_dlq_flush(f->dlq, FLUSH_MS, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "dead letter queue dlq"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_written_record_flushes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_write_fails_every_later_flush,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
