/* A REST listener's open connections (server/tb_http_conns.h), on socket
 * pairs standing in for accepted connections: a client is an IPv4 address
 * or an IPv6 /64; a connection beyond the per-client limit is shut down at
 * once; one whose request headers do not arrive in time is shut down
 * however much it sent; one whose request began is left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/tb_http_conns.h"

static struct sockaddr_in6 v6(const char *text)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6};
    assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
    return a;
}

static struct sockaddr_in v4(const char *text)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, text, &a.sin_addr), 1);
    return a;
}

static void test_a_client_is_an_ipv4_address_or_an_ipv6_64(void **state)
{
    (void)state;
    unsigned char a[TB_HTTP_CLIENT_KEY_SIZE], b[TB_HTTP_CLIENT_KEY_SIZE];
    struct sockaddr_in6 x = v6("2001:db8:1:2::1"), y = v6("2001:db8:1:2:ffff::9"),
                        z = v6("2001:db8:1:3::1"), mapped = v6("::ffff:192.0.2.7");
    struct sockaddr_in p = v4("192.0.2.7"), q = v4("192.0.2.8");
    assert_int_equal(tb_http_client_key((struct sockaddr *)&x, a), 0);
    assert_int_equal(tb_http_client_key((struct sockaddr *)&y, b), 0);
    assert_memory_equal(a, b, sizeof(a)); /* the same /64 */
    tb_http_client_key((struct sockaddr *)&z, b);
    assert_memory_not_equal(a, b, sizeof(a));
    tb_http_client_key((struct sockaddr *)&p, a);
    tb_http_client_key((struct sockaddr *)&mapped, b);
    assert_memory_equal(a, b, sizeof(a)); /* IPv4-mapped is IPv4 */
    tb_http_client_key((struct sockaddr *)&q, b);
    assert_memory_not_equal(a, b, sizeof(a)); /* IPv4: each address */
    struct sockaddr unix_addr = {.sa_family = AF_UNIX};
    assert_int_equal(tb_http_client_key(&unix_addr, a), -1);
}

/* Whether the registry shut down the connection whose peer end is fd,
 * waiting at most ms. */
static bool shut_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char byte;
    return poll(&p, 1, ms) == 1 && recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
}

typedef struct {
    int ours, peer;
    tb_http_conn_t *conn;
} pair_t;

static pair_t open_pair(tb_http_conns_t *conns, const struct sockaddr *from)
{
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    pair_t p = {.ours = fds[0], .peer = fds[1]};
    p.conn = tb_http_conn_open(conns, p.ours, from);
    assert_non_null(p.conn);
    return p;
}

static void close_pair(tb_http_conns_t *conns, pair_t *p)
{
    tb_http_conn_close(conns, p->conn);
    close(p->ours);
    close(p->peer);
}

static void test_limits_per_client_and_header_deadline(void **state)
{
    (void)state;
    tb_http_conns_t *conns = tb_http_conns_create("http://test", 2, 2000);
    assert_non_null(conns);
    struct sockaddr_in6 a1 = v6("2001:db8::1"), a2 = v6("2001:db8::2"),
                        other = v6("2001:db8:0:1::1");
    pair_t first = open_pair(conns, (struct sockaddr *)&a1);
    pair_t second = open_pair(conns, (struct sockaddr *)&a2);
    pair_t third = open_pair(conns, (struct sockaddr *)&a1); /* the /64's third */
    pair_t elsewhere = open_pair(conns, (struct sockaddr *)&other);
    assert_true(shut_within(third.peer, 0));
    assert_false(shut_within(first.peer, 0));
    assert_false(shut_within(elsewhere.peer, 0));

    /* first's request begins; second trickles bytes, which change nothing */
    tb_http_conn_request(conns, first.conn, true);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(send(second.peer, "G", 1, 0), 1);
        assert_false(shut_within(second.peer, 50));
    }
    /* bounded waits, far beyond the deadline: no timing is asserted */
    assert_true(shut_within(second.peer, 10000));
    assert_true(shut_within(elsewhere.peer, 10000));
    assert_false(shut_within(first.peer, 0));
    /* its answer done, the next request's deadline runs */
    tb_http_conn_request(conns, first.conn, false);
    assert_true(shut_within(first.peer, 10000));

    close_pair(conns, &first);
    close_pair(conns, &second);
    close_pair(conns, &third);
    close_pair(conns, &elsewhere);
    tb_http_conns_destroy(conns);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_client_is_an_ipv4_address_or_an_ipv6_64),
        cmocka_unit_test(test_limits_per_client_and_header_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
