#include "core/tb_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Loggers the code writes to. They exist before anyone sets a level, so
 * /admin/loggers/{name} finds them, as log4j finds loggers it has created. */
/* Every logger the code logs under. */
static const char *const known_loggers[] = {
    "tributary.api",      "tributary.cluster",
    "tributary.config",   "tributary.connectors.dir",
    "tributary.herder",   "tributary.http",
    "tributary.postgres", "tributary.rdkafka",
    "tributary.rest",     "tributary.store",
    "tributary.task",     "tributary.worker",
};

#define KNOWN_COUNT (sizeof(known_loggers) / sizeof(known_loggers[0]))
#define MAX_EXPLICIT 256

typedef struct {
    char *name;
    tb_log_level_t level;
    int64_t last_modified; /* epoch ms of the last REST change, -1 if none */
} explicit_level_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static explicit_level_t levels[MAX_EXPLICIT] = {
    {.name = "root", .level = TB_LOG_INFO, .last_modified = -1},
};
static size_t level_count = 1;
/* The most verbose level any logger has: a fast "no" for TB_LOG. */
static atomic_int most_verbose = TB_LOG_INFO;
/* atomic: a reload (log.format) sets it while other threads log */
static _Atomic(tb_log_format_t) format = TB_LOG_FORMAT_TEXT;

static const char *const level_names[] = {
    [TB_LOG_OFF] = "OFF",     [TB_LOG_FATAL] = "FATAL", [TB_LOG_ERROR] = "ERROR",
    [TB_LOG_WARN] = "WARN",   [TB_LOG_INFO] = "INFO",   [TB_LOG_DEBUG] = "DEBUG",
    [TB_LOG_TRACE] = "TRACE",
};

const char *tb_log_level_name(tb_log_level_t level)
{
    return level_names[level];
}

int tb_log_level_parse(const char *name, tb_log_level_t *out)
{
    if (name == NULL) {
        return -1;
    }
    if (strcasecmp(name, "ALL") == 0) {
        *out = TB_LOG_TRACE;
        return 0;
    }
    for (int i = TB_LOG_OFF; i <= TB_LOG_TRACE; i++) {
        if (strcasecmp(level_names[i], name) == 0) {
            *out = (tb_log_level_t)i;
            return 0;
        }
    }
    return -1;
}

void tb_log_set_format(tb_log_format_t new_format)
{
    format = new_format;
}

/* True when logger is namespace itself or lies below it. */
static bool is_below(const char *logger, const char *namespace)
{
    if (strcmp(namespace, "root") == 0) {
        return true;
    }
    size_t n = strlen(namespace);
    return strncmp(logger, namespace, n) == 0 && (logger[n] == '\0' || logger[n] == '.');
}

/* The explicit entry that decides logger's level: itself or its nearest
 * set ancestor, else root. Call with the lock held. */
static const explicit_level_t *deciding_entry(const char *logger)
{
    const explicit_level_t *best = &levels[0];
    size_t best_len = 0;
    for (size_t i = 1; i < level_count; i++) {
        size_t len = strlen(levels[i].name);
        if (len > best_len && is_below(logger, levels[i].name)) {
            best = &levels[i];
            best_len = len;
        }
    }
    return best;
}

static void recompute_most_verbose(void)
{
    int max = TB_LOG_OFF;
    for (size_t i = 0; i < level_count; i++) {
        if ((int)levels[i].level > max) {
            max = (int)levels[i].level;
        }
    }
    atomic_store(&most_verbose, max);
}

bool tb_log_enabled(tb_log_level_t level, const char *logger)
{
    if ((int)level > atomic_load_explicit(&most_verbose, memory_order_relaxed)) {
        return false;
    }
    pthread_mutex_lock(&lock);
    bool enabled = level <= deciding_entry(logger)->level;
    pthread_mutex_unlock(&lock);
    return enabled;
}

static void format_time(char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void tb_log_write(tb_log_level_t level, const char *logger, const char *connector,
                  int task, const char *fmt, ...)
{
    char message[4096];
    char when[40];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    format_time(when, sizeof(when));

    if (format == TB_LOG_FORMAT_JSON) {
        json_t *line =
            json_pack("{s:s, s:s, s:s, s:s}", "time", when, "level", level_names[level],
                      "logger", logger, "message", message);
        if (line == NULL) {
            return;
        }
        if (connector != NULL) {
            json_object_set_new(line, "connector", json_string(connector));
            if (task >= 0) {
                json_object_set_new(line, "task", json_integer(task));
            }
        }
        char *text = json_dumps(line, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (text != NULL) {
            fprintf(stderr, "%s\n", text);
            free(text);
        }
        json_decref(line);
        return;
    }

    char context[300] = "";
    if (connector != NULL && task >= 0) {
        snprintf(context, sizeof(context), " [connector:%s:%d]", connector, task);
    } else if (connector != NULL) {
        snprintf(context, sizeof(context), " [connector:%s]", connector);
    }
    fprintf(stderr, "%s %-5s %s%s %s\n", when, level_names[level], logger, context,
            message);
}

static explicit_level_t *find_or_add(const char *name)
{
    for (size_t i = 0; i < level_count; i++) {
        if (strcmp(levels[i].name, name) == 0) {
            return &levels[i];
        }
    }
    if (level_count == MAX_EXPLICIT) {
        return NULL;
    }
    char *copy = strdup(name);
    if (copy == NULL) {
        return NULL;
    }
    levels[level_count] = (explicit_level_t){copy, TB_LOG_INFO, -1};
    return &levels[level_count++];
}

static void set_one(const char *name, tb_log_level_t level, int64_t now_ms,
                    json_t *affected)
{
    explicit_level_t *entry = find_or_add(name);
    if (entry == NULL) {
        return;
    }
    entry->level = level;
    entry->last_modified = now_ms;
    json_array_append_new(affected, json_string(name));
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a),
                  json_string_value(*(json_t *const *)b));
}

static json_t *sorted_unique(json_t *names)
{
    size_t n = json_array_size(names);
    json_t **items = calloc(n ? n : 1, sizeof(*items));
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        items[i] = json_array_get(names, i);
    }
    qsort(items, n, sizeof(*items), compare_names);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || compare_names(&items[i - 1], &items[i]) != 0) {
            json_array_append(out, items[i]);
        }
    }
    free(items);
    json_decref(names);
    return out;
}

json_t *tb_log_level_set(const char *logger, tb_log_level_t level, int64_t now_ms)
{
    json_t *affected = json_array();
    pthread_mutex_lock(&lock);
    set_one(logger, level, now_ms, affected);
    for (size_t i = 0; i < KNOWN_COUNT; i++) {
        if (is_below(known_loggers[i], logger)) {
            set_one(known_loggers[i], level, now_ms, affected);
        }
    }
    for (size_t i = 0; i < level_count; i++) {
        if (is_below(levels[i].name, logger)) {
            set_one(levels[i].name, level, now_ms, affected);
        }
    }
    recompute_most_verbose();
    pthread_mutex_unlock(&lock);
    return sorted_unique(affected);
}

static json_t *level_json(const explicit_level_t *entry, tb_log_level_t level)
{
    return json_pack("{s:s, s:o}", "level", level_names[level], "last_modified",
                     entry->last_modified < 0 ? json_null()
                                              : json_integer(entry->last_modified));
}

/* {"level","last_modified"} of a logger: its effective level, with its own
 * stamp if it was set itself. Call with the lock held. */
static json_t *shown_level(const char *logger)
{
    const explicit_level_t *entry =
        strcmp(logger, "root") == 0 ? &levels[0] : deciding_entry(logger);
    explicit_level_t shown = *entry;
    if (strcmp(entry->name, logger) != 0) {
        shown.last_modified = -1; /* inherited: never changed itself */
    }
    return level_json(&shown, entry->level);
}

json_t *tb_log_levels_get(void)
{
    json_t *names = json_array();
    json_t *out = json_object();
    size_t i;
    json_t *name;
    pthread_mutex_lock(&lock);
    for (i = 0; i < level_count; i++) {
        json_array_append_new(names, json_string(levels[i].name));
    }
    for (i = 0; i < KNOWN_COUNT; i++) {
        json_array_append_new(names, json_string(known_loggers[i]));
    }
    names = sorted_unique(names);
    json_array_foreach (names, i, name) { /* objects keep insertion order */
        json_object_set_new(out, json_string_value(name),
                            shown_level(json_string_value(name)));
    }
    pthread_mutex_unlock(&lock);
    json_decref(names);
    return out;
}

json_t *tb_log_level_get(const char *logger)
{
    bool known = strcmp(logger, "root") == 0;
    for (size_t i = 0; !known && i < KNOWN_COUNT; i++) {
        known = is_below(known_loggers[i], logger);
    }
    json_t *out = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; !known && i < level_count; i++) {
        known = is_below(levels[i].name, logger);
    }
    if (known) {
        out = shown_level(logger);
    }
    pthread_mutex_unlock(&lock);
    return out;
}

void tb_log_shutdown(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 1; i < level_count; i++) {
        free(levels[i].name);
    }
    level_count = 1;
    levels[0].level = TB_LOG_INFO;
    levels[0].last_modified = -1;
    recompute_most_verbose();
    pthread_mutex_unlock(&lock);
}
