/* text.c - the helpers of tb_text.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_data.h"
#include "core/tb_time.h"
#include "core/tb_text.h"

bool tb_text_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t extra;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            extra = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            extra = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            extra = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i <= extra) {
            return false;
        }
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xc0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (extra == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
            return false;
        }
        i += extra + 1;
    }
    return true;
}

void tb_text_decimal(tb_buf_t *out, const uint8_t *data, size_t n, int scale)
{
    char *text = tb_decimal_text(data, n, scale);
    if (text == NULL) {
        out->failed = true;
        return;
    }
    tb_buf_puts(out, text);
    free(text);
}

int tb_text_decimal_parse(const char *text, int scale, uint8_t *out, size_t out_size,
                          size_t *n, size_t size)
{
    char reason[160];
    tb_value_t *v = tb_decimal_parse(text, strlen(text), scale, reason, sizeof(reason));
    size_t len = 0;
    const char *b = v != NULL ? tb_value_text(v, &len) : NULL;
    size_t want = size > 0 ? size : len;
    int rc = -1;
    if (b != NULL && len <= want && want <= out_size) {
        /* sign-extended to the size asked for */
        memset(out, len > 0 && (b[0] & 0x80) ? 0xff : 0x00, want - len);
        memcpy(out + want - len, b, len);
        *n = want;
        rc = 0;
    }
    tb_value_free(v);
    return rc;
}

void tb_text_real(tb_buf_t *out, double v, bool single)
{
    /* %.15g (float: %.6g) is exact for every shorter decimal, so the first
     * precision that reads back is the shortest spelling. */
    int max = single ? 9 : 17;
    char text[40];
    for (int digits = single ? 6 : 15; digits <= max; digits++) {
        snprintf(text, sizeof(text), "%.*g", digits, v);
        double back = strtod(text, NULL);
        if (single ? (float)back == (float)v : back == v) {
            break;
        }
    }
    tb_buf_puts(out, text);
}

void tb_text_json_real(tb_buf_t *out, double v, bool single)
{
    size_t start = out->len;
    tb_text_real(out, v, single);
    if (out->failed) {
        return;
    }
    for (size_t i = start; i < out->len; i++) {
        if (out->data[i] != '-' && (out->data[i] < '0' || out->data[i] > '9')) {
            return; /* a point, an exponent, or "inf"/"nan" */
        }
    }
    tb_buf_puts(out, ".0");
}

void tb_text_json(tb_buf_t *out, const json_t *value)
{
    const char *key;
    size_t key_len;
    json_t *member;
    bool first = true;

    switch (json_typeof(value)) {
    case JSON_OBJECT:
        tb_buf_putc(out, '{');
        json_object_keylen_foreach((json_t *)value, key, key_len, member)
        {
            if (!first) {
                tb_buf_putc(out, ',');
            }
            first = false;
            tb_buf_json_string(out, key, key_len);
            tb_buf_putc(out, ':');
            tb_text_json(out, member);
        }
        tb_buf_putc(out, '}');
        break;
    case JSON_ARRAY:
        tb_buf_putc(out, '[');
        for (size_t i = 0; i < json_array_size(value); i++) {
            if (i > 0) {
                tb_buf_putc(out, ',');
            }
            tb_text_json(out, json_array_get(value, i));
        }
        tb_buf_putc(out, ']');
        break;
    case JSON_STRING:
        tb_buf_json_string(out, json_string_value(value), json_string_length(value));
        break;
    case JSON_INTEGER:
        tb_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        break;
    case JSON_REAL:
        tb_text_json_real(out, json_real_value(value), false);
        break;
    case JSON_TRUE:
        tb_buf_puts(out, "true");
        break;
    case JSON_FALSE:
        tb_buf_puts(out, "false");
        break;
    case JSON_NULL:
        tb_buf_puts(out, "null");
        break;
    }
}

int tb_text_parse_date(const char *text, int64_t *days)
{
    int y, m, d, used = 0;
    if (sscanf(text, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || text[used] != '\0' ||
        m < 1 || m > 12 || d < 1 || d > 31) {
        return -1;
    }
    *days = tb_days_from_civil(y, m, d);
    return 0;
}

int tb_text_parse_timestamp(const char *text, int64_t units, int64_t *v)
{
    int y, mo, d, h, mi, s, used = 0;
    int64_t fraction = 0;
    int64_t scale = units;
    int offset = 0;

    if (sscanf(text, "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s,
               &used) != 6 ||
        mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
        return -1;
    }
    text += used;
    if (*text == '.') {
        for (text++; *text >= '0' && *text <= '9'; text++) {
            if (scale > 1) {
                scale /= 10;
                fraction += (*text - '0') * scale;
            }
        }
    }
    if (*text == '+' || *text == '-') {
        int oh, om;
        if (sscanf(text + 1, "%2d:%2d%n", &oh, &om, &used) != 2 ||
            text[1 + used] != '\0') {
            return -1;
        }
        offset = (*text == '-' ? -1 : 1) * (oh * 60 + om) * 60;
    } else if (!((*text == 'Z' || *text == 'z') && text[1] == '\0') && *text != '\0') {
        return -1;
    }
    int64_t seconds =
        tb_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset;
    *v = seconds * units + fraction;
    return 0;
}
