/*
 * FileStreamSource - one record per line of a file, as Kafka Connect's
 * FileStreamSourceConnector does. The source partition is {"filename":F} and
 * the offset {"position":N}, the byte offset after the line, so a restarted
 * task goes on where the last acknowledged line ended. It follows a growing
 * file; a file that shrinks below that position was truncated or replaced,
 * and is read again from the start.
 *
 * A poll's records borrow their lines from the read buffer (bytes_borrowed
 * in tb_plugin.h): the next poll drops them from it before reading on, so
 * a line costs no allocation and no copy of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "connectors/tb_plugin.h"
#include "core/tb_log.h"

#define READ_CHUNK 65536
#define FOLLOW_MS 200 /* how often a file at its end is checked again */
#define MISSING_RETRY_MS 1000

static const tb_config_range_t positive = {.has_min = true, .min = 1};

/* A task's keys, filled from file_source_keys (tb_config_load). */
typedef struct {
    const char *file; /* NULL: standard input */
    const char *topic;
    int batch_size;
} file_source_settings_t;

static const tb_config_def_t file_source_keys[] = {
    {.name = "file",
     .role = TB_CONFIG_ROLE_PATH,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .field = TB_CONFIG_AT(file_source_settings_t, file),
     .documentation = "Source file; null reads standard input (without offsets)."},
    {.name = "topic",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .field = TB_CONFIG_AT(file_source_settings_t, topic),
     .documentation = "The topic to publish data to."},
    {.name = "batch.size",
     .type = TB_CONFIG_INT,
     .default_value = "2000",
     .importance = TB_IMPORTANCE_LOW,
     .range = &positive,
     .field = TB_CONFIG_AT(file_source_settings_t, batch_size),
     .documentation = "The maximum number of records the task returns per poll."},
};

static const tb_config_table_t file_source_table =
    TB_CONFIG_TABLE("FileStreamSource", file_source_keys);

typedef struct {
    char *connector;
    char *path; /* NULL: standard input */
    char *topic;
    size_t batch_size;
    FILE *in;
    long long position; /* byte offset of buf[0] in the file */
    char *buf;          /* read, from position on */
    size_t len;
    size_t cap;
    size_t returned; /* buf's first bytes: the lines of the last poll */
    bool missing_logged;
    json_t *partition;
    bool offset_every_record; /* else only the last record of a poll has one */
    const tb_limits_t *limits;
} file_source_t;

/* Like Connect's, the file source runs one task whatever tasks.max says. */
static json_t *task_configs(const json_t *config, int max_tasks)
{
    (void)max_tasks;
    return json_pack("[O]", config);
}

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    file_source_settings_t settings;
    json_t *values =
        tb_config_load(&file_source_table, config, &settings, errstr, errstr_size);
    file_source_t *source = NULL;
    if (values == NULL) {
        goto done;
    }
    source = calloc(1, sizeof(*source));
    source->connector = strdup(ctx->connector);
    source->topic = strdup(settings.topic);
    source->batch_size = (size_t)settings.batch_size;
    source->offset_every_record = ctx->offset_every_record;
    source->limits = ctx->limits;
    const char *path = settings.file;
    if (path != NULL) {
        source->path = strdup(path);
        source->partition = json_pack("{s:s}", "filename", path);
        json_t *offset = ctx->offset_for(ctx->runtime, source->partition);
        json_t *position = json_object_get(offset, "position");
        source->position = json_is_integer(position) ? json_integer_value(position) : 0;
        json_decref(offset);
    } else {
        source->in = stdin;
    }
    *out = source;

done:
    json_decref(values);
    return source != NULL ? 0 : -1;
}

/* Opens the file at the recorded position. Returns 1 when open, 0 when
 * the file does not exist yet (try again later), -1 with errstr when the
 * worker's limits refuse it or it cannot be opened for another reason. */
static int open_file(file_source_t *s, char *errstr, size_t errstr_size)
{
    s->in = tb_limits_fopen(s->limits, s->path, false, errstr, errstr_size);
    if (s->in == NULL) {
        if (errno != ENOENT) {
            return -1;
        }
        if (!s->missing_logged) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.task", s->connector, 0,
                        "%s; retrying every second", errstr);
            s->missing_logged = true;
        }
        return 0;
    }
    s->missing_logged = false;
    if (fseeko(s->in, s->position, SEEK_SET) != 0) {
        s->position = 0;
    }
    return 1;
}

/* A file shorter than what was read was truncated or replaced. */
static void check_truncation(file_source_t *s)
{
    struct stat st;
    if (s->path != NULL && fstat(fileno(s->in), &st) == 0 &&
        st.st_size < s->position + (long long)s->len) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", s->connector, 0,
                    "%s shrank below position %lld: it was truncated or replaced; "
                    "reading it again from the start",
                    s->path, s->position + (long long)s->len);
        s->position = 0;
        s->len = 0;
        rewind(s->in);
    }
}

/* Reads what the file has beyond buf. Returns false at its end. */
static bool read_more(file_source_t *s)
{
    if (s->cap - s->len < READ_CHUNK) {
        size_t cap = s->cap + READ_CHUNK;
        char *grown = realloc(s->buf, cap);
        if (grown == NULL) {
            return false;
        }
        s->buf = grown;
        s->cap = cap;
    }
    size_t n = fread(s->buf + s->len, 1, s->cap - s->len, s->in);
    s->len += n;
    if (n == 0) {
        clearerr(s->in); /* the file may grow: EOF is not final */
    }
    return n > 0;
}

/* The length of the first line in buf and of its terminator (\n, \r\n or
 * \r); false when buf holds no complete line. A \r at the very end waits
 * for the next byte unless the file is at its end. */
static bool next_line(const file_source_t *s, size_t start, bool at_end, size_t *line,
                      size_t *terminator)
{
    /* memchr's word-at-a-time scans, not a loop over every byte: the first
     * \n, then a \r only before it */
    if (start >= s->len) {
        return false;
    }
    const char *from = s->buf + start;
    size_t left = s->len - start;
    const char *nl = memchr(from, '\n', left);
    const char *cr = memchr(from, '\r', nl != NULL ? (size_t)(nl - from) : left);
    if (cr == NULL && nl == NULL) {
        return false;
    }
    if (cr == NULL) {
        *line = (size_t)(nl - from);
        *terminator = 1;
        return true;
    }
    size_t i = (size_t)(cr - s->buf);
    if (i + 1 == s->len && !at_end) {
        return false;
    }
    *line = i - start;
    *terminator = i + 1 < s->len && s->buf[i + 1] == '\n' ? 2 : 1;
    return true;
}

/* Drops the lines of the last poll from buf: the runtime is done with
 * them once it polls again. */
static void drop_returned(file_source_t *s)
{
    if (s->returned == 0) {
        return;
    }
    memmove(s->buf, s->buf + s->returned, s->len - s->returned);
    s->len -= s->returned;
    s->position += (long long)s->returned;
    s->returned = 0;
}

/* Marks r as read up to used bytes past buf[0] (a file only: standard
 * input has no offsets). */
static void set_offset(const file_source_t *s, tb_source_record_t *r, size_t used)
{
    if (s->partition != NULL) {
        r->source_partition = json_incref(s->partition);
        r->source_offset = json_object();
        json_object_set_new(r->source_offset, "position",
                            json_integer((json_int_t)(s->position + (long long)used)));
    }
}

static int poll(void *opaque, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size)
{
    file_source_t *s = opaque;
    size_t used = 0, line, terminator;
    *count = 0;
    drop_returned(s);
    if (s->in == NULL) {
        int opened = open_file(s, errstr, errstr_size);
        if (opened <= 0) {
            *wake_ms = MISSING_RETRY_MS;
            return opened;
        }
    }
    check_truncation(s);
    /* read only while less than a chunk waits: the buffer stays small, and
     * what is moved down after each poll too */
    bool at_end = s->len < READ_CHUNK && !read_more(s);
    if (max > s->batch_size) {
        max = s->batch_size;
    }
    while (*count < max && next_line(s, used, at_end, &line, &terminator)) {
        tb_source_record_t *r = &out[(*count)++];
        memset(r, 0, sizeof(*r));
        r->topic = s->topic;
        r->partition = -1;
        r->value = s->buf + used;
        r->value_len = line;
        r->value_kind = TB_DATA_STRING;
        r->bytes_borrowed = true;
        used += line + terminator;
        if (s->offset_every_record) {
            set_offset(s, r, used);
        }
    }
    if (*count > 0 && !s->offset_every_record) {
        set_offset(s, &out[*count - 1], used);
    }
    s->returned = used;
    if (*count == 0) {
        *wake_ms = FOLLOW_MS;
    }
    return 0;
}

static void task_stop(void *opaque)
{
    file_source_t *s = opaque;
    if (s->in != NULL && s->in != stdin) {
        fclose(s->in);
    }
    json_decref(s->partition);
    free(s->buf);
    free(s->path);
    free(s->topic);
    free(s->connector);
    free(s);
}

static const char *const file_source_aliases[] = {"FileStreamSource",
                                                  "FileStreamSourceConnector", NULL};

/* The topic every record goes to (tb_plugin_t.config_topic). */
static const char *config_topic(const json_t *values)
{
    file_source_settings_t settings = {0};
    return tb_config_fill(&file_source_table, values, &settings) == 0 ? settings.topic
                                                                      : NULL;
}

const tb_plugin_t tb_file_source_plugin = {
    .class_name = "org.apache.kafka.connect.file.FileStreamSourceConnector",
    .aliases = file_source_aliases,
    .kind = TB_PLUGIN_SOURCE,
    .version = "3.9.0",
    .config = &file_source_table,
    .task_configs = task_configs,
    .config_topic = config_topic,
    .task_start = task_start,
    .poll = poll,
    .task_stop = task_stop,
};
