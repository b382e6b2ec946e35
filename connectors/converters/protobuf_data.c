/*
 * Protobuf messages <-> Connect schemas (tb_protobuf_data.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_protobuf_data.h"
#include "core/tb_text.h"
#include "registry/tb_wire.h"

#define MAX_DEPTH 32
#define MAX_MESSAGES 256
#define ENUM_PARAMETER "io.confluent.connect.protobuf.Enum"
#define WELL_KNOWN "google.protobuf."
#define TIMESTAMP WELL_KNOWN "Timestamp"
#define DEFAULT_MESSAGE "ConnectDefault"

/* -------------------------------------------------------------------------
 * Protobuf -> Connect
 */

static const struct {
    const char *name;
    tb_type_t type;
} scalars[] = {
    {"int32", TB_TYPE_INT32},        {"sint32", TB_TYPE_INT32},
    {"sfixed32", TB_TYPE_INT32},     {"int64", TB_TYPE_INT64},
    {"sint64", TB_TYPE_INT64},       {"sfixed64", TB_TYPE_INT64},
    {"uint32", TB_TYPE_INT64},       {"fixed32", TB_TYPE_INT64},
    {"uint64", TB_TYPE_INT64},       {"fixed64", TB_TYPE_INT64},
    {"float", TB_TYPE_FLOAT32},      {"double", TB_TYPE_FLOAT64},
    {"bool", TB_TYPE_BOOLEAN},       {"string", TB_TYPE_STRING},
    {"bytes", TB_TYPE_BYTES},        {"DoubleValue", TB_TYPE_FLOAT64},
    {"FloatValue", TB_TYPE_FLOAT32}, {"Int64Value", TB_TYPE_INT64},
    {"UInt64Value", TB_TYPE_INT64},  {"Int32Value", TB_TYPE_INT32},
    {"UInt32Value", TB_TYPE_INT64},  {"BoolValue", TB_TYPE_BOOLEAN},
    {"StringValue", TB_TYPE_STRING}, {"BytesValue", TB_TYPE_BYTES},
};

/* The type called name (a scalar, or a wrapper's simple name), or -1. */
static int scalar_type(const char *name)
{
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
        if (strcmp(scalars[i].name, name) == 0) {
            return (int)scalars[i].type;
        }
    }
    return -1;
}

static tb_schema_t *message_to_connect(const json_t *message, int depth, char *errstr,
                                       size_t errstr_size);

/* The schema of one value of field: its message, enum or scalar. */
static tb_schema_t *element_to_connect(const json_t *field, int depth, char *errstr,
                                       size_t errstr_size)
{
    const char *type = json_string_value(json_object_get(field, "type"));
    const json_t *message = json_object_get(field, "message");
    const char *name = json_string_value(json_object_get(message, "name"));
    if (message == NULL && json_object_get(field, "enum") != NULL) {
        tb_schema_t *s = tb_schema_new(TB_TYPE_STRING);
        tb_schema_set_parameter(s, ENUM_PARAMETER,
                                json_string_value(json_object_get(field, "enum")));
        return s;
    }
    if (message == NULL) {
        int t = scalar_type(type);
        if (t < 0) {
            snprintf(errstr, errstr_size, "the Protobuf type %s has no Connect form",
                     type);
            return NULL;
        }
        return tb_schema_new((tb_type_t)t);
    }
    if (strcmp(name, TIMESTAMP) == 0) {
        return tb_schema_timestamp();
    }
    if (strncmp(name, WELL_KNOWN, strlen(WELL_KNOWN)) == 0) {
        int t = scalar_type(name + strlen(WELL_KNOWN));
        if (t < 0) {
            snprintf(errstr, errstr_size, "%s has no Connect form here", name);
            return NULL;
        }
        tb_schema_t *s = tb_schema_new((tb_type_t)t);
        tb_schema_set_optional(s, true);
        return s;
    }
    return message_to_connect(message, depth + 1, errstr, errstr_size);
}

static tb_schema_t *field_to_connect(const json_t *field, int depth, char *errstr,
                                     size_t errstr_size)
{
    const json_t *map = json_object_get(field, "map");
    if (map != NULL) {
        tb_schema_t *key =
            element_to_connect(json_object_get(map, "key"), depth, errstr, errstr_size);
        tb_schema_t *value = key != NULL
                                 ? element_to_connect(json_object_get(map, "value"),
                                                      depth, errstr, errstr_size)
                                 : NULL;
        if (value == NULL) {
            tb_schema_decref(key);
            return NULL;
        }
        return tb_schema_map(key, value);
    }
    tb_schema_t *s = element_to_connect(field, depth, errstr, errstr_size);
    if (s != NULL && json_is_true(json_object_get(field, "repeated"))) {
        return tb_schema_array(s);
    }
    if (s != NULL && json_is_true(json_object_get(field, "presence"))) {
        tb_schema_set_optional(s, true);
    }
    return s;
}

static tb_schema_t *message_to_connect(const json_t *message, int depth, char *errstr,
                                       size_t errstr_size)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    size_t i;
    const json_t *field;
    tb_schema_set_name(s, json_string_value(json_object_get(message, "name")));
    json_array_foreach (json_object_get(message, "fields"), i, field) {
        const char *name = json_string_value(json_object_get(field, "name"));
        tb_schema_t *fs = field_to_connect(field, depth, errstr, errstr_size);
        if (fs == NULL) {
            tb_schema_error_in_field(errstr, errstr_size, name);
            tb_schema_decref(s);
            return NULL;
        }
        tb_schema_add_field(s, name, fs);
    }
    return s;
}

tb_schema_t *tb_protobuf_to_connect(const tb_protobuf_schema_t *schema,
                                    const uint8_t *payload, size_t len, char *errstr,
                                    size_t errstr_size)
{
    int32_t indexes[TB_WIRE_MAX_INDEXES];
    size_t count;
    size_t used;
    if (tb_wire_read_indexes(payload, len, indexes, &count, &used, errstr, errstr_size) !=
        0) {
        return NULL;
    }
    json_t *description =
        tb_protobuf_describe(schema, indexes, count, errstr, errstr_size);
    tb_schema_t *s = description != NULL
                         ? message_to_connect(description, 0, errstr, errstr_size)
                         : NULL;
    json_decref(description);
    return s;
}

/* -------------------------------------------------------------------------
 * Connect -> Protobuf
 */

typedef struct {
    tb_buf_t rest; /* the messages after the first */
    char package[256];
    const tb_schema_t *declared[MAX_MESSAGES]; /* messages by name, in order */
    char names[MAX_MESSAGES][128];
    size_t count;
    int unnamed;    /* ConnectDefault names given so far */
    bool timestamp; /* google/protobuf/timestamp.proto is imported */
    char *errstr;
    size_t errstr_size;
} proto_writer_t;

static bool identifier(const char *name)
{
    if (name[0] == '\0' || (name[0] >= '0' && name[0] <= '9')) {
        return false;
    }
    for (const char *p = name; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_')) {
            return false;
        }
    }
    return true;
}

static int message_from_connect(proto_writer_t *w, const tb_schema_t *s, const char *name,
                                tb_buf_t *out, int depth);

/* The message name of a struct, declared when new: into first (the file's
 * first message) or, when NULL, after the others. */
static const char *struct_name(proto_writer_t *w, const tb_schema_t *s, tb_buf_t *first,
                               int depth)
{
    char name[128];
    const char *full = tb_schema_name(s);
    if (full == NULL) {
        w->unnamed++;
        snprintf(name, sizeof(name), w->unnamed == 1 ? "%s" : "%s%d", DEFAULT_MESSAGE,
                 w->unnamed);
    } else {
        snprintf(name, sizeof(name), "%s",
                 strrchr(full, '.') != NULL ? strrchr(full, '.') + 1 : full);
    }
    for (size_t i = 0; i < w->count; i++) {
        if (strcmp(w->names[i], name) == 0) {
            if (tb_schema_equal(w->declared[i], s)) {
                return w->names[i];
            }
            snprintf(w->errstr, w->errstr_size,
                     "two different structs are both message %s", name);
            return NULL;
        }
    }
    if (w->count == MAX_MESSAGES) {
        snprintf(w->errstr, w->errstr_size, "more than %d structs", MAX_MESSAGES);
        return NULL;
    }
    size_t at = w->count++;
    w->declared[at] = s;
    snprintf(w->names[at], sizeof(w->names[at]), "%s", name);
    tb_buf_t message = {0};
    int rc = message_from_connect(w, s, w->names[at], &message, depth + 1);
    tb_buf_append(first != NULL ? first : &w->rest, message.data, message.len);
    tb_buf_release(&message);
    return rc == 0 ? w->names[at] : NULL;
}

/* The Protobuf type of one value of s, or NULL with errstr. */
static const char *element_type(proto_writer_t *w, const tb_schema_t *s, int depth)
{
    static const char *const types[] = {
        [TB_TYPE_INT8] = "int32",    [TB_TYPE_INT16] = "int32",
        [TB_TYPE_INT32] = "int32",   [TB_TYPE_INT64] = "int64",
        [TB_TYPE_FLOAT32] = "float", [TB_TYPE_FLOAT64] = "double",
        [TB_TYPE_BOOLEAN] = "bool",  [TB_TYPE_STRING] = "string",
        [TB_TYPE_BYTES] = "bytes",
    };
    if (tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP)) {
        w->timestamp = true;
        return TIMESTAMP;
    }
    if (tb_schema_is_logical(s, TB_LOGICAL_DECIMAL) ||
        tb_schema_is_logical(s, TB_LOGICAL_DATE) ||
        tb_schema_is_logical(s, TB_LOGICAL_TIME)) {
        snprintf(w->errstr, w->errstr_size, "%s has no Protobuf form here",
                 tb_schema_name(s));
        return NULL;
    }
    switch (tb_schema_type(s)) {
    case TB_TYPE_STRUCT:
        return struct_name(w, s, NULL, depth);
    case TB_TYPE_ARRAY:
    case TB_TYPE_MAP:
        snprintf(w->errstr, w->errstr_size,
                 "an ARRAY or MAP inside an ARRAY or MAP has no Protobuf form");
        return NULL;
    default:
        return types[tb_schema_type(s)];
    }
}

static int field_from_connect(proto_writer_t *w, const tb_field_t *f, tb_buf_t *out,
                              int depth)
{
    const tb_schema_t *s = f->schema;
    tb_type_t type = tb_schema_type(s);
    if (!identifier(f->name)) {
        snprintf(w->errstr, w->errstr_size, "the name is no Protobuf field name");
        return -1;
    }
    if (type == TB_TYPE_MAP) {
        tb_type_t keys = tb_schema_type(tb_schema_key_schema(s));
        if (keys != TB_TYPE_STRING && keys != TB_TYPE_BOOLEAN && keys != TB_TYPE_INT8 &&
            keys != TB_TYPE_INT16 && keys != TB_TYPE_INT32 && keys != TB_TYPE_INT64) {
            snprintf(w->errstr, w->errstr_size, "a MAP with %s keys has no Protobuf form",
                     tb_type_name(keys));
            return -1;
        }
        const char *key = element_type(w, tb_schema_key_schema(s), depth);
        const char *value = element_type(w, tb_schema_value_schema(s), depth);
        if (value == NULL) {
            return -1;
        }
        tb_buf_printf(out, "  map<%s, %s> %s = %zu;\n", key, value, f->name,
                      f->index + 1);
        return 0;
    }
    const char *element =
        element_type(w, type == TB_TYPE_ARRAY ? tb_schema_items(s) : s, depth);
    if (element == NULL) {
        return -1;
    }
    bool scalar = type != TB_TYPE_ARRAY && type != TB_TYPE_STRUCT &&
                  !tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP);
    tb_buf_printf(out, "  %s%s %s = %zu;\n",
                  type == TB_TYPE_ARRAY             ? "repeated "
                  : scalar && tb_schema_optional(s) ? "optional "
                                                    : "",
                  element, f->name, f->index + 1);
    return 0;
}

static int message_from_connect(proto_writer_t *w, const tb_schema_t *s, const char *name,
                                tb_buf_t *out, int depth)
{
    if (depth > MAX_DEPTH) {
        snprintf(w->errstr, w->errstr_size, "the schema nests too deeply");
        return -1;
    }
    tb_buf_printf(out, "message %s {\n", name);
    for (size_t i = 0; i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        if (field_from_connect(w, f, out, depth) != 0) {
            tb_schema_error_in_field(w->errstr, w->errstr_size, f->name);
            return -1;
        }
    }
    tb_buf_puts(out, "}\n");
    return 0;
}

char *tb_protobuf_from_connect(const tb_schema_t *schema, char *errstr,
                               size_t errstr_size)
{
    proto_writer_t *w = calloc(1, sizeof(*w));
    tb_buf_t first = {0};
    tb_buf_t text = {0};
    char *result = NULL;
    size_t len;

    if (w == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    w->errstr = errstr;
    w->errstr_size = errstr_size;
    if (schema == NULL || tb_schema_type(schema) != TB_TYPE_STRUCT) {
        snprintf(errstr, errstr_size,
                 "a Connect %s has no Protobuf form: a Protobuf record is a STRUCT",
                 schema != NULL ? tb_type_name(tb_schema_type(schema))
                                : "schemaless value");
        goto done;
    }
    const char *full = tb_schema_name(schema);
    const char *dot = full != NULL ? strrchr(full, '.') : NULL;
    snprintf(w->package, sizeof(w->package), "%.*s", dot != NULL ? (int)(dot - full) : 0,
             dot != NULL ? full : "");
    if (struct_name(w, schema, &first, 0) == NULL) {
        goto done;
    }
    tb_buf_puts(&text, "syntax = \"proto3\";\n");
    if (w->package[0] != '\0') {
        tb_buf_printf(&text, "package %s;\n", w->package);
    }
    if (w->timestamp) {
        tb_buf_puts(&text, "import \"google/protobuf/timestamp.proto\";\n");
    }
    tb_buf_append(&text, first.data, first.len);
    tb_buf_append(&text, w->rest.data, w->rest.len);
    result = tb_buf_take(&text, &len);
    if (result == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    }

done:
    tb_buf_release(&first);
    tb_buf_release(&text);
    tb_buf_release(&w->rest);
    free(w);
    return result;
}

/* -------------------------------------------------------------------------
 * Values
 */

/* A Timestamp's JSON in the other form (RFC 3339 text <-> milliseconds), or
 * NULL when json is not in the form being converted from. */
static json_t *timestamp_converted(const json_t *json, bool to_text)
{
    if (to_text && json_is_integer(json)) {
        json_int_t ms = json_integer_value(json);
        time_t seconds = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
        int millis = (int)(ms - (json_int_t)seconds * 1000);
        struct tm tm;
        char text[96];
        gmtime_r(&seconds, &tm);
        snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                 tm.tm_sec, millis);
        return json_string(text);
    }
    int64_t ms;
    if (!to_text && json_is_string(json) &&
        tb_text_parse_timestamp(json_string_value(json), 1000, &ms) == 0) {
        return json_integer(ms);
    }
    return NULL;
}

/* Turns the Timestamps below s in json (a container) to text or back. */
static void convert_timestamps(const tb_schema_t *s, json_t *json, bool to_text);

/* The member of a container under schema s: converted in place, or its
 * replacement returned (a Timestamp). */
static json_t *member_converted(const tb_schema_t *s, json_t *member, bool to_text)
{
    if (tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP)) {
        return timestamp_converted(member, to_text);
    }
    convert_timestamps(s, member, to_text);
    return NULL;
}

static void convert_timestamps(const tb_schema_t *s, json_t *json, bool to_text)
{
    json_t *member;
    json_t *replaced;
    const char *key;
    size_t i;
    switch (json != NULL ? tb_schema_type(s) : TB_TYPE_BOOLEAN) {
    case TB_TYPE_STRUCT:
        for (i = 0; i < tb_schema_field_count(s); i++) {
            const tb_field_t *f = tb_schema_field_at(s, i);
            replaced =
                member_converted(f->schema, json_object_get(json, f->name), to_text);
            if (replaced != NULL) {
                json_object_set_new(json, f->name, replaced);
            }
        }
        break;
    case TB_TYPE_ARRAY:
        json_array_foreach (json, i, member) {
            replaced = member_converted(tb_schema_items(s), member, to_text);
            if (replaced != NULL) {
                json_array_set_new(json, i, replaced);
            }
        }
        break;
    case TB_TYPE_MAP:
        json_object_foreach (json, key, member) {
            replaced = member_converted(tb_schema_value_schema(s), member, to_text);
            if (replaced != NULL) {
                json_object_set_new(json, key, replaced);
            }
        }
        break;
    default:
        break;
    }
}

int tb_protobuf_to_value(const tb_protobuf_schema_t *schema, const tb_schema_t *connect,
                         const uint8_t *payload, size_t len, tb_value_t **value,
                         char *errstr, size_t errstr_size)
{
    tb_buf_t text = {0};
    json_error_t error;
    json_t *json = NULL;
    int rc = -1;

    if (tb_protobuf_decode(schema, payload, len, &text, errstr, errstr_size) != 0) {
        goto done;
    }
    json = json_loadb(text.data, text.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
    if (json == NULL) {
        snprintf(errstr, errstr_size, "the message's JSON form: %s", error.text);
        goto done;
    }
    convert_timestamps(connect, json, false);
    rc = tb_json_value_parse(connect, json, value, errstr, errstr_size);

done:
    json_decref(json);
    tb_buf_release(&text);
    return rc;
}

int tb_protobuf_from_value(const tb_protobuf_schema_t *protobuf,
                           const tb_schema_t *schema, const tb_value_t *value,
                           tb_buf_t *out, char *errstr, size_t errstr_size)
{
    json_t *json = NULL;
    int rc =
        tb_json_value_dump(schema, value, TB_DECIMAL_BASE64, &json, errstr, errstr_size);
    if (rc == 0) {
        convert_timestamps(schema, json, true);
        rc = tb_protobuf_encode(protobuf, json, out, errstr, errstr_size);
    }
    json_decref(json);
    return rc;
}
