/*
 * FileStreamSink - appends each record's value and a newline to a file, as
 * Kafka Connect's FileStreamSinkConnector does. Each put() reaches the file
 * before it returns, as Connect's writes do: a reader of the file sees
 * records as they are consumed, not at the next offset flush. flush()
 * fsyncs, so offsets are recorded only for lines that are on disk.
 *
 * Every task of the connector writes the same file (Connect gives each the
 * same config), so lines must never mix. A put's lines are made in memory
 * and appended (O_APPEND) in one write() of whole lines, under an exclusive
 * flock(2) of the file that every writer of this plugin takes: no other
 * task writes between them, in this process or another. A writer that
 * stops mid-write (kill -9, a full disk) leaves at most a partial last
 * line, never acknowledged: its record is read again. A live writer that
 * fails cuts the file back to where its own write began before it lets go
 * of the lock; one that died let go with its partial line still there. So
 * a partial last line seen under the lock is always the remains of a
 * writer that died while holding it, never a line of a running task: the
 * next holder (a task that starts, or a put) cuts it before writing.
 *
 * Test seam (core/tb_seam.h): with TB_FILE_SINK_HOLD set to a
 * suffix, every put() is refused as retriable, taking nothing, while the
 * file named <file><suffix> exists, so that a test can keep a batch
 * pending in the runtime for as long as it likes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "connectors/tb_plugin.h"
#include "core/tb_log.h"
#include "core/tb_seam.h"

/* How long a put waits for another writer's lock (held for one write) in
 * steps, before it asks to be tried again a little later. */
#define LOCK_TRIES 1000
#define LOCK_STEP_NS 1000000L /* 1 ms: about a second in all */
#define LOCK_RETRY_MS 100

/* A task's keys, filled from file_sink_keys (tb_config_load). */
typedef struct {
    const char *file; /* NULL: standard output */
} file_sink_settings_t;

static const tb_config_def_t file_sink_keys[] = {
    {.name = "file",
     .role = TB_CONFIG_ROLE_PATH,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .field = TB_CONFIG_AT(file_sink_settings_t, file),
     .documentation = "Destination file; null writes to standard output."},
};

static const tb_config_table_t file_sink_table =
    TB_CONFIG_TABLE("FileStreamSink", file_sink_keys);

typedef struct {
    const tb_task_context_t *ctx;
    char *path;  /* NULL: standard output */
    FILE *out;   /* written through its descriptor only, when path is set */
    char *hold;  /* the test seam's file; NULL: none */
    char *lines; /* a put's lines (owned), lines_cap bytes */
    size_t lines_cap;
} file_sink_t;

static json_t *task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_array_append_new(list, json_deep_copy(config));
    }
    return list;
}

/* Cuts what follows the last newline of the file open as fd, locked: the
 * partial line of a writer that died mid-write. Returns how many bytes
 * were cut, with *size the file's size then, or -1 with errno set. */
static off_t cut_partial_line(int fd, off_t *size)
{
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
    *size = end;
    return st.st_size - end;
}

/* Takes the file's exclusive lock, waiting about a second at most: 0, 1
 * when another writer still holds it, or -1 with errno set. */
static int lock_file(int fd)
{
    const struct timespec step = {.tv_nsec = LOCK_STEP_NS};
    for (int i = 0; i < LOCK_TRIES; i++) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            return 0;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
        nanosleep(&step, NULL);
    }
    return 1;
}

/* With the lock held: cuts a dead writer's partial last line, told once.
 * 0 with *size the file's size, or -1 with errstr. */
static int repair_locked(file_sink_t *sink, int fd, off_t *size, char *errstr,
                         size_t errstr_size)
{
    off_t cut = cut_partial_line(fd, size);
    if (cut < 0) {
        snprintf(errstr, errstr_size, "reading the end of %s failed: %s", sink->path,
                 strerror(errno));
        return -1;
    }
    if (cut > 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", sink->ctx->connector, sink->ctx->task,
                    "removed a partial line of %lld bytes at the end of %s, left by a "
                    "write that was interrupted; its record is written again",
                    (long long)cut, sink->path);
    }
    return 0;
}

/* Takes the lock, repairs the end, appends the first len bytes of
 * sink->lines (0: none), lets go. 0, TB_RESULT_RETRY (the lock stayed
 * busy: the runtime asks again) or -1, with errstr. */
static int with_lock(file_sink_t *sink, size_t len, char *errstr, size_t errstr_size)
{
    int fd = fileno(sink->out);
    int locked = lock_file(fd);
    if (locked != 0) {
        snprintf(errstr, errstr_size, "locking %s failed: %s", sink->path,
                 locked > 0 ? "another writer holds it, trying again" : strerror(errno));
        return locked > 0 ? TB_RESULT_RETRY : -1;
    }
    off_t start = 0;
    int rc = repair_locked(sink, fd, &start, errstr, errstr_size);
    /* one write of whole lines; the rest of a short one goes on under the
     * lock, where no other writer can come between */
    size_t done = 0;
    while (rc == 0 && done < len) {
        ssize_t n = write(fd, sink->lines + done, len - done);
        if (n > 0) {
            done += (size_t)n;
        } else if (n == 0 || errno != EINTR) {
            snprintf(errstr, errstr_size, "writing to %s failed: %s", sink->path,
                     n == 0 ? "nothing was written" : strerror(errno));
            rc = -1;
        }
    }
    /* only this write's bytes, which nobody wrote after */
    if (rc != 0 && done > 0 && ftruncate(fd, start) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.task", sink->ctx->connector, sink->ctx->task,
                    "cutting the partial write at the end of %s failed: %s; the next "
                    "writer cuts it",
                    sink->path, strerror(errno));
    }
    flock(fd, LOCK_UN);
    return rc;
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
    file_sink_settings_t settings;
    json_t *values =
        tb_config_load(&file_sink_table, config, &settings, errstr, errstr_size);
    if (values == NULL) {
        return -1;
    }
    bool to_stdout = settings.file == NULL;
    file_sink_t *sink = calloc(1, sizeof(*sink));
    if (sink != NULL && !to_stdout) {
        sink->path = strdup(settings.file);
    }
    json_decref(values);
    if (sink == NULL || (!to_stdout && sink->path == NULL)) {
        free(sink);
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    sink->ctx = ctx;
    if (to_stdout) {
        sink->out = stdout;
        *out = sink;
        return 0;
    }
    sink->hold = test_hold_path(sink->path);
    sink->out = tb_limits_fopen(ctx->limits, sink->path, true, errstr, errstr_size);
    if (sink->out == NULL) {
        goto fail;
    }
    /* a busy lock at start is no failure: the first put repairs too */
    if (with_lock(sink, 0, errstr, errstr_size) == -1) {
        goto fail;
    }
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

/* The lines of records into sink->lines (each value, or "null", and a
 * newline). Returns their length, with *ok false on no memory. */
static size_t make_lines(file_sink_t *sink, const tb_sink_record_t *records, size_t count,
                         bool *ok)
{
    size_t len = 0;
    for (size_t i = 0; i < count; i++) {
        len += (records[i].value != NULL ? records[i].value_len : 4) + 1;
    }
    *ok = true;
    if (len > sink->lines_cap) {
        char *grown = realloc(sink->lines, len);
        if (grown == NULL) {
            *ok = false;
            return 0;
        }
        sink->lines = grown;
        sink->lines_cap = len;
    }
    char *at = sink->lines;
    for (size_t i = 0; i < count; i++) {
        const tb_sink_record_t *r = &records[i];
        size_t n = r->value != NULL ? r->value_len : 4;
        memcpy(at, r->value != NULL ? (const char *)r->value : "null", n);
        at[n] = '\n';
        at += n + 1;
    }
    return len;
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
    size_t len = make_lines(sink, records, count, &ok);
    if (!ok) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    if (sink->path != NULL) {
        int rc = len > 0 ? with_lock(sink, len, errstr, errstr_size) : 0;
        if (rc == TB_RESULT_RETRY) {
            sink->ctx->retry_after(sink->ctx->runtime, LOCK_RETRY_MS);
        }
        return rc;
    }
    if (fwrite(sink->lines, 1, len, sink->out) != len || fflush(sink->out) != 0) {
        snprintf(errstr, errstr_size, "writing to standard output failed: %s",
                 strerror(errno));
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
    free(sink->lines);
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
