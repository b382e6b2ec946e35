/*
 * Regular expressions for the routing transform and the topic predicate
 * (tb_regex.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_regex.h"

#define GROUPS 10

int tb_regex_compile(regex_t *re, const char *pattern)
{
    return regcomp(re, pattern, REG_EXTENDED) == 0 ? 0 : -1;
}

int tb_regex_check(const json_t *value, char *reason, size_t reason_size)
{
    regex_t re;
    const char *pattern = json_string_value(value);
    if (pattern == NULL) {
        return 0;
    }
    int rc = regcomp(&re, pattern, REG_EXTENDED);
    if (rc != 0) {
        char text[256];
        regerror(rc, &re, text, sizeof(text));
        snprintf(reason, reason_size, "Invalid regex: %s", text);
        return -1;
    }
    regfree(&re);
    return 0;
}

bool tb_regex_matches(const regex_t *re, const char *s, regmatch_t *groups)
{
    regmatch_t local[GROUPS];
    regmatch_t *m = groups != NULL ? groups : local;
    /* POSIX finds the longest match at the leftmost position: if any match
     * spans all of s, that one does */
    return regexec(re, s, GROUPS, m, 0) == 0 && m[0].rm_so == 0 &&
           (size_t)m[0].rm_eo == strlen(s);
}

char *tb_regex_replace(const char *s, const regmatch_t *groups, const char *replacement)
{
    size_t capacity = strlen(replacement) + 1;
    for (const char *p = replacement; *p != '\0'; p++) {
        if (*p == '$') {
            capacity += strlen(s);
        }
    }
    char *out = malloc(capacity);
    size_t used = 0;
    if (out == NULL) {
        return NULL;
    }
    for (const char *p = replacement; *p != '\0'; p++) {
        if (*p == '\\' && p[1] != '\0') {
            out[used++] = *++p;
        } else if (*p == '$' && isdigit((unsigned char)p[1])) {
            int g = *++p - '0';
            if (g < GROUPS && groups[g].rm_so >= 0) {
                size_t n = (size_t)(groups[g].rm_eo - groups[g].rm_so);
                memcpy(out + used, s + groups[g].rm_so, n);
                used += n;
            }
        } else {
            out[used++] = *p;
        }
    }
    out[used] = '\0';
    return out;
}
