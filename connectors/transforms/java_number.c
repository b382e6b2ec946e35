/*
 * Java's number semantics for the transforms (tb_java_number.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_java_number.h"

bool tb_java_number_text(const char *s)
{
    size_t digits = 0;
    s += *s == '+' || *s == '-';
    for (; isdigit((unsigned char)*s); s++) {
        digits++;
    }
    if (*s == '.') {
        for (s++; isdigit((unsigned char)*s); s++) {
            digits++;
        }
    }
    if (digits > 0 && (*s == 'e' || *s == 'E')) {
        s++;
        s += *s == '+' || *s == '-';
        if (!isdigit((unsigned char)*s)) {
            return false;
        }
        while (isdigit((unsigned char)*s)) {
            s++;
        }
    }
    return digits > 0 && *s == '\0';
}

int64_t tb_java_d2l(double d)
{
    if (isnan(d)) {
        return 0;
    }
    if (d >= 9223372036854775807.0) {
        return INT64_MAX;
    }
    if (d <= -9223372036854775808.0) {
        return INT64_MIN;
    }
    return (int64_t)d;
}

int64_t tb_java_d2i(double d)
{
    if (isnan(d)) {
        return 0;
    }
    if (d >= 2147483647.0) {
        return INT32_MAX;
    }
    if (d <= -2147483648.0) {
        return INT32_MIN;
    }
    return (int32_t)d;
}

int64_t tb_java_narrow(tb_type_t type, int64_t i)
{
    switch (type) {
    case TB_TYPE_INT8:
        return (int8_t)i;
    case TB_TYPE_INT16:
        return (int16_t)i;
    case TB_TYPE_INT32:
        return (int32_t)i;
    default:
        return i;
    }
}

int tb_java_parse_int(const char *text, tb_type_t type, int64_t *out)
{
    static const int64_t max[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    const char *p = text + (text[0] == '+' || text[0] == '-');
    if (*p < '0' || *p > '9' || strspn(p, "0123456789") != strlen(p)) {
        return -1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    int64_t limit = max[type - TB_TYPE_INT8];
    if (errno != 0 || v > limit || v < -limit - 1) {
        return -1;
    }
    *out = v;
    return 0;
}

int tb_java_parse_real(const char *text, double *out)
{
    char buf[512];
    size_t len = strlen(text);
    while (len > 0 && (unsigned char)text[len - 1] <= ' ') {
        len--;
    }
    while (len > 0 && (unsigned char)text[0] <= ' ') {
        text++;
        len--;
    }
    if (len > 1 && strchr("fFdD", text[len - 1]) != NULL) {
        len--;
    }
    snprintf(buf, sizeof(buf), "%.*s", (int)len, text);
    const char *unsigned_part = buf + (buf[0] == '+' || buf[0] == '-');
    if (strcmp(unsigned_part, "NaN") == 0 || strcmp(unsigned_part, "Infinity") == 0) {
        *out = strtod(buf, NULL);
        return 0;
    }
    if (!tb_java_number_text(buf)) {
        return -1;
    }
    *out = strtod(buf, NULL);
    return 0;
}

void tb_java_decimal_text(int64_t unscaled, int scale, char *out, size_t size)
{
    char digits[32];
    snprintf(
        digits, sizeof(digits), "%llu",
        (unsigned long long)(unscaled < 0 ? -(uint64_t)unscaled : (uint64_t)unscaled));
    const char *sign = unscaled < 0 ? "-" : "";
    int n = (int)strlen(digits);
    int adjusted = -scale + (n - 1);
    if (scale == 0) {
        snprintf(out, size, "%s%s", sign, digits);
    } else if (scale > 0 && adjusted >= -6 && n > scale) {
        snprintf(out, size, "%s%.*s.%s", sign, n - scale, digits, digits + n - scale);
    } else if (scale > 0 && adjusted >= -6) {
        snprintf(out, size, "%s0.%.*s%s", sign, scale - n, "000000", digits);
    } else {
        snprintf(out, size, "%s%c%s%s%s%d", sign, digits[0], n > 1 ? "." : "", digits + 1,
                 adjusted >= 0 ? "E+" : "E", adjusted);
    }
}
