/*
 * registry.c - the Schema Registry client over libcurl: fail-over between
 * URLs, bounded retries with backoff, auth, TLS, and the caches.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/tb_time.h"
#include "core/tb_buf.h"
#include "registry/tb_registry.h"
#include "registry/tb_registry_cache.h"

#define MAX_URLS 16
#define MAX_REPLY_BYTES (16u << 20) /* a schema larger than this is refused */
#define MAX_REFERENCE_DEPTH 16
#define CONTENT_TYPE "application/vnd.schemaregistry.v1+json"

struct tb_registry {
    char *urls[MAX_URLS];
    char *shown[MAX_URLS]; /* the URLs without user info, for messages */
    size_t url_count;
    size_t preferred; /* the URL that answered last */
    tb_registry_config_t config;
    char *strings[6]; /* copies config's strings point to */
    CURL *curl;
    pthread_mutex_t http_lock; /* curl, preferred, down_until_ms, last_error */
    int64_t down_until_ms;     /* calls fail fast until then */
    char last_error[256];
    pthread_mutex_t cache_lock;
    tb_registry_cache_t *by_id;      /* "i" + id */
    tb_registry_cache_t *by_schema;  /* "s" subject NUL type NUL text NUL register */
    tb_registry_cache_t *by_version; /* "v" subject NUL version (-1: latest) */
};

/* A request's answer. */
typedef struct {
    long status;
    json_t *body; /* NULL when not JSON */
} reply_t;

const char *tb_registry_type_name(tb_schema_type_t type)
{
    static const char *const names[] = {"AVRO", "PROTOBUF", "JSON"};
    return names[type];
}

static int type_of_name(const char *name, tb_schema_type_t *type)
{
    for (int t = TB_SCHEMA_AVRO; t <= TB_SCHEMA_JSON; t++) {
        if (strcmp(name, tb_registry_type_name((tb_schema_type_t)t)) == 0) {
            *type = (tb_schema_type_t)t;
            return 0;
        }
    }
    return -1;
}

/* -------------------------------------------------------------------------
 * Creation
 */

/* url without "user:password@", in a new string. */
static char *without_user_info(const char *url)
{
    const char *scheme_end = strstr(url, "://");
    const char *host = scheme_end != NULL ? scheme_end + 3 : url;
    const char *at = strchr(host, '@');
    const char *slash = strchr(host, '/');
    if (at == NULL || (slash != NULL && slash < at)) {
        return strdup(url);
    }
    size_t scheme_len = (size_t)(host - url);
    char *shown = malloc(strlen(url) + 1);
    if (shown != NULL) {
        memcpy(shown, url, scheme_len);
        strcpy(shown + scheme_len, at + 1);
    }
    return shown;
}

static int add_url(tb_registry_t *r, const char *start, size_t n, char *errstr,
                   size_t errstr_size)
{
    while (n > 0 && (*start == ' ' || *start == '\t')) {
        start++;
        n--;
    }
    while (n > 0 && (start[n - 1] == ' ' || start[n - 1] == '/')) {
        n--;
    }
    if (n == 0) {
        return 0;
    }
    if (r->url_count == MAX_URLS) {
        snprintf(errstr, errstr_size, "more than %d schema registry URLs", MAX_URLS);
        return -1;
    }
    char *url = strndup(start, n);
    if (url == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    r->urls[r->url_count] = url;
    r->shown[r->url_count] = without_user_info(url);
    r->url_count++;
    if (r->shown[r->url_count - 1] == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        snprintf(errstr, errstr_size, "schema registry URL %s is not http(s)",
                 r->shown[r->url_count - 1]);
        return -1;
    }
    return 0;
}

static int split_urls(tb_registry_t *r, const char *urls, char *errstr,
                      size_t errstr_size)
{
    const char *start = urls;
    for (const char *p = urls;; p++) {
        if (*p == ',' || *p == '\0') {
            if (add_url(r, start, (size_t)(p - start), errstr, errstr_size) != 0) {
                return -1;
            }
            start = p + 1;
        }
        if (*p == '\0') {
            break;
        }
    }
    if (r->url_count == 0) {
        snprintf(errstr, errstr_size, "no schema registry URL");
        return -1;
    }
    return 0;
}

/* Points *field at a copy of itself kept in r->strings[slot]. */
static int keep_string(tb_registry_t *r, int slot, const char **field)
{
    if (*field == NULL) {
        return 0;
    }
    r->strings[slot] = strdup(*field);
    *field = r->strings[slot];
    return r->strings[slot] != NULL ? 0 : -1;
}

static int copy_config(tb_registry_t *r, const tb_registry_config_t *config)
{
    r->config = *config;
    r->config.urls = NULL;
    if (keep_string(r, 0, &r->config.user_info) != 0 ||
        keep_string(r, 1, &r->config.bearer_token) != 0 ||
        keep_string(r, 2, &r->config.ca_location) != 0 ||
        keep_string(r, 3, &r->config.cert_location) != 0 ||
        keep_string(r, 4, &r->config.key_location) != 0 ||
        keep_string(r, 5, &r->config.key_password) != 0) {
        return -1;
    }
    return 0;
}

tb_registry_t *tb_registry_create(const tb_registry_config_t *config, char *errstr,
                                  size_t errstr_size)
{
    tb_registry_t *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&r->http_lock, NULL);
    pthread_mutex_init(&r->cache_lock, NULL);
    if (config->urls == NULL || split_urls(r, config->urls, errstr, errstr_size) != 0) {
        if (config->urls == NULL) {
            snprintf(errstr, errstr_size, "no schema registry URL");
        }
        goto fail;
    }
    if (config->user_info != NULL && config->bearer_token != NULL) {
        snprintf(errstr, errstr_size,
                 "basic auth and a bearer token cannot be used together");
        goto fail;
    }
    size_t capacity = config->cache_capacity > 0 ? config->cache_capacity : 1000;
    r->curl = curl_easy_init();
    r->by_id = tb_registry_cache_create(capacity);
    r->by_schema = tb_registry_cache_create(capacity);
    r->by_version = tb_registry_cache_create(capacity);
    if (copy_config(r, config) != 0 || r->curl == NULL || r->by_id == NULL ||
        r->by_schema == NULL || r->by_version == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    return r;

fail:
    tb_registry_destroy(r);
    return NULL;
}

void tb_registry_destroy(tb_registry_t *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->url_count; i++) {
        free(r->urls[i]);
        free(r->shown[i]);
    }
    for (size_t i = 0; i < sizeof(r->strings) / sizeof(r->strings[0]); i++) {
        free(r->strings[i]);
    }
    if (r->curl != NULL) {
        curl_easy_cleanup(r->curl);
    }
    tb_registry_cache_destroy(r->by_id);
    tb_registry_cache_destroy(r->by_schema);
    tb_registry_cache_destroy(r->by_version);
    pthread_mutex_destroy(&r->http_lock);
    pthread_mutex_destroy(&r->cache_lock);
    free(r);
}

/* -------------------------------------------------------------------------
 * HTTP
 */

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
    tb_buf_t *body = user;
    if (body->len + size * n > MAX_REPLY_BYTES) {
        return 0; /* curl fails the transfer */
    }
    tb_buf_append(body, data, size * n);
    return body->failed ? 0 : size * n;
}

static void set_tls(tb_registry_t *r)
{
    const tb_registry_config_t *c = &r->config;
    if (c->ca_location != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_CAINFO, c->ca_location);
    }
    if (c->cert_location != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_SSLCERT, c->cert_location);
    }
    if (c->key_location != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_SSLKEY, c->key_location);
    }
    if (c->key_password != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_KEYPASSWD, c->key_password);
    }
}

static void set_auth(tb_registry_t *r)
{
    if (r->config.user_info != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(r->curl, CURLOPT_USERPWD, r->config.user_info);
    } else if (r->config.bearer_token != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(r->curl, CURLOPT_XOAUTH2_BEARER, r->config.bearer_token);
    }
}

/* One request to one URL. Returns 0 with reply filled when an answer came
 * that another URL would not change (2xx, 4xx but 429); -1 with errstr when
 * the next URL should be tried. */
static int perform(tb_registry_t *r, size_t url, const char *method, const char *path,
                   const char *body, reply_t *reply, char *errstr, size_t errstr_size)
{
    char *full = malloc(strlen(r->urls[url]) + strlen(path) + 1);
    struct curl_slist *headers = NULL;
    tb_buf_t received = {0};
    int rc = -1;

    if (full == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    sprintf(full, "%s%s", r->urls[url], path);
    headers = curl_slist_append(headers, "Accept: " CONTENT_TYPE ", application/json");
    headers = curl_slist_append(headers, "Content-Type: " CONTENT_TYPE);
    curl_easy_reset(r->curl);
    curl_easy_setopt(r->curl, CURLOPT_URL, full);
    curl_easy_setopt(r->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(r->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(r->curl, CURLOPT_TIMEOUT_MS, r->config.timeout_ms);
    curl_easy_setopt(r->curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(r->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, &received);
    if (body != NULL) {
        curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
    }
    set_auth(r);
    set_tls(r);
    CURLcode code = curl_easy_perform(r->curl);
    if (code != CURLE_OK) {
        snprintf(errstr, errstr_size, "%s: %s", r->shown[url], curl_easy_strerror(code));
        goto done;
    }
    curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &reply->status);
    if (reply->status >= 500 || reply->status == 429) {
        snprintf(errstr, errstr_size, "%s answered HTTP %ld", r->shown[url],
                 reply->status);
        goto done;
    }
    reply->body =
        received.len > 0 ? json_loadb(received.data, received.len, 0, NULL) : NULL;
    rc = 0;

done:
    tb_buf_release(&received);
    curl_slist_free_all(headers);
    free(full);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Tries every URL, the preferred one first. */
static int one_pass(tb_registry_t *r, const char *method, const char *path,
                    const char *body, reply_t *reply)
{
    for (size_t i = 0; i < r->url_count; i++) {
        size_t url = (r->preferred + i) % r->url_count;
        if (perform(r, url, method, path, body, reply, r->last_error,
                    sizeof(r->last_error)) == 0) {
            r->preferred = url;
            return 0;
        }
    }
    return -1;
}

/* Sends a request, failing over and retrying. TB_REGISTRY_OK with *reply
 * (its body is the caller's), or TB_REGISTRY_UNAVAILABLE with errstr. */
static tb_registry_status_t request(tb_registry_t *r, const char *method,
                                    const char *path, const char *body, reply_t *reply,
                                    char *errstr, size_t errstr_size)
{
    tb_registry_status_t status = TB_REGISTRY_UNAVAILABLE;
    long wait = r->config.retry_wait_ms;

    *reply = (reply_t){0};
    pthread_mutex_lock(&r->http_lock);
    if (tb_monotonic_ms() < r->down_until_ms) {
        snprintf(errstr, errstr_size, "schema registry unavailable (%s)", r->last_error);
        goto done;
    }
    for (int attempt = 0;; attempt++) {
        if (one_pass(r, method, path, body, reply) == 0) {
            status = TB_REGISTRY_OK;
            goto done;
        }
        if (attempt >= r->config.max_retries) {
            break;
        }
        sleep_ms(wait);
        wait = wait * 2 < r->config.retry_max_wait_ms ? wait * 2
                                                      : r->config.retry_max_wait_ms;
    }
    r->down_until_ms = tb_monotonic_ms() + r->config.retry_wait_ms;
    snprintf(errstr, errstr_size, "schema registry unavailable after %d attempt(s) (%s)",
             r->config.max_retries + 1, r->last_error);

done:
    pthread_mutex_unlock(&r->http_lock);
    return status;
}

/* The status of a 4xx reply, with the registry's message in errstr. */
static tb_registry_status_t refused(const reply_t *reply, const char *what, char *errstr,
                                    size_t errstr_size)
{
    const char *message = json_string_value(json_object_get(reply->body, "message"));
    long code = (long)json_integer_value(json_object_get(reply->body, "error_code"));
    snprintf(errstr, errstr_size, "%s: HTTP %ld, error code %ld: %s", what, reply->status,
             code, message != NULL ? message : "(no message)");
    return reply->status == 404 ? TB_REGISTRY_NOT_FOUND : TB_REGISTRY_ERROR;
}

/* "/prefix/<subject, escaped>" + suffix in a new string. */
static char *subject_path(const char *prefix, const char *subject, const char *suffix)
{
    char *escaped = curl_easy_escape(NULL, subject, 0);
    char *path = NULL;
    if (escaped != NULL) {
        size_t n = strlen(prefix) + strlen(escaped) + strlen(suffix) + 1;
        path = malloc(n);
        if (path != NULL) {
            snprintf(path, n, "%s%s%s", prefix, escaped, suffix);
        }
        curl_free(escaped);
    }
    return path;
}

/* -------------------------------------------------------------------------
 * Answers
 */

/* A schema from a reply body ({"schema", "schemaType"?, "references"?,
 * "id"?, "version"?}); id is used when the body has none. */
static tb_registry_schema_t *schema_of(const json_t *body, int32_t id, char *errstr,
                                       size_t errstr_size)
{
    const char *text = json_string_value(json_object_get(body, "schema"));
    const char *type = json_string_value(json_object_get(body, "schemaType"));
    const json_t *refs = json_object_get(body, "references");
    const json_t *given_id = json_object_get(body, "id");
    tb_registry_schema_t *schema = NULL;

    if (text == NULL || (refs != NULL && !json_is_array(refs))) {
        snprintf(errstr, errstr_size, "the registry's answer holds no schema");
        return NULL;
    }
    schema = tb_registry_schema_new();
    if (schema == NULL || (schema->text = strdup(text)) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (type != NULL && type_of_name(type, &schema->type) != 0) {
        snprintf(errstr, errstr_size, "unknown schema type %s", type);
        goto fail;
    }
    if (refs != NULL) {
        json_array_extend(schema->references, (json_t *)refs);
    }
    schema->id = json_is_integer(given_id) ? (int32_t)json_integer_value(given_id) : id;
    if (json_is_integer(json_object_get(body, "version"))) {
        schema->version = (int)json_integer_value(json_object_get(body, "version"));
    }
    return schema;

fail:
    tb_registry_schema_release(schema);
    return NULL;
}

static tb_registry_schema_t *cache_get(tb_registry_t *r, tb_registry_cache_t *cache,
                                       const void *key, size_t key_len, long max_age_ms)
{
    pthread_mutex_lock(&r->cache_lock);
    tb_registry_schema_t *schema =
        tb_registry_cache_get(cache, key, key_len, tb_monotonic_ms(), max_age_ms);
    pthread_mutex_unlock(&r->cache_lock);
    return schema;
}

static void cache_put(tb_registry_t *r, tb_registry_cache_t *cache, const void *key,
                      size_t key_len, tb_registry_schema_t *schema)
{
    pthread_mutex_lock(&r->cache_lock);
    /* a failed put only costs a later request */
    (void)tb_registry_cache_put(cache, key, key_len, schema, tb_monotonic_ms());
    pthread_mutex_unlock(&r->cache_lock);
}

/* GETs path and makes a schema of the answer. */
static tb_registry_status_t fetch_schema(tb_registry_t *r, const char *path, int32_t id,
                                         const char *what, tb_registry_schema_t **out,
                                         char *errstr, size_t errstr_size)
{
    reply_t reply;
    tb_registry_status_t status =
        request(r, "GET", path, NULL, &reply, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        return status;
    }
    if (reply.status >= 400) {
        status = refused(&reply, what, errstr, errstr_size);
    } else if ((*out = schema_of(reply.body, id, errstr, errstr_size)) == NULL) {
        status = TB_REGISTRY_ERROR;
    }
    json_decref(reply.body);
    return status;
}

tb_registry_status_t tb_registry_schema_by_id(tb_registry_t *r, int32_t id,
                                              tb_registry_schema_t **out, char *errstr,
                                              size_t errstr_size)
{
    char key[16];
    char path[48];
    char what[48];
    size_t key_len = (size_t)snprintf(key, sizeof(key), "i%d", (int)id);

    *out = cache_get(r, r->by_id, key, key_len, -1);
    if (*out != NULL) {
        return TB_REGISTRY_OK;
    }
    snprintf(path, sizeof(path), "/schemas/ids/%d", (int)id);
    snprintf(what, sizeof(what), "schema id %d", (int)id);
    tb_registry_status_t status =
        fetch_schema(r, path, id, what, out, errstr, errstr_size);
    if (status == TB_REGISTRY_OK) {
        (*out)->id = id;
        cache_put(r, r->by_id, key, key_len, *out);
    }
    return status;
}

tb_registry_status_t tb_registry_subject_version(tb_registry_t *r, const char *subject,
                                                 int version, tb_registry_schema_t **out,
                                                 char *errstr, size_t errstr_size)
{
    tb_buf_t key = {0};
    char suffix[32];
    char what[64];
    tb_registry_status_t status = TB_REGISTRY_ERROR;
    char *path = NULL;

    tb_buf_printf(&key, "v%s%c%d", subject, '\0', version);
    if (key.failed) {
        snprintf(errstr, errstr_size, "out of memory");
        goto done;
    }
    *out = cache_get(r, r->by_version, key.data, key.len,
                     version < 0 ? r->config.latest_ttl_ms : -1);
    if (*out != NULL) {
        status = TB_REGISTRY_OK;
        goto done;
    }
    if (version < 0) {
        snprintf(suffix, sizeof(suffix), "/versions/latest");
    } else {
        snprintf(suffix, sizeof(suffix), "/versions/%d", version);
    }
    path = subject_path("/subjects/", subject, suffix);
    if (path == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto done;
    }
    snprintf(what, sizeof(what), "subject version%s", suffix + 9);
    status = fetch_schema(r, path, -1, what, out, errstr, errstr_size);
    if (status == TB_REGISTRY_OK) {
        cache_put(r, r->by_version, key.data, key.len, *out);
    }

done:
    free(path);
    tb_buf_release(&key);
    return status;
}

static char *request_body(tb_schema_type_t type, const char *text,
                          const json_t *references)
{
    json_t *body = json_pack("{s:s}", "schema", text);
    char *dumped = NULL;
    if (body == NULL) {
        return NULL;
    }
    if (type != TB_SCHEMA_AVRO) {
        json_object_set_new(body, "schemaType", json_string(tb_registry_type_name(type)));
    }
    if (json_array_size(references) > 0) {
        json_object_set(body, "references", (json_t *)references);
    }
    dumped = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return dumped;
}

/* POSTs the schema for its id. */
static tb_registry_status_t post_schema(tb_registry_t *r, const char *subject,
                                        tb_schema_type_t type, const char *text,
                                        const json_t *references, bool register_it,
                                        int32_t *id, char *errstr, size_t errstr_size)
{
    char *path = subject_path("/subjects/", subject, register_it ? "/versions" : "");
    char *body = request_body(type, text, references);
    tb_registry_status_t status = TB_REGISTRY_ERROR;
    reply_t reply = {0};

    if (path == NULL || body == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto done;
    }
    status = request(r, "POST", path, body, &reply, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        goto done;
    }
    if (reply.status >= 400) {
        status =
            refused(&reply, register_it ? "registering a schema" : "looking up a schema",
                    errstr, errstr_size);
    } else if (!json_is_integer(json_object_get(reply.body, "id"))) {
        snprintf(errstr, errstr_size, "the registry's answer holds no schema id");
        status = TB_REGISTRY_ERROR;
    } else {
        *id = (int32_t)json_integer_value(json_object_get(reply.body, "id"));
    }

done:
    json_decref(reply.body);
    free(body);
    free(path);
    return status;
}

tb_registry_status_t tb_registry_schema_id(tb_registry_t *r, const char *subject,
                                           tb_schema_type_t type, const char *text,
                                           const json_t *references, bool register_it,
                                           int32_t *id, char *errstr, size_t errstr_size)
{
    tb_buf_t key = {0};
    tb_registry_schema_t *known = NULL;
    tb_registry_status_t status = TB_REGISTRY_ERROR;

    tb_buf_printf(&key, "s%s%c%d%c%s%c%d", subject, '\0', (int)type, '\0', text, '\0',
                  register_it);
    if (key.failed) {
        snprintf(errstr, errstr_size, "out of memory");
        goto done;
    }
    known = cache_get(r, r->by_schema, key.data, key.len, -1);
    if (known != NULL) {
        *id = known->id;
        status = TB_REGISTRY_OK;
        goto done;
    }
    status = post_schema(r, subject, type, text, references, register_it, id, errstr,
                         errstr_size);
    if (status == TB_REGISTRY_OK && (known = tb_registry_schema_new()) != NULL) {
        known->id = *id;
        known->type = type;
        cache_put(r, r->by_schema, key.data, key.len, known);
    }

done:
    tb_registry_schema_release(known);
    tb_buf_release(&key);
    return status;
}

/* Adds what refs name to out, depth levels deep at most. */
static tb_registry_status_t add_references(tb_registry_t *r, const json_t *refs,
                                           json_t *out, int depth, char *errstr,
                                           size_t errstr_size)
{
    size_t i;
    const json_t *ref;

    if (depth > MAX_REFERENCE_DEPTH) {
        snprintf(errstr, errstr_size, "schema references nest deeper than %d",
                 MAX_REFERENCE_DEPTH);
        return TB_REGISTRY_ERROR;
    }
    json_array_foreach (refs, i, ref) {
        const char *name = json_string_value(json_object_get(ref, "name"));
        const char *subject = json_string_value(json_object_get(ref, "subject"));
        const json_t *version = json_object_get(ref, "version");
        tb_registry_schema_t *schema = NULL;
        if (name == NULL || subject == NULL || !json_is_integer(version)) {
            snprintf(errstr, errstr_size,
                     "a schema reference lacks name, subject or "
                     "version");
            return TB_REGISTRY_ERROR;
        }
        if (json_object_get(out, name) != NULL) {
            continue;
        }
        tb_registry_status_t status = tb_registry_subject_version(
            r, subject, (int)json_integer_value(version), &schema, errstr, errstr_size);
        if (status == TB_REGISTRY_OK) {
            json_object_set_new(out, name, json_string(schema->text));
            status = add_references(r, schema->references, out, depth + 1, errstr,
                                    errstr_size);
        }
        tb_registry_schema_release(schema);
        if (status != TB_REGISTRY_OK) {
            return status;
        }
    }
    return TB_REGISTRY_OK;
}

tb_registry_status_t tb_registry_resolve_references(tb_registry_t *r,
                                                    const tb_registry_schema_t *schema,
                                                    json_t **out, char *errstr,
                                                    size_t errstr_size)
{
    *out = json_object();
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return TB_REGISTRY_ERROR;
    }
    tb_registry_status_t status =
        add_references(r, schema->references, *out, 0, errstr, errstr_size);
    if (status != TB_REGISTRY_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return status;
}
