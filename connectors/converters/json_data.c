/*
 * Connect's JSON form of schemas and values (tb_json_data.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_reader.h"
#include "connectors/converters/tb_json_text.h"
#include "connectors/converters/tb_json_writer.h"
#include "core/tb_base64.h"

/* JsonConverter's names of the types, in tb_type_t order. */
static const char *const json_type_names[] = {
    "int8",    "int16",  "int32", "int64", "float", "double",
    "boolean", "string", "bytes", "array", "map",   "struct",
};

#define TYPE_COUNT (sizeof(json_type_names) / sizeof(json_type_names[0]))

/* -------------------------------------------------------------------------
 * Schemas
 */

static int set_metadata(tb_schema_t *s, const json_t *json, char *errstr,
                        size_t errstr_size)
{
    const json_t *version = json_object_get(json, "version");
    const json_t *parameters = json_object_get(json, "parameters");
    const char *key;
    json_t *value;

    tb_schema_set_optional(s, json_is_true(json_object_get(json, "optional")));
    if (json_is_integer(version)) {
        tb_schema_set_version(s, true, (int)json_integer_value(version));
    }
    if (tb_schema_set_name(s, json_string_value(json_object_get(json, "name"))) != 0 ||
        tb_schema_set_doc(s, json_string_value(json_object_get(json, "doc"))) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    json_object_foreach ((json_t *)parameters, key, value) {
        if (!json_is_string(value)) {
            snprintf(errstr, errstr_size, "Schema parameters must have string values.");
            return -1;
        }
        tb_schema_set_parameter(s, key, json_string_value(value));
    }
    const json_t *dflt = json_object_get(json, "default");
    if (dflt != NULL && !json_is_null(dflt)) {
        tb_value_t *v = NULL;
        if (tb_json_value_parse(s, dflt, &v, errstr, errstr_size) != 0) {
            return -1;
        }
        tb_schema_set_default(s, v);
    }
    return 0;
}

static tb_schema_t *struct_schema_parse(const json_t *json, char *errstr,
                                        size_t errstr_size)
{
    const json_t *fields = json_object_get(json, "fields");
    tb_schema_t *s = NULL;
    size_t i;
    json_t *field;

    if (!json_is_array(fields)) {
        snprintf(errstr, errstr_size,
                 "Struct schema's \"fields\" argument is not an array.");
        return NULL;
    }
    s = tb_schema_new(TB_TYPE_STRUCT);
    json_array_foreach (fields, i, field) {
        const char *name = json_string_value(json_object_get(field, "field"));
        if (name == NULL) {
            snprintf(errstr, errstr_size,
                     "Struct schema's field name not specified properly");
            goto fail;
        }
        tb_schema_t *fs = tb_json_schema_parse(field, errstr, errstr_size);
        if (fs == NULL) {
            goto fail;
        }
        if (tb_schema_add_field(s, name, fs) != 0) {
            snprintf(errstr, errstr_size,
                     "Cannot create field because of field name "
                     "duplication %s",
                     name);
            goto fail;
        }
    }
    return s;

fail:
    tb_schema_decref(s);
    return NULL;
}

/* The member schema called member of json, with Connect's message naming
 * what when it is missing. */
static tb_schema_t *member_schema(const json_t *json, const char *member,
                                  const char *what, char *errstr, size_t errstr_size)
{
    const json_t *inner = json_object_get(json, member);
    if (!json_is_object(inner)) {
        snprintf(errstr, errstr_size, "%s", what);
        return NULL;
    }
    return tb_json_schema_parse(inner, errstr, errstr_size);
}

tb_schema_t *tb_json_schema_parse(const json_t *json, char *errstr, size_t errstr_size)
{
    const char *type = json_string_value(json_object_get(json, "type"));
    tb_schema_t *s = NULL;
    size_t t = 0;

    if (type == NULL) {
        snprintf(errstr, errstr_size, "Schema must contain 'type' field");
        return NULL;
    }
    while (t < TYPE_COUNT && strcmp(type, json_type_names[t]) != 0) {
        t++;
    }
    switch (t) {
    case TYPE_COUNT:
        snprintf(errstr, errstr_size, "Unknown schema type: %s", type);
        return NULL;
    case TB_TYPE_STRUCT:
        s = struct_schema_parse(json, errstr, errstr_size);
        break;
    case TB_TYPE_ARRAY:
        s = member_schema(json, "items", "Array schema did not specify the element type",
                          errstr, errstr_size);
        s = s != NULL ? tb_schema_array(s) : NULL;
        break;
    case TB_TYPE_MAP: {
        tb_schema_t *keys = member_schema(
            json, "keys", "Map schema did not specify the key type", errstr, errstr_size);
        tb_schema_t *values =
            keys != NULL ? member_schema(json, "values",
                                         "Map schema did not specify the value type",
                                         errstr, errstr_size)
                         : NULL;
        if (values == NULL) {
            tb_schema_decref(keys);
            return NULL;
        }
        s = tb_schema_map(keys, values);
        break;
    }
    default:
        s = tb_schema_new((tb_type_t)t);
        break;
    }
    if (s != NULL && set_metadata(s, json, errstr, errstr_size) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

json_t *tb_json_schema_dump(const tb_schema_t *s)
{
    json_t *json = json_pack("{s:s}", "type", json_type_names[tb_schema_type(s)]);
    char errstr[256];

    switch (tb_schema_type(s)) {
    case TB_TYPE_STRUCT: {
        json_t *fields = json_array();
        for (size_t i = 0; i < tb_schema_field_count(s); i++) {
            const tb_field_t *f = tb_schema_field_at(s, i);
            json_t *field = tb_json_schema_dump(f->schema);
            json_object_set_new(field, "field", json_string(f->name));
            json_array_append_new(fields, field);
        }
        json_object_set_new(json, "fields", fields);
        break;
    }
    case TB_TYPE_ARRAY:
        json_object_set_new(json, "items", tb_json_schema_dump(tb_schema_items(s)));
        break;
    case TB_TYPE_MAP:
        json_object_set_new(json, "keys", tb_json_schema_dump(tb_schema_key_schema(s)));
        json_object_set_new(json, "values",
                            tb_json_schema_dump(tb_schema_value_schema(s)));
        break;
    default:
        break;
    }
    json_object_set_new(json, "optional", json_boolean(tb_schema_optional(s)));
    if (tb_schema_name(s) != NULL) {
        json_object_set_new(json, "name", json_string(tb_schema_name(s)));
    }
    if (tb_schema_has_version(s)) {
        json_object_set_new(json, "version", json_integer(tb_schema_version(s)));
    }
    if (tb_schema_doc(s) != NULL) {
        json_object_set_new(json, "doc", json_string(tb_schema_doc(s)));
    }
    if (tb_schema_parameters(s) != NULL) {
        json_object_set_new(json, "parameters", json_deep_copy(tb_schema_parameters(s)));
    }
    json_t *dflt = NULL;
    if (tb_schema_default(s) != NULL &&
        tb_json_value_dump(s, tb_schema_default(s), TB_DECIMAL_BASE64, &dflt, errstr,
                           sizeof(errstr)) == 0) {
        json_object_set_new(json, "default", dflt);
    }
    return json;
}

tb_schema_t *tb_json_infer_schema(const json_t *json)
{
    tb_schema_t *s = NULL;
    const char *key;
    json_t *member;

    if (json == NULL || json_is_null(json)) {
        s = tb_schema_new(TB_TYPE_STRING);
        if (s != NULL) {
            tb_schema_set_optional(s, true);
        }
        return s;
    }
    switch (json_typeof(json)) {
    case JSON_OBJECT:
        s = tb_schema_new(TB_TYPE_STRUCT);
        json_object_foreach ((json_t *)json, key, member) {
            tb_schema_add_field(s, key, tb_json_infer_schema(member));
        }
        return s;
    case JSON_ARRAY:
        return tb_schema_array(json_array_size(json) > 0
                                   ? tb_json_infer_schema(json_array_get(json, 0))
                                   : tb_json_infer_schema(NULL));
    case JSON_STRING:
        return tb_schema_new(TB_TYPE_STRING);
    case JSON_INTEGER:
        return tb_schema_new(TB_TYPE_INT64);
    case JSON_REAL:
        return tb_schema_new(TB_TYPE_FLOAT64);
    default:
        return tb_schema_new(TB_TYPE_BOOLEAN);
    }
}

/* -------------------------------------------------------------------------
 * Bytes and decimals
 */

static json_t *base64_string(const char *data, size_t len)
{
    size_t encoded = 4 * ((len + 2) / 3);
    char *text = malloc(encoded + 1);
    json_t *json = NULL;
    if (text != NULL) {
        EVP_EncodeBlock((unsigned char *)text, (const unsigned char *)data, (int)len);
        json = json_stringn(text, encoded);
        free(text);
    }
    return json;
}

tb_value_t *tb_json_base64_bytes(const char *text, size_t len)
{
    uint8_t *buf = malloc(TB_BASE64_DECODED_MAX(len));
    tb_value_t *v = NULL;
    long n;
    if (buf != NULL && (n = tb_base64_decode(text, len, TB_BASE64_STRICT, buf,
                                             TB_BASE64_DECODED_MAX(len))) >= 0) {
        v = tb_value_bytes(buf, (size_t)n);
    }
    free(buf);
    return v;
}

/* A NUMERIC decimal: a JSON string of its exact text behind a byte that no
 * UTF-8 text holds (jansson checks every other string), which only
 * tb_json_write() reads, writing the digits as a number. */
#define NUMBER_MARK '\xff'

static json_t *number_text_new(const char *text)
{
    size_t len = strlen(text);
    char *marked = malloc(len + 1);
    json_t *json = NULL;
    if (marked != NULL) {
        marked[0] = NUMBER_MARK;
        memcpy(marked + 1, text, len);
        json = json_stringn_nocheck(marked, len + 1);
        free(marked);
    }
    return json;
}

/* The digits of a NUMERIC decimal made by number_text_new(), or NULL. */
static const char *number_text(const json_t *json)
{
    const char *s = json_string_value(json);
    return s != NULL && s[0] == NUMBER_MARK ? s + 1 : NULL;
}

/* Whether a Decimal is somewhere in schema, so that its text is needed. */
static bool has_decimal(const tb_schema_t *schema)
{
    return tb_schema_contains_logical(schema, TB_LOGICAL_DECIMAL);
}

/* The Decimal a JSON number under schema reads as: from its text when
 * known (exact), else from the double jansson read, to the scale. */
static int decimal_parse(const tb_schema_t *schema, const json_t *json,
                         const tb_json_span_t *text, tb_value_t **out, char *errstr,
                         size_t errstr_size)
{
    char digits[400];
    tb_json_span_t rounded = {digits, 0};
    int scale = tb_decimal_scale(schema);
    if (text == NULL) {
        snprintf(digits, sizeof(digits), "%.*f", scale > 0 ? scale : 0,
                 json_number_value(json));
        rounded.n = strlen(digits);
        text = &rounded;
    }
    *out = tb_decimal_parse(text->s, text->n, scale, errstr, errstr_size);
    return *out != NULL ? 0 : -1;
}

/* -------------------------------------------------------------------------
 * Values
 */

static const char *json_kind(const json_t *json)
{
    static const char *const kinds[] = {"OBJECT", "ARRAY",   "STRING",  "NUMBER",
                                        "NUMBER", "BOOLEAN", "BOOLEAN", "NULL"};
    return kinds[json_typeof(json)];
}

static int mismatch(const tb_schema_t *schema, const json_t *json, char *errstr,
                    size_t errstr_size)
{
    snprintf(errstr, errstr_size, "Invalid value for schema type %s: a JSON %s",
             tb_type_name(tb_schema_type(schema)), json_kind(json));
    return -1;
}

static int schemaless_parse(const json_t *json, tb_value_t **out, char *errstr,
                            size_t errstr_size);

static int value_parse(const tb_schema_t *schema, const json_t *payload,
                       const tb_json_span_t *text, tb_value_t **out, char *errstr,
                       size_t errstr_size);

/* The text of the member called name of the object text (NULL when the
 * text is unknown or not needed: no Decimal in schema). */
static const tb_json_span_t *member_text(const tb_json_span_t *text,
                                         const tb_schema_t *schema, const char *name,
                                         tb_json_span_t *member)
{
    if (text == NULL || !has_decimal(schema) ||
        !tb_json_text_member(*text, name, member)) {
        return NULL;
    }
    return member;
}

static int struct_parse(const tb_schema_t *schema, const json_t *json,
                        const tb_json_span_t *text, tb_value_t **out, char *errstr,
                        size_t errstr_size)
{
    if (!json_is_object(json)) {
        snprintf(errstr, errstr_size,
                 "Structs should be encoded as JSON objects, but found %s",
                 json_kind(json));
        return -1;
    }
    tb_value_t *st = tb_value_struct((tb_schema_t *)schema);
    for (size_t i = 0; i < tb_schema_field_count(schema); i++) {
        const tb_field_t *f = tb_schema_field_at(schema, i);
        tb_value_t *v = NULL;
        tb_json_span_t member;
        if (value_parse(f->schema, json_object_get(json, f->name),
                        member_text(text, f->schema, f->name, &member), &v, errstr,
                        errstr_size) != 0) {
            tb_value_free(st);
            return -1;
        }
        tb_value_struct_set_at(st, i, v);
    }
    *out = st;
    return 0;
}

static int map_parse(const tb_schema_t *schema, const json_t *json,
                     const tb_json_span_t *text, tb_value_t **out, char *errstr,
                     size_t errstr_size)
{
    tb_schema_t *ks = tb_schema_key_schema(schema);
    tb_schema_t *vs = tb_schema_value_schema(schema);
    tb_value_t *map = tb_value_map();
    size_t i;
    json_t *entry;
    const char *name;

    if (tb_schema_type(ks) == TB_TYPE_STRING && json_is_object(json)) {
        json_object_foreach ((json_t *)json, name, entry) {
            tb_value_t *v = NULL;
            tb_json_span_t member;
            if (value_parse(vs, entry, member_text(text, vs, name, &member), &v, errstr,
                            errstr_size) != 0) {
                goto fail;
            }
            tb_value_map_put(map, tb_value_string(name, strlen(name)), v);
        }
    } else if (json_is_array(json)) {
        size_t pos = 0;
        bool spans = text != NULL && has_decimal(schema);
        json_array_foreach (json, i, entry) {
            tb_value_t *k = NULL;
            tb_value_t *v = NULL;
            tb_json_span_t unused;
            tb_json_span_t pair;
            tb_json_span_t parts[2];
            size_t part = 0;
            bool spanned = spans && tb_json_text_next(*text, &pos, &unused, &pair) &&
                           tb_json_text_next(pair, &part, &unused, &parts[0]) &&
                           tb_json_text_next(pair, &part, &unused, &parts[1]);
            if (json_array_size(entry) != 2) {
                snprintf(errstr, errstr_size,
                         "Found invalid map entry instead of array "
                         "tuple: %s",
                         json_kind(entry));
                goto fail;
            }
            if (value_parse(ks, json_array_get(entry, 0), spanned ? &parts[0] : NULL, &k,
                            errstr, errstr_size) != 0 ||
                value_parse(vs, json_array_get(entry, 1), spanned ? &parts[1] : NULL, &v,
                            errstr, errstr_size) != 0) {
                tb_value_free(k);
                goto fail;
            }
            tb_value_map_put(map, k, v);
        }
    } else {
        tb_value_free(map);
        return mismatch(schema, json, errstr, errstr_size);
    }
    *out = map;
    return 0;

fail:
    tb_value_free(map);
    return -1;
}

static int array_parse(const tb_schema_t *items, const json_t *json,
                       const tb_json_span_t *text, tb_value_t **out, char *errstr,
                       size_t errstr_size)
{
    tb_value_t *array = tb_value_array();
    bool spans = text != NULL && items != NULL && has_decimal(items);
    size_t pos = 0;
    size_t i;
    json_t *item;
    json_array_foreach (json, i, item) {
        tb_value_t *v = NULL;
        tb_json_span_t unused;
        tb_json_span_t element;
        bool spanned = spans && tb_json_text_next(*text, &pos, &unused, &element);
        int rc = items != NULL ? value_parse(items, item, spanned ? &element : NULL, &v,
                                             errstr, errstr_size)
                               : schemaless_parse(item, &v, errstr, errstr_size);
        if (rc != 0) {
            tb_value_free(array);
            return -1;
        }
        tb_value_array_append(array, v);
    }
    *out = array;
    return 0;
}

static int schemaless_parse(const json_t *json, tb_value_t **out, char *errstr,
                            size_t errstr_size)
{
    const char *key;
    json_t *member;
    switch (json_typeof(json)) {
    case JSON_OBJECT:
        *out = tb_value_map();
        json_object_foreach ((json_t *)json, key, member) {
            tb_value_t *v = NULL;
            if (schemaless_parse(member, &v, errstr, errstr_size) != 0) {
                tb_value_free(*out);
                *out = NULL;
                return -1;
            }
            tb_value_map_put(*out, tb_value_string(key, strlen(key)), v);
        }
        return 0;
    case JSON_ARRAY:
        return array_parse(NULL, json, NULL, out, errstr, errstr_size);
    case JSON_STRING:
        *out = tb_value_string(json_string_value(json), json_string_length(json));
        return 0;
    case JSON_INTEGER:
        *out = tb_value_int(TB_TYPE_INT64, json_integer_value(json));
        return 0;
    case JSON_REAL:
        *out = tb_value_float(TB_TYPE_FLOAT64, json_real_value(json));
        return 0;
    case JSON_TRUE:
    case JSON_FALSE:
        *out = tb_value_bool(json_is_true(json));
        return 0;
    default:
        *out = NULL;
        return 0;
    }
}

static int primitive_parse(const tb_schema_t *schema, const json_t *json,
                           const tb_json_span_t *text, tb_value_t **out, char *errstr,
                           size_t errstr_size)
{
    tb_type_t type = tb_schema_type(schema);
    switch (type) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
        if (!json_is_integer(json)) {
            return mismatch(schema, json, errstr, errstr_size);
        }
        *out = tb_value_int(type, json_integer_value(json));
        return 0;
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        if (!json_is_number(json)) {
            return mismatch(schema, json, errstr, errstr_size);
        }
        *out = tb_value_float(type, json_number_value(json));
        return 0;
    case TB_TYPE_BOOLEAN:
        if (!json_is_boolean(json)) {
            return mismatch(schema, json, errstr, errstr_size);
        }
        *out = tb_value_bool(json_is_true(json));
        return 0;
    case TB_TYPE_STRING:
        if (!json_is_string(json)) {
            return mismatch(schema, json, errstr, errstr_size);
        }
        *out = tb_value_string(json_string_value(json), json_string_length(json));
        return 0;
    default: /* BYTES */
        if (tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL) && json_is_number(json)) {
            return decimal_parse(schema, json, text, out, errstr, errstr_size);
        }
        if (!json_is_string(json) ||
            (*out = tb_json_base64_bytes(json_string_value(json),
                                         json_string_length(json))) == NULL) {
            snprintf(errstr, errstr_size, "Invalid bytes field");
            return -1;
        }
        return 0;
    }
}

static int value_parse(const tb_schema_t *schema, const json_t *payload,
                       const tb_json_span_t *text, tb_value_t **out, char *errstr,
                       size_t errstr_size)
{
    *out = NULL;
    if (schema == NULL) {
        return schemaless_parse(payload, out, errstr, errstr_size);
    }
    if (payload == NULL || json_is_null(payload)) {
        if (tb_schema_default(schema) != NULL) {
            *out = tb_value_copy(tb_schema_default(schema));
            return 0;
        }
        if (tb_schema_optional(schema)) {
            return 0;
        }
        snprintf(errstr, errstr_size, "Invalid null value for required %s field",
                 tb_type_name(tb_schema_type(schema)));
        return -1;
    }
    switch (tb_schema_type(schema)) {
    case TB_TYPE_STRUCT:
        return struct_parse(schema, payload, text, out, errstr, errstr_size);
    case TB_TYPE_MAP:
        return map_parse(schema, payload, text, out, errstr, errstr_size);
    case TB_TYPE_ARRAY:
        if (!json_is_array(payload)) {
            return mismatch(schema, payload, errstr, errstr_size);
        }
        return array_parse(tb_schema_items(schema), payload, text, out, errstr,
                           errstr_size);
    default:
        return primitive_parse(schema, payload, text, out, errstr, errstr_size);
    }
}

int tb_json_value_parse(const tb_schema_t *schema, const json_t *payload,
                        tb_value_t **out, char *errstr, size_t errstr_size)
{
    return value_parse(schema, payload, NULL, out, errstr, errstr_size);
}

int tb_json_value_read(const tb_schema_t *schema, const char *text, size_t len,
                       tb_value_t **out, char *errstr, size_t errstr_size)
{
    json_error_t error;
    if (tb_json_read_value(schema, text, len, out)) {
        return 0;
    }
    json_t *json = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
    if (json == NULL) {
        snprintf(errstr, errstr_size, "the payload is not JSON: %s", error.text);
        return -1;
    }
    int rc = tb_json_value_parse_text(schema, json, text, len, out, errstr, errstr_size);
    json_decref(json);
    return rc;
}

int tb_json_value_parse_text(const tb_schema_t *schema, const json_t *payload,
                             const char *text, size_t len, tb_value_t **out, char *errstr,
                             size_t errstr_size)
{
    tb_json_span_t span = {text, len};
    return value_parse(schema, payload, &span, out, errstr, errstr_size);
}

static int map_dump(const tb_schema_t *schema, const tb_value_t *v,
                    tb_decimal_format_t decimals, json_t **out, char *errstr,
                    size_t errstr_size)
{
    tb_schema_t *ks = schema != NULL ? tb_schema_key_schema(schema) : NULL;
    tb_schema_t *vs = schema != NULL ? tb_schema_value_schema(schema) : NULL;
    bool as_object = tb_json_map_is_object(schema, v);
    json_t *json = as_object ? json_object() : json_array();
    for (size_t i = 0; i < tb_value_size(v); i++) {
        json_t *k = NULL;
        json_t *item = NULL;
        if (tb_json_value_dump(ks, tb_value_map_key(v, i), decimals, &k, errstr,
                               errstr_size) != 0 ||
            tb_json_value_dump(vs, tb_value_map_value(v, i), decimals, &item, errstr,
                               errstr_size) != 0) {
            json_decref(k);
            json_decref(json);
            return -1;
        }
        if (as_object) {
            json_object_set_new(json, json_is_null(k) ? "null" : json_string_value(k),
                                item);
            json_decref(k);
        } else {
            json_array_append_new(json, json_pack("[o,o]", k, item));
        }
    }
    *out = json;
    return 0;
}

int tb_json_value_dump(const tb_schema_t *schema, const tb_value_t *v,
                       tb_decimal_format_t decimals, json_t **out, char *errstr,
                       size_t errstr_size)
{
    *out = NULL;
    if (tb_json_value_to_write(schema, &v, errstr, errstr_size) != 0) {
        return -1;
    }
    if (v == NULL) {
        *out = json_null();
        return 0;
    }
    tb_type_t type = tb_value_type(v);
    size_t len;
    const char *text;
    switch (type) {
    case TB_TYPE_STRUCT: {
        const tb_schema_t *ss = tb_value_struct_schema(v);
        if (schema != NULL && !tb_schema_equal(ss, schema)) {
            snprintf(errstr, errstr_size, "Mismatching schema.");
            return -1;
        }
        json_t *json = json_object();
        for (size_t i = 0; i < tb_schema_field_count(ss); i++) {
            const tb_field_t *f = tb_schema_field_at(ss, i);
            json_t *member = NULL;
            if (tb_json_value_dump(f->schema, tb_value_struct_get_at(v, i), decimals,
                                   &member, errstr, errstr_size) != 0) {
                json_decref(json);
                return -1;
            }
            json_object_set_new(json, f->name, member);
        }
        *out = json;
        return 0;
    }
    case TB_TYPE_MAP:
        return map_dump(schema, v, decimals, out, errstr, errstr_size);
    case TB_TYPE_ARRAY: {
        json_t *json = json_array();
        for (size_t i = 0; i < tb_value_size(v); i++) {
            json_t *item = NULL;
            if (tb_json_value_dump(schema != NULL ? tb_schema_items(schema) : NULL,
                                   tb_value_array_get(v, i), decimals, &item, errstr,
                                   errstr_size) != 0) {
                json_decref(json);
                return -1;
            }
            json_array_append_new(json, item);
        }
        *out = json;
        return 0;
    }
    case TB_TYPE_STRING:
        text = tb_value_text(v, &len);
        *out = json_stringn(text, len);
        break;
    case TB_TYPE_BYTES:
        text = tb_value_text(v, &len);
        if (decimals != TB_DECIMAL_BASE64 &&
            tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
            char *digits = tb_decimal_text(text, len, tb_decimal_scale(schema));
            *out = digits == NULL                   ? NULL
                   : decimals == TB_DECIMAL_NUMERIC ? number_text_new(digits)
                                                    : json_string(digits);
            free(digits);
        } else {
            *out = base64_string(text, len);
        }
        break;
    case TB_TYPE_BOOLEAN:
        *out = json_boolean(tb_value_boolean(v));
        break;
    case TB_TYPE_FLOAT32:
        *out = json_real(tb_json_float32_as_double(tb_value_double(v)));
        break;
    case TB_TYPE_FLOAT64:
        *out = json_real(tb_value_double(v));
        break;
    default:
        *out = json_integer(tb_value_int64(v));
        break;
    }
    if (*out == NULL) {
        snprintf(errstr, errstr_size,
                 "Conversion error: the value cannot be written "
                 "as JSON (not UTF-8, or not a finite number)");
        return -1;
    }
    return 0;
}

/* -------------------------------------------------------------------------
 * Writing JSON as Jackson does
 */

static void put_json(tb_buf_t *t, const json_t *json)
{
    const char *key;
    json_t *member;
    size_t i;
    bool first = true;

    switch (json_typeof(json)) {
    case JSON_OBJECT:
        tb_buf_append(t, "{", 1);
        json_object_foreach ((json_t *)json, key, member) {
            if (!first) {
                tb_buf_append(t, ",", 1);
            }
            first = false;
            tb_json_put_string(t, key, strlen(key));
            tb_buf_append(t, ":", 1);
            put_json(t, member);
        }
        tb_buf_append(t, "}", 1);
        return;
    case JSON_ARRAY:
        tb_buf_append(t, "[", 1);
        json_array_foreach (json, i, member) {
            if (i > 0) {
                tb_buf_append(t, ",", 1);
            }
            put_json(t, member);
        }
        tb_buf_append(t, "]", 1);
        return;
    case JSON_STRING:
        if (number_text(json) != NULL) {
            tb_buf_append(t, number_text(json), json_string_length(json) - 1);
            return;
        }
        tb_json_put_string(t, json_string_value(json), json_string_length(json));
        return;
    case JSON_INTEGER:
        tb_json_put_int(t, json_integer_value(json));
        return;
    case JSON_REAL:
        if (!isfinite(json_real_value(json))) {
            t->failed = true;
            return;
        }
        tb_json_put_real(t, json_real_value(json), false);
        return;
    case JSON_TRUE:
        tb_buf_append(t, "true", 4);
        return;
    case JSON_FALSE:
        tb_buf_append(t, "false", 5);
        return;
    default:
        tb_buf_append(t, "null", 4);
        return;
    }
}

char *tb_json_write(const json_t *json, size_t *len)
{
    tb_buf_t t = {0};
    size_t n = 0;
    put_json(&t, json);
    char *text = tb_buf_take(&t, &n);
    if (len != NULL) {
        *len = n;
    }
    return text;
}
