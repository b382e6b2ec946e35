#include "connectors/runtime/task/tb_record_log.h"

#include <stdarg.h>
#include <stdio.h>

/* A cursor into a fixed buffer that never overflows it. */
typedef struct {
    char *buf;
    size_t size;
    size_t len;
} text_t;

static void append(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(text_t *t, const char *fmt, ...)
{
    va_list ap;
    if (t->len + 1 >= t->size) {
        return;
    }
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t room = t->size - t->len - 1;
        t->len += (size_t)n < room ? (size_t)n : room;
    }
}

/* Appends data quoted and escaped, at most TB_RECORD_LOG_SHOWN bytes of it. */
static void append_bytes(text_t *t, const void *data, size_t len)
{
    const unsigned char *bytes = data;
    size_t shown = len < TB_RECORD_LOG_SHOWN ? len : TB_RECORD_LOG_SHOWN;
    if (data == NULL) {
        append(t, "null");
        return;
    }
    append(t, "\"");
    for (size_t i = 0; i < shown; i++) {
        if (bytes[i] >= 0x20 && bytes[i] < 0x7f && bytes[i] != '"' && bytes[i] != '\\') {
            append(t, "%c", bytes[i]);
        } else {
            append(t, "\\x%02x", bytes[i]);
        }
    }
    append(t, "\"");
    if (shown < len) {
        append(t, "... (%zu bytes)", len);
    }
}

void tb_record_log_describe(const tb_sink_record_t *record, bool include_messages,
                            char *buf, size_t size)
{
    text_t t = {.buf = buf, .size = size};
    buf[0] = '\0';
    append(&t, "record %s-%d at offset %lld", record->topic, (int)record->partition,
           (long long)record->offset);
    if (!include_messages) {
        return;
    }
    append(&t, " (key ");
    append_bytes(&t, record->key, record->key_len);
    append(&t, ", value ");
    append_bytes(&t, record->value, record->value_len);
    append(&t, ")");
}
