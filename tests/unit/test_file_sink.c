#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connectors/tb_plugin.h"

/* The whole of path, NUL-terminated (free it). */
static char *contents(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 4096);
    assert_non_null(f);
    size_t n = fread(text, 1, 4095, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* A reader of the file sees what put() took before any flush: records do not
 * wait for the next offset flush (offset.flush.interval.ms) to appear. */
static void test_put_reaches_the_file_before_flush(void **state)
{
    (void)state;
    char path[] = "/tmp/tb-file-sink-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const tb_plugin_t *plugin = tb_plugin_find("FileStreamSink");
    tb_task_context_t ctx = {.connector = "c", .task = 0};
    json_t *config = json_pack("{s:s}", "file", path);
    void *task = NULL;
    char errstr[256];
    assert_int_equal(plugin->task_start(&ctx, config, &task, errstr, sizeof(errstr)), 0);
    tb_sink_record_t records[] = {{.value = "a", .value_len = 1},
                                  {.value = "bc", .value_len = 2}};
    assert_int_equal(plugin->put(task, records, 2, errstr, sizeof(errstr)), 0);
    char *text = contents(path);
    assert_string_equal(text, "a\nbc\n");
    free(text);
    assert_int_equal(plugin->flush(task, errstr, sizeof(errstr)), 0);
    plugin->task_stop(task);
    json_decref(config);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_reaches_the_file_before_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
