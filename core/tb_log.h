/*
 * tb_log.h - the process's one logger.
 *
 * Lines go to stderr, one per event, as text or JSON (log.format). Every line
 * names its logger (a dotted name such as "tributary.http"); levels can be
 * set per logger at run time, and a logger without its own level inherits
 * the level of its nearest ancestor, up to "root" (as log4j does, which is
 * what Connect's /admin/loggers exposes).
 *
 * Never pass a secret to these functions: nothing here can redact.
 */
#ifndef TB_LOG_H
#define TB_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

typedef enum {
    TB_LOG_OFF = 0,
    TB_LOG_FATAL,
    TB_LOG_ERROR,
    TB_LOG_WARN,
    TB_LOG_INFO,
    TB_LOG_DEBUG,
    TB_LOG_TRACE,
} tb_log_level_t;

typedef enum {
    TB_LOG_FORMAT_TEXT = 0,
    TB_LOG_FORMAT_JSON,
} tb_log_format_t;

/* Every logger name tributary uses starts with this prefix. */
#define TB_LOGGER_PREFIX "tributary."

/* True when a line at level for logger would be written. Cheap when the
 * level is above every configured level. */
bool tb_log_enabled(tb_log_level_t level, const char *logger);

/* Writes one line. connector may be NULL (worker-level event); task is -1
 * for the connector itself. */
void tb_log_write(tb_log_level_t level, const char *logger, const char *connector,
                  int task, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define TB_LOG(level, logger, ...)                                                       \
    do {                                                                                 \
        if (tb_log_enabled((level), (logger))) {                                         \
            tb_log_write((level), (logger), NULL, -1, __VA_ARGS__);                      \
        }                                                                                \
    } while (0)

/* A line about one connector (task -1) or one of its tasks. */
#define TB_LOG_TASK(level, logger, connector, task, ...)                                 \
    do {                                                                                 \
        if (tb_log_enabled((level), (logger))) {                                         \
            tb_log_write((level), (logger), (connector), (task), __VA_ARGS__);           \
        }                                                                                \
    } while (0)

/* Sets how lines are written from the next one on; any thread. */
void tb_log_set_format(tb_log_format_t format);

/* Parses a level name (OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, ALL;
 * any case). Returns -1 when unknown. */
int tb_log_level_parse(const char *name, tb_log_level_t *out);
const char *tb_log_level_name(tb_log_level_t level);

/* Sets the level of logger ("root" for the root logger) and of every
 * explicitly set logger below it, stamping them with now_ms. Returns the
 * sorted array of affected logger names (new reference). */
json_t *tb_log_level_set(const char *logger, tb_log_level_t level, int64_t now_ms);

/* {"root":{"level":"INFO","last_modified":null},...}: root, every logger
 * the code logs under and every explicitly set one, as Connect 4.0 lists
 * every logger log4j2 knows: each with its effective level, last_modified
 * set only when the logger itself was set (new reference). */
json_t *tb_log_levels_get(void);

/* {"level","last_modified"} of a logger: its effective level, with its own
 * stamp if it was set itself (new reference). NULL when no such logger is
 * known (neither used by the code nor set through tb_log_level_set). */
json_t *tb_log_level_get(const char *logger);

/* Releases the logger table (at exit). */
void tb_log_shutdown(void);

#endif
