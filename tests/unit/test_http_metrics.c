/* The REST server's request metrics: route templates as labels (never raw
 * paths), "unmatched" for unknown paths, and exact counts when many
 * threads answer at once while the page is rendered. The server runs on a
 * loopback port without a herder, so only routes that need none are
 * called. tb_metrics_reset() is never called here: the server keeps its
 * series handles for the life of the process. */
#include "tb_port_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/tb_metrics.h"
#include "server/tb_http.h"

#define THREADS 4
#define REQUESTS_PER_THREAD 200

typedef struct {
    tb_http_server_t *server;
    char base[64];
} fixture_t;

static size_t discard(char *data, size_t size, size_t n, void *opaque)
{
    (void)data;
    (void)opaque;
    return size * n;
}

/* Sends one request and returns its status. */
static long request(const fixture_t *f, const char *method, const char *path,
                    const char *body)
{
    char url[512];
    long status = 0;
    CURL *curl = curl_easy_init();
    assert_non_null(curl);
    snprintf(url, sizeof(url), "%s%s", f->base, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    if (body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    }
    assert_int_equal(curl_easy_perform(curl), CURLE_OK);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(curl);
    return status;
}

static int start(void **state)
{
    char errstr[512];
    char listeners[64];
    static fixture_t f;
    snprintf(f.base, sizeof(f.base), "http://127.0.0.1:%u", tb_test_free_port());
    snprintf(listeners, sizeof(listeners), "%s", f.base);
    tb_http_options_t options = {
        .listeners = listeners,
        .body_max_bytes = 64,
        .threads = 2,
        .connections_max = 64,
        .connections_per_client = 16,
        .connection_timeout_ms = 10000,
        .header_timeout_ms = 10000,
        .auth = TB_AUTH_NONE,
    };
    f.server = tb_http_bind(&options, errstr, sizeof(errstr));
    if (f.server == NULL || tb_http_serve(f.server, errstr, sizeof(errstr)) != 0) {
        fprintf(stderr, "%s\n", errstr);
        return -1;
    }
    *state = &f;
    return 0;
}

static int stop(void **state)
{
    fixture_t *f = *state;
    tb_http_stop(f->server);
    return 0;
}

/* The value of the sample line that starts with series, or -1. */
static double sample(const char *page, const char *series)
{
    size_t len = strlen(series);
    for (const char *line = page; line != NULL && *line != '\0';) {
        if (strncmp(line, series, len) == 0 && line[len] == ' ') {
            return strtod(line + len + 1, NULL);
        }
        line = strchr(line, '\n');
        line = line != NULL ? line + 1 : NULL;
    }
    return -1;
}

static double sample_now(const char *series)
{
    char *page = tb_metrics_render();
    assert_non_null(page);
    double value = sample(page, series);
    free(page);
    return value;
}

static void test_routes_are_counted_by_template(void **state)
{
    const fixture_t *f = *state;
    assert_int_equal(request(f, "GET", "/admin/loggers/tributary.http", NULL), 200);
    assert_int_equal(request(f, "GET", "/admin/loggers/no.such%2Flogger", NULL), 404);
    assert_int_equal(request(f, "PUT", "/admin/loggers/tributary.store", NULL), 400);
    assert_int_equal(request(f, "DELETE", "/metrics", NULL), 405);
    assert_int_equal(request(f, "BREW", "/metrics", NULL), 405);
    assert_int_equal(request(f, "GET", "/connectors/a/b/c/d/e", NULL), 404);
    assert_int_equal(request(f, "PUT", "/admin/loggers/x",
                             "{\"level\":\"DEBUG\",\"padding\":\"a body longer than the "
                             "sixty-four bytes the server takes\"}"),
                     413);

    char *page = tb_metrics_render();
    assert_non_null(page);
    assert_true(sample(page, "tributary_http_requests_total{route=\"/admin/loggers/"
                             "{logger}\",method=\"GET\",status=\"200\"}") == 1);
    assert_true(sample(page, "tributary_http_requests_total{route=\"/admin/loggers/"
                             "{logger}\",method=\"GET\",status=\"404\"}") == 1);
    assert_true(sample(page, "tributary_http_requests_total{route=\"/admin/loggers/"
                             "{logger}\",method=\"PUT\",status=\"400\"}") == 1);
    assert_true(sample(page, "tributary_http_requests_total{route=\"/admin/loggers/"
                             "{logger}\",method=\"PUT\",status=\"413\"}") == 1);
    assert_true(sample(page, "tributary_http_requests_total{route=\"/metrics\","
                             "method=\"DELETE\",status=\"405\"}") == 1);
    assert_true(sample(page, "tributary_http_requests_total{route=\"/metrics\","
                             "method=\"other\",status=\"405\"}") == 1);
    assert_true(sample(page, "tributary_http_requests_total{route=\"unmatched\","
                             "method=\"GET\",status=\"404\"}") == 1);
    assert_true(sample(page, "tributary_http_request_seconds_count{route=\"/admin/"
                             "loggers/{logger}\",method=\"GET\"}") == 2);
    /* never a raw path or method */
    assert_null(strstr(page, "no.such"));
    assert_null(strstr(page, "tributary.store"));
    assert_null(strstr(page, "BREW"));
    assert_null(strstr(page, "/connectors/a"));
    free(page);
}

typedef struct {
    const fixture_t *fixture;
    pthread_barrier_t *barrier;
} hammer_arg_t;

static void *hammer(void *opaque)
{
    hammer_arg_t *arg = opaque;
    pthread_barrier_wait(arg->barrier);
    for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
        request(arg->fixture, "GET", "/admin/loggers", NULL);
    }
    return NULL;
}

static void test_concurrent_requests_are_counted_exactly(void **state)
{
    /* a combination no request has made yet: its handle is taken by
     * threads racing for it */
    const char *series = "tributary_http_requests_total{route=\"/admin/loggers\","
                         "method=\"GET\",status=\"200\"}";
    pthread_t threads[THREADS];
    pthread_barrier_t barrier;
    hammer_arg_t arg = {*state, &barrier};
    assert_true(sample_now(series) == -1);
    pthread_barrier_init(&barrier, NULL, THREADS + 1);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_create(&threads[i], NULL, hammer, &arg), 0);
    }
    pthread_barrier_wait(&barrier);
    /* render while the requests run: updates never wait for it */
    for (int i = 0; i < 50; i++) {
        free(tb_metrics_render());
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
    }
    pthread_barrier_destroy(&barrier);
    assert_true(sample_now(series) == THREADS * REQUESTS_PER_THREAD);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes_are_counted_by_template),
        cmocka_unit_test(test_concurrent_requests_are_counted_exactly),
    };
    int failed = cmocka_run_group_tests(tests, start, stop);
    curl_global_cleanup();
    return failed;
}
