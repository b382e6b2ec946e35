/*
 * tb_buf.h - a growing byte buffer for the registry formats' encoders and
 * decoders.
 *
 * A failed allocation sets failed and makes every later append a no-op, so a
 * writer checks once at the end. The buffer owns data; tb_buf_release()
 * frees it, tb_buf_take() hands it to the caller.
 */
#ifndef TB_BUF_H
#define TB_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len;
    size_t cap;
    bool failed; /* an allocation failed; data holds what came before */
} tb_buf_t;

/* Makes room for n more bytes (and a NUL) at once, for a writer that knows
 * about how much it will write; an empty buffer gets exactly that. Returns
 * false when an allocation failed. */
bool tb_buf_reserve(tb_buf_t *b, size_t n);

/* Appends n bytes (growing the buffer in tb_buf_append_grow()). Inline:
 * writers append a few bytes at a time, and most fit. */
void tb_buf_append_grow(tb_buf_t *b, const void *data, size_t n);
static inline void tb_buf_append(tb_buf_t *b, const void *data, size_t n)
{
    if (n == 0) { /* data may be NULL then */
        return;
    }
    if (b->len + n < b->cap && !b->failed) {
        memcpy(b->data + b->len, data, n);
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    tb_buf_append_grow(b, data, n);
}
void tb_buf_putc(tb_buf_t *b, char ch);
void tb_buf_puts(tb_buf_t *b, const char *s);
/* printf-style append. */
void tb_buf_printf(tb_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s (n bytes of UTF-8) as a JSON string literal, quotes included. */
void tb_buf_json_string(tb_buf_t *b, const char *s, size_t n);
/* Appends a zigzag-free base-128 varint (Protobuf's) and Avro's zigzag long. */
void tb_buf_varint(tb_buf_t *b, uint64_t v);
void tb_buf_zigzag(tb_buf_t *b, int64_t v);

/* Returns the data (malloc'd, the caller frees it; NUL-terminated, its
 * length in *len unless len is NULL) and resets b. NULL when an
 * allocation failed (b is released then). */
char *tb_buf_take(tb_buf_t *b, size_t *len);

/* Frees the data; b may be reused. */
void tb_buf_release(tb_buf_t *b);

#endif
