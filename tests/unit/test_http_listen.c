/* The REST listeners' two steps: tb_http_bind takes the port before the
 * worker starts anything, and a connection made before tb_http_serve waits
 * in the backlog and is answered once it serves. A port that is taken
 * fails the bind, naming the listener and why; a server bound and never
 * served gives its port back when stopped. The server runs without a
 * herder, so only routes that need none are called. */
#include "tb_port_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

static tb_http_options_t options_for(const char *listeners)
{
    return (tb_http_options_t){
        .listeners = listeners,
        .body_max_bytes = 64,
        .threads = 1,
        .connections_per_client = 16,
        .connection_timeout_ms = 10000,
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
    const char *request = "GET /no/such/route HTTP/1.1\r\nHost: localhost\r\n"
                          "Connection: close\r\n\r\n";
    assert_int_equal(write(client, request, strlen(request)), (ssize_t)strlen(request));
    assert_int_equal(tb_http_serve(server, errstr, sizeof(errstr)), 0);
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(reply) - 1 &&
           (n = read(client, reply + got, sizeof(reply) - 1 - got)) > 0) {
        got += (size_t)n;
    }
    reply[got] = '\0';
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_connection_made_before_serving_is_answered_once_served),
        cmocka_unit_test(test_a_taken_port_fails_the_bind_naming_the_listener),
        cmocka_unit_test(test_a_server_bound_and_never_served_gives_its_port_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
