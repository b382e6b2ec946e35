/*
 * JSON text straight into a growing buffer, as Jackson writes it
 * (tb_json_writer.h).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_json_text.h"
#include "connectors/converters/tb_json_writer.h"

/* -------------------------------------------------------------------------
 * Strings
 */

/* Whether s[0..n) is UTF-8 as jansson accepts it. */
static bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t step = tb_json_utf8_sequence(u + i, n - i);
        if (step == 0) {
            return false;
        }
        i += step;
    }
    return true;
}

/* The escape Jackson writes for byte ch, or NULL when it writes ch as is. */
static const char *escape(unsigned char ch, char u[7])
{
    static const char hex[] = "0123456789ABCDEF";
    switch (ch) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\b':
        return "\\b";
    case '\t':
        return "\\t";
    case '\n':
        return "\\n";
    case '\f':
        return "\\f";
    case '\r':
        return "\\r";
    default:
        break;
    }
    if (ch >= 0x20) {
        return NULL;
    }
    memcpy(u, "\\u00", 4);
    u[4] = hex[ch >> 4];
    u[5] = hex[ch & 15];
    u[6] = '\0';
    return u;
}

/* Whether byte ch needs escape(): a control character, a quote, a
 * backslash. */
static bool escaped(unsigned char ch)
{
    return ch < 0x20 || ch == '"' || ch == '\\';
}

void tb_json_put_string(tb_buf_t *b, const char *s, size_t n)
{
    size_t run = 0; /* s[run..i) is still to be copied as it is */
    tb_buf_append(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        char u[7];
        const char *esc =
            escaped((unsigned char)s[i]) ? escape((unsigned char)s[i], u) : NULL;
        if (esc != NULL) {
            tb_buf_append(b, s + run, i - run);
            tb_buf_append(b, esc, strlen(esc));
            run = i + 1;
        }
    }
    tb_buf_append(b, s + run, n - run);
    tb_buf_append(b, "\"", 1);
}

/* -------------------------------------------------------------------------
 * Numbers
 */

/* The decimal digits of u into end[-20..0), the first returned. */
static char *digits_of(uint64_t u, char *end)
{
    char *p = end;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    return p;
}

void tb_json_put_int(tb_buf_t *b, int64_t i)
{
    char text[24];
    char *end = text + sizeof(text);
    uint64_t magnitude = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    char *p = digits_of(magnitude, end);
    if (i < 0) {
        *--p = '-';
    }
    tb_buf_append(b, p, (size_t)(end - p));
}

/* The shortest digits of a positive d (DIGITS, no trailing zeros) and the
 * power of ten of the first: d = D.IGITS * 10^exp10. */
typedef struct {
    char digits[24];
    size_t n;
    int exp10;
} tb_shortest_t;

/* Powers of ten a double holds exactly. */
static const double exact_powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * The quick way, for most data: the least k for which m = round(d * 10^k)
 * reads back as d (m / 10^k, both exact, is then correctly rounded, as
 * strtod would round "m e-k"), while m < 2^50. Below 2^50 an integer that
 * reads back as d is within 1/8 of d * 10^k, and the product's rounding
 * error is at most 1/16, so rounding finds it when there is one: no
 * shorter text reads back as d (it would have been found at a smaller k),
 * and no other text of m's length does, so these are the digits the
 * search by precision below gives. False when it does not apply.
 */
static bool shortest_quick(double d, tb_shortest_t *out)
{
    for (size_t k = 0; k < sizeof(exact_powers) / sizeof(exact_powers[0]); k++) {
        double scaled = d * exact_powers[k];
        if (scaled >= 1125899906842624.0) { /* 2^50 */
            return false;
        }
        double m = nearbyint(scaled);
        if (m >= 1 && m / exact_powers[k] == d) {
            char text[24];
            char *end = text + sizeof(text);
            char *first = digits_of((uint64_t)m, end);
            size_t n = (size_t)(end - first);
            out->exp10 = (int)n - 1 - (int)k;
            while (n > 1 && first[n - 1] == '0') {
                n--;
            }
            memcpy(out->digits, first, n);
            out->digits[n] = '\0';
            out->n = n;
            return true;
        }
    }
    return false;
}

/* The sure way: the least precision whose correctly rounded digits read
 * back as d (as a float when is_float). */
static void shortest_search(double d, bool is_float, tb_shortest_t *out)
{
    char text[40];
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(text, sizeof(text), "%.*e", precision - 1, d);
        if (is_float ? strtof(text, NULL) == (float)d : strtod(text, NULL) == d) {
            break;
        }
    }
    size_t n = 0;
    char *e = strchr(text, 'e');
    for (char *p = text; p < e; p++) {
        if (*p != '.') {
            out->digits[n++] = *p;
        }
    }
    while (n > 1 && out->digits[n - 1] == '0') {
        n--;
    }
    out->digits[n] = '\0';
    out->n = n;
    out->exp10 = atoi(e + 1);
}

/* Java's Double.toString (Float.toString) of a finite d into text; returns
 * the length. */
static size_t java_real(double d, bool is_float, char text[48])
{
    size_t used = 0;
    tb_shortest_t s;
    double magnitude = fabs(d);

    if (d == 0) {
        strcpy(text, signbit(d) ? "-0.0" : "0.0");
        return strlen(text);
    }
    if (is_float || !shortest_quick(magnitude, &s)) {
        shortest_search(magnitude, is_float, &s);
    }
    if (d < 0) {
        text[used++] = '-';
    }
    if (magnitude < 1e-3 || magnitude >= 1e7) { /* outside Java's plain range */
        return used + (size_t)snprintf(text + used, 48 - used, "%c.%sE%d", s.digits[0],
                                       s.n > 1 ? s.digits + 1 : "0", s.exp10);
    }
    if (s.exp10 < 0) {
        text[used++] = '0';
        text[used++] = '.';
        for (int i = -1; i > s.exp10; i--) {
            text[used++] = '0';
        }
        memcpy(text + used, s.digits, s.n);
        return used + s.n;
    }
    for (int i = 0; i <= s.exp10; i++) {
        text[used++] = (size_t)i < s.n ? s.digits[i] : '0';
    }
    text[used++] = '.';
    if ((size_t)s.exp10 + 1 >= s.n) {
        text[used++] = '0';
    }
    for (size_t i = (size_t)s.exp10 + 1; i < s.n; i++) {
        text[used++] = s.digits[i];
    }
    return used;
}

void tb_json_put_real(tb_buf_t *b, double d, bool is_float)
{
    char text[48];
    size_t n = java_real(d, is_float, text);
    tb_buf_append(b, text, n);
}

/* -------------------------------------------------------------------------
 * Connect data
 */

static int fail(char *errstr, size_t errstr_size, const char *reason)
{
    snprintf(errstr, errstr_size, "%s", reason);
    return -1;
}

#define NOT_WRITABLE                                                                     \
    "Conversion error: the value cannot be written as JSON (not UTF-8, or not a "        \
    "finite number)"

static int write_text(tb_buf_t *b, const char *s, size_t n, char *errstr,
                      size_t errstr_size)
{
    if (!utf8_valid(s, n)) {
        return fail(errstr, errstr_size, NOT_WRITABLE);
    }
    tb_json_put_string(b, s, n);
    return 0;
}

static void write_base64(tb_buf_t *b, const char *data, size_t len)
{
    unsigned char chunk[4 * 64 + 1]; /* 64 groups of 3 bytes at a time */
    tb_buf_append(b, "\"", 1);
    for (size_t done = 0; done < len; done += 3 * 64) {
        size_t n = len - done < 3 * 64 ? len - done : 3 * 64;
        int encoded = EVP_EncodeBlock(chunk, (const unsigned char *)data + done, (int)n);
        tb_buf_append(b, (const char *)chunk, (size_t)encoded);
    }
    tb_buf_append(b, "\"", 1);
}

static int write_bytes(tb_buf_t *b, const tb_schema_t *schema, const tb_value_t *v,
                       tb_decimal_format_t decimals, char *errstr, size_t errstr_size)
{
    size_t len;
    const char *data = tb_value_text(v, &len);
    if (len > INT_MAX / 4 * 3) {
        return fail(errstr, errstr_size, NOT_WRITABLE);
    }
    if (decimals == TB_DECIMAL_BASE64 ||
        !tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
        write_base64(b, data, len);
        return 0;
    }
    char *digits = tb_decimal_text(data, len, tb_decimal_scale(schema));
    if (digits == NULL) {
        return fail(errstr, errstr_size, NOT_WRITABLE);
    }
    if (decimals == TB_DECIMAL_NUMERIC) {
        tb_buf_append(b, digits, strlen(digits));
    } else {
        tb_json_put_string(b, digits, strlen(digits));
    }
    free(digits);
    return 0;
}

bool tb_json_map_is_object(const tb_schema_t *schema, const tb_value_t *map)
{
    if (schema != NULL) {
        return tb_schema_type(tb_schema_key_schema(schema)) == TB_TYPE_STRING;
    }
    for (size_t i = 0; i < tb_value_size(map); i++) {
        const tb_value_t *k = tb_value_map_key(map, i);
        if (k == NULL || tb_value_type(k) != TB_TYPE_STRING) {
            return false;
        }
    }
    return true;
}

/* A key of a map written as an object: its string (a null the key schema's
 * default, or "null" as Connect's asText() of a null node). */
static int write_key(tb_buf_t *b, const tb_schema_t *ks, const tb_value_t *k,
                     char *errstr, size_t errstr_size)
{
    if (k == NULL && ks != NULL && tb_schema_default(ks) == NULL &&
        tb_schema_optional(ks)) {
        tb_buf_append(b, "\"null\"", 6);
        return 0;
    }
    return tb_json_write_value(b, ks, k, TB_DECIMAL_BASE64, errstr, errstr_size);
}

static int write_map(tb_buf_t *b, const tb_schema_t *schema, const tb_value_t *v,
                     tb_decimal_format_t decimals, char *errstr, size_t errstr_size)
{
    tb_schema_t *ks = schema != NULL ? tb_schema_key_schema(schema) : NULL;
    tb_schema_t *vs = schema != NULL ? tb_schema_value_schema(schema) : NULL;
    bool as_object = tb_json_map_is_object(schema, v);
    tb_buf_append(b, as_object ? "{" : "[", 1);
    for (size_t i = 0; i < tb_value_size(v); i++) {
        const tb_value_t *k = tb_value_map_key(v, i);
        if (i > 0) {
            tb_buf_append(b, ",", 1);
        }
        if (!as_object) {
            tb_buf_append(b, "[", 1);
        }
        if ((as_object
                 ? write_key(b, ks, k, errstr, errstr_size)
                 : tb_json_write_value(b, ks, k, decimals, errstr, errstr_size)) != 0) {
            return -1;
        }
        tb_buf_append(b, as_object ? ":" : ",", 1);
        if (tb_json_write_value(b, vs, tb_value_map_value(v, i), decimals, errstr,
                                errstr_size) != 0) {
            return -1;
        }
        if (!as_object) {
            tb_buf_append(b, "]", 1);
        }
    }
    tb_buf_append(b, as_object ? "}" : "]", 1);
    return 0;
}

static int write_struct(tb_buf_t *b, const tb_schema_t *schema, const tb_value_t *v,
                        tb_decimal_format_t decimals, char *errstr, size_t errstr_size)
{
    const tb_schema_t *ss = tb_value_struct_schema(v);
    if (schema != NULL && !tb_schema_equal(ss, schema)) {
        return fail(errstr, errstr_size, "Mismatching schema.");
    }
    size_t n = tb_schema_field_count(ss);
    tb_buf_append(b, "{", 1);
    for (size_t i = 0; i < n; i++) {
        const tb_field_t *f = tb_schema_field_at(ss, i);
        if (i > 0) {
            tb_buf_append(b, ",", 1);
        }
        tb_json_put_string(b, f->name, strlen(f->name));
        tb_buf_append(b, ":", 1);
        if (tb_json_write_value(b, f->schema, tb_value_struct_get_at(v, i), decimals,
                                errstr, errstr_size) != 0) {
            return -1;
        }
    }
    tb_buf_append(b, "}", 1);
    return 0;
}

static int write_array(tb_buf_t *b, const tb_schema_t *schema, const tb_value_t *v,
                       tb_decimal_format_t decimals, char *errstr, size_t errstr_size)
{
    const tb_schema_t *items = schema != NULL ? tb_schema_items(schema) : NULL;
    tb_buf_append(b, "[", 1);
    for (size_t i = 0; i < tb_value_size(v); i++) {
        if (i > 0) {
            tb_buf_append(b, ",", 1);
        }
        if (tb_json_write_value(b, items, tb_value_array_get(v, i), decimals, errstr,
                                errstr_size) != 0) {
            return -1;
        }
    }
    tb_buf_append(b, "]", 1);
    return 0;
}

double tb_json_float32_as_double(double f)
{
    char text[48];
    if (!isfinite(f)) {
        return f; /* no text: the writers refuse it */
    }
    text[java_real(f, true, text)] = '\0';
    return strtod(text, NULL);
}

int tb_json_value_to_write(const tb_schema_t *schema, const tb_value_t **v, char *errstr,
                           size_t errstr_size)
{
    if (*v == NULL && schema != NULL) {
        *v = tb_schema_default(schema);
        if (*v == NULL && !tb_schema_optional(schema)) {
            return fail(errstr, errstr_size,
                        "Conversion error: null value for field that is required and "
                        "has no default value");
        }
    }
    if (*v != NULL && schema != NULL && tb_schema_type(schema) != tb_value_type(*v)) {
        snprintf(errstr, errstr_size, "Invalid type for %s: class %s",
                 tb_type_name(tb_schema_type(schema)), tb_value_class_name(*v));
        return -1;
    }
    return 0;
}

int tb_json_write_value(tb_buf_t *b, const tb_schema_t *schema, const tb_value_t *v,
                        tb_decimal_format_t decimals, char *errstr, size_t errstr_size)
{
    if (tb_json_value_to_write(schema, &v, errstr, errstr_size) != 0) {
        return -1;
    }
    if (v == NULL) {
        tb_buf_append(b, "null", 4);
        return 0;
    }
    tb_type_t type = tb_value_type(v);
    size_t len;
    const char *text;
    switch (type) {
    case TB_TYPE_STRUCT:
        return write_struct(b, schema, v, decimals, errstr, errstr_size);
    case TB_TYPE_MAP:
        return write_map(b, schema, v, decimals, errstr, errstr_size);
    case TB_TYPE_ARRAY:
        return write_array(b, schema, v, decimals, errstr, errstr_size);
    case TB_TYPE_STRING:
        text = tb_value_text(v, &len);
        return write_text(b, text, len, errstr, errstr_size);
    case TB_TYPE_BYTES:
        return write_bytes(b, schema, v, decimals, errstr, errstr_size);
    case TB_TYPE_BOOLEAN:
        tb_buf_append(b, tb_value_boolean(v) ? "true" : "false",
                      tb_value_boolean(v) ? 4 : 5);
        return 0;
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        if (!isfinite(tb_value_double(v))) {
            return fail(errstr, errstr_size, NOT_WRITABLE);
        }
        tb_json_put_real(b,
                         type == TB_TYPE_FLOAT32
                             ? tb_json_float32_as_double(tb_value_double(v))
                             : tb_value_double(v),
                         false);
        return 0;
    default:
        tb_json_put_int(b, tb_value_int64(v));
        return 0;
    }
}
