/*
 * search_sink.c - a sink that indexes records into Elasticsearch or
 * OpenSearch through the _bulk API, with the keys of Confluent's
 * ElasticsearchSinkConnector (which Aiven's OpensearchSinkConnector also
 * follows, adding topic.to.index.map).
 *
 * put() turns the records it is lent into bulk requests of about
 * batch.size records and bulk.size.bytes (a record's id always falls in the
 * same request, so that two writes of one document keep their order) and
 * returns: the client's thread sends them, at most max.in.flight.requests
 * at once, and wakes the task when one is answered; the next put() (with
 * no records, after that wake) or flush() handles the answer on the task's
 * thread. Until then the request's records hold back their partitions'
 * offsets (pending_offset). With write.method=upsert and keys, a request
 * holding an id of an earlier one still unanswered waits for it (an update
 * carries no version to order it). Past max.buffered.records held, put()
 * is busy: the runtime holds the records until a wake. A replay writes the
 * same documents again under the same ids (the offset as external version
 * when the key is the id), so a crash and replay leave each document once.
 *
 * Failures: a request that cannot reach the cluster, times out, or gets
 * 429 or 5xx (for itself or for one of its items) is sent again after
 * retry.backoff.ms, doubled per retry, up to max.retries times; then the
 * task fails (nothing is skipped). Version conflicts are ignored (a newer
 * version is there). A document refused for what it holds (a mapping
 * conflict) follows behavior.on.malformed.documents: fail hands it to the
 * runtime's errors.tolerance (dead letter queue, or the task fails), warn
 * logs it, ignore drops it. Any other refusal fails the task.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/search/tb_search_sink.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.task"

#define KEY_URL "connection.url"
#define KEY_USER "connection.username"
#define KEY_PASSWORD "connection.password"
#define KEY_PROTOCOL "elastic.security.protocol"
#define KEY_TRUSTSTORE "elastic.https.ssl.truststore.location"
#define KEY_TRUSTSTORE_TYPE "elastic.https.ssl.truststore.type"
#define KEY_TRUSTSTORE_PASSWORD "elastic.https.ssl.truststore.password"
#define KEY_KEYSTORE "elastic.https.ssl.keystore.location"
#define KEY_KEYSTORE_TYPE "elastic.https.ssl.keystore.type"
#define KEY_KEYSTORE_PASSWORD "elastic.https.ssl.keystore.password"
#define KEY_KEY_PASSWORD "elastic.https.ssl.key.password"
#define KEY_ENDPOINT_ID "elastic.https.ssl.endpoint.identification.algorithm"
#define KEY_KEY_IGNORE "key.ignore"
#define KEY_SCHEMA_IGNORE "schema.ignore"
#define KEY_COMPACT "compact.map.entries"
#define KEY_WRITE_METHOD "write.method"
#define KEY_NULL_VALUES "behavior.on.null.values"
#define KEY_MALFORMED "behavior.on.malformed.documents"
#define KEY_DROP_INVALID "drop.invalid.message"
#define KEY_BATCH_SIZE "batch.size"
#define KEY_BULK_BYTES "bulk.size.bytes"
#define KEY_LINGER "linger.ms"
#define KEY_IN_FLIGHT "max.in.flight.requests"
#define KEY_BUFFERED "max.buffered.records"
#define KEY_FLUSH_TIMEOUT "flush.timeout.ms"
#define KEY_RETRIES "max.retries"
#define KEY_BACKOFF "retry.backoff.ms"
#define KEY_CONNECT_TIMEOUT "connection.timeout.ms"
#define KEY_READ_TIMEOUT "read.timeout.ms"
#define KEY_STREAM_TYPE "data.stream.type"
#define KEY_STREAM_DATASET "data.stream.dataset"
#define KEY_STREAM_TIMESTAMP "data.stream.timestamp.field"
#define KEY_VERSION_HEADER "external.version.header"
#define KEY_INDEX_MAP "topic.to.index.map"

#define GROUP_CONNECTOR "Connector"
#define GROUP_DATA "Data Conversion"
#define GROUP_SECURITY "Security"
#define GROUP_STREAM "Data Stream"

enum { PROTOCOL_PLAINTEXT = 0, PROTOCOL_SSL };
static const char *const protocols[] = {"PLAINTEXT", "SSL", NULL};
enum { STORE_JKS = 0, STORE_PKCS12, STORE_PEM };
static const char *const store_types[] = {"JKS", "PKCS12", "PEM", NULL};
static const char *const write_methods[] = {"insert", "upsert", NULL};
static const char *const null_behaviors[] = {"ignore", "delete", "fail", NULL};
enum { MALFORMED_IGNORE = 0, MALFORMED_WARN, MALFORMED_FAIL };
static const char *const malformed_behaviors[] = {"ignore", "warn", "fail", NULL};
static const char *const stream_types[] = {"none", "logs", "metrics", NULL};

static const tb_config_range_t batch_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 1000000};
static const tb_config_range_t bulk_range = {
    .has_min = true, .min = -1, .has_max = true, .max = 2147483647};
static const tb_config_range_t in_flight_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 1000};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t timeout_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 2147483647};

typedef struct {
    const json_t *urls;
    const char *username;
    const char *password;
    int protocol;
    const char *truststore;
    int truststore_type;
    const char *truststore_password;
    const char *keystore;
    int keystore_type;
    const char *keystore_password;
    const char *key_password;
    const char *endpoint_id;
    bool key_ignore;
    bool schema_ignore;
    bool compact;
    int write_method;
    int null_values;
    int malformed;
    bool drop_invalid;
    int batch_size;
    long long bulk_bytes;
    long long linger_ms;
    int in_flight;
    int buffered;
    long long flush_timeout_ms;
    int retries;
    long long backoff_ms;
    long long connect_timeout_ms;
    long long read_timeout_ms;
    int stream_type;
    const char *stream_dataset;
    const json_t *stream_timestamp;
    const char *version_header;
    const json_t *index_map;
} search_settings_t;

#define AT(member) TB_CONFIG_AT(search_settings_t, member)
#define ENUM_AT(member) TB_CONFIG_ENUM_AT(search_settings_t, member)

/* topic.to.index.map is last: the Elasticsearch table leaves it out. */
static const tb_config_def_t search_keys[] = {
    {.name = KEY_URL,
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_CONNECTOR,
     .order = 1,
     .width = TB_WIDTH_LONG,
     .display_name = "Connection URLs",
     .role = TB_CONFIG_ROLE_URL,
     .check = tb_search_urls_check,
     .field = AT(urls),
     .documentation = "The cluster's HTTP URLs, comma-separated, e.g. "
                      "http://node1:9200,http://node2:9200. Requests go to the first; "
                      "when it cannot be reached, to the next."},
    {.name = KEY_USER,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_CONNECTOR,
     .order = 2,
     .field = AT(username),
     .documentation = "User of HTTP basic authentication; with connection.password."},
    {.name = KEY_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_CONNECTOR,
     .order = 3,
     .field = AT(password),
     .documentation = "Password of connection.username; a secret reference."},
    {.name = KEY_BATCH_SIZE,
     .type = TB_CONFIG_INT,
     .default_value = "2000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_CONNECTOR,
     .order = 4,
     .range = &batch_range,
     .field = AT(batch_size),
     .documentation = "About how many records one bulk request holds."},
    {.name = KEY_BULK_BYTES,
     .type = TB_CONFIG_LONG,
     .default_value = "5242880",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 5,
     .range = &bulk_range,
     .field = AT(bulk_bytes),
     .documentation = "About how many bytes one bulk request holds; -1 for no limit."},
    {.name = KEY_IN_FLIGHT,
     .type = TB_CONFIG_INT,
     .default_value = "5",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_CONNECTOR,
     .order = 6,
     .range = &in_flight_range,
     .field = AT(in_flight),
     .documentation = "Most bulk requests a task has on the wire at once; they are "
                      "sent by the task's client thread, so that no pool thread waits "
                      "for the cluster."},
    {.name = KEY_BUFFERED,
     .type = TB_CONFIG_INT,
     .default_value = "20000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 7,
     .range = &at_least_one,
     .field = AT(buffered),
     .documentation = "Most records a task holds in bulk requests not answered yet "
                      "(about; one poll's records more); then it takes no more until a "
                      "request is answered."},
    {.name = KEY_LINGER,
     .type = TB_CONFIG_LONG,
     .default_value = "1",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 8,
     .range = &non_negative,
     .field = AT(linger_ms),
     .documentation = "Accepted for compatibility: the records of each put() go out "
                      "at once, batched as they come from Kafka."},
    {.name = KEY_FLUSH_TIMEOUT,
     .type = TB_CONFIG_LONG,
     .default_value = "180000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 9,
     .range = &timeout_range,
     .field = AT(flush_timeout_ms),
     .documentation = "Longest time a task may stay full (max.buffered.records in "
                      "requests not answered), in milliseconds; then it fails."},
    {.name = KEY_RETRIES,
     .type = TB_CONFIG_INT,
     .default_value = "5",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 10,
     .range = &non_negative,
     .field = AT(retries),
     .documentation = "Retries of a bulk request the cluster could not take (no "
                      "connection, timeout, 429, 5xx) before the task fails."},
    {.name = KEY_BACKOFF,
     .type = TB_CONFIG_LONG,
     .default_value = "100",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 11,
     .range = &non_negative,
     .field = AT(backoff_ms),
     .documentation = "Wait before the first retry, in milliseconds; doubled for each "
                      "further retry."},
    {.name = KEY_CONNECT_TIMEOUT,
     .type = TB_CONFIG_INT,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 12,
     .range = &timeout_range,
     .field = AT(connect_timeout_ms),
     .documentation = "Longest wait for a connection to the cluster, in milliseconds."},
    {.name = KEY_READ_TIMEOUT,
     .type = TB_CONFIG_INT,
     .default_value = "3000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_CONNECTOR,
     .order = 13,
     .range = &timeout_range,
     .field = AT(read_timeout_ms),
     .documentation = "Longest wait for the cluster's answer to a request once "
                      "connected, in milliseconds; then the request is retried."},
    {.name = KEY_KEY_IGNORE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_DATA,
     .order = 1,
     .field = AT(key_ignore),
     .documentation = "true: the document id is <topic>+<partition>+<offset>. false: "
                      "the record key (a string or an integer) is the id, and the "
                      "offset the document's external version, so that a replay never "
                      "overwrites a newer document."},
    {.name = KEY_SCHEMA_IGNORE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 2,
     .field = AT(schema_ignore),
     .documentation = "false: an index the connector creates gets a mapping made from "
                      "the value's Connect schema (an existing index without one gets "
                      "it too). true: the cluster's dynamic mapping applies."},
    {.name = KEY_COMPACT,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 3,
     .field = AT(compact),
     .documentation = "true: a map of a value schema with string keys is written as an "
                      "object. false: as an array of {\"key\",\"value\"} entries, as "
                      "maps with other keys always are. A schemaless value's maps with "
                      "string keys are objects either way."},
    {.name = KEY_WRITE_METHOD,
     .type = TB_CONFIG_STRING,
     .default_value = "insert",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 4,
     .one_of = write_methods,
     .field = ENUM_AT(write_method),
     .documentation = "insert: each record replaces its document. upsert: its fields "
                      "are merged into the document (created when missing); an "
                      "update carries no external version."},
    {.name = KEY_NULL_VALUES,
     .type = TB_CONFIG_STRING,
     .default_value = "fail",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 5,
     .one_of = null_behaviors,
     .field = ENUM_AT(null_values),
     .documentation = "A record with a null value (a tombstone): ignore skips it; "
                      "delete deletes the document of its key (needs "
                      "key.ignore=false); fail hands it to errors.tolerance."},
    {.name = KEY_MALFORMED,
     .type = TB_CONFIG_STRING,
     .default_value = "fail",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 6,
     .one_of = malformed_behaviors,
     .field = ENUM_AT(malformed),
     .documentation = "A document the cluster refuses for what it holds (a mapping "
                      "conflict, a field it cannot parse): ignore drops it; warn drops "
                      "it with a warning; fail hands it to errors.tolerance (the dead "
                      "letter queue, or the task fails)."},
    {.name = KEY_DROP_INVALID,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 7,
     .field = AT(drop_invalid),
     .documentation = "A record that cannot become a document (a null or unusable "
                      "key, a value that is no structure): true drops it with a "
                      "warning; false hands it to errors.tolerance."},
    {.name = KEY_VERSION_HEADER,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 8,
     .field = AT(version_header),
     .documentation = "With key.ignore=false, the record header whose value (a "
                      "non-negative integer) is the external version instead of the "
                      "offset; a record without it is invalid (drop.invalid.message)."},
    {.name = KEY_STREAM_TYPE,
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STREAM,
     .order = 1,
     .one_of = stream_types,
     .field = ENUM_AT(stream_type),
     .documentation = "none writes to indexes. logs or metrics write to the data "
                      "stream <type>-<dataset>-<topic> (its index template must exist) "
                      "with create actions, each document with an @timestamp."},
    {.name = KEY_STREAM_DATASET,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STREAM,
     .order = 2,
     .field = AT(stream_dataset),
     .documentation = "The dataset part of data stream names: lower case, at most 100 "
                      "characters, no '-', '\\\\', '/', '*', '?', '\"', '<', '>', '|', "
                      "',', '#', ':' or space. Required with a data.stream.type."},
    {.name = KEY_STREAM_TIMESTAMP,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STREAM,
     .order = 3,
     .field = AT(stream_timestamp),
     .documentation = "Value fields whose first present one becomes a data stream "
                      "document's @timestamp; the record's timestamp when none is."},
    {.name = KEY_PROTOCOL,
     .type = TB_CONFIG_STRING,
     .default_value = "PLAINTEXT",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_SECURITY,
     .order = 1,
     .one_of = protocols,
     .field = ENUM_AT(protocol),
     .documentation = "SSL makes elastic.https.ssl.* apply to https:// URLs."},
    {.name = KEY_TRUSTSTORE,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_SECURITY,
     .order = 2,
     .role = TB_CONFIG_ROLE_PATH,
     .field = AT(truststore),
     .documentation = "File of the certificate authorities that sign the cluster's "
                      "certificate; the system's when not set. PEM only."},
    {.name = KEY_TRUSTSTORE_TYPE,
     .type = TB_CONFIG_STRING,
     .default_value = "JKS",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SECURITY,
     .order = 3,
     .one_of = store_types,
     .field = ENUM_AT(truststore_type),
     .documentation = "Format of the trust store: must be PEM when a trust store is "
                      "set (Java key stores cannot be read)."},
    {.name = KEY_TRUSTSTORE_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SECURITY,
     .order = 4,
     .field = AT(truststore_password),
     .documentation = "Accepted for compatibility: a PEM trust store has no password."},
    {.name = KEY_KEYSTORE,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_SECURITY,
     .order = 5,
     .role = TB_CONFIG_ROLE_PATH,
     .field = AT(keystore),
     .documentation = "PEM file of the client certificate and its private key, for a "
                      "cluster that authenticates clients by TLS."},
    {.name = KEY_KEYSTORE_TYPE,
     .type = TB_CONFIG_STRING,
     .default_value = "JKS",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SECURITY,
     .order = 6,
     .one_of = store_types,
     .field = ENUM_AT(keystore_type),
     .documentation = "Format of the key store: must be PEM when a key store is set."},
    {.name = KEY_KEYSTORE_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SECURITY,
     .order = 7,
     .field = AT(keystore_password),
     .documentation = "Accepted for compatibility: a PEM key store has no password of "
                      "its own (see elastic.https.ssl.key.password)."},
    {.name = KEY_KEY_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SECURITY,
     .order = 8,
     .field = AT(key_password),
     .documentation = "Password of the key store's private key, when it is encrypted."},
    {.name = KEY_ENDPOINT_ID,
     .type = TB_CONFIG_STRING,
     .default_value = "https",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_SECURITY,
     .order = 9,
     .field = AT(endpoint_id),
     .documentation = "https checks that the cluster's certificate names its host; "
                      "empty does not (the certificate is still verified)."},
    {.name = KEY_INDEX_MAP,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_DATA,
     .order = 9,
     .field = AT(index_map),
     .documentation = "topic:index pairs, comma-separated: the index a topic's records "
                      "go to instead of the topic's name lower-cased."},
};

/* Confluent's connector has no topic.to.index.map: its table stops before. */
static const tb_config_table_t elastic_table = {
    .name = "Elasticsearch sink",
    .defs = search_keys,
    .count = sizeof(search_keys) / sizeof(search_keys[0]) - 1};
static const tb_config_table_t opensearch_table =
    TB_CONFIG_TABLE("OpenSearch sink", search_keys);

/* ---- validation ---- */

static bool nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static void check_store(json_t *errors, const char *location, int type, const char *key,
                        const char *type_key)
{
    if (nonempty(location) && type != STORE_PEM) {
        char message[256];
        snprintf(message, sizeof(message),
                 "%s must be PEM when %s is set: Java key stores (JKS, PKCS12) cannot "
                 "be read; convert the store to a PEM file",
                 type_key, key);
        tb_config_error_add(errors, type_key, message);
    }
}

static void check_dataset(const search_settings_t *s, json_t *errors)
{
    const char *d = s->stream_dataset;
    if (s->stream_type == TB_SEARCH_STREAM_NONE) {
        return;
    }
    if (!nonempty(d)) {
        tb_config_error_add(errors, KEY_STREAM_DATASET,
                            KEY_STREAM_DATASET " is required when " KEY_STREAM_TYPE
                                               " is logs or metrics");
        return;
    }
    bool ok = strlen(d) <= 100 && strpbrk(d, "-\\/*?\"<>|,#: ") == NULL;
    for (const char *p = d; ok && *p != '\0'; p++) {
        ok = !(*p >= 'A' && *p <= 'Z');
    }
    if (!ok) {
        tb_config_error_add(errors, KEY_STREAM_DATASET,
                            "Invalid value for configuration " KEY_STREAM_DATASET
                            ": it must be lower case, at most 100 characters, without "
                            "'-', '\\', '/', '*', '?', '\"', '<', '>', '|', ',', '#', "
                            "':' or spaces");
    }
}

static void check_index_map(const search_settings_t *s, json_t *errors)
{
    size_t i;
    json_t *entry;
    json_array_foreach (s->index_map, i, entry) {
        const char *text = json_string_value(entry);
        const char *colon = strrchr(text, ':');
        if (colon == NULL || colon == text || colon[1] == '\0') {
            char message[256];
            snprintf(message, sizeof(message),
                     "Invalid value for configuration " KEY_INDEX_MAP
                     ": entry %zu is not of the form topic:index",
                     i + 1);
            tb_config_error_add(errors, KEY_INDEX_MAP, message);
        }
    }
}

static void check_settings(const search_settings_t *s, json_t *errors)
{
    if (nonempty(s->username) != nonempty(s->password)) {
        tb_config_error_add(errors, nonempty(s->username) ? KEY_PASSWORD : KEY_USER,
                            KEY_USER " and " KEY_PASSWORD " go together: set both or "
                                     "neither");
    }
    if (s->null_values == TB_SEARCH_NULL_DELETE && s->key_ignore) {
        tb_config_error_add(errors, KEY_NULL_VALUES,
                            KEY_NULL_VALUES "=delete deletes the document of a record's "
                                            "key, which needs " KEY_KEY_IGNORE "=false");
    }
    if (nonempty(s->version_header) && s->key_ignore) {
        tb_config_error_add(errors, KEY_VERSION_HEADER,
                            KEY_VERSION_HEADER " sets the version of documents whose "
                                               "id is the key: it needs " KEY_KEY_IGNORE
                                               "=false");
    }
    if (s->protocol == PROTOCOL_SSL) {
        check_store(errors, s->truststore, s->truststore_type, KEY_TRUSTSTORE,
                    KEY_TRUSTSTORE_TYPE);
        check_store(errors, s->keystore, s->keystore_type, KEY_KEYSTORE,
                    KEY_KEYSTORE_TYPE);
    }
    check_dataset(s, errors);
    if (s->index_map != NULL) {
        check_index_map(s, errors);
    }
}

static void validate_with(const tb_config_table_t *table, const json_t *values,
                          json_t *errors)
{
    search_settings_t settings;
    if (tb_config_fill(table, values, &settings) == 0) {
        check_settings(&settings, errors);
    }
}

static void elastic_validate(const json_t *values, json_t *errors)
{
    validate_with(&elastic_table, values, errors);
}

static void opensearch_validate(const json_t *values, json_t *errors)
{
    validate_with(&opensearch_table, values, errors);
}

static json_t *search_task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_array_append_new(list, json_deep_copy(config));
    }
    return list;
}

/* ---- the task ---- */

typedef struct {
    const tb_task_context_t *ctx;
    json_t *values; /* the parsed config, which settings borrow from */
    search_settings_t s;
    tb_search_doc_options_t doc;
    tb_search_client_options_t client_options;
    tb_search_client_t *client;
    json_t *ready_indexes; /* index names made ready by this task */
    int attempts;          /* failed index readyings in a row */
    struct bulk **bulks;   /* held, oldest first: each not written yet */
    size_t bulk_count;
    size_t bulk_cap;
    size_t buffered;    /* records in them */
    int64_t busy_since; /* monotonic ms of the first busy put() in a row; 0 */
} search_task_t;

static void bulk_free(struct bulk *b);

static void search_task_stop(void *opaque)
{
    search_task_t *task = opaque;
    if (task == NULL) {
        return;
    }
    tb_search_client_free(task->client);
    for (size_t i = 0; i < task->bulk_count; i++) {
        bulk_free(task->bulks[i]);
    }
    free(task->bulks);
    json_decref(task->ready_indexes);
    json_decref(task->values);
    free(task);
}

/* A bulk request was answered: the next put() handles it. */
static void on_done(void *arg)
{
    const search_task_t *task = arg;
    if (task->ctx->wake != NULL) {
        task->ctx->wake(task->ctx->runtime);
    }
}

static const char *or_null(const char *s)
{
    return nonempty(s) ? s : NULL;
}

static int start_with(const tb_config_table_t *table, const tb_task_context_t *ctx,
                      const json_t *config, void **out, char *errstr, size_t errstr_size)
{
    const tb_config_table_t *tables[] = {table};
    json_t *errors = json_object();
    search_task_t *task = calloc(1, sizeof(*task));
    int rc = -1;

    if (task == NULL || errors == NULL) {
        snprintf(errstr, errstr_size, "out of memory starting the search sink");
        goto fail;
    }
    task->ctx = ctx;
    task->values = tb_config_parse(tables, 1, config, errors);
    if (tb_config_error_count(errors) == 0 &&
        tb_config_fill(table, task->values, &task->s) == 0) {
        check_settings(&task->s, errors);
    }
    if (tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        goto fail;
    }
    const search_settings_t *s = &task->s;
    bool ssl = s->protocol == PROTOCOL_SSL;
    task->doc = (tb_search_doc_options_t){
        .key_ignore = s->key_ignore,
        .schema_ignore = s->schema_ignore,
        .compact_map_entries = s->compact,
        .write_method = s->write_method,
        .null_values = s->null_values,
        .stream_type = s->stream_type,
        .stream_dataset = s->stream_dataset,
        .stream_timestamp_fields = s->stream_timestamp,
        .version_header = or_null(s->version_header),
        .index_map = table == &opensearch_table ? s->index_map : NULL,
    };
    task->client_options = (tb_search_client_options_t){
        .urls = s->urls,
        .username = or_null(s->username),
        .password = or_null(s->password),
        .connect_timeout_ms = (long)s->connect_timeout_ms,
        .read_timeout_ms = (long)s->read_timeout_ms,
        .ca_location = ssl ? or_null(s->truststore) : NULL,
        .cert_location = ssl ? or_null(s->keystore) : NULL,
        .key_password = ssl ? or_null(s->key_password) : NULL,
        .verify_host = !ssl || nonempty(s->endpoint_id),
        .max_in_flight = s->in_flight,
        .on_done = on_done,
        .on_done_arg = task,
    };
    task->ready_indexes = json_object();
    task->client = tb_search_client_new(&task->client_options, errstr, errstr_size);
    if (task->client == NULL || task->ready_indexes == NULL) {
        goto fail;
    }
    *out = task;
    task = NULL;
    rc = 0;

fail:
    search_task_stop(task);
    json_decref(errors);
    return rc;
}

static int elastic_task_start(const tb_task_context_t *ctx, const json_t *config,
                              void **out, char *errstr, size_t errstr_size)
{
    return start_with(&elastic_table, ctx, config, out, errstr, errstr_size);
}

static int opensearch_task_start(const tb_task_context_t *ctx, const json_t *config,
                                 void **out, char *errstr, size_t errstr_size)
{
    return start_with(&opensearch_table, ctx, config, out, errstr, errstr_size);
}

/* ---- indexes ---- */

/* Makes index ready once per task: created when missing (with the mapping
 * of schema unless schema.ignore), or given that mapping when it has none.
 * Returns TB_SEARCH_OK, RETRY or FATAL with reason. */
static tb_search_outcome_t ready_index(search_task_t *task, const char *index,
                                       const tb_schema_t *schema, char *reason,
                                       size_t reason_size)
{
    char path[300];
    json_t *response = NULL;
    json_t *mapping = NULL;
    char *body = NULL;
    tb_search_outcome_t outcome = TB_SEARCH_RETRY;
    long status;

    if (json_object_get(task->ready_indexes, index) != NULL ||
        task->doc.stream_type != TB_SEARCH_STREAM_NONE) {
        return TB_SEARCH_OK;
    }
    mapping = task->doc.schema_ignore ? NULL : tb_search_doc_mapping(schema);
    snprintf(path, sizeof(path), "/%s", index);
    status = tb_search_client_call(task->client, "HEAD", path, NULL, &response, reason,
                                   reason_size);
    json_decref(response);
    response = NULL;
    if (status == 404) {
        json_t *settings =
            mapping != NULL ? json_pack("{s:O}", "mappings", mapping) : json_object();
        body = settings != NULL ? json_dumps(settings, JSON_COMPACT) : NULL;
        json_decref(settings);
        status = tb_search_client_call(task->client, "PUT", path, body, &response, reason,
                                       reason_size);
        const char *type = json_string_value(
            json_object_get(json_object_get(response, "error"), "type"));
        if (status == 400 && type != NULL &&
            strcmp(type, "resource_already_exists_exception") == 0) {
            status = 200; /* another task made it first */
        }
    } else if (status == 200 && mapping != NULL) {
        snprintf(path, sizeof(path), "/%s/_mapping", index);
        status = tb_search_client_call(task->client, "GET", path, NULL, &response, reason,
                                       reason_size);
        json_t *existing = json_object_get(
            json_object_get(json_object_get(response, index), "mappings"), "properties");
        if (status == 200 && json_object_size(existing) == 0) {
            body = json_dumps(mapping, JSON_COMPACT);
            json_decref(response);
            response = NULL;
            status = tb_search_client_call(task->client, "PUT", path, body, &response,
                                           reason, reason_size);
        }
    }
    if (status >= 200 && status < 300) {
        json_object_set_new(task->ready_indexes, index, json_true());
        outcome = TB_SEARCH_OK;
    } else if (status != 0 && status != 429 && status < 500) {
        outcome = TB_SEARCH_FATAL;
    }
    json_decref(mapping);
    json_decref(response);
    free(body);
    return outcome;
}

/* ---- writing ---- */

/* A record's bulk lines in the put's buffer, and where they go. */
typedef struct {
    size_t record;
    uint64_t lane_key;
    long start;
    long end;
} doc_t;

/* The oldest offset of a partition in a bulk. */
typedef struct {
    char *topic; /* the topic read from */
    int32_t partition;
    int64_t first;
} span_t;

/* A bulk request the task holds until its answer is handled: its records
 * are not durable before. */
typedef struct bulk {
    tb_search_request_t request;
    /* copies of its records (action i is copies[i]), for record_failed and
     * the warnings of behavior.on.malformed.documents; NULL under ignore */
    tb_sink_record_t *copies;
    span_t *spans;
    size_t span_count;
    /* sorted hashes of the ids it updates without an external version
     * (write.method=upsert): a bulk holding one of them waits for this one */
    uint64_t *ids;
    size_t id_count;
    int attempts; /* retries so far */
    bool sent;    /* lent to the client, its answer not handled yet */
} bulk_t;

/* What a request came to, beside its records' own fates. */
typedef struct {
    tb_search_outcome_t outcome; /* the worst: OK < MALFORMED < RETRY < FATAL */
    const char *reason;
} verdict_t;

static void note(verdict_t *v, tb_search_outcome_t outcome, const char *reason)
{
    static const int rank[] = {[TB_SEARCH_OK] = 0,
                               [TB_SEARCH_MALFORMED] = 1,
                               [TB_SEARCH_RETRY] = 2,
                               [TB_SEARCH_FATAL] = 3};
    if (rank[outcome] > rank[v->outcome]) {
        v->outcome = outcome;
        v->reason = reason ? reason : "";
    }
}

/* FNV-1a: the request a document id goes to. */
static uint64_t hash_of(const char *text)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h = (h ^ *p) * UINT64_C(1099511628211);
    }
    return h;
}

/* The backoff before retry attempts + 1: retry.backoff.ms doubled per
 * retry. */
static int64_t backoff_of(const search_task_t *task, int attempts)
{
    int64_t delay = task->s.backoff_ms;
    for (int i = 0; i < attempts && delay < INT64_C(86400000); i++) {
        delay *= 2;
    }
    return delay;
}

/* Asks for the put to be tried again after the backoff, or fails the task
 * once max.retries retries in a row are spent (an index that could not be
 * made ready). */
static int retry_or_fail(search_task_t *task, const char *reason, char *errstr,
                         size_t errstr_size)
{
    const tb_task_context_t *ctx = task->ctx;
    if (task->attempts >= task->s.retries) {
        snprintf(errstr, errstr_size, "%s (after %d retries)", reason, task->s.retries);
        task->attempts = 0;
        return TB_RESULT_FAILED;
    }
    int64_t delay = backoff_of(task, task->attempts);
    task->attempts++;
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, ctx->connector, ctx->task,
                "%s; retry %d of %d (" KEY_RETRIES ") in %lld ms", reason, task->attempts,
                task->s.retries, (long long)delay);
    ctx->retry_after(ctx->runtime, delay);
    errstr[0] = '\0'; /* logged here, once */
    return TB_RESULT_RETRY;
}

/* A record that cannot be written: dropped with a warning, or handed to
 * errors.tolerance. */
static void give_up_record(search_task_t *task, const tb_sink_record_t *record, bool drop,
                           const char *reason)
{
    const tb_task_context_t *ctx = task->ctx;
    if (drop) {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, ctx->connector, ctx->task,
                    "dropping the record at %s-%d offset %lld: %s", record->topic,
                    (int)record->partition, (long long)record->offset, reason);
        return;
    }
    ctx->record_failed(ctx->runtime, record, reason);
}

/* Readies the index of every record with a value (a bounded hold of the
 * task's thread, once per index). */
static void ready_indexes(search_task_t *task, const tb_sink_record_t *records,
                          size_t count, tb_search_outcome_t *outcome, char *reason,
                          size_t reason_size)
{
    for (size_t i = 0; i < count && *outcome == TB_SEARCH_OK; i++) {
        char index[256];
        if (records[i].value_data == NULL) {
            continue;
        }
        tb_search_doc_index(&task->doc, records[i].topic, index, sizeof(index));
        *outcome = ready_index(task, index, records[i].value_schema, reason, reason_size);
    }
}

/* ---- bulks ---- */

static void record_free(tb_sink_record_t *r)
{
    for (size_t h = 0; r->headers != NULL && h < r->header_count; h++) {
        free((void *)r->headers[h].name);
        free((void *)r->headers[h].value);
    }
    free((void *)r->headers);
    free((void *)r->topic);
    free((void *)r->original_topic);
    free((void *)r->key);
    free((void *)r->value);
}

static void *copy_of(const void *bytes, size_t len)
{
    void *out = bytes != NULL ? malloc(len ? len : 1) : NULL;
    if (out != NULL) {
        memcpy(out, bytes, len);
    }
    return out;
}

/* What record_failed needs of src: its place, key, value and headers (not
 * its Connect data). Returns 0, or -1 on no memory (dst then freeable). */
static int record_copy(tb_sink_record_t *dst, const tb_sink_record_t *src)
{
    *dst = (tb_sink_record_t){.partition = src->partition,
                              .offset = src->offset,
                              .timestamp = src->timestamp,
                              .key_len = src->key_len,
                              .value_len = src->value_len};
    tb_header_t *headers =
        src->header_count ? calloc(src->header_count, sizeof(*headers)) : NULL;
    dst->headers = headers;
    dst->header_count = headers != NULL ? src->header_count : 0;
    dst->topic = strdup(src->topic);
    dst->original_topic = src->original_topic ? strdup(src->original_topic) : NULL;
    dst->key = copy_of(src->key, src->key_len);
    dst->value = copy_of(src->value, src->value_len);
    bool ok = dst->topic != NULL &&
              (src->original_topic == NULL) == (dst->original_topic == NULL) &&
              (src->key == NULL) == (dst->key == NULL) &&
              (src->value == NULL) == (dst->value == NULL) &&
              (src->header_count == 0 || headers != NULL);
    for (size_t h = 0; ok && h < dst->header_count; h++) {
        headers[h].name = strdup(src->headers[h].name);
        headers[h].value = copy_of(src->headers[h].value, src->headers[h].value_len);
        headers[h].value_len = src->headers[h].value_len;
        ok = headers[h].name != NULL &&
             (src->headers[h].value == NULL) == (headers[h].value == NULL);
    }
    return ok ? 0 : -1;
}

static void bulk_free(bulk_t *b)
{
    if (b == NULL) {
        return;
    }
    for (size_t i = 0; b->copies != NULL && i < b->request.count; i++) {
        record_free(&b->copies[i]);
    }
    free(b->copies);
    for (size_t i = 0; i < b->span_count; i++) {
        free(b->spans[i].topic);
    }
    free(b->spans);
    free(b->ids);
    tb_search_request_clear(&b->request);
    free(b);
}

static int compare_ids(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Fills b's copies, spans and ids from the records of put() its request's
 * actions come from. Returns 0, or -1 on no memory. */
static int bulk_describe(search_task_t *task, bulk_t *b, const tb_sink_record_t *records,
                         const doc_t *docs, const size_t *doc_of)
{
    size_t n = b->request.count;
    bool copies = task->s.malformed != MALFORMED_IGNORE;
    bool upsert = task->doc.write_method == TB_SEARCH_UPSERT && !task->doc.key_ignore;
    b->copies = copies ? calloc(n, sizeof(*b->copies)) : NULL;
    b->spans = calloc(n, sizeof(*b->spans));
    b->ids = upsert ? calloc(n, sizeof(*b->ids)) : NULL;
    if ((copies && b->copies == NULL) || b->spans == NULL || (upsert && b->ids == NULL)) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const tb_sink_record_t *r = &records[b->request.records[i]];
        const char *topic = r->original_topic ? r->original_topic : r->topic;
        size_t k = 0;
        while (k < b->span_count && (b->spans[k].partition != r->partition ||
                                     strcmp(b->spans[k].topic, topic))) {
            k++;
        }
        if (k == b->span_count) {
            b->spans[k] = (span_t){
                .topic = strdup(topic), .partition = r->partition, .first = r->offset};
            b->span_count++;
            if (b->spans[k].topic == NULL) {
                return -1;
            }
        }
        b->spans[k].first = r->offset < b->spans[k].first ? r->offset : b->spans[k].first;
        if (copies && record_copy(&b->copies[i], r) != 0) {
            return -1;
        }
        if (upsert) {
            b->ids[b->id_count++] = docs[doc_of[i]].lane_key;
        }
    }
    if (b->id_count > 1) {
        qsort(b->ids, b->id_count, sizeof(*b->ids), compare_ids);
    }
    return 0;
}

static int hold(search_task_t *task, bulk_t *b)
{
    if (task->bulk_count == task->bulk_cap) {
        size_t cap = task->bulk_cap ? task->bulk_cap * 2 : 16;
        bulk_t **grown = realloc(task->bulks, cap * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        task->bulks = grown;
        task->bulk_cap = cap;
    }
    task->bulks[task->bulk_count++] = b;
    task->buffered += b->request.count;
    return 0;
}

/* Splits the documents into bulks held by the task: about batch.size
 * records and bulk.size.bytes each, a document id always in the same one. */
static int split(search_task_t *task, const tb_sink_record_t *records, const char *buf,
                 size_t total, const doc_t *docs, size_t n)
{
    size_t lanes = (n + (size_t)task->s.batch_size - 1) / (size_t)task->s.batch_size;
    if (task->s.bulk_bytes > 0) {
        size_t by_bytes =
            (total + (size_t)task->s.bulk_bytes - 1) / (size_t)task->s.bulk_bytes;
        lanes = by_bytes > lanes ? by_bytes : lanes;
    }
    lanes = lanes > n ? n : lanes;
    bulk_t **bulks = calloc(lanes, sizeof(*bulks));
    FILE **bodies = calloc(lanes, sizeof(*bodies));
    size_t **doc_of = calloc(lanes, sizeof(*doc_of));
    int rc = bulks != NULL && bodies != NULL && doc_of != NULL ? 0 : -1;

    for (size_t l = 0; rc == 0 && l < lanes; l++) {
        bulks[l] = calloc(1, sizeof(bulk_t));
        doc_of[l] = calloc(n, sizeof(size_t));
        tb_search_request_t *r = bulks[l] != NULL ? &bulks[l]->request : NULL;
        if (r != NULL) {
            r->records = calloc(n, sizeof(size_t));
            bodies[l] = open_memstream(&r->body, &r->body_len);
        }
        rc = r != NULL && doc_of[l] != NULL && r->records != NULL && bodies[l] != NULL
                 ? 0
                 : -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t l = docs[i].lane_key % lanes;
        tb_search_request_t *r = &bulks[l]->request;
        size_t len = (size_t)(docs[i].end - docs[i].start);
        rc = fwrite(buf + docs[i].start, 1, len, bodies[l]) == len ? 0 : -1;
        doc_of[l][r->count] = i;
        r->records[r->count++] = docs[i].record;
    }
    for (size_t l = 0; bodies != NULL && l < lanes; l++) {
        if (bodies[l] != NULL && fclose(bodies[l]) != 0) {
            rc = -1;
        }
    }
    for (size_t l = 0; rc == 0 && l < lanes; l++) {
        rc = bulk_describe(task, bulks[l], records, docs, doc_of[l]);
        /* the copies say it from now on */
        free(bulks[l]->request.records);
        bulks[l]->request.records = NULL;
    }
    for (size_t l = 0; bulks != NULL && l < lanes; l++) {
        if (rc == 0 && hold(task, bulks[l]) == 0) {
            bulks[l] = NULL;
        } else {
            rc = -1;
        }
        bulk_free(bulks[l]);
        free(doc_of != NULL ? doc_of[l] : NULL);
    }
    free(doc_of);
    free(bodies);
    free(bulks);
    return rc;
}

/* Whether b shares an id without an external version with a bulk held
 * before it: then it waits, so that the updates of one document keep their
 * order. */
static bool waits_for_earlier(const search_task_t *task, size_t at)
{
    const bulk_t *b = task->bulks[at];
    for (size_t e = 0; b->id_count > 0 && e < at; e++) {
        const bulk_t *o = task->bulks[e];
        size_t i = 0, j = 0;
        while (i < b->id_count && j < o->id_count) {
            if (b->ids[i] == o->ids[j]) {
                return true;
            }
            b->ids[i] < o->ids[j] ? i++ : j++;
        }
    }
    return false;
}

/* Lends the held bulks not on the wire to the client, oldest first, up to
 * max.in.flight.requests at once. */
static void pump(search_task_t *task)
{
    size_t sent = 0;
    for (size_t i = 0; i < task->bulk_count; i++) {
        sent += task->bulks[i]->sent;
    }
    for (size_t i = 0; i < task->bulk_count && sent < (size_t)task->s.in_flight; i++) {
        bulk_t *b = task->bulks[i];
        if (b->sent || waits_for_earlier(task, i)) {
            continue;
        }
        if (tb_search_client_send(task->client, &b->request) != 0) {
            break;
        }
        b->sent = true;
        sent++;
    }
}

/* Handles the answer of b: Returns 1 when b is done with (written, or its
 * refused documents handed on), 0 when it is to be sent again, or -1 with
 * errstr when the task fails. */
static int handle(search_task_t *task, bulk_t *b, char *errstr, size_t errstr_size)
{
    const tb_task_context_t *ctx = task->ctx;
    const tb_search_request_t *r = &b->request;
    verdict_t v = {.outcome = TB_SEARCH_OK};
    note(&v, r->outcome, r->reason);
    for (size_t i = 0; r->outcome == TB_SEARCH_OK && r->items != NULL && i < r->count;
         i++) {
        note(&v, r->items[i], r->reasons[i]);
    }
    if (v.outcome == TB_SEARCH_FATAL) {
        snprintf(errstr, errstr_size, "%s", v.reason);
        return -1;
    }
    if (v.outcome == TB_SEARCH_RETRY) {
        if (b->attempts >= task->s.retries) {
            snprintf(errstr, errstr_size, "%s (after %d retries)", v.reason,
                     task->s.retries);
            return -1;
        }
        int64_t delay = backoff_of(task, b->attempts);
        b->attempts++;
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, ctx->connector, ctx->task,
                    "%s; retry %d of %d (" KEY_RETRIES ") in %lld ms", v.reason,
                    b->attempts, task->s.retries, (long long)delay);
        b->request.not_before = tb_monotonic_ms() + delay;
        return 0;
    }
    for (size_t i = 0; v.outcome == TB_SEARCH_MALFORMED && b->copies != NULL &&
                       r->items != NULL && i < r->count;
         i++) {
        if (r->items[i] == TB_SEARCH_MALFORMED) {
            give_up_record(task, &b->copies[i], task->s.malformed == MALFORMED_WARN,
                           r->reasons[i] ? r->reasons[i] : "the document was refused");
        }
    }
    return 1;
}

/* Handles every answer that came, then sends what may go. Returns
 * TB_RESULT_OK, or TB_RESULT_FAILED with errstr. */
static int harvest(search_task_t *task, char *errstr, size_t errstr_size)
{
    size_t kept = 0;
    int rc = TB_RESULT_OK;
    for (size_t i = 0; i < task->bulk_count; i++) {
        bulk_t *b = task->bulks[i];
        int handled = 0;
        if (rc == TB_RESULT_OK && b->sent && atomic_load(&b->request.done)) {
            b->sent = false;
            handled = handle(task, b, errstr, errstr_size);
            rc = handled < 0 ? TB_RESULT_FAILED : rc;
        }
        if (handled == 1) {
            task->buffered -= b->request.count;
            bulk_free(b);
            continue;
        }
        task->bulks[kept++] = b;
    }
    task->bulk_count = kept;
    if (rc == TB_RESULT_OK) {
        pump(task);
    }
    return rc;
}

/* Writes the records' bulk lines into bulks the task holds (sent by
 * harvest), and hands on the records that cannot be documents. */
static int take(search_task_t *task, const tb_sink_record_t *records, size_t count,
                char *errstr, size_t errstr_size)
{
    tb_search_outcome_t outcome = TB_SEARCH_OK;
    char reason[512] = "";
    char *buf = NULL;
    size_t total = 0;
    FILE *all = open_memstream(&buf, &total);
    doc_t *docs = calloc(count, sizeof(*docs));
    char **invalid = calloc(count, sizeof(*invalid));
    size_t n = 0;
    int rc = TB_RESULT_FAILED;

    snprintf(errstr, errstr_size, "out of memory writing to the search cluster");
    if (all == NULL || docs == NULL || invalid == NULL) {
        goto fail;
    }
    ready_indexes(task, records, count, &outcome, reason, sizeof(reason));
    if (outcome == TB_SEARCH_RETRY) {
        rc = retry_or_fail(task, reason, errstr, errstr_size);
        goto fail;
    }
    if (outcome == TB_SEARCH_FATAL) {
        snprintf(errstr, errstr_size, "%s", reason);
        goto fail;
    }
    task->attempts = 0;
    for (size_t i = 0; i < count; i++) {
        tb_search_doc_result_t result;
        char *id = NULL;
        long start = ftell(all);
        if (tb_search_doc_lines(&task->doc, &records[i], all, &result, reason,
                                sizeof(reason)) != 0) {
            goto fail;
        }
        if (result == TB_SEARCH_DOC_INVALID) {
            invalid[i] = strdup(reason);
            continue;
        }
        if (result == TB_SEARCH_DOC_SKIP) {
            continue;
        }
        /* key.ignore ids are all distinct: any request will do */
        bool keyed =
            !task->doc.key_ignore &&
            tb_search_doc_id(&task->doc, &records[i], &id, reason, sizeof(reason)) == 0;
        docs[n++] = (doc_t){.record = i,
                            .lane_key = keyed ? hash_of(id) : (uint64_t)i,
                            .start = start,
                            .end = ftell(all)};
        free(id);
    }
    if (fflush(all) != 0 || (n > 0 && split(task, records, buf, total, docs, n) != 0)) {
        goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        if (invalid[i] != NULL) {
            give_up_record(task, &records[i], task->s.drop_invalid, invalid[i]);
        }
    }
    errstr[0] = '\0';
    rc = TB_RESULT_OK;

fail:
    for (size_t i = 0; invalid != NULL && i < count; i++) {
        free(invalid[i]);
    }
    free(invalid);
    free(docs);
    if (all != NULL) {
        fclose(all);
    }
    free(buf);
    return rc;
}

/* Takes the records when the task holds fewer than max.buffered.records,
 * else is busy (for at most flush.timeout.ms); the bulks go out on the
 * client's thread, and their answers are handled by the next put() or
 * flush(). */
static int search_put(void *opaque, const tb_sink_record_t *records, size_t count,
                      char *errstr, size_t errstr_size)
{
    search_task_t *task = opaque;
    int rc = harvest(task, errstr, errstr_size);
    if (rc != TB_RESULT_OK || count == 0) {
        return rc;
    }
    if (task->buffered >= (size_t)task->s.buffered) {
        int64_t now = tb_monotonic_ms();
        task->busy_since = task->busy_since ? task->busy_since : now;
        if (now - task->busy_since < task->s.flush_timeout_ms) {
            return TB_RESULT_BUSY;
        }
        snprintf(
            errstr, errstr_size,
            "%zu records in %zu bulk requests were not written within " KEY_FLUSH_TIMEOUT
            " (%lld ms)",
            task->buffered, task->bulk_count, task->s.flush_timeout_ms);
        return TB_RESULT_FAILED;
    }
    task->busy_since = 0;
    rc = take(task, records, count, errstr, errstr_size);
    if (rc == TB_RESULT_OK) {
        pump(task);
    }
    return rc;
}

/* Handles the answers that came; what is still unanswered stays out of the
 * offsets recorded (pending_offset), so flush() never waits. */
static int search_flush(void *opaque, char *errstr, size_t errstr_size)
{
    return harvest(opaque, errstr, errstr_size);
}

/* The oldest offset of the partition in a bulk not written yet. */
static int64_t search_pending_offset(void *opaque, const char *topic, int32_t partition)
{
    const search_task_t *task = opaque;
    int64_t oldest = TB_PLUGIN_NO_OFFSET;
    for (size_t i = 0; i < task->bulk_count; i++) {
        const bulk_t *b = task->bulks[i];
        for (size_t k = 0; k < b->span_count; k++) {
            const span_t *s = &b->spans[k];
            if (s->partition == partition && strcmp(s->topic, topic) == 0 &&
                (oldest == TB_PLUGIN_NO_OFFSET || s->first < oldest)) {
                oldest = s->first;
            }
        }
    }
    return oldest;
}

static const char *const elastic_aliases[] = {"ElasticsearchSink", NULL};
static const char *const opensearch_aliases[] = {"OpensearchSink", NULL};

const tb_plugin_t tb_search_sink_plugin = {
    .class_name = "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
    .aliases = elastic_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "0.1.0",
    .config = &elastic_table,
    .validate = elastic_validate,
    .task_configs = search_task_configs,
    .task_start = elastic_task_start,
    .reads_headers = true,
    .typed = true,
    .put = search_put,
    .flush = search_flush,
    .pending_offset = search_pending_offset,
    .task_stop = search_task_stop,
};

const tb_plugin_t tb_opensearch_sink_plugin = {
    .class_name = "io.aiven.kafka.connect.opensearch.OpensearchSinkConnector",
    .aliases = opensearch_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "0.1.0",
    .config = &opensearch_table,
    .validate = opensearch_validate,
    .task_configs = search_task_configs,
    .task_start = opensearch_task_start,
    .reads_headers = true,
    .typed = true,
    .put = search_put,
    .flush = search_flush,
    .pending_offset = search_pending_offset,
    .task_stop = search_task_stop,
};
