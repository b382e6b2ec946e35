/*
 * jdbc_outage.c - a run of failed tries told to the operator (tb_jdbc.h):
 * its first failure once, a line again when it has lasted 10 s, then each
 * time it has lasted twice as long as at the last line (at most 10 minutes
 * apart), and its end once. The tries in between (a reconnect's 200 ms
 * steps, the retries of a put) are not logged each.
 */
#include "connectors/jdbc/tb_jdbc.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.task"
#define FIRST_NOTICE_MS 10000
#define NOTICE_MAX_MS 600000

void tb_jdbc_outage_init(tb_jdbc_outage_t *o, const char *connector, int task)
{
    *o = (tb_jdbc_outage_t){.connector = connector, .task = task};
}

void tb_jdbc_outage_failed(tb_jdbc_outage_t *o, const char *reason)
{
    int64_t now = tb_monotonic_ms();
    if (o->since_ms == 0) {
        o->since_ms = now;
        o->gap_ms = FIRST_NOTICE_MS;
        o->notice_at_ms = now + o->gap_ms;
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, o->connector, o->task, "%s", reason);
        return;
    }
    if (now < o->notice_at_ms) {
        return;
    }
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, o->connector, o->task,
                "still failing after %lld s: %s", (long long)((now - o->since_ms) / 1000),
                reason);
    o->gap_ms = o->gap_ms * 2 < NOTICE_MAX_MS ? o->gap_ms * 2 : NOTICE_MAX_MS;
    o->notice_at_ms = now + o->gap_ms;
}

bool tb_jdbc_outage_over(tb_jdbc_outage_t *o, const char *what)
{
    if (o->since_ms == 0) {
        return false;
    }
    TB_LOG_TASK(TB_LOG_INFO, LOGGER, o->connector, o->task, "%s after %.1f s of failures",
                what, (double)(tb_monotonic_ms() - o->since_ms) / 1000.0);
    o->since_ms = 0;
    return true;
}
