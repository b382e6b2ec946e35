/*
 * avro_codec.c - Avro binary <-> JSON over a compiled schema (tb_avro.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "core/tb_base64.h"
#include "registry/avro/tb_avro_node.h"
#include "core/tb_text.h"

#define MAX_DEPTH 64
/* Items an array or map may have that take no bytes (nulls, empty
 * records): the input cannot bound their count. */
#define MAX_EMPTY_ITEMS 65536

/* -------------------------------------------------------------------------
 * Decoding
 */

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
    tb_buf_t *out;
    char *errstr;
    size_t errstr_size;
    size_t empty_items;
} decoder_t;

static int bad(decoder_t *d, const char *what)
{
    snprintf(d->errstr, d->errstr_size, "Avro data: %s at byte %zu", what,
             (size_t)(d->end - d->p));
    return -1;
}

static int read_long(decoder_t *d, int64_t *v)
{
    uint64_t u = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (d->p == d->end) {
            return bad(d, "truncated number");
        }
        uint8_t byte = *d->p++;
        u |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            return 0;
        }
    }
    return bad(d, "number longer than 10 bytes");
}

/* A length prefix that must fit in what is left. */
static int read_length(decoder_t *d, size_t *n)
{
    int64_t v;
    if (read_long(d, &v) != 0) {
        return -1;
    }
    if (v < 0 || (uint64_t)v > (uint64_t)(d->end - d->p)) {
        return bad(d, "length beyond the data");
    }
    *n = (size_t)v;
    return 0;
}

static void put_number(tb_buf_t *out, double v, bool single)
{
    if (isnan(v)) {
        tb_buf_puts(out, "\"NaN\"");
    } else if (isinf(v)) {
        tb_buf_puts(out, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
        tb_text_json_real(out, v, single);
    }
}

static int decode_float(decoder_t *d, size_t width)
{
    uint8_t raw[8];
    if ((size_t)(d->end - d->p) < width) {
        return bad(d, "truncated float");
    }
    memcpy(raw, d->p, width);
    d->p += width;
    uint64_t bits = 0;
    for (size_t i = 0; i < width; i++) {
        bits |= (uint64_t)raw[i] << (8 * i);
    }
    if (width == 4) {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, 4);
        put_number(d->out, f, true);
    } else {
        double v;
        memcpy(&v, &bits, 8);
        put_number(d->out, v, false);
    }
    return 0;
}

static void put_base64(tb_buf_t *out, const uint8_t *data, size_t n)
{
    size_t encoded = 4 * ((n + 2) / 3);
    char *text = malloc(encoded + 1);
    if (text == NULL) {
        out->failed = true;
        return;
    }
    EVP_EncodeBlock((unsigned char *)text, data, (int)n);
    tb_buf_json_string(out, text, encoded);
    free(text);
}

static int decode_bytes(decoder_t *d, const tb_avro_node_t *node, size_t n)
{
    if (n > INT32_MAX / 2) {
        return bad(d, "bytes too long");
    }
    if (node->logical == TB_AVRO_DECIMAL) {
        tb_text_decimal(d->out, d->p, n, node->scale);
    } else {
        put_base64(d->out, d->p, n);
    }
    d->p += n;
    return 0;
}

static int decode(decoder_t *d, const tb_avro_node_t *node, int depth);

static int decode_record(decoder_t *d, const tb_avro_node_t *node, int depth)
{
    tb_buf_putc(d->out, '{');
    for (size_t i = 0; i < node->count; i++) {
        if (i > 0) {
            tb_buf_putc(d->out, ',');
        }
        tb_buf_json_string(d->out, node->names[i], strlen(node->names[i]));
        tb_buf_putc(d->out, ':');
        if (decode(d, node->children[i], depth + 1) != 0) {
            return -1;
        }
    }
    tb_buf_putc(d->out, '}');
    return 0;
}

/* The count of a block, and skips its byte size when given. */
static int block_count(decoder_t *d, size_t *count)
{
    int64_t n;
    if (read_long(d, &n) != 0) {
        return -1;
    }
    if (n < 0) {
        int64_t size;
        if (n == INT64_MIN || read_long(d, &size) != 0) {
            return bad(d, "bad block count");
        }
        n = -n;
    }
    *count = (size_t)n;
    return 0;
}

/* Checks that count items can come from what is left. */
static int check_items(decoder_t *d, size_t count)
{
    if (count <= (size_t)(d->end - d->p)) {
        return 0;
    }
    d->empty_items += count;
    return d->empty_items <= MAX_EMPTY_ITEMS ? 0 : bad(d, "too many items");
}

static int decode_blocks(decoder_t *d, const tb_avro_node_t *node, int depth)
{
    bool map = node->kind == TB_AVRO_MAP;
    bool first = true;
    size_t count;

    tb_buf_putc(d->out, map ? '{' : '[');
    while (block_count(d, &count) == 0) {
        if (count == 0) {
            tb_buf_putc(d->out, map ? '}' : ']');
            return 0;
        }
        if (check_items(d, count) != 0) {
            return -1;
        }
        for (size_t i = 0; i < count; i++) {
            size_t n;
            if (!first) {
                tb_buf_putc(d->out, ',');
            }
            first = false;
            if (map) {
                if (read_length(d, &n) != 0 || !tb_text_utf8_valid(d->p, n)) {
                    return bad(d, "bad map key");
                }
                tb_buf_json_string(d->out, (const char *)d->p, n);
                tb_buf_putc(d->out, ':');
                d->p += n;
            }
            if (decode(d, node->children[0], depth + 1) != 0) {
                return -1;
            }
        }
    }
    return -1;
}

static int decode_int(decoder_t *d, const tb_avro_node_t *node)
{
    int64_t v;
    if (read_long(d, &v) != 0) {
        return -1;
    }
    if (node->kind == TB_AVRO_INT && (v < INT32_MIN || v > INT32_MAX)) {
        return bad(d, "int out of range");
    }
    tb_buf_printf(d->out, "%" PRId64, v);
    return 0;
}

static int decode_union(decoder_t *d, const tb_avro_node_t *node, int depth)
{
    int64_t branch;
    if (read_long(d, &branch) != 0) {
        return -1;
    }
    if (branch < 0 || (uint64_t)branch >= node->count) {
        return bad(d, "union branch out of range");
    }
    return decode(d, node->children[branch], depth + 1);
}

static int decode_string(decoder_t *d)
{
    size_t n;
    if (read_length(d, &n) != 0) {
        return -1;
    }
    if (!tb_text_utf8_valid(d->p, n)) {
        return bad(d, "string is not UTF-8");
    }
    tb_buf_json_string(d->out, (const char *)d->p, n);
    d->p += n;
    return 0;
}

static int decode(decoder_t *d, const tb_avro_node_t *node, int depth)
{
    size_t n;
    int64_t index;

    if (depth > MAX_DEPTH) {
        return bad(d, "nested too deeply");
    }
    switch (node->kind) {
    case TB_AVRO_NULL:
        tb_buf_puts(d->out, "null");
        return 0;
    case TB_AVRO_BOOLEAN:
        if (d->p == d->end || *d->p > 1) {
            return bad(d, "bad boolean");
        }
        tb_buf_puts(d->out, *d->p++ ? "true" : "false");
        return 0;
    case TB_AVRO_INT:
    case TB_AVRO_LONG:
        return decode_int(d, node);
    case TB_AVRO_FLOAT:
        return decode_float(d, 4);
    case TB_AVRO_DOUBLE:
        return decode_float(d, 8);
    case TB_AVRO_BYTES:
        return read_length(d, &n) != 0 ? -1 : decode_bytes(d, node, n);
    case TB_AVRO_FIXED:
        return node->size > (size_t)(d->end - d->p) ? bad(d, "truncated fixed")
                                                    : decode_bytes(d, node, node->size);
    case TB_AVRO_STRING:
        return decode_string(d);
    case TB_AVRO_RECORD:
        return decode_record(d, node, depth);
    case TB_AVRO_ENUM:
        if (read_long(d, &index) != 0) {
            return -1;
        }
        if (index < 0 || (uint64_t)index >= node->count) {
            return bad(d, "enum index out of range");
        }
        tb_buf_json_string(d->out, node->names[index], strlen(node->names[index]));
        return 0;
    case TB_AVRO_ARRAY:
    case TB_AVRO_MAP:
        return decode_blocks(d, node, depth);
    case TB_AVRO_UNION:
        return decode_union(d, node, depth);
    }
    return bad(d, "unknown type");
}

int tb_avro_decode(const tb_avro_schema_t *schema, const uint8_t *data, size_t len,
                   tb_buf_t *out, char *errstr, size_t errstr_size)
{
    decoder_t d = {.p = data,
                   .end = data + len,
                   .out = out,
                   .errstr = errstr,
                   .errstr_size = errstr_size};
    if (decode(&d, schema->root, 0) != 0) {
        return -1;
    }
    if (d.p != d.end) {
        return bad(&d, "data left after the value");
    }
    if (out->failed) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

/* -------------------------------------------------------------------------
 * Encoding
 */

typedef struct {
    tb_buf_t *out;
    char *errstr;
    size_t errstr_size;
    const char *path[MAX_DEPTH + 1]; /* field names down to the current value */
    int depth;
} encoder_t;

static int mismatch(encoder_t *e, const tb_avro_node_t *node, const char *why)
{
    char where[256] = "";
    size_t used = 0;
    for (int i = 1; i <= e->depth && used < sizeof(where) - 1; i++) {
        if (e->path[i] != NULL) {
            used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%s",
                                     used > 0 ? "." : "", e->path[i]);
        }
    }
    snprintf(e->errstr, e->errstr_size, "value%s%s does not fit Avro %s: %s",
             used > 0 ? " at " : "", where, tb_avro_branch_name(node), why);
    return -1;
}

static int encode(encoder_t *e, const tb_avro_node_t *node, const json_t *value);
static bool fits(const tb_avro_node_t *node, const json_t *value, int depth);

static int encode_base64(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    size_t n = json_string_length(value);
    uint8_t *raw = malloc(TB_BASE64_DECODED_MAX(n));
    long used;
    if (raw == NULL) {
        return mismatch(e, node, "out of memory");
    }
    used = tb_base64_decode(json_string_value(value), n, TB_BASE64_LENIENT, raw,
                            TB_BASE64_DECODED_MAX(n));
    if (used < 0 || (node->kind == TB_AVRO_FIXED && (size_t)used != node->size)) {
        free(raw);
        return mismatch(e, node, "not base64 of the right length");
    }
    if (node->kind == TB_AVRO_BYTES) {
        tb_buf_zigzag(e->out, used);
    }
    tb_buf_append(e->out, raw, (size_t)used);
    free(raw);
    return 0;
}

static int encode_decimal(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    uint8_t raw[256];
    size_t n;
    char text[64];
    const char *digits = json_string_value(value);

    if (json_is_number(value)) {
        snprintf(text, sizeof(text), "%.*f", node->scale, json_number_value(value));
        digits = text;
    }
    if (digits == NULL ||
        tb_text_decimal_parse(digits, node->scale, raw, sizeof(raw), &n,
                              node->kind == TB_AVRO_FIXED ? node->size : 0) != 0) {
        return mismatch(e, node, "not a decimal of this scale");
    }
    if (node->kind == TB_AVRO_BYTES) {
        tb_buf_zigzag(e->out, (int64_t)n);
    }
    tb_buf_append(e->out, raw, n);
    return 0;
}

/* A logical integer given as text: a date or an RFC 3339 timestamp. */
static int integer_of_text(const tb_avro_node_t *node, const char *text, int64_t *v)
{
    switch (node->logical) {
    case TB_AVRO_DATE:
        return tb_text_parse_date(text, v);
    case TB_AVRO_TIMESTAMP_MILLIS:
    case TB_AVRO_LOCAL_TIMESTAMP_MILLIS:
        return tb_text_parse_timestamp(text, 1000, v);
    case TB_AVRO_TIMESTAMP_MICROS:
    case TB_AVRO_LOCAL_TIMESTAMP_MICROS:
        return tb_text_parse_timestamp(text, 1000000, v);
    default:
        return -1;
    }
}

static int encode_integer(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    int64_t v;
    if (json_is_integer(value)) {
        v = json_integer_value(value);
    } else if (!json_is_string(value) ||
               integer_of_text(node, json_string_value(value), &v) != 0) {
        return mismatch(e, node, "not an integer");
    }
    if (node->kind == TB_AVRO_INT && (v < INT32_MIN || v > INT32_MAX)) {
        return mismatch(e, node, "out of the range of int");
    }
    tb_buf_zigzag(e->out, v);
    return 0;
}

static int encode_real(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    double v;
    const char *text = json_string_value(value);
    if (json_is_number(value)) {
        v = json_number_value(value);
    } else if (text != NULL && strcmp(text, "NaN") == 0) {
        v = NAN;
    } else if (text != NULL &&
               (strcmp(text, "Infinity") == 0 || strcmp(text, "-Infinity") == 0)) {
        v = text[0] == '-' ? -INFINITY : INFINITY;
    } else {
        return mismatch(e, node, "not a number");
    }
    uint8_t raw[8];
    uint64_t bits;
    size_t width = node->kind == TB_AVRO_FLOAT ? 4 : 8;
    if (width == 4) {
        float f = (float)v;
        uint32_t b32;
        memcpy(&b32, &f, 4);
        bits = b32;
    } else {
        memcpy(&bits, &v, 8);
    }
    for (size_t i = 0; i < width; i++) {
        raw[i] = (uint8_t)(bits >> (8 * i));
    }
    tb_buf_append(e->out, raw, width);
    return 0;
}

static int encode_record(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    const char *key;
    const json_t *member;

    if (!json_is_object(value)) {
        return mismatch(e, node, "not an object");
    }
    json_object_foreach ((json_t *)value, key, member) {
        size_t i = 0;
        while (i < node->count && strcmp(node->names[i], key) != 0) {
            i++;
        }
        if (i == node->count) {
            e->path[e->depth] = key;
            return mismatch(e, node, "a field the schema does not have");
        }
    }
    for (size_t i = 0; i < node->count; i++) {
        const json_t *field = json_object_get(value, node->names[i]);
        e->path[e->depth] = node->names[i];
        if (field == NULL) {
            field = node->defaults[i];
        }
        if (field == NULL) {
            return mismatch(e, node, "a field without default is missing");
        }
        if (encode(e, node->children[i], field) != 0) {
            return -1;
        }
    }
    return 0;
}

static int encode_array(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    size_t i;
    const json_t *item;
    if (!json_is_array(value)) {
        return mismatch(e, node, "not an array");
    }
    if (json_array_size(value) > 0) {
        tb_buf_zigzag(e->out, (int64_t)json_array_size(value));
        json_array_foreach (value, i, item) {
            if (encode(e, node->children[0], item) != 0) {
                return -1;
            }
        }
    }
    tb_buf_zigzag(e->out, 0);
    return 0;
}

static int encode_map(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    const char *key;
    const json_t *item;
    if (!json_is_object(value)) {
        return mismatch(e, node, "not an object");
    }
    if (json_object_size(value) > 0) {
        tb_buf_zigzag(e->out, (int64_t)json_object_size(value));
        json_object_foreach ((json_t *)value, key, item) {
            tb_buf_zigzag(e->out, (int64_t)strlen(key));
            tb_buf_puts(e->out, key);
            e->path[e->depth] = key;
            if (encode(e, node->children[0], item) != 0) {
                return -1;
            }
        }
    }
    tb_buf_zigzag(e->out, 0);
    return 0;
}

static int encode_union(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    for (size_t i = 0; i < node->count; i++) {
        if (fits(node->children[i], value, 0)) {
            tb_buf_zigzag(e->out, (int64_t)i);
            return encode(e, node->children[i], value);
        }
    }
    if (json_object_size(value) == 1) { /* {"<branch>": value} */
        const char *tag = json_object_iter_key(json_object_iter((json_t *)value));
        for (size_t i = 0; i < node->count; i++) {
            if (strcmp(tb_avro_branch_name(node->children[i]), tag) == 0) {
                tb_buf_zigzag(e->out, (int64_t)i);
                return encode(e, node->children[i], json_object_get(value, tag));
            }
        }
    }
    return mismatch(e, node, "fits no branch");
}

static int encode_enum(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    const char *symbol = json_string_value(value);
    for (size_t i = 0; symbol != NULL && i < node->count; i++) {
        if (strcmp(node->names[i], symbol) == 0) {
            tb_buf_zigzag(e->out, (int64_t)i);
            return 0;
        }
    }
    return mismatch(e, node, "not one of the symbols");
}

static int encode_text(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    if (node->logical == TB_AVRO_DECIMAL) {
        return encode_decimal(e, node, value);
    }
    if (!json_is_string(value)) {
        return mismatch(e, node, "not a string");
    }
    if (node->kind != TB_AVRO_STRING) {
        return encode_base64(e, node, value);
    }
    tb_buf_zigzag(e->out, (int64_t)json_string_length(value));
    tb_buf_append(e->out, json_string_value(value), json_string_length(value));
    return 0;
}

static int encode(encoder_t *e, const tb_avro_node_t *node, const json_t *value)
{
    int rc;
    if (e->depth >= MAX_DEPTH) {
        return mismatch(e, node, "nested too deeply");
    }
    e->path[++e->depth] = NULL;
    switch (node->kind) {
    case TB_AVRO_NULL:
        rc = json_is_null(value) ? 0 : mismatch(e, node, "not null");
        break;
    case TB_AVRO_BOOLEAN:
        if (!json_is_boolean(value)) {
            rc = mismatch(e, node, "not a boolean");
            break;
        }
        tb_buf_putc(e->out, json_is_true(value) ? 1 : 0);
        rc = 0;
        break;
    case TB_AVRO_INT:
    case TB_AVRO_LONG:
        rc = encode_integer(e, node, value);
        break;
    case TB_AVRO_FLOAT:
    case TB_AVRO_DOUBLE:
        rc = encode_real(e, node, value);
        break;
    case TB_AVRO_BYTES:
    case TB_AVRO_FIXED:
    case TB_AVRO_STRING:
        rc = encode_text(e, node, value);
        break;
    case TB_AVRO_RECORD:
        rc = encode_record(e, node, value);
        break;
    case TB_AVRO_ENUM:
        rc = encode_enum(e, node, value);
        break;
    case TB_AVRO_ARRAY:
        rc = encode_array(e, node, value);
        break;
    case TB_AVRO_MAP:
        rc = encode_map(e, node, value);
        break;
    default:
        rc = encode_union(e, node, value);
        break;
    }
    e->depth--;
    return rc;
}

/* Whether value has the JSON shape node takes (a quick check to choose a
 * union branch; encoding checks the rest). */
static bool fits(const tb_avro_node_t *node, const json_t *value, int depth)
{
    int64_t v;
    if (depth > MAX_DEPTH) {
        return false;
    }
    switch (node->kind) {
    case TB_AVRO_NULL:
        return json_is_null(value);
    case TB_AVRO_BOOLEAN:
        return json_is_boolean(value);
    case TB_AVRO_INT:
    case TB_AVRO_LONG:
        if (json_is_string(value)) {
            return integer_of_text(node, json_string_value(value), &v) == 0;
        }
        return json_is_integer(value) &&
               (node->kind == TB_AVRO_LONG || (json_integer_value(value) >= INT32_MIN &&
                                               json_integer_value(value) <= INT32_MAX));
    case TB_AVRO_FLOAT:
    case TB_AVRO_DOUBLE:
        return json_is_number(value);
    case TB_AVRO_BYTES:
    case TB_AVRO_FIXED:
        return json_is_string(value) ||
               (node->logical == TB_AVRO_DECIMAL && json_is_number(value));
    case TB_AVRO_STRING:
        return json_is_string(value);
    case TB_AVRO_ENUM:
        for (size_t i = 0; json_is_string(value) && i < node->count; i++) {
            if (strcmp(node->names[i], json_string_value(value)) == 0) {
                return true;
            }
        }
        return false;
    case TB_AVRO_RECORD: {
        const char *key;
        const json_t *member;
        json_object_foreach ((json_t *)value, key, member) {
            bool known = false;
            for (size_t i = 0; i < node->count && !known; i++) {
                known = strcmp(node->names[i], key) == 0 &&
                        fits(node->children[i], member, depth + 1);
            }
            if (!known) {
                return false;
            }
        }
        return json_is_object(value);
    }
    case TB_AVRO_ARRAY:
        return json_is_array(value);
    case TB_AVRO_MAP:
        return json_is_object(value);
    case TB_AVRO_UNION:
        return false; /* a union directly in a union is no valid schema */
    }
    return false;
}

int tb_avro_encode(const tb_avro_schema_t *schema, const json_t *value, tb_buf_t *out,
                   char *errstr, size_t errstr_size)
{
    encoder_t e = {.out = out, .errstr = errstr, .errstr_size = errstr_size};
    if (encode(&e, schema->root, value) != 0) {
        return -1;
    }
    if (out->failed) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}
