/* tasks.max.enforce: what the herder does when a plugin splits a connector
 * into more task configs than tasks.max (Connect's Worker rule). tributary's
 * own plugins never do, so the check is tested here on its own. */
#include "tb_test.h"

#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/tb_plugin.h"

/* The parsed values of a file sink with these keys set. */
static json_t *values_of(const char *tasks_max, const char *enforce)
{
    json_t *raw = json_pack("{s:s, s:s, s:s, s:s}", "name", "c", "connector.class",
                            "FileStreamSink", "topics", "t", "tasks.max", tasks_max);
    if (enforce != NULL) {
        json_object_set_new(raw, "tasks.max.enforce", json_string(enforce));
    }
    json_t *errors = json_object();
    json_t *values =
        tb_connector_config_validate(tb_plugin_find("FileStreamSink"), raw, errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    json_decref(raw);
    return values;
}

/* tb_connector_config_check_task_count on the settings of values. */
static int task_count_check(const json_t *values, size_t generated, char *msg,
                            size_t msg_size)
{
    tb_connector_settings_t settings;
    tb_connector_settings_fill(tb_plugin_find("FileStreamSink"), values, &settings);
    return tb_connector_config_check_task_count("c", &settings, generated, msg, msg_size);
}

static void test_within_tasks_max_runs_silently(void **state)
{
    (void)state;
    char msg[1024];
    json_t *values = values_of("2", NULL);
    assert_int_equal(task_count_check(values, 2, msg, sizeof(msg)), 0);
    assert_string_equal(msg, "");
    json_decref(values);
}

static void test_too_many_fails_by_default_with_connects_message(void **state)
{
    (void)state;
    char msg[1024];
    json_t *values = values_of("2", NULL);
    assert_true(tb_config_bool(values, "tasks.max.enforce"));
    assert_int_equal(task_count_check(values, 3, msg, sizeof(msg)), -1);
    assert_string_equal(
        msg, "The connector c has generated 3 tasks, which is greater than 2, the "
             "maximum number of tasks it is configured to create. This behaviour should "
             "be considered a bug and is disallowed. If necessary, it can be permitted "
             "by reconfiguring the connector with 'tasks.max.enforce' set to false; "
             "however, this option will be removed in a future release of Kafka "
             "Connect.");
    json_decref(values);
}

static void test_too_many_run_with_a_warning_when_not_enforced(void **state)
{
    (void)state;
    char msg[1024];
    json_t *values = values_of("1", "FALSE");
    assert_int_equal(task_count_check(values, 4, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "The connector c has generated 4 tasks, which is "
                                "greater than 1"));
    assert_non_null(strstr(msg, "tasks.max.enforce is false"));
    json_decref(values);
}

static void test_enforce_is_listed_as_connect_lists_it(void **state)
{
    (void)state;
    json_t *keys = tb_connector_config_keys(tb_plugin_find("FileStreamSink"));
    size_t i;
    json_t *key;
    json_t *found = NULL;
    json_array_foreach (keys, i, key) {
        if (strcmp(json_string_value(json_object_get(key, "name")),
                   "tasks.max.enforce") == 0) {
            found = key;
        }
    }
    assert_non_null(found);
    assert_string_equal(json_string_value(json_object_get(found, "type")), "BOOLEAN");
    assert_string_equal(json_string_value(json_object_get(found, "default_value")),
                        "true");
    assert_string_equal(json_string_value(json_object_get(found, "group")), "Common");
    assert_int_equal(json_integer_value(json_object_get(found, "order")), 5);
    assert_string_equal(json_string_value(json_object_get(found, "display_name")),
                        "Enforce tasks max");
    json_decref(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_within_tasks_max_runs_silently),
        cmocka_unit_test(test_too_many_fails_by_default_with_connects_message),
        cmocka_unit_test(test_too_many_run_with_a_warning_when_not_enforced),
        cmocka_unit_test(test_enforce_is_listed_as_connect_lists_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
