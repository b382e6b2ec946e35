/*
 * tb_regex.h - the regular expressions of RegexRouter and
 * TopicNameMatches: POSIX extended syntax (regcomp), matched against the
 * whole string as Java's Matcher.matches(); replacements refer to groups as
 * Java's do ($1, and \$ for a dollar).
 */
#ifndef TB_REGEX_H
#define TB_REGEX_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The config check of a regex key: 0, or -1 with the reason. */
int tb_regex_check(const json_t *value, char *reason, size_t reason_size);

/* Compiles pattern into re (regfree() it). -1 when it is invalid. */
int tb_regex_compile(regex_t *re, const char *pattern);

/* Whether re matches all of s; groups (10 slots) get the groups when not
 * NULL. */
bool tb_regex_matches(const regex_t *re, const char *s, regmatch_t *groups);

/* replacement with $n replaced by group n of s, in a new malloc'd string. */
char *tb_regex_replace(const char *s, const regmatch_t *groups, const char *replacement);

#endif
