/*
 * JsonConverter - Connect's JSON, with or without the schema envelope.
 *
 * Sink side: the message is parsed (jansson) to check it; with
 * schemas.enable it must be exactly {"schema":S,"payload":P}. The plugin
 * gets the text of P (or of the whole message) with the whitespace outside
 * strings removed, cut from the message itself: numbers keep their spelling
 * and size, and a message that is already compact is handed over without a
 * copy. A string (bytes included: their base64 text) is handed over as its
 * text, unquoted, as Connect's FileStreamSink writes a string value.
 *
 * Source side: a string becomes a JSON string, bytes a base64 string, and
 * JSON text is checked and compacted. With schemas.enable the value goes in
 * an envelope whose schema is string, bytes, or inferred from the JSON:
 * object -> struct (fields in key order), string -> string, integer ->
 * int64, real -> double, true/false -> boolean, array -> array of its first
 * element's schema (an optional string when empty), null -> optional string.
 * Inference needs integers that fit in 64 bits; without schemas any size is
 * fine. JSON text "null" is a JSON value (a null payload), not a tombstone:
 * only data == NULL is a null record.
 *
 * schema.content (KIP-1054, sink side, with schemas.enable): every message
 * is a payload alone, read under the schema the key gives; the message must
 * fit it, as Connect converts it by that schema.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_converter_class.h"
#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_reader.h"
#include "connectors/converters/tb_json_schema_cache.h"
#include "connectors/converters/tb_json_text.h"
#include "connectors/converters/tb_json_writer.h"

#define ENVELOPE_ERROR                                                                   \
    "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and "  \
    "may not contain additional fields. If you are trying to deserialize plain JSON "    \
    "data, set schemas.enable=false in your converter configuration."
#define TO_CONNECT_ERROR                                                                 \
    "Converting byte[] to Kafka Connect data failed due to serialization error: "
#define FROM_CONNECT_ERROR                                                               \
    "Converting Kafka Connect data to byte[] failed due to serialization error: "

/* Any value at the top level, and \u0000 inside strings, as Jackson allows. */
#define PARSE_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

#define STRING_SCHEMA "{\"type\":\"string\",\"optional\":false}"
#define BYTES_SCHEMA "{\"type\":\"bytes\",\"optional\":false}"

typedef struct {
    bool schemas_enable;
    tb_schema_t *content;         /* schema.content's schema, NULL unset (owned) */
    tb_decimal_format_t decimals; /* how Decimal data is written */
    tb_json_schema_cache_t read;  /* schemas of the messages read */
    tb_json_schema_cache_t write; /* the JSON of the schemas written */
    size_t last_len; /* the last message written: the next starts with that room */
} tb_json_converter_t;

/* In the order of tb_decimal_format_t. */
static const char *const decimal_formats[] = {"BASE64", "NUMERIC", NULL};

/* The keys a converter reads, filled from json_keys (tb_config_fill). */
typedef struct {
    bool schemas_enable;
    const char *schema_content; /* NULL or "" when unset */
    int decimal_format;         /* decimal_formats[] */
} json_keys_t;

/* The schema of schema.content's text, or NULL with the reason. */
static tb_schema_t *content_schema(const char *text, char *reason, size_t reason_size)
{
    json_error_t error;
    json_t *json = json_loads(text, 0, &error);
    tb_schema_t *schema = NULL;
    if (json == NULL) {
        snprintf(reason, reason_size, "Not a JSON object: %s (line %d, column %d)",
                 error.text, error.line, error.column);
        return NULL;
    }
    if (!json_is_object(json)) {
        snprintf(reason, reason_size,
                 "A schema is a JSON object, as in an envelope's "
                 "\"schema\"");
    } else {
        schema = tb_json_schema_parse(json, reason, reason_size);
    }
    json_decref(json);
    return schema;
}

static int check_schema_content(const json_t *value, char *reason, size_t reason_size)
{
    const char *text = json_string_value(value);
    tb_schema_t *schema;
    if (text == NULL || text[0] == '\0') {
        return 0;
    }
    schema = content_schema(text, reason, reason_size);
    tb_schema_decref(schema);
    return schema != NULL ? 0 : -1;
}

static const tb_config_def_t json_keys[] = {
    {.name = "schemas.enable",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Schemas",
     .order = 1,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Enable Schemas",
     .field = TB_CONFIG_AT(json_keys_t, schemas_enable),
     .documentation = "Whether each message is an envelope {\"schema\",\"payload\"}. "
                      "Sink plugins get the payload; source data gets a schema "
                      "inferred from its JSON."},
    {.name = "schemas.cache.size",
     .type = TB_CONFIG_INT,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Schemas",
     .order = 2,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Schema Cache Size",
     .documentation = "Accepted for compatibility: when transforms need Connect "
                      "data, tributary keeps the last 16 schemas read and the last 16 "
                      "written, whatever this says."},
    {.name = "schema.content",
     .type = TB_CONFIG_STRING,
     .default_value = NULL,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Schemas",
     .order = 3,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Schema Content",
     .check = check_schema_content,
     .field = TB_CONFIG_AT(json_keys_t, schema_content),
     .documentation = "A Connect schema as JSON (an envelope's \"schema\"). When set, "
                      "with schemas.enable, each message read is the payload alone, "
                      "without an envelope, and must fit this schema. Sink side only: "
                      "what source connectors write keeps its envelope."},
    {.name = "decimal.format",
     .type = TB_CONFIG_STRING,
     .default_value = "BASE64",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Serialization",
     .order = 4,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Decimal Format",
     .one_of = decimal_formats,
     .field = TB_CONFIG_ENUM_AT(json_keys_t, decimal_format),
     .documentation = "How Decimal values are written when transforms made Connect "
                      "data (case-insensitive): BASE64, the base64 text of the "
                      "unscaled bytes, or NUMERIC, a JSON number. Payloads that no "
                      "transform changed reach Kafka and sink plugins as written."},
    {.name = "replace.null.with.default",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Serialization",
     .order = 5,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Replace null with default",
     .documentation = "Accepted for compatibility: payloads reach sink plugins as "
                      "written, so a null stays null."},
};

static const tb_config_table_t json_table =
    TB_CONFIG_TABLE("org.apache.kafka.connect.json.JsonConverter", json_keys);

/* Connect's schema types. */
static const char *const schema_types[] = {
    "boolean", "int8",  "int16",  "int32", "int64", "float",
    "double",  "bytes", "string", "array", "map",   "struct",
};

/*
 * Sink side.
 */

static json_t *parse(const void *data, size_t len, size_t flags, const char *prefix,
                     char *errstr, size_t errstr_size)
{
    json_error_t error;
    json_t *value = json_loadb(data, len, flags, &error);
    if (value == NULL) {
        snprintf(errstr, errstr_size, "%s%s (line %d, column %d)", prefix, error.text,
                 error.line, error.column);
    }
    return value;
}

/* Checks that message is exactly {"schema","payload"} with a null schema or
 * one of a known type. */
static int check_envelope(const json_t *message, char *errstr, size_t errstr_size)
{
    const json_t *schema = json_object_get(message, "schema");
    const char *type;

    if (json_object_size(message) != 2 || schema == NULL ||
        json_object_get(message, "payload") == NULL) {
        snprintf(errstr, errstr_size, "%s", ENVELOPE_ERROR);
        return -1;
    }
    if (json_is_null(schema)) {
        return 0;
    }
    type = json_string_value(json_object_get(schema, "type"));
    if (type == NULL) {
        snprintf(errstr, errstr_size, "Schema must contain 'type' field");
        return -1;
    }
    for (size_t i = 0; i < sizeof(schema_types) / sizeof(schema_types[0]); i++) {
        if (strcmp(type, schema_types[i]) == 0) {
            return 0;
        }
    }
    snprintf(errstr, errstr_size, "Unknown schema type: %s", type);
    return -1;
}

/* Sets *out to the compacted s: s itself when nothing is to be dropped,
 * else a malloc'd copy. */
static int compact_view(const char *s, size_t n, const void **out, size_t *out_len,
                        bool *owned, char *errstr, size_t errstr_size)
{
    size_t used = tb_json_text_compact(NULL, s, n);
    char *copy;

    if (used == n) {
        *out = s;
        *out_len = n;
        return 0;
    }
    copy = malloc(used);
    if (copy == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    tb_json_text_compact(copy, s, n);
    *out = copy;
    *out_len = used;
    *owned = true;
    return 0;
}

/* A string value reaches the plugin as its text, unquoted, as Connect's
 * FileStreamSink writes a string: its UTF-8 bytes in a malloc'd copy. */
static int string_content(const json_t *value, const void **out, size_t *out_len,
                          bool *owned, char *errstr, size_t errstr_size)
{
    size_t n = json_string_length(value);
    char *copy = malloc(n ? n : 1);
    if (copy == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    memcpy(copy, json_string_value(value), n);
    *out = copy;
    *out_len = n;
    *owned = true;
    return 0;
}

static int json_to_plugin(void *state, const void *data, size_t len, const void **out,
                          size_t *out_len, bool *owned, char *errstr, size_t errstr_size)
{
    const tb_json_converter_t *jc = state;
    bool envelope = jc->schemas_enable && jc->content == NULL;
    size_t start = 0;
    size_t end = len;
    /* Numbers are only checked, so integers of any size are fine. */
    json_t *message = parse(data, len, PARSE_FLAGS | JSON_DECODE_INT_AS_REAL,
                            TO_CONNECT_ERROR, errstr, errstr_size);

    if (message == NULL) {
        goto fail;
    }
    if (jc->content != NULL) {
        tb_value_t *checked = NULL;
        if (tb_json_value_read(jc->content, data, len, &checked, errstr, errstr_size) !=
            0) {
            goto fail;
        }
        tb_value_free(checked);
        if (json_is_null(message)) {
            json_decref(message);
            return 0; /* a null payload is a null */
        }
    } else if (envelope) {
        if (check_envelope(message, errstr, errstr_size) != 0) {
            goto fail;
        }
        if (json_is_null(json_object_get(message, "payload"))) {
            json_decref(message);
            return 0; /* a null payload is a null */
        }
        tb_json_span_t span;
        tb_json_text_member((tb_json_span_t){data, len}, "payload", &span);
        start = (size_t)(span.s - (const char *)data);
        end = start + span.n;
    }
    json_t *value = envelope ? json_object_get(message, "payload") : message;
    if (json_is_string(value)) {
        int rc = string_content(value, out, out_len, owned, errstr, errstr_size);
        json_decref(message);
        return rc;
    }
    json_decref(message);
    return compact_view((const char *)data + start, end - start, out, out_len, owned,
                        errstr, errstr_size);

fail:
    json_decref(message);
    return -1;
}

/*
 * Source side.
 */

static void append(char *buf, size_t *used, const char *s, size_t n)
{
    memcpy(buf + *used, s, n);
    *used += n;
}

/* Writes {"schema":<schema>,"payload":<payload compacted>} to a new buffer,
 * or the compacted payload alone when schema is NULL. */
static int write_output(const char *schema, const char *payload, size_t payload_len,
                        void **out, size_t *out_len, char *errstr, size_t errstr_size)
{
    static const char head[] = "{\"schema\":";
    static const char middle[] = ",\"payload\":";
    size_t body = tb_json_text_compact(NULL, payload, payload_len);
    size_t wrap = schema != NULL ? strlen(head) + strlen(schema) + strlen(middle) + 1 : 0;
    size_t used = 0;
    char *buf = malloc(body + wrap);

    if (buf == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    if (schema != NULL) {
        append(buf, &used, head, strlen(head));
        append(buf, &used, schema, strlen(schema));
        append(buf, &used, middle, strlen(middle));
    }
    used += tb_json_text_compact(buf + used, payload, payload_len);
    if (schema != NULL) {
        append(buf, &used, "}", 1);
    }
    *out = buf;
    *out_len = used;
    return 0;
}

static int from_string(const tb_json_converter_t *jc, const void *data, size_t len,
                       void **out, size_t *out_len, char *errstr, size_t errstr_size)
{
    json_t *string = json_stringn(data, len);
    char *literal;
    int rc;

    if (string == NULL) {
        snprintf(errstr, errstr_size, "%sthe string is not valid UTF-8",
                 FROM_CONNECT_ERROR);
        return -1;
    }
    literal = json_dumps(string, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(string);
    if (literal == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    rc = write_output(jc->schemas_enable ? STRING_SCHEMA : NULL, literal, strlen(literal),
                      out, out_len, errstr, errstr_size);
    free(literal);
    return rc;
}

static int from_bytes(const tb_json_converter_t *jc, const void *data, size_t len,
                      void **out, size_t *out_len, char *errstr, size_t errstr_size)
{
    size_t encoded = 4 * ((len + 2) / 3);
    char *literal;
    int rc;

    if (len > INT_MAX) {
        snprintf(errstr, errstr_size, "%s%zu bytes are too many to encode",
                 FROM_CONNECT_ERROR, len);
        return -1;
    }
    literal = malloc(encoded + 3); /* quotes, and the NUL EVP_EncodeBlock adds */
    if (literal == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    literal[0] = '"';
    EVP_EncodeBlock((unsigned char *)literal + 1, data, (int)len);
    literal[encoded + 1] = '"';
    rc = write_output(jc->schemas_enable ? BYTES_SCHEMA : NULL, literal, encoded + 2, out,
                      out_len, errstr, errstr_size);
    free(literal);
    return rc;
}

static int from_json(const tb_json_converter_t *jc, const void *data, size_t len,
                     void **out, size_t *out_len, char *errstr, size_t errstr_size)
{
    /* A schema tells integers from reals; plain JSON only checks its
     * numbers, so integers of any size are fine there. */
    size_t flags = PARSE_FLAGS | (jc->schemas_enable ? 0 : JSON_DECODE_INT_AS_REAL);
    json_t *value = parse(data, len, flags, FROM_CONNECT_ERROR, errstr, errstr_size);
    char *schema = NULL;
    int rc = -1;

    if (value == NULL) {
        goto done;
    }
    if (jc->schemas_enable) {
        tb_schema_t *inferred = tb_json_infer_schema(value);
        json_t *inferred_json = inferred != NULL ? tb_json_schema_dump(inferred) : NULL;
        schema = inferred_json != NULL ? tb_json_write(inferred_json, NULL) : NULL;
        json_decref(inferred_json);
        tb_schema_decref(inferred);
        if (schema == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            goto done;
        }
    }
    rc = write_output(schema, data, len, out, out_len, errstr, errstr_size);

done:
    free(schema);
    json_decref(value);
    return rc;
}

static int json_from_plugin(void *state, tb_data_kind_t kind, const void *data,
                            size_t len, void **out, size_t *out_len, char *errstr,
                            size_t errstr_size)
{
    const tb_json_converter_t *jc = state;
    if (kind == TB_DATA_BYTES) {
        return from_bytes(jc, data, len, out, out_len, errstr, errstr_size);
    }
    if (kind == TB_DATA_STRING) {
        return from_string(jc, data, len, out, out_len, errstr, errstr_size);
    }
    return from_json(jc, data, len, out, out_len, errstr, errstr_size);
}

static void json_destroy(void *state)
{
    tb_json_converter_t *jc = state;
    if (jc != NULL) {
        tb_schema_decref(jc->content);
        tb_json_schema_cache_clear(&jc->read);
        tb_json_schema_cache_clear(&jc->write);
        free(jc);
    }
}

static void *json_create(const json_t *values, bool for_key, char *errstr,
                         size_t errstr_size)
{
    json_keys_t keys;
    (void)for_key; /* keys and values are converted alike */
    if (tb_config_fill(&json_table, values, &keys) != 0) {
        snprintf(errstr, errstr_size, "%s: a column does not fit its key's type",
                 json_table.name);
        return NULL;
    }
    tb_json_converter_t *jc = calloc(1, sizeof(*jc));
    if (jc == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    jc->schemas_enable = keys.schemas_enable;
    jc->decimals = (tb_decimal_format_t)keys.decimal_format;
    /* checked by check_schema_content; read only where it applies */
    if (keys.schemas_enable && keys.schema_content != NULL &&
        keys.schema_content[0] != '\0' &&
        (jc->content = content_schema(keys.schema_content, errstr, errstr_size)) ==
            NULL) {
        json_destroy(jc);
        return NULL;
    }
    return jc;
}

/*
 * Connect data.
 */

/* A message read in one pass (tb_json_reader.h), its schema known by its
 * text after the first; false when declined (nothing set): the jansson
 * path below then reads it, or says why it cannot be read. */
static bool read_quickly(tb_json_converter_t *jc, const char *data, size_t len,
                         tb_schema_t **schema, tb_value_t **value)
{
    tb_json_span_t schema_text;
    tb_json_span_t payload = {data, len};
    tb_schema_t *s = NULL;
    if (jc->content != NULL) {
        s = tb_schema_incref(jc->content);
    } else if (jc->schemas_enable) {
        if (!tb_json_read_envelope(data, len, tb_json_schema_cache_latest(&jc->read),
                                   &schema_text, &payload)) {
            return false;
        }
        bool null_schema = schema_text.n == 4 && memcmp(schema_text.s, "null", 4) == 0;
        if (!null_schema && (s = tb_json_schema_cache_parse(&jc->read, schema_text.s,
                                                            schema_text.n)) == NULL) {
            return false;
        }
    }
    if (!tb_json_read_value(s, payload.s, payload.n, value)) {
        tb_schema_decref(s);
        return false;
    }
    *schema = s;
    return true;
}

static int json_to_typed(void *state, const void *data, size_t len, tb_schema_t **schema,
                         tb_value_t **value, char *errstr, size_t errstr_size)
{
    tb_json_converter_t *jc = state;
    if (data != NULL && read_quickly(jc, data, len, schema, value)) {
        return 0;
    }
    json_t *message =
        parse(data, len, PARSE_FLAGS, TO_CONNECT_ERROR, errstr, errstr_size);
    char *widened = NULL;
    int rc = -1;

    /* an integer beyond 64 bits may be a Decimal's: read again as a real */
    if (message == NULL && strstr(errstr, "too big") != NULL &&
        (widened = tb_json_text_widen_integers(data, len, &len)) != NULL) {
        data = widened;
        message = parse(data, len, PARSE_FLAGS, TO_CONNECT_ERROR, errstr, errstr_size);
    }
    const json_t *payload = message;
    tb_json_span_t text = {data, len};
    if (message == NULL) {
        goto done;
    }
    if (jc->content != NULL) {
        *schema = tb_schema_incref(jc->content);
    } else if (jc->schemas_enable) {
        const json_t *schema_json = json_object_get(message, "schema");
        if (check_envelope(message, errstr, errstr_size) != 0 ||
            (!json_is_null(schema_json) &&
             (*schema = tb_json_schema_parse(schema_json, errstr, errstr_size)) ==
                 NULL)) {
            goto done;
        }
        payload = json_object_get(message, "payload");
    }
    if (tb_schema_contains_logical(*schema, TB_LOGICAL_DECIMAL)) {
        /* the payload's text gives the Decimals their digits */
        if (payload != message) {
            tb_json_text_member(text, "payload", &text);
        }
        rc = tb_json_value_parse_text(*schema, payload, text.s, text.n, value, errstr,
                                      errstr_size);
    } else {
        rc = tb_json_value_parse(*schema, payload, value, errstr, errstr_size);
    }
    if (rc != 0) {
        tb_schema_decref(*schema);
        *schema = NULL;
    }

done:
    json_decref(message);
    free(widened);
    return rc;
}

/* As Connect: no schema and no value is a null message; otherwise the
 * payload, in an envelope with schemas.enable (the schema's JSON built once
 * per schema). */
static int json_from_typed(void *state, const char *topic, const tb_schema_t *schema,
                           const tb_value_t *value, void **out, size_t *out_len,
                           char *errstr, size_t errstr_size)
{
    (void)topic; /* the format names no subject */
    tb_json_converter_t *jc = state;
    tb_buf_t b = {0};

    if (schema == NULL && value == NULL) {
        return 0;
    }
    /* records of a topic are much alike: one allocation with room to
     * spare, rather than a buffer doubled from small (copying the schema's
     * JSON each time) */
    tb_buf_reserve(&b, jc->last_len + jc->last_len / 8);
    if (jc->schemas_enable) {
        size_t n = 4;
        const char *text =
            schema != NULL ? tb_json_schema_cache_text(&jc->write, schema, &n) : "null";
        if (text == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            return -1;
        }
        tb_buf_append(&b, "{\"schema\":", 10);
        tb_buf_append(&b, text, n);
        tb_buf_append(&b, ",\"payload\":", 11);
    }
    if (tb_json_write_value(&b, schema, value, jc->decimals, errstr, errstr_size) != 0) {
        tb_buf_release(&b);
        return -1;
    }
    if (jc->schemas_enable) {
        tb_buf_append(&b, "}", 1);
    }
    *out = tb_buf_take(&b, out_len);
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "%sout of memory", FROM_CONNECT_ERROR);
        return -1;
    }
    jc->last_len = *out_len;
    return 0;
}

static bool json_schemaless(const void *state)
{
    const tb_json_converter_t *jc = state;
    return !jc->schemas_enable && jc->content == NULL;
}

const tb_converter_class_t tb_json_converter = {
    .name = "org.apache.kafka.connect.json.JsonConverter",
    .alias = "JsonConverter",
    .config = &json_table,
    .create = json_create,
    .destroy = json_destroy,
    .to_plugin = json_to_plugin,
    .from_plugin = json_from_plugin,
    .to_typed = json_to_typed,
    .from_typed = json_from_typed,
    .json_schemaless = json_schemaless,
};
