/*
 * http_body.c - the HTTP sink's record copies and request bodies.
 *
 * A key or value that is valid JSON goes into the body as JSON, byte for
 * byte (only its line breaks, which JSON allows only between tokens, become
 * spaces so that NDJSON stays one record per line); anything else becomes a
 * JSON string, with bytes that are not UTF-8 replaced by U+FFFD. Header
 * values are always strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/http/tb_http_sink.h"

void tb_http_sink_buf_add(tb_http_sink_buf_t *buf, const void *data, size_t len)
{
    if (buf->failed) {
        return;
    }
    if (buf->len + len + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 256;
        while (cap < buf->len + len + 1) {
            cap *= 2;
        }
        char *grown = realloc(buf->data, cap);
        if (grown == NULL) {
            buf->failed = true;
            return;
        }
        buf->data = grown;
        buf->cap = cap;
    }
    memcpy(buf->data + buf->len, data, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
}

void tb_http_sink_buf_str(tb_http_sink_buf_t *buf, const char *text)
{
    tb_http_sink_buf_add(buf, text, strlen(text));
}

void tb_http_sink_buf_clear(tb_http_sink_buf_t *buf)
{
    free(buf->data);
    memset(buf, 0, sizeof(*buf));
}

/* The lead byte of each multi-byte UTF-8 form: its mask, pattern, length
 * and smallest code point (anything smaller is an overlong encoding). */
static const struct {
    unsigned char mask;
    unsigned char lead;
    size_t len;
    unsigned min;
} utf8_forms[] = {
    {0xE0, 0xC0, 2, 0x80},
    {0xF0, 0xE0, 3, 0x800},
    {0xF8, 0xF0, 4, 0x10000},
};

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 when the
 * byte at s does not start one. */
static size_t utf8_length(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80) {
        return 1;
    }
    for (size_t f = 0; f < sizeof(utf8_forms) / sizeof(utf8_forms[0]); f++) {
        size_t len = utf8_forms[f].len;
        unsigned cp = s[0] & (unsigned char)~utf8_forms[f].mask;
        if ((s[0] & utf8_forms[f].mask) != utf8_forms[f].lead || len > n) {
            continue;
        }
        for (size_t i = 1; i < len; i++) {
            if ((s[i] & 0xC0) != 0x80) {
                return 0;
            }
            cp = (cp << 6) | (s[i] & 0x3Fu);
        }
        bool valid =
            cp >= utf8_forms[f].min && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
        return valid ? len : 0;
    }
    return 0;
}

/* Appends bytes as a JSON string. */
static void put_string(tb_http_sink_buf_t *buf, const void *data, size_t len)
{
    const unsigned char *s = data;
    size_t i = 0;

    tb_http_sink_buf_add(buf, "\"", 1);
    while (i < len) {
        size_t n = utf8_length(s + i, len - i);
        char escaped[8];
        if (n == 0) {
            tb_http_sink_buf_str(buf, "\\ufffd");
            n = 1;
        } else if (s[i] == '"' || s[i] == '\\') {
            escaped[0] = '\\';
            escaped[1] = (char)s[i];
            tb_http_sink_buf_add(buf, escaped, 2);
        } else if (s[i] < 0x20) {
            snprintf(escaped, sizeof(escaped), "\\u%04x", s[i]);
            tb_http_sink_buf_str(buf, escaped);
        } else {
            tb_http_sink_buf_add(buf, s + i, n);
        }
        i += n;
    }
    tb_http_sink_buf_add(buf, "\"", 1);
}

static bool is_json(const void *data, size_t len)
{
    json_error_t error;
    json_t *parsed = json_loadb(
        data, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &error);
    json_decref(parsed);
    return parsed != NULL;
}

static bool is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Appends valid JSON text verbatim, trimmed, its line breaks made spaces. */
static void put_json_text(tb_http_sink_buf_t *buf, const char *text, size_t len)
{
    while (len > 0 && is_json_space(text[len - 1])) {
        len--;
    }
    while (len > 0 && is_json_space(text[0])) {
        text++;
        len--;
    }
    size_t start = buf->len;
    tb_http_sink_buf_add(buf, text, len);
    for (size_t i = start; !buf->failed && i < buf->len; i++) {
        if (buf->data[i] == '\n' || buf->data[i] == '\r') {
            buf->data[i] = ' ';
        }
    }
}

/* A key or value: null, its JSON, or a JSON string of its bytes. */
static void put_data(tb_http_sink_buf_t *buf, const void *data, size_t len)
{
    if (data == NULL) {
        tb_http_sink_buf_str(buf, "null");
    } else if (is_json(data, len)) {
        put_json_text(buf, data, len);
    } else {
        put_string(buf, data, len);
    }
}

/* {"name":"value",...}; of repeated names the last wins, as in Connect's
 * Headers.lastWithName(). */
static void put_headers(tb_http_sink_buf_t *buf, const tb_sink_record_t *record)
{
    bool first = true;
    tb_http_sink_buf_add(buf, "{", 1);
    for (size_t i = 0; i < record->header_count; i++) {
        const tb_header_t *h = &record->headers[i];
        bool repeated = false;
        for (size_t j = i + 1; j < record->header_count && !repeated; j++) {
            repeated = strcmp(record->headers[j].name, h->name) == 0;
        }
        if (repeated) {
            continue;
        }
        tb_http_sink_buf_str(buf, first ? "" : ",");
        put_string(buf, h->name, strlen(h->name));
        tb_http_sink_buf_add(buf, ":", 1);
        if (h->value == NULL) {
            tb_http_sink_buf_str(buf, "null");
        } else {
            put_string(buf, h->value, h->value_len);
        }
        first = false;
    }
    tb_http_sink_buf_add(buf, "}", 1);
}

static void put_record(tb_http_sink_buf_t *buf, const tb_sink_record_t *record)
{
    char number[64];

    tb_http_sink_buf_str(buf, "{\"topic\":");
    if (record->topic != NULL) {
        put_string(buf, record->topic, strlen(record->topic));
    } else {
        tb_http_sink_buf_str(buf, "null");
    }
    snprintf(number, sizeof(number), ",\"partition\":%d,\"offset\":%lld",
             (int)record->partition, (long long)record->offset);
    tb_http_sink_buf_str(buf, number);
    if (record->timestamp >= 0) {
        snprintf(number, sizeof(number), ",\"timestamp\":%lld",
                 (long long)record->timestamp);
        tb_http_sink_buf_str(buf, number);
    } else {
        tb_http_sink_buf_str(buf, ",\"timestamp\":null");
    }
    tb_http_sink_buf_str(buf, ",\"key\":");
    put_data(buf, record->key, record->key_len);
    tb_http_sink_buf_str(buf, ",\"value\":");
    put_data(buf, record->value, record->value_len);
    tb_http_sink_buf_str(buf, ",\"headers\":");
    put_headers(buf, record);
    tb_http_sink_buf_add(buf, "}", 1);
}

/* A malloc'd copy of len bytes; NULL stays NULL, empty stays non-NULL. */
static void *copy_bytes(const void *data, size_t len, bool *failed)
{
    if (data == NULL) {
        return NULL;
    }
    void *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL) {
        *failed = true;
        return NULL;
    }
    memcpy(copy, data, len);
    return copy;
}

static void copy_headers(tb_sink_record_t *copy, const tb_sink_record_t *record,
                         bool *failed)
{
    tb_header_t *headers = calloc(record->header_count, sizeof(*headers));
    if (headers == NULL) {
        *failed = true;
        return;
    }
    copy->headers = headers;
    copy->header_count = record->header_count;
    for (size_t i = 0; i < record->header_count; i++) {
        const tb_header_t *h = &record->headers[i];
        headers[i].name = copy_bytes(h->name, strlen(h->name) + 1, failed);
        headers[i].value = copy_bytes(h->value, h->value_len, failed);
        headers[i].value_len = h->value_len;
    }
}

int tb_http_sink_item_init(tb_http_sink_item_t *item, const tb_sink_record_t *record,
                           bool full_record)
{
    tb_sink_record_t *copy = &item->record;
    tb_http_sink_buf_t element = {0};
    bool failed = false;

    memset(item, 0, sizeof(*item));
    copy->partition = record->partition;
    copy->offset = record->offset;
    copy->timestamp = record->timestamp;
    copy->topic = record->topic
                      ? copy_bytes(record->topic, strlen(record->topic) + 1, &failed)
                      : NULL;
    copy->original_topic = record->original_topic
                               ? copy_bytes(record->original_topic,
                                            strlen(record->original_topic) + 1, &failed)
                               : NULL;
    copy->key = copy_bytes(record->key, record->key_len, &failed);
    copy->key_len = record->key_len;
    copy->value = copy_bytes(record->value, record->value_len, &failed);
    copy->value_len = record->value_len;
    if (record->header_count > 0) {
        copy_headers(copy, record, &failed);
    }
    if (full_record) {
        put_record(&element, record);
    } else {
        put_data(&element, record->value, record->value_len);
    }
    item->element = element.data;
    item->element_len = element.len;
    if (failed || element.failed) {
        tb_http_sink_item_clear(item);
        return -1;
    }
    return 0;
}

void tb_http_sink_item_clear(tb_http_sink_item_t *item)
{
    tb_sink_record_t *copy = &item->record;
    for (size_t i = 0; i < copy->header_count; i++) {
        free((void *)copy->headers[i].name);
        free((void *)copy->headers[i].value);
    }
    free((void *)copy->headers);
    free((void *)copy->topic);
    free((void *)copy->original_topic);
    free((void *)copy->key);
    free((void *)copy->value);
    free(item->element);
    memset(item, 0, sizeof(*item));
}

size_t tb_http_sink_batch_take(tb_http_sink_format_t format,
                               const tb_http_sink_item_t *items, size_t n,
                               size_t max_records, size_t max_bytes, bool *full)
{
    /* "[" then each element followed by "," or "]"; or each followed by
     * "\n": one byte per element beyond its text either way. */
    size_t size = format == TB_HTTP_SINK_JSON_ARRAY ? 1 : 0;
    size_t k = 0;

    while (k < n && k < max_records) {
        size_t cost = items[k].element_len + 1;
        if (k > 0 && size + cost > max_bytes) {
            *full = true;
            return k;
        }
        size += cost;
        k++;
    }
    *full = k == max_records || size >= max_bytes;
    return k;
}

int tb_http_sink_body_build(tb_http_sink_format_t format,
                            const tb_http_sink_item_t *items, size_t n,
                            tb_http_sink_buf_t *body)
{
    bool array = format == TB_HTTP_SINK_JSON_ARRAY;

    body->len = 0;
    body->failed = false; /* a failed buffer keeps its last good allocation */
    tb_http_sink_buf_str(body, array ? "[" : "");
    for (size_t i = 0; i < n; i++) {
        tb_http_sink_buf_add(body, items[i].element, items[i].element_len);
        tb_http_sink_buf_str(body, !array ? "\n" : i + 1 < n ? "," : "]");
    }
    return body->failed ? -1 : 0;
}
