/* buf.c - the growing byte buffer of tb_buf.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_buf.h"

/* Makes room for n more bytes plus a NUL. */
static bool reserve(tb_buf_t *b, size_t n)
{
    if (b->failed) {
        return false;
    }
    if (b->len + n + 1 <= b->cap) {
        return true;
    }
    size_t cap = b->cap > 0 ? b->cap : 64;
    if (b->cap == 0 && n + 1 > cap) {
        cap = n + 1; /* a first reservation: what was asked */
    }
    while (cap < b->len + n + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (data == NULL) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

bool tb_buf_reserve(tb_buf_t *b, size_t n)
{
    return reserve(b, n);
}

void tb_buf_append_grow(tb_buf_t *b, const void *data, size_t n)
{
    if (n == 0 || !reserve(b, n)) {
        return;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tb_buf_putc(tb_buf_t *b, char ch)
{
    tb_buf_append(b, &ch, 1);
}

void tb_buf_puts(tb_buf_t *b, const char *s)
{
    tb_buf_append(b, s, strlen(s));
}

void tb_buf_printf(tb_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tb_buf_json_string(tb_buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* bytes copied as they are, pending */

    tb_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            run++;
            continue;
        }
        tb_buf_append(b, s + i - run, run);
        run = 0;
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            tb_buf_append(b, esc, 2);
        } else if (ch == '\n') {
            tb_buf_puts(b, "\\n");
        } else if (ch == '\t') {
            tb_buf_puts(b, "\\t");
        } else if (ch == '\r') {
            tb_buf_puts(b, "\\r");
        } else {
            char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            tb_buf_append(b, esc, 6);
        }
    }
    tb_buf_append(b, s + n - run, run);
    tb_buf_putc(b, '"');
}

void tb_buf_varint(tb_buf_t *b, uint64_t v)
{
    unsigned char bytes[10];
    size_t n = 0;
    do {
        bytes[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v != 0) {
            bytes[n] |= 0x80;
        }
        n++;
    } while (v != 0);
    tb_buf_append(b, bytes, n);
}

void tb_buf_zigzag(tb_buf_t *b, int64_t v)
{
    tb_buf_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

char *tb_buf_take(tb_buf_t *b, size_t *len)
{
    if (b->failed || !reserve(b, 0)) {
        tb_buf_release(b);
        return NULL;
    }
    char *data = b->data;
    if (len != NULL) {
        *len = b->len;
    }
    *b = (tb_buf_t){0};
    return data;
}

void tb_buf_release(tb_buf_t *b)
{
    free(b->data);
    *b = (tb_buf_t){0};
}
