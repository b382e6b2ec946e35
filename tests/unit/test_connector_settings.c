/* A connector's framework keys, filled once into tb_connector_settings_t
 * (tb_connector_config.h): what the engines read instead of looking keys
 * up by name. */
#include "tb_test.h"

#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "core/tb_config.h"

/* The settings of raw for plugin, with no validation error; *values keeps
 * what they borrow. */
static tb_connector_settings_t settings_of(const char *plugin_name, json_t *raw,
                                           json_t **values)
{
    const tb_plugin_t *plugin = tb_plugin_find(plugin_name);
    json_t *errors = json_object();
    tb_connector_settings_t settings;
    assert_non_null(plugin);
    *values = tb_connector_config_validate(plugin, raw, errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    tb_connector_settings_fill(plugin, *values, &settings);
    json_decref(errors);
    json_decref(raw);
    return settings;
}

static void test_sink_settings_are_typed(void **state)
{
    (void)state;
    json_t *values;
    tb_connector_settings_t s = settings_of(
        "FileStreamSink",
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "name", "c",
                  "connector.class", "FileStreamSink", "topics", "a, b", "tasks.max", "3",
                  "errors.tolerance", "ALL", "errors.log.enable", "true",
                  "errors.deadletterqueue.topic.name", "dlq", "errors.retry.timeout",
                  "-1"),
        &values);
    assert_int_equal(s.tasks_max, 3);
    assert_true(s.tasks_max_enforce);
    assert_int_equal(s.errors_tolerance, TB_ERRORS_TOLERANCE_ALL);
    assert_true(s.errors_log_enable);
    assert_false(s.errors_log_include_messages);
    assert_int_equal(s.errors_retry_timeout, -1);
    assert_int_equal(s.errors_retry_delay_max_ms, 60000);
    assert_string_equal(s.errors_deadletterqueue_topic_name, "dlq");
    assert_int_equal(s.errors_deadletterqueue_topic_replication_factor, 3);
    assert_int_equal(json_array_size(s.topics), 2);
    assert_string_equal(json_string_value(json_array_get(s.topics, 1)), "b");
    assert_string_equal(s.topics_regex, "");
    assert_null(s.header_converter);
    assert_null(s.write_mode); /* a source's key */
    assert_null(s.exactly_once_support);
    assert_false(tb_connector_config_transactional(&s, true));
    json_decref(values);
}

static void test_source_settings_are_typed(void **state)
{
    (void)state;
    json_t *values;
    tb_connector_settings_t s =
        settings_of("FileStreamSource",
                    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "name", "c",
                              "connector.class", "FileStreamSource", "topic", "t",
                              "exactly.once.support", "Required", "offsets.storage.topic",
                              "own-offsets", "exactly.once.transaction.max.records", "7"),
                    &values);
    assert_int_equal(s.errors_tolerance, TB_ERRORS_TOLERANCE_NONE);
    assert_string_equal(s.write_mode, "append");
    assert_string_equal(s.exactly_once_support, "required");
    assert_string_equal(s.transaction_boundary, "poll");
    assert_string_equal(s.offsets_storage_topic, "own-offsets");
    assert_int_equal(s.exactly_once_transaction_max_records, 7);
    assert_int_equal(s.exactly_once_transaction_max_bytes, 1048576);
    assert_false(s.exactly_once_allow_missing_marker);
    assert_null(s.topics); /* a sink's key */
    assert_true(tb_connector_config_transactional(&s, false));
    json_decref(values);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sink_settings_are_typed),
        cmocka_unit_test(test_source_settings_are_typed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
