/*
 * PostgreSQL types -> Connect schemas and values, as Debezium's PostgreSQL
 * connector maps them (tb_pg_types.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/postgres/tb_pg_more_types.h"
#include "connectors/postgres/tb_pg_types.h"
#include "connectors/postgres/tb_pg_unknown.h"
#include "core/tb_time.h"
#include "core/tb_text.h"

/* Built-in type OIDs (pg_type.dat). */
enum {
    OID_BOOL = 16,
    OID_BYTEA = 17,
    OID_CHAR = 18,
    OID_NAME = 19,
    OID_INT8 = 20,
    OID_INT2 = 21,
    OID_INT4 = 23,
    OID_TEXT = 25,
    OID_OID = 26,
    OID_JSON = 114,
    OID_XML = 142,
    OID_CIDR = 650,
    OID_FLOAT4 = 700,
    OID_FLOAT8 = 701,
    OID_MONEY = 790,
    OID_MACADDR = 829,
    OID_INET = 869,
    OID_BPCHAR = 1042,
    OID_VARCHAR = 1043,
    OID_DATE = 1082,
    OID_TIME = 1083,
    OID_TIMESTAMP = 1114,
    OID_TIMESTAMPTZ = 1184,
    OID_INTERVAL = 1186,
    OID_TIMETZ = 1266,
    OID_NUMERIC = 1700,
    OID_UUID = 2950,
    OID_JSONB = 3802,
    OID_MACADDR8 = 774,
    OID_INT4RANGE = 3904,
    OID_NUMRANGE = 3906,
    OID_TSRANGE = 3908,
    OID_TSTZRANGE = 3910,
    OID_DATERANGE = 3912,
    OID_INT8RANGE = 3926,
};

/* Built-in array types and their elements. */
static const uint32_t arrays[][2] = {
    {1000, OID_BOOL},    {1001, OID_BYTEA},       {1005, OID_INT2},      {1007, OID_INT4},
    {1009, OID_TEXT},    {1014, OID_BPCHAR},      {1015, OID_VARCHAR},   {1016, OID_INT8},
    {1021, OID_FLOAT4},  {1022, OID_FLOAT8},      {1115, OID_TIMESTAMP}, {1183, OID_TIME},
    {1182, OID_DATE},    {1185, OID_TIMESTAMPTZ}, {1231, OID_NUMERIC},   {2951, OID_UUID},
    {199, OID_JSON},     {3807, OID_JSONB},       {1002, OID_CHAR},      {1003, OID_NAME},
    {1040, OID_MACADDR}, {1041, OID_INET},        {651, OID_CIDR},       {1028, OID_OID},
};

#define VARIABLE_SCALE_DECIMAL "io.debezium.data.VariableScaleDecimal"
#define PRECISION_PARAMETER "connect.decimal.precision"

uint32_t tb_pg_array_elem(uint32_t array_oid)
{
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        if (arrays[i][0] == array_oid) {
            return arrays[i][1];
        }
    }
    return 0;
}

void tb_pg_type_release(tb_pg_type_t *t)
{
    free(t->enum_labels);
    free(t->name);
    free(t->base_name);
    free(t->elem_name);
    memset(t, 0, sizeof(*t));
}

tb_schema_t *tb_pg_named_schema(tb_type_t type, const char *name)
{
    tb_schema_t *s = tb_schema_new(type);
    if (s != NULL) {
        tb_schema_set_version(s, true, 1);
        if (tb_schema_set_name(s, name) != 0) {
            tb_schema_decref(s);
            return NULL;
        }
    }
    return s;
}

tb_schema_t *tb_pg_optional_schema(tb_type_t type)
{
    tb_schema_t *s = tb_schema_new(type);
    if (s != NULL) {
        tb_schema_set_optional(s, true);
    }
    return s;
}

/* The fractional digits of a time or timestamp column: its typmod, 6 when
 * it has none. */
static int time_precision(const tb_pg_type_t *t)
{
    return t->typmod >= 0 ? t->typmod : 6;
}

/* numeric(p, s) has typmod ((p << 16) | s) + 4; -1 when unconstrained. */
static bool numeric_constrained(const tb_pg_type_t *t, int *precision, int *scale)
{
    if (t->typmod < 4) {
        return false;
    }
    *precision = ((t->typmod - 4) >> 16) & 0xffff;
    *scale = (t->typmod - 4) & 0xffff;
    return true;
}

static tb_schema_t *numeric_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes)
{
    int precision, scale;
    if (modes->decimal == TB_PG_DECIMAL_DOUBLE) {
        return tb_schema_new(TB_TYPE_FLOAT64);
    }
    if (modes->decimal == TB_PG_DECIMAL_STRING) {
        return tb_schema_new(TB_TYPE_STRING);
    }
    if (!numeric_constrained(t, &precision, &scale)) {
        tb_schema_t *s = tb_pg_named_schema(TB_TYPE_STRUCT, VARIABLE_SCALE_DECIMAL);
        if (s == NULL || tb_schema_set_doc(s, "Variable scaled decimal") != 0 ||
            tb_schema_add_field(s, "scale", tb_schema_new(TB_TYPE_INT32)) != 0 ||
            tb_schema_add_field(s, "value", tb_schema_new(TB_TYPE_BYTES)) != 0) {
            tb_schema_decref(s);
            return NULL;
        }
        return s;
    }
    char text[16];
    tb_schema_t *s = tb_schema_decimal(scale);
    snprintf(text, sizeof(text), "%d", precision);
    if (s != NULL && tb_schema_set_parameter(s, PRECISION_PARAMETER, text) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

static tb_schema_t *time_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes)
{
    if (modes->time == TB_PG_TIME_CONNECT) {
        return tb_schema_time();
    }
    if (modes->time == TB_PG_TIME_ADAPTIVE && time_precision(t) <= 3) {
        return tb_pg_named_schema(TB_TYPE_INT32, "io.debezium.time.Time");
    }
    return tb_pg_named_schema(TB_TYPE_INT64, "io.debezium.time.MicroTime");
}

static tb_schema_t *timestamp_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes)
{
    if (modes->time == TB_PG_TIME_CONNECT) {
        return tb_schema_timestamp();
    }
    if (time_precision(t) <= 3) {
        return tb_pg_named_schema(TB_TYPE_INT64, "io.debezium.time.Timestamp");
    }
    return tb_pg_named_schema(TB_TYPE_INT64, "io.debezium.time.MicroTimestamp");
}

static tb_schema_t *enum_schema(const tb_pg_type_t *t)
{
    tb_schema_t *s = tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.data.Enum");
    if (s != NULL && tb_schema_set_parameter(s, "allowed", t->enum_labels) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

static tb_schema_t *scalar_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes)
{
    switch (t->oid) {
    case OID_BOOL:
        return tb_schema_new(TB_TYPE_BOOLEAN);
    case OID_INT2:
        return tb_schema_new(TB_TYPE_INT16);
    case OID_INT4:
        return tb_schema_new(TB_TYPE_INT32);
    case OID_INT8:
    case OID_OID:
        return tb_schema_new(TB_TYPE_INT64);
    case OID_FLOAT4:
        return tb_schema_new(TB_TYPE_FLOAT32);
    case OID_FLOAT8:
        return tb_schema_new(TB_TYPE_FLOAT64);
    case OID_CHAR:
    case OID_NAME:
    case OID_TEXT:
    case OID_BPCHAR:
    case OID_VARCHAR:
    case OID_INET:
    case OID_CIDR:
    case OID_MACADDR:
    case OID_MACADDR8:
    case OID_INT4RANGE:
    case OID_NUMRANGE:
    case OID_TSRANGE:
    case OID_TSTZRANGE:
    case OID_DATERANGE:
    case OID_INT8RANGE:
        return tb_schema_new(TB_TYPE_STRING);
    case OID_XML:
        return tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.data.Xml");
    case OID_JSON:
    case OID_JSONB:
        return tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.data.Json");
    case OID_UUID:
        return tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.data.Uuid");
    case OID_NUMERIC:
        return numeric_schema(t, modes);
    case OID_BYTEA:
        return tb_schema_new(modes->binary == TB_PG_BINARY_BYTES ? TB_TYPE_BYTES
                                                                 : TB_TYPE_STRING);
    case OID_DATE:
        return modes->time == TB_PG_TIME_CONNECT
                   ? tb_schema_date()
                   : tb_pg_named_schema(TB_TYPE_INT32, "io.debezium.time.Date");
    case OID_TIME:
        return time_schema(t, modes);
    case OID_TIMESTAMP:
        return timestamp_schema(t, modes);
    case OID_TIMESTAMPTZ:
        return tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.time.ZonedTimestamp");
    case OID_TIMETZ:
        return tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.time.ZonedTime");
    case OID_INTERVAL: /* interval.handling.mode=numeric, Debezium's default */
        return tb_pg_named_schema(TB_TYPE_INT64, "io.debezium.time.MicroDuration");
    case OID_MONEY: /* money.fraction.digits=2, Debezium's default */
        return modes->decimal == TB_PG_DECIMAL_PRECISE  ? tb_schema_decimal(2)
               : modes->decimal == TB_PG_DECIMAL_DOUBLE ? tb_schema_new(TB_TYPE_FLOAT64)
                                                        : tb_schema_new(TB_TYPE_STRING);
    default:
        return t->enum_labels != NULL ? enum_schema(t) : NULL;
    }
}

tb_pg_type_t tb_pg_array_element(const tb_pg_type_t *array)
{
    return (tb_pg_type_t){.oid = array->elem_oid,
                          .typmod = array->typmod,
                          .enum_labels = array->enum_labels,
                          .base_name = array->elem_name,
                          .opaque = array->opaque};
}

/* binary.handling.mode's schema, which Debezium gives its unknown types. */
static tb_schema_t *opaque_schema(const tb_pg_modes_t *modes)
{
    return tb_schema_new(modes->binary == TB_PG_BINARY_BYTES ? TB_TYPE_BYTES
                                                             : TB_TYPE_STRING);
}

/* An array's items, optional as Debezium's, but for an enum's and an
 * unknown type's, which its converter leaves required. */
static tb_schema_t *items_schema(const tb_pg_type_t *elem, const tb_pg_modes_t *modes)
{
    if (elem->opaque) {
        return opaque_schema(modes);
    }
    if (tb_pg_array_left_out(elem->oid)) {
        return NULL;
    }
    /* Debezium writes a time[]'s items as MicroTime whatever the mode */
    tb_schema_t *items =
        elem->oid == OID_TIME
            ? tb_pg_named_schema(TB_TYPE_INT64, "io.debezium.time.MicroTime")
            : scalar_schema(elem, modes);
    if (items != NULL) {
        tb_schema_set_optional(items, elem->enum_labels == NULL);
        return items;
    }
    return tb_pg_more_items_schema(elem, modes);
}

tb_schema_t *tb_pg_type_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes,
                               char *errstr, size_t errstr_size)
{
    tb_schema_t *s;
    if (t->elem_oid != 0) {
        tb_pg_type_t elem = tb_pg_array_element(t);
        tb_schema_t *items = items_schema(&elem, modes);
        s = items != NULL ? tb_schema_array(items) : NULL;
    } else if (t->opaque) {
        s = opaque_schema(modes);
    } else if ((s = scalar_schema(t, modes)) == NULL && t->enum_labels == NULL) {
        s = tb_pg_more_schema(t, modes);
    }
    if (s == NULL) {
        snprintf(errstr, errstr_size, "type %s (oid %u) is not supported",
                 t->name != NULL ? t->name : "?", (unsigned)t->oid);
    }
    return s;
}

/* ---------------------------------------------------------------------
 * Values
 */

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The two digits after the separator sep at p (as the server writes a
 * date's and a time's parts), or -1. */
static int two_digits(const char *p, char sep)
{
    if (p[0] != sep || !isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2])) {
        return -1;
    }
    return (p[1] - '0') * 10 + (p[2] - '0');
}

/* "YYYY-MM-DD" at *p (years of 4 or more digits); a trailing " BC" is
 * read by the caller. */
static bool parse_date(const char **p, int64_t *days)
{
    char *end;
    errno = 0;
    long long y = strtoll(*p, &end, 10);
    int m = two_digits(end, '-'), d = m >= 0 ? two_digits(end + 3, '-') : -1;
    /* PostgreSQL's dates end at 5874897 AD: a longer year is no date of its */
    if (errno != 0 || end == *p || y < 0 || y > 5874897 || m < 1 || m > 12 || d < 1 ||
        d > 31) {
        return false;
    }
    *p = end + 6;
    bool bc = strncmp(*p, " BC", 3) == 0;
    if (bc) {
        *p += 3;
        y = 1 - y; /* 1 BC is year 0 */
    }
    *days = tb_days_from_civil(y, m, d);
    return true;
}

/* "HH:MM:SS[.ffffff]" at *p, in microseconds. */
static bool parse_time(const char **p, int64_t *micros)
{
    if (!isdigit((unsigned char)(*p)[0]) || !isdigit((unsigned char)(*p)[1])) {
        return false;
    }
    int h = ((*p)[0] - '0') * 10 + ((*p)[1] - '0');
    int mi = two_digits(*p + 2, ':'), s = mi >= 0 ? two_digits(*p + 5, ':') : -1;
    if (s < 0) {
        return false;
    }
    *p += 8;
    int64_t fraction = 0;
    if (**p == '.') {
        int digits = 0;
        for ((*p)++; isdigit((unsigned char)**p); (*p)++) {
            if (digits++ < 6) {
                fraction = fraction * 10 + (**p - '0');
            }
        }
        for (; digits < 6; digits++) {
            fraction *= 10;
        }
    }
    *micros = ((int64_t)h * 3600 + mi * 60 + s) * 1000000 + fraction;
    return true;
}

/* An offset "+HH[:MM[:SS]]" at *p, in seconds east of UTC. */
static bool parse_offset(const char **p, int64_t *seconds)
{
    int sign = **p == '-' ? -1 : 1;
    int h = 0, m = 0, s = 0, used = 0;
    if ((**p != '+' && **p != '-') || sscanf(*p + 1, "%2d%n", &h, &used) != 1) {
        return false;
    }
    *p += 1 + used;
    if (sscanf(*p, ":%2d%n", &m, &used) == 1) {
        *p += used;
        if (sscanf(*p, ":%2d%n", &s, &used) == 1) {
            *p += used;
        }
    }
    *seconds = sign * (h * 3600 + m * 60 + s);
    return true;
}

/* "YYYY-MM-DD HH:MM:SS[.f][+HH[:MM]][ BC]" in microseconds since the epoch,
 * UTC. */
static bool parse_timestamp(const char *text, bool zoned, int64_t *micros)
{
    const char *p = text;
    int64_t days, time, offset = 0;
    if (!parse_date(&p, &days) || *p++ != ' ' || !parse_time(&p, &time) ||
        (zoned && !parse_offset(&p, &offset))) {
        return false;
    }
    if (strcmp(p, " BC") == 0) { /* the era follows the time */
        return false;            /* rare; refused rather than guessed */
    }
    /* the latest timestamps PostgreSQL holds lie beyond what microseconds
     * since 1970 in 64 bits can say: refused, never wrapped */
    int64_t day_micros;
    if (__builtin_mul_overflow(days, 86400000000LL, &day_micros) ||
        __builtin_add_overflow(day_micros, time - offset * 1000000, micros)) {
        return false;
    }
    return *p == '\0';
}

/* Debezium's ZonedTimestamp text of micros (UTC): ISO-8601 with exactly
 * width fractional digits, or as few as needed when width is 0. */
static void zoned_text(int64_t micros, int width, char *out, size_t size)
{
    int64_t days = floor_div(micros, 86400000000LL);
    int64_t rest = micros - days * 86400000000LL;
    int64_t y;
    int m, d;
    tb_civil_from_days(days, &y, &m, &d);
    int64_t secs = rest / 1000000;
    int fraction = (int)(rest % 1000000);
    int n = snprintf(out, size, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)y, m, d,
                     (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
    char digits[8];
    snprintf(digits, sizeof(digits), "%06d", fraction);
    int keep = width > 6 ? 6 : width;
    if (width <= 0) { /* Java's ISO formatter: as many digits as needed */
        keep = 6;
        while (keep > 0 && digits[keep - 1] == '0') {
            keep--;
        }
    }
    digits[keep] = '\0';
    snprintf(out + n, size - (size_t)n, "%s%sZ", keep > 0 ? "." : "", digits);
}

tb_value_t *tb_pg_binary_value(const tb_pg_modes_t *modes, const uint8_t *data, size_t n)
{
    static const char std[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static const char url[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if (modes->binary == TB_PG_BINARY_BYTES) {
        return tb_value_bytes(data, n);
    }
    char *text = malloc(n * 2 + 4 + n / 3 * 4 + 4);
    size_t len = 0;
    if (text == NULL) {
        return NULL;
    }
    if (modes->binary == TB_PG_BINARY_HEX) {
        for (size_t i = 0; i < n; i++) {
            len += (size_t)sprintf(text + len, "%02x", data[i]);
        }
    } else {
        const char *abc = modes->binary == TB_PG_BINARY_BASE64 ? std : url;
        for (size_t i = 0; i < n; i += 3) {
            uint32_t v = (uint32_t)data[i] << 16;
            v |= i + 1 < n ? (uint32_t)data[i + 1] << 8 : 0;
            v |= i + 2 < n ? data[i + 2] : 0;
            text[len++] = abc[v >> 18 & 63];
            text[len++] = abc[v >> 12 & 63];
            text[len++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
            text[len++] = i + 2 < n ? abc[v & 63] : '=';
        }
    }
    tb_value_t *v = tb_value_string(text, len);
    free(text);
    return v;
}

/* bytea's hex output, "\x0a1b". */
static tb_value_t *bytea_value(const tb_pg_modes_t *modes, const char *text, size_t len)
{
    if (len < 2 || text[0] != '\\' || text[1] != 'x' || len % 2 != 0) {
        return NULL;
    }
    size_t n = (len - 2) / 2;
    uint8_t *data = malloc(n + 1);
    for (size_t i = 0; data != NULL && i < n; i++) {
        unsigned int byte;
        if (sscanf(text + 2 + 2 * i, "%2x", &byte) != 1) {
            free(data);
            return NULL;
        }
        data[i] = (uint8_t)byte;
    }
    tb_value_t *v = data != NULL ? tb_pg_binary_value(modes, data, n) : NULL;
    free(data);
    return v;
}

#define DECIMAL_BYTES 512 /* numeric's 1000 digits of precision */

static tb_value_t *decimal_value(const tb_schema_t *schema, const char *text)
{
    uint8_t bytes[DECIMAL_BYTES];
    size_t n;
    if (tb_schema_type(schema) == TB_TYPE_STRUCT) { /* VariableScaleDecimal */
        const char *point = strchr(text, '.');
        int scale = point != NULL ? (int)strlen(point + 1) : 0;
        if (tb_text_decimal_parse(text, scale, bytes, sizeof(bytes), &n, 0) != 0) {
            return NULL;
        }
        tb_value_t *v = tb_value_struct((tb_schema_t *)schema);
        if (v == NULL ||
            tb_value_struct_set(v, "scale", tb_value_int(TB_TYPE_INT32, scale)) != 0 ||
            tb_value_struct_set(v, "value", tb_value_bytes(bytes, n)) != 0) {
            tb_value_free(v);
            return NULL;
        }
        return v;
    }
    int scale = atoi(tb_schema_parameter(schema, TB_DECIMAL_SCALE));
    if (tb_text_decimal_parse(text, scale, bytes, sizeof(bytes), &n, 0) != 0) {
        return NULL;
    }
    return tb_value_bytes(bytes, n);
}

static tb_value_t *integer_value(tb_type_t type, const char *text)
{
    char *end;
    errno = 0;
    long long i = strtoll(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' ? tb_value_int(type, i) : NULL;
}

static tb_value_t *real_value(tb_type_t type, const char *text)
{
    char *end;
    double d = strtod(text, &end);
    return end != text && *end == '\0' ? tb_value_float(type, d) : NULL;
}

/* Debezium's MicroDuration of an interval in ISO 8601 ("P1Y2M3DT4H5M6.5S",
 * IntervalStyle=iso_8601): months count 365.25 / 12 days. */
static bool parse_interval(const char *text, int64_t *micros)
{
    double fields[6] = {0}; /* years, months, days, hours, minutes, seconds */
    const char *p = text;
    bool time = false;
    if (*p++ != 'P') {
        return false;
    }
    while (*p != '\0') {
        if (*p == 'T') {
            time = true;
            p++;
            continue;
        }
        char *end;
        double v = strtod(p, &end);
        const char *units = time ? "HMS" : "YMD";
        const char *unit = end != p && *end != '\0' ? strchr(units, *end) : NULL;
        if (unit == NULL) {
            return false;
        }
        fields[(time ? 3 : 0) + (unit - units)] = v;
        p = end + 1;
    }
    double days = (fields[0] * 12 + fields[1]) * (365.25 / 12.0) + fields[2];
    double seconds = ((days * 24 + fields[3]) * 60 + fields[4]) * 60 + fields[5];
    *micros = (int64_t)(seconds * 1e6);
    return true;
}

/* Debezium's ZonedTime of "HH:MM:SS[.f]+HH[:MM]": the time in UTC, with as
 * many fractional digits as needed. */
static bool zoned_time(const char *text, char *out, size_t size)
{
    const char *p = text;
    int64_t micros, offset;
    if (!parse_time(&p, &micros) || !parse_offset(&p, &offset) || *p != '\0') {
        return false;
    }
    micros -= offset * 1000000;
    micros -= floor_div(micros, 86400000000LL) * 86400000000LL;
    char stamp[48];
    zoned_text(micros, 0, stamp, sizeof(stamp)); /* 1970-01-01THH:MM:SS[.f]Z */
    snprintf(out, size, "%s", stamp + 11);
    return true;
}

/* money in the C locale ("-$1,234.56"), without its symbol and separators. */
static bool money_text(const char *text, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = text; *p != '\0' && n + 1 < size; p++) {
        if (*p != '$' && *p != ',') {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return n > 0;
}

/* The value of a scalar's NUL-terminated text; NULL when it is not one. */
static tb_value_t *scalar_value(const tb_pg_type_t *t, const tb_schema_t *schema,
                                const tb_pg_modes_t *modes, const char *text, size_t len)
{
    const char *name = tb_schema_name(schema);
    tb_type_t type = tb_schema_type(schema);
    const char *p = text;
    int64_t n;
    if (t->opaque) { /* Debezium's unknown type: its text's bytes */
        return tb_pg_binary_value(modes, (const uint8_t *)text, len);
    }
    switch (t->oid) {
    case OID_BOOL:
        return len == 1 && (text[0] == 't' || text[0] == 'f')
                   ? tb_value_bool(text[0] == 't')
                   : NULL;
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
    case OID_OID:
        return integer_value(type, text);
    case OID_FLOAT4:
    case OID_FLOAT8:
        return real_value(type, text);
    case OID_NUMERIC:
        if (type == TB_TYPE_STRING) {
            return tb_value_string(text, len);
        }
        if (type == TB_TYPE_FLOAT64) {
            return real_value(type, text);
        }
        return decimal_value(schema, text);
    case OID_BYTEA:
        return bytea_value(modes, text, len);
    case OID_DATE:
        return parse_date(&p, &n) && *p == '\0' ? tb_value_int(TB_TYPE_INT32, n) : NULL;
    case OID_TIME:
        if (!parse_time(&p, &n) || *p != '\0') {
            return NULL;
        }
        return type == TB_TYPE_INT32 ? tb_value_int(TB_TYPE_INT32, n / 1000)
                                     : tb_value_int(TB_TYPE_INT64, n);
    case OID_TIMESTAMP:
        if (!parse_timestamp(text, false, &n)) {
            return NULL;
        }
        return strcmp(name, "io.debezium.time.MicroTimestamp") == 0
                   ? tb_value_int(TB_TYPE_INT64, n)
                   : tb_value_int(TB_TYPE_INT64, floor_div(n, 1000));
    case OID_TIMESTAMPTZ: {
        char iso[48];
        if (!parse_timestamp(text, true, &n)) {
            return NULL;
        }
        zoned_text(n, time_precision(t), iso, sizeof(iso));
        return tb_value_string(iso, strlen(iso));
    }
    case OID_TIMETZ: {
        char iso[48];
        return zoned_time(text, iso, sizeof(iso)) ? tb_value_string(iso, strlen(iso))
                                                  : NULL;
    }
    case OID_INTERVAL:
        return parse_interval(text, &n) ? tb_value_int(TB_TYPE_INT64, n) : NULL;
    case OID_MONEY: {
        char plain[64];
        if (!money_text(text, plain, sizeof(plain))) {
            return NULL;
        }
        if (type == TB_TYPE_BYTES) {
            return decimal_value(schema, plain);
        }
        return type == TB_TYPE_FLOAT64 ? real_value(type, plain)
                                       : tb_value_string(plain, strlen(plain));
    }
    default:
        return tb_value_string(text, len);
    }
}

/* The next element of a one-dimensional array literal at *p into a new
 * malloc'd string, NULL for NULL; *quoted tells a quoted "NULL". Returns
 * false at a malformed literal. */
static bool array_element(const char **p, char **out, bool *is_null)
{
    const char *s = *p;
    size_t cap = strlen(s) + 1, n = 0;
    char *buf = malloc(cap);
    bool quoted = *s == '"';
    if (buf == NULL || *s == '{') {
        free(buf);
        return false; /* nested: multi-dimensional arrays are not mapped */
    }
    if (quoted) {
        for (s++; *s != '"'; s++) {
            if (*s == '\0') {
                free(buf);
                return false;
            }
            if (*s == '\\' && s[1] != '\0') {
                s++;
            }
            buf[n++] = *s;
        }
        s++;
    } else {
        while (*s != ',' && *s != '}' && *s != '\0') {
            buf[n++] = *s++;
        }
    }
    buf[n] = '\0';
    *is_null = !quoted && strcmp(buf, "NULL") == 0;
    *p = s;
    *out = buf;
    return true;
}

static tb_value_t *array_value(const tb_pg_type_t *t, const tb_schema_t *schema,
                               const tb_pg_modes_t *modes, const char *text)
{
    tb_pg_type_t elem = tb_pg_array_element(t);
    tb_schema_t *items = tb_schema_items(schema);
    tb_value_t *array = tb_value_array();
    const char *p = text;
    if (array == NULL || *p++ != '{') {
        tb_value_free(array);
        return NULL;
    }
    while (*p != '}') {
        char *item;
        bool is_null;
        if (!array_element(&p, &item, &is_null)) {
            tb_value_free(array);
            return NULL;
        }
        tb_value_t *v = NULL;
        if (!is_null && !tb_pg_more_value(&elem, items, item, &v)) {
            v = scalar_value(&elem, items, modes, item, strlen(item));
        }
        /* a NULL among required items (an enum's): Debezium cannot convert
         * the array */
        bool bad = is_null ? !tb_schema_optional(items) : v == NULL;
        free(item);
        if (bad || tb_value_array_append(array, v) != 0 || (*p != ',' && *p != '}')) {
            tb_value_free(array);
            return NULL;
        }
        p += *p == ',';
    }
    if (p[1] != '\0') { /* text after the closing brace */
        tb_value_free(array);
        return NULL;
    }
    return array;
}

int tb_pg_type_value(const tb_pg_type_t *t, const tb_schema_t *schema,
                     const tb_pg_modes_t *modes, const char *text, size_t len,
                     tb_value_t **out, char *errstr, size_t errstr_size)
{
    char *copy = malloc(len + 1); /* the wire's text is not NUL-terminated */
    if (copy == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (t->elem_oid != 0) {
        *out = array_value(t, schema, modes, copy);
    } else if (t->opaque || !tb_pg_more_value(t, schema, copy, out)) {
        *out = scalar_value(t, schema, modes, copy, len);
    }
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "cannot read '%.64s' as a value of type %s", copy,
                 t->name != NULL ? t->name : "?");
    }
    free(copy);
    return *out != NULL ? 0 : -1;
}

/* ---------------------------------------------------------------------
 * Defaults
 */

/* The text standing for a generated default of type oid, or NULL when
 * Debezium gives the type no default. */
static const char *placeholder(const tb_pg_type_t *t)
{
    switch (t->oid) {
    case OID_BOOL:
        return "false";
    case OID_BPCHAR:
    case OID_VARCHAR:
    case OID_TEXT:
    case OID_XML:
        return "";
    case OID_NUMERIC:
    case OID_FLOAT4:
    case OID_FLOAT8:
        return "0.0";
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
        return "0";
    case OID_JSON:
    case OID_JSONB:
        return "{}";
    case OID_UUID:
        return "00000000-0000-0000-0000-000000000000";
    case OID_DATE:
        return "1970-01-01";
    case OID_TIME:
        return "00:00:00";
    case OID_TIMESTAMP:
        return "1970-01-01 00:00:00";
    case OID_TIMESTAMPTZ:
        return "1970-01-01 00:00:00+00";
    default:
        return t->enum_labels != NULL ? "" : NULL;
    }
}

/* Whether expr calls a function ("nextval('s'::regclass)", "now()") or
 * names a current date or time, as Debezium tells generated defaults. */
static bool generated(const char *expr)
{
    static const char *const current[] = {"current_timestamp", "current_time",
                                          "current_date",      "localtime",
                                          "localtimestamp",    NULL};
    for (size_t i = 0; current[i] != NULL; i++) {
        if (strcasecmp(expr, current[i]) == 0) {
            return true;
        }
    }
    const char *p = expr + (*expr == '(');
    const char *name = p;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == '.') {
        p++;
    }
    return p > name && *p == '(' && strchr(p, ')') != NULL;
}

tb_value_t *tb_pg_type_default(const tb_pg_type_t *t, const tb_schema_t *schema,
                               const tb_pg_modes_t *modes, const char *expr)
{
    const char *generated_text = placeholder(t);
    char errstr[128];
    char text[256];
    tb_value_t *v = NULL;
    while (isspace((unsigned char)*expr)) {
        expr++;
    }
    if (generated_text == NULL || t->elem_oid != 0 ||
        tb_schema_type(schema) == TB_TYPE_STRUCT) {
        return NULL; /* no default, as Debezium's (a struct cannot be one) */
    }
    if (generated(expr)) {
        if (t->enum_labels != NULL) {
            return NULL; /* only an enum's literal is its default */
        }
        snprintf(text, sizeof(text), "%s", generated_text);
    } else if (strchr(expr, '\'') != NULL) { /* 'value'::type: the quoted text */
        const char *open = strchr(expr, '\'');
        const char *close = strchr(open + 1, '\'');
        if (close == NULL) {
            return NULL;
        }
        snprintf(text, sizeof(text), "%.*s", (int)(close - open - 1), open + 1);
    } else if (strncmp(expr, "NULL::", 6) == 0) {
        return NULL;
    } else {
        snprintf(text, sizeof(text), "%s", expr);
        text[strcspn(text, " ")] = '\0';
    }
    if (t->oid == OID_BOOL) { /* true and false, not the output form t and f */
        return tb_value_bool(strcasecmp(text, "true") == 0);
    }
    if (tb_pg_type_value(t, schema, modes, text, strlen(text), &v, errstr,
                         sizeof(errstr)) != 0) {
        return NULL;
    }
    return v;
}
