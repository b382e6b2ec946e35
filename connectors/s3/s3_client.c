/*
 * s3_client.c - S3's REST API over one libcurl handle, signed by libcurl's
 * AWS Signature Version 4 (tb_s3_client.h). No AWS SDK: Debian has none,
 * and the sink needs eight requests.
 *
 * Signing: CURLOPT_AWS_SIGV4 signs the method, path, query and headers;
 * the payload's SHA-256 travels in x-amz-content-sha256, as S3 requires,
 * and is signed with the rest. Query strings are written already in the
 * canonical form (names sorted, values encoded, "uploads=") so that the
 * request sent is the one signed.
 */
#include <ctype.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "connectors/s3/tb_s3_client.h"
#include "connectors/s3/tb_s3_text.h"
#include "core/tb_buf.h"
#include "core/tb_time.h"

#define RESPONSE_KEEP (1024 * 1024) /* a list page is far below it */
#define HEADERS_KEEP 16384
#define RENEW_BEFORE_MS (5 * 60 * 1000) /* a web identity's key pair */

struct tb_s3_client {
    CURL *curl;
    char *base;   /* scheme://host[:port] of the bucket's requests */
    char *prefix; /* "/bucket" with path-style access, else "" */
    char *bucket;
    char *sigv4; /* "aws:amz:<region>:s3" */
    char *access_key;
    char *secret_key;
    char *session_token;
    bool has_web_identity;
    tb_s3_web_identity_t web_identity;
    int64_t expires_ms; /* of the web identity's key pair; 0: none yet */
    long timeout_ms;
    char *sse_algorithm;
    char *sse_kms_key_id;
    char *acl_canned;
    int retries;
    int64_t backoff_ms;
    uint64_t requests;
    tb_buf_t response;
    tb_buf_t headers;
    long status;
    CURLcode code;
    char error[CURL_ERROR_SIZE];
};

/* ---- the client ---- */

static size_t on_body(char *data, size_t size, size_t nitems, void *arg)
{
    tb_s3_client_t *client = arg;
    size_t len = size * nitems;
    if (client->response.len + len <= RESPONSE_KEEP) {
        tb_buf_append(&client->response, data, len);
    }
    return len;
}

static size_t on_header(char *data, size_t size, size_t nitems, void *arg)
{
    tb_s3_client_t *client = arg;
    size_t len = size * nitems;
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        client->headers.len = 0; /* a new response begins */
    }
    if (client->headers.len + len <= HEADERS_KEEP) {
        tb_buf_append(&client->headers, data, len);
    }
    return len;
}

static char *dup_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? strdup(s) : NULL;
}

/* scheme://host[:port] and the path prefix of the bucket's requests. */
static int endpoint_of(tb_s3_client_t *client, const tb_s3_client_options_t *o)
{
    char *aws = NULL;
    const char *endpoint = o->endpoint;
    if (endpoint == NULL || endpoint[0] == '\0') {
        if (asprintf(&aws, "https://s3.%s.amazonaws.com", o->region) < 0) {
            return -1;
        }
        endpoint = aws;
    }
    size_t n = strlen(endpoint);
    while (n > 0 && endpoint[n - 1] == '/') {
        n--;
    }
    const char *host = strstr(endpoint, "://");
    int rc = 0;
    if (o->path_style || host == NULL) {
        rc = asprintf(&client->base, "%.*s", (int)n, endpoint) < 0 ||
                     asprintf(&client->prefix, "/%s", o->bucket) < 0
                 ? -1
                 : 0;
    } else {
        host += 3;
        rc = asprintf(&client->base, "%.*s%s.%.*s", (int)(host - endpoint), endpoint,
                      o->bucket, (int)(n - (size_t)(host - endpoint)), host) < 0 ||
                     (client->prefix = strdup("")) == NULL
                 ? -1
                 : 0;
    }
    free(aws);
    return rc;
}

tb_s3_client_t *tb_s3_client_new(const tb_s3_client_options_t *o, char *errstr,
                                 size_t errstr_size)
{
    tb_s3_client_t *client = calloc(1, sizeof(*client));
    if (client == NULL || endpoint_of(client, o) != 0 ||
        (client->bucket = strdup(o->bucket)) == NULL ||
        asprintf(&client->sigv4, "aws:amz:%s:s3", o->region) < 0) {
        snprintf(errstr, errstr_size, "out of memory setting up the S3 client");
        goto fail;
    }
    client->access_key = dup_or_null(o->access_key);
    client->secret_key = dup_or_null(o->secret_key);
    client->session_token = dup_or_null(o->session_token);
    client->has_web_identity = client->access_key == NULL && o->web_identity != NULL;
    if (client->has_web_identity) {
        client->web_identity = *o->web_identity;
    }
    client->timeout_ms = o->timeout_ms;
    client->sse_algorithm = dup_or_null(o->sse_algorithm);
    client->sse_kms_key_id = dup_or_null(o->sse_kms_key_id);
    client->acl_canned = dup_or_null(o->acl_canned);
    client->retries = o->retries;
    client->backoff_ms = o->backoff_ms;
    client->curl = curl_easy_init();
    CURL *c = client->curl;
    int refused = c == NULL;
    if (c != NULL) {
        refused +=
            curl_easy_setopt(c, CURLOPT_USERAGENT, "tributary-s3-sink") != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                                    o->connect_timeout_ms) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_ERRORBUFFER, client->error) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_WRITEDATA, client) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
        refused += curl_easy_setopt(c, CURLOPT_HEADERDATA, client) != CURLE_OK;
        if (client->access_key != NULL || client->has_web_identity) {
            refused += curl_easy_setopt(c, CURLOPT_AWS_SIGV4, client->sigv4) != CURLE_OK;
        }
        if (client->access_key != NULL) {
            refused +=
                curl_easy_setopt(c, CURLOPT_USERNAME, client->access_key) != CURLE_OK;
            refused += curl_easy_setopt(c, CURLOPT_PASSWORD,
                                        client->secret_key ? client->secret_key : "") !=
                       CURLE_OK;
        }
    }
    if (refused > 0) {
        snprintf(errstr, errstr_size,
                 "libcurl refused an option of the S3 client (AWS signing needs "
                 "libcurl 7.75 or later)");
        goto fail;
    }
    return client;

fail:
    tb_s3_client_free(client);
    return NULL;
}

static void wipe_free(char *secret)
{
    if (secret != NULL) {
        explicit_bzero(secret, strlen(secret));
        free(secret);
    }
}

void tb_s3_client_free(tb_s3_client_t *client)
{
    if (client == NULL) {
        return;
    }
    curl_easy_cleanup(client->curl);
    free(client->base);
    free(client->prefix);
    free(client->bucket);
    free(client->sigv4);
    wipe_free(client->access_key);
    wipe_free(client->secret_key);
    wipe_free(client->session_token);
    free(client->sse_algorithm);
    free(client->sse_kms_key_id);
    free(client->acl_canned);
    free(client->response.data);
    free(client->headers.data);
    free(client);
}

uint64_t tb_s3_client_requests(const tb_s3_client_t *client)
{
    return client->requests;
}

/* ---- one request ---- */

typedef struct {
    const char *method; /* GET, PUT, POST, HEAD, DELETE */
    const char *key;    /* NULL: the bucket itself */
    const char *query;  /* canonical, NULL: none */
    const void *body;
    size_t len;
    bool object_headers; /* SSE and ACL headers (PutObject, CreateMultipartUpload) */
    const tb_s3_meta_t *meta;
    size_t meta_count;
    const char *what; /* the operation's name, for messages */
} request_t;

static struct curl_slist *add_header(struct curl_slist *list, bool *failed,
                                     const char *name, const char *value)
{
    char line[512];
    snprintf(line, sizeof(line), "%s: %s", name, value);
    struct curl_slist *grown = curl_slist_append(list, line);
    *failed = *failed || grown == NULL;
    return grown != NULL ? grown : list;
}

static struct curl_slist *headers_of(const tb_s3_client_t *client, const request_t *r,
                                     bool *failed)
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    char hex[2 * SHA256_DIGEST_LENGTH + 1];
    SHA256(r->body != NULL ? r->body : (const void *)"", r->len, digest);
    for (size_t i = 0; i < sizeof(digest); i++) {
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    }
    struct curl_slist *list = NULL;
    list = add_header(list, failed, "x-amz-content-sha256", hex);
    /* curl would give a body a form's Content-Type; every header listed is
     * signed, so none may be one that curl only removes ("Expect:") */
    list = add_header(list, failed, "Content-Type", "application/octet-stream");
    if (client->session_token != NULL) {
        list = add_header(list, failed, "x-amz-security-token", client->session_token);
    }
    if (r->object_headers && client->sse_algorithm != NULL) {
        list = add_header(list, failed, "x-amz-server-side-encryption",
                          client->sse_algorithm);
    }
    if (r->object_headers && client->sse_kms_key_id != NULL) {
        list = add_header(list, failed, "x-amz-server-side-encryption-aws-kms-key-id",
                          client->sse_kms_key_id);
    }
    if (r->object_headers && client->acl_canned != NULL) {
        list = add_header(list, failed, "x-amz-acl", client->acl_canned);
    }
    for (size_t i = 0; i < r->meta_count; i++) {
        char name[128];
        snprintf(name, sizeof(name), "x-amz-meta-%s", r->meta[i].name);
        list = add_header(list, failed, name, r->meta[i].value);
    }
    return list;
}

static char *url_of(const tb_s3_client_t *client, const request_t *r)
{
    tb_buf_t url = {0};
    tb_buf_puts(&url, client->base);
    tb_buf_puts(&url, client->prefix);
    /* the bucket itself is /<bucket> path-style, / in its own host name */
    if (r->key != NULL || client->prefix[0] == '\0') {
        tb_buf_putc(&url, '/');
    }
    if (r->key != NULL) {
        tb_s3_uri_encode(&url, r->key, true);
    }
    if (r->query != NULL) {
        tb_buf_putc(&url, '?');
        tb_buf_puts(&url, r->query);
    }
    return tb_buf_take(&url, NULL);
}

static void set_method(CURL *c, const request_t *r)
{
    curl_easy_setopt(c, CURLOPT_NOBODY, strcmp(r->method, "HEAD") == 0 ? 1L : 0L);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    if (strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body != NULL ? r->body : "");
    }
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST,
                     strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0 ||
                             strcmp(r->method, "POST") == 0
                         ? NULL
                         : r->method);
}

/* Whether the answer may change by trying again. */
static bool transient(const tb_s3_client_t *client)
{
    if (client->code != CURLE_OK) {
        return client->code != CURLE_UNSUPPORTED_PROTOCOL &&
               client->code != CURLE_URL_MALFORMAT && client->code != CURLE_NOT_BUILT_IN;
    }
    return client->status == 408 || client->status == 429 || client->status >= 500;
}

static void describe(const tb_s3_client_t *client, const request_t *r, char *errstr,
                     size_t errstr_size)
{
    char code[64], message[200];
    const char *object = r->key != NULL ? r->key : "";
    if (client->code != CURLE_OK) {
        snprintf(errstr, errstr_size, "S3 %s of s3://%s/%s failed: cannot reach %s: %s",
                 r->what, client->bucket, object, client->base,
                 client->error[0] ? client->error : curl_easy_strerror(client->code));
        return;
    }
    tb_s3_xml_text(client->response.data, client->response.len, "Code", code,
                   sizeof(code));
    tb_s3_xml_text(client->response.data, client->response.len, "Message", message,
                   sizeof(message));
    for (char *p = message; *p != '\0'; p++) {
        *p = isprint((unsigned char)*p) ? *p : ' ';
    }
    snprintf(errstr, errstr_size, "S3 %s of s3://%s/%s failed: HTTP %ld%s%s%s%s", r->what,
             client->bucket, object, client->status, code[0] ? " " : "", code,
             message[0] ? ": " : "", message);
}

/* A web identity's key pair, exchanged anew when it is missing or expires
 * within RENEW_BEFORE_MS. */
static tb_s3_outcome_t credentials_renew(tb_s3_client_t *client, char *errstr,
                                         size_t errstr_size)
{
    if (!client->has_web_identity ||
        (client->expires_ms > 0 && tb_wall_ms() < client->expires_ms - RENEW_BEFORE_MS)) {
        return TB_S3_OK;
    }
    tb_s3_credentials_t fresh;
    bool transient = false;
    if (tb_s3_web_identity_assume(&client->web_identity, client->timeout_ms, &fresh,
                                  &transient, errstr, errstr_size) != 0) {
        return transient ? TB_S3_TRANSIENT : TB_S3_REFUSED;
    }
    wipe_free(client->access_key);
    wipe_free(client->secret_key);
    wipe_free(client->session_token);
    client->access_key = fresh.access_key;
    client->secret_key = fresh.secret_key;
    client->session_token = fresh.session_token;
    client->expires_ms = fresh.expires_ms;
    curl_easy_setopt(client->curl, CURLOPT_USERNAME, client->access_key);
    curl_easy_setopt(client->curl, CURLOPT_PASSWORD, client->secret_key);
    return TB_S3_OK;
}

static tb_s3_outcome_t perform(tb_s3_client_t *client, const request_t *r, char *errstr,
                               size_t errstr_size)
{
    tb_s3_outcome_t renewed = credentials_renew(client, errstr, errstr_size);
    if (renewed != TB_S3_OK) {
        return renewed;
    }
    bool failed = false;
    struct curl_slist *headers = headers_of(client, r, &failed);
    char *url = url_of(client, r);
    tb_s3_outcome_t outcome = TB_S3_TRANSIENT;
    if (failed || url == NULL) {
        snprintf(errstr, errstr_size, "out of memory building S3 %s of s3://%s/%s",
                 r->what, client->bucket, r->key ? r->key : "");
        goto done;
    }
    CURL *c = client->curl;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    int64_t backoff = client->backoff_ms;
    for (int attempt = 0;; attempt++) {
        set_method(c, r);
        client->response.len = 0;
        client->headers.len = 0;
        client->status = 0;
        client->error[0] = '\0';
        client->requests++;
        client->code = curl_easy_perform(c);
        if (client->code == CURLE_OK) {
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &client->status);
        }
        if (client->code == CURLE_OK && client->status >= 200 && client->status < 300) {
            outcome = TB_S3_OK;
            break;
        }
        if (!transient(client) || attempt >= client->retries) {
            describe(client, r, errstr, errstr_size);
            outcome = transient(client) ? TB_S3_TRANSIENT : TB_S3_REFUSED;
            break;
        }
        struct timespec wait = {.tv_sec = backoff / 1000,
                                .tv_nsec = (long)(backoff % 1000) * 1000000L};
        nanosleep(&wait, NULL);
        backoff *= 2;
    }

done:
    curl_easy_setopt(client->curl, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    free(url);
    return outcome;
}

/* The value of response header name (case-insensitive), quotes kept, into
 * out; "" when absent. */
static void header_value(const tb_s3_client_t *client, const char *name, char *out,
                         size_t size)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (const char *line = client->headers.data; line != NULL && *line != '\0';) {
        const char *end = strstr(line, "\r\n");
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        if (len > n && strncasecmp(line, name, n) == 0 && line[n] == ':') {
            const char *v = line + n + 1;
            while (*v == ' ') {
                v++;
            }
            snprintf(out, size, "%.*s", (int)(len - (size_t)(v - line)), v);
            return;
        }
        line = end != NULL ? end + 2 : NULL;
    }
}

/* ---- the operations ---- */

tb_s3_outcome_t tb_s3_put_object(tb_s3_client_t *client, const char *key,
                                 const void *body, size_t len, const tb_s3_meta_t *meta,
                                 size_t meta_count, char *errstr, size_t errstr_size)
{
    request_t r = {.method = "PUT",
                   .key = key,
                   .body = body,
                   .len = len,
                   .object_headers = true,
                   .meta = meta,
                   .meta_count = meta_count,
                   .what = "PutObject"};
    return perform(client, &r, errstr, errstr_size);
}

tb_s3_outcome_t tb_s3_multipart_start(tb_s3_client_t *client, const char *key,
                                      const tb_s3_meta_t *meta, size_t meta_count,
                                      char **upload_id, char *errstr, size_t errstr_size)
{
    request_t r = {.method = "POST",
                   .key = key,
                   .query = "uploads=",
                   .object_headers = true,
                   .meta = meta,
                   .meta_count = meta_count,
                   .what = "CreateMultipartUpload"};
    char id[1024];
    tb_s3_outcome_t outcome = perform(client, &r, errstr, errstr_size);
    if (outcome == TB_S3_OK &&
        (tb_s3_xml_text(client->response.data, client->response.len, "UploadId", id,
                        sizeof(id)) == NULL ||
         id[0] == '\0')) {
        snprintf(errstr, errstr_size,
                 "S3 CreateMultipartUpload of s3://%s/%s answered no UploadId",
                 client->bucket, key);
        return TB_S3_TRANSIENT;
    }
    if (outcome == TB_S3_OK && (*upload_id = strdup(id)) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return TB_S3_TRANSIENT;
    }
    return outcome;
}

static char *upload_query(const char *upload_id, int part)
{
    tb_buf_t q = {0};
    if (part > 0) {
        tb_buf_printf(&q, "partNumber=%d&", part);
    }
    tb_buf_puts(&q, "uploadId=");
    tb_s3_uri_encode(&q, upload_id, false);
    return tb_buf_take(&q, NULL);
}

tb_s3_outcome_t tb_s3_multipart_part(tb_s3_client_t *client, const char *key,
                                     const char *upload_id, int part, const void *body,
                                     size_t len, char **etag, char *errstr,
                                     size_t errstr_size)
{
    char *query = upload_query(upload_id, part);
    request_t r = {.method = "PUT",
                   .key = key,
                   .query = query,
                   .body = body,
                   .len = len,
                   .what = "UploadPart"};
    char tag[256];
    tb_s3_outcome_t outcome =
        query != NULL ? perform(client, &r, errstr, errstr_size) : TB_S3_TRANSIENT;
    free(query);
    if (query == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return outcome;
    }
    header_value(client, "ETag", tag, sizeof(tag));
    if (outcome == TB_S3_OK && (tag[0] == '\0' || (*etag = strdup(tag)) == NULL)) {
        snprintf(errstr, errstr_size, "S3 UploadPart %d of s3://%s/%s answered no ETag",
                 part, client->bucket, key);
        return TB_S3_TRANSIENT;
    }
    return outcome;
}

tb_s3_outcome_t tb_s3_multipart_complete(tb_s3_client_t *client, const char *key,
                                         const char *upload_id, char *const *etags,
                                         int count, char *errstr, size_t errstr_size)
{
    tb_buf_t body = {0};
    tb_buf_puts(&body, "<CompleteMultipartUpload>");
    for (int i = 0; i < count; i++) {
        tb_buf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>", i + 1);
        for (const char *p = etags[i]; *p != '\0'; p++) {
            tb_buf_puts(&body, *p == '"' ? "&quot;" : (char[]){*p, '\0'});
        }
        tb_buf_puts(&body, "</ETag></Part>");
    }
    tb_buf_puts(&body, "</CompleteMultipartUpload>");
    char *query = upload_query(upload_id, 0);
    if (body.failed || query == NULL) {
        free(body.data);
        free(query);
        snprintf(errstr, errstr_size, "out of memory");
        return TB_S3_TRANSIENT;
    }
    request_t r = {.method = "POST",
                   .key = key,
                   .query = query,
                   .body = body.data,
                   .len = body.len,
                   .what = "CompleteMultipartUpload"};
    tb_s3_outcome_t outcome = perform(client, &r, errstr, errstr_size);
    /* a completion can fail after its 200 OK: the error is in the body */
    char code[64];
    if (outcome == TB_S3_OK && tb_s3_xml_text(client->response.data, client->response.len,
                                              "Code", code, sizeof(code)) != NULL) {
        describe(client, &r, errstr, errstr_size);
        outcome = TB_S3_TRANSIENT;
    }
    free(body.data);
    free(query);
    return outcome;
}

void tb_s3_multipart_abort(tb_s3_client_t *client, const char *key, const char *upload_id)
{
    char errstr[256];
    char *query = upload_query(upload_id, 0);
    request_t r = {
        .method = "DELETE", .key = key, .query = query, .what = "AbortMultipartUpload"};
    if (query != NULL) {
        int retries = client->retries;
        client->retries = 0;
        perform(client, &r, errstr, sizeof(errstr));
        client->retries = retries;
    }
    free(query);
}

tb_s3_outcome_t tb_s3_list(tb_s3_client_t *client, const char *prefix,
                           void (*fn)(void *arg, const char *key), void *arg,
                           char *errstr, size_t errstr_size)
{
    char token[1024] = "";
    char truncated[16];
    char key[1024];
    tb_s3_outcome_t outcome = TB_S3_OK;
    do {
        tb_buf_t query = {0};
        if (token[0] != '\0') {
            tb_buf_puts(&query, "continuation-token=");
            tb_s3_uri_encode(&query, token, false);
            tb_buf_putc(&query, '&');
        }
        tb_buf_puts(&query, "list-type=2&prefix=");
        tb_s3_uri_encode(&query, prefix, false);
        char *q = tb_buf_take(&query, NULL);
        request_t r = {.method = "GET", .query = q, .what = "ListObjectsV2"};
        if (q == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            return TB_S3_TRANSIENT;
        }
        outcome = perform(client, &r, errstr, errstr_size);
        free(q);
        if (outcome != TB_S3_OK) {
            break;
        }
        const char *xml = client->response.data;
        size_t len = client->response.len;
        for (const char *at = xml; at != NULL;) {
            at = tb_s3_xml_text(at, len - (size_t)(at - xml), "Key", key, sizeof(key));
            if (at != NULL) {
                fn(arg, key);
            }
        }
        tb_s3_xml_text(xml, len, "IsTruncated", truncated, sizeof(truncated));
        tb_s3_xml_text(xml, len, "NextContinuationToken", token, sizeof(token));
    } while (strcmp(truncated, "true") == 0 && token[0] != '\0');
    return outcome;
}

tb_s3_outcome_t tb_s3_head_meta(tb_s3_client_t *client, const char *key, const char *name,
                                char *value, size_t size, char *errstr,
                                size_t errstr_size)
{
    request_t r = {.method = "HEAD", .key = key, .what = "HeadObject"};
    char header[128];
    value[0] = '\0';
    tb_s3_outcome_t outcome = perform(client, &r, errstr, errstr_size);
    if (outcome == TB_S3_OK) {
        snprintf(header, sizeof(header), "x-amz-meta-%s", name);
        header_value(client, header, value, size);
    }
    return outcome;
}
