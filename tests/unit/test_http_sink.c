/*
 * The HTTP sink against a real HTTP receiver in this process: a
 * libmicrohttpd daemon on 127.0.0.1 that records every request and answers
 * from a script. The plugin is driven through its callbacks with a fake
 * task context whose record_failed records what it is given.
 */
#include "tb_port_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "connectors/tb_plugin.h"
#include "core/tb_time.h"

extern const tb_plugin_t tb_http_sink_plugin;

#define SCRIPT_MAX 16

/* ---- the receiver ---- */

typedef struct {
    unsigned status;
    const char *retry_after; /* NULL: no Retry-After header */
} reply_t;

typedef struct {
    struct MHD_Daemon *daemon;
    unsigned port;
    pthread_mutex_t lock;
    reply_t script[SCRIPT_MAX]; /* answers in order, then 200 */
    size_t script_len;
    size_t script_next;
    const char *reject_marker; /* a body holding it gets 400 */
    bool echo_headers;         /* error bodies repeat the request's headers */
    json_t *requests;          /* [{"method","path","headers":{lower-case name: value},
                                *   "body","status"}] */
} receiver_t;

typedef struct {
    char *data;
    size_t len;
} upload_t;

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    char name[128];
    size_t i = 0;
    (void)kind;
    for (; key[i] != '\0' && i + 1 < sizeof(name); i++) {
        name[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
    }
    name[i] = '\0';
    json_object_set_new(cls, name, json_string(value ? value : ""));
    return MHD_YES;
}

static reply_t next_reply(receiver_t *rx, const char *body)
{
    reply_t reply = {.status = 200};
    if (rx->reject_marker != NULL && strstr(body, rx->reject_marker) != NULL) {
        reply.status = 400;
    } else if (rx->script_next < rx->script_len) {
        reply = rx->script[rx->script_next++];
    }
    return reply;
}

/* The text a reply carries: "ok", or why, and the request's headers. */
static char *reply_text(const receiver_t *rx, unsigned status, json_t *headers)
{
    char *headers_text = rx->echo_headers ? json_dumps(headers, JSON_COMPACT) : NULL;
    char *text = NULL;
    if (status < 300) {
        text = strdup("ok");
    } else if (asprintf(&text, "bad record: rejected by the test receiver%s%s",
                        headers_text ? " " : "", headers_text ? headers_text : "") < 0) {
        text = NULL;
    }
    free(headers_text);
    return text;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection,
                                  const char *url, const char *method,
                                  const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    receiver_t *rx = cls;
    upload_t *up = *con_cls;
    (void)version;

    if (up == NULL) {
        *con_cls = calloc(1, sizeof(upload_t));
        return *con_cls != NULL ? MHD_YES : MHD_NO;
    }
    if (*upload_size > 0) {
        char *grown = realloc(up->data, up->len + *upload_size + 1);
        if (grown == NULL) {
            return MHD_NO;
        }
        memcpy(grown + up->len, upload_data, *upload_size);
        up->data = grown;
        up->len += *upload_size;
        up->data[up->len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }

    json_t *headers = json_object();
    MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_header, headers);
    pthread_mutex_lock(&rx->lock);
    reply_t reply = next_reply(rx, up->data ? up->data : "");
    char *text = reply_text(rx, reply.status, headers);
    json_array_append_new(rx->requests, json_pack("{s:s, s:s, s:O, s:s%, s:i}", "method",
                                                  method, "path", url, "headers", headers,
                                                  "body", up->data ? up->data : "",
                                                  up->len, "status", (int)reply.status));
    pthread_mutex_unlock(&rx->lock);
    json_decref(headers);

    struct MHD_Response *response =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (reply.retry_after != NULL) {
        MHD_add_response_header(response, "Retry-After", reply.retry_after);
    }
    enum MHD_Result result = MHD_queue_response(connection, reply.status, response);
    MHD_destroy_response(response);
    return result;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    upload_t *up = *con_cls;
    (void)cls;
    (void)connection;
    (void)code;
    if (up != NULL) {
        free(up->data);
        free(up);
    }
    *con_cls = NULL;
}

static void receiver_start(receiver_t *rx)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    pthread_mutex_init(&rx->lock, NULL);
    rx->requests = json_array();
    rx->daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, rx,
                         MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_NOTIFY_COMPLETED,
                         on_completed, rx, MHD_OPTION_END);
    assert_non_null(rx->daemon);
    rx->port = MHD_get_daemon_info(rx->daemon, MHD_DAEMON_INFO_BIND_PORT)->port;
    assert_true(rx->port > 0);
}

static void receiver_stop(receiver_t *rx)
{
    MHD_stop_daemon(rx->daemon);
    json_decref(rx->requests);
    pthread_mutex_destroy(&rx->lock);
}

static void script(receiver_t *rx, const reply_t *replies, size_t n)
{
    pthread_mutex_lock(&rx->lock);
    memcpy(rx->script, replies, n * sizeof(*replies));
    rx->script_len = n;
    rx->script_next = 0;
    pthread_mutex_unlock(&rx->lock);
}

/* ---- the fixture: a receiver, a fake runtime, one task ---- */

typedef struct {
    receiver_t rx;
    tb_task_context_t ctx;
    json_t *failed; /* [{"offset","value","reason"}] from record_failed */
    void *task;
    char url[128];
    char errstr[1024];
} fixture_t;

static void record_failed(void *runtime, const tb_sink_record_t *record,
                          const char *reason)
{
    fixture_t *f = runtime;
    json_array_append_new(f->failed,
                          json_pack("{s:I, s:s%, s:s}", "offset",
                                    (json_int_t)record->offset, "value", record->value,
                                    record->value_len, "reason", reason));
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    receiver_start(&f->rx);
    f->failed = json_array();
    f->ctx = (tb_task_context_t){.connector = "http-test",
                                 .task = 0,
                                 .record_failed = record_failed,
                                 .runtime = f};
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u/ingest", f->rx.port);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    tb_http_sink_plugin.task_stop(f->task);
    receiver_stop(&f->rx);
    json_decref(f->failed);
    free(f);
    return 0;
}

/* A config for the fixture's URL with tiny backoffs, plus key/value
 * pairs (NULL-terminated) that may replace any of it. */
static json_t *config_v(const fixture_t *f, va_list pairs)
{
    json_t *config = json_pack("{s:s, s:s, s:s}", "http.url", f->url, "retry.backoff.ms",
                               "1", "retry.backoff.max.ms", "2");
    for (const char *key = va_arg(pairs, const char *); key != NULL;
         key = va_arg(pairs, const char *)) {
        json_object_set_new(config, key, json_string(va_arg(pairs, const char *)));
    }
    return config;
}

static int try_start(fixture_t *f, ...)
{
    va_list pairs;
    va_start(pairs, f);
    json_t *config = config_v(f, pairs);
    va_end(pairs);
    f->errstr[0] = '\0';
    int rc = tb_http_sink_plugin.task_start(&f->ctx, config, &f->task, f->errstr,
                                            sizeof(f->errstr));
    json_decref(config);
    return rc;
}

#define START(f, ...) assert_int_equal(try_start((f), __VA_ARGS__), 0)

static void stop(fixture_t *f)
{
    tb_http_sink_plugin.task_stop(f->task);
    f->task = NULL;
}

/* Puts records numbered from..to-1: value {"n":i} (or what value_of gives),
 * key "k<i>", offset i. The buffers are freed when put() returns, so the
 * plugin must have copied what it keeps (ASan checks). */
static int put_numbered(fixture_t *f, int from, int to, const char *(*value_of)(int))
{
    size_t n = (size_t)(to - from);
    tb_sink_record_t *records = calloc(n, sizeof(*records));
    for (size_t i = 0; i < n; i++) {
        int number = from + (int)i;
        char *key = NULL;
        char *value = NULL;
        assert_true(asprintf(&key, "k%d", number) > 0);
        if (value_of != NULL && value_of(number) != NULL) {
            value = strdup(value_of(number));
        } else {
            assert_true(asprintf(&value, "{\"n\":%d}", number) > 0);
        }
        records[i] = (tb_sink_record_t){.topic = "orders",
                                        .partition = 0,
                                        .offset = number,
                                        .timestamp = 1700000000000 + number,
                                        .key = key,
                                        .key_len = strlen(key),
                                        .value = value,
                                        .value_len = strlen(value)};
    }
    f->errstr[0] = '\0';
    int rc = tb_http_sink_plugin.put(f->task, records, n, f->errstr, sizeof(f->errstr));
    for (size_t i = 0; i < n; i++) {
        memset((void *)records[i].value, 'x', records[i].value_len);
        free((void *)records[i].key);
        free((void *)records[i].value);
    }
    free(records);
    return rc;
}

static int flush(fixture_t *f)
{
    f->errstr[0] = '\0';
    return tb_http_sink_plugin.flush(f->task, f->errstr, sizeof(f->errstr));
}

static size_t request_count(fixture_t *f)
{
    pthread_mutex_lock(&f->rx.lock);
    size_t n = json_array_size(f->rx.requests);
    pthread_mutex_unlock(&f->rx.lock);
    return n;
}

/* Request i (borrowed; requests are only added, never removed). */
static json_t *request(fixture_t *f, size_t i)
{
    pthread_mutex_lock(&f->rx.lock);
    json_t *r = json_array_get(f->rx.requests, i);
    pthread_mutex_unlock(&f->rx.lock);
    assert_non_null(r);
    return r;
}

static const char *request_header(fixture_t *f, size_t i, const char *name)
{
    return json_string_value(
        json_object_get(json_object_get(request(f, i), "headers"), name));
}

static const char *request_body(fixture_t *f, size_t i)
{
    return json_string_value(json_object_get(request(f, i), "body"));
}

/* The elements of a body: a JSON array, or NDJSON lines. New reference. */
static json_t *elements_of(const char *body, bool ndjson)
{
    if (!ndjson) {
        json_t *array = json_loads(body, 0, NULL);
        assert_true(json_is_array(array));
        return array;
    }
    json_t *array = json_array();
    for (const char *line = body; *line != '\0';) {
        const char *end = strchr(line, '\n');
        assert_non_null(end); /* every element ends with a newline */
        json_t *element = json_loadb(line, (size_t)(end - line), JSON_DECODE_ANY, NULL);
        assert_non_null(element);
        json_array_append_new(array, element);
        line = end + 1;
    }
    return array;
}

/* The "n" of every element the receiver accepted (2xx), in arrival order,
 * as "0,1,2". */
static void delivered(fixture_t *f, char *out, size_t out_size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < request_count(f); i++) {
        json_t *r = request(f, i);
        if (json_integer_value(json_object_get(r, "status")) >= 300) {
            continue;
        }
        json_t *elements = elements_of(request_body(f, i), false);
        size_t e;
        json_t *element;
        json_array_foreach (elements, e, element) {
            used += (size_t)snprintf(
                out + used, out_size - used, "%s%lld", used ? "," : "",
                (long long)json_integer_value(json_object_get(element, "n")));
        }
        json_decref(elements);
    }
}

static void assert_delivered(fixture_t *f, const char *expected)
{
    char got[2048];
    delivered(f, got, sizeof(got));
    assert_string_equal(got, expected);
}

/* ---- tests ---- */

static void test_plugin_identity_and_defaults(void **state)
{
    fixture_t *f = *state;
    const tb_plugin_t *p = &tb_http_sink_plugin;
    assert_string_equal(p->class_name, "io.tributary.connect.http.HttpSinkConnector");
    assert_string_equal(p->aliases[0], "HttpSink");
    assert_string_equal(p->aliases[1], "HttpSinkConnector");
    assert_null(p->aliases[2]);
    assert_int_equal(p->kind, TB_PLUGIN_SINK);
    assert_non_null(p->put);
    assert_non_null(p->flush);

    const tb_config_table_t *tables[] = {p->config};
    json_t *raw = json_pack("{s:s}", "http.url", f->url);
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    assert_string_equal(tb_config_string(values, "http.method"), "POST");
    assert_string_equal(tb_config_string(values, "http.headers"), "");
    assert_int_equal(tb_config_int(values, "http.timeout.ms"), 30000);
    assert_int_equal(tb_config_int(values, "http.connect.timeout.ms"), 10000);
    assert_int_equal(tb_config_int(values, "batch.max.records"), 500);
    assert_int_equal(tb_config_int(values, "batch.max.bytes"), 1048576);
    assert_int_equal(tb_config_int(values, "batch.linger.ms"), 0);
    assert_string_equal(tb_config_string(values, "http.body.format"), "json_array");
    assert_string_equal(tb_config_string(values, "http.body.content"), "value");
    assert_int_equal(tb_config_int(values, "retry.max.attempts"), 5);
    assert_int_equal(tb_config_int(values, "retry.backoff.ms"), 200);
    assert_int_equal(tb_config_int(values, "retry.backoff.max.ms"), 10000);
    assert_true(tb_config_bool(values, "http.ssl.verify"));
    assert_null(tb_config_string(values, "http.ssl.key.password"));
    for (size_t i = 0; i < p->config->count; i++) {
        assert_string_equal(p->config->defs[i].group, "HTTP");
        assert_non_null(p->config->defs[i].documentation);
    }
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

static void test_invalid_configs_are_refused_naming_the_key(void **state)
{
    fixture_t *f = *state;
    static const struct {
        const char *key;
        const char *value;
        const char *says;
    } cases[] = {
        {"http.url", "ftp://example.com/x", "Must start with http:// or https://"},
        {"http.url", "http://", "Not a valid URL"},
        {"http.method", "GET", "String must be one of"},
        {"http.headers", "Authorization Bearer s3cr3t", "not of the form"},
        {"http.headers", "X-Ok: 1|Authorization: Bearer s3cr3t|Content-Length: 5",
         "Content-Length is set by the connector"},
        {"http.headers", "Bad Name: s3cr3t", "invalid header name"},
        {"http.timeout.ms", "0", "at least 1"},
        {"http.connect.timeout.ms", "soon", "Not a number"},
        {"batch.max.records", "0", "at least 1"},
        {"batch.max.bytes", "big", "Not a number"},
        {"batch.linger.ms", "-1", "at least 0"},
        {"http.body.format", "xml", "String must be one of"},
        {"http.body.content", "both", "String must be one of"},
        {"retry.max.attempts", "-1", "at least 0"},
        {"retry.backoff.ms", "5", "must not be above retry.backoff.max.ms"},
        {"http.ssl.verify", "maybe", "true or false"},
        {"http.ssl.certificate.location", "/tmp/cert.pem", "http.ssl.key.location"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(try_start(f, cases[i].key, cases[i].value, NULL), -1);
        assert_null(f->task);
        if (strstr(f->errstr, cases[i].says) == NULL ||
            (strstr(f->errstr, cases[i].key) == NULL &&
             strstr(cases[i].says, "http.") == NULL)) {
            fail_msg("%s=%s gave \"%s\"", cases[i].key, cases[i].value, f->errstr);
        }
        assert_null(strstr(f->errstr, "s3cr3t"));
    }

    json_t *config = json_object(); /* no URL at all */
    assert_int_equal(tb_http_sink_plugin.task_start(&f->ctx, config, &f->task, f->errstr,
                                                    sizeof(f->errstr)),
                     -1);
    assert_non_null(strstr(f->errstr, "http.url"));
    json_decref(config);
}

static void test_validate_checks_across_keys(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {tb_http_sink_plugin.config};
    json_t *raw =
        json_pack("{s:s, s:s, s:s, s:s, s:s}", "http.url", "https://example.com",
                  "http.ssl.key.location", "/k.pem", "http.ssl.key.password", "pw",
                  "retry.backoff.ms", "100", "retry.backoff.max.ms", "50");
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    tb_http_sink_plugin.validate(values, errors);
    assert_non_null(json_object_get(errors, "http.ssl.certificate.location"));
    assert_non_null(json_object_get(errors, "retry.backoff.ms"));
    assert_null(json_object_get(errors, "http.ssl.key.password"));
    assert_int_equal(tb_config_error_count(errors), 2);
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

static void test_task_configs_copy_the_config(void **state)
{
    fixture_t *f = *state;
    json_t *config = json_pack("{s:s, s:s}", "http.url", f->url, "tasks.max", "3");
    json_t *tasks = tb_http_sink_plugin.task_configs(config, 3);
    assert_int_equal(json_array_size(tasks), 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(json_equal(json_array_get(tasks, i), config));
        assert_true(json_array_get(tasks, i) != config);
    }
    json_decref(tasks);
    json_decref(config);
}

static const char *mixed_values(int n)
{
    static const char *const values[] = {
        "{\"n\":0,\"tags\":[\"a\",\"b\"]}", /* JSON: as is */
        "hello \"world\"",                  /* text: a JSON string */
        "{\n  \"n\": 2\n}\n",               /* pretty JSON: one line */
        "42",                               /* a JSON number */
        "caf\xc3\xa9 \xff",                 /* UTF-8 and a stray byte */
    };
    return values[n];
}

static void test_json_array_of_values(void **state)
{
    fixture_t *f = *state;
    START(f, NULL);
    assert_int_equal(put_numbered(f, 0, 5, mixed_values), 0);
    tb_sink_record_t tombstone = {.topic = "orders", .offset = 5, .timestamp = -1};
    assert_int_equal(
        tb_http_sink_plugin.put(f->task, &tombstone, 1, f->errstr, sizeof(f->errstr)), 0);
    assert_int_equal(request_count(f), 0); /* a partial batch waits for flush */
    assert_int_equal(flush(f), 0);
    assert_int_equal(request_count(f), 1);
    assert_string_equal(json_string_value(json_object_get(request(f, 0), "method")),
                        "POST");
    assert_string_equal(json_string_value(json_object_get(request(f, 0), "path")),
                        "/ingest");
    assert_string_equal(request_header(f, 0, "content-type"), "application/json");
    assert_string_equal(request_body(f, 0),
                        "[{\"n\":0,\"tags\":[\"a\",\"b\"]},\"hello \\\"world\\\"\","
                        "{   \"n\": 2 },42,\"caf\xc3\xa9 \\ufffd\",null]");
    assert_int_equal(flush(f), 0); /* nothing left: no request */
    assert_int_equal(request_count(f), 1);
}

static void test_ndjson_of_whole_records(void **state)
{
    fixture_t *f = *state;
    START(f, "http.body.format", "ndjson", "http.body.content", "record", "http.method",
          "put", NULL);
    tb_header_t headers[] = {
        {.name = "trace", .value = "abc", .value_len = 3},
        {.name = "empty", .value = NULL},
        {.name = "trace", .value = "def", .value_len = 3},
        {.name = "json", .value = "{\"a\":1}", .value_len = 7},
    };
    tb_sink_record_t records[] = {
        {.topic = "t1",
         .partition = 2,
         .offset = 7,
         .timestamp = 1700000000123,
         .key = "{\"id\":1}",
         .key_len = 8,
         .value = "{\n\"n\":7}",
         .value_len = 8,
         .headers = headers,
         .header_count = 4},
        {.topic = "t1",
         .partition = 0,
         .offset = 8,
         .timestamp = -1,
         .key = "plain key",
         .key_len = 9,
         .value = "text",
         .value_len = 4},
        {.topic = "t2", .partition = 1, .offset = 9, .timestamp = 5},
    };
    assert_int_equal(
        tb_http_sink_plugin.put(f->task, records, 3, f->errstr, sizeof(f->errstr)), 0);
    assert_int_equal(flush(f), 0);
    assert_int_equal(request_count(f), 1);
    assert_string_equal(json_string_value(json_object_get(request(f, 0), "method")),
                        "PUT");
    assert_string_equal(request_header(f, 0, "content-type"), "application/x-ndjson");

    json_t *lines = elements_of(request_body(f, 0), true);
    json_t *expected = json_loads(
        "[{\"topic\":\"t1\",\"partition\":2,\"offset\":7,\"timestamp\":1700000000123,"
        "\"key\":{\"id\":1},\"value\":{\"n\":7},"
        "\"headers\":{\"empty\":null,\"trace\":\"def\",\"json\":\"{\\\"a\\\":1}\"}},"
        "{\"topic\":\"t1\",\"partition\":0,\"offset\":8,\"timestamp\":null,"
        "\"key\":\"plain key\",\"value\":\"text\",\"headers\":{}},"
        "{\"topic\":\"t2\",\"partition\":1,\"offset\":9,\"timestamp\":5,"
        "\"key\":null,\"value\":null,\"headers\":{}}]",
        0, NULL);
    assert_non_null(expected);
    assert_true(json_equal(lines, expected));
    json_decref(expected);
    json_decref(lines);
}

static void test_batches_by_record_count_keep_order(void **state)
{
    fixture_t *f = *state;
    START(f, "batch.max.records", "3", NULL);
    assert_int_equal(put_numbered(f, 0, 10, NULL), 0);
    assert_int_equal(request_count(f), 3); /* full batches go at once */
    assert_int_equal(put_numbered(f, 10, 12, NULL), 0);
    assert_int_equal(request_count(f), 4);
    assert_int_equal(flush(f), 0);
    assert_int_equal(request_count(f), 4); /* 9,10,11 were full: sent by put */
    assert_int_equal(put_numbered(f, 12, 13, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_int_equal(request_count(f), 5);
    assert_string_equal(request_body(f, 0), "[{\"n\":0},{\"n\":1},{\"n\":2}]");
    assert_string_equal(request_body(f, 4), "[{\"n\":12}]");
    assert_delivered(f, "0,1,2,3,4,5,6,7,8,9,10,11,12");
}

static const char *big_value_at_7(int n)
{
    return n == 7 ? "{\"n\":7,\"pad\":\"......................................\"}" : NULL;
}

static void test_batches_by_bytes(void **state)
{
    fixture_t *f = *state;
    START(f, "batch.max.bytes", "40", NULL);
    assert_int_equal(put_numbered(f, 0, 20, big_value_at_7), 0);
    assert_int_equal(flush(f), 0);
    assert_true(request_count(f) > 4);
    for (size_t i = 0; i < request_count(f); i++) {
        const char *body = request_body(f, i);
        if (strstr(body, "pad") != NULL) {
            assert_true(strncmp(body, "[{\"n\":7,", 8) == 0); /* too big: alone */
            assert_true(strchr(body, '}') == strrchr(body, '}'));
        } else {
            assert_true(strlen(body) <= 40);
        }
    }
    assert_delivered(f, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19");
}

static void test_put_keeps_a_partial_batch_until_linger_passes(void **state)
{
    fixture_t *f = *state;
    START(f, "batch.linger.ms", "3600000", NULL); /* an hour: never within this test */
    assert_int_equal(put_numbered(f, 0, 2, NULL), 0);
    assert_int_equal(request_count(f), 0);
    assert_int_equal(flush(f), 0); /* flush sends what waits, linger or not */
    assert_int_equal(request_count(f), 1);
    assert_delivered(f, "0,1");
}

static void test_linger_sends_a_partial_batch_from_put(void **state)
{
    fixture_t *f = *state;
    START(f, "batch.linger.ms", "20", NULL);
    int64_t start = tb_monotonic_ms();
    assert_int_equal(put_numbered(f, 0, 1, NULL), 0);
    while (tb_monotonic_ms() - start <= 25) { /* bounded: the clock moves */
        struct timespec ms = {.tv_nsec = 1000000};
        nanosleep(&ms, NULL);
    }
    /* record 0 has waited past the linger: this put sends everything, with
     * no flush (record 0 alone first if the first put itself took 20 ms) */
    assert_int_equal(put_numbered(f, 1, 2, NULL), 0);
    assert_delivered(f, "0,1");
}

static void test_503_then_200_resends_only_that_batch(void **state)
{
    fixture_t *f = *state;
    static const reply_t replies[] = {{200, NULL}, {503, NULL}, {200, NULL}};
    script(&f->rx, replies, 3);
    START(f, "batch.max.records", "2", NULL);
    assert_int_equal(put_numbered(f, 0, 6, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_int_equal(request_count(f), 4);
    assert_string_equal(request_body(f, 1), request_body(f, 2)); /* the retried one */
    assert_delivered(f, "0,1,2,3,4,5");
    assert_int_equal(json_array_size(f->failed), 0);
}

static void test_retries_exhausted_keep_the_pending_records(void **state)
{
    fixture_t *f = *state;
    static const reply_t replies[] = {{503, NULL}, {502, NULL}, {500, NULL},
                                      {503, NULL}, {503, NULL}, {503, NULL},
                                      {503, NULL}, {503, NULL}, {504, NULL}};
    script(&f->rx, replies, 9);
    START(f, "batch.max.records", "2", "retry.max.attempts", "2", NULL);

    /* put takes every record, though the first full batch fails 3 times */
    assert_int_equal(put_numbered(f, 0, 5, NULL), 0);
    assert_int_equal(request_count(f), 3);

    /* the backlog is still refused: this put takes nothing (the runtime
     * puts the same records again) */
    assert_int_equal(put_numbered(f, 5, 6, NULL), TB_RESULT_RETRY);
    assert_int_equal(request_count(f), 6);
    assert_non_null(strstr(f->errstr, "HTTP 503 from "));
    assert_non_null(strstr(f->errstr, f->url));
    assert_non_null(strstr(f->errstr, "after 2 retries"));

    /* flush: fails again, keeping everything */
    assert_int_equal(flush(f), TB_RESULT_RETRY);
    assert_int_equal(request_count(f), 9);
    assert_non_null(strstr(f->errstr, "HTTP 504 from "));
    assert_delivered(f, "");

    /* the endpoint is back and the runtime puts record 5 again: all of it
     * arrives once, in order */
    assert_int_equal(put_numbered(f, 5, 6, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_delivered(f, "0,1,2,3,4,5");
}

static void test_close_drops_the_pending_records_of_those_partitions(void **state)
{
    fixture_t *f = *state;
    START(f, "batch.linger.ms", "3600000", NULL); /* nothing is sent before flush */
    /* read from orders-0 and orders-1; the chain routed the last two */
    static const char *const values[] = {"{\"n\":0}", "{\"n\":1}", "{\"n\":2}",
                                         "{\"n\":3}"};
    tb_sink_record_t records[4];
    for (int i = 0; i < 4; i++) {
        records[i] = (tb_sink_record_t){.topic = i < 2 ? "orders" : "routed",
                                        .original_topic = i < 2 ? NULL : "orders",
                                        .partition = i % 2,
                                        .offset = i,
                                        .value = values[i],
                                        .value_len = strlen(values[i])};
    }
    assert_int_equal(
        tb_http_sink_plugin.put(f->task, records, 4, f->errstr, sizeof(f->errstr)), 0);
    const tb_sink_partition_t revoked[] = {{.topic = "orders", .partition = 1}};
    tb_http_sink_plugin.close(f->task, revoked, 1);
    assert_int_equal(flush(f), 0);
    assert_delivered(f, "0,2");
}

static void test_429_honours_a_capped_retry_after(void **state)
{
    fixture_t *f = *state;
    static const reply_t zero[] = {{429, "0"}, {200, NULL}};
    static const reply_t an_hour[] = {{429, "3600"}, {200, NULL}};

    /* a backoff of a minute: only the Retry-After of 0 lets this end soon */
    script(&f->rx, zero, 2);
    START(f, "retry.backoff.ms", "60000", "retry.backoff.max.ms", "60000", NULL);
    int64_t start = tb_monotonic_ms();
    assert_int_equal(put_numbered(f, 0, 1, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_true(tb_monotonic_ms() - start < 30000);
    stop(f);

    /* an hour asked for, capped by retry.backoff.max.ms */
    script(&f->rx, an_hour, 2);
    START(f, "retry.backoff.ms", "1", "retry.backoff.max.ms", "1", NULL);
    start = tb_monotonic_ms();
    assert_int_equal(put_numbered(f, 1, 2, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_true(tb_monotonic_ms() - start < 30000);
    assert_int_equal(request_count(f), 4);
    assert_delivered(f, "0,1");
}

static const char *poisoned(int n)
{
    return n == 2 || n == 6
               ? (n == 2 ? "{\"n\":2,\"poison\":1}" : "{\"n\":6,\"poison\":1}")
               : NULL;
}

static void test_400_reports_only_the_bad_records(void **state)
{
    fixture_t *f = *state;
    char reason[256];
    f->rx.reject_marker = "poison";
    START(f, "batch.max.records", "10", NULL);
    assert_int_equal(put_numbered(f, 0, 10, poisoned), 0); /* a full batch: sent */
    assert_int_equal(json_array_size(f->failed), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(f->failed, 0), "offset")), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(f->failed, 1), "offset")), 6);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(f->failed, 1), "value")),
        "{\"n\":6,\"poison\":1}");
    snprintf(reason, sizeof(reason),
             "HTTP 400 from %s: bad record: rejected by the test receiver", f->url);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(f->failed, 0), "reason")),
        reason);
    assert_delivered(f, "0,1,3,4,5,7,8,9");
    assert_int_equal(flush(f), 0);
    assert_delivered(f, "0,1,3,4,5,7,8,9");
}

static void test_one_bad_record_in_ten(void **state)
{
    fixture_t *f = *state;
    f->rx.reject_marker = "\"n\":6}";
    START(f, NULL);
    assert_int_equal(put_numbered(f, 0, 10, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_int_equal(json_array_size(f->failed), 1);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(f->failed, 0), "offset")), 6);
    assert_delivered(f, "0,1,2,3,4,5,7,8,9");
}

static void test_custom_headers_are_sent(void **state)
{
    fixture_t *f = *state;
    START(f, "http.headers",
          " X-Tenant: blue | Authorization: Bearer s3cr3t||X-Empty:", NULL);
    assert_int_equal(put_numbered(f, 0, 1, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_string_equal(request_header(f, 0, "x-tenant"), "blue");
    assert_string_equal(request_header(f, 0, "authorization"), "Bearer s3cr3t");
    assert_string_equal(request_header(f, 0, "x-empty"), "");
    assert_string_equal(request_header(f, 0, "content-type"), "application/json");
    assert_null(request_header(f, 0, "expect"));
    stop(f);

    START(f, "http.headers", "content-type: application/vnd.test+json", NULL);
    assert_int_equal(put_numbered(f, 1, 2, NULL), 0);
    assert_int_equal(flush(f), 0);
    assert_string_equal(request_header(f, 1, "content-type"),
                        "application/vnd.test+json");
}

static void assert_no_secret(const char *text)
{
    static const char *const secrets[] = {"s3cr3t-value", "k3y-value", "pa55w0rd",
                                          "qu3ry-value"};
    for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
        if (strstr(text, secrets[i]) != NULL) {
            fail_msg("\"%s\" shows %s", text, secrets[i]);
        }
    }
}

static void test_secrets_never_appear_in_errors(void **state)
{
    fixture_t *f = *state;
    char url[256];
    static const reply_t replies[] = {{500, NULL}, {401, NULL}};
    f->rx.echo_headers = true; /* the receiver repeats the secrets back */
    snprintf(url, sizeof(url),
             "http://user:pa55w0rd@127.0.0.1:%u/ingest?api_key=qu3ry-value&x=1",
             f->rx.port);
    START(f, "http.url", url, "retry.max.attempts", "0", "http.headers",
          "Authorization: Bearer s3cr3t-value|X-Api-Key: k3y-value|X-Tenant: blue", NULL);

    script(&f->rx, replies, 2);
    assert_int_equal(put_numbered(f, 0, 1, NULL), 0);
    assert_int_equal(flush(f), TB_RESULT_RETRY);
    assert_non_null(strstr(f->errstr, "HTTP 500 from http://[hidden]@127.0.0.1:"));
    assert_non_null(strstr(f->errstr, "/ingest?api_key=[hidden]&x=1"));
    assert_non_null(strstr(f->errstr, "[hidden]")); /* in the echoed headers */
    assert_no_secret(f->errstr);

    assert_int_equal(flush(f), -1); /* 401: the endpoint refuses us */
    assert_non_null(strstr(f->errstr, "HTTP 401 from "));
    assert_no_secret(f->errstr);

    f->rx.reject_marker = "\"n\":1";
    assert_int_equal(put_numbered(f, 1, 2, NULL), 0);
    assert_int_equal(flush(f), 0); /* 0 delivered, 1 reported */
    assert_int_equal(json_array_size(f->failed), 1);
    assert_no_secret(
        json_string_value(json_object_get(json_array_get(f->failed, 0), "reason")));
    assert_delivered(f, "0");

    /* a refused config names the key, not the value */
    stop(f);
    assert_int_equal(try_start(f, "http.url", "ftp://user:pa55w0rd@host/", NULL), -1);
    assert_non_null(strstr(f->errstr, "http.url"));
    assert_no_secret(f->errstr);
}

static void test_redirects_and_refusals_are_fatal(void **state)
{
    fixture_t *f = *state;
    static const reply_t replies[] = {{302, NULL}, {404, NULL}, {200, NULL}};
    script(&f->rx, replies, 3);
    START(f, NULL);
    assert_int_equal(put_numbered(f, 0, 3, NULL), 0);
    assert_int_equal(flush(f), -1);
    assert_non_null(strstr(f->errstr, "HTTP 302 from "));
    assert_int_equal(flush(f), -1);
    assert_non_null(strstr(f->errstr, "HTTP 404 from "));
    assert_non_null(strstr(f->errstr, "bad record: rejected by the test receiver"));
    assert_int_equal(json_array_size(f->failed), 0); /* no record is blamed */
    assert_int_equal(flush(f), 0);
    assert_delivered(f, "0,1,2");
}

static void test_network_errors_are_retriable(void **state)
{
    fixture_t *f = *state;
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/ingest", tb_test_free_port());

    START(f, "http.url", url, "retry.max.attempts", "1", NULL);
    assert_int_equal(put_numbered(f, 0, 2, NULL), 0);
    assert_int_equal(flush(f), TB_RESULT_RETRY);
    assert_non_null(strstr(f->errstr, "cannot send to "));
    assert_non_null(strstr(f->errstr, url));
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
#define T(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_plugin_identity_and_defaults),
        T(test_invalid_configs_are_refused_naming_the_key),
        T(test_validate_checks_across_keys),
        T(test_task_configs_copy_the_config),
        T(test_json_array_of_values),
        T(test_ndjson_of_whole_records),
        T(test_batches_by_record_count_keep_order),
        T(test_batches_by_bytes),
        T(test_put_keeps_a_partial_batch_until_linger_passes),
        T(test_linger_sends_a_partial_batch_from_put),
        T(test_503_then_200_resends_only_that_batch),
        T(test_retries_exhausted_keep_the_pending_records),
        T(test_close_drops_the_pending_records_of_those_partitions),
        T(test_429_honours_a_capped_retry_after),
        T(test_400_reports_only_the_bad_records),
        T(test_one_bad_record_in_ten),
        T(test_custom_headers_are_sent),
        T(test_secrets_never_appear_in_errors),
        T(test_redirects_and_refusals_are_fatal),
        T(test_network_errors_are_retriable),
    };
#undef T
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return failed;
}
