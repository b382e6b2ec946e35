/* The datagen source plugin: its values, and where it puts source offsets
 * (every record, or the last of each poll, as the task context asks). */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/tb_plugin.h"

#define POLL_MAX 16

static json_t *no_stored_offset(void *runtime, const json_t *partition)
{
    (void)runtime;
    (void)partition;
    return NULL;
}

/* A datagen task of the given shape: 100 records, as fast as polled. */
static void *start(const char *shape, bool offset_every_record)
{
    tb_task_context_t ctx = {.connector = "gen",
                             .task = 0,
                             .offset_every_record = offset_every_record,
                             .offset_for = no_stored_offset};
    json_t *config = json_pack("{s:s, s:s, s:s, s:s}", "topic", "t", "shape", shape,
                               "records.per.second", "0", "count", "100");
    const tb_plugin_t *plugin = tb_plugin_find("datagen");
    void *task = NULL;
    char errstr[256] = "";
    assert_non_null(plugin);
    if (plugin->task_start(&ctx, config, &task, errstr, sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    json_decref(config);
    return task;
}

static size_t poll_records(void *task, tb_source_record_t *out)
{
    const tb_plugin_t *plugin = tb_plugin_find("datagen");
    size_t count = 0;
    int64_t wake_ms = 0;
    char errstr[256] = "";
    assert_int_equal(
        plugin->poll(task, out, POLL_MAX, &count, &wake_ms, errstr, sizeof(errstr)), 0);
    return count;
}

static void release(tb_source_record_t *records, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!records[i].bytes_borrowed) {
            free(records[i].key);
            free(records[i].value);
        }
        json_decref(records[i].source_partition);
        json_decref(records[i].source_offset);
    }
}

static void stop(void *task)
{
    tb_plugin_find("datagen")->task_stop(task);
}

/* Each shape's fields, in order, as compact JSON; keys are numbers below 1000. */
static void test_values_by_shape(void **state)
{
    (void)state;
    const char *shapes[][2] = {
        {"orders", "seq task order_id customer item quantity price_cents"},
        {"users", "seq task user_id region score"},
        {"pageviews", "seq task user_id page duration_ms"},
    };
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        void *task = start(shapes[s][0], false);
        tb_source_record_t records[POLL_MAX];
        size_t count = poll_records(task, records);
        assert_int_equal(count, POLL_MAX);
        for (size_t i = 0; i < count; i++) {
            json_error_t error;
            json_t *value = json_loadb(records[i].value, records[i].value_len, 0, &error);
            assert_non_null(value);
            char names[128] = "";
            const char *key;
            json_t *field;
            json_object_foreach (value, key, field) {
                strcat(names, names[0] != '\0' ? " " : "");
                strcat(names, key);
            }
            assert_string_equal(names, shapes[s][1]);
            assert_int_equal(json_integer_value(json_object_get(value, "seq")), i);
            char *compact = json_dumps(value, JSON_COMPACT);
            assert_int_equal(strlen(compact), records[i].value_len);
            assert_memory_equal(compact, records[i].value, records[i].value_len);
            free(compact);
            json_decref(value);
            char *end;
            char key_text[8] = "";
            memcpy(key_text, records[i].key, records[i].key_len);
            assert_true(strtol(key_text, &end, 10) < 1000 && *end == '\0');
        }
        release(records, count);
        stop(task);
    }
}

/* Without message ids or exactly-once, only the last record of a poll
 * carries the task's progress; with them, every record carries its own. */
static void test_offsets_last_or_every_record(void **state)
{
    (void)state;
    for (int every = 0; every <= 1; every++) {
        void *task = start("orders", every == 1);
        tb_source_record_t records[POLL_MAX];
        size_t count = poll_records(task, records);
        assert_int_equal(count, POLL_MAX);
        for (size_t i = 0; i < count; i++) {
            bool expected = every == 1 || i == count - 1;
            assert_int_equal(records[i].source_offset != NULL, expected);
            assert_int_equal(records[i].source_partition != NULL, expected);
            if (expected) {
                json_t *sequence = json_object_get(records[i].source_offset, "sequence");
                assert_int_equal(json_integer_value(sequence), i + 1);
                assert_int_equal(json_integer_value(json_object_get(
                                     records[i].source_partition, "task")),
                                 0);
            }
        }
        release(records, count);
        stop(task);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_by_shape),
        cmocka_unit_test(test_offsets_last_or_every_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
