/* Connect's open() and close() for the sink engine (tb_sink_open.h): what a
 * plugin says of the partitions it is given, and what it is told. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/sink/tb_sink_open.h"
#include "connectors/runtime/sink/tb_sink_start.h"

static int closed;

static int open_some(void *task, tb_sink_partition_t *parts, size_t count, char *errstr,
                     size_t errstr_size)
{
    (void)errstr;
    (void)errstr_size;
    assert_ptr_equal(task, &closed);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(parts[i].offset, TB_PLUGIN_NO_OFFSET);
        /* the store's offset of each comes with it */
        assert_int_equal(parts[i].stored,
                         parts[i].partition == 0 ? 7 : TB_PLUGIN_NO_OFFSET);
        if (parts[i].partition == 1) {
            parts[i].offset = 42; /* only this one has an offset of its own */
        }
    }
    return 0;
}

static int open_fails(void *task, tb_sink_partition_t *parts, size_t count, char *errstr,
                      size_t errstr_size)
{
    (void)task;
    (void)parts;
    (void)count;
    snprintf(errstr, errstr_size, "the database is down");
    return TB_RESULT_RETRY;
}

static void close_count(void *task, const tb_sink_partition_t *parts, size_t count)
{
    (void)task;
    assert_string_equal(parts[0].topic, "t");
    closed += (int)count;
}

static void test_open_gives_the_plugins_offsets(void **state)
{
    (void)state;
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_list_add(list, "t", 0);
    rd_kafka_topic_partition_list_add(list, "t", 1);
    char errstr[128] = "";

    const int64_t stored[] = {7, TB_OFFSET_NONE};
    tb_plugin_t plugin = {.open = open_some, .close = close_count};
    int64_t *offsets =
        tb_sink_open(&plugin, &closed, list, stored, errstr, sizeof(errstr));
    assert_non_null(offsets);
    assert_int_equal(offsets[0], TB_PLUGIN_NO_OFFSET);
    assert_int_equal(offsets[1], 42);
    free(offsets);

    tb_plugin_t without = {0}; /* no open(): no opinion on any partition */
    offsets = tb_sink_open(&without, NULL, list, NULL, errstr, sizeof(errstr));
    assert_int_equal(offsets[0], TB_PLUGIN_NO_OFFSET);
    assert_int_equal(offsets[1], TB_PLUGIN_NO_OFFSET);
    free(offsets);

    tb_plugin_t failing = {.open = open_fails};
    assert_null(tb_sink_open(&failing, NULL, list, NULL, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "the database is down");

    closed = 0;
    tb_sink_close(&plugin, &closed, list);
    assert_int_equal(closed, 2);
    tb_sink_close(&without, NULL, list); /* not told: no close() */
    rd_kafka_topic_partition_list_destroy(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_gives_the_plugins_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
