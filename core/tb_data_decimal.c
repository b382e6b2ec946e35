/*
 * Decimals as Connect keeps them (tb_data.h): unscaled big-endian two's
 * complement bytes under a scale, converted to and from decimal text with
 * byte-wise long multiplication and division, so that any precision is
 * exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_data.h"

int tb_decimal_scale(const tb_schema_t *s)
{
    const char *scale = tb_schema_parameter(s, TB_DECIMAL_SCALE);
    return scale != NULL ? atoi(scale) : 0;
}

/* Negates the two's complement b[0..n) in place. */
static void negate(unsigned char *b, size_t n)
{
    unsigned carry = 1;
    for (size_t i = n; i-- > 0;) {
        unsigned byte = (unsigned char)~b[i] + carry;
        carry = byte > 0xff;
        b[i] = (unsigned char)byte;
    }
}

char *tb_decimal_text(const void *unscaled, size_t len, int scale)
{
    const unsigned char *in = unscaled;
    bool negative = len > 0 && (in[0] & 0x80) != 0;
    if (scale > TB_DECIMAL_MAX_DIGITS || scale < -TB_DECIMAL_MAX_DIGITS) {
        return NULL;
    }
    size_t pad = scale > 0 ? (size_t)scale : 0;    /* zeros before the point */
    size_t zeros = scale < 0 ? (size_t)-scale : 0; /* zeros after the digits */
    /* 8 bits make at most 3 digits */
    size_t capacity = len * 3 + pad + zeros + 4;
    unsigned char *mag = malloc(len > 0 ? len : 1);
    char *digits = malloc(capacity); /* least significant first */
    char *text = malloc(capacity);
    size_t count = 0;
    size_t used = 0;

    if (mag == NULL || digits == NULL || text == NULL) {
        free(text);
        text = NULL;
        goto done;
    }
    memcpy(mag, in, len);
    if (negative) {
        negate(mag, len);
    }
    for (bool nonzero = true; nonzero;) {
        unsigned rem = 0;
        nonzero = false;
        for (size_t i = 0; i < len; i++) {
            unsigned cur = (rem << 8) | mag[i];
            mag[i] = (unsigned char)(cur / 10);
            rem = cur % 10;
            nonzero = nonzero || mag[i] != 0;
        }
        digits[count++] = (char)('0' + rem);
    }
    while (count <= pad) {
        digits[count++] = '0';
    }
    if (negative) {
        text[used++] = '-';
    }
    for (size_t i = count; i-- > 0;) {
        text[used++] = digits[i];
        if (pad > 0 && i == pad) {
            text[used++] = '.';
        }
    }
    for (size_t i = 0; i < zeros && !(count == 1 && digits[0] == '0'); i++) {
        text[used++] = '0';
    }
    text[used] = '\0';

done:
    free(mag);
    free(digits);
    return text;
}

/* b[0..n) = b * 10 + digit, big-endian; the caller sized b to hold it. */
static void mul_add(unsigned char *b, size_t n, unsigned digit)
{
    unsigned carry = digit;
    for (size_t i = n; i-- > 0;) {
        unsigned cur = b[i] * 10u + carry;
        b[i] = (unsigned char)cur;
        carry = cur >> 8;
    }
}

static tb_value_t *no_decimal(const char *text, size_t len, const char *why, char *errstr,
                              size_t errstr_size)
{
    snprintf(errstr, errstr_size, "decimal \"%.*s\" %s", (int)(len > 64 ? 64 : len), text,
             why);
    return NULL;
}

/* Reads an exponent ("E+3") at text[*i..len) into *exp. Returns 0 or -1. */
static int read_exponent(const char *text, size_t len, size_t *i, long *exp)
{
    bool negative = false;
    long value = 0;
    size_t start;
    if (*i < len && (text[*i] == '+' || text[*i] == '-')) {
        negative = text[(*i)++] == '-';
    }
    for (start = *i; *i < len && text[*i] >= '0' && text[*i] <= '9'; (*i)++) {
        if (value < 100000000) {
            value = value * 10 + (text[*i] - '0');
        }
    }
    *exp = negative ? -value : value;
    return *i > start ? 0 : -1;
}

tb_value_t *tb_decimal_parse(const char *text, size_t len, int scale, char *errstr,
                             size_t errstr_size)
{
    bool negative = len > 0 && text[0] == '-';
    size_t i = len > 0 && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    const char *digits = NULL; /* the significant digits, the point skipped */
    size_t count = 0;
    long decimals = -1; /* digits after the point; -1: no point */
    long exp = 0;

    size_t first = i;
    for (; i < len && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'); i++) {
        if (text[i] == '.') {
            if (decimals >= 0) {
                return no_decimal(text, len, "is not a number", errstr, errstr_size);
            }
            decimals = 0;
            continue;
        }
        decimals += decimals >= 0;
        count++;
    }
    digits = text + first;
    size_t span = i - first;
    if (count == 0 ||
        (i < len && ((text[i] != 'e' && text[i] != 'E') ||
                     (i++, read_exponent(text, len, &i, &exp) != 0) || i != len))) {
        return no_decimal(text, len, "is not a number", errstr, errstr_size);
    }
    /* value = digits * 10^(exp - decimals); unscaled = value * 10^scale */
    long shift = exp - (decimals > 0 ? decimals : 0) + scale;
    size_t kept = count; /* digits that make the unscaled value */
    if (shift < 0) {
        /* the digits dropped must be zeros */
        size_t drop = (size_t)-shift;
        size_t seen = 0;
        for (size_t j = span; j-- > 0 && seen < drop;) {
            if (digits[j] == '.') {
                continue;
            }
            if (digits[j] != '0') {
                char why[96];
                snprintf(why, sizeof(why), "has more decimals than the scale %d holds",
                         scale);
                return no_decimal(text, len, why, errstr, errstr_size);
            }
            seen++;
        }
        kept = drop >= count ? 0 : count - drop;
        shift = 0;
    }
    if ((long)kept + shift > TB_DECIMAL_MAX_DIGITS) {
        return no_decimal(text, len, "has too many digits", errstr, errstr_size);
    }
    /* 10^k < 256^(k/2 + 1); one byte more for the sign */
    size_t size = (kept + (size_t)shift) / 2 + 2;
    unsigned char *b = calloc(size, 1);
    if (b == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    for (size_t j = 0, used = 0; j < span && used < kept; j++) {
        if (digits[j] != '.') {
            mul_add(b, size, (unsigned)(digits[j] - '0'));
            used++;
        }
    }
    for (long j = 0; j < shift; j++) {
        mul_add(b, size, 0);
    }
    if (negative) {
        negate(b, size);
    }
    /* drop leading bytes that only repeat the sign */
    size_t start = 0;
    while (start + 1 < size && ((b[start] == 0x00 && (b[start + 1] & 0x80) == 0) ||
                                (b[start] == 0xff && (b[start + 1] & 0x80) != 0))) {
        start++;
    }
    tb_value_t *v = tb_value_bytes(b + start, size - start);
    free(b);
    if (v == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    }
    return v;
}
