/* Connect's records of its internal topics (store/kafka/connect_records.h): the
 * bytes a Connect 3.9 worker writes, and how this store reads them. */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "store/kafka/connect_records.h"

static void assert_text(char *text, const char *expected)
{
    assert_non_null(text);
    assert_string_equal(text, expected);
    free(text);
}

static json_t *parse(const char *text)
{
    int bad = 0;
    json_t *json = tb_connect_value_parse(text, strlen(text), &bad);
    assert_false(bad);
    return json;
}

static void test_keys_are_connects(void **state)
{
    (void)state;
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_CONNECTOR, 0, "a-b", 0),
                "connector-a-b");
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_TASK, 0, "a-b", 12), "task-a-b-12");
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_COMMIT, 0, "a", 0), "commit-a");
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_TARGET, 0, "a", 0),
                "target-state-a");
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_CONNECTOR, 1, "a", 0),
                "status-connector-a");
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_TASK, 1, "a-1", 3),
                "status-task-a-1-3");
}

static void expect_key(const char *key, int status, tb_connect_key_kind_t kind,
                       const char *name, int task)
{
    tb_connect_key_t parsed;

    assert_int_equal(tb_connect_key_parse(key, strlen(key), status, &parsed), 0);
    assert_int_equal(parsed.kind, kind);
    if (name == NULL) {
        assert_null(parsed.name);
    } else {
        assert_string_equal(parsed.name, name);
    }
    if (kind == TB_CONNECT_KEY_TASK) {
        assert_int_equal(parsed.task, task);
    }
    tb_connect_key_clear(&parsed);
}

static void test_key_parse_splits_at_the_last_dash(void **state)
{
    (void)state;
    expect_key("task-my-conn-12", 0, TB_CONNECT_KEY_TASK, "my-conn", 12);
    expect_key("target-state-x-1", 0, TB_CONNECT_KEY_TARGET, "x-1", 0);
    expect_key("connector-x", 0, TB_CONNECT_KEY_CONNECTOR, "x", 0);
    expect_key("commit-x", 0, TB_CONNECT_KEY_COMMIT, "x", 0);
    expect_key("tasks-fencing-x-1", 0, TB_CONNECT_KEY_FENCING, "x-1", 0);
    expect_key("status-task-s-0", 1, TB_CONNECT_KEY_TASK, "s", 0);
    expect_key("status-connector-s", 1, TB_CONNECT_KEY_CONNECTOR, "s", 0);
    /* keys this store does not use, and task keys without a task number */
    expect_key("session-key", 0, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("tasks-fencing-x", 1, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("task-x", 0, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("task-x-", 0, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("task-x-1a", 0, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("status-topic-t:connector-x", 1, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("connector-x", 1, TB_CONNECT_KEY_OTHER, NULL, 0);
    expect_key("connector-", 0, TB_CONNECT_KEY_OTHER, NULL, 0);
}

static void test_values_are_connects_bytes(void **state)
{
    (void)state;
    json_t *props = json_pack("{s:s, s:s}", "z", "1", "a", "\"q\"\n");
    assert_text(tb_connect_properties_value(props),
                "{\"properties\":{\"a\":\"\\\"q\\\"\\n\",\"z\":\"1\"}}");
    json_decref(props);
    assert_text(tb_connect_commit_value(3), "{\"tasks\":3}");
    assert_text(tb_connect_fencing_value(4), "{\"task-count\":4}");
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_FENCING, 0, "c", 0),
                "tasks-fencing-c");
    assert_text(tb_connect_target_value(TB_TARGET_STARTED),
                "{\"state\":\"STARTED\",\"state.v2\":\"STARTED\"}");
    /* workers before 3.5 read "state" only and do not know STOPPED */
    assert_text(tb_connect_target_value(TB_TARGET_STOPPED),
                "{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}");
    assert_text(tb_connect_status_value(TB_STATE_RUNNING, NULL, "h:8083", 4),
                "{\"state\":\"RUNNING\",\"trace\":null,\"worker_id\":\"h:8083\","
                "\"generation\":4}");
    assert_text(tb_connect_status_value(TB_STATE_FAILED, "x", "h:8083", 0),
                "{\"state\":\"FAILED\",\"trace\":\"x\",\"worker_id\":\"h:8083\","
                "\"generation\":0}");
    json_t *partition = json_pack("{s:i, s:s}", "b", 1, "a", "/f");
    assert_text(tb_connect_offset_key("src", partition),
                "[\"src\",{\"a\":\"/f\",\"b\":1}]");
    json_decref(partition);
}

static void test_target_prefers_state_v2(void **state)
{
    (void)state;
    tb_target_state_t target;
    json_t *v1 = parse("{\"state\":\"PAUSED\"}");
    json_t *v2 = parse("{\"state\":\"PAUSED\",\"state.v2\":\"STOPPED\"}");
    json_t *bad = parse("{\"state\":\"SLEEPING\"}");

    assert_int_equal(tb_connect_target_parse(v1, &target), 0);
    assert_int_equal(target, TB_TARGET_PAUSED);
    assert_int_equal(tb_connect_target_parse(v2, &target), 0);
    assert_int_equal(target, TB_TARGET_STOPPED);
    assert_int_equal(tb_connect_target_parse(bad, &target), -1);
    json_decref(v1);
    json_decref(v2);
    json_decref(bad);
}

static void test_configs_and_commits_parse(void **state)
{
    (void)state;
    json_t *good = parse("{\"properties\":{\"k\":\"v\"}}");
    json_t *number = parse("{\"properties\":{\"k\":1}}");
    json_t *commit = parse("{\"tasks\":2}");
    const json_t *props = tb_connect_properties_parse(good);

    assert_non_null(props);
    assert_string_equal(json_string_value(json_object_get(props, "k")), "v");
    assert_null(tb_connect_properties_parse(number));
    assert_int_equal(tb_connect_commit_parse(commit), 2);
    assert_int_equal(tb_connect_commit_parse(good), -1);
    json_t *fencing = parse("{\"task-count\":3}");
    json_t *negative = parse("{\"task-count\":-1}");
    assert_int_equal(tb_connect_fencing_parse(fencing), 3);
    assert_int_equal(tb_connect_fencing_parse(negative), -1);
    assert_int_equal(tb_connect_fencing_parse(commit), -1);
    json_decref(fencing);
    json_decref(negative);
    json_decref(good);
    json_decref(number);
    json_decref(commit);
}

static void test_status_parse(void **state)
{
    (void)state;
    json_t *connects = parse("{\"state\":\"RUNNING\",\"trace\":null,"
                             "\"worker_id\":\"127.0.0.1:8083\",\"generation\":5}");
    json_t *entry = tb_connect_status_parse(connects);
    json_t *no_worker = parse("{\"state\":\"RUNNING\",\"generation\":5}");

    assert_non_null(entry);
    json_t *expected = json_pack("{s:s, s:s, s:i}", "state", "RUNNING", "worker_id",
                                 "127.0.0.1:8083", "generation", 5);
    assert_true(json_equal(entry, expected));
    assert_null(tb_connect_status_parse(no_worker));
    json_decref(expected);
    json_decref(entry);
    json_decref(connects);
    json_decref(no_worker);
}

static void test_offset_key_parse(void **state)
{
    (void)state;
    const char *key = "[\"src\",{\"filename\":\"/f\"}]";
    char *connector;
    json_t *partition;

    assert_int_equal(
        tb_connect_offset_key_parse(key, strlen(key), &connector, &partition), 0);
    assert_string_equal(connector, "src");
    assert_string_equal(json_string_value(json_object_get(partition, "filename")), "/f");
    free(connector);
    json_decref(partition);
    static const char *const bad[] = {"[\"src\"]", "{\"a\":1}",    "[1,{}]",
                                      "[\"s\",3]", "[\"s\",{},1]", "not json"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            tb_connect_offset_key_parse(bad[i], strlen(bad[i]), &connector, &partition),
            -1);
        assert_null(connector);
        assert_null(partition);
    }
}

static void test_session_key_round_trip(void **state)
{
    (void)state;
    tb_connect_session_key_t key = {.len = 5, .created_ms = 1700000000123LL};
    memcpy(key.bytes, "\x01\x02\x03\xfe\xff", 5);
    strcpy(key.algorithm, "HmacSHA256");
    assert_text(tb_connect_session_key_value(&key),
                "{\"key\":\"AQID/v8=\",\"algorithm\":\"HmacSHA256\","
                "\"creation-timestamp\":1700000000123}");
    /* as a Connect worker writes it: 32 bytes of HmacSHA256 */
    json_t *value = parse("{\"key\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\","
                          "\"algorithm\":\"HmacSHA256\",\"creation-timestamp\":42}");
    tb_connect_session_key_t out;
    assert_int_equal(tb_connect_session_key_parse(value, &out), 0);
    assert_int_equal(out.len, 32);
    assert_int_equal(out.bytes[31], 31);
    assert_string_equal(out.algorithm, "HmacSHA256");
    assert_int_equal(out.created_ms, 42);
    json_decref(value);
    static const char *const bad[] = {
        "{\"key\":\"\",\"algorithm\":\"HmacSHA256\",\"creation-timestamp\":1}",
        "{\"key\":\"AQID/v8\",\"algorithm\":\"HmacSHA256\",\"creation-timestamp\":1}",
        "{\"key\":\"AQID\",\"creation-timestamp\":1}",
        "{\"key\":\"AQID\",\"algorithm\":\"HmacSHA256\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        value = parse(bad[i]);
        assert_int_equal(tb_connect_session_key_parse(value, &out), -1);
        json_decref(value);
    }
}

static void test_restart_requests_are_connects(void **state)
{
    (void)state;
    bool include_tasks = false, only_failed = true;
    expect_key("restart-connector-a-1", 0, TB_CONNECT_KEY_RESTART, "a-1", 0);
    assert_text(tb_connect_key_format(TB_CONNECT_KEY_RESTART, 0, "a", 0),
                "restart-connector-a");
    assert_text(tb_connect_restart_value(true, false),
                "{\"include-tasks\":true,\"only-failed\":false}");
    json_t *value = parse("{\"include-tasks\":true}");
    assert_int_equal(tb_connect_restart_parse(value, &include_tasks, &only_failed), 0);
    assert_true(include_tasks);
    assert_false(only_failed);
    json_decref(value);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_are_connects),
        cmocka_unit_test(test_key_parse_splits_at_the_last_dash),
        cmocka_unit_test(test_values_are_connects_bytes),
        cmocka_unit_test(test_target_prefers_state_v2),
        cmocka_unit_test(test_configs_and_commits_parse),
        cmocka_unit_test(test_status_parse),
        cmocka_unit_test(test_offset_key_parse),
        cmocka_unit_test(test_session_key_round_trip),
        cmocka_unit_test(test_restart_requests_are_connects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
