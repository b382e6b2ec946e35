/*
 * Cast: casts the whole key or value ("int64"), or fields of a struct or
 * map ("a:int32,b:string"), to int8, int16, int32, int64, float32,
 * float64, boolean or string, from those types or bytes (to string only,
 * as base64), as Connect's Cast does: numbers narrow as Java's casts do,
 * strings are read as Java's parseInt and parseDouble read them, and
 * Date, Time, Timestamp and Decimal values are cast as the number they
 * stand for, or to string as Connect writes them. A null passes unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/transforms/tb_date_format.h"
#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_java_number.h"
#include "connectors/transforms/tb_transform.h"

#define OUTPUT_TYPES "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"
#define INPUT_TYPES                                                                      \
    "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
#define MS_PER_DAY 86400000LL

typedef struct {
    tb_side_t side;
    bool whole; /* the spec is one type, for the whole data */
    tb_type_t whole_type;
    json_t *casts; /* field -> type (an integer) */
    bool replace_null;
    tb_schema_cache_t cache;
} tb_cast_t;

/*
 * The spec
 */

/* The type called name (any case, spaces around), or -1. */
static int type_named(const char *name, size_t len)
{
    while (len > 0 && name[0] == ' ') {
        name++;
        len--;
    }
    while (len > 0 && name[len - 1] == ' ') {
        len--;
    }
    for (int t = TB_TYPE_INT8; t <= TB_TYPE_STRUCT; t++) {
        const char *known = tb_type_name((tb_type_t)t);
        if (strlen(known) == len && strncasecmp(known, name, len) == 0) {
            return t;
        }
    }
    return -1;
}

/* Parses spec into casts (field -> type, "" for the whole data). Returns
 * 0, or -1 with Connect's message. */
static int parse_spec(const json_t *spec, json_t *casts, char *message, size_t size)
{
    size_t i;
    json_t *item;
    bool whole = false;
    if (json_array_size(spec) == 0) {
        snprintf(message, size, "Must specify at least one field to cast.");
        return -1;
    }
    json_array_foreach (spec, i, item) {
        const char *mapping = json_string_value(item);
        const char *colon = strchr(mapping, ':');
        const char *type = colon != NULL ? colon + 1 : mapping;
        if (colon != NULL && strchr(type, ':') != NULL) {
            snprintf(message, size, "Invalid cast mapping: %s (field:type, or a type)",
                     mapping);
            return -1;
        }
        int t = type_named(type, strlen(type));
        if (t < 0) {
            snprintf(message, size, "Invalid type found in casting spec: %s", type);
            return -1;
        }
        if (t > TB_TYPE_STRING || t == TB_TYPE_BYTES) {
            snprintf(
                message, size,
                "Cast transformation does not support casting to %s; supported types "
                "are " OUTPUT_TYPES,
                tb_type_name((tb_type_t)t));
            return -1;
        }
        whole = whole || colon == NULL;
        char field[256];
        snprintf(field, sizeof(field), "%.*s", colon != NULL ? (int)(colon - mapping) : 0,
                 mapping);
        if (casts != NULL) {
            json_object_set_new(casts, field, json_integer(t));
        }
    }
    if (whole && json_array_size(spec) > 1) {
        snprintf(
            message, size,
            "Cast transformations that specify a type to cast the entire value to may "
            "ony specify a single cast in their spec");
        return -1;
    }
    return 0;
}

/* Cast's keys, filled from cast_keys. */
typedef struct {
    const json_t *spec;
    bool replace_null;
} tb_cast_keys_t;

static const char *cast_check(const void *config, char *message, size_t message_size)
{
    const tb_cast_keys_t *keys = config;
    return parse_spec(keys->spec, NULL, message, message_size) != 0 ? "spec" : NULL;
}

static void cast_destroy(void *state)
{
    tb_cast_t *c = state;
    if (c != NULL) {
        json_decref(c->casts);
        tb_schema_cache_clear(&c->cache);
        free(c);
    }
}

static void *cast_create(const void *config, tb_side_t side, char *errstr,
                         size_t errstr_size)
{
    const tb_cast_keys_t *keys = config;
    tb_cast_t *c = calloc(1, sizeof(*c));
    if (c == NULL || (c->casts = json_object()) == NULL ||
        parse_spec(keys->spec, c->casts, errstr, errstr_size) != 0) {
        cast_destroy(c);
        return NULL;
    }
    c->side = side;
    c->replace_null = keys->replace_null;
    json_t *whole = json_object_get(c->casts, "");
    c->whole = whole != NULL;
    c->whole_type = (tb_type_t)json_integer_value(whole);
    return c;
}

/*
 * Values
 */

/* A value as Java holds it for Cast: a number (integral or not), a
 * boolean, a string, bytes or a date. */
typedef enum {
    SRC_INT,
    SRC_REAL,
    SRC_BOOL,
    SRC_STRING,
    SRC_BYTES,
    SRC_DATE
} tb_src_kind_t;

typedef struct {
    tb_src_kind_t kind;
    int64_t i; /* SRC_INT, SRC_BOOL; SRC_DATE: ms */
    double d;  /* SRC_REAL */
    bool is_float;
    const char *text; /* SRC_STRING, SRC_BYTES */
    size_t len;
    /* A Decimal: unscaled (SRC_INT's i) and scale, or no Decimal. */
    bool decimal;
    int scale;
} tb_src_t;

/* The unscaled value of a Decimal's bytes, when 8 bytes hold it. */
static bool unscaled_of(const unsigned char *b, size_t len, int64_t *out)
{
    if (len == 0 || len > 8) {
        return false;
    }
    uint64_t u = (b[0] & 0x80) ? UINT64_MAX : 0;
    for (size_t i = 0; i < len; i++) {
        u = (u << 8) | b[i];
    }
    *out = (int64_t)u;
    return true;
}

/* Reads v under schema (NULL: schemaless) as Cast sees it. -1 with
 * Connect's message for a type Cast cannot read. */
static int source_of(const tb_schema_t *schema, const tb_value_t *v, bool to_string,
                     tb_src_t *src, char *errstr, size_t errstr_size)
{
    tb_type_t type = schema != NULL ? tb_schema_type(schema) : tb_value_type(v);
    *src = (tb_src_t){0};
    if (type > TB_TYPE_BYTES) {
        snprintf(errstr, errstr_size,
                 "Cast transformation does not support casting from %s; supported types "
                 "are " INPUT_TYPES,
                 tb_type_name(type));
        return -1;
    }
    if (schema != NULL && tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
        size_t len;
        const char *b = tb_value_text(v, &len);
        const char *scale = tb_schema_parameter(schema, TB_DECIMAL_SCALE);
        src->decimal = true;
        src->kind = SRC_INT;
        src->scale = scale != NULL ? atoi(scale) : 0;
        if (!unscaled_of((const unsigned char *)b, len, &src->i)) {
            snprintf(
                errstr, errstr_size,
                "Cast of a Decimal whose unscaled value needs more than 64 bits is not "
                "supported");
            return -1;
        }
        return 0;
    }
    bool date = schema != NULL && tb_field_is_date(schema);
    switch (tb_value_type(v)) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
        src->kind = date && to_string ? SRC_DATE : SRC_INT;
        src->i = tb_value_int64(v);
        if (date && tb_schema_is_logical(schema, TB_LOGICAL_DATE) && to_string) {
            src->i *= MS_PER_DAY;
        }
        break;
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        src->kind = SRC_REAL;
        src->d = tb_value_double(v);
        src->is_float = tb_value_type(v) == TB_TYPE_FLOAT32;
        break;
    case TB_TYPE_BOOLEAN:
        src->kind = SRC_BOOL;
        src->i = tb_value_boolean(v);
        break;
    default:
        src->kind = tb_value_type(v) == TB_TYPE_STRING ? SRC_STRING : SRC_BYTES;
        src->text = tb_value_text(v, &src->len);
        break;
    }
    return 0;
}

/* 10^n modulo 2^64. */
static uint64_t pow10_wrapped(int n)
{
    uint64_t p = 1;
    while (n-- > 0) {
        p *= 10;
    }
    return p;
}

/* The double a source number stands for. */
static double real_of(const tb_src_t *src)
{
    if (src->kind == SRC_REAL) {
        return src->d;
    }
    if (src->decimal) {
        return (double)((long double)src->i / powl(10.0L, src->scale));
    }
    return (double)src->i;
}

/* The integer a source number stands for, as Java's Number.xValue() for
 * type: a double through (int) for the narrow types, (long) for INT64; a
 * Decimal truncated, its low 64 bits (BigInteger.longValue). */
static int64_t integer_of(const tb_src_t *src, tb_type_t type)
{
    if (src->kind == SRC_REAL) {
        return tb_java_narrow(type, type == TB_TYPE_INT64 ? tb_java_d2l(src->d)
                                                          : tb_java_d2i(src->d));
    }
    if (src->decimal) {
        int64_t i = src->scale >= 19 ? 0
                    : src->scale >= 0
                        ? src->i / (int64_t)pow10_wrapped(src->scale)
                        : (int64_t)((uint64_t)src->i * pow10_wrapped(-src->scale));
        return tb_java_narrow(type, i);
    }
    return tb_java_narrow(type, src->i);
}

/* Connect's Values.dateFormatFor: a time of day before the first day's
 * end, a date at midnight, a timestamp otherwise. */
static void date_text(int64_t ms, char *out, size_t size)
{
    const char *pattern = ms < MS_PER_DAY        ? "HH:mm:ss.SSS'Z'"
                          : ms % MS_PER_DAY == 0 ? "yyyy-MM-dd"
                                                 : "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'";
    tb_date_format(pattern, ms, out, size);
}

/* Java's toString of a source as Cast writes it. NULL on no memory. */
static tb_value_t *string_of(const tb_src_t *src, char *errstr, size_t errstr_size)
{
    char text[128];
    switch (src->kind) {
    case SRC_STRING:
        return tb_value_string(src->text, src->len);
    case SRC_BYTES: {
        char *b64 = malloc(4 * ((src->len + 2) / 3) + 1);
        if (b64 == NULL) {
            return NULL;
        }
        EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)src->text,
                        (int)src->len);
        tb_value_t *v = tb_field_string(b64);
        free(b64);
        return v;
    }
    case SRC_DATE:
        date_text(src->i, text, sizeof(text));
        return tb_field_string(text);
    case SRC_BOOL:
        return tb_field_string(src->i ? "true" : "false");
    case SRC_INT:
        if (src->decimal) {
            tb_java_decimal_text(src->i, src->scale, text, sizeof(text));
        } else {
            snprintf(text, sizeof(text), "%lld", (long long)src->i);
        }
        return tb_field_string(text);
    default:
        break;
    }
    if (!isfinite(src->d)) {
        return tb_field_string(isnan(src->d) ? "NaN"
                               : src->d > 0  ? "Infinity"
                                             : "-Infinity");
    }
    /* Java's Float.toString and Double.toString, as the converters write
     * numbers */
    tb_type_t type = src->is_float ? TB_TYPE_FLOAT32 : TB_TYPE_FLOAT64;
    tb_schema_t *schema = tb_schema_new(type);
    tb_value_t *number = tb_value_float(type, src->d);
    void *out = NULL;
    size_t len = 0;
    tb_value_t *v = NULL;
    if (schema != NULL && number != NULL &&
        tb_typed_to_plugin(schema, number, &out, &len, errstr, errstr_size) == 0) {
        v = tb_value_string(out, len);
    }
    free(out);
    tb_value_free(number);
    tb_schema_decref(schema);
    return v;
}

/* Casts v (under schema; NULL: schemaless) to target into *out, as
 * Connect's Cast.castValueToType. -1 with Connect's message. */
static int cast_value(const tb_schema_t *schema, const tb_value_t *v, tb_type_t target,
                      tb_value_t **out, char *errstr, size_t errstr_size)
{
    tb_src_t src;
    *out = NULL;
    if (v == NULL) {
        return 0;
    }
    if (source_of(schema, v, target == TB_TYPE_STRING, &src, errstr, errstr_size) != 0) {
        return -1;
    }
    if (target == TB_TYPE_STRING) {
        *out = string_of(&src, errstr, errstr_size);
        return *out != NULL ? 0 : tb_field_oom(errstr, errstr_size);
    }
    if (src.kind == SRC_BYTES) {
        snprintf(errstr, errstr_size, "Unexpected type in Cast transformation: class [B");
        return -1;
    }
    if (src.kind == SRC_STRING) {
        int64_t i = 0;
        double d = 0;
        int rc = target == TB_TYPE_BOOLEAN   ? 0
                 : target >= TB_TYPE_FLOAT32 ? tb_java_parse_real(src.text, &d)
                                             : tb_java_parse_int(src.text, target, &i);
        if (rc != 0) {
            snprintf(errstr, errstr_size,
                     "Value (%s) was out of range for requested data type", src.text);
            return -1;
        }
        *out = target == TB_TYPE_BOOLEAN
                   ? tb_value_bool(strcasecmp(src.text, "true") == 0)
               : target >= TB_TYPE_FLOAT32
                   ? tb_value_float(target, target == TB_TYPE_FLOAT32 ? (float)d : d)
                   : tb_value_int(target, i);
    } else if (target == TB_TYPE_BOOLEAN) {
        bool b = src.kind == SRC_BOOL ? src.i != 0 : integer_of(&src, TB_TYPE_INT64) != 0;
        *out = tb_value_bool(b);
    } else if (target >= TB_TYPE_FLOAT32) {
        double d = src.kind == SRC_BOOL ? (double)src.i : real_of(&src);
        *out = tb_value_float(target, target == TB_TYPE_FLOAT32 ? (float)d : d);
    } else {
        *out =
            tb_value_int(target, src.kind == SRC_BOOL ? src.i : integer_of(&src, target));
    }
    return *out != NULL ? 0 : tb_field_oom(errstr, errstr_size);
}

/*
 * Schemas
 */

static bool is_logical(const tb_schema_t *s)
{
    return tb_schema_is_logical(s, TB_LOGICAL_DECIMAL) || tb_field_is_date(s);
}

/* A schema of type with from's optional flag and its default cast. */
static tb_schema_t *cast_schema(const tb_schema_t *from, tb_schema_t *to, char *errstr,
                                size_t errstr_size)
{
    tb_value_t *def = NULL;
    if (to == NULL) {
        tb_field_oom(errstr, errstr_size);
        return NULL;
    }
    tb_schema_set_optional(to, tb_schema_optional(from));
    if (cast_value(from, tb_schema_default(from), tb_schema_type(to), &def, errstr,
                   errstr_size) != 0) {
        tb_schema_decref(to);
        return NULL;
    }
    tb_schema_set_default(to, def);
    return to;
}

/* The schema Cast makes of a struct schema: cast fields of their type.
 * NULL with errstr. */
static tb_schema_t *fields_schema(const tb_cast_t *c, const tb_schema_t *s, char *errstr,
                                  size_t errstr_size)
{
    tb_schema_t *out = tb_field_struct_like(s);
    if (out == NULL) {
        tb_field_oom(errstr, errstr_size);
    }
    for (size_t i = 0; out != NULL && i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        json_t *type = json_object_get(c->casts, f->name);
        tb_schema_t *fs =
            type == NULL ? tb_schema_incref(f->schema)
                         : cast_schema(f->schema,
                                       tb_schema_new((tb_type_t)json_integer_value(type)),
                                       errstr, errstr_size);
        if (fs == NULL || tb_schema_add_field(out, f->name, fs) != 0) {
            if (fs != NULL) {
                tb_field_oom(errstr, errstr_size);
            }
            tb_schema_decref(out);
            return NULL;
        }
    }
    return out;
}

/* The schema of a whole-value cast of s; NULL with errstr. Connect copies
 * s's name too; a logical type's name on another type would make data no
 * converter can write, so that one is dropped. */
static tb_schema_t *whole_schema(const tb_cast_t *c, const tb_schema_t *s, char *errstr,
                                 size_t errstr_size)
{
    tb_schema_t *to = tb_schema_new(c->whole_type);
    if (to != NULL && !is_logical(s) && tb_field_copy_basics(s, to) != 0) {
        tb_schema_decref(to);
        to = NULL;
    }
    return cast_schema(s, to, errstr, errstr_size);
}

/*
 * Apply
 */

static int cast_schemaless(tb_cast_t *c, tb_record_t *record, const tb_value_t *value,
                           char *errstr, size_t errstr_size)
{
    tb_value_t *out = NULL;
    if (c->whole) {
        if (cast_value(NULL, value, c->whole_type, &out, errstr, errstr_size) != 0) {
            return -1;
        }
        tb_record_set(record, c->side, NULL, out);
        return 0;
    }
    if (tb_field_structured(record, c->side, "cast types", errstr, errstr_size) == NULL) {
        return -1;
    }
    if ((out = tb_value_copy(value)) == NULL) {
        return tb_field_oom(errstr, errstr_size);
    }
    const char *name;
    json_t *type;
    json_object_foreach (c->casts, name, type) {
        tb_value_t *cast = NULL;
        if (cast_value(NULL, tb_value_map_get_string(value, name),
                       (tb_type_t)json_integer_value(type), &cast, errstr,
                       errstr_size) != 0) {
            tb_value_free(out);
            return -1;
        }
        if (tb_value_map_put(out, tb_field_string(name), cast) != 0) {
            tb_value_free(out);
            return tb_field_oom(errstr, errstr_size);
        }
    }
    tb_record_set(record, c->side, NULL, out);
    return 0;
}

static int cast_apply(void *state, tb_record_t *record, char *errstr, size_t errstr_size)
{
    tb_cast_t *c = state;
    tb_record_side_t *s = tb_record_typed(record, c->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->value == NULL) {
        return 0;
    }
    if (s->schema == NULL) {
        return cast_schemaless(c, record, s->value, errstr, errstr_size);
    }
    if (!c->whole && tb_schema_type(s->schema) != TB_TYPE_STRUCT) {
        snprintf(errstr, errstr_size, "Cannot list fields on non-struct type");
        return -1;
    }
    tb_schema_t *schema = tb_schema_cache_get(&c->cache, s->schema);
    if (schema == NULL &&
        (schema = c->whole ? whole_schema(c, s->schema, errstr, errstr_size)
                           : fields_schema(c, s->schema, errstr, errstr_size)) == NULL) {
        return -1;
    }
    tb_schema_cache_put(&c->cache, s->schema, schema);
    tb_value_t *out = NULL;
    if (c->whole) {
        if (cast_value(s->schema, s->value, c->whole_type, &out, errstr, errstr_size) !=
            0) {
            tb_schema_decref(schema);
            return -1;
        }
        return tb_field_set_checked(record, c->side, schema, out, errstr, errstr_size);
    }
    if (tb_field_structured(record, c->side, "cast types", errstr, errstr_size) == NULL) {
        tb_schema_decref(schema);
        return -1;
    }
    if ((out = tb_value_struct(schema)) == NULL) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    for (size_t i = 0; i < tb_schema_field_count(s->schema); i++) {
        const tb_field_t *f = tb_schema_field_at(s->schema, i);
        const tb_value_t *v = tb_field_get(s->value, f, c->replace_null);
        json_t *type = json_object_get(c->casts, f->name);
        tb_value_t *cast = NULL;
        if (type == NULL) {
            cast = tb_value_copy(v);
        } else if (cast_value(f->schema, v, (tb_type_t)json_integer_value(type), &cast,
                              errstr, errstr_size) != 0) {
            tb_value_free(out);
            tb_schema_decref(schema);
            return -1;
        }
        tb_value_struct_set_at(out, i, cast);
    }
    return tb_field_set_checked(record, c->side, schema, out, errstr, errstr_size);
}

static const tb_config_def_t cast_keys[] = {
    {.name = "spec",
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation =
         "The casts: field:type pairs for fields of a struct or map, or one type for "
         "the whole key or value. Types: int8, int16, int32, int64, float32, float64, "
         "boolean and string; bytes cast to string only.",
     .field = TB_CONFIG_AT(tb_cast_keys_t, spec)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_cast_keys_t),
};

static const tb_config_table_t cast_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "Cast", cast_keys);

TB_SIDED_CLASSES(tb_cast, "Cast", cast_table, tb_cast_keys_t, cast_check, cast_create,
                 cast_destroy, cast_apply, NULL);
