/*
 * jdbc_connect.c - connecting in bounded steps (tb_jdbc.h): a task's
 * first connection takes connection.attempts attempts,
 * connection.backoff.ms apart, a later one (after a lost connection) one
 * attempt per retry of the put; no step holds its caller, a pool thread,
 * longer than it allows, the waits between attempts included.
 */
#include <stdio.h>

#include "connectors/jdbc/tb_jdbc.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.task"

void tb_jdbc_connecting_init(tb_jdbc_connecting_t *c, const tb_jdbc_dialect_t *dialect,
                             const tb_jdbc_settings_t *settings,
                             const tb_limits_t *limits, const char *connector, int task)
{
    *c = (tb_jdbc_connecting_t){.dialect = dialect,
                                .settings = settings,
                                .limits = limits,
                                .connector = connector,
                                .task = task,
                                .attempts = settings->connection_attempts > 0
                                                ? settings->connection_attempts
                                                : 1};
}

void tb_jdbc_connecting_cancel(tb_jdbc_connecting_t *c)
{
    if (c->dialect != NULL) {
        c->dialect->disconnect(c->pending);
    }
    c->pending = NULL;
}

tb_jdbc_rc_t tb_jdbc_connect_step(tb_jdbc_connecting_t *c, int step_ms,
                                  tb_jdbc_conn_t **out, int64_t *wait_ms, char *errstr,
                                  size_t errstr_size)
{
    const tb_jdbc_settings_t *s = c->settings;
    int64_t now = tb_monotonic_ms();
    tb_jdbc_rc_t rc = TB_JDBC_OK;
    *wait_ms = step_ms;
    if (c->pending == NULL && now < c->next_at_ms) {
        *wait_ms = c->next_at_ms - now;
        snprintf(errstr, errstr_size, "connection attempt %d of %d to %s in %lld ms",
                 c->attempt + 1, c->attempts, s->shown_url, (long long)*wait_ms);
        return TB_JDBC_PENDING;
    }
    if (c->pending == NULL) {
        c->attempt++;
        c->pending = c->dialect->connect(s, c->limits, &rc, errstr, errstr_size);
    }
    if (c->pending != NULL) {
        rc = c->dialect->connect_poll(c->pending, step_ms, errstr, errstr_size);
    }
    if (rc == TB_JDBC_OK) {
        *out = c->pending;
        c->pending = NULL;
        c->attempt = 0;
        c->attempts = 1; /* connected once: reconnects are the put's retries */
        return TB_JDBC_OK;
    }
    if (rc == TB_JDBC_PENDING) {
        return rc;
    }
    tb_jdbc_connecting_cancel(c);
    if (rc == TB_JDBC_FATAL || c->attempt >= c->attempts) {
        c->attempt = 0; /* the next step starts a new series */
        return rc;
    }
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, c->connector, c->task,
                "connection attempt %d of %d failed, trying again in %lld ms: %s",
                c->attempt, c->attempts, s->connection_backoff_ms, errstr);
    c->next_at_ms = now + s->connection_backoff_ms;
    *wait_ms = s->connection_backoff_ms;
    return TB_JDBC_PENDING;
}

tb_jdbc_conn_t *tb_jdbc_connect_blocking(const tb_jdbc_dialect_t *d,
                                         const tb_jdbc_settings_t *s,
                                         const tb_limits_t *limits, tb_jdbc_rc_t *rc,
                                         char *errstr, size_t errstr_size)
{
    tb_jdbc_conn_t *c = d->connect(s, limits, rc, errstr, errstr_size);
    while (c != NULL &&
           (*rc = d->connect_poll(c, 1000, errstr, errstr_size)) != TB_JDBC_OK) {
        if (*rc != TB_JDBC_PENDING) {
            d->disconnect(c);
            c = NULL;
        }
    }
    return c;
}
