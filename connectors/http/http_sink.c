/*
 * http_sink.c - a sink that writes records to an HTTP endpoint, in batches,
 * as a JSON array or as NDJSON, of record values or of whole records.
 *
 * put() copies the records it is lent into a queue of pending items and
 * sends every batch that is full (batch.max.records or batch.max.bytes);
 * flush() sends the rest. A record is written once the endpoint answers
 * 2xx, and it leaves the queue only then, or when it is reported with
 * record_failed, so the queue is always the unwritten tail, in order.
 *
 * Failures: a network error, timeout, 408, 429 or 5xx is retried with a
 * doubling backoff (or the Retry-After the endpoint asks for), up to
 * retry.max.attempts times. A 4xx about the records makes the batch be
 * sent in halves, down to the record(s) the endpoint refuses, which go to
 * record_failed, while the others are written in their order. A 3xx, or a
 * 4xx that says the endpoint itself refuses (401, 403, 404, ...), is fatal.
 *
 * close() drops the queued records of the partitions taken from the task:
 * their offsets were not recorded, and their next owner writes them.
 *
 * When the retries are spent the queue is kept, and:
 * - put() returns TB_RESULT_RETRY only before it has taken any of its
 *   records (a backlog of full batches is still refused), since the
 *   runtime then puts the same records again; once it has taken them it
 *   returns 0 and the backlog waits for the next put() or flush();
 * - flush() returns TB_RESULT_RETRY, and a later flush() carries on.
 *
 * curl_global_init() is called once by the server's main, never here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "connectors/http/tb_http_sink.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.task"

#define KEY_URL "http.url"
#define KEY_METHOD "http.method"
#define KEY_HEADERS "http.headers"
#define KEY_TIMEOUT "http.timeout.ms"
#define KEY_CONNECT_TIMEOUT "http.connect.timeout.ms"
#define KEY_MAX_RECORDS "batch.max.records"
#define KEY_MAX_BYTES "batch.max.bytes"
#define KEY_LINGER "batch.linger.ms"
#define KEY_FORMAT "http.body.format"
#define KEY_CONTENT "http.body.content"
#define KEY_RETRIES "retry.max.attempts"
#define KEY_BACKOFF "retry.backoff.ms"
#define KEY_BACKOFF_MAX "retry.backoff.max.ms"
#define KEY_CA "http.ssl.ca.location"
#define KEY_CERT "http.ssl.certificate.location"
#define KEY_KEY "http.ssl.key.location"
#define KEY_KEY_PASSWORD "http.ssl.key.password"
#define KEY_VERIFY "http.ssl.verify"
#define KEY_AUTH_TYPE "http.auth.type"
#define KEY_AUTH_USER "http.auth.user"
#define KEY_AUTH_PASSWORD "http.auth.password"
#define KEY_AUTH_TOKEN "http.auth.token"

#define GROUP "HTTP"

static const char *const methods[] = {"POST", "PUT", NULL};
enum { AUTH_NONE = 0, AUTH_BASIC, AUTH_BEARER };
static const char *const auth_types[] = {"none", "basic", "bearer", NULL};
enum { FORMAT_JSON_ARRAY = 0, FORMAT_NDJSON };
static const char *const formats[] = {"json_array", "ndjson", NULL};
enum { CONTENT_VALUE = 0, CONTENT_RECORD };
static const char *const contents[] = {"value", "record", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t timeout_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 2147483647};

/* A task's keys, filled from http_sink_keys (tb_config_fill). */
typedef struct {
    const char *url;
    int method; /* methods[] */
    const char *headers;
    long long timeout_ms;
    long long connect_timeout_ms;
    int max_records;
    long long max_bytes;
    long long linger_ms;
    int format;  /* formats[] */
    int content; /* contents[] */
    int retries;
    long long backoff_ms;
    long long backoff_max_ms;
    const char *ca;
    const char *cert;
    const char *key;
    const char *key_password;
    bool verify;
    int auth_type; /* auth_types[] */
    const char *auth_user;
    const char *auth_password;
    const char *auth_token;
} http_sink_settings_t;

static const tb_config_def_t http_sink_keys[] = {
    {.name = KEY_URL,
     .role = TB_CONFIG_ROLE_URL,
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP,
     .order = 1,
     .width = TB_WIDTH_LONG,
     .display_name = "URL",
     .check = tb_http_sink_url_check,
     .field = TB_CONFIG_AT(http_sink_settings_t, url),
     .documentation =
         "The endpoint every batch is sent to, as http://host[:port]/path or "
         "https://...; redirects are not followed. Credentials in the URL "
         "are hidden in messages."},
    {.name = KEY_METHOD,
     .type = TB_CONFIG_STRING,
     .default_value = "POST",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 2,
     .width = TB_WIDTH_SHORT,
     .display_name = "Method",
     .one_of = methods,
     .field = TB_CONFIG_ENUM_AT(http_sink_settings_t, method),
     .documentation = "The HTTP method of each request: POST or PUT."},
    {.name = KEY_HEADERS,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 3,
     .width = TB_WIDTH_LONG,
     .display_name = "Headers",
     .check = tb_http_sink_headers_check,
     .role = TB_CONFIG_ROLE_HEADERS,
     .field = TB_CONFIG_AT(http_sink_settings_t, headers),
     .documentation =
         "Extra request headers as 'Name: value' pairs separated by '|', e.g. "
         "'X-Tenant: blue|X-API-Key: ${env:API_KEY}' (a value cannot contain '|'). A "
         "Content-Type given here replaces the connector's; Content-Length and "
         "Transfer-Encoding cannot be set. The value of a header whose name contains "
         "auth, token, secret, key, password, cookie or credential (Authorization, "
         "X-API-Key, Cookie, ...) is a secret, as a PASSWORD value is: a reference, "
         "or a literal unless the worker's secrets.literal.allowed=false (then kept "
         "in the secrets file, or distributed sealed in the config topic); shown as "
         "[hidden], never logged. Prefer http.auth.*."},
    {.name = KEY_TIMEOUT,
     .type = TB_CONFIG_LONG,
     .default_value = "30000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 4,
     .range = &timeout_range,
     .field = TB_CONFIG_AT(http_sink_settings_t, timeout_ms),
     .documentation = "Longest time one request may take, connection included, in "
                      "milliseconds; a request that takes longer is retried."},
    {.name = KEY_CONNECT_TIMEOUT,
     .type = TB_CONFIG_LONG,
     .default_value = "10000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 5,
     .range = &timeout_range,
     .field = TB_CONFIG_AT(http_sink_settings_t, connect_timeout_ms),
     .documentation = "Longest time to set up a connection, in milliseconds."},
    {.name = KEY_MAX_RECORDS,
     .type = TB_CONFIG_INT,
     .default_value = "500",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 6,
     .range = &at_least_one,
     .field = TB_CONFIG_AT(http_sink_settings_t, max_records),
     .documentation = "Most records in one request."},
    {.name = KEY_MAX_BYTES,
     .type = TB_CONFIG_LONG,
     .default_value = "1048576",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 7,
     .range = &at_least_one,
     .field = TB_CONFIG_AT(http_sink_settings_t, max_bytes),
     .documentation = "Most bytes in one request body; a single record larger than this "
                      "is sent alone."},
    {.name = KEY_LINGER,
     .type = TB_CONFIG_LONG,
     .default_value = "0",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 8,
     .range = &non_negative,
     .field = TB_CONFIG_AT(http_sink_settings_t, linger_ms),
     .documentation = "Full batches are sent as soon as they are full, and the rest at "
                      "each flush (offset.flush.interval.ms). When above 0, a put() "
                      "also sends a partial batch once its oldest record has waited "
                      "this many milliseconds."},
    {.name = KEY_FORMAT,
     .type = TB_CONFIG_STRING,
     .default_value = "json_array",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 9,
     .one_of = formats,
     .field = TB_CONFIG_ENUM_AT(http_sink_settings_t, format),
     .documentation = "The request body: json_array, one JSON array of the batch's "
                      "elements (Content-Type application/json), or ndjson, one "
                      "element per line (application/x-ndjson)."},
    {.name = KEY_CONTENT,
     .type = TB_CONFIG_STRING,
     .default_value = "value",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 10,
     .one_of = contents,
     .field = TB_CONFIG_ENUM_AT(http_sink_settings_t, content),
     .documentation =
         "What each element holds: value, the record's value, or record, an object "
         "{\"topic\",\"partition\",\"offset\",\"timestamp\",\"key\",\"value\","
         "\"headers\"}. A key or value that is valid JSON is written as JSON, "
         "anything else as a JSON string; a null stays null; header values are "
         "strings."},
    {.name = KEY_RETRIES,
     .type = TB_CONFIG_INT,
     .default_value = "5",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 11,
     .range = &non_negative,
     .field = TB_CONFIG_AT(http_sink_settings_t, retries),
     .documentation = "Retries of a request after a network error, a timeout, 408, 429 "
                      "or 5xx, before the task gives up for now (the runtime then "
                      "retries the flush per errors.retry.*); 0 means none."},
    {.name = KEY_BACKOFF,
     .type = TB_CONFIG_LONG,
     .default_value = "200",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 12,
     .range = &non_negative,
     .field = TB_CONFIG_AT(http_sink_settings_t, backoff_ms),
     .documentation = "Wait before the first retry, in milliseconds; doubled for each "
                      "further retry."},
    {.name = KEY_BACKOFF_MAX,
     .type = TB_CONFIG_LONG,
     .default_value = "10000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 13,
     .range = &non_negative,
     .field = TB_CONFIG_AT(http_sink_settings_t, backoff_max_ms),
     .documentation = "Longest wait between retries, in milliseconds; it also caps a "
                      "Retry-After (in seconds) the endpoint asks for."},
    {.name = KEY_CA,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 14,
     .field = TB_CONFIG_AT(http_sink_settings_t, ca),
     .documentation = "PEM file of the certificate authorities that sign the endpoint's "
                      "certificate; the system's when not set."},
    {.name = KEY_CERT,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 15,
     .field = TB_CONFIG_AT(http_sink_settings_t, cert),
     .documentation = "PEM file of the client certificate, for endpoints that "
                      "authenticate clients by TLS; needs http.ssl.key.location."},
    {.name = KEY_KEY,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 16,
     .field = TB_CONFIG_AT(http_sink_settings_t, key),
     .documentation = "PEM file of the client certificate's private key."},
    {.name = KEY_KEY_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 17,
     .field = TB_CONFIG_AT(http_sink_settings_t, key_password),
     .documentation = "Password of the private key, when it is encrypted."},
    {.name = KEY_VERIFY,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP,
     .order = 18,
     .field = TB_CONFIG_AT(http_sink_settings_t, verify),
     .documentation = "Whether the endpoint's certificate and host name are checked. "
                      "Turn off only for tests."},
    {.name = KEY_AUTH_TYPE,
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 19,
     .one_of = auth_types,
     .field = TB_CONFIG_ENUM_AT(http_sink_settings_t, auth_type),
     .documentation = "How requests authenticate: none; basic (HTTP Basic with "
                      "http.auth.user and http.auth.password); or bearer "
                      "(Authorization: Bearer with http.auth.token). With basic or "
                      "bearer, http.headers may not set Authorization."},
    {.name = KEY_AUTH_USER,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 20,
     .field = TB_CONFIG_AT(http_sink_settings_t, auth_user),
     .documentation = "User name of http.auth.type=basic."},
    {.name = KEY_AUTH_PASSWORD,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 21,
     .field = TB_CONFIG_AT(http_sink_settings_t, auth_password),
     .documentation = "Password of http.auth.type=basic; a secret reference."},
    {.name = KEY_AUTH_TOKEN,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP,
     .order = 22,
     .field = TB_CONFIG_AT(http_sink_settings_t, auth_token),
     .documentation = "Token of http.auth.type=bearer; a secret reference."},
};

static const tb_config_table_t http_sink_table =
    TB_CONFIG_TABLE("HTTP sink", http_sink_keys);

typedef struct {
    const tb_task_context_t *ctx;
    tb_http_sink_client_t client;
    tb_http_sink_format_t format;
    bool full_records;
    size_t max_records;
    size_t max_bytes;
    int64_t linger_ms;
    int retries;
    int64_t backoff_ms;
    int64_t backoff_max_ms;
    tb_http_sink_buf_t body;
    /* pending items, oldest first: items[head] .. items[count - 1] */
    tb_http_sink_item_t *items;
    size_t head;
    size_t count;
    size_t cap;
} http_sink_task_t;

/* Outcome of sending one batch, beside 0, TB_RESULT_RETRY and -1. */
#define REJECTED 2

/* ---- configuration ---- */

/* A string key's value, NULL when unset or empty. */
static const char *nonempty(const char *value)
{
    return value != NULL && value[0] != '\0' ? value : NULL;
}

/* True when the header list sets Authorization. */
static bool sets_authorization(const char *headers)
{
    for (const char *p = headers; p != NULL && *p != '\0';) {
        p += strspn(p, " \t");
        if (strncasecmp(p, "Authorization", 13) == 0 &&
            p[13 + strspn(p + 13, " \t")] == ':') {
            return true;
        }
        p = strchr(p, '|');
        p = p != NULL ? p + 1 : NULL;
    }
    return false;
}

/* http.auth.type needs its keys, and no Authorization header beside it. */
static void check_auth(const http_sink_settings_t *s, json_t *errors)
{
    bool basic = s->auth_type == AUTH_BASIC;
    bool bearer = s->auth_type == AUTH_BEARER;
    if (basic && (nonempty(s->auth_user) == NULL || nonempty(s->auth_password) == NULL)) {
        tb_config_error_add(errors, KEY_AUTH_TYPE,
                            KEY_AUTH_TYPE "=basic needs " KEY_AUTH_USER
                                          " and " KEY_AUTH_PASSWORD);
    }
    if (bearer && nonempty(s->auth_token) == NULL) {
        tb_config_error_add(errors, KEY_AUTH_TYPE,
                            KEY_AUTH_TYPE "=bearer needs " KEY_AUTH_TOKEN);
    }
    if ((basic || bearer) && sets_authorization(s->headers)) {
        tb_config_error_add(errors, KEY_HEADERS,
                            KEY_HEADERS " sets Authorization, which " KEY_AUTH_TYPE
                                        " already does: remove one of them");
    }
}

/* The checks across keys, of a config whose keys each parsed. */
static void check_settings(const http_sink_settings_t *s, json_t *errors)
{
    if (nonempty(s->cert) != NULL && nonempty(s->key) == NULL) {
        tb_config_error_add(errors, KEY_KEY,
                            KEY_KEY " is required when " KEY_CERT " is set");
    }
    if (nonempty(s->key) != NULL && nonempty(s->cert) == NULL) {
        tb_config_error_add(errors, KEY_CERT,
                            KEY_CERT " is required when " KEY_KEY " is set");
    }
    if (nonempty(s->key_password) != NULL && nonempty(s->key) == NULL) {
        tb_config_error_add(errors, KEY_KEY_PASSWORD,
                            KEY_KEY_PASSWORD " is set but " KEY_KEY " is not");
    }
    check_auth(s, errors);
    bool backoffs_parsed = json_object_get(errors, KEY_BACKOFF) == NULL &&
                           json_object_get(errors, KEY_BACKOFF_MAX) == NULL;
    if (backoffs_parsed && s->backoff_ms > s->backoff_max_ms) {
        tb_config_error_add(errors, KEY_BACKOFF,
                            KEY_BACKOFF " must not be above " KEY_BACKOFF_MAX);
    }
}

/* The plugin's validate: the checks across keys, on the keys as parsed (a
 * key that did not parse reads as unset, and has its own error). */
static void http_sink_validate(const json_t *values, json_t *errors)
{
    http_sink_settings_t settings;
    if (tb_config_fill(&http_sink_table, values, &settings) == 0) {
        check_settings(&settings, errors);
    }
}

/* The first error in table order; its message names the key. For a key
 * with a check (http.url, http.headers: they may hold credentials) the
 * message is rebuilt without the value. */
static void describe_errors(const json_t *config, const json_t *errors, char *errstr,
                            size_t errstr_size)
{
    for (size_t i = 0; i < http_sink_table.count; i++) {
        const tb_config_def_t *def = &http_sink_table.defs[i];
        const char *message =
            json_string_value(json_array_get(json_object_get(errors, def->name), 0));
        const json_t *raw = json_object_get(config, def->name);
        char reason[256] = "";
        if (message == NULL) {
            continue;
        }
        if (def->check != NULL && json_is_string(raw) &&
            def->check(raw, reason, sizeof(reason)) != 0) {
            snprintf(errstr, errstr_size, "Invalid value for configuration %s: %s",
                     def->name, reason);
        } else {
            snprintf(errstr, errstr_size, "%s", message);
        }
        return;
    }
}

static json_t *http_sink_task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_array_append_new(list, json_deep_copy(config));
    }
    return list;
}

/* Fills task's settings and starts its client. */
static int configure(http_sink_task_t *task, const http_sink_settings_t *s, char *errstr,
                     size_t errstr_size)
{
    bool ndjson = s->format == FORMAT_NDJSON;
    tb_http_sink_client_options_t options = {
        .url = s->url,
        .method = methods[s->method],
        .headers = s->headers,
        .content_type = ndjson ? "application/x-ndjson" : "application/json",
        .timeout_ms = (long)s->timeout_ms,
        .connect_timeout_ms = (long)s->connect_timeout_ms,
        .ca_location = nonempty(s->ca),
        .certificate_location = nonempty(s->cert),
        .key_location = nonempty(s->key),
        .key_password = nonempty(s->key_password),
        .verify = s->verify,
        .auth_user = s->auth_type == AUTH_BASIC ? nonempty(s->auth_user) : NULL,
        .auth_password = s->auth_type == AUTH_BASIC ? nonempty(s->auth_password) : NULL,
        .auth_token = s->auth_type == AUTH_BEARER ? nonempty(s->auth_token) : NULL,
    };

    task->format = ndjson ? TB_HTTP_SINK_NDJSON : TB_HTTP_SINK_JSON_ARRAY;
    task->full_records = s->content == CONTENT_RECORD;
    task->max_records = (size_t)s->max_records;
    task->max_bytes = (size_t)s->max_bytes;
    task->linger_ms = s->linger_ms;
    task->retries = s->retries;
    task->backoff_ms = s->backoff_ms;
    task->backoff_max_ms = s->backoff_max_ms;
    return tb_http_sink_client_init(&task->client, &options, errstr, errstr_size);
}

static void http_sink_task_stop(void *opaque)
{
    http_sink_task_t *task = opaque;
    if (task == NULL) {
        return;
    }
    for (size_t i = task->head; i < task->count; i++) {
        tb_http_sink_item_clear(&task->items[i]);
    }
    free(task->items);
    tb_http_sink_buf_clear(&task->body);
    tb_http_sink_client_clear(&task->client);
    free(task);
}

static int http_sink_task_start(const tb_task_context_t *ctx, const json_t *config,
                                void **out, char *errstr, size_t errstr_size)
{
    const tb_config_table_t *tables[] = {&http_sink_table};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, config, errors);
    http_sink_settings_t settings;
    http_sink_task_t *task = NULL;
    int rc = -1;

    http_sink_validate(values, errors);
    if (tb_config_error_count(errors) > 0 ||
        tb_config_fill(&http_sink_table, values, &settings) != 0) {
        describe_errors(config, errors, errstr, errstr_size);
        goto done;
    }
    task = calloc(1, sizeof(*task));
    if (task == NULL) {
        snprintf(errstr, errstr_size, "out of memory starting the HTTP sink");
        goto done;
    }
    task->ctx = ctx;
    if (configure(task, &settings, errstr, errstr_size) != 0) {
        goto done;
    }
    *out = task;
    task = NULL;
    rc = 0;

done:
    http_sink_task_stop(task);
    json_decref(values);
    json_decref(errors);
    return rc;
}

/* ---- the pending queue ---- */

static size_t pending(const http_sink_task_t *task)
{
    return task->count - task->head;
}

static int pending_append(http_sink_task_t *task, const tb_sink_record_t *record)
{
    if (task->count == task->cap && task->head > 0) {
        memmove(task->items, task->items + task->head,
                pending(task) * sizeof(*task->items));
        task->count -= task->head;
        task->head = 0;
    }
    if (task->count == task->cap) {
        size_t cap = task->cap ? task->cap * 2 : 64;
        tb_http_sink_item_t *grown = realloc(task->items, cap * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        task->items = grown;
        task->cap = cap;
    }
    if (tb_http_sink_item_init(&task->items[task->count], record, task->full_records) !=
        0) {
        return -1;
    }
    task->items[task->count++].arrived_ms = tb_monotonic_ms();
    return 0;
}

/* Drops the n oldest items: written, or reported as failed. */
static void pending_drop(http_sink_task_t *task, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tb_http_sink_item_clear(&task->items[task->head++]);
    }
    if (pending(task) == 0) {
        task->head = task->count = 0;
    }
}

/* Whether item was read from one of the partitions. */
static bool item_of(const tb_http_sink_item_t *item,
                    const tb_sink_partition_t *partitions, size_t count)
{
    const tb_sink_record_t *r = &item->record;
    const char *topic = r->original_topic != NULL ? r->original_topic : r->topic;
    for (size_t i = 0; i < count; i++) {
        if (partitions[i].partition == r->partition && topic != NULL &&
            strcmp(partitions[i].topic, topic) == 0) {
            return true;
        }
    }
    return false;
}

/* Connect's close(): the pending records of partitions taken from the task
 * are dropped, unwritten (their offsets were not recorded: their next owner
 * writes them); the others keep their order. */
static void http_sink_close(void *opaque, const tb_sink_partition_t *partitions,
                            size_t count)
{
    http_sink_task_t *task = opaque;
    size_t kept = task->head;
    for (size_t i = task->head; i < task->count; i++) {
        if (item_of(&task->items[i], partitions, count)) {
            tb_http_sink_item_clear(&task->items[i]);
        } else {
            task->items[kept++] = task->items[i];
        }
    }
    task->count = kept;
    if (pending(task) == 0) {
        task->head = task->count = 0;
    }
}

/* ---- sending ---- */

static void sleep_ms(int64_t ms)
{
    struct timespec left = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
        continue;
    }
}

/* Wait before retry number attempt + 1: the endpoint's Retry-After, else
 * the backoff doubled per earlier retry; capped either way. */
static int64_t retry_delay(const http_sink_task_t *task, int attempt)
{
    int64_t delay = task->client.retry_after_ms;
    if (delay < 0) {
        delay = task->backoff_ms;
        for (int i = 0; i < attempt && delay < task->backoff_max_ms; i++) {
            delay *= 2;
        }
    }
    return delay < task->backoff_max_ms ? delay : task->backoff_max_ms;
}

/* Sends the n oldest items as one request, retrying transient failures.
 * Returns 0 (written), REJECTED, TB_RESULT_RETRY or -1 (with errstr). */
static int send_batch(http_sink_task_t *task, size_t n, char *errstr, size_t errstr_size)
{
    tb_http_sink_outcome_t outcome;
    char reason[512];

    if (tb_http_sink_body_build(task->format, task->items + task->head, n, &task->body) !=
        0) {
        snprintf(errstr, errstr_size, "out of memory building a request to %s",
                 task->client.shown_url);
        return -1;
    }
    for (int attempt = 0;; attempt++) {
        outcome =
            tb_http_sink_client_send(&task->client, task->body.data, task->body.len);
        if (outcome != TB_HTTP_SINK_TRANSIENT || attempt >= task->retries) {
            break;
        }
        int64_t delay = retry_delay(task, attempt);
        tb_http_sink_client_describe(&task->client, reason, sizeof(reason));
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, task->ctx->connector, task->ctx->task,
                    "%s; retry %d of %d in %lld ms", reason, attempt + 1, task->retries,
                    (long long)delay);
        sleep_ms(delay);
    }
    tb_http_sink_client_describe(&task->client, reason, sizeof(reason));
    switch (outcome) {
    case TB_HTTP_SINK_SENT:
        return 0;
    case TB_HTTP_SINK_REJECTED:
        return REJECTED;
    case TB_HTTP_SINK_TRANSIENT:
        snprintf(errstr, errstr_size, "%s (after %d retries)", reason, task->retries);
        return TB_RESULT_RETRY;
    case TB_HTTP_SINK_BROKEN:
        break;
    }
    snprintf(errstr, errstr_size, "%s", reason);
    return -1;
}

/* Writes the n oldest items. When the endpoint refuses a batch for what it
 * holds, its halves are sent one after the other, down to single records
 * that are reported as failed; the others keep their order. */
static int deliver(http_sink_task_t *task, size_t n, char *errstr, size_t errstr_size)
{
    int rc = send_batch(task, n, errstr, errstr_size);
    if (rc == 0) {
        pending_drop(task, n);
        return 0;
    }
    if (rc != REJECTED) {
        return rc;
    }
    if (n == 1) {
        char reason[512];
        tb_http_sink_client_describe(&task->client, reason, sizeof(reason));
        task->ctx->record_failed(task->ctx->runtime, &task->items[task->head].record,
                                 reason);
        pending_drop(task, 1);
        return 0;
    }
    rc = deliver(task, n / 2, errstr, errstr_size);
    return rc != 0 ? rc : deliver(task, n - n / 2, errstr, errstr_size);
}

/* Sends the batches at the head of the queue: only full ones unless all. */
static int send_pending(http_sink_task_t *task, bool all, char *errstr,
                        size_t errstr_size)
{
    while (pending(task) > 0) {
        bool full;
        size_t n =
            tb_http_sink_batch_take(task->format, task->items + task->head, pending(task),
                                    task->max_records, task->max_bytes, &full);
        if (!full && !all) {
            return 0;
        }
        int rc = deliver(task, n, errstr, errstr_size);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static bool lingered(const http_sink_task_t *task)
{
    return task->linger_ms > 0 && pending(task) > 0 &&
           tb_monotonic_ms() - task->items[task->head].arrived_ms >= task->linger_ms;
}

static int http_sink_put(void *opaque, const tb_sink_record_t *records, size_t count,
                         char *errstr, size_t errstr_size)
{
    http_sink_task_t *task = opaque;

    /* full batches left by a failed send go first; while the endpoint
     * still refuses them, take nothing */
    int rc = send_pending(task, false, errstr, errstr_size);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < count; i++) {
        if (pending_append(task, &records[i]) != 0) {
            snprintf(errstr, errstr_size, "out of memory buffering records for %s",
                     task->client.shown_url);
            return -1;
        }
        /* after a failure, keep taking records but send no more now */
        if (rc == 0) {
            rc = send_pending(task, false, errstr, errstr_size);
        }
    }
    if (rc == 0 && lingered(task)) {
        rc = send_pending(task, true, errstr, errstr_size);
    }
    /* every record is taken: what could not be sent yet stays queued */
    return rc == TB_RESULT_RETRY ? 0 : rc;
}

static int http_sink_flush(void *opaque, char *errstr, size_t errstr_size)
{
    return send_pending(opaque, true, errstr, errstr_size);
}

static const char *const http_sink_aliases[] = {"HttpSink", "HttpSinkConnector", NULL};

const tb_plugin_t tb_http_sink_plugin = {
    .class_name = "io.tributary.connect.http.HttpSinkConnector",
    .aliases = http_sink_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "0.1.0",
    .config = &http_sink_table,
    .validate = http_sink_validate,
    .task_configs = http_sink_task_configs,
    .task_start = http_sink_task_start,
    .reads_headers = true,
    .close = http_sink_close,
    .put = http_sink_put,
    .flush = http_sink_flush,
    .task_stop = http_sink_task_stop,
};
