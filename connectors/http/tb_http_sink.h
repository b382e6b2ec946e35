/*
 * tb_http_sink.h - the parts of the HTTP sink plugin, shared by its files
 * only (the plugin itself is tb_http_sink_plugin, listed in plugins.c).
 *
 *   http_sink.c    config table, task lifecycle, batching, retries, bisection
 *   http_body.c    record copies and the JSON or NDJSON request bodies
 *   http_client.c  one reused curl handle: headers, TLS, one request at a time
 */
#ifndef TB_HTTP_SINK_H
#define TB_HTTP_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "connectors/tb_plugin.h"

/* A growing byte buffer, always NUL-terminated once something was added.
 * After a failed allocation it stays failed and ignores further appends,
 * so a writer checks failed once at the end. Zero-initialise to start. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} tb_http_sink_buf_t;

void tb_http_sink_buf_add(tb_http_sink_buf_t *buf, const void *data, size_t len);
void tb_http_sink_buf_str(tb_http_sink_buf_t *buf, const char *text);
/* Frees the data and zeroes buf. */
void tb_http_sink_buf_clear(tb_http_sink_buf_t *buf);

/* ---- bodies (http_body.c) ---- */

typedef enum {
    TB_HTTP_SINK_JSON_ARRAY = 0, /* [e1,e2,...] */
    TB_HTTP_SINK_NDJSON,         /* e1\ne2\n... */
} tb_http_sink_format_t;

/* One pending record: the plugin's own copy of what put() lent it (every
 * pointer owned by the item) and the JSON text it contributes to a body. */
typedef struct {
    tb_sink_record_t record;
    char *element;
    size_t element_len;
    int64_t arrived_ms; /* set by the sink, for batch.linger.ms */
} tb_http_sink_item_t;

/* Copies record into item and encodes its element: the value alone, or the
 * whole record as {"topic","partition","offset","timestamp","key","value",
 * "headers"} when full_record. Returns 0, or -1 on no memory (item is then
 * empty). */
int tb_http_sink_item_init(tb_http_sink_item_t *item, const tb_sink_record_t *record,
                           bool full_record);

/* Frees what item owns. An empty (zeroed) item is a no-op. */
void tb_http_sink_item_clear(tb_http_sink_item_t *item);

/* How many of the first n items (n >= 1) make the next request: at least
 * one, at most max_records, and no more than max_bytes of body unless a
 * single item is larger. *full says that the batch cannot grow any more. */
size_t tb_http_sink_batch_take(tb_http_sink_format_t format,
                               const tb_http_sink_item_t *items, size_t n,
                               size_t max_records, size_t max_bytes, bool *full);

/* Writes the body of the first n items into body (reset first). Returns 0,
 * or -1 on no memory. */
int tb_http_sink_body_build(tb_http_sink_format_t format,
                            const tb_http_sink_item_t *items, size_t n,
                            tb_http_sink_buf_t *body);

/* ---- the client (http_client.c) ---- */

/* What one request came to. */
typedef enum {
    TB_HTTP_SINK_SENT = 0,  /* 2xx: the records are written */
    TB_HTTP_SINK_TRANSIENT, /* network error, timeout, 408, 429, 5xx: try again */
    TB_HTTP_SINK_REJECTED,  /* another 4xx: something in the records is refused */
    TB_HTTP_SINK_BROKEN,    /* the endpoint refuses every request (3xx, 401,
                             * 403, 404, ...) or the local setup is unusable */
} tb_http_sink_outcome_t;

typedef struct {
    const char *url;
    const char *method;  /* "POST" or "PUT" */
    const char *headers; /* "Name: value|Name: value" */
    const char *content_type;
    long timeout_ms;
    long connect_timeout_ms;
    const char *ca_location; /* NULL: the system's CAs */
    const char *certificate_location;
    const char *key_location;
    const char *key_password;
    bool verify;
    /* http.auth.*, resolved: basic auth when user is set, else a bearer
     * token when token is set (NULL: none) */
    const char *auth_user;
    const char *auth_password;
    const char *auth_token;
} tb_http_sink_client_options_t;

typedef struct {
    CURL *curl; /* one handle for the task's life: its connection is kept alive */
    struct curl_slist *headers;
    char *shown_url; /* the URL with credentials hidden, for messages */
    char **secrets;  /* values of secret headers, never shown */
    size_t secret_count;
    tb_http_sink_buf_t response; /* the start of the last response body */
    CURLcode code;
    long status;
    int64_t retry_after_ms; /* the last Retry-After, -1 when none */
    char error[CURL_ERROR_SIZE];
} tb_http_sink_client_t;

/* Sets up client. Needs curl_global_init() done once by the process (the
 * server's main does it; this plugin never calls it, as it is not thread
 * safe). Returns 0, or -1 with errstr. client must be cleared either way. */
int tb_http_sink_client_init(tb_http_sink_client_t *client,
                             const tb_http_sink_client_options_t *options, char *errstr,
                             size_t errstr_size);

/* Releases what client holds (curl_easy_cleanup). A zeroed client is a no-op. */
void tb_http_sink_client_clear(tb_http_sink_client_t *client);

/* Sends body (borrowed for the call) once and says how it went. */
tb_http_sink_outcome_t tb_http_sink_client_send(tb_http_sink_client_t *client,
                                                const char *body, size_t len);

/* Describes the last request's result: "HTTP 400 from <url>: <first 200
 * bytes of the body>" or "cannot send to <url>: <curl's error>". Secret
 * header values and URL credentials never appear in it. */
void tb_http_sink_client_describe(const tb_http_sink_client_t *client, char *out,
                                  size_t out_size);

/* Config checks (tb_config_check_fn) of http.url and http.headers; their
 * reasons never quote the value. */
int tb_http_sink_url_check(const json_t *value, char *reason, size_t reason_size);
int tb_http_sink_headers_check(const json_t *value, char *reason, size_t reason_size);

#endif
