/* Every librdkafka config tributary makes (tb_kafka_conf.h): the properties
 * given, client telemetry off unless they say otherwise, and a refused key
 * named. */
#include "tb_test.h"

#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"

static void assert_property(rd_kafka_conf_t *conf, const char *key, const char *expected)
{
    char value[64];
    size_t size = sizeof(value);
    assert_int_equal(rd_kafka_conf_get(conf, key, value, &size), RD_KAFKA_CONF_OK);
    assert_string_equal(value, expected);
}

static void test_telemetry_is_off_and_the_properties_are_set(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *props = json_pack("{s:s}", "client.id", "tb-test");
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, sizeof(errstr));
    assert_non_null(conf);
    assert_property(conf, "enable.metrics.push", "false");
    assert_property(conf, "client.id", "tb-test");
    rd_kafka_conf_destroy(conf);
    json_decref(props);
}

static void test_a_property_may_turn_telemetry_on(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *props = json_pack("{s:s}", "enable.metrics.push", "true");
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, sizeof(errstr));
    assert_non_null(conf);
    assert_property(conf, "enable.metrics.push", "true");
    rd_kafka_conf_destroy(conf);
    json_decref(props);
}

static void test_a_refused_property_is_named(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *props = json_pack("{s:s}", "linger.ms", "soon");
    assert_null(tb_kafka_conf_new(props, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "Kafka client property linger.ms: "));
    json_decref(props);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_telemetry_is_off_and_the_properties_are_set),
        cmocka_unit_test(test_a_property_may_turn_telemetry_on),
        cmocka_unit_test(test_a_refused_property_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
