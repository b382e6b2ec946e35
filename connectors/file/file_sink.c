/*
 * FileStreamSink - appends each record's value and a newline to a file, as
 * Kafka Connect's FileStreamSinkConnector does. Each put() reaches the file
 * before it returns (one write call for the batch), as Connect's writes do:
 * a reader of the file sees records as they are consumed, not at the next
 * offset flush. flush() fsyncs, so offsets are recorded only for lines that
 * are on disk. A crash in the middle of a
 * write can leave a partial last line, whose record was never recorded as
 * written: a task that starts removes it, and writes the record again.
 *
 * Test seam (builds with TB_TEST_SEAMS): with TB_FILE_SINK_HOLD set to a
 * suffix, every put() is refused as retriable, taking nothing, while the
 * file named <file><suffix> exists, so that a test can keep a batch
 * pending in the runtime for as long as it likes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "connectors/tb_plugin.h"
#include "core/tb_log.h"
#include "core/tb_seam.h"

#define WRITE_BUFFER_BYTES (256 * 1024)

static const tb_config_def_t file_sink_keys[] = {
    {.name = "file",
     .role = TB_CONFIG_ROLE_PATH,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "File",
     .order = 1,
     .documentation = "Destination file; null writes to standard output."},
};

static const tb_config_table_t file_sink_table =
    TB_CONFIG_TABLE("FileStreamSink", file_sink_keys);

typedef struct {
    char *path; /* NULL: standard output */
    FILE *out;
    char *hold; /* the test seam's file; NULL: none */
} file_sink_t;

static json_t *task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_array_append_new(list, json_deep_copy(config));
    }
    return list;
}

/* Cuts what follows the last newline of the file open as out: the partial
 * line an interrupted write left behind. Returns how many bytes were cut,
 * or -1 with errno set. */
static off_t cut_partial_line(FILE *out)
{
    int fd = fileno(out);
    struct stat st;
    char chunk[4096];
    if (fstat(fd, &st) != 0) {
        return -1;
    }
    off_t end = st.st_size;
    while (end > 0) {
        size_t want = end < (off_t)sizeof(chunk) ? (size_t)end : sizeof(chunk);
        ssize_t got = pread(fd, chunk, want, end - (off_t)want);
        if (got != (ssize_t)want) {
            return -1;
        }
        char *newline = memrchr(chunk, '\n', want);
        if (newline != NULL) {
            end -= (off_t)want - (newline - chunk) - 1;
            break;
        }
        end -= (off_t)want;
    }
    if (end < st.st_size && ftruncate(fd, end) != 0) {
        return -1;
    }
    return st.st_size - end;
}

/* The test seam's file for the sink writing to path, or NULL. */
static char *test_hold_path(const char *path)
{
    char *hold = NULL;
    const char *suffix = tb_seam(TB_SEAM_FILE_SINK_HOLD);
    if (suffix != NULL && asprintf(&hold, "%s%s", path, suffix) < 0) {
        hold = NULL;
    }
    return hold;
}

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    const char *path = json_string_value(json_object_get(config, "file"));
    file_sink_t *sink = calloc(1, sizeof(*sink));
    if (path == NULL) {
        sink->out = stdout;
        *out = sink;
        return 0;
    }
    sink->path = strdup(path);
    sink->hold = test_hold_path(path);
    sink->out = tb_limits_fopen(ctx->limits, path, true, errstr, errstr_size);
    if (sink->out == NULL) {
        goto fail;
    }
    off_t cut = cut_partial_line(sink->out);
    if (cut < 0) {
        snprintf(errstr, errstr_size, "reading the end of %s failed: %s", path,
                 strerror(errno));
        goto fail;
    }
    if (cut > 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", ctx->connector, ctx->task,
                    "removed a partial line of %lld bytes at the end of %s, left by an "
                    "interrupted write; its record is written again",
                    (long long)cut, path);
    }
    /* a batch of records in one write call */
    setvbuf(sink->out, NULL, _IOFBF, WRITE_BUFFER_BYTES);
    *out = sink;
    return 0;

fail:
    if (sink->out != NULL) {
        fclose(sink->out);
    }
    free(sink->hold);
    free(sink->path);
    free(sink);
    return -1;
}

static int put(void *opaque, const tb_sink_record_t *records, size_t count, char *errstr,
               size_t errstr_size)
{
    file_sink_t *sink = opaque;
    bool ok = true;
    if (sink->hold != NULL && access(sink->hold, F_OK) == 0) {
        snprintf(errstr, errstr_size,
                 "test seam: a put of %zu records held while %s exists", count,
                 sink->hold);
        return TB_RESULT_RETRY;
    }
    /* one lock for the batch, not two per record */
    flockfile(sink->out);
    for (size_t i = 0; i < count && ok; i++) {
        const tb_sink_record_t *r = &records[i];
        ok = (r->value != NULL
                  ? fwrite_unlocked(r->value, 1, r->value_len, sink->out) == r->value_len
                  : fputs_unlocked("null", sink->out) >= 0) &&
             putc_unlocked('\n', sink->out) != EOF;
    }
    ok = ok && fflush_unlocked(sink->out) == 0;
    funlockfile(sink->out);
    if (!ok) {
        snprintf(errstr, errstr_size, "writing to %s failed: %s",
                 sink->path ? sink->path : "standard output", strerror(errno));
        return -1;
    }
    return 0;
}

static int flush(void *opaque, char *errstr, size_t errstr_size)
{
    file_sink_t *sink = opaque;
    if (fflush(sink->out) != 0 || (sink->path != NULL && fsync(fileno(sink->out)) != 0)) {
        snprintf(errstr, errstr_size, "flushing %s failed: %s",
                 sink->path ? sink->path : "standard output", strerror(errno));
        return TB_RESULT_RETRY;
    }
    return 0;
}

static void task_stop(void *opaque)
{
    file_sink_t *sink = opaque;
    if (sink->path != NULL) {
        fclose(sink->out);
    } else {
        fflush(sink->out);
    }
    free(sink->hold);
    free(sink->path);
    free(sink);
}

static const char *const file_sink_aliases[] = {"FileStreamSink",
                                                "FileStreamSinkConnector", NULL};

const tb_plugin_t tb_file_sink_plugin = {
    .class_name = "org.apache.kafka.connect.file.FileStreamSinkConnector",
    .aliases = file_sink_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "3.9.0",
    .config = &file_sink_table,
    .task_configs = task_configs,
    .task_start = task_start,
    .put = put,
    .flush = flush,
    .task_stop = task_stop,
};
