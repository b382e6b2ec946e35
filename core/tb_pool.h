/*
 * tb_pool.h - the bounded task pool.
 *
 * A fixed number of threads run jobs. A job is a function the pool calls
 * when the job is ready; it does a bounded amount of work and says when it
 * wants to run next: again at once, after a delay, or only when woken. An
 * idle job therefore holds no thread, and the pool's thread count does not
 * grow with the number of jobs (one extra thread keeps the timers).
 *
 * A job never runs on two threads at once. tb_pool_job_wake() may be called
 * from any thread, including librdkafka's (a queue event callback), and from
 * the job itself; a wake that arrives while the job runs makes it run once
 * more afterwards, so no wake is lost.
 */
#ifndef TB_POOL_H
#define TB_POOL_H

#include <stdint.h>

typedef struct tb_pool tb_pool_t;
typedef struct tb_pool_job tb_pool_job_t;

/* What a job's run function returns. */
#define TB_POOL_RUN_AGAIN 0 /* ready again now (yields to other jobs first) */
#define TB_POOL_PARK (-1)   /* run only when woken */
/* Any value > 0: run again after that many milliseconds, or when woken,
 * whichever comes first. */

typedef int64_t (*tb_pool_run_fn)(void *opaque);

/* Starts threads worker threads. Returns NULL on failure. */
tb_pool_t *tb_pool_create(int threads);

/* Cancels every job still registered, waits for running ones, joins the
 * threads and frees the pool. NULL is a no-op. */
void tb_pool_destroy(tb_pool_t *pool);

/* Registers a job. It does not run until first woken. opaque is borrowed
 * and must stay valid until tb_pool_job_destroy() returns. */
tb_pool_job_t *tb_pool_job_create(tb_pool_t *pool, tb_pool_run_fn run, void *opaque);

/* Makes the job run soon. Thread-safe; a no-op on a cancelled job. */
void tb_pool_job_wake(tb_pool_job_t *job);

/* Cancels the job, waits until its run function is not running (unless
 * called from that run function itself, where it only cancels) and frees it.
 * After it returns the run function is never called again. NULL is a no-op. */
void tb_pool_job_destroy(tb_pool_job_t *job);

/* Number of worker threads (for metrics and the thread-count test). */
int tb_pool_threads(const tb_pool_t *pool);

#endif
