/*
 * search_client.c - the search sink's side of libcurl: bulk requests sent
 * in the background by the client's own thread, on a curl multi handle (at
 * most max.in.flight.requests at once, one reused easy handle each, so
 * connections stay alive), with failover: a URL of connection.url that
 * cannot be reached makes the next one current for the requests that
 * follow.
 *
 * Threads: the task's thread hands a request to a free lane
 * (tb_search_client_send) and reads request->done; the client's thread
 * alone drives the multi handle: it starts each lane's request once its
 * not_before is past, reads its answer, sets done and calls on_done. The
 * mutex guards the lanes' requests and the current URL. Every transfer is
 * bounded: connection.timeout.ms to connect, and connection.timeout.ms +
 * read.timeout.ms for the whole request; the thread waits at most a second
 * at a time, so that a stop is seen. curl_global_init() is called once by
 * the server's main, never here.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/search/tb_search_sink.h"
#include "core/tb_time.h"

/* Only what the sink reads of a bulk response comes back. */
#define BULK_PATH                                                                        \
    "/_bulk?filter_path=errors,items.*.status,items.*.result,items.*.error.type,"        \
    "items.*.error.reason"
#define EXCERPT_MAX 300

/* Item error types that mean the document itself is refused. */
static const char *const malformed_types[] = {"mapper_parsing_exception",
                                              "document_parsing_exception",
                                              "mapper_exception",
                                              "strict_dynamic_mapping_exception",
                                              "illegal_argument_exception",
                                              "parse_exception",
                                              "json_parse_exception",
                                              "x_content_parse_exception",
                                              NULL};

typedef struct {
    CURL *curl;
    FILE *out; /* the response, into data/len */
    char *data;
    size_t len;
    tb_search_request_t *request; /* the one it carries, NULL when idle */
    bool running;                 /* on the multi handle */
    size_t url;                   /* the URL it was sent to */
} lane_t;

struct tb_search_client {
    const tb_search_client_options_t *options;
    size_t url_count;
    char **urls;  /* without a trailing slash */
    char **shown; /* scheme://host:port, for messages */
    size_t current;
    CURLM *multi;
    lane_t *lanes;
    int lane_count;
    lane_t call; /* tb_search_client_call's, on the task's thread */
    struct curl_slist *headers;
    pthread_mutex_t lock;
    pthread_t thread;
    bool thread_started;
    atomic_bool stopping;
};

int tb_search_urls_check(const json_t *value, char *reason, size_t reason_size)
{
    size_t i;
    json_t *entry;
    if (json_array_size(value) == 0) {
        snprintf(reason, reason_size, "At least one URL is required");
        return -1;
    }
    json_array_foreach (value, i, entry) {
        const char *url = json_string_value(entry);
        CURLU *parsed = curl_url();
        bool ok = url != NULL && parsed != NULL &&
                  (strncasecmp(url, "http://", 7) == 0 ||
                   strncasecmp(url, "https://", 8) == 0) &&
                  curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK;
        curl_url_cleanup(parsed);
        if (!ok) {
            snprintf(reason, reason_size, "Entry %zu is not an http:// or https:// URL",
                     i + 1);
            return -1;
        }
    }
    return 0;
}

/* scheme://host[:port] of url, without user information or path. */
static char *shown_url(const char *url)
{
    CURLU *parsed = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;
    if (parsed != NULL && curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK) {
        curl_url_get(parsed, CURLUPART_SCHEME, &scheme, 0);
        curl_url_get(parsed, CURLUPART_HOST, &host, 0);
        curl_url_get(parsed, CURLUPART_PORT, &port, 0);
    }
    if (asprintf(&out, "%s://%s%s%s", scheme ? scheme : "http", host ? host : "?",
                 port ? ":" : "", port ? port : "") < 0) {
        out = NULL;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(parsed);
    return out;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    lane_t *lane = arg;
    return fwrite(data, size, nmemb, lane->out) == nmemb ? size * nmemb : 0;
}

static int lane_reset(lane_t *lane)
{
    if (lane->out != NULL) {
        fclose(lane->out);
    }
    free(lane->data);
    lane->data = NULL;
    lane->len = 0;
    lane->out = open_memstream(&lane->data, &lane->len);
    return lane->out != NULL ? 0 : -1;
}

static int lane_setup(tb_search_client_t *client, lane_t *lane)
{
    const tb_search_client_options_t *o = client->options;
    CURL *c = lane->curl = curl_easy_init();
    int refused = 0;
    if (c == NULL) {
        return -1;
    }
    refused += curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    refused +=
        curl_easy_setopt(c, CURLOPT_USERAGENT, "tributary-search-sink") != CURLE_OK;
    refused +=
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                                o->connect_timeout_ms + o->read_timeout_ms) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_HTTPHEADER, client->headers) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_WRITEDATA, lane) != CURLE_OK;
    refused +=
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, o->verify_host ? 2L : 0L) != CURLE_OK;
    if (o->ca_location != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_location) != CURLE_OK;
    }
    if (o->cert_location != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_SSLCERT, o->cert_location) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_SSLKEY,
                                    o->key_location ? o->key_location
                                                    : o->cert_location) != CURLE_OK;
    }
    if (o->key_password != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_KEYPASSWD, o->key_password) != CURLE_OK;
    }
    if (o->username != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_USERNAME, o->username) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_PASSWORD,
                                    o->password ? o->password : "") != CURLE_OK;
    }
    return refused == 0 ? lane_reset(lane) : -1;
}

static void *drive(void *arg);

tb_search_client_t *tb_search_client_new(const tb_search_client_options_t *options,
                                         char *errstr, size_t errstr_size)
{
    tb_search_client_t *client = calloc(1, sizeof(*client));
    size_t i;
    json_t *entry;

    if (client == NULL) {
        goto fail;
    }
    client->options = options;
    client->url_count = json_array_size(options->urls);
    client->urls = calloc(client->url_count, sizeof(char *));
    client->shown = calloc(client->url_count, sizeof(char *));
    client->lane_count = options->max_in_flight;
    client->lanes = calloc((size_t)client->lane_count, sizeof(lane_t));
    client->multi = curl_multi_init();
    client->headers = curl_slist_append(NULL, "Content-Type: application/x-ndjson");
    pthread_mutex_init(&client->lock, NULL);
    if (client->urls == NULL || client->shown == NULL || client->lanes == NULL ||
        client->multi == NULL || client->headers == NULL) {
        goto fail;
    }
    /* "Expect:" turns off curl's 100-continue round trip on large bodies */
    struct curl_slist *grown = curl_slist_append(client->headers, "Expect:");
    if (grown == NULL) {
        goto fail;
    }
    json_array_foreach (options->urls, i, entry) {
        const char *url = json_string_value(entry);
        size_t len = strlen(url);
        while (len > 0 && url[len - 1] == '/') {
            len--;
        }
        client->urls[i] = strndup(url, len);
        client->shown[i] = shown_url(url);
        if (client->urls[i] == NULL || client->shown[i] == NULL) {
            goto fail;
        }
    }
    for (int l = 0; l <= client->lane_count; l++) {
        if (lane_setup(client,
                       l < client->lane_count ? &client->lanes[l] : &client->call) != 0) {
            snprintf(errstr, errstr_size,
                     "libcurl refused an option of the search client (is it built "
                     "with TLS?)");
            tb_search_client_free(client);
            return NULL;
        }
    }
    if (pthread_create(&client->thread, NULL, drive, client) != 0) {
        snprintf(errstr, errstr_size, "cannot start the search client's thread");
        tb_search_client_free(client);
        return NULL;
    }
    client->thread_started = true;
    return client;

fail:
    snprintf(errstr, errstr_size, "out of memory setting up the search client");
    tb_search_client_free(client);
    return NULL;
}

void tb_search_client_free(tb_search_client_t *client)
{
    if (client == NULL) {
        return;
    }
    if (client->thread_started) {
        atomic_store(&client->stopping, true);
        curl_multi_wakeup(client->multi);
        pthread_join(client->thread, NULL);
    }
    /* what is still on the wire is abandoned: its records are not durable,
     * and are read again */
    for (int l = 0; client->lanes != NULL && l <= client->lane_count; l++) {
        lane_t *lane = l < client->lane_count ? &client->lanes[l] : &client->call;
        if (lane->running) {
            curl_multi_remove_handle(client->multi, lane->curl);
        }
        curl_easy_cleanup(lane->curl);
        if (lane->out != NULL) {
            fclose(lane->out);
        }
        free(lane->data);
    }
    pthread_mutex_destroy(&client->lock);
    for (size_t i = 0; client->urls != NULL && i < client->url_count; i++) {
        free(client->urls[i]);
        free(client->shown[i]);
    }
    free(client->urls);
    free(client->shown);
    free(client->lanes);
    curl_multi_cleanup(client->multi);
    curl_slist_free_all(client->headers);
    free(client);
}

void tb_search_request_clear(tb_search_request_t *request)
{
    for (size_t i = 0; request->reasons != NULL && i < request->count; i++) {
        free(request->reasons[i]);
    }
    free(request->reasons);
    free(request->items);
    free(request->records);
    free(request->body);
    memset(request, 0, sizeof(*request));
}

/* ---- classification ---- */

static bool listed(const char *type)
{
    for (size_t i = 0; type != NULL && malformed_types[i] != NULL; i++) {
        if (strcmp(type, malformed_types[i]) == 0) {
            return true;
        }
    }
    return false;
}

static tb_search_outcome_t status_outcome(long status)
{
    if (status == 429 || status >= 500) {
        return TB_SEARCH_RETRY;
    }
    return TB_SEARCH_FATAL;
}

/* The outcome of one item of a bulk response: {"<op>":{"status",...}}. */
static tb_search_outcome_t item_outcome(json_t *item, char **reason)
{
    const char *op;
    json_t *body;
    *reason = NULL;
    json_object_foreach (item, op, body) {
        long status = (long)json_integer_value(json_object_get(body, "status"));
        json_t *error = json_object_get(body, "error");
        const char *type = json_string_value(json_object_get(error, "type"));
        const char *result = json_string_value(json_object_get(body, "result"));
        if ((status >= 200 && status < 300) || status == 409 ||
            (status == 404 && strcmp(op, "delete") == 0 && result != NULL &&
             strcmp(result, "not_found") == 0)) {
            return TB_SEARCH_OK;
        }
        if (asprintf(reason, "%s %ld: %s: %.*s", op, status, type ? type : "error",
                     EXCERPT_MAX,
                     json_string_value(json_object_get(error, "reason"))
                         ? json_string_value(json_object_get(error, "reason"))
                         : "") < 0) {
            *reason = NULL;
        }
        if (status == 429 || status >= 500) {
            return TB_SEARCH_RETRY;
        }
        return status == 400 && listed(type) ? TB_SEARCH_MALFORMED : TB_SEARCH_FATAL;
    }
    return TB_SEARCH_FATAL;
}

static void set_reason(tb_search_request_t *r, tb_search_outcome_t outcome,
                       const char *format, const char *shown, const char *detail)
{
    r->outcome = outcome;
    snprintf(r->reason, sizeof(r->reason), format, shown, detail);
}

/* Reads a 200 response's items into r. */
static int read_items(tb_search_request_t *r, const lane_t *lane, const char *shown)
{
    json_error_t error;
    json_t *response = json_loadb(lane->data, lane->len, 0, &error);
    json_t *items = json_object_get(response, "items");
    int rc = 0;

    r->items = calloc(r->count, sizeof(*r->items));
    r->reasons = calloc(r->count, sizeof(*r->reasons));
    if (r->items == NULL || r->reasons == NULL) {
        rc = -1;
    } else if (!json_is_false(json_object_get(response, "errors")) &&
               json_array_size(items) != r->count) {
        set_reason(r, TB_SEARCH_RETRY, "%s answered a bulk request with %s", shown,
                   "a response that does not list every item");
    } else if (json_is_true(json_object_get(response, "errors"))) {
        for (size_t i = 0; i < r->count; i++) {
            r->items[i] = item_outcome(json_array_get(items, i), &r->reasons[i]);
        }
    }
    json_decref(response);
    return rc;
}

/* The request's outcome once its transfer is done; under the lock. */
static int finish(tb_search_client_t *client, lane_t *lane, CURLcode code)
{
    tb_search_request_t *r = lane->request;
    const char *shown = client->shown[lane->url];
    long status = 0;
    char excerpt[EXCERPT_MAX + 1];

    fflush(lane->out);
    r->outcome = TB_SEARCH_OK;
    if (code != CURLE_OK) {
        set_reason(r, TB_SEARCH_RETRY, "cannot reach %s: %s", shown,
                   curl_easy_strerror(code));
        /* failover: later requests go to the next URL */
        if (lane->url == client->current) {
            client->current = (client->current + 1) % client->url_count;
        }
        return 0;
    }
    curl_easy_getinfo(lane->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200) {
        return read_items(r, lane, shown);
    }
    snprintf(excerpt, sizeof(excerpt), "HTTP %ld: %.*s", status,
             (int)(lane->len < EXCERPT_MAX ? lane->len : EXCERPT_MAX),
             lane->data ? lane->data : "");
    for (char *p = excerpt; *p != '\0'; p++) {
        *p = *p == '\n' || *p == '\r' ? ' ' : *p;
    }
    set_reason(r, status == 413 ? TB_SEARCH_FATAL : status_outcome(status),
               status == 413 ? "%s refused a bulk request as too large (lower "
                               "bulk.size.bytes or batch.size): %s"
                             : "%s answered a bulk request with %s",
               shown, excerpt);
    return 0;
}

/* Puts the lane's request on the wire; under the lock. */
static int start(tb_search_client_t *client, lane_t *lane)
{
    tb_search_request_t *r = lane->request;
    char *url = NULL;
    if (lane_reset(lane) != 0 ||
        asprintf(&url, "%s" BULK_PATH, client->urls[client->current]) < 0) {
        return -1;
    }
    lane->url = client->current;
    curl_easy_setopt(lane->curl, CURLOPT_URL, url);
    curl_easy_setopt(lane->curl, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(lane->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    curl_easy_setopt(lane->curl, CURLOPT_POSTFIELDS, r->body);
    free(url); /* curl copies the URL */
    if (curl_multi_add_handle(client->multi, lane->curl) != CURLM_OK) {
        return -1;
    }
    lane->running = true;
    return 0;
}

/* Hands the lane's request back, its outcome set; under the lock. */
static void done(tb_search_client_t *client, lane_t *lane)
{
    tb_search_request_t *r = lane->request;
    lane->request = NULL;
    lane->running = false;
    atomic_store(&r->done, true);
    client->options->on_done(client->options->on_done_arg);
}

/* Starts the requests whose time has come; returns how long until the
 * next one's (at most a second). Under the lock. */
static long start_due(tb_search_client_t *client)
{
    int64_t now = tb_monotonic_ms();
    long wait = 1000;
    for (int l = 0; l < client->lane_count; l++) {
        lane_t *lane = &client->lanes[l];
        if (lane->request == NULL || lane->running) {
            continue;
        }
        if (lane->request->not_before > now) {
            int64_t left = lane->request->not_before - now;
            wait = left < wait ? (long)left : wait;
        } else if (start(client, lane) != 0) {
            lane->request->outcome = TB_SEARCH_FATAL;
            snprintf(lane->request->reason, sizeof(lane->request->reason),
                     "out of memory sending a bulk request");
            done(client, lane);
        }
    }
    return wait;
}

/* The client's thread: drives the multi handle until the client stops. */
static void *drive(void *arg)
{
    tb_search_client_t *client = arg;
    while (!atomic_load(&client->stopping)) {
        int active = 0;
        pthread_mutex_lock(&client->lock);
        long wait = start_due(client);
        pthread_mutex_unlock(&client->lock);
        curl_multi_perform(client->multi, &active);
        curl_multi_poll(client->multi, NULL, 0, (int)wait, NULL);
        curl_multi_perform(client->multi, &active);
        CURLMsg *msg;
        int queued;
        pthread_mutex_lock(&client->lock);
        while ((msg = curl_multi_info_read(client->multi, &queued)) != NULL) {
            for (int l = 0; msg->msg == CURLMSG_DONE && l < client->lane_count; l++) {
                lane_t *lane = &client->lanes[l];
                if (lane->curl == msg->easy_handle && lane->running) {
                    CURLcode code = msg->data.result;
                    curl_multi_remove_handle(client->multi, lane->curl);
                    if (finish(client, lane, code) != 0) {
                        lane->request->outcome = TB_SEARCH_FATAL;
                        snprintf(lane->request->reason, sizeof(lane->request->reason),
                                 "out of memory reading a bulk response");
                    }
                    done(client, lane);
                }
            }
        }
        pthread_mutex_unlock(&client->lock);
    }
    return NULL;
}

int tb_search_client_send(tb_search_client_t *client, tb_search_request_t *request)
{
    int rc = -1;
    for (size_t i = 0; request->reasons != NULL && i < request->count; i++) {
        free(request->reasons[i]);
    }
    free(request->reasons);
    free(request->items);
    request->reasons = NULL;
    request->items = NULL;
    request->outcome = TB_SEARCH_OK;
    request->reason[0] = '\0';
    atomic_store(&request->done, false);
    pthread_mutex_lock(&client->lock);
    for (int l = 0; l < client->lane_count && rc != 0; l++) {
        if (client->lanes[l].request == NULL) {
            client->lanes[l].request = request;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&client->lock);
    curl_multi_wakeup(client->multi);
    return rc;
}

long tb_search_client_call(tb_search_client_t *client, const char *method,
                           const char *path, const char *body, json_t **response,
                           char *reason, size_t reason_size)
{
    lane_t *lane = &client->call;
    char *url = NULL;
    long status = 0;
    struct curl_slist *json_header =
        curl_slist_append(NULL, "Content-Type: application/json");

    *response = NULL;
    pthread_mutex_lock(&client->lock);
    size_t current = client->current;
    pthread_mutex_unlock(&client->lock);
    if (json_header == NULL || lane_reset(lane) != 0 ||
        asprintf(&url, "%s%s", client->urls[current], path) < 0) {
        snprintf(reason, reason_size, "out of memory");
        curl_slist_free_all(json_header);
        return 0;
    }
    curl_easy_setopt(lane->curl, CURLOPT_URL, url);
    curl_easy_setopt(lane->curl, CURLOPT_HTTPHEADER, json_header);
    curl_easy_setopt(lane->curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(lane->curl, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(lane->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)(body ? strlen(body) : 0));
    curl_easy_setopt(lane->curl, CURLOPT_NOBODY, strcmp(method, "HEAD") == 0 ? 1L : 0L);
    CURLcode code = curl_easy_perform(lane->curl);
    curl_easy_setopt(lane->curl, CURLOPT_NOBODY, 0L);
    curl_easy_setopt(lane->curl, CURLOPT_HTTPHEADER, client->headers);
    free(url);
    curl_slist_free_all(json_header);
    fflush(lane->out);
    if (code != CURLE_OK) {
        snprintf(reason, reason_size, "cannot reach %s: %s", client->shown[current],
                 curl_easy_strerror(code));
        pthread_mutex_lock(&client->lock);
        if (client->current == current) {
            client->current = (current + 1) % client->url_count;
        }
        pthread_mutex_unlock(&client->lock);
        return 0;
    }
    curl_easy_getinfo(lane->curl, CURLINFO_RESPONSE_CODE, &status);
    *response = json_loadb(lane->data, lane->len, 0, NULL);
    snprintf(reason, reason_size, "%s answered %s %s with HTTP %ld",
             client->shown[current], method, path, status);
    return status;
}
