/* The FileStreamSource plugin's lines: \n, \r\n and \r end a line, as in
 * Connect's, and a \r at the end of what was read waits for the next byte
 * until the file is at its end. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connectors/tb_plugin.h"

#define POLL_MAX 16

static json_t *no_stored_offset(void *runtime, const json_t *partition)
{
    (void)runtime;
    (void)partition;
    return NULL;
}

/* The values of one poll, as NUL-terminated strings in lines. */
static size_t poll_lines(const tb_plugin_t *plugin, void *task, char lines[][32])
{
    tb_source_record_t records[POLL_MAX];
    size_t count = 0;
    int64_t wake_ms = 0;
    char errstr[256] = "";
    assert_int_equal(
        plugin->poll(task, records, POLL_MAX, &count, &wake_ms, errstr, sizeof(errstr)),
        0);
    for (size_t i = 0; i < count; i++) {
        assert_true(records[i].value_len < 32);
        memcpy(lines[i], records[i].value, records[i].value_len);
        lines[i][records[i].value_len] = '\0';
        if (!records[i].bytes_borrowed) {
            free(records[i].value);
        }
        json_decref(records[i].source_partition);
        json_decref(records[i].source_offset);
    }
    return count;
}

static void test_every_line_terminator_ends_a_line(void **state)
{
    (void)state;
    char path[] = "/tmp/tb-file-source-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char content[] = "one\ntwo\r\nthree\rfour\n\nfive\r";
    assert_int_equal(write(fd, content, sizeof(content) - 1),
                     (ssize_t)(sizeof(content) - 1));
    close(fd);
    tb_task_context_t ctx = {.connector = "file", .offset_for = no_stored_offset};
    json_t *config = json_pack("{s:s, s:s}", "topic", "t", "file", path);
    const tb_plugin_t *plugin = tb_plugin_find("FileStreamSource");
    void *task = NULL;
    char errstr[256] = "";
    assert_non_null(plugin);
    if (plugin->task_start(&ctx, config, &task, errstr, sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    char lines[POLL_MAX][32];
    const char *expected[] = {"one", "two", "three", "four", ""};
    size_t count = poll_lines(plugin, task, lines);
    assert_int_equal(count, 5); /* "five\r" waits: a \n may follow */
    for (size_t i = 0; i < count; i++) {
        assert_string_equal(lines[i], expected[i]);
    }
    assert_int_equal(poll_lines(plugin, task, lines), 1); /* at the end now */
    assert_string_equal(lines[0], "five");
    assert_int_equal(poll_lines(plugin, task, lines), 0);
    plugin->task_stop(task);
    json_decref(config);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_line_terminator_ends_a_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
