/*
 * Walking checked JSON text (tb_json_text.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "connectors/converters/tb_json_text.h"

typedef struct {
    bool in_string;
    bool escaped;
} tb_json_lexer_t;

/* Feeds ch to lx; true when ch belongs to a string, its quotes included. */
static bool lex_string(tb_json_lexer_t *lx, char ch)
{
    if (!lx->in_string) {
        lx->in_string = ch == '"';
        return lx->in_string;
    }
    if (lx->escaped) {
        lx->escaped = false;
    } else if (ch == '\\') {
        lx->escaped = true;
    } else if (ch == '"') {
        lx->in_string = false;
    }
    return true;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

size_t tb_json_text_compact(char *dst, const char *s, size_t n)
{
    tb_json_lexer_t lx = {0};
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (!lex_string(&lx, s[i]) && is_space(s[i])) {
            continue;
        }
        if (dst != NULL) {
            dst[used] = s[i];
        }
        used++;
    }
    return used;
}

/* Whether the number token s[0..n) is an integer outside int64_t. */
static bool big_integer(const char *s, size_t n)
{
    char digits[32];
    if (memchr(s, '.', n) != NULL || memchr(s, 'e', n) != NULL ||
        memchr(s, 'E', n) != NULL) {
        return false;
    }
    if (n >= sizeof(digits)) {
        return true; /* JSON has no leading zeros */
    }
    memcpy(digits, s, n);
    digits[n] = '\0';
    errno = 0;
    (void)strtoll(digits, NULL, 10);
    return errno == ERANGE;
}

char *tb_json_text_widen_integers(const char *s, size_t n, size_t *out_len)
{
    size_t big = 0;
    /* the first pass counts, the second copies */
    for (int pass = 0; pass < 2; pass++) {
        tb_json_lexer_t lx = {0};
        char *out = pass == 1 ? malloc(n + 2 * big + 1) : NULL;
        size_t used = 0;
        if (pass == 1 && out == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < n;) {
            bool number =
                !lex_string(&lx, s[i]) && (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'));
            size_t end = i + 1;
            while (number && end < n && strchr("0123456789.eE+-", s[end]) != NULL) {
                end++;
            }
            bool widen = number && big_integer(s + i, end - i);
            if (out != NULL) {
                memcpy(out + used, s + i, end - i);
                used += end - i;
                if (widen) {
                    memcpy(out + used, ".0", 2);
                    used += 2;
                }
            }
            big += pass == 0 && widen;
            i = end;
        }
        if (out != NULL) {
            out[used] = '\0';
            *out_len = used;
            return out;
        }
    }
    return NULL;
}

static size_t skip_space(const char *s, size_t i, size_t n)
{
    while (i < n && is_space(s[i])) {
        i++;
    }
    return i;
}

/* The end of the value that starts at s[i]. */
static size_t value_end(const char *s, size_t i, size_t n)
{
    tb_json_lexer_t lx = {0};
    size_t depth = 0;
    for (; i < n; i++) {
        char ch = s[i];
        if (lex_string(&lx, ch)) {
            if (!lx.in_string && depth == 0) {
                return i + 1;
            }
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (depth == 0) {
                return i; /* the end of a number or literal */
            }
            if (--depth == 0) {
                return i + 1;
            }
        } else if (depth == 0 && (ch == ',' || is_space(ch))) {
            return i;
        }
    }
    return n;
}

bool tb_json_text_next(tb_json_span_t container, size_t *pos, tb_json_span_t *key,
                       tb_json_span_t *value)
{
    const char *s = container.s;
    size_t n = container.n;
    size_t open = skip_space(s, 0, n);
    size_t i = skip_space(s, *pos == 0 ? open + 1 : *pos, n);

    if (open >= n || i >= n || s[i] == '}' || s[i] == ']') {
        return false;
    }
    if (s[open] == '{') {
        size_t end = value_end(s, i, n);
        *key = (tb_json_span_t){s + i, end - i};
        i = skip_space(s, skip_space(s, end, n) + 1, n); /* past ':' */
    }
    size_t end = value_end(s, i, n);
    *value = (tb_json_span_t){s + i, end - i};
    i = skip_space(s, end, n);
    *pos = i < n && s[i] == ',' ? i + 1 : i;
    return true;
}

/* Whether the string literal key spells name. */
static bool key_is(tb_json_span_t key, const char *name)
{
    size_t len = strlen(name);
    if (memchr(key.s, '\\', key.n) == NULL) {
        return key.n == len + 2 && memcmp(key.s + 1, name, len) == 0;
    }
    json_t *decoded = json_loadb(key.s, key.n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    bool same = json_string_length(decoded) == len &&
                memcmp(json_string_value(decoded), name, len) == 0;
    json_decref(decoded);
    return same;
}

bool tb_json_text_member(tb_json_span_t object, const char *name, tb_json_span_t *value)
{
    size_t pos = 0;
    tb_json_span_t key = {"", 0}; /* stays empty in an array */
    tb_json_span_t member;
    bool found = false;
    while (tb_json_text_next(object, &pos, &key, &member)) {
        if (key_is(key, name)) {
            *value = member;
            found = true;
        }
    }
    return found;
}

size_t tb_json_utf8_sequence(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80) {
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return len;
}
