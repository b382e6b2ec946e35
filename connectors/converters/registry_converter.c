/*
 * registry_converter.c - what Confluent's AvroConverter, ProtobufConverter and
 * JsonSchemaConverter share: their settings, the registry client made from
 * them, the subject name strategies, the wire format, and a bounded cache of
 * compiled schemas by id (with the Connect schema of each).
 *
 * Sink side: the frame's schema id gives the writer's schema (fetched once,
 * then cached); the payload becomes JSON text. Source side: the plugin's data
 * becomes a JSON value (JSON text parsed; a string or the base64 text of bytes
 * as a JSON string, or parsed as JSON when the schema is not a string or
 * bytes), encoded under the subject's latest schema (use.latest.version), a
 * schema inferred and registered (auto.register.schemas), or an inferred
 * schema looked up without registering. Connect data (transforms) goes the
 * same ways, its schema derived from its Connect schema instead of
 * inferred from JSON.
 *
 * A registry that cannot be reached makes a call return TB_RESULT_RETRY:
 * the record is not at fault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_registry_converter.h"
#include "core/tb_secret.h"
#include "registry/tb_wire.h"

#define COMPILED_CACHE 64 /* compiled schemas a converter keeps */

typedef enum {
    TOPIC_NAME = 0,
    RECORD_NAME,
    TOPIC_RECORD_NAME,
} strategy_t;

#define MAX_SELECTOR 64 /* the bytes of a payload that pick a part of its schema */

typedef struct {
    int32_t id;
    void *compiled;                 /* NULL: a free slot */
    tb_schema_t *connect;           /* the Connect schema last asked for, of the part */
    uint8_t selector[MAX_SELECTOR]; /* that payloads starting so hold */
    size_t selector_len;
    uint64_t used;
} compiled_entry_t;

typedef struct {
    const tb_registry_format_t *format;
    tb_registry_t *registry;
    bool for_key;
    bool auto_register;
    bool use_latest;
    strategy_t strategy;
    compiled_entry_t cache[COMPILED_CACHE];
    uint64_t tick;
    char *last_inferred; /* the schema text last inferred, and its id */
    int32_t last_inferred_id;
    tb_schema_t *typed_schema; /* the Connect schema last written, and its text */
    char *typed_text;
} registry_converter_t;

/* -------------------------------------------------------------------------
 * Settings
 */

#define STRATEGY_DOC                                                                     \
    "How the subject is named: TopicNameStrategy (<topic>-key / <topic>-value), "        \
    "RecordNameStrategy (the record's full name) or TopicRecordNameStrategy "            \
    "(<topic>-<record name>); Confluent's class names or these short names."

static const char *const strategies[] = {
    "io.confluent.kafka.serializers.subject.TopicNameStrategy",
    "io.confluent.kafka.serializers.subject.RecordNameStrategy",
    "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
    "TopicNameStrategy",
    "RecordNameStrategy",
    "TopicRecordNameStrategy",
    NULL,
};

static const char *const basic_sources[] = {"URL", "USER_INFO", NULL};
static const char *const bearer_sources[] = {"STATIC_TOKEN", NULL};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t positive = {.has_min = true, .min = 1};

/* The keys a converter reads, filled from keys (tb_config_fill); strings
 * are borrowed from the parsed values. */
typedef struct {
    const char *urls;
    bool auto_register;
    bool use_latest;
    long long latest_ttl_sec;
    const char *key_strategy;   /* strategies[] */
    const char *value_strategy; /* strategies[] */
    const char *basic_source;   /* basic_sources[] */
    const char *user_info;
    const char *bearer_source; /* bearer_sources[], or NULL */
    const char *bearer_token;
    const char *ca_location;
    const char *cert_location;
    const char *key_location;
    const char *key_password;
    int timeout_ms;
    int max_retries;
    int retry_wait_ms;
    int retry_max_wait_ms;
    int cache_capacity;
} registry_keys_t;

static const tb_config_def_t keys[] = {
    {.name = "schema.registry.url",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Registry",
     .field = TB_CONFIG_AT(registry_keys_t, urls),
     .documentation = "Comma-separated URLs of the schema registry; a request goes to "
                      "the next when one does not answer."},
    {.name = "auto.register.schemas",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Serialization",
     .field = TB_CONFIG_AT(registry_keys_t, auto_register),
     .documentation = "Source side: register the schema inferred from each value "
                      "under its subject (else only look it up)."},
    {.name = "use.latest.version",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Serialization",
     .field = TB_CONFIG_AT(registry_keys_t, use_latest),
     .documentation = "Source side: encode values under the subject's latest schema "
                      "instead of one inferred from them."},
    {.name = "latest.cache.ttl.sec",
     .type = TB_CONFIG_LONG,
     .default_value = "-1",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Serialization",
     .field = TB_CONFIG_AT(registry_keys_t, latest_ttl_sec),
     .documentation = "How long a subject's latest version is kept before it is asked "
                      "again; -1: for as long as the task runs."},
    {.name = "key.subject.name.strategy",
     .type = TB_CONFIG_STRING,
     .default_value = "io.confluent.kafka.serializers.subject.TopicNameStrategy",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Serialization",
     .one_of = strategies,
     .field = TB_CONFIG_AT(registry_keys_t, key_strategy),
     .documentation = STRATEGY_DOC " For keys."},
    {.name = "value.subject.name.strategy",
     .type = TB_CONFIG_STRING,
     .default_value = "io.confluent.kafka.serializers.subject.TopicNameStrategy",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Serialization",
     .one_of = strategies,
     .field = TB_CONFIG_AT(registry_keys_t, value_strategy),
     .documentation = STRATEGY_DOC " For values."},
    {.name = "basic.auth.credentials.source",
     .type = TB_CONFIG_STRING,
     .default_value = "URL",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Security",
     .one_of = basic_sources,
     .field = TB_CONFIG_AT(registry_keys_t, basic_source),
     .documentation = "Where HTTP basic auth credentials come from: URL (user info in "
                      "the URLs) or USER_INFO (basic.auth.user.info)."},
    {.name = "basic.auth.user.info",
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Security",
     .field = TB_CONFIG_AT(registry_keys_t, user_info),
     .documentation = "user:password for USER_INFO; may be a secret reference such "
                      "as ${env:NAME} or ${file:/path:key}."},
    {.name = "bearer.auth.credentials.source",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Security",
     .one_of = bearer_sources,
     .field = TB_CONFIG_AT(registry_keys_t, bearer_source),
     .documentation = "STATIC_TOKEN to send bearer.auth.token as a bearer token."},
    {.name = "bearer.auth.token",
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Security",
     .field = TB_CONFIG_AT(registry_keys_t, bearer_token),
     .documentation = "The bearer token for STATIC_TOKEN; may be a secret reference."},
    {.name = "schema.registry.ssl.ca.location",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Security",
     .field = TB_CONFIG_AT(registry_keys_t, ca_location),
     .documentation = "PEM file of the CA that signed the registry's certificate "
                      "(default: the system's)."},
    {.name = "schema.registry.ssl.certificate.location",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Security",
     .field = TB_CONFIG_AT(registry_keys_t, cert_location),
     .documentation = "PEM client certificate for mutual TLS."},
    {.name = "schema.registry.ssl.key.location",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Security",
     .field = TB_CONFIG_AT(registry_keys_t, key_location),
     .documentation = "PEM key of the client certificate."},
    {.name = "schema.registry.ssl.key.password",
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Security",
     .field = TB_CONFIG_AT(registry_keys_t, key_password),
     .documentation = "Password of the client key; may be a secret reference."},
    {.name = "schema.registry.request.timeout.ms",
     .type = TB_CONFIG_INT,
     .default_value = "10000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Registry",
     .range = &positive,
     .field = TB_CONFIG_AT(registry_keys_t, timeout_ms),
     .documentation = "How long one request to one URL may take, connecting "
                      "included."},
    {.name = "max.retries",
     .type = TB_CONFIG_INT,
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Registry",
     .range = &non_negative,
     .field = TB_CONFIG_AT(registry_keys_t, max_retries),
     .documentation = "Rounds over the URLs after the first, when none answered, "
                      "before the record is left for later."},
    {.name = "retries.wait.ms",
     .type = TB_CONFIG_INT,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Registry",
     .range = &non_negative,
     .field = TB_CONFIG_AT(registry_keys_t, retry_wait_ms),
     .documentation = "The first backoff between rounds; it doubles each round. "
                      "After the last round, calls fail at once for this long."},
    {.name = "retries.max.wait.ms",
     .type = TB_CONFIG_INT,
     .default_value = "20000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Registry",
     .range = &non_negative,
     .field = TB_CONFIG_AT(registry_keys_t, retry_max_wait_ms),
     .documentation = "The backoff's ceiling."},
    {.name = "max.schemas.per.subject",
     .type = TB_CONFIG_INT,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Registry",
     .range = &positive,
     .field = TB_CONFIG_AT(registry_keys_t, cache_capacity),
     .documentation = "Entries of each of the client's caches (schemas by id, ids by "
                      "subject and schema, versions by subject)."},
};

const tb_config_table_t tb_avro_converter_config =
    TB_CONFIG_TABLE("io.confluent.connect.avro.AvroConverter", keys);
const tb_config_table_t tb_json_schema_converter_config =
    TB_CONFIG_TABLE("io.confluent.connect.json.JsonSchemaConverter", keys);

/* -------------------------------------------------------------------------
 * Creation
 */

static strategy_t strategy_of(const char *name)
{
    const char *simple = strrchr(name, '.') != NULL ? strrchr(name, '.') + 1 : name;
    if (strcasecmp(simple, "RecordNameStrategy") == 0) {
        return RECORD_NAME;
    }
    if (strcasecmp(simple, "TopicRecordNameStrategy") == 0) {
        return TOPIC_RECORD_NAME;
    }
    return TOPIC_NAME;
}

/* The secret value, a PASSWORD key's, refers to (malloc'd), NULL when
 * unset or unresolvable (*failed set then, with errstr naming key). */
static char *secret_of(const char *value, const char *key, bool *failed, char *errstr,
                       size_t errstr_size)
{
    char message[256];
    if (value == NULL) {
        return NULL;
    }
    char *secret = tb_secret_resolve(value, message, sizeof(message));
    if (secret == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", key, message);
        *failed = true;
    }
    return secret;
}

static tb_registry_t *client_of(const registry_keys_t *k, char *errstr,
                                size_t errstr_size)
{
    bool failed = false;
    bool user_info = strcasecmp(k->basic_source, "USER_INFO") == 0;
    bool bearer = k->bearer_source != NULL;
    char *info = user_info ? secret_of(k->user_info, "basic.auth.user.info", &failed,
                                       errstr, errstr_size)
                           : NULL;
    char *token = bearer && !failed ? secret_of(k->bearer_token, "bearer.auth.token",
                                                &failed, errstr, errstr_size)
                                    : NULL;
    char *key_password =
        !failed ? secret_of(k->key_password, "schema.registry.ssl.key.password", &failed,
                            errstr, errstr_size)
                : NULL;
    tb_registry_t *registry = NULL;
    long ttl_sec = (long)k->latest_ttl_sec;

    if (failed) {
        goto done;
    }
    if ((user_info && info == NULL) || (bearer && token == NULL)) {
        snprintf(errstr, errstr_size, "%s is required by its credentials source",
                 user_info && info == NULL ? "basic.auth.user.info"
                                           : "bearer.auth.token");
        goto done;
    }
    tb_registry_config_t config = {
        .urls = k->urls,
        .user_info = info,
        .bearer_token = token,
        .ca_location = k->ca_location,
        .cert_location = k->cert_location,
        .key_location = k->key_location,
        .key_password = key_password,
        .timeout_ms = k->timeout_ms,
        .max_retries = k->max_retries,
        .retry_wait_ms = k->retry_wait_ms,
        .retry_max_wait_ms = k->retry_max_wait_ms,
        .cache_capacity = (size_t)k->cache_capacity,
        .latest_ttl_ms = ttl_sec < 0 ? -1 : ttl_sec * 1000,
    };
    registry = tb_registry_create(&config, errstr, errstr_size);

done:
    tb_secret_free(info);
    tb_secret_free(token);
    tb_secret_free(key_password);
    return registry;
}

void *tb_registry_converter_create(const tb_registry_format_t *format,
                                   const json_t *values, bool for_key, char *errstr,
                                   size_t errstr_size)
{
    registry_keys_t k;
    /* the converters' tables share keys[] */
    if (tb_config_fill(&tb_avro_converter_config, values, &k) != 0) {
        snprintf(errstr, errstr_size, "%s: a column does not fit its key's type",
                 tb_avro_converter_config.name);
        return NULL;
    }
    registry_converter_t *rc = calloc(1, sizeof(*rc));
    if (rc == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    rc->format = format;
    rc->for_key = for_key;
    rc->auto_register = k.auto_register;
    rc->use_latest = k.use_latest;
    rc->strategy = strategy_of(for_key ? k.key_strategy : k.value_strategy);
    rc->registry = client_of(&k, errstr, errstr_size);
    if (rc->registry == NULL) {
        tb_registry_converter_destroy(rc);
        return NULL;
    }
    return rc;
}

void tb_registry_converter_destroy(void *state)
{
    registry_converter_t *rc = state;
    if (rc == NULL) {
        return;
    }
    for (size_t i = 0; i < COMPILED_CACHE; i++) {
        if (rc->cache[i].compiled != NULL) {
            rc->format->destroy(rc->cache[i].compiled);
            tb_schema_decref(rc->cache[i].connect);
        }
    }
    free(rc->last_inferred);
    tb_schema_decref(rc->typed_schema);
    free(rc->typed_text);
    tb_registry_destroy(rc->registry);
    free(rc);
}

/* -------------------------------------------------------------------------
 * Schemas by id
 */

/* TB_RESULT_RETRY for an unreachable registry, else -1. */
static int failure_of(tb_registry_status_t status)
{
    return status == TB_REGISTRY_UNAVAILABLE ? TB_RESULT_RETRY : -1;
}

static compiled_entry_t *entry_of(registry_converter_t *rc, int32_t id)
{
    for (size_t i = 0; i < COMPILED_CACHE; i++) {
        if (rc->cache[i].compiled != NULL && rc->cache[i].id == id) {
            rc->cache[i].used = ++rc->tick;
            return &rc->cache[i];
        }
    }
    return NULL;
}

static void *cached(registry_converter_t *rc, int32_t id)
{
    compiled_entry_t *entry = entry_of(rc, id);
    return entry != NULL ? entry->compiled : NULL;
}

/* Keeps compiled under id, in a free slot or the least recently used. */
static void remember(registry_converter_t *rc, int32_t id, void *compiled)
{
    compiled_entry_t *slot = &rc->cache[0];
    for (size_t i = 0; i < COMPILED_CACHE; i++) {
        if (rc->cache[i].compiled == NULL) {
            slot = &rc->cache[i];
            break;
        }
        if (rc->cache[i].used < slot->used) {
            slot = &rc->cache[i];
        }
    }
    if (slot->compiled != NULL) {
        rc->format->destroy(slot->compiled);
        tb_schema_decref(slot->connect);
    }
    *slot = (compiled_entry_t){.id = id, .compiled = compiled, .used = ++rc->tick};
}

/* Compiles a registry schema with what it references. */
static int compile_schema(registry_converter_t *rc, const tb_registry_schema_t *schema,
                          void **compiled, char *errstr, size_t errstr_size)
{
    json_t *references = NULL;
    char reason[384];

    if (schema->type != rc->format->type) {
        snprintf(errstr, errstr_size, "schema id %d is a %s schema, not %s",
                 (int)schema->id, tb_registry_type_name(schema->type),
                 tb_registry_type_name(rc->format->type));
        return -1;
    }
    tb_registry_status_t status = tb_registry_resolve_references(
        rc->registry, schema, &references, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        return failure_of(status);
    }
    *compiled = rc->format->compile(schema->text, references, reason, sizeof(reason));
    json_decref(references);
    if (*compiled == NULL) {
        snprintf(errstr, errstr_size, "schema id %d: %s", (int)schema->id, reason);
        return -1;
    }
    return 0;
}

/* The compiled schema of id (the converter's). Returns 0, -1 or
 * TB_RESULT_RETRY with errstr. */
static int schema_by_id(registry_converter_t *rc, int32_t id, void **compiled,
                        char *errstr, size_t errstr_size)
{
    tb_registry_schema_t *schema = NULL;
    *compiled = cached(rc, id);
    if (*compiled != NULL) {
        return 0;
    }
    tb_registry_status_t status =
        tb_registry_schema_by_id(rc->registry, id, &schema, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        return failure_of(status);
    }
    int result = compile_schema(rc, schema, compiled, errstr, errstr_size);
    tb_registry_schema_release(schema);
    if (result == 0) {
        remember(rc, id, *compiled);
    }
    return result;
}

/* -------------------------------------------------------------------------
 * Sink side
 */

int tb_registry_converter_to_plugin(void *state, const void *data, size_t len,
                                    const void **out, size_t *out_len, bool *owned,
                                    char *errstr, size_t errstr_size)
{
    registry_converter_t *rc = state;
    const uint8_t *payload;
    size_t payload_len;
    int32_t id;
    void *compiled;
    tb_buf_t text = {0};
    char reason[384];

    if (tb_wire_parse(data, len, &id, &payload, &payload_len, errstr, errstr_size) != 0) {
        return -1;
    }
    int rc_id = schema_by_id(rc, id, &compiled, errstr, errstr_size);
    if (rc_id != 0) {
        return rc_id;
    }
    if (rc->format->decode(compiled, payload, payload_len, &text, reason,
                           sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size, "%s record with schema id %d: %s", rc->format->name,
                 (int)id, reason);
        tb_buf_release(&text);
        return -1;
    }
    *out = tb_buf_take(&text, out_len);
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    *owned = true;
    return 0;
}

/* -------------------------------------------------------------------------
 * Source side
 */

/* The plugin's data as a JSON value (text parsed when as_json). */
static json_t *value_of(tb_data_kind_t kind, const void *data, size_t len, bool as_json,
                        char *errstr, size_t errstr_size)
{
    json_error_t error;
    json_t *value = NULL;
    if (kind == TB_DATA_JSON || (kind == TB_DATA_STRING && as_json)) {
        value = json_loadb(data, len, JSON_DECODE_ANY, &error);
        if (value == NULL) {
            snprintf(errstr, errstr_size, "the record is not JSON: %s", error.text);
        }
        return value;
    }
    if (kind == TB_DATA_STRING) {
        value = json_stringn(data, len);
    } else if (len <= INT32_MAX / 2) {
        char *text = malloc(4 * ((len + 2) / 3) + 1);
        if (text != NULL) {
            EVP_EncodeBlock((unsigned char *)text, data, (int)len);
            value = json_string(text);
            free(text);
        }
    }
    if (value == NULL) {
        snprintf(errstr, errstr_size, "the record is not UTF-8 text");
    }
    return value;
}

/* The subject for a record bound for topic whose schema is named name. */
static char *subject_of(const registry_converter_t *rc, const char *topic,
                        const char *name, char *errstr, size_t errstr_size)
{
    tb_buf_t subject = {0};
    if (rc->strategy != RECORD_NAME && topic == NULL) {
        snprintf(errstr, errstr_size,
                 "the subject name strategy needs the topic, which "
                 "the caller did not give");
        return NULL;
    }
    if (rc->strategy != TOPIC_NAME && name == NULL) {
        snprintf(errstr, errstr_size,
                 "RecordNameStrategy and TopicRecordNameStrategy need a record or "
                 "message at the schema's top level");
        return NULL;
    }
    switch (rc->strategy) {
    case TOPIC_NAME:
        tb_buf_printf(&subject, "%s-%s", topic, rc->for_key ? "key" : "value");
        break;
    case RECORD_NAME:
        tb_buf_puts(&subject, name);
        break;
    case TOPIC_RECORD_NAME:
        tb_buf_printf(&subject, "%s-%s", topic, name);
        break;
    }
    size_t n;
    char *text = tb_buf_take(&subject, &n);
    if (text == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    }
    return text;
}

/* The id and compiled form of the schema text (derived from the record)
 * under the subject the strategy gives, registered or looked up. */
static int registered_schema(registry_converter_t *rc, const char *topic,
                             const char *text, int32_t *id, void **compiled, char *errstr,
                             size_t errstr_size)
{
    char *subject = NULL;
    int result = -1;

    if (rc->last_inferred != NULL && strcmp(text, rc->last_inferred) == 0 &&
        (*compiled = cached(rc, rc->last_inferred_id)) != NULL) {
        *id = rc->last_inferred_id;
        result = 0;
        goto done;
    }
    *compiled = rc->format->compile(text, NULL, errstr, errstr_size);
    if (*compiled == NULL) {
        goto done;
    }
    subject =
        subject_of(rc, topic, rc->format->record_name(*compiled), errstr, errstr_size);
    tb_registry_status_t status =
        subject == NULL
            ? TB_REGISTRY_ERROR
            : tb_registry_schema_id(rc->registry, subject, rc->format->type, text, NULL,
                                    rc->auto_register, id, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        rc->format->destroy(*compiled);
        result = failure_of(status);
        goto done;
    }
    if (cached(rc, *id) == NULL) {
        remember(rc, *id, *compiled);
    } else {
        rc->format->destroy(*compiled);
        *compiled = cached(rc, *id);
    }
    free(rc->last_inferred);
    rc->last_inferred = strdup(text);
    rc->last_inferred_id = *id;
    result = 0;

done:
    free(subject);
    return result;
}

/* The subject's latest schema. With a strategy that names the subject after
 * a record, the record's name comes from text, the schema derived from the
 * record, as Confluent's converters take it from the Connect schema. */
static int latest_schema(registry_converter_t *rc, const char *topic, const char *text,
                         int32_t *id, void **compiled, char *errstr, size_t errstr_size)
{
    char *subject = NULL;
    void *inferred = NULL;
    tb_registry_schema_t *schema = NULL;
    int result = -1;

    if (rc->strategy != TOPIC_NAME &&
        (inferred = rc->format->compile(text, NULL, errstr, errstr_size)) == NULL) {
        goto done;
    }
    subject =
        subject_of(rc, topic, inferred != NULL ? rc->format->record_name(inferred) : NULL,
                   errstr, errstr_size);
    if (subject == NULL) {
        goto done;
    }
    tb_registry_status_t status = tb_registry_subject_version(
        rc->registry, subject, -1, &schema, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        result = failure_of(status);
        goto done;
    }
    *id = schema->id;
    *compiled = cached(rc, *id);
    result = 0;
    if (*compiled == NULL &&
        (result = compile_schema(rc, schema, compiled, errstr, errstr_size)) == 0) {
        remember(rc, *id, *compiled);
    }

done:
    tb_registry_schema_release(schema);
    if (inferred != NULL) {
        rc->format->destroy(inferred);
    }
    free(subject);
    return result;
}

/* The id and compiled schema a record whose derived schema is text goes
 * under: the subject's latest (use.latest.version) or text itself. */
static int schema_for(registry_converter_t *rc, const char *topic, const char *text,
                      int32_t *id, void **compiled, char *errstr, size_t errstr_size)
{
    if (rc->use_latest) {
        return latest_schema(rc, topic, text, id, compiled, errstr, errstr_size);
    }
    return registered_schema(rc, topic, text, id, compiled, errstr, errstr_size);
}

/* What a frame holds: a plugin's JSON value, or Connect data. */
typedef struct {
    const json_t *json; /* NULL: schema and value */
    const tb_schema_t *schema;
    const tb_value_t *value;
} frame_data_t;

/* Encodes data under id and compiled into a new frame. */
static int frame(registry_converter_t *rc, int32_t id, const void *compiled,
                 const frame_data_t *data, void **out, size_t *out_len, char *errstr,
                 size_t errstr_size)
{
    tb_buf_t bytes = {0};
    char reason[384];
    tb_wire_header(&bytes, id);
    int encoded =
        data->json != NULL
            ? rc->format->encode(compiled, data->json, &bytes, reason, sizeof(reason))
            : rc->format->from_value(compiled, data->schema, data->value, &bytes, reason,
                                     sizeof(reason));
    if (encoded != 0) {
        snprintf(errstr, errstr_size, "%s schema id %d: %s", rc->format->name, (int)id,
                 reason);
        tb_buf_release(&bytes);
        return -1;
    }
    *out = tb_buf_take(&bytes, out_len);
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}

int tb_registry_converter_from_plugin(void *state, const char *topic, tb_data_kind_t kind,
                                      const void *data, size_t len, void **out,
                                      size_t *out_len, char *errstr, size_t errstr_size)
{
    registry_converter_t *rc = state;
    json_t *value = value_of(kind, data, len, false, errstr, errstr_size);
    void *compiled = NULL;
    int32_t id = 0;
    int result = -1;
    /* TopicNameStrategy's latest schema needs no schema of the record */
    bool derive = !rc->use_latest || rc->strategy != TOPIC_NAME;
    char *text =
        value != NULL && derive ? rc->format->infer(value, errstr, errstr_size) : NULL;

    if (value == NULL || (derive && text == NULL)) {
        json_decref(value);
        return -1;
    }
    result = schema_for(rc, topic, text, &id, &compiled, errstr, errstr_size);
    free(text);
    if (result == 0 && kind == TB_DATA_STRING && !rc->format->takes_text(compiled)) {
        json_decref(value);
        value = value_of(kind, data, len, true, errstr, errstr_size);
        result = value != NULL ? 0 : -1;
    }
    if (result == 0) {
        result = frame(rc, id, compiled, &(frame_data_t){.json = value}, out, out_len,
                       errstr, errstr_size);
    }
    json_decref(value);
    return result;
}

/* -------------------------------------------------------------------------
 * Connect data
 */

int tb_registry_converter_to_typed(void *state, const void *data, size_t len,
                                   tb_schema_t **schema, tb_value_t **value, char *errstr,
                                   size_t errstr_size)
{
    registry_converter_t *rc = state;
    const uint8_t *payload;
    size_t payload_len;
    int32_t id;
    void *compiled;
    char reason[384];

    if (tb_wire_parse(data, len, &id, &payload, &payload_len, errstr, errstr_size) != 0) {
        return -1;
    }
    int rc_id = schema_by_id(rc, id, &compiled, errstr, errstr_size);
    if (rc_id != 0) {
        return rc_id;
    }
    compiled_entry_t *entry = entry_of(rc, id);
    size_t selector =
        rc->format->selector != NULL ? rc->format->selector(payload, payload_len) : 0;
    selector = selector <= MAX_SELECTOR ? selector : 0;
    if (entry->connect != NULL && (entry->selector_len != selector ||
                                   memcmp(entry->selector, payload, selector) != 0)) {
        tb_schema_decref(entry->connect);
        entry->connect = NULL;
    }
    if (entry->connect == NULL &&
        (entry->connect = rc->format->to_connect(compiled, payload, payload_len, reason,
                                                 sizeof(reason))) == NULL) {
        snprintf(errstr, errstr_size, "%s schema id %d: %s", rc->format->name, (int)id,
                 reason);
        return -1;
    }
    memcpy(entry->selector, payload, selector);
    entry->selector_len = selector;
    if (rc->format->to_value(compiled, entry->connect, payload, payload_len, value,
                             reason, sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size, "%s record with schema id %d: %s", rc->format->name,
                 (int)id, reason);
        return -1;
    }
    *schema = tb_schema_incref(entry->connect);
    return 0;
}

/* The schema text of a Connect schema: the last one's when it is the same. */
static const char *typed_text(registry_converter_t *rc, const tb_schema_t *schema,
                              char *errstr, size_t errstr_size)
{
    if (rc->typed_schema != NULL &&
        (rc->typed_schema == schema || tb_schema_equal(rc->typed_schema, schema))) {
        return rc->typed_text;
    }
    char *text = rc->format->from_connect(schema, errstr, errstr_size);
    if (text == NULL) {
        return NULL;
    }
    tb_schema_decref(rc->typed_schema);
    free(rc->typed_text);
    rc->typed_schema = tb_schema_incref((tb_schema_t *)schema);
    rc->typed_text = text;
    return text;
}

int tb_registry_converter_from_typed(void *state, const char *topic,
                                     const tb_schema_t *schema, const tb_value_t *value,
                                     void **out, size_t *out_len, char *errstr,
                                     size_t errstr_size)
{
    registry_converter_t *rc = state;
    void *compiled = NULL;
    int32_t id = 0;
    char reason[384];

    if (value == NULL) {
        return 0; /* a null is a null record, as the serializers write it */
    }
    const char *text = typed_text(rc, schema, reason, sizeof(reason));
    if (text == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", rc->format->name, reason);
        return -1;
    }
    int result = schema_for(rc, topic, text, &id, &compiled, errstr, errstr_size);
    if (result != 0) {
        return result;
    }
    return frame(rc, id, compiled, &(frame_data_t){.schema = schema, .value = value}, out,
                 out_len, errstr, errstr_size);
}
