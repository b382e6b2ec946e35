/*
 * tb_pool.c - the bounded task pool (see tb_pool.h for the contract).
 *
 * Threads: pool->threads workers ("tb-pool-<i>") plus one timer thread
 * ("tb-timer"), all started by tb_pool_create() and joined by
 * tb_pool_destroy(). No other thread is ever started, whatever the number
 * of jobs. No signal is blocked here: the threads inherit the creator's mask.
 *
 * Locking: one mutex, pool->lock, guards every mutable field of the pool and
 * of its jobs (state, queue links, timer slot, registration links). A job's
 * run, opaque and pool fields are written once before the job is registered
 * and only read afterwards. Run functions are called without the lock.
 *
 * Job states (a job is in exactly one):
 *   IDLE           registered, not in the run queue and not running; it may
 *                  hold a timer (heap_index != TB_JOB_NO_TIMER).
 *   QUEUED         in the run queue, exactly once.
 *   RUNNING        a worker is inside its run function.
 *   RUNNING_WOKEN  as RUNNING, and woken meanwhile: it is queued again as soon
 *                  as the run returns, whatever the run returned.
 *   CANCELLED      destroyed; never queued or run again. in_run tells whether
 *                  a worker is still inside the run that was going on.
 * Only a worker moves a job to RUNNING, taking it off the queue, so a job
 * never runs on two threads at once.
 *
 * Timers: a binary min-heap of IDLE jobs ordered by deadline, each job
 * knowing its slot. A wake or a destroy removes the job's timer in O(log n);
 * an array scanned in O(n) would make every wake, destroy and expiry cost a
 * pass over all timed jobs, and the service registers hundreds of jobs, most
 * of them waiting on a timer. The heap's capacity is reserved when a job is created
 * (one slot per registered job), so arming a timer never allocates or fails.
 */
#include "core/tb_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TB_JOB_NO_TIMER SIZE_MAX
#define TB_NS_PER_MS INT64_C(1000000)
#define TB_NS_PER_S INT64_C(1000000000)

typedef enum {
    TB_JOB_IDLE,
    TB_JOB_QUEUED,
    TB_JOB_RUNNING,
    TB_JOB_RUNNING_WOKEN,
    TB_JOB_CANCELLED,
} tb_job_state_t;

/* Owned by the pool from tb_pool_job_create() on. It is freed by
 * tb_pool_job_destroy(), by the worker running it when that destroy came from
 * its own run function (free_after_run), or by tb_pool_destroy(). */
struct tb_pool_job {
    tb_pool_t *pool;
    tb_pool_run_fn run;
    void *opaque; /* borrowed from the creator */
    tb_job_state_t state;
    bool in_run;         /* a worker is inside run() */
    bool free_after_run; /* destroyed from its own run: the worker frees it */
    int64_t deadline_ns; /* CLOCK_MONOTONIC; meaningful while in the heap */
    size_t heap_index;   /* slot in pool->heap, or TB_JOB_NO_TIMER */
    tb_pool_job_t *queue_prev, *queue_next; /* run queue links (QUEUED only) */
    tb_pool_job_t *prev, *next;             /* pool->jobs links (registered) */
};

struct tb_pool {
    pthread_mutex_t lock;
    pthread_cond_t work_cond;  /* workers: the queue got a job, or stopping */
    pthread_cond_t timer_cond; /* timer thread, CLOCK_MONOTONIC: new earliest
                                  deadline, or stopping */
    pthread_cond_t idle_cond;  /* destroyers: a cancelled job's run returned */
    bool stopping;
    int threads;
    int workers_started;
    bool timer_started;
    pthread_t *workers; /* owned, threads entries */
    pthread_t timer;
    tb_pool_job_t *queue_head, *queue_tail; /* FIFO of QUEUED jobs */
    tb_pool_job_t *jobs;                    /* every registered job */
    size_t job_count;
    tb_pool_job_t **heap; /* owned array of borrowed jobs; heap_cap >= job_count */
    size_t heap_len, heap_cap;
};

/* The job whose run function this thread is executing, if any. */
static _Thread_local tb_pool_job_t *tb_current_job;

static int64_t tb_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * TB_NS_PER_S + ts.tv_nsec;
}

/* now + ms, saturating instead of overflowing for huge delays. */
static int64_t tb_deadline_after(int64_t ms)
{
    int64_t now = tb_now_ns();

    if (ms > (INT64_MAX - now) / TB_NS_PER_MS) {
        return INT64_MAX;
    }
    return now + ms * TB_NS_PER_MS;
}

/* ---- run queue (caller holds pool->lock) ---- */

/* Queues job at the back, waking no worker: for the worker that ran it,
 * which takes the queue's head next itself. */
static void tb_queue_append(tb_pool_t *pool, tb_pool_job_t *job)
{
    job->state = TB_JOB_QUEUED;
    job->queue_next = NULL;
    job->queue_prev = pool->queue_tail;
    if (pool->queue_tail != NULL) {
        pool->queue_tail->queue_next = job;
    } else {
        pool->queue_head = job;
    }
    pool->queue_tail = job;
}

/* Queues job at the back and wakes a waiting worker for it. */
static void tb_queue_push(tb_pool_t *pool, tb_pool_job_t *job)
{
    tb_queue_append(pool, job);
    pthread_cond_signal(&pool->work_cond);
}

static void tb_queue_remove(tb_pool_t *pool, tb_pool_job_t *job)
{
    if (job->queue_prev != NULL) {
        job->queue_prev->queue_next = job->queue_next;
    } else {
        pool->queue_head = job->queue_next;
    }
    if (job->queue_next != NULL) {
        job->queue_next->queue_prev = job->queue_prev;
    } else {
        pool->queue_tail = job->queue_prev;
    }
    job->queue_prev = NULL;
    job->queue_next = NULL;
}

/* ---- timer heap (caller holds pool->lock) ---- */

static void tb_heap_set(tb_pool_t *pool, size_t i, tb_pool_job_t *job)
{
    pool->heap[i] = job;
    job->heap_index = i;
}

static void tb_heap_swap(tb_pool_t *pool, size_t a, size_t b)
{
    tb_pool_job_t *job_a = pool->heap[a];

    tb_heap_set(pool, a, pool->heap[b]);
    tb_heap_set(pool, b, job_a);
}

static void tb_heap_sift_up(tb_pool_t *pool, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (pool->heap[parent]->deadline_ns <= pool->heap[i]->deadline_ns) {
            break;
        }
        tb_heap_swap(pool, i, parent);
        i = parent;
    }
}

static void tb_heap_sift_down(tb_pool_t *pool, size_t i)
{
    for (;;) {
        size_t least = i;
        size_t left = 2 * i + 1;
        size_t right = left + 1;
        if (left < pool->heap_len &&
            pool->heap[left]->deadline_ns < pool->heap[least]->deadline_ns) {
            least = left;
        }
        if (right < pool->heap_len &&
            pool->heap[right]->deadline_ns < pool->heap[least]->deadline_ns) {
            least = right;
        }
        if (least == i) {
            return;
        }
        tb_heap_swap(pool, i, least);
        i = least;
    }
}

/* Arms the job's timer. Capacity was reserved by tb_pool_job_create(). */
static void tb_heap_push(tb_pool_t *pool, tb_pool_job_t *job, int64_t deadline_ns)
{
    job->deadline_ns = deadline_ns;
    tb_heap_set(pool, pool->heap_len++, job);
    tb_heap_sift_up(pool, job->heap_index);
    if (job->heap_index == 0) {
        /* New earliest deadline: the timer thread must wait less. */
        pthread_cond_signal(&pool->timer_cond);
    }
}

/* Disarms the job's timer, if any. The timer thread may still wake up at
 * the old deadline; it then finds nothing due and waits again. */
static void tb_heap_remove(tb_pool_t *pool, tb_pool_job_t *job)
{
    size_t i = job->heap_index;
    tb_pool_job_t *moved;

    if (i == TB_JOB_NO_TIMER) {
        return;
    }
    job->heap_index = TB_JOB_NO_TIMER;
    moved = pool->heap[--pool->heap_len];
    if (moved == job) {
        return;
    }
    /* The last job fills the hole, then moves up or down to its place. */
    tb_heap_set(pool, i, moved);
    tb_heap_sift_up(pool, i);
    tb_heap_sift_down(pool, moved->heap_index);
}

/* Makes room for one more timer; called for each new job. */
static bool tb_heap_reserve(tb_pool_t *pool)
{
    size_t cap = pool->heap_cap == 0 ? 16 : pool->heap_cap * 2;
    tb_pool_job_t **heap;

    if (pool->job_count < pool->heap_cap) {
        return true;
    }
    heap = realloc(pool->heap, cap * sizeof(*heap));
    if (heap == NULL) {
        return false;
    }
    pool->heap = heap;
    pool->heap_cap = cap;
    return true;
}

/* ---- job registration and state changes (caller holds pool->lock) ---- */

static void tb_pool_register(tb_pool_t *pool, tb_pool_job_t *job)
{
    job->prev = NULL;
    job->next = pool->jobs;
    if (pool->jobs != NULL) {
        pool->jobs->prev = job;
    }
    pool->jobs = job;
    pool->job_count++;
}

static void tb_pool_unregister(tb_pool_t *pool, tb_pool_job_t *job)
{
    if (job->prev != NULL) {
        job->prev->next = job->next;
    } else {
        pool->jobs = job->next;
    }
    if (job->next != NULL) {
        job->next->prev = job->prev;
    }
    job->prev = NULL;
    job->next = NULL;
    pool->job_count--;
}

/* Takes the job off the queue and the timer heap for good. */
static void tb_job_cancel(tb_pool_t *pool, tb_pool_job_t *job)
{
    if (job->state == TB_JOB_QUEUED) {
        tb_queue_remove(pool, job);
    }
    tb_heap_remove(pool, job);
    job->state = TB_JOB_CANCELLED;
}

/* Acts on what a (not cancelled) run function returned. A job to run
 * again goes to the back of the queue, so that others run first, without
 * waking a worker: the one that ran it takes the queue's head next, so
 * the queue holds no more jobs than before that no worker is woken for.
 * Waking one made a task that runs step after step wake another worker
 * at each step, which found the queue empty or took the task over. */
static void tb_job_schedule(tb_pool_t *pool, tb_pool_job_t *job, int64_t next)
{
    if (next == TB_POOL_RUN_AGAIN) {
        tb_queue_append(pool, job);
    } else if (next > 0) {
        job->state = TB_JOB_IDLE;
        tb_heap_push(pool, job, tb_deadline_after(next));
    } else {
        job->state = TB_JOB_IDLE; /* TB_POOL_PARK, or any other negative */
    }
}

/* Called by the worker, lock held, once the job's run function returned. */
static void tb_job_after_run(tb_pool_t *pool, tb_pool_job_t *job, int64_t next)
{
    job->in_run = false;
    if (job->state == TB_JOB_CANCELLED) {
        if (job->free_after_run) {
            free(job); /* unregistered by its own tb_pool_job_destroy() */
        } else {
            pthread_cond_broadcast(&pool->idle_cond);
        }
    } else if (job->state == TB_JOB_RUNNING_WOKEN) {
        tb_queue_append(pool, job); /* as a run again (tb_job_schedule) */
    } else {
        tb_job_schedule(pool, job, next);
    }
}

/* ---- threads ---- */

/* Waits for a queued job and takes it; NULL once the pool is stopping. */
static tb_pool_job_t *tb_pool_take_job(tb_pool_t *pool)
{
    tb_pool_job_t *job;

    while (!pool->stopping && pool->queue_head == NULL) {
        pthread_cond_wait(&pool->work_cond, &pool->lock);
    }
    if (pool->stopping) {
        return NULL;
    }
    job = pool->queue_head;
    tb_queue_remove(pool, job);
    job->state = TB_JOB_RUNNING;
    job->in_run = true;
    return job;
}

static void *tb_pool_worker_main(void *arg)
{
    tb_pool_t *pool = arg;
    tb_pool_job_t *job;
    int64_t next;

    pthread_mutex_lock(&pool->lock);
    while ((job = tb_pool_take_job(pool)) != NULL) {
        pthread_mutex_unlock(&pool->lock);
        tb_current_job = job;
        next = job->run(job->opaque);
        tb_current_job = NULL;
        pthread_mutex_lock(&pool->lock);
        tb_job_after_run(pool, job, next);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Sleeps until the earliest deadline, or until told of an earlier one. */
static void tb_pool_timer_wait(tb_pool_t *pool, int64_t deadline_ns)
{
    struct timespec ts = {
        .tv_sec = (time_t)(deadline_ns / TB_NS_PER_S),
        .tv_nsec = (long)(deadline_ns % TB_NS_PER_S),
    };

    pthread_cond_timedwait(&pool->timer_cond, &pool->lock, &ts);
}

static void *tb_pool_timer_main(void *arg)
{
    tb_pool_t *pool = arg;
    tb_pool_job_t *job;

    pthread_mutex_lock(&pool->lock);
    while (!pool->stopping) {
        if (pool->heap_len == 0) {
            pthread_cond_wait(&pool->timer_cond, &pool->lock);
            continue;
        }
        job = pool->heap[0];
        if (job->deadline_ns > tb_now_ns()) {
            tb_pool_timer_wait(pool, job->deadline_ns);
            continue;
        }
        tb_heap_remove(pool, job);
        tb_queue_push(pool, job); /* heap holds IDLE jobs only */
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static bool tb_pool_start_threads(tb_pool_t *pool)
{
    char name[20]; /* "tb-pool-" + any int; the kernel keeps 15 chars */

    for (int i = 0; i < pool->threads; i++) {
        if (pthread_create(&pool->workers[i], NULL, tb_pool_worker_main, pool) != 0) {
            return false;
        }
        pool->workers_started++;
        snprintf(name, sizeof(name), "tb-pool-%d", i);
        pthread_setname_np(pool->workers[i], name); /* cosmetic: failure ignored */
    }
    if (pthread_create(&pool->timer, NULL, tb_pool_timer_main, pool) != 0) {
        return false;
    }
    pool->timer_started = true;
    pthread_setname_np(pool->timer, "tb-timer");
    return true;
}

/* The timer thread's condition variable measures time on CLOCK_MONOTONIC,
 * so wall-clock steps neither delay nor hasten timers. */
static bool tb_pool_init_timer_cond(tb_pool_t *pool)
{
    pthread_condattr_t attr;
    bool ok;

    if (pthread_condattr_init(&attr) != 0) {
        return false;
    }
    ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
         pthread_cond_init(&pool->timer_cond, &attr) == 0;
    pthread_condattr_destroy(&attr);
    return ok;
}

/* Initialises the lock and condition variables: all of them or none. */
static bool tb_pool_init_sync(tb_pool_t *pool)
{
    if (!tb_pool_init_timer_cond(pool)) {
        return false;
    }
    if (pthread_mutex_init(&pool->lock, NULL) != 0) {
        goto fail_timer_cond;
    }
    if (pthread_cond_init(&pool->work_cond, NULL) != 0) {
        goto fail_lock;
    }
    if (pthread_cond_init(&pool->idle_cond, NULL) != 0) {
        goto fail_work_cond;
    }
    return true;

fail_work_cond:
    pthread_cond_destroy(&pool->work_cond);
fail_lock:
    pthread_mutex_destroy(&pool->lock);
fail_timer_cond:
    pthread_cond_destroy(&pool->timer_cond);
    return false;
}

tb_pool_t *tb_pool_create(int threads)
{
    tb_pool_t *pool;

    if (threads <= 0) {
        return NULL;
    }
    pool = calloc(1, sizeof(*pool));
    if (pool == NULL) {
        return NULL;
    }
    pool->threads = threads;
    pool->workers = calloc((size_t)threads, sizeof(*pool->workers));
    if (pool->workers == NULL || !tb_pool_init_sync(pool)) {
        goto fail;
    }
    if (!tb_pool_start_threads(pool)) {
        tb_pool_destroy(pool); /* joins the threads already started */
        return NULL;
    }
    return pool;

fail:
    free(pool->workers);
    free(pool);
    return NULL;
}

/* Cancels every registered job, tells every thread to stop once its current
 * run returns, and joins them. */
static void tb_pool_stop_threads(tb_pool_t *pool)
{
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    for (tb_pool_job_t *job = pool->jobs; job != NULL; job = job->next) {
        tb_job_cancel(pool, job);
    }
    pthread_cond_broadcast(&pool->work_cond);
    pthread_cond_signal(&pool->timer_cond);
    pthread_mutex_unlock(&pool->lock);

    for (int i = 0; i < pool->workers_started; i++) {
        pthread_join(pool->workers[i], NULL);
    }
    if (pool->timer_started) {
        pthread_join(pool->timer, NULL);
    }
}

void tb_pool_destroy(tb_pool_t *pool)
{
    tb_pool_job_t *job;

    if (pool == NULL) {
        return;
    }
    tb_pool_stop_threads(pool);
    /* No thread is left: the jobs still registered are ours to free. */
    while ((job = pool->jobs) != NULL) {
        tb_pool_unregister(pool, job);
        free(job);
    }
    pthread_cond_destroy(&pool->idle_cond);
    pthread_cond_destroy(&pool->work_cond);
    pthread_cond_destroy(&pool->timer_cond);
    pthread_mutex_destroy(&pool->lock);
    free(pool->heap);
    free(pool->workers);
    free(pool);
}

tb_pool_job_t *tb_pool_job_create(tb_pool_t *pool, tb_pool_run_fn run, void *opaque)
{
    tb_pool_job_t *job = calloc(1, sizeof(*job));

    if (job == NULL) {
        return NULL;
    }
    job->pool = pool;
    job->run = run;
    job->opaque = opaque;
    job->state = TB_JOB_IDLE;
    job->heap_index = TB_JOB_NO_TIMER;

    pthread_mutex_lock(&pool->lock);
    if (!tb_heap_reserve(pool)) {
        pthread_mutex_unlock(&pool->lock);
        free(job);
        return NULL;
    }
    tb_pool_register(pool, job);
    pthread_mutex_unlock(&pool->lock);
    return job;
}

void tb_pool_job_wake(tb_pool_job_t *job)
{
    tb_pool_t *pool = job->pool;

    pthread_mutex_lock(&pool->lock);
    switch (job->state) {
    case TB_JOB_IDLE:
        tb_heap_remove(pool, job); /* the wake replaces any pending timer */
        tb_queue_push(pool, job);
        break;
    case TB_JOB_RUNNING:
        job->state = TB_JOB_RUNNING_WOKEN;
        break;
    case TB_JOB_QUEUED:
    case TB_JOB_RUNNING_WOKEN:
    case TB_JOB_CANCELLED:
        break; /* already going to run, or never again */
    }
    pthread_mutex_unlock(&pool->lock);
}

void tb_pool_job_destroy(tb_pool_job_t *job)
{
    tb_pool_t *pool;

    if (job == NULL) {
        return;
    }
    pool = job->pool;
    pthread_mutex_lock(&pool->lock);
    tb_job_cancel(pool, job);
    tb_pool_unregister(pool, job);
    if (tb_current_job == job) {
        /* Inside its own run: the worker frees it when the run returns. */
        job->free_after_run = true;
        pthread_mutex_unlock(&pool->lock);
        return;
    }
    while (job->in_run) {
        pthread_cond_wait(&pool->idle_cond, &pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    free(job);
}

int tb_pool_threads(const tb_pool_t *pool)
{
    return pool->threads;
}
