/*
 * http_client.c - the HTTP sink's side of libcurl: one easy handle per
 * task, reused so that its connection stays alive between requests.
 *
 * curl_global_init() is not called here: it is not thread safe, so the
 * server's main calls it once before any task starts (and unit tests in
 * their main).
 *
 * Secrets: the values of headers whose names look secret
 * (tb_secret_name_is_credential) are kept aside so that they can be cut
 * out of any response text shown in an error, and the URL is shown with
 * its user information and secret query parameters hidden.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/http/tb_http_sink.h"
#include "core/tb_log.h"
#include "core/tb_secret.h"

#define RESPONSE_KEEP 4096 /* bytes of a response body kept for messages */
#define EXCERPT_MAX 200    /* bytes of it shown */
#define HIDDEN "[hidden]"

/* Headers the connector sets itself: the body's framing. */
static const char *const reserved_headers[] = {"Content-Length", "Transfer-Encoding",
                                               NULL};

/* 4xx statuses about the endpoint rather than the records: every request
 * would get them, so looking for a bad record would blame every record. */
static const long endpoint_statuses[] = {401, 403, 404, 405, 407,
                                         410, 411, 414, 415, 426};

/* Local problems that no retry can fix. */
static const CURLcode setup_codes[] = {
    CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_SSL_CERTPROBLEM,
    CURLE_SSL_CACERT_BADFILE,   CURLE_NOT_BUILT_IN,  CURLE_UNKNOWN_OPTION,
};

/* ---- http.url ---- */

int tb_http_sink_url_check(const json_t *value, char *reason, size_t reason_size)
{
    const char *url = json_string_value(value);
    CURLU *parsed = NULL;
    char *host = NULL;
    int rc = -1;

    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) {
        snprintf(reason, reason_size, "Must start with http:// or https://");
        goto done;
    }
    parsed = curl_url();
    CURLUcode uc =
        parsed ? curl_url_set(parsed, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
    if (uc == CURLUE_OK) {
        uc = curl_url_get(parsed, CURLUPART_HOST, &host, 0);
    }
    if (uc != CURLUE_OK || host[0] == '\0') {
        snprintf(reason, reason_size, "Not a valid URL: %s",
                 uc != CURLUE_OK ? curl_url_strerror(uc) : "no host");
        goto done;
    }
    rc = 0;

done:
    curl_free(host);
    curl_url_cleanup(parsed);
    return rc;
}

/* "a=1&api_key=x" -> "a=1&api_key=[hidden]". */
static void put_query(tb_http_sink_buf_t *out, const char *query)
{
    const char *p = query;
    while (*p != '\0') {
        size_t len = strcspn(p, "&");
        const char *equals = memchr(p, '=', len);
        size_t name_len = equals != NULL ? (size_t)(equals - p) : len;
        if (equals != NULL && tb_secret_name_is_credential(p, name_len)) {
            tb_http_sink_buf_add(out, p, name_len + 1);
            tb_http_sink_buf_str(out, HIDDEN);
        } else {
            tb_http_sink_buf_add(out, p, len);
        }
        p += len;
        if (*p == '&') {
            tb_http_sink_buf_add(out, "&", 1);
            p++;
        }
    }
}

/* The URL for messages: scheme://[hidden]@host:port/path?query with the
 * user information and secret query values hidden. NULL on failure. */
static char *shown_url_of(const char *url)
{
    CURLU *parsed = curl_url();
    char *parts[5] = {NULL}; /* scheme, user, host, port, path */
    char *query = NULL;
    static const CURLUPart which[5] = {CURLUPART_SCHEME, CURLUPART_USER, CURLUPART_HOST,
                                       CURLUPART_PORT, CURLUPART_PATH};
    tb_http_sink_buf_t out = {0};

    if (parsed == NULL || curl_url_set(parsed, CURLUPART_URL, url, 0) != CURLUE_OK) {
        out.failed = true;
        goto done;
    }
    for (size_t i = 0; i < 5; i++) {
        curl_url_get(parsed, which[i], &parts[i], 0); /* NULL when absent */
    }
    curl_url_get(parsed, CURLUPART_QUERY, &query, 0);
    tb_http_sink_buf_str(&out, parts[0] ? parts[0] : "http");
    tb_http_sink_buf_str(&out, "://");
    tb_http_sink_buf_str(&out, parts[1] ? HIDDEN "@" : "");
    tb_http_sink_buf_str(&out, parts[2] ? parts[2] : "");
    tb_http_sink_buf_str(&out, parts[3] ? ":" : "");
    tb_http_sink_buf_str(&out, parts[3] ? parts[3] : "");
    tb_http_sink_buf_str(&out, parts[4] ? parts[4] : "/");
    if (query != NULL) {
        tb_http_sink_buf_add(&out, "?", 1);
        put_query(&out, query);
    }

done:
    for (size_t i = 0; i < 5; i++) {
        curl_free(parts[i]);
    }
    curl_free(query);
    curl_url_cleanup(parsed);
    if (out.failed) {
        tb_http_sink_buf_clear(&out);
    }
    return out.data;
}

/* ---- http.headers ---- */

/* Called for each header of a spec with its trimmed name and value. */
typedef int (*header_fn)(void *arg, const char *name, const char *value);

/* The characters of an HTTP token (RFC 9110), which a header name is. */
static const char token_chars[] = "!#$%&'*+-.^_`|~0123456789"
                                  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    return s;
}

/* Checks one "Name: value" entry (modified in place) and passes it on.
 * Reasons name the entry's position, or its name once the name is known
 * to be one, and never quote a value. */
static int parse_entry(char *entry, size_t position, header_fn fn, void *arg,
                       char *reason, size_t reason_size)
{
    char *colon = strchr(entry, ':');
    if (colon == NULL) {
        snprintf(reason, reason_size, "Entry %zu is not of the form 'Name: value'",
                 position);
        return -1;
    }
    *colon = '\0';
    char *name = trim(entry);
    char *value = trim(colon + 1);
    if (name[0] == '\0' || name[strspn(name, token_chars)] != '\0') {
        snprintf(reason, reason_size, "Entry %zu has an empty or invalid header name",
                 position);
        return -1;
    }
    for (size_t i = 0; value[i] != '\0'; i++) {
        if (iscntrl((unsigned char)value[i]) && value[i] != '\t') {
            snprintf(reason, reason_size, "The value of header %s has control characters",
                     name);
            return -1;
        }
    }
    for (size_t i = 0; reserved_headers[i] != NULL; i++) {
        if (strcasecmp(name, reserved_headers[i]) == 0) {
            snprintf(reason, reason_size, "Header %s is set by the connector", name);
            return -1;
        }
    }
    return fn != NULL ? fn(arg, name, value) : 0;
}

/* Walks "Name: value|Name: value"; blank entries are skipped. Returns 0,
 * or -1 with reason (or what fn returned). */
static int parse_headers(const char *spec, header_fn fn, void *arg, char *reason,
                         size_t reason_size)
{
    char *copy = strdup(spec);
    char *save = NULL;
    size_t position = 0;
    int rc = 0;

    if (copy == NULL) {
        snprintf(reason, reason_size, "Out of memory");
        return -1;
    }
    for (char *entry = strtok_r(copy, "|", &save); entry != NULL && rc == 0;
         entry = strtok_r(NULL, "|", &save)) {
        position++;
        if (*trim(entry) != '\0') {
            rc = parse_entry(entry, position, fn, arg, reason, reason_size);
        }
    }
    free(copy);
    return rc;
}

int tb_http_sink_headers_check(const json_t *value, char *reason, size_t reason_size)
{
    return parse_headers(json_string_value(value), NULL, NULL, reason, reason_size);
}

static int append_line(tb_http_sink_client_t *client, const char *line)
{
    struct curl_slist *list = curl_slist_append(client->headers, line);
    if (list == NULL) {
        return -1;
    }
    client->headers = list;
    return 0;
}

static int keep_secret(tb_http_sink_client_t *client, const char *value)
{
    char **grown = realloc(client->secrets, (client->secret_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return -1;
    }
    client->secrets = grown;
    client->secrets[client->secret_count] = strdup(value);
    if (client->secrets[client->secret_count] == NULL) {
        return -1;
    }
    client->secret_count++;
    return 0;
}

/* header_fn: adds one configured header to the client's list. */
static int add_header(void *arg, const char *name, const char *value)
{
    tb_http_sink_client_t *client = arg;
    char *line = NULL;
    char reason[512];
    /* a value may be a secret reference, resolved only now */
    char *resolved = tb_secret_resolve(value, reason, sizeof(reason));
    if (resolved == NULL) {
        TB_LOG(TB_LOG_ERROR, "tributary.task", "http.headers: %s", reason);
        return -1;
    }
    /* curl drops "Name:" but sends "Name;" as an empty header */
    int rc = asprintf(&line, "%s%s%s", name, resolved[0] ? ": " : ";", resolved) < 0
                 ? -1
                 : append_line(client, line);
    free(line);
    if (rc == 0 && resolved[0] != '\0' &&
        (tb_secret_name_is_credential(name, strlen(name)) ||
         strcmp(resolved, value) != 0)) {
        rc = keep_secret(client, resolved);
    }
    tb_secret_free(resolved);
    return rc;
}

/* True when the configured headers name one called name. */
static bool has_header(const struct curl_slist *list, const char *name)
{
    size_t n = strlen(name);
    for (; list != NULL; list = list->next) {
        if (strncasecmp(list->data, name, n) == 0 &&
            (list->data[n] == ':' || list->data[n] == ';')) {
            return true;
        }
    }
    return false;
}

/* The connector's own headers after the configured ones; a configured
 * Content-Type wins. "Expect:" turns off curl's 100-continue round trip. */
static int add_own_headers(tb_http_sink_client_t *client, const char *content_type)
{
    char line[128];
    snprintf(line, sizeof(line), "Content-Type: %s", content_type);
    if (!has_header(client->headers, "Content-Type") && append_line(client, line) != 0) {
        return -1;
    }
    return append_line(client, "Expect:");
}

/* ---- requests ---- */

/* Keeps the start of the response body. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    tb_http_sink_client_t *client = arg;
    size_t len = size * nmemb;
    if (client->response.len < RESPONSE_KEEP) {
        size_t room = RESPONSE_KEEP - client->response.len;
        tb_http_sink_buf_add(&client->response, data, len < room ? len : room);
    }
    return len;
}

/* Retry-After in seconds (an HTTP date is ignored: the backoff applies). */
static int64_t parse_retry_after(const char *text, size_t len)
{
    int64_t seconds = -1;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t')) {
        i++;
    }
    for (; i < len && isdigit((unsigned char)text[i]); i++) {
        seconds = (seconds < 0 ? 0 : seconds) * 10 + (text[i] - '0');
        if (seconds > 1000000000) {
            seconds = 1000000000; /* about 30 years: capped by the backoff anyway */
        }
    }
    while (i < len && isspace((unsigned char)text[i])) {
        i++;
    }
    return i == len && seconds >= 0 ? seconds * 1000 : -1;
}

static size_t on_header(char *data, size_t size, size_t nitems, void *arg)
{
    static const char name[] = "Retry-After:";
    tb_http_sink_client_t *client = arg;
    size_t len = size * nitems;
    size_t n = sizeof(name) - 1;

    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        client->retry_after_ms = -1; /* a new response begins */
    } else if (len > n && strncasecmp(data, name, n) == 0) {
        client->retry_after_ms = parse_retry_after(data + n, len - n);
    }
    return len;
}

/* Sets every option that stays the same for the task's life. Returns the
 * number of options curl refused. */
static int set_options(tb_http_sink_client_t *client,
                       const tb_http_sink_client_options_t *o)
{
    CURL *c = client->curl;
    int refused = 0;

    refused += curl_easy_setopt(c, CURLOPT_URL, o->url) != CURLE_OK;
    /* a POST is what curl sends a body with; PUT takes the method's name */
    refused +=
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST,
                         strcasecmp(o->method, "PUT") == 0 ? "PUT" : NULL) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_HTTPHEADER, client->headers) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_USERAGENT, "tributary-http-sink") != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms) != CURLE_OK;
    refused +=
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_ERRORBUFFER, client->error) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_WRITEDATA, client) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
    refused += curl_easy_setopt(c, CURLOPT_HEADERDATA, client) != CURLE_OK;
    refused +=
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, o->verify ? 1L : 0L) != CURLE_OK;
    refused +=
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, o->verify ? 2L : 0L) != CURLE_OK;
    if (o->ca_location != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_location) != CURLE_OK;
    }
    if (o->certificate_location != NULL) {
        refused +=
            curl_easy_setopt(c, CURLOPT_SSLCERT, o->certificate_location) != CURLE_OK;
    }
    if (o->key_location != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_SSLKEY, o->key_location) != CURLE_OK;
    }
    if (o->key_password != NULL) {
        refused += curl_easy_setopt(c, CURLOPT_KEYPASSWD, o->key_password) != CURLE_OK;
    }
    return refused;
}

/* http.auth.*: basic credentials for curl, or an Authorization: Bearer
 * header; both kept aside as secrets. Returns 0, or -1 on no memory. */
static int add_auth(tb_http_sink_client_t *client,
                    const tb_http_sink_client_options_t *options)
{
    if (options->auth_user != NULL) {
        const char *password = options->auth_password ? options->auth_password : "";
        bool ok = curl_easy_setopt(client->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC) ==
                      CURLE_OK &&
                  curl_easy_setopt(client->curl, CURLOPT_USERNAME, options->auth_user) ==
                      CURLE_OK &&
                  curl_easy_setopt(client->curl, CURLOPT_PASSWORD, password) == CURLE_OK;
        return ok && (password[0] == '\0' || keep_secret(client, password) == 0) ? 0 : -1;
    }
    if (options->auth_token == NULL) {
        return 0;
    }
    char *value = NULL;
    int rc = asprintf(&value, "Bearer %s", options->auth_token) < 0
                 ? -1
                 : add_header(client, "Authorization", value);
    rc = rc == 0 ? keep_secret(client, options->auth_token) : rc;
    tb_secret_free(value);
    return rc;
}

int tb_http_sink_client_init(tb_http_sink_client_t *client,
                             const tb_http_sink_client_options_t *options, char *errstr,
                             size_t errstr_size)
{
    char reason[256] = "";

    memset(client, 0, sizeof(*client));
    client->retry_after_ms = -1;
    client->shown_url = shown_url_of(options->url);
    client->curl = curl_easy_init();
    if (client->shown_url == NULL || client->curl == NULL) {
        snprintf(errstr, errstr_size, "cannot set up an HTTP client (no memory?)");
        return -1;
    }
    if (parse_headers(options->headers, add_header, client, reason, sizeof(reason)) !=
            0 ||
        add_auth(client, options) != 0 ||
        add_own_headers(client, options->content_type) != 0) {
        snprintf(errstr, errstr_size, "cannot set the headers of http.headers: %s",
                 reason[0] ? reason : "out of memory");
        return -1;
    }
    if (set_options(client, options) > 0) {
        snprintf(errstr, errstr_size,
                 "libcurl refused an option for %s (is it built with TLS?)",
                 client->shown_url);
        return -1;
    }
    return 0;
}

void tb_http_sink_client_clear(tb_http_sink_client_t *client)
{
    curl_easy_cleanup(client->curl);
    /* the headers hold resolved credentials */
    for (struct curl_slist *h = client->headers; h != NULL; h = h->next) {
        explicit_bzero(h->data, strlen(h->data));
    }
    curl_slist_free_all(client->headers);
    free(client->shown_url);
    for (size_t i = 0; i < client->secret_count; i++) {
        tb_secret_free(client->secrets[i]);
    }
    free(client->secrets);
    tb_http_sink_buf_clear(&client->response);
    memset(client, 0, sizeof(*client));
}

static bool listed_status(long status)
{
    for (size_t i = 0; i < sizeof(endpoint_statuses) / sizeof(endpoint_statuses[0]);
         i++) {
        if (endpoint_statuses[i] == status) {
            return true;
        }
    }
    return false;
}

static bool listed_code(CURLcode code)
{
    for (size_t i = 0; i < sizeof(setup_codes) / sizeof(setup_codes[0]); i++) {
        if (setup_codes[i] == code) {
            return true;
        }
    }
    return false;
}

static tb_http_sink_outcome_t outcome_of(CURLcode code, long status)
{
    if (code != CURLE_OK) {
        return listed_code(code) ? TB_HTTP_SINK_BROKEN : TB_HTTP_SINK_TRANSIENT;
    }
    if (status >= 200 && status < 300) {
        return TB_HTTP_SINK_SENT;
    }
    if (status == 408 || status == 429 || (status >= 500 && status < 600)) {
        return TB_HTTP_SINK_TRANSIENT;
    }
    if (status >= 400 && status < 500 && !listed_status(status)) {
        return TB_HTTP_SINK_REJECTED;
    }
    return TB_HTTP_SINK_BROKEN;
}

tb_http_sink_outcome_t tb_http_sink_client_send(tb_http_sink_client_t *client,
                                                const char *body, size_t len)
{
    client->response.len = 0;
    client->response.failed = false;
    tb_http_sink_buf_add(&client->response, "", 0); /* "" even when empty */
    client->status = 0;
    client->retry_after_ms = -1;
    client->error[0] = '\0';
    curl_easy_setopt(client->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(client->curl, CURLOPT_POSTFIELDS, body);
    client->code = curl_easy_perform(client->curl);
    if (client->code == CURLE_OK) {
        curl_easy_getinfo(client->curl, CURLINFO_RESPONSE_CODE, &client->status);
    }
    return outcome_of(client->code, client->status);
}

/* text with every secret replaced by [hidden]; NULL on no memory. */
static char *without_secrets(const tb_http_sink_client_t *client, const char *text)
{
    char *current = strdup(text != NULL ? text : "");
    for (size_t i = 0; current != NULL && i < client->secret_count; i++) {
        const char *secret = client->secrets[i];
        tb_http_sink_buf_t out = {0};
        const char *p = current;
        for (const char *hit; (hit = strstr(p, secret)) != NULL;
             p = hit + strlen(secret)) {
            tb_http_sink_buf_add(&out, p, (size_t)(hit - p));
            tb_http_sink_buf_str(&out, HIDDEN);
        }
        tb_http_sink_buf_str(&out, p);
        free(current);
        current = out.failed ? NULL : out.data;
        if (out.failed) {
            tb_http_sink_buf_clear(&out);
        }
    }
    return current;
}

/* The start of the last response body on one line of printable ASCII. */
static void excerpt_of(const tb_http_sink_client_t *client, char *out, size_t out_size)
{
    char *clean = without_secrets(client, client->response.data);
    size_t n = 0;

    for (const char *p = clean ? clean : "";
         *p != '\0' && n < EXCERPT_MAX && n + 1 < out_size; p++) {
        unsigned char c = (unsigned char)*p;
        out[n++] = c == '\n' || c == '\r' || c == '\t' ? ' ' : isprint(c) ? (char)c : '?';
    }
    while (n > 0 && out[n - 1] == ' ') {
        n--;
    }
    out[n] = '\0';
    free(clean);
}

void tb_http_sink_client_describe(const tb_http_sink_client_t *client, char *out,
                                  size_t out_size)
{
    char excerpt[EXCERPT_MAX + 1];

    if (client->code != CURLE_OK) {
        snprintf(out, out_size, "cannot send to %s: %s", client->shown_url,
                 client->error[0] ? client->error : curl_easy_strerror(client->code));
        return;
    }
    excerpt_of(client, excerpt, sizeof(excerpt));
    snprintf(out, out_size, "HTTP %ld from %s%s%s", client->status, client->shown_url,
             excerpt[0] ? ": " : "", excerpt);
}
