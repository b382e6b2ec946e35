/*
 * tb_port_test.h - loopback ports for the unit tests that run a server or
 * reach one: a socket on a port the kernel chose, and a port free a moment
 * ago (nothing listens there until the test binds it).
 */
#ifndef TB_PORT_TEST_H
#define TB_PORT_TEST_H

#include "tb_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

/* A socket bound to 127.0.0.1 on a port the kernel chose, put in *port;
 * listening when listening is set. The caller closes it. */
static inline int tb_test_loopback_socket(unsigned *port, bool listening)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    if (listening) {
        assert_int_equal(listen(fd, 1), 0);
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

static inline unsigned tb_test_free_port(void)
{
    unsigned port;
    close(tb_test_loopback_socket(&port, false));
    return port;
}

#endif
