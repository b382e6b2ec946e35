/*
 * Avro schemas <-> Connect schemas (tb_avro_data.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_avro_data.h"
#include "connectors/converters/tb_json_data.h"
#include "registry/avro/tb_avro_node.h"

#define MAX_DEPTH 64
#define DEFAULT_NAMESPACE "io.confluent.connect.avro"
#define DEFAULT_RECORD "ConnectDefault"
#define ENUM_PARAMETER "io.confluent.connect.avro.Enum"
#define FIXED_PARAMETER "connect.fixed.size"
#define PRECISION_PARAMETER "connect.decimal.precision"
#define DEFAULT_PRECISION 64

/* -------------------------------------------------------------------------
 * Avro -> Connect
 */

/* Connect's name, version, doc and parameters kept in connect.* props. */
static void connect_metadata(tb_schema_t *s, const json_t *props)
{
    const json_t *version = json_object_get(props, "connect.version");
    const char *key;
    json_t *value;
    const char *name = json_string_value(json_object_get(props, "connect.name"));
    if (name != NULL) {
        tb_schema_set_name(s, name);
    }
    if (json_is_integer(version)) {
        tb_schema_set_version(s, true, (int)json_integer_value(version));
    }
    if (json_is_string(json_object_get(props, "connect.doc"))) {
        tb_schema_set_doc(s, json_string_value(json_object_get(props, "connect.doc")));
    }
    json_object_foreach ((json_t *)json_object_get(props, "connect.parameters"), key,
                         value) {
        if (json_is_string(value)) {
            tb_schema_set_parameter(s, key, json_string_value(value));
        }
    }
}

static tb_schema_t *to_connect(const tb_avro_node_t *node, int depth, char *errstr,
                               size_t errstr_size);

static tb_schema_t *record_to_connect(const tb_avro_node_t *node, int depth, char *errstr,
                                      size_t errstr_size)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_set_name(s, node->fullname);
    tb_schema_set_doc(s, json_string_value(json_object_get(node->props, "doc")));
    for (size_t i = 0; i < node->count; i++) {
        tb_schema_t *field =
            to_connect(node->children[i], depth + 1, errstr, errstr_size);
        tb_value_t *dflt = NULL;
        /* Avro spells a bytes default as ISO-8859-1 text: not kept */
        if (field != NULL && node->defaults[i] != NULL &&
            !json_is_null(node->defaults[i]) && tb_schema_type(field) != TB_TYPE_BYTES) {
            if (tb_json_value_parse(field, node->defaults[i], &dflt, errstr,
                                    errstr_size) == 0) {
                tb_schema_set_default(field, dflt);
            } else {
                tb_schema_decref(field);
                field = NULL;
            }
        }
        if (field == NULL) {
            tb_schema_error_in_field(errstr, errstr_size, node->names[i]);
            tb_schema_decref(s);
            return NULL;
        }
        tb_schema_add_field(s, node->names[i], field);
    }
    return s;
}

static tb_schema_t *union_to_connect(const tb_avro_node_t *node, int depth, char *errstr,
                                     size_t errstr_size)
{
    const tb_avro_node_t *only = NULL;
    bool has_null = false;
    for (size_t i = 0; i < node->count; i++) {
        if (node->children[i]->kind == TB_AVRO_NULL && !has_null) {
            has_null = true;
        } else if (only == NULL) {
            only = node->children[i];
        } else {
            only = NULL;
            break;
        }
    }
    if (only == NULL) {
        snprintf(errstr, errstr_size,
                 "an Avro union of %zu types has no Connect form here (only a "
                 "union of null and one type does)",
                 node->count);
        return NULL;
    }
    tb_schema_t *s = to_connect(only, depth + 1, errstr, errstr_size);
    if (s != NULL) {
        tb_schema_set_optional(s, has_null);
    }
    return s;
}

/* The schema of an int, long or bytes node with its logical type. */
static tb_schema_t *logical_to_connect(const tb_avro_node_t *node)
{
    const char *connect_type =
        json_string_value(json_object_get(node->props, "connect.type"));
    switch (node->logical) {
    case TB_AVRO_DECIMAL: {
        tb_schema_t *s = tb_schema_decimal(node->scale);
        const json_t *precision = json_object_get(node->props, "precision");
        if (json_is_integer(precision) &&
            json_integer_value(precision) != DEFAULT_PRECISION) {
            char text[24];
            snprintf(text, sizeof(text), "%lld",
                     (long long)json_integer_value(precision));
            tb_schema_set_parameter(s, PRECISION_PARAMETER, text);
        }
        return s;
    }
    case TB_AVRO_DATE:
        return tb_schema_date();
    case TB_AVRO_TIME_MILLIS:
        return tb_schema_time();
    case TB_AVRO_TIMESTAMP_MILLIS:
        return tb_schema_timestamp();
    default:
        break;
    }
    switch (node->kind) {
    case TB_AVRO_INT:
        return tb_schema_new(connect_type == NULL                 ? TB_TYPE_INT32
                             : strcmp(connect_type, "int8") == 0  ? TB_TYPE_INT8
                             : strcmp(connect_type, "int16") == 0 ? TB_TYPE_INT16
                                                                  : TB_TYPE_INT32);
    case TB_AVRO_LONG:
        return tb_schema_new(TB_TYPE_INT64);
    default:
        return tb_schema_new(TB_TYPE_BYTES);
    }
}

static tb_schema_t *to_connect(const tb_avro_node_t *node, int depth, char *errstr,
                               size_t errstr_size)
{
    static const tb_type_t primitives[] = {
        [TB_AVRO_BOOLEAN] = TB_TYPE_BOOLEAN,
        [TB_AVRO_FLOAT] = TB_TYPE_FLOAT32,
        [TB_AVRO_DOUBLE] = TB_TYPE_FLOAT64,
        [TB_AVRO_STRING] = TB_TYPE_STRING,
    };
    tb_schema_t *s = NULL;
    char text[24];

    if (depth > MAX_DEPTH) {
        snprintf(errstr, errstr_size,
                 "the Avro schema nests too deeply (a recursive type has no Connect "
                 "form)");
        return NULL;
    }
    switch (node->kind) {
    case TB_AVRO_NULL:
        snprintf(errstr, errstr_size, "an Avro null alone has no Connect form");
        return NULL;
    case TB_AVRO_BOOLEAN:
    case TB_AVRO_FLOAT:
    case TB_AVRO_DOUBLE:
    case TB_AVRO_STRING:
        s = tb_schema_new(primitives[node->kind]);
        break;
    case TB_AVRO_INT:
    case TB_AVRO_LONG:
    case TB_AVRO_BYTES:
        s = logical_to_connect(node);
        break;
    case TB_AVRO_FIXED:
        s = logical_to_connect(node);
        if (node->logical != TB_AVRO_DECIMAL) {
            snprintf(text, sizeof(text), "%zu", node->size);
            tb_schema_set_parameter(s, FIXED_PARAMETER, text);
            tb_schema_set_name(s, node->fullname);
        }
        break;
    case TB_AVRO_ENUM:
        s = tb_schema_new(TB_TYPE_STRING);
        tb_schema_set_name(s, node->fullname);
        tb_schema_set_parameter(s, ENUM_PARAMETER, node->fullname);
        break;
    case TB_AVRO_RECORD:
        s = record_to_connect(node, depth, errstr, errstr_size);
        break;
    case TB_AVRO_ARRAY:
    case TB_AVRO_MAP: {
        tb_schema_t *inner =
            to_connect(node->children[0], depth + 1, errstr, errstr_size);
        if (inner == NULL) {
            return NULL;
        }
        s = node->kind == TB_AVRO_ARRAY
                ? tb_schema_array(inner)
                : tb_schema_map(tb_schema_new(TB_TYPE_STRING), inner);
        break;
    }
    case TB_AVRO_UNION:
        return union_to_connect(node, depth, errstr, errstr_size);
    }
    if (s != NULL) {
        connect_metadata(s, node->props);
    }
    return s;
}

tb_schema_t *tb_avro_to_connect(const tb_avro_schema_t *schema, char *errstr,
                                size_t errstr_size)
{
    return to_connect(schema->root, 0, errstr, errstr_size);
}

/* -------------------------------------------------------------------------
 * Connect -> Avro
 */

typedef struct {
    int records;   /* unnamed records so far */
    json_t *named; /* the full names defined so far */
    char *errstr;
    size_t errstr_size;
} writer_t;

static json_t *from_connect(writer_t *w, const tb_schema_t *s, int depth);

/* A Connect schema's name, version, doc and parameters as connect.*. */
static void put_metadata(json_t *avro, const tb_schema_t *s)
{
    if (tb_schema_name(s) != NULL) {
        json_object_set_new(avro, "connect.name", json_string(tb_schema_name(s)));
    }
    if (tb_schema_has_version(s)) {
        json_object_set_new(avro, "connect.version", json_integer(tb_schema_version(s)));
    }
    if (tb_schema_doc(s) != NULL && tb_schema_type(s) != TB_TYPE_STRUCT) {
        json_object_set_new(avro, "connect.doc", json_string(tb_schema_doc(s)));
    }
    if (tb_schema_parameters(s) != NULL) {
        json_object_set_new(avro, "connect.parameters",
                            json_deep_copy(tb_schema_parameters(s)));
    }
}

/* The Avro type of a field, an item or a value: a union with null when
 * optional. *dflt becomes the field's default (NULL: none). */
static json_t *member_from_connect(writer_t *w, const tb_schema_t *s, int depth,
                                   json_t **dflt)
{
    json_t *type = from_connect(w, s, depth + 1);
    json_t *value = NULL;
    *dflt = NULL;
    if (type == NULL) {
        return NULL;
    }
    if (tb_schema_default(s) != NULL && tb_schema_type(s) != TB_TYPE_BYTES &&
        tb_json_value_dump(s, tb_schema_default(s), TB_DECIMAL_TEXT, &value, w->errstr,
                           w->errstr_size) != 0) {
        json_decref(type);
        return NULL;
    }
    if (!tb_schema_optional(s)) {
        *dflt = value;
        return type;
    }
    *dflt = value != NULL ? value : json_null();
    return value != NULL ? json_pack("[o, s]", type, "null")
                         : json_pack("[s, o]", "null", type);
}

static json_t *record_from_connect(writer_t *w, const tb_schema_t *s, int depth)
{
    char fullname[512];
    const char *name = tb_schema_name(s);
    if (name == NULL) {
        w->records++;
        snprintf(fullname, sizeof(fullname), w->records == 1 ? "%s.%s" : "%s.%s%d",
                 DEFAULT_NAMESPACE, DEFAULT_RECORD, w->records);
    } else {
        snprintf(fullname, sizeof(fullname), "%s", name);
    }
    if (json_object_get(w->named, fullname) != NULL) {
        return json_string(fullname); /* defined before: referred to by name */
    }
    json_object_set_new(w->named, fullname, json_true());
    const char *dot = strrchr(fullname, '.');
    json_t *fields = json_array();
    json_t *avro = json_pack("{s:s, s:s, s:s%}", "type", "record", "name",
                             dot != NULL ? dot + 1 : fullname, "namespace", fullname,
                             (size_t)(dot != NULL ? dot - fullname : 0));
    for (size_t i = 0; i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        json_t *dflt = NULL;
        json_t *type = member_from_connect(w, f->schema, depth, &dflt);
        if (type == NULL) {
            tb_schema_error_in_field(w->errstr, w->errstr_size, f->name);
            json_decref(fields);
            json_decref(avro);
            return NULL;
        }
        json_t *field = json_pack("{s:s, s:o}", "name", f->name, "type", type);
        if (dflt != NULL) {
            json_object_set_new(field, "default", dflt);
        }
        json_array_append_new(fields, field);
    }
    if (tb_schema_doc(s) != NULL) {
        json_object_set_new(avro, "doc", json_string(tb_schema_doc(s)));
    }
    json_object_set_new(avro, "fields", fields);
    put_metadata(avro, s);
    return avro;
}

/* The Avro form of a logical type; NULL when s is none. */
static json_t *logical_from_connect(const tb_schema_t *s)
{
    json_t *avro = NULL;
    if (tb_schema_is_logical(s, TB_LOGICAL_DECIMAL)) {
        const char *precision = tb_schema_parameter(s, PRECISION_PARAMETER);
        avro = json_pack("{s:s, s:i, s:i, s:s}", "type", "bytes", "scale",
                         tb_decimal_scale(s), "precision",
                         precision != NULL ? atoi(precision) : DEFAULT_PRECISION,
                         "logicalType", "decimal");
    } else if (tb_schema_is_logical(s, TB_LOGICAL_DATE)) {
        avro = json_pack("{s:s, s:s}", "type", "int", "logicalType", "date");
    } else if (tb_schema_is_logical(s, TB_LOGICAL_TIME)) {
        avro = json_pack("{s:s, s:s}", "type", "int", "logicalType", "time-millis");
    } else if (tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP)) {
        avro = json_pack("{s:s, s:s}", "type", "long", "logicalType", "timestamp-millis");
    }
    return avro;
}

static json_t *from_connect(writer_t *w, const tb_schema_t *s, int depth)
{
    static const char *const primitives[] = {
        [TB_TYPE_INT8] = "int",        [TB_TYPE_INT16] = "int",
        [TB_TYPE_INT32] = "int",       [TB_TYPE_INT64] = "long",
        [TB_TYPE_FLOAT32] = "float",   [TB_TYPE_FLOAT64] = "double",
        [TB_TYPE_BOOLEAN] = "boolean", [TB_TYPE_STRING] = "string",
        [TB_TYPE_BYTES] = "bytes",
    };
    tb_type_t type = tb_schema_type(s);
    json_t *avro = NULL;
    json_t *inner = NULL;
    json_t *ignored = NULL;

    if (depth > MAX_DEPTH) {
        snprintf(w->errstr, w->errstr_size, "the schema nests too deeply");
        return NULL;
    }
    switch (type) {
    case TB_TYPE_STRUCT:
        return record_from_connect(w, s, depth);
    case TB_TYPE_ARRAY:
    case TB_TYPE_MAP:
        if (type == TB_TYPE_MAP &&
            tb_schema_type(tb_schema_key_schema(s)) != TB_TYPE_STRING) {
            snprintf(w->errstr, w->errstr_size,
                     "a MAP with %s keys has no Avro form here (only STRING keys)",
                     tb_type_name(tb_schema_type(tb_schema_key_schema(s))));
            return NULL;
        }
        inner = member_from_connect(
            w, type == TB_TYPE_ARRAY ? tb_schema_items(s) : tb_schema_value_schema(s),
            depth, &ignored);
        json_decref(ignored);
        if (inner == NULL) {
            return NULL;
        }
        avro = json_pack("{s:s, s:o}", "type", type == TB_TYPE_ARRAY ? "array" : "map",
                         type == TB_TYPE_ARRAY ? "items" : "values", inner);
        break;
    default:
        avro = logical_from_connect(s);
        if (avro == NULL && tb_schema_name(s) == NULL && !tb_schema_has_version(s) &&
            tb_schema_doc(s) == NULL && tb_schema_parameters(s) == NULL &&
            type != TB_TYPE_INT8 && type != TB_TYPE_INT16) {
            return json_string(primitives[type]);
        }
        if (avro == NULL) {
            avro = json_pack("{s:s}", "type", primitives[type]);
        }
        if (type == TB_TYPE_INT8 || type == TB_TYPE_INT16) {
            json_object_set_new(avro, "connect.type",
                                json_string(type == TB_TYPE_INT8 ? "int8" : "int16"));
        }
        break;
    }
    put_metadata(avro, s);
    return avro;
}

char *tb_avro_from_connect(const tb_schema_t *schema, char *errstr, size_t errstr_size)
{
    writer_t w = {.named = json_object(), .errstr = errstr, .errstr_size = errstr_size};
    json_t *dflt = NULL;
    json_t *avro = schema != NULL ? member_from_connect(&w, schema, -1, &dflt) : NULL;
    char *text = avro != NULL ? json_dumps(avro, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (schema == NULL) {
        snprintf(errstr, errstr_size,
                 "schemaless data has no Avro schema: the value needs a Connect schema");
    } else if (avro != NULL && text == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    }
    json_decref(dflt);
    json_decref(avro);
    json_decref(w.named);
    return text;
}

/* -------------------------------------------------------------------------
 * Values, through the Avro JSON form
 */

int tb_avro_to_value(const tb_avro_schema_t *avro, const tb_schema_t *connect,
                     const uint8_t *payload, size_t len, tb_value_t **value, char *errstr,
                     size_t errstr_size)
{
    tb_buf_t text = {0};
    int rc = tb_avro_decode(avro, payload, len, &text, errstr, errstr_size);
    if (rc == 0) {
        rc = tb_json_value_read(connect, text.data, text.len, value, errstr, errstr_size);
    }
    tb_buf_release(&text);
    return rc;
}

int tb_avro_from_value(const tb_avro_schema_t *avro, const tb_schema_t *schema,
                       const tb_value_t *value, tb_buf_t *out, char *errstr,
                       size_t errstr_size)
{
    json_t *json = NULL;
    int rc =
        tb_json_value_dump(schema, value, TB_DECIMAL_TEXT, &json, errstr, errstr_size);
    if (rc == 0) {
        rc = tb_avro_encode(avro, json, out, errstr, errstr_size);
    }
    json_decref(json);
    return rc;
}
