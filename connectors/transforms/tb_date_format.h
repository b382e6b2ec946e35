/*
 * tb_date_format.h - dates as java.text.SimpleDateFormat writes and reads
 * them, in UTC, for the transforms that take a format (TimestampRouter,
 * TimestampConverter) and Cast's text of Date, Time and Timestamp values.
 *
 * The pattern letters known: y M d H k h K a m s S E D Z X z, and 'quoted'
 * text ('' for a quote); other ASCII letters are refused, as Java refuses
 * letters it does not know (G, u, w, W, F, Y, L are Java's but not ours).
 * Names (MMM, EEE, a) are English.
 */
#ifndef TB_DATE_FORMAT_H
#define TB_DATE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* 0 when pattern is one tributary reads, or -1 with the reason. */
int tb_date_format_check(const char *pattern, char *reason, size_t reason_size);

/* The same as a tb_config_def_t check of a STRING key. */
int tb_date_format_config_check(const json_t *value, char *reason, size_t reason_size);

/* Writes ms (since the epoch, UTC) as pattern into out (truncated to size,
 * NUL-terminated). pattern has passed tb_date_format_check. */
void tb_date_format(const char *pattern, int64_t ms, char *out, size_t size);

/* Reads text as pattern (leniently, as SimpleDateFormat.parse: text after
 * the pattern is ignored) into *ms. -1 when text does not match. */
int tb_date_parse(const char *pattern, const char *text, int64_t *ms);

#endif
