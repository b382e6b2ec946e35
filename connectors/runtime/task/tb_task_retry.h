/*
 * tb_task_retry.h - errors.retry.timeout and errors.retry.delay.max.ms: when
 * an operation that failed for a reason that may pass (a plugin's
 * TB_RESULT_RETRY, a converter's TB_RESULT_RETRY) is tried again, as
 * Connect's RetryWithToleranceOperator does for its stages. One schedule
 * for every stage of both engines; the engines wait without holding a pool
 * thread (they return the delay from their step).
 *
 * A tb_task_retry_t is plain data the engine owns, for one operation at a
 * time: the first failure starts its clock, each next one doubles the
 * delay (from 100 ms, up to errors.retry.delay.max.ms), and once
 * errors.retry.timeout has passed since the first the operation is given
 * up, and errors.tolerance decides. Not thread-safe (a task's steps run one
 * at a time).
 */
#ifndef TB_TASK_RETRY_H
#define TB_TASK_RETRY_H

#include <stddef.h>
#include <stdint.h>

#include "connectors/runtime/config/tb_connector_config.h"

typedef struct {
    long long timeout_ms;   /* errors.retry.timeout: 0 no retry, -1 forever */
    long long delay_max_ms; /* errors.retry.delay.max.ms */
    int64_t since_ms;       /* the first failure (monotonic); 0: none pending */
    long long delay_ms;     /* the last delay given */
} tb_task_retry_t;

/* A schedule with nothing pending, from a task's settings (its
 * errors.retry.* keys). */
tb_task_retry_t tb_task_retry_from(const tb_connector_settings_t *settings);

/* After a failure: how long to wait before the next attempt (ms), or -1
 * when errors.retry.timeout is spent (the schedule starts afresh then), and
 * why (the failure's text, size bytes) says so at its end. */
int64_t tb_task_retry_next(tb_task_retry_t *retry, char *why, size_t size);

/* The operation succeeded or was given up: the next failure starts afresh. */
void tb_task_retry_reset(tb_task_retry_t *retry);

#endif
