/*
 * jdbc_types.c - Connect's types as columns and statement parameters.
 *
 * Column types follow Confluent's dialects for PostgreSQL; SQLite gets its
 * storage classes, and TEXT for Date, Time and Timestamp, which are written
 * as ISO 8601 text ("2024-05-01", "13:45:00.250", "2024-05-01 13:45:00.250")
 * so that SQLite's date functions read them. A Decimal is written as its
 * exact decimal text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"
#include "core/tb_time.h"

/* Whether schema (NULL: schemaless) is the logical type name. */
static bool is_logical(const tb_schema_t *schema, const char *name)
{
    return schema != NULL && tb_schema_is_logical(schema, name);
}

static int decimal_scale(const tb_schema_t *schema)
{
    const char *scale = tb_schema_parameter(schema, TB_DECIMAL_SCALE);
    return scale != NULL ? atoi(scale) : 0;
}

const char *tb_jdbc_pg_type(const tb_schema_t *schema)
{
    if (is_logical(schema, TB_LOGICAL_DECIMAL)) {
        return "DECIMAL";
    }
    if (is_logical(schema, TB_LOGICAL_DATE)) {
        return "DATE";
    }
    if (is_logical(schema, TB_LOGICAL_TIME)) {
        return "TIME";
    }
    if (is_logical(schema, TB_LOGICAL_TIMESTAMP)) {
        return "TIMESTAMP";
    }
    switch (tb_schema_type(schema)) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
        return "SMALLINT";
    case TB_TYPE_INT32:
        return "INT";
    case TB_TYPE_INT64:
        return "BIGINT";
    case TB_TYPE_FLOAT32:
        return "REAL";
    case TB_TYPE_FLOAT64:
        return "DOUBLE PRECISION";
    case TB_TYPE_BOOLEAN:
        return "BOOLEAN";
    case TB_TYPE_STRING:
        return "TEXT";
    case TB_TYPE_BYTES:
        return "BYTEA";
    default:
        return NULL;
    }
}

const char *tb_jdbc_sqlite_type(const tb_schema_t *schema)
{
    if (is_logical(schema, TB_LOGICAL_DECIMAL)) {
        return "NUMERIC";
    }
    if (is_logical(schema, TB_LOGICAL_DATE) || is_logical(schema, TB_LOGICAL_TIME) ||
        is_logical(schema, TB_LOGICAL_TIMESTAMP)) {
        return "TEXT";
    }
    switch (tb_schema_type(schema)) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
    case TB_TYPE_BOOLEAN:
        return "INTEGER";
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        return "REAL";
    case TB_TYPE_STRING:
        return "TEXT";
    case TB_TYPE_BYTES:
        return "BLOB";
    default:
        return NULL;
    }
}

char *tb_jdbc_decimal_text(const unsigned char *bytes, size_t len, int scale)
{
    bool negative = len > 0 && (bytes[0] & 0x80) != 0;
    unsigned char *mag = malloc(len + 1);
    /* digits, least significant first: at most 3 per byte, plus the scale */
    size_t cap = len * 3 + (scale > 0 ? (size_t)scale : 0) + 4;
    char *digits = malloc(cap);
    size_t nd = 0;
    char *out = NULL;
    if (mag == NULL || digits == NULL || scale < -1000 || scale > 1000) {
        goto done;
    }
    memcpy(mag, bytes, len);
    if (negative) { /* two's complement: invert and add one */
        int carry = 1;
        for (size_t i = len; i-- > 0;) {
            int v = (unsigned char)~mag[i] + carry;
            mag[i] = (unsigned char)v;
            carry = v >> 8;
        }
    }
    for (bool zero = false; !zero;) {
        unsigned rem = 0;
        zero = true;
        for (size_t i = 0; i < len; i++) {
            unsigned cur = (rem << 8) | mag[i];
            mag[i] = (unsigned char)(cur / 10);
            rem = cur % 10;
            zero = zero && mag[i] == 0;
        }
        digits[nd++] = (char)('0' + rem);
    }
    while (nd > 1 && digits[nd - 1] == '0') {
        nd--;
    }
    while (scale > 0 && nd <= (size_t)scale) { /* 0.00x */
        digits[nd++] = '0';
    }
    size_t zeros = scale < 0 ? (size_t)-scale : 0;
    out = malloc(nd + zeros + 3);
    if (out == NULL) {
        goto done;
    }
    size_t o = 0;
    if (negative) {
        out[o++] = '-';
    }
    for (size_t i = nd; i-- > 0;) {
        out[o++] = digits[i];
        if (scale > 0 && i == (size_t)scale) {
            out[o++] = '.';
        }
    }
    for (size_t i = 0; i < zeros; i++) {
        out[o++] = '0';
    }
    out[o] = '\0';
done:
    free(mag);
    free(digits);
    return out;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

/* Writes date, time and timestamp text into a new string in p. */
static int text_param(tb_jdbc_param_t *p, const char *fmt_kind, int64_t v)
{
    char buf[64];
    int64_t year;
    int month, day;
    if (strcmp(fmt_kind, "date") == 0) {
        tb_civil_from_days(v, &year, &month, &day);
        snprintf(buf, sizeof(buf), "%04lld-%02d-%02d", (long long)year, month, day);
    } else if (strcmp(fmt_kind, "time") == 0) {
        int64_t ms = ((v % 86400000) + 86400000) % 86400000;
        snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03d", (int)(ms / 3600000),
                 (int)(ms / 60000 % 60), (int)(ms / 1000 % 60), (int)(ms % 1000));
    } else {
        int64_t days = floor_div(v, 86400000);
        int64_t ms = v - days * 86400000;
        tb_civil_from_days(days, &year, &month, &day);
        snprintf(buf, sizeof(buf), "%04lld-%02d-%02d %02d:%02d:%02d.%03d",
                 (long long)year, month, day, (int)(ms / 3600000), (int)(ms / 60000 % 60),
                 (int)(ms / 1000 % 60), (int)(ms % 1000));
    }
    p->owned = strdup(buf);
    p->kind = TB_JDBC_P_TEXT;
    p->data = p->owned;
    p->len = p->owned != NULL ? strlen(p->owned) : 0;
    return p->owned != NULL ? 0 : -1;
}

int tb_jdbc_param_of(const tb_schema_t *schema, const tb_value_t *value,
                     const tb_zone_t *zone, tb_jdbc_param_t *out, char *reason,
                     size_t reason_size)
{
    *out = (tb_jdbc_param_t){.kind = TB_JDBC_P_NULL};
    tb_type_t type = schema != NULL ? tb_schema_type(schema) : tb_value_type(value);
    if (!tb_type_is_primitive(type)) {
        snprintf(reason, reason_size, "a %s has no column type", tb_type_name(type));
        return -1;
    }
    if (value == NULL) {
        return 0;
    }
    int rc = 0;
    if (is_logical(schema, TB_LOGICAL_DECIMAL)) {
        size_t len = 0;
        const char *bytes = tb_value_text(value, &len);
        out->kind = TB_JDBC_P_TEXT;
        out->owned = tb_jdbc_decimal_text((const unsigned char *)bytes, len,
                                          decimal_scale(schema));
        out->data = out->owned;
        out->len = out->owned != NULL ? strlen(out->owned) : 0;
        rc = out->owned != NULL ? 0 : -1;
    } else if (is_logical(schema, TB_LOGICAL_DATE)) {
        rc = text_param(out, "date", tb_value_int64(value));
    } else if (is_logical(schema, TB_LOGICAL_TIME)) {
        rc = text_param(out, "time", tb_value_int64(value));
    } else if (is_logical(schema, TB_LOGICAL_TIMESTAMP)) {
        int64_t ms = tb_value_int64(value);
        int64_t local = ms + (int64_t)tb_zone_offset(zone, floor_div(ms, 1000)) * 1000;
        rc = text_param(out, "timestamp", local);
    } else {
        switch (type) {
        case TB_TYPE_BOOLEAN:
            out->kind = TB_JDBC_P_BOOL;
            out->i = tb_value_boolean(value);
            break;
        case TB_TYPE_FLOAT32:
        case TB_TYPE_FLOAT64:
            out->kind = TB_JDBC_P_DOUBLE;
            out->d = tb_value_double(value);
            break;
        case TB_TYPE_STRING:
            out->kind = TB_JDBC_P_TEXT;
            out->data = tb_value_text(value, &out->len);
            break;
        case TB_TYPE_BYTES:
            out->kind = TB_JDBC_P_BLOB;
            out->data = tb_value_text(value, &out->len);
            break;
        default: /* the integers */
            out->kind = TB_JDBC_P_INT;
            out->i = tb_value_int64(value);
            break;
        }
    }
    if (rc != 0) {
        snprintf(reason, reason_size, "out of memory");
    }
    return rc;
}

void tb_jdbc_param_clear(tb_jdbc_param_t *p)
{
    free(p->owned);
    *p = (tb_jdbc_param_t){0};
}
