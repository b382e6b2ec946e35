/* The errors.retry.* schedule of tb_task_retry.h. */
#include "connectors/runtime/task/tb_task_retry.h"

#include <stdio.h>
#include <string.h>

#include "core/tb_time.h"

#define FIRST_DELAY_MS 100

tb_task_retry_t tb_task_retry_from(const tb_connector_settings_t *settings)
{
    return (tb_task_retry_t){
        .timeout_ms = settings->errors_retry_timeout,
        .delay_max_ms = settings->errors_retry_delay_max_ms,
    };
}

int64_t tb_task_retry_next(tb_task_retry_t *retry, char *why, size_t size)
{
    int64_t now = tb_monotonic_ms();
    if (retry->since_ms == 0) {
        retry->since_ms = now;
        /* at least 1 ms: errors.retry.delay.max.ms may be 0 */
        retry->delay_ms = FIRST_DELAY_MS < retry->delay_max_ms ? FIRST_DELAY_MS
                          : retry->delay_max_ms > 0            ? retry->delay_max_ms
                                                               : 1;
    } else if (retry->delay_ms < retry->delay_max_ms) {
        retry->delay_ms = retry->delay_ms * 2 < retry->delay_max_ms ? retry->delay_ms * 2
                                                                    : retry->delay_max_ms;
    }
    if (retry->timeout_ms >= 0 && now - retry->since_ms >= retry->timeout_ms) {
        size_t n = strnlen(why, size);
        snprintf(why + n, size - n, " (errors.retry.timeout=%lld ms spent)",
                 retry->timeout_ms);
        tb_task_retry_reset(retry);
        return -1;
    }
    return retry->delay_ms;
}

void tb_task_retry_reset(tb_task_retry_t *retry)
{
    retry->since_ms = 0;
}
