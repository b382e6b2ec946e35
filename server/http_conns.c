/* A REST listener's open connections (tb_http_conns.h). */
#include "server/tb_http_conns.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.rest"
#define NOTICE_GAP_MS 60000

struct tb_http_conn {
    struct tb_http_conn *prev, *next;
    int fd;
    unsigned char client[TB_HTTP_CLIENT_KEY_SIZE];
    bool has_client;
    int64_t headers_since_ms; /* waiting for a request's headers since; 0: not */
    bool shut;                /* shut down by the registry */
};

struct tb_http_conns {
    const char *url;
    unsigned per_client;
    unsigned header_timeout_ms;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;        /* guarded by lock */
    tb_http_conn_t *open; /* guarded by lock */
    /* closures not logged yet, and when the next line may come; guarded by
     * lock */
    size_t over_client;
    size_t over_deadline;
    int64_t notice_at_ms;
    pthread_t timer;
};

int tb_http_client_key(const struct sockaddr *addr, unsigned char *key)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(key, 0, TB_HTTP_CLIENT_KEY_SIZE);
    if (addr->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)addr)->sin_addr, 4);
        return 0;
    }
    if (addr->sa_family != AF_INET6) {
        return -1;
    }
    const unsigned char *bytes = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;
    if (memcmp(bytes, mapped, sizeof(mapped)) == 0) {
        key[0] = 4;
        memcpy(key + 1, bytes + 12, 4);
    } else {
        key[0] = 6;
        memcpy(key + 1, bytes, 8);
    }
    return 0;
}

static void shut(tb_http_conn_t *conn)
{
    conn->shut = true;
    shutdown(conn->fd, SHUT_RDWR);
}

/* Tells the closures since the last line, at most once a minute. Called
 * by the timer with the lock held. */
static void notice(tb_http_conns_t *conns, int64_t now)
{
    if ((conns->over_client == 0 && conns->over_deadline == 0) ||
        now < conns->notice_at_ms) {
        return;
    }
    TB_LOG(TB_LOG_WARN, LOGGER,
           "listener %s closed %zu connection(s) whose request headers did not arrive "
           "within rest.request.header.timeout.ms=%u and %zu beyond "
           "rest.connections.per.client.max=%u of their client (an IPv4 address or an "
           "IPv6 /64) since the last such line; the next comes in a minute at the "
           "earliest",
           conns->url, conns->over_deadline, conns->header_timeout_ms, conns->over_client,
           conns->per_client);
    conns->over_client = conns->over_deadline = 0;
    conns->notice_at_ms = now + NOTICE_GAP_MS;
}

static void *sweep(void *arg)
{
    tb_http_conns_t *conns = arg;
    pthread_mutex_lock(&conns->lock);
    while (!conns->stopping) {
        int64_t now = tb_monotonic_ms();
        for (tb_http_conn_t *c = conns->open; c != NULL; c = c->next) {
            if (!c->shut && c->headers_since_ms != 0 &&
                now - c->headers_since_ms >= conns->header_timeout_ms) {
                shut(c);
                conns->over_deadline++;
            }
        }
        notice(conns, now);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += TB_HTTP_SWEEP_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&conns->wake, &conns->lock, &until);
    }
    pthread_mutex_unlock(&conns->lock);
    return NULL;
}

tb_http_conns_t *tb_http_conns_create(const char *url, unsigned per_client,
                                      unsigned header_timeout_ms)
{
    tb_http_conns_t *conns = calloc(1, sizeof(*conns));
    pthread_condattr_t attr;
    if (conns == NULL) {
        return NULL;
    }
    *conns = (tb_http_conns_t){
        .url = url, .per_client = per_client, .header_timeout_ms = header_timeout_ms};
    pthread_mutex_init(&conns->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&conns->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&conns->timer, NULL, sweep, conns) != 0) {
        pthread_cond_destroy(&conns->wake);
        pthread_mutex_destroy(&conns->lock);
        free(conns);
        return NULL;
    }
    pthread_setname_np(conns->timer, "tb-rest-timer");
    return conns;
}

void tb_http_conns_destroy(tb_http_conns_t *conns)
{
    if (conns == NULL) {
        return;
    }
    pthread_mutex_lock(&conns->lock);
    conns->stopping = true;
    pthread_cond_signal(&conns->wake);
    pthread_mutex_unlock(&conns->lock);
    pthread_join(conns->timer, NULL);
    pthread_cond_destroy(&conns->wake);
    pthread_mutex_destroy(&conns->lock);
    free(conns);
}

tb_http_conn_t *tb_http_conn_open(tb_http_conns_t *conns, int fd,
                                  const struct sockaddr *addr)
{
    tb_http_conn_t *conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
        return NULL;
    }
    conn->fd = fd;
    conn->has_client = addr != NULL && tb_http_client_key(addr, conn->client) == 0;
    conn->headers_since_ms = tb_monotonic_ms();
    pthread_mutex_lock(&conns->lock);
    unsigned same = 0;
    for (const tb_http_conn_t *c = conns->open; c != NULL && conn->has_client;
         c = c->next) {
        same += c->has_client && memcmp(c->client, conn->client, sizeof(c->client)) == 0;
    }
    conn->next = conns->open;
    if (conns->open != NULL) {
        conns->open->prev = conn;
    }
    conns->open = conn;
    if (same >= conns->per_client) {
        shut(conn);
        conns->over_client++;
    }
    pthread_mutex_unlock(&conns->lock);
    return conn;
}

void tb_http_conn_request(tb_http_conns_t *conns, tb_http_conn_t *conn, bool begins)
{
    if (conn == NULL) {
        return;
    }
    pthread_mutex_lock(&conns->lock);
    conn->headers_since_ms = begins ? 0 : tb_monotonic_ms();
    pthread_mutex_unlock(&conns->lock);
}

void tb_http_conn_close(tb_http_conns_t *conns, tb_http_conn_t *conn)
{
    if (conn == NULL) {
        return;
    }
    pthread_mutex_lock(&conns->lock);
    if (conn->prev != NULL) {
        conn->prev->next = conn->next;
    } else {
        conns->open = conn->next;
    }
    if (conn->next != NULL) {
        conn->next->prev = conn->prev;
    }
    pthread_mutex_unlock(&conns->lock);
    free(conn);
}
