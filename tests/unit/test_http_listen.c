/* The REST listeners' two steps: tb_http_bind takes the port before the
 * worker starts anything, and a connection made before tb_http_serve waits
 * in the backlog and is answered once it serves. A port that is taken
 * fails the bind, naming the listener and why; a server bound and never
 * served gives its port back when stopped; a connection still in the
 * backlog when a served one stops is answered, not reset. The server runs
 * without a herder, so only routes that need none are called. */
#include "tb_port_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/tb_metrics.h"
#include "core/tb_time.h"
#include "server/tb_http.h"

static int connect_to(unsigned port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static const char *const GET_UNKNOWN =
    "GET /no/such/route HTTP/1.1\r\nHost: localhost\r\n"
    "Connection: close\r\n\r\n";

static void send_request(int fd, const char *request)
{
    assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
}

/* Reads the reply until the server closes the connection. */
static void read_reply(int fd, char *reply, size_t size)
{
    size_t got = 0;
    ssize_t n;
    while (got < size - 1 && (n = read(fd, reply + got, size - 1 - got)) > 0) {
        got += (size_t)n;
    }
    reply[got] = '\0';
}

static tb_http_options_t options_for(const char *listeners)
{
    return (tb_http_options_t){
        .listeners = listeners,
        .body_max_bytes = 64,
        .threads = 1,
        .connections_max = 64,
        .connections_per_client = 16,
        .connection_timeout_ms = 10000,
        .header_timeout_ms = 10000,
        .auth = TB_AUTH_NONE,
    };
}

static void test_a_connection_made_before_serving_is_answered_once_served(void **state)
{
    (void)state;
    char listeners[64], errstr[512], reply[256] = "";
    snprintf(listeners, sizeof(listeners), "http://127.0.0.1:%u", tb_test_free_port());
    tb_http_options_t options = options_for(listeners);
    tb_http_server_t *server = tb_http_bind(&options, errstr, sizeof(errstr));
    assert_non_null(server);
    unsigned port = (unsigned)atoi(strrchr(listeners, ':') + 1);
    int client = connect_to(port); /* the kernel accepts it into the backlog */
    assert_true(client >= 0);
    send_request(client, GET_UNKNOWN);
    assert_int_equal(tb_http_serve(server, errstr, sizeof(errstr)), 0);
    read_reply(client, reply, sizeof(reply));
    assert_true(strncmp(reply, "HTTP/1.1 404", 12) == 0);
    close(client);
    tb_http_stop(server);
}

/* Port 0 is the kernel's pick: tb_http_port gives the port bound (which
 * the worker advertises), and the server answers there. */
static void test_port_0_gives_the_port_the_kernel_picked(void **state)
{
    (void)state;
    char errstr[512], reply[256] = "";
    tb_http_options_t options = options_for("http://127.0.0.1:0");
    tb_http_server_t *server = tb_http_bind(&options, errstr, sizeof(errstr));
    assert_non_null(server);
    unsigned port = tb_http_port(server, "http://127.0.0.1:0");
    assert_true(port > 0);
    assert_int_equal(tb_http_port(server, "http://127.0.0.1:1"), 0);
    assert_int_equal(tb_http_serve(server, errstr, sizeof(errstr)), 0);
    int client = connect_to(port);
    assert_true(client >= 0);
    send_request(client, GET_UNKNOWN);
    read_reply(client, reply, sizeof(reply));
    assert_true(strncmp(reply, "HTTP/1.1 404", 12) == 0);
    close(client);
    tb_http_stop(server);
}

static void test_a_taken_port_fails_the_bind_naming_the_listener(void **state)
{
    (void)state;
    unsigned port;
    int holder = tb_test_loopback_socket(&port, true);
    char listeners[64], errstr[512];
    snprintf(listeners, sizeof(listeners), "http://127.0.0.1:%u", port);
    tb_http_options_t options = options_for(listeners);
    assert_null(tb_http_bind(&options, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, listeners));
    assert_non_null(strstr(errstr, "cannot bind: Address already in use"));
    close(holder);
}

static void test_a_server_bound_and_never_served_gives_its_port_back(void **state)
{
    (void)state;
    char listeners[64], errstr[512];
    snprintf(listeners, sizeof(listeners), "http://127.0.0.1:%u", tb_test_free_port());
    tb_http_options_t options = options_for(listeners);
    tb_http_server_t *server = tb_http_bind(&options, errstr, sizeof(errstr));
    assert_non_null(server);
    unsigned port = (unsigned)atoi(strrchr(listeners, ':') + 1);
    tb_http_stop(server);
    assert_int_equal(connect_to(port), -1); /* nothing listens any more */
    server = tb_http_bind(&options, errstr, sizeof(errstr));
    assert_non_null(server);
    tb_http_stop(server);
}

/* The metrics page reads the clock under test: while held, a render
 * blocks the REST thread that serves it, and the test knows when. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool held;
    bool blocking; /* a render waits in the clock */
} page_clock = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};

static int64_t held_clock(void)
{
    pthread_mutex_lock(&page_clock.lock);
    page_clock.blocking = page_clock.held;
    pthread_cond_broadcast(&page_clock.changed);
    while (page_clock.held) {
        pthread_cond_wait(&page_clock.changed, &page_clock.lock);
    }
    pthread_mutex_unlock(&page_clock.lock);
    return tb_monotonic_ms();
}

static void *stop_server(void *server)
{
    tb_http_stop(server);
    return NULL;
}

static void test_a_connection_in_the_backlog_at_the_stop_is_answered(void **state)
{
    (void)state;
    char listeners[64], errstr[512], busy_reply[256] = "", waiting_reply[256] = "";
    unsigned port = tb_test_free_port();
    snprintf(listeners, sizeof(listeners), "http://127.0.0.1:%u", port);
    tb_http_options_t options = options_for(listeners); /* one REST thread */
    tb_http_server_t *server = tb_http_bind(&options, errstr, sizeof(errstr));
    assert_non_null(server);
    assert_int_equal(tb_http_serve(server, errstr, sizeof(errstr)), 0);
    page_clock.held = true;
    tb_metrics_clock_set(held_clock);

    int busy = connect_to(port); /* its render holds the only REST thread */
    assert_true(busy >= 0);
    send_request(busy, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n"
                       "Connection: close\r\n\r\n");
    pthread_mutex_lock(&page_clock.lock);
    while (!page_clock.blocking) {
        pthread_cond_wait(&page_clock.changed, &page_clock.lock);
    }
    pthread_mutex_unlock(&page_clock.lock);
    int waiting = connect_to(port); /* no thread to accept it: in the backlog */
    assert_true(waiting >= 0);
    send_request(waiting, GET_UNKNOWN);

    pthread_t stopper;
    assert_int_equal(pthread_create(&stopper, NULL, stop_server, server), 0);
    /* the stop has closed the listening socket once a connection is refused
     * (a probe that gets in is closed unused: it is answered with nothing) */
    int probe;
    for (int tries = 0; (probe = connect_to(port)) >= 0 && tries < 1000; tries++) {
        close(probe);
        struct timespec pause = {0, 10 * 1000000L};
        nanosleep(&pause, NULL);
    }
    assert_int_equal(probe, -1);
    pthread_mutex_lock(&page_clock.lock);
    page_clock.held = false;
    pthread_cond_broadcast(&page_clock.changed);
    pthread_mutex_unlock(&page_clock.lock);

    read_reply(busy, busy_reply, sizeof(busy_reply));
    read_reply(waiting, waiting_reply, sizeof(waiting_reply));
    assert_int_equal(pthread_join(stopper, NULL), 0);
    tb_metrics_clock_set(NULL);
    assert_true(strncmp(busy_reply, "HTTP/1.1 200", 12) == 0);
    assert_true(strncmp(waiting_reply, "HTTP/1.1 404", 12) == 0);
    close(busy);
    close(waiting);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_connection_made_before_serving_is_answered_once_served),
        cmocka_unit_test(test_port_0_gives_the_port_the_kernel_picked),
        cmocka_unit_test(test_a_taken_port_fails_the_bind_naming_the_listener),
        cmocka_unit_test(test_a_server_bound_and_never_served_gives_its_port_back),
        cmocka_unit_test(test_a_connection_in_the_backlog_at_the_stop_is_answered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
