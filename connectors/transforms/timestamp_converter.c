/*
 * TimestampConverter: converts a timestamp (the whole key or value, or
 * its field `field`) between a formatted string (format, a
 * SimpleDateFormat pattern, in UTC), a Unix time (INT64 in unix.precision)
 * and Connect's Date, Time and Timestamp. The source kind is read from the
 * schema (the logical types, STRING, INT64), or without one from the
 * value (a string or a 64-bit integer). Without a schema, Date, Time and
 * Timestamp come out as milliseconds since the epoch (INT64): Connect
 * makes a java.util.Date there, which no converter writes schemaless.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_date_format.h"
#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_transform.h"

#define PURPOSE "converting timestamp formats"
#define MS_PER_DAY 86400000LL

typedef enum { TS_STRING = 0, TS_UNIX, TS_DATE, TS_TIME, TS_TIMESTAMP } tb_ts_kind_t;

static const char *const kinds[] = {"string", "unix", "Date", "Time", "Timestamp", NULL};
static const char *const precisions[] = {"nanoseconds", "microseconds", "milliseconds",
                                         "seconds", NULL};

/* TimestampConverter's keys, filled from ts_keys. */
typedef struct {
    const char *field;
    int target;    /* tb_ts_kind_t, the index in kinds */
    int precision; /* the index in precisions */
    const char *format;
    bool replace_null;
} tb_ts_keys_t;

typedef struct {
    tb_side_t side;
    const char *field; /* the config's; "" : the whole key or value */
    tb_ts_kind_t target;
    const char *format;      /* the config's */
    int64_t unit_per_ms_num; /* unix time = ms * num / den */
    int64_t unit_per_ms_den;
    bool replace_null;
    tb_schema_cache_t cache;
} tb_ts_converter_t;

static const char *ts_check(const void *config, char *message, size_t message_size)
{
    const tb_ts_keys_t *keys = config;
    const char *format = keys->format;
    char reason[128];
    if (keys->target == TS_STRING && strspn(format, " \t\r\n") == strlen(format)) {
        snprintf(message, message_size,
                 "TimestampConverter requires format option to be specified when using "
                 "string timestamps");
        return "format";
    }
    if (tb_date_format_check(format, reason, sizeof(reason)) != 0) {
        snprintf(message, message_size,
                 "TimestampConverter requires a SimpleDateFormat-compatible pattern for "
                 "string timestamps: %s (%s)",
                 format, reason);
        return "format";
    }
    return NULL;
}

static void ts_destroy(void *state)
{
    tb_ts_converter_t *t = state;
    if (t != NULL) {
        tb_schema_cache_clear(&t->cache);
        free(t);
    }
}

static void *ts_create(const void *config, tb_side_t side, char *errstr,
                       size_t errstr_size)
{
    static const int64_t num[] = {1000000, 1000, 1, 1};
    static const int64_t den[] = {1, 1, 1, 1000};
    const tb_ts_keys_t *keys = config;
    tb_ts_converter_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        tb_field_oom(errstr, errstr_size);
        return NULL;
    }
    t->side = side;
    t->field = keys->field;
    t->format = keys->format;
    t->target = (tb_ts_kind_t)keys->target;
    t->unit_per_ms_num = num[keys->precision];
    t->unit_per_ms_den = den[keys->precision];
    t->replace_null = keys->replace_null;
    return t;
}

/* The kind of timestamp schema s holds, or -1 with Connect's message. */
static int kind_of_schema(const tb_schema_t *s, char *errstr, size_t errstr_size)
{
    if (tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP)) {
        return TS_TIMESTAMP;
    }
    if (tb_schema_is_logical(s, TB_LOGICAL_DATE)) {
        return TS_DATE;
    }
    if (tb_schema_is_logical(s, TB_LOGICAL_TIME)) {
        return TS_TIME;
    }
    if (tb_schema_type(s) == TB_TYPE_STRING) {
        return TS_STRING;
    }
    if (tb_schema_type(s) == TB_TYPE_INT64) {
        return TS_UNIX;
    }
    const char *name = tb_schema_name(s);
    snprintf(errstr, errstr_size,
             "Schema Schema{%s%s%s} does not correspond to a known timestamp type format",
             name != NULL ? name : "", name != NULL ? ":" : "",
             tb_type_name(tb_schema_type(s)));
    return -1;
}

/* The schema of the target kind. */
static tb_schema_t *target_schema(tb_ts_kind_t kind, bool optional)
{
    tb_schema_t *s = kind == TS_STRING ? tb_schema_new(TB_TYPE_STRING)
                     : kind == TS_UNIX ? tb_schema_new(TB_TYPE_INT64)
                     : kind == TS_DATE ? tb_schema_date()
                     : kind == TS_TIME ? tb_schema_time()
                                       : tb_schema_timestamp();
    if (s != NULL) {
        tb_schema_set_optional(s, optional);
    }
    return s;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Converts v of kind (-1: inferred from the value) into *out. */
static int convert(const tb_ts_converter_t *t, const tb_value_t *v, int kind,
                   bool schemaless, tb_value_t **out, char *errstr, size_t errstr_size)
{
    int64_t ms = 0;
    *out = NULL;
    if (v == NULL) {
        return 0;
    }
    if (kind < 0) {
        kind = tb_value_type(v) == TB_TYPE_INT64    ? TS_UNIX
               : tb_value_type(v) == TB_TYPE_STRING ? TS_STRING
                                                    : -1;
        if (kind < 0) {
            snprintf(errstr, errstr_size,
                     "TimestampConverter does not support class %s objects as timestamps",
                     tb_value_class_name(v));
            return -1;
        }
    }
    switch (kind) {
    case TS_STRING:
        if (tb_value_type(v) != TB_TYPE_STRING) {
            snprintf(errstr, errstr_size,
                     "Expected string timestamp to be a String, but found class %s",
                     tb_value_class_name(v));
            return -1;
        }
        if (t->format[0] == '\0' ||
            tb_date_parse(t->format, tb_value_text(v, NULL), &ms) != 0) {
            snprintf(errstr, errstr_size,
                     "Could not parse timestamp: value (%s) does not match pattern (%s)",
                     tb_value_text(v, NULL), t->format);
            return -1;
        }
        break;
    case TS_UNIX:
        if (tb_value_type(v) != TB_TYPE_INT64) {
            snprintf(errstr, errstr_size,
                     "Expected Unix timestamp to be a Long, but found class %s",
                     tb_value_class_name(v));
            return -1;
        }
        ms = tb_value_int64(v) * t->unit_per_ms_den / t->unit_per_ms_num;
        break;
    case TS_DATE:
        ms = tb_value_int64(v) * MS_PER_DAY;
        break;
    default: /* Time and Timestamp hold milliseconds */
        ms = tb_value_int64(v);
        break;
    }
    char text[256];
    switch (t->target) {
    case TS_STRING:
        tb_date_format(t->format, ms, text, sizeof(text));
        *out = tb_field_string(text);
        break;
    case TS_UNIX:
        *out = tb_value_int(TB_TYPE_INT64, ms * t->unit_per_ms_num / t->unit_per_ms_den);
        break;
    case TS_DATE:
        *out = schemaless
                   ? tb_value_int(TB_TYPE_INT64, floor_div(ms, MS_PER_DAY) * MS_PER_DAY)
                   : tb_value_int(TB_TYPE_INT32, floor_div(ms, MS_PER_DAY));
        break;
    case TS_TIME:
        ms -= floor_div(ms, MS_PER_DAY) * MS_PER_DAY;
        *out = tb_value_int(schemaless ? TB_TYPE_INT64 : TB_TYPE_INT32, ms);
        break;
    default:
        *out = tb_value_int(TB_TYPE_INT64, ms);
        break;
    }
    return *out != NULL ? 0 : tb_field_oom(errstr, errstr_size);
}

/* The struct st (under the converted schema) with field converted. */
static int convert_struct(const tb_ts_converter_t *t, const tb_value_t *st,
                          tb_schema_t *schema, tb_value_t **out, char *errstr,
                          size_t errstr_size)
{
    const tb_schema_t *from = tb_value_struct_schema(st);
    *out = tb_value_struct(schema);
    if (*out == NULL) {
        return tb_field_oom(errstr, errstr_size);
    }
    for (size_t i = 0; i < tb_schema_field_count(from); i++) {
        const tb_field_t *f = tb_schema_field_at(from, i);
        const tb_value_t *v = tb_field_get(st, f, t->replace_null);
        tb_value_t *converted = NULL;
        if (strcmp(f->name, t->field) != 0) {
            converted = tb_value_copy(v);
        } else {
            int kind = kind_of_schema(f->schema, errstr, errstr_size);
            if (kind < 0 ||
                convert(t, v, kind, false, &converted, errstr, errstr_size) != 0) {
                tb_value_free(*out);
                *out = NULL;
                return -1;
            }
        }
        tb_value_struct_set_at(*out, i, converted);
    }
    return 0;
}

/* The struct schema s with the field's schema converted. Its default, if
 * any, is not kept: a struct default under the schema it belongs to would
 * hold a reference to that schema (Connect converts it). NULL on no
 * memory. */
static tb_schema_t *converted_schema(const tb_ts_converter_t *t, const tb_schema_t *s)
{
    tb_schema_t *schema = tb_field_struct_like(s);
    for (size_t i = 0; schema != NULL && i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        tb_schema_t *fs = strcmp(f->name, t->field) == 0
                              ? target_schema(t->target, tb_schema_optional(f->schema))
                              : tb_schema_incref(f->schema);
        if (fs == NULL || tb_schema_add_field(schema, f->name, fs) != 0) {
            tb_schema_decref(schema);
            return NULL;
        }
    }
    if (schema != NULL) {
        tb_schema_set_optional(schema, tb_schema_optional(s));
    }
    return schema;
}

static int with_schema(tb_ts_converter_t *t, tb_record_t *record, tb_record_side_t *s,
                       char *errstr, size_t errstr_size)
{
    tb_value_t *out = NULL;
    if (t->field[0] == '\0') {
        int kind = kind_of_schema(s->schema, errstr, errstr_size);
        tb_schema_t *schema = target_schema(t->target, tb_schema_optional(s->schema));
        if (kind < 0 || schema == NULL ||
            convert(t, s->value, kind, false, &out, errstr, errstr_size) != 0) {
            tb_schema_decref(schema);
            return kind < 0 || schema != NULL ? -1 : tb_field_oom(errstr, errstr_size);
        }
        return tb_field_set_checked(record, t->side, schema, out, errstr, errstr_size);
    }
    if (s->value != NULL && (s = tb_field_structured(record, t->side, PURPOSE, errstr,
                                                     errstr_size)) == NULL) {
        return -1;
    }
    if (tb_schema_type(s->schema) != TB_TYPE_STRUCT) {
        snprintf(errstr, errstr_size, "Cannot list fields on non-struct type");
        return -1;
    }
    tb_schema_t *schema = tb_schema_cache_get(&t->cache, s->schema);
    if (schema == NULL && (schema = converted_schema(t, s->schema)) == NULL) {
        return tb_field_oom(errstr, errstr_size);
    }
    tb_schema_cache_put(&t->cache, s->schema, schema);
    if (s->value != NULL &&
        convert_struct(t, s->value, schema, &out, errstr, errstr_size) != 0) {
        tb_schema_decref(schema);
        return -1;
    }
    return tb_field_set_checked(record, t->side, schema, out, errstr, errstr_size);
}

static int ts_apply(void *state, tb_record_t *record, char *errstr, size_t errstr_size)
{
    tb_ts_converter_t *t = state;
    tb_record_side_t *s = tb_record_typed(record, t->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->schema != NULL) {
        return with_schema(t, record, s, errstr, errstr_size);
    }
    tb_value_t *out = NULL;
    if (s->value == NULL || t->field[0] == '\0') {
        if (convert(t, s->value, -1, true, &out, errstr, errstr_size) != 0) {
            return -1;
        }
        tb_record_set(record, t->side, NULL, out);
        return 0;
    }
    if (tb_field_structured(record, t->side, PURPOSE, errstr, errstr_size) == NULL) {
        return -1;
    }
    tb_value_t *converted = NULL;
    if (convert(t, tb_value_map_get_string(s->value, t->field), -1, true, &converted,
                errstr, errstr_size) != 0) {
        return -1;
    }
    if ((out = tb_value_copy(s->value)) == NULL ||
        tb_value_map_put(out, tb_field_string(t->field), converted) != 0) {
        tb_value_free(out);
        return tb_field_oom(errstr, errstr_size);
    }
    tb_record_set(record, t->side, NULL, out);
    return 0;
}

static const tb_config_def_t ts_keys[] = {
    {.name = "field",
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .documentation =
         "The field holding the timestamp; empty for the whole key or value.",
     .field = TB_CONFIG_AT(tb_ts_keys_t, field)},
    {.name = "target.type",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .one_of = kinds,
     .documentation =
         "What the timestamp becomes: string, unix, Date, Time or Timestamp.",
     .field = TB_CONFIG_ENUM_AT(tb_ts_keys_t, target)},
    {.name = "format",
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "The java.text.SimpleDateFormat pattern (in UTC) that strings are read "
         "and written with; required for target.type=string or string sources.",
     .field = TB_CONFIG_AT(tb_ts_keys_t, format)},
    {.name = "unix.precision",
     .type = TB_CONFIG_STRING,
     .default_value = "milliseconds",
     .importance = TB_IMPORTANCE_LOW,
     .one_of = precisions,
     .documentation =
         "The unit of Unix times read and written: seconds, milliseconds, "
         "microseconds or nanoseconds (finer than milliseconds is truncated).",
     .field = TB_CONFIG_ENUM_AT(tb_ts_keys_t, precision)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_ts_keys_t),
};

static const tb_config_table_t ts_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "TimestampConverter", ts_keys);

TB_SIDED_CLASSES(tb_timestamp_converter, "TimestampConverter", ts_table, tb_ts_keys_t,
                 ts_check, ts_create, ts_destroy, ts_apply, NULL);
