/*
 * search_doc.c - what the search sink writes for a record: the index, the
 * document id, the bulk action line and the source, and the mapping of an
 * index from a Connect schema.
 *
 * The source is the record's value as JSON, the way the reference connector
 * writes it: Decimals as doubles, Date as milliseconds since the epoch (the
 * "date" mapping reads numbers so), Time and Timestamp as their integers,
 * bytes as base64, maps with string keys as objects (compact.map.entries)
 * or as arrays of {"key","value"}.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/search/tb_search_sink.h"

#define MS_PER_DAY INT64_C(86400000)

/* ---- index names ---- */

/* topic.to.index.map's index for topic, or NULL. */
static const char *mapped_index(const json_t *map, const char *topic, size_t *len)
{
    size_t i;
    json_t *entry;
    size_t topic_len = strlen(topic);
    json_array_foreach (map, i, entry) {
        const char *text = json_string_value(entry);
        const char *colon = text != NULL ? strrchr(text, ':') : NULL;
        if (colon != NULL && (size_t)(colon - text) == topic_len &&
            strncmp(text, topic, topic_len) == 0) {
            *len = strlen(colon + 1);
            return colon + 1;
        }
    }
    return NULL;
}

void tb_search_doc_index(const tb_search_doc_options_t *o, const char *topic, char *out,
                         size_t out_size)
{
    static const char *const stream_types[] = {"", "logs", "metrics"};
    size_t len = 0;
    const char *mapped =
        o->index_map != NULL ? mapped_index(o->index_map, topic, &len) : NULL;
    if (mapped != NULL) {
        snprintf(out, out_size, "%.*s", (int)len, mapped);
        return;
    }
    if (o->stream_type != TB_SEARCH_STREAM_NONE) {
        snprintf(out, out_size, "%s-%s-%s", stream_types[o->stream_type],
                 o->stream_dataset, topic);
    } else {
        snprintf(out, out_size, "%s", topic);
    }
    for (char *p = out; *p != '\0'; p++) {
        *p = (char)tolower((unsigned char)*p);
    }
}

/* ---- ids and versions ---- */

int tb_search_doc_id(const tb_search_doc_options_t *o, const tb_sink_record_t *record,
                     char **id, char *reason, size_t reason_size)
{
    const tb_value_t *key = record->key_data;
    int n = -1;

    *id = NULL;
    if (o->key_ignore) {
        n = asprintf(id, "%s+%" PRId32 "+%" PRId64, record->topic, record->partition,
                     record->offset);
    } else if (key == NULL) {
        snprintf(reason, reason_size,
                 "the record has a null key, which key.ignore=false makes the document "
                 "id: set key.ignore=true or give every record a key");
        return -1;
    } else {
        tb_type_t type = tb_value_type(key);
        size_t len = 0;
        const char *text = type == TB_TYPE_STRING ? tb_value_text(key, &len) : NULL;
        if (text != NULL) {
            n = asprintf(id, "%.*s", (int)len, text);
        } else if (type >= TB_TYPE_INT8 && type <= TB_TYPE_INT64) {
            n = asprintf(id, "%" PRId64, tb_value_int64(key));
        } else {
            snprintf(reason, reason_size,
                     "the record key is a %s, which cannot be a document id (key.ignore="
                     "false takes a string or an integer key)",
                     tb_type_name(type));
            return -1;
        }
    }
    if (n < 0) {
        *id = NULL;
        snprintf(reason, reason_size, "out of memory");
        return -1;
    }
    return 0;
}

/* The external version: external.version.header's value, else the offset. */
static int version_of(const tb_search_doc_options_t *o, const tb_sink_record_t *record,
                      int64_t *version, char *reason, size_t reason_size)
{
    if (o->version_header == NULL) {
        *version = record->offset;
        return 0;
    }
    for (size_t i = 0; i < record->header_count; i++) {
        const tb_header_t *h = &record->headers[i];
        char text[32];
        char *end = NULL;
        if (strcmp(h->name, o->version_header) != 0 || h->value == NULL ||
            h->value_len == 0 || h->value_len >= sizeof(text)) {
            continue;
        }
        memcpy(text, h->value, h->value_len);
        text[h->value_len] = '\0';
        long long v = strtoll(text, &end, 10);
        if (*end == '\0' && v >= 0) {
            *version = v;
            return 0;
        }
    }
    snprintf(reason, reason_size,
             "the record has no header %s (external.version.header) holding a "
             "non-negative integer version",
             o->version_header);
    return -1;
}

/* ---- the source ---- */

static json_t *to_json(const tb_schema_t *schema, const tb_value_t *value, bool compact);

static json_t *logical_to_json(const tb_schema_t *schema, const tb_value_t *value)
{
    if (tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
        size_t len = 0;
        const char *bytes = tb_value_text(value, &len);
        char *text = tb_decimal_text(bytes, len, tb_decimal_scale(schema));
        json_t *out = text != NULL ? json_real(strtod(text, NULL)) : NULL;
        free(text);
        return out;
    }
    if (tb_schema_is_logical(schema, TB_LOGICAL_DATE)) {
        return json_integer(tb_value_int64(value) * MS_PER_DAY);
    }
    return NULL; /* Time and Timestamp are their integers */
}

static json_t *map_to_json(const tb_schema_t *schema, const tb_value_t *value,
                           bool compact)
{
    const tb_schema_t *ks = schema != NULL ? tb_schema_key_schema(schema) : NULL;
    const tb_schema_t *vs = schema != NULL ? tb_schema_value_schema(schema) : NULL;
    size_t n = tb_value_size(value);
    bool string_keys = true;
    for (size_t i = 0; i < n; i++) {
        string_keys =
            string_keys && tb_value_type(tb_value_map_key(value, i)) == TB_TYPE_STRING;
    }
    /* compact.map.entries applies to maps with a schema; a schemaless one
     * with string keys is an object, as JsonConverter writes it */
    json_t *out =
        string_keys && (compact || schema == NULL) ? json_object() : json_array();
    for (size_t i = 0; out != NULL && i < n; i++) {
        const tb_value_t *k = tb_value_map_key(value, i);
        json_t *v = to_json(vs, tb_value_map_value(value, i), compact);
        if (json_is_object(out)) {
            size_t len = 0;
            const char *name = tb_value_text(k, &len);
            if (v == NULL || json_object_setn_new(out, name, len, v) != 0) {
                json_decref(out);
                out = NULL;
            }
        } else {
            json_t *entry =
                json_pack("{s:o?,s:o?}", "key", to_json(ks, k, compact), "value", v);
            if (entry == NULL || json_array_append_new(out, entry) != 0) {
                json_decref(out);
                out = NULL;
            }
        }
    }
    return out;
}

static json_t *to_json(const tb_schema_t *schema, const tb_value_t *value, bool compact)
{
    if (value == NULL) {
        return json_null();
    }
    if (schema != NULL && tb_schema_name(schema) != NULL) {
        json_t *logical = logical_to_json(schema, value);
        if (logical != NULL) {
            return logical;
        }
    }
    tb_type_t type = tb_value_type(value);
    size_t len = 0;
    switch (type) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
        return json_integer(tb_value_int64(value));
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        return json_real(tb_value_double(value));
    case TB_TYPE_BOOLEAN:
        return json_boolean(tb_value_boolean(value));
    case TB_TYPE_STRING: {
        const char *text = tb_value_text(value, &len);
        return json_stringn(text, len);
    }
    case TB_TYPE_BYTES: {
        json_t *out = NULL;
        char ignored[64];
        return tb_json_value_dump(NULL, value, TB_DECIMAL_BASE64, &out, ignored,
                                  sizeof(ignored)) == 0
                   ? out
                   : NULL;
    }
    case TB_TYPE_ARRAY: {
        const tb_schema_t *items = schema != NULL ? tb_schema_items(schema) : NULL;
        json_t *out = json_array();
        for (size_t i = 0; out != NULL && i < tb_value_size(value); i++) {
            json_t *item = to_json(items, tb_value_array_get(value, i), compact);
            if (item == NULL || json_array_append_new(out, item) != 0) {
                json_decref(out);
                out = NULL;
            }
        }
        return out;
    }
    case TB_TYPE_MAP:
        return map_to_json(schema, value, compact);
    case TB_TYPE_STRUCT: {
        json_t *out = json_object();
        for (size_t i = 0;
             out != NULL && schema != NULL && i < tb_schema_field_count(schema); i++) {
            const tb_field_t *f = tb_schema_field_at(schema, i);
            json_t *v = to_json(f->schema, tb_value_struct_get_at(value, i), compact);
            if (v == NULL || json_object_set_new(out, f->name, v) != 0) {
                json_decref(out);
                out = NULL;
            }
        }
        return out;
    }
    }
    return NULL;
}

/* Sets @timestamp of a data stream's document: the first of
 * data.stream.timestamp.field the document has, else the record's time. */
static int set_stream_timestamp(const tb_search_doc_options_t *o,
                                const tb_sink_record_t *record, json_t *doc)
{
    size_t i;
    json_t *name;
    json_array_foreach (o->stream_timestamp_fields, i, name) {
        json_t *v = json_object_get(doc, json_string_value(name));
        if (v != NULL) {
            return json_object_set(doc, "@timestamp", v);
        }
    }
    return json_object_set_new(doc, "@timestamp", json_integer(record->timestamp));
}

/* ---- bulk lines ---- */

static int write_line(FILE *body, json_t *json)
{
    int rc = json != NULL && json_dumpf(json, body, JSON_COMPACT) == 0 &&
                     fputc('\n', body) != EOF
                 ? 0
                 : -1;
    json_decref(json);
    return rc;
}

int tb_search_doc_lines(const tb_search_doc_options_t *o, const tb_sink_record_t *record,
                        FILE *body, tb_search_doc_result_t *result, char *reason,
                        size_t reason_size)
{
    char index[256];
    char *id = NULL;
    int64_t version = 0;
    json_t *meta = NULL;
    json_t *source = NULL;
    const char *op = NULL;
    bool tombstone = record->value_data == NULL;
    int rc = 0;

    *result = TB_SEARCH_DOC_INVALID;
    if (tombstone && o->null_values == TB_SEARCH_NULL_IGNORE) {
        *result = TB_SEARCH_DOC_SKIP;
        return 0;
    }
    if (tombstone && o->null_values == TB_SEARCH_NULL_FAIL) {
        snprintf(reason, reason_size,
                 "the record's value is null and behavior.on.null.values=fail");
        return 0;
    }
    if (tb_search_doc_id(o, record, &id, reason, reason_size) != 0 ||
        (!o->key_ignore && version_of(o, record, &version, reason, reason_size) != 0)) {
        goto done;
    }
    if (!tombstone) {
        source =
            to_json(record->value_schema, record->value_data, o->compact_map_entries);
        if (!json_is_object(source)) {
            snprintf(reason, reason_size,
                     "the record's value is a %s, not a structure or map that can be a "
                     "document",
                     json_is_string(source) ? "string" : "value of another kind");
            goto done;
        }
        if (o->stream_type != TB_SEARCH_STREAM_NONE &&
            set_stream_timestamp(o, record, source) != 0) {
            rc = -1;
            goto done;
        }
    }
    tb_search_doc_index(o, record->topic, index, sizeof(index));
    op = tombstone                                 ? "delete"
         : o->stream_type != TB_SEARCH_STREAM_NONE ? "create"
         : o->write_method == TB_SEARCH_UPSERT     ? "update"
                                                   : "index";
    meta = json_pack("{s:s,s:s}", "_index", index, "_id", id);
    /* the offset as external version, so that a replay never overwrites a
     * newer document; updates cannot carry one */
    bool versioned =
        !o->key_ignore && strcmp(op, "update") != 0 && strcmp(op, "create") != 0;
    if (meta != NULL && versioned) {
        json_object_set_new(meta, "version", json_integer(version));
        json_object_set_new(meta, "version_type", json_string("external"));
    }
    if (write_line(body, json_pack("{s:o}", op, meta)) != 0) {
        meta = NULL;
        rc = -1;
        goto done;
    }
    meta = NULL;
    if (source != NULL) {
        json_t *line = strcmp(op, "update") == 0
                           ? json_pack("{s:O,s:b}", "doc", source, "doc_as_upsert", 1)
                           : json_incref(source);
        if (write_line(body, line) != 0) {
            rc = -1;
            goto done;
        }
    }
    *result = TB_SEARCH_DOC_WRITE;

done:
    json_decref(source);
    free(id);
    return rc;
}

/* ---- mappings ---- */

static json_t *type_mapping(const char *type)
{
    return json_pack("{s:s}", "type", type);
}

static json_t *field_mapping(const tb_schema_t *schema)
{
    static const char *const primitive[] = {
        [TB_TYPE_INT8] = "byte",       [TB_TYPE_INT16] = "short",
        [TB_TYPE_INT32] = "integer",   [TB_TYPE_INT64] = "long",
        [TB_TYPE_FLOAT32] = "float",   [TB_TYPE_FLOAT64] = "double",
        [TB_TYPE_BOOLEAN] = "boolean", [TB_TYPE_BYTES] = "binary",
    };
    if (tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
        return type_mapping("double");
    }
    if (tb_schema_is_logical(schema, TB_LOGICAL_DATE) ||
        tb_schema_is_logical(schema, TB_LOGICAL_TIME) ||
        tb_schema_is_logical(schema, TB_LOGICAL_TIMESTAMP)) {
        return type_mapping("date");
    }
    tb_type_t type = tb_schema_type(schema);
    switch (type) {
    case TB_TYPE_STRING:
        return json_pack("{s:s,s:{s:{s:s,s:i}}}", "type", "text", "fields", "keyword",
                         "type", "keyword", "ignore_above", 256);
    case TB_TYPE_ARRAY:
        return field_mapping(tb_schema_items(schema));
    case TB_TYPE_MAP:
        return type_mapping("object");
    case TB_TYPE_STRUCT:
        return tb_search_doc_mapping(schema);
    default:
        return type_mapping(primitive[type]);
    }
}

json_t *tb_search_doc_mapping(const tb_schema_t *schema)
{
    if (schema == NULL || tb_schema_type(schema) != TB_TYPE_STRUCT) {
        return NULL;
    }
    json_t *properties = json_object();
    for (size_t i = 0; properties != NULL && i < tb_schema_field_count(schema); i++) {
        const tb_field_t *f = tb_schema_field_at(schema, i);
        json_t *m = field_mapping(f->schema);
        if (m == NULL || json_object_set_new(properties, f->name, m) != 0) {
            json_decref(properties);
            properties = NULL;
        }
    }
    return properties != NULL ? json_pack("{s:o}", "properties", properties) : NULL;
}
