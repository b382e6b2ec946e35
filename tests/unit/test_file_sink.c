#include "tb_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

static int64_t asked_retry_ms;

static void retry_after(void *runtime, int64_t ms)
{
    (void)runtime;
    asked_retry_ms = ms;
}

/* A task of the sink on path. */
static void *start_on(const tb_task_context_t *ctx, const char *path)
{
    const tb_plugin_t *plugin = tb_plugin_find("FileStreamSink");
    json_t *config = json_pack("{s:s}", "file", path);
    void *task = NULL;
    char errstr[256] = "";
    assert_int_equal(plugin->task_start(ctx, config, &task, errstr, sizeof(errstr)), 0);
    json_decref(config);
    return task;
}

static int put_values(void *task, const char *a, const char *b)
{
    char errstr[256] = "";
    tb_sink_record_t records[] = {{.value = (void *)a, .value_len = strlen(a)},
                                  {.value = (void *)b, .value_len = strlen(b)}};
    return tb_plugin_find("FileStreamSink")
        ->put(task, records, 2, errstr, sizeof(errstr));
}

/* Two tasks on one file (tasks.max=2). A writer that holds the file's lock
 * is mid-write, its line partial: a task that starts, or puts, then never
 * cuts nor joins that line (the put waits, then asks to be tried again).
 * Once that writer died with its line still partial, the next put cuts the
 * remains and writes whole lines after the others'. */
static void test_two_tasks_never_mix_or_cut_each_others_lines(void **state)
{
    (void)state;
    char path[] = "/tmp/tb-file-sink-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const tb_plugin_t *plugin = tb_plugin_find("FileStreamSink");
    tb_task_context_t ctx = {.connector = "c", .task = 0, .retry_after = retry_after};
    tb_task_context_t ctx1 = {.connector = "c", .task = 1, .retry_after = retry_after};
    void *first = start_on(&ctx, path);
    assert_int_equal(put_values(first, "one", "two"), 0);

    /* a live writer, mid-write */
    int live = open(path, O_WRONLY | O_APPEND);
    assert_true(live >= 0);
    assert_int_equal(flock(live, LOCK_EX), 0);
    assert_int_equal(write(live, "thr", 3), 3);
    void *second = start_on(&ctx1, path);
    asked_retry_ms = 0;
    assert_int_equal(put_values(second, "four", "five"), TB_RESULT_RETRY);
    assert_true(asked_retry_ms > 0);
    char *text = contents(path);
    assert_string_equal(text, "one\ntwo\nthr");
    free(text);
    assert_int_equal(write(live, "ee\n", 3), 3);
    assert_int_equal(flock(live, LOCK_UN), 0);
    assert_int_equal(put_values(second, "four", "five"), 0);

    /* a writer that died mid-write: its lock is gone, its partial line not */
    assert_int_equal(write(live, "sev", 3), 3);
    close(live);
    assert_int_equal(put_values(first, "six", "seven"), 0);
    text = contents(path);
    assert_string_equal(text, "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    free(text);
    plugin->task_stop(first);
    plugin->task_stop(second);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_reaches_the_file_before_flush),
        cmocka_unit_test(test_two_tasks_never_mix_or_cut_each_others_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
