/*
 * JSON Schemas <-> Connect schemas (tb_json_schema_data.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_schema_data.h"

#define MAX_DEPTH 64

/* -------------------------------------------------------------------------
 * JSON Schema -> Connect
 */

typedef struct {
    const tb_json_schema_t *document;
    char *errstr;
    size_t errstr_size;
} reader_t;

static tb_schema_t *to_connect(reader_t *r, const json_t *js, int depth);

/* The schema $ref leads to, following references; NULL with errstr. */
static const json_t *dereference(reader_t *r, const json_t *js)
{
    for (int hops = 0; json_is_string(json_object_get(js, "$ref")); hops++) {
        const char *ref = json_string_value(json_object_get(js, "$ref"));
        js = hops < MAX_DEPTH ? tb_json_schema_resolve(r->document, ref) : NULL;
        if (js == NULL) {
            snprintf(r->errstr, r->errstr_size, "$ref \"%s\" cannot be resolved", ref);
            return NULL;
        }
    }
    return js;
}

/* The one schema beside {"type":"null"} in a oneOf or anyOf, else NULL. */
static const json_t *nullable_of(reader_t *r, const json_t *js)
{
    const json_t *branches = json_object_get(js, "oneOf");
    branches = branches != NULL ? branches : json_object_get(js, "anyOf");
    const json_t *other = NULL;
    size_t nulls = 0;
    size_t i;
    const json_t *branch;
    if (json_array_size(branches) != 2) {
        return NULL;
    }
    json_array_foreach (branches, i, branch) {
        const json_t *b = dereference(r, branch);
        const char *type = json_string_value(json_object_get(b, "type"));
        if (type != NULL && strcmp(type, "null") == 0) {
            nulls++;
        } else {
            other = branch;
        }
    }
    return nulls == 1 ? other : NULL;
}

/* The one type of a "type" (a name, or an array of one name and "null");
 * *nullable when "null" is among them. NULL when there is no one type. */
static const char *type_of(const json_t *js, bool *nullable)
{
    const json_t *type = json_object_get(js, "type");
    const char *one = json_string_value(type);
    size_t i;
    const json_t *name;
    *nullable = false;
    json_array_foreach (type, i, name) {
        if (json_is_string(name) && strcmp(json_string_value(name), "null") == 0) {
            *nullable = true;
        } else if (one == NULL) {
            one = json_string_value(name);
        } else {
            return NULL;
        }
    }
    return json_array_size(type) > (*nullable ? 2u : 1u) ? NULL : one;
}

/* Connect's type for connect.type (int8 ... float64, bytes, map), or -1. */
static int connect_type(const json_t *js)
{
    static const char *const names[] = {
        [TB_TYPE_INT8] = "int8",       [TB_TYPE_INT16] = "int16",
        [TB_TYPE_INT32] = "int32",     [TB_TYPE_INT64] = "int64",
        [TB_TYPE_FLOAT32] = "float32", [TB_TYPE_FLOAT64] = "float64",
        [TB_TYPE_BYTES] = "bytes",     [TB_TYPE_MAP] = "map",
    };
    const char *name = json_string_value(json_object_get(js, "connect.type"));
    for (size_t t = 0; name != NULL && t < sizeof(names) / sizeof(names[0]); t++) {
        if (names[t] != NULL && strcmp(names[t], name) == 0) {
            return (int)t;
        }
    }
    return -1;
}

static tb_schema_t *object_to_connect(reader_t *r, const json_t *js, int depth)
{
    const json_t *properties = json_object_get(js, "properties");
    const json_t *required = json_object_get(js, "required");
    size_t count = json_object_size(properties);
    const char **names = calloc(count > 0 ? count : 1, sizeof(*names));
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    const char *name;
    json_t *property;
    size_t next = 0;

    if (names == NULL || s == NULL) {
        snprintf(r->errstr, r->errstr_size, "out of memory");
        goto fail;
    }
    /* fields in connect.index order, the others after them as listed */
    json_object_foreach ((json_t *)properties, name, property) {
        json_int_t index = json_integer_value(json_object_get(property, "connect.index"));
        size_t at = json_is_integer(json_object_get(property, "connect.index")) &&
                            index >= 0 && (size_t)index < count && names[index] == NULL
                        ? (size_t)index
                        : count;
        if (at == count) {
            while (names[next] != NULL) {
                next++;
            }
            at = next;
        }
        names[at] = name;
    }
    for (size_t i = 0; i < count; i++) {
        bool listed = false;
        size_t j;
        const json_t *item;
        json_array_foreach (required, j, item) {
            listed = listed || (json_is_string(item) &&
                                strcmp(json_string_value(item), names[i]) == 0);
        }
        tb_schema_t *field =
            to_connect(r, json_object_get(properties, names[i]), depth + 1);
        if (field == NULL) {
            tb_schema_error_in_field(r->errstr, r->errstr_size, names[i]);
            goto fail;
        }
        if (!listed) {
            tb_schema_set_optional(field, true);
        }
        tb_schema_add_field(s, names[i], field);
    }
    free(names);
    return s;

fail:
    free(names);
    tb_schema_decref(s);
    return NULL;
}

/* The schema of a JSON Schema of one type, metadata aside. */
static tb_schema_t *typed_to_connect(reader_t *r, const json_t *js, const char *type,
                                     int depth)
{
    int ct = connect_type(js);
    const char *title = json_string_value(json_object_get(js, "title"));
    if (strcmp(type, "object") == 0 && ct == TB_TYPE_MAP) {
        const json_t *values = json_object_get(js, "additionalProperties");
        tb_schema_t *v = json_is_object(values) ? to_connect(r, values, depth + 1) : NULL;
        if (v == NULL && !json_is_object(values)) {
            snprintf(r->errstr, r->errstr_size,
                     "a map's \"additionalProperties\" is not a schema");
        }
        return v != NULL ? tb_schema_map(tb_schema_new(TB_TYPE_STRING), v) : NULL;
    }
    if (strcmp(type, "object") == 0) {
        return object_to_connect(r, js, depth);
    }
    if (strcmp(type, "array") == 0 && ct != TB_TYPE_MAP) {
        const json_t *items = json_object_get(js, "items");
        tb_schema_t *i = json_is_object(items) ? to_connect(r, items, depth + 1) : NULL;
        if (i == NULL && !json_is_object(items)) {
            snprintf(r->errstr, r->errstr_size, "an array's \"items\" is not one schema");
        }
        return i != NULL ? tb_schema_array(i) : NULL;
    }
    if (strcmp(type, "integer") == 0 && title != NULL &&
        (strcmp(title, TB_LOGICAL_DATE) == 0 || strcmp(title, TB_LOGICAL_TIME) == 0)) {
        return strcmp(title, TB_LOGICAL_DATE) == 0 ? tb_schema_date() : tb_schema_time();
    }
    if (strcmp(type, "integer") == 0 && title != NULL &&
        strcmp(title, TB_LOGICAL_TIMESTAMP) == 0) {
        return tb_schema_timestamp();
    }
    if (strcmp(type, "integer") == 0) {
        return tb_schema_new(ct >= TB_TYPE_INT8 && ct <= TB_TYPE_INT64 ? (tb_type_t)ct
                                                                       : TB_TYPE_INT64);
    }
    if (strcmp(type, "number") == 0 &&
        (ct == TB_TYPE_BYTES ||
         (title != NULL && strcmp(title, TB_LOGICAL_DECIMAL) == 0))) {
        const char *scale = json_string_value(
            json_object_get(json_object_get(js, "connect.parameters"), TB_DECIMAL_SCALE));
        return tb_schema_decimal(scale != NULL ? atoi(scale) : 0);
    }
    if (strcmp(type, "number") == 0) {
        return tb_schema_new(ct == TB_TYPE_FLOAT32 ? TB_TYPE_FLOAT32 : TB_TYPE_FLOAT64);
    }
    if (strcmp(type, "string") == 0) {
        return tb_schema_new(ct == TB_TYPE_BYTES ? TB_TYPE_BYTES : TB_TYPE_STRING);
    }
    if (strcmp(type, "boolean") == 0) {
        return tb_schema_new(TB_TYPE_BOOLEAN);
    }
    snprintf(r->errstr, r->errstr_size,
             "a JSON Schema of type \"%s\"%s has no Connect form", type,
             ct == TB_TYPE_MAP ? " and connect.type map" : "");
    return NULL;
}

/* Connect's name, version, doc, parameters and default. */
static int metadata_to_connect(reader_t *r, tb_schema_t *s, const json_t *js)
{
    const json_t *version = json_object_get(js, "connect.version");
    const json_t *dflt = json_object_get(js, "default");
    const char *key;
    json_t *value;
    if (tb_schema_name(s) == NULL && tb_schema_type(s) != TB_TYPE_ARRAY &&
        tb_schema_type(s) != TB_TYPE_MAP) {
        tb_schema_set_name(s, json_string_value(json_object_get(js, "title")));
    }
    if (json_is_integer(version)) {
        tb_schema_set_version(s, true, (int)json_integer_value(version));
    }
    tb_schema_set_doc(s, json_string_value(json_object_get(js, "description")));
    json_object_foreach ((json_t *)json_object_get(js, "connect.parameters"), key,
                         value) {
        if (json_is_string(value)) {
            tb_schema_set_parameter(s, key, json_string_value(value));
        }
    }
    if (dflt != NULL && !json_is_null(dflt)) {
        tb_value_t *v = NULL;
        if (tb_json_value_parse(s, dflt, &v, r->errstr, r->errstr_size) != 0) {
            return -1;
        }
        tb_schema_set_default(s, v);
    }
    return 0;
}

static tb_schema_t *to_connect(reader_t *r, const json_t *js, int depth)
{
    bool nullable;
    if (depth > MAX_DEPTH) {
        snprintf(
            r->errstr, r->errstr_size,
            "the JSON Schema nests too deeply (a recursive $ref has no Connect form)");
        return NULL;
    }
    if ((js = dereference(r, js)) == NULL) {
        return NULL;
    }
    const json_t *inner = nullable_of(r, js);
    if (inner != NULL) {
        tb_schema_t *s = to_connect(r, inner, depth + 1);
        tb_schema_set_optional(s, true);
        return s;
    }
    const char *type = type_of(js, &nullable);
    if (type == NULL) {
        snprintf(r->errstr, r->errstr_size,
                 "a JSON Schema without one \"type\" has no Connect form here");
        return NULL;
    }
    tb_schema_t *s = typed_to_connect(r, js, type, depth);
    if (s != NULL && metadata_to_connect(r, s, js) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    if (s != NULL && nullable) {
        tb_schema_set_optional(s, true);
    }
    return s;
}

tb_schema_t *tb_json_schema_to_connect(const tb_json_schema_t *schema, char *errstr,
                                       size_t errstr_size)
{
    reader_t r = {.document = schema, .errstr = errstr, .errstr_size = errstr_size};
    return to_connect(&r, tb_json_schema_root(schema), 0);
}

/* -------------------------------------------------------------------------
 * Connect -> JSON Schema
 */

static json_t *from_connect(const tb_schema_t *s, int depth, char *errstr,
                            size_t errstr_size);

static json_t *struct_from_connect(const tb_schema_t *s, int depth, char *errstr,
                                   size_t errstr_size)
{
    json_t *properties = json_object();
    json_t *required = json_array();
    for (size_t i = 0; i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        json_t *property = from_connect(f->schema, depth + 1, errstr, errstr_size);
        if (property == NULL) {
            tb_schema_error_in_field(errstr, errstr_size, f->name);
            json_decref(properties);
            json_decref(required);
            return NULL;
        }
        json_object_set_new(property, "connect.index", json_integer((json_int_t)i));
        json_object_set_new(properties, f->name, property);
        if (!tb_schema_optional(f->schema)) {
            json_array_append_new(required, json_string(f->name));
        }
    }
    return json_pack("{s:s, s:o, s:o}", "type", "object", "properties", properties,
                     "required", required);
}

/* The JSON Schema of s without its optional wrapping, metadata aside. */
static json_t *plain_from_connect(const tb_schema_t *s, int depth, char *errstr,
                                  size_t errstr_size)
{
    static const char *const types[] = {
        [TB_TYPE_INT8] = "integer",    [TB_TYPE_INT16] = "integer",
        [TB_TYPE_INT32] = "integer",   [TB_TYPE_INT64] = "integer",
        [TB_TYPE_FLOAT32] = "number",  [TB_TYPE_FLOAT64] = "number",
        [TB_TYPE_BOOLEAN] = "boolean", [TB_TYPE_STRING] = "string",
        [TB_TYPE_BYTES] = "string",
    };
    static const char *const connect_types[] = {
        [TB_TYPE_INT8] = "int8",       [TB_TYPE_INT16] = "int16",
        [TB_TYPE_INT32] = "int32",     [TB_TYPE_INT64] = "int64",
        [TB_TYPE_FLOAT32] = "float32", [TB_TYPE_FLOAT64] = "float64",
        [TB_TYPE_BYTES] = "bytes",
    };
    tb_type_t type = tb_schema_type(s);
    json_t *inner;
    switch (type) {
    case TB_TYPE_STRUCT:
        return struct_from_connect(s, depth, errstr, errstr_size);
    case TB_TYPE_ARRAY:
        inner = from_connect(tb_schema_items(s), depth + 1, errstr, errstr_size);
        return inner != NULL ? json_pack("{s:s, s:o}", "type", "array", "items", inner)
                             : NULL;
    case TB_TYPE_MAP:
        if (tb_schema_type(tb_schema_key_schema(s)) != TB_TYPE_STRING) {
            snprintf(errstr, errstr_size,
                     "a MAP with %s keys has no JSON Schema form here (only STRING keys)",
                     tb_type_name(tb_schema_type(tb_schema_key_schema(s))));
            return NULL;
        }
        inner = from_connect(tb_schema_value_schema(s), depth + 1, errstr, errstr_size);
        return inner != NULL
                   ? json_pack("{s:s, s:o, s:s}", "type", "object",
                               "additionalProperties", inner, "connect.type", "map")
                   : NULL;
    default:
        if (tb_schema_is_logical(s, TB_LOGICAL_DECIMAL)) {
            return json_pack("{s:s, s:s}", "type", "number", "connect.type", "bytes");
        }
        if (connect_types[type] == NULL) {
            return json_pack("{s:s}", "type", types[type]);
        }
        return json_pack("{s:s, s:s}", "type", types[type], "connect.type",
                         connect_types[type]);
    }
}

static json_t *from_connect(const tb_schema_t *s, int depth, char *errstr,
                            size_t errstr_size)
{
    if (depth > MAX_DEPTH) {
        snprintf(errstr, errstr_size, "the schema nests too deeply");
        return NULL;
    }
    json_t *js = plain_from_connect(s, depth, errstr, errstr_size);
    json_t *dflt = NULL;
    if (js == NULL) {
        return NULL;
    }
    if (tb_schema_name(s) != NULL) {
        json_object_set_new(js, "title", json_string(tb_schema_name(s)));
    }
    if (tb_schema_has_version(s)) {
        json_object_set_new(js, "connect.version", json_integer(tb_schema_version(s)));
    }
    if (tb_schema_doc(s) != NULL) {
        json_object_set_new(js, "description", json_string(tb_schema_doc(s)));
    }
    if (tb_schema_parameters(s) != NULL) {
        json_object_set_new(js, "connect.parameters",
                            json_deep_copy(tb_schema_parameters(s)));
    }
    if (tb_schema_default(s) != NULL) {
        if (tb_json_value_dump(s, tb_schema_default(s), TB_DECIMAL_BASE64, &dflt, errstr,
                               errstr_size) != 0) {
            json_decref(js);
            return NULL;
        }
        json_object_set_new(js, "default", dflt);
    }
    if (tb_schema_optional(s)) {
        return json_pack("{s:[{s:s}, o]}", "oneOf", "type", "null", js);
    }
    return js;
}

char *tb_json_schema_from_connect(const tb_schema_t *schema, char *errstr,
                                  size_t errstr_size)
{
    if (schema == NULL) {
        snprintf(errstr, errstr_size,
                 "schemaless data has no JSON Schema: the value needs a Connect schema");
        return NULL;
    }
    json_t *js = from_connect(schema, 0, errstr, errstr_size);
    char *text = js != NULL ? json_dumps(js, JSON_COMPACT) : NULL;
    if (js != NULL && text == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    }
    json_decref(js);
    return text;
}
