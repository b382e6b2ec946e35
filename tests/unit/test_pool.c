/*
 * test_pool.c - the bounded task pool of core/tb_pool.h: wakes,
 * reruns, timers, parking, destroy in every state, fairness and a thread
 * count that does not grow with the number of jobs.
 *
 * Every wait is a bounded poll on a condition (WAIT_UNTIL). Where a test
 * must show that a job did NOT run again, it drains a one-thread pool: the
 * queue is FIFO, so once two marker jobs woken one after the other have run,
 * everything queued before has run too.
 */
#include "tb_test.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_pool.h"

#define WAIT_LIMIT_MS 10000

/* Polls cond every millisecond; fails the test after WAIT_LIMIT_MS. */
#define WAIT_UNTIL(cond)                                                                 \
    do {                                                                                 \
        int64_t wait_deadline_ = now_ms() + WAIT_LIMIT_MS;                               \
        while (!(cond)) {                                                                \
            assert_true(now_ms() < wait_deadline_);                                      \
            sleep_ms(1);                                                                 \
        }                                                                                \
    } while (0)

/* What a probe job records and returns. Shared between the test thread and
 * the pool's threads, so every field is atomic. */
typedef struct {
    atomic_int runs;      /* runs started */
    atomic_int returns;   /* runs about to return */
    atomic_bool in_run;   /* set for the length of a run */
    atomic_int overlaps;  /* runs that found another run in progress */
    atomic_bool hold;     /* while set, a run waits before returning */
    atomic_llong next;    /* what the run returns */
    atomic_llong last_ms; /* CLOCK_MONOTONIC time the last run started */
} probe_t;

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static void probe_init(probe_t *p, int64_t next)
{
    atomic_init(&p->runs, 0);
    atomic_init(&p->returns, 0);
    atomic_init(&p->in_run, false);
    atomic_init(&p->overlaps, 0);
    atomic_init(&p->hold, false);
    atomic_init(&p->next, next);
    atomic_init(&p->last_ms, 0);
}

static void probe_enter(probe_t *p)
{
    if (atomic_exchange(&p->in_run, true)) {
        atomic_fetch_add(&p->overlaps, 1);
    }
    atomic_store(&p->last_ms, now_ms());
    atomic_fetch_add(&p->runs, 1);
}

static int64_t probe_leave(probe_t *p)
{
    atomic_store(&p->in_run, false);
    atomic_fetch_add(&p->returns, 1);
    return atomic_load(&p->next);
}

static int64_t probe_run(void *opaque)
{
    probe_t *p = opaque;

    probe_enter(p);
    while (atomic_load(&p->hold)) {
        sleep_ms(1);
    }
    return probe_leave(p);
}

/* Runs one parked marker job to completion. */
static void run_marker(tb_pool_t *pool)
{
    probe_t marker;
    tb_pool_job_t *job;

    probe_init(&marker, TB_POOL_PARK);
    job = tb_pool_job_create(pool, probe_run, &marker);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&marker.returns) == 1);
    tb_pool_job_destroy(job);
}

/* On a one-thread pool: returns once every job queued before the call, or
 * requeued by a run in progress at the call, has run. The first marker waits
 * out that run (and its requeue), the second everything queued before it. */
static void drain(tb_pool_t *pool)
{
    assert_int_equal(tb_pool_threads(pool), 1);
    run_marker(pool);
    run_marker(pool);
}

static int count_tasks(void)
{
    DIR *dir = opendir("/proc/self/task");
    struct dirent *entry;
    int n = 0;

    assert_non_null(dir);
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] != '.') {
            n++;
        }
    }
    closedir(dir);
    return n;
}

/* Number of this process's threads whose name starts with prefix. */
static int count_named_tasks(const char *prefix)
{
    DIR *dir = opendir("/proc/self/task");
    struct dirent *entry;
    char path[300];
    char name[32];
    FILE *f;
    int n = 0;

    assert_non_null(dir);
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", entry->d_name);
        f = fopen(path, "r");
        if (f == NULL) {
            continue; /* the thread just exited */
        }
        if (fgets(name, sizeof(name), f) != NULL &&
            strncmp(name, prefix, strlen(prefix)) == 0) {
            n++;
        }
        fclose(f);
    }
    closedir(dir);
    return n;
}

static void test_wake_runs_once(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    probe_init(&p, TB_POOL_PARK);
    job = tb_pool_job_create(pool, probe_run, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.runs) == 1);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 1);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

static void test_not_run_before_first_wake(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    probe_init(&p, TB_POOL_RUN_AGAIN);
    job = tb_pool_job_create(pool, probe_run, &p);
    assert_non_null(job);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 0);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

static void test_wake_while_running_runs_exactly_once_more(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(2);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    probe_init(&p, TB_POOL_PARK);
    atomic_store(&p.hold, true);
    job = tb_pool_job_create(pool, probe_run, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.runs) == 1);
    /* Three wakes while it runs: one more run, on either thread, not three
     * and not alongside the first. */
    tb_pool_job_wake(job);
    tb_pool_job_wake(job);
    tb_pool_job_wake(job);
    assert_int_equal(atomic_load(&p.runs), 1);
    atomic_store(&p.hold, false);
    WAIT_UNTIL(atomic_load(&p.returns) == 2);
    tb_pool_job_destroy(job);
    assert_int_equal(atomic_load(&p.runs), 2);
    assert_int_equal(atomic_load(&p.overlaps), 0);
    tb_pool_destroy(pool);
}

static void test_wake_while_running_on_one_thread_no_third_run(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    probe_init(&p, TB_POOL_PARK);
    atomic_store(&p.hold, true);
    job = tb_pool_job_create(pool, probe_run, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.runs) == 1);
    tb_pool_job_wake(job);
    tb_pool_job_wake(job);
    atomic_store(&p.hold, false);
    WAIT_UNTIL(atomic_load(&p.returns) == 2);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 2);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

/* A job that wakes itself from its own run, once. */
typedef struct {
    probe_t probe;
    tb_pool_job_t *job;
} self_waker_t;

static int64_t self_waker_run(void *opaque)
{
    self_waker_t *w = opaque;

    probe_enter(&w->probe);
    if (atomic_load(&w->probe.runs) == 1) {
        tb_pool_job_wake(w->job);
    }
    return probe_leave(&w->probe);
}

static void test_wake_from_own_run(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    self_waker_t w;

    assert_non_null(pool);
    probe_init(&w.probe, TB_POOL_PARK);
    w.job = tb_pool_job_create(pool, self_waker_run, &w);
    assert_non_null(w.job);
    tb_pool_job_wake(w.job);
    WAIT_UNTIL(atomic_load(&w.probe.returns) == 2);
    drain(pool);
    assert_int_equal(atomic_load(&w.probe.runs), 2);
    tb_pool_job_destroy(w.job);
    tb_pool_destroy(pool);
}

/* Wakers and the job race; every wake must be followed by a run that starts
 * after it, and no two runs may overlap. */
typedef struct {
    probe_t probe;
    tb_pool_job_t *job;
    atomic_int wakes; /* wakes issued */
    atomic_int seen;  /* the highest wakes value a run started after */
} race_t;

static int64_t race_run(void *opaque)
{
    race_t *r = opaque;
    int wakes = atomic_load(&r->wakes);

    probe_enter(&r->probe);
    if (wakes > atomic_load(&r->seen)) {
        atomic_store(&r->seen, wakes); /* only one run at a time writes */
    }
    for (volatile int spin = 0; spin < 2000; spin++) {
    }
    return probe_leave(&r->probe);
}

static void *race_waker(void *arg)
{
    race_t *r = arg;

    for (int i = 0; i < 2000; i++) {
        atomic_fetch_add(&r->wakes, 1);
        tb_pool_job_wake(r->job);
    }
    return NULL;
}

static void test_concurrent_wakes_are_never_lost(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(2);
    race_t r;
    pthread_t wakers[2];

    assert_non_null(pool);
    probe_init(&r.probe, TB_POOL_PARK);
    atomic_init(&r.wakes, 0);
    atomic_init(&r.seen, 0);
    r.job = tb_pool_job_create(pool, race_run, &r);
    assert_non_null(r.job);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_create(&wakers[i], NULL, race_waker, &r), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(wakers[i], NULL);
    }
    WAIT_UNTIL(atomic_load(&r.seen) == 4000);
    tb_pool_job_destroy(r.job);
    assert_int_equal(atomic_load(&r.probe.overlaps), 0);
    assert_true(atomic_load(&r.probe.runs) >= 1);
    assert_true(atomic_load(&r.probe.runs) <= 4000);
    tb_pool_destroy(pool);
}

/* Returns TB_POOL_RUN_AGAIN for its first four runs, then parks. */
static int64_t five_runs(void *opaque)
{
    probe_t *p = opaque;

    probe_enter(p);
    atomic_store(&p->next, atomic_load(&p->runs) < 5 ? TB_POOL_RUN_AGAIN : TB_POOL_PARK);
    return probe_leave(p);
}

static void test_run_again_reruns(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    probe_init(&p, TB_POOL_RUN_AGAIN);
    job = tb_pool_job_create(pool, five_runs, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 5);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 5);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

/* Returns the probe's next on its first run, then parks. */
static int64_t once_then_park(void *opaque)
{
    probe_t *p = opaque;
    int64_t next;

    probe_enter(p);
    next = atomic_load(&p->runs) == 1 ? atomic_load(&p->next) : TB_POOL_PARK;
    probe_leave(p);
    return next;
}

static void test_timed_job_runs_again_after_its_delay(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;
    int64_t first;

    assert_non_null(pool);
    probe_init(&p, 50);
    job = tb_pool_job_create(pool, once_then_park, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.runs) == 1);
    first = atomic_load(&p.last_ms);
    WAIT_UNTIL(atomic_load(&p.returns) == 2);
    /* Never early: the deadline is 50 ms after the first run returned. */
    assert_true(atomic_load(&p.last_ms) - first >= 50);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 2);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

static void test_wake_before_delay_runs_early(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    /* The longest delay (its deadline must saturate, not overflow): only a
     * wake can run it again. */
    probe_init(&p, INT64_MAX);
    job = tb_pool_job_create(pool, probe_run, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 1);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 2);
    assert_int_equal(atomic_load(&p.runs), 2);
    /* Destroyed with its timer armed: the timer must go with it. */
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

static void test_wake_cancels_the_pending_timer(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;
    int64_t first;

    assert_non_null(pool);
    probe_init(&p, 100);
    job = tb_pool_job_create(pool, once_then_park, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 1);
    first = atomic_load(&p.last_ms);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 2);
    /* Let the old deadline pass: the cancelled timer must not run it. */
    WAIT_UNTIL(now_ms() - first >= 300);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 2);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

static void test_timers_fire_in_deadline_order(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p[3];
    tb_pool_job_t *job[3];
    const int64_t delays[3] = {300, 100, 200};

    assert_non_null(pool);
    for (int i = 0; i < 3; i++) {
        probe_init(&p[i], delays[i]);
        job[i] = tb_pool_job_create(pool, once_then_park, &p[i]);
        assert_non_null(job[i]);
        tb_pool_job_wake(job[i]);
    }
    for (int i = 0; i < 3; i++) {
        WAIT_UNTIL(atomic_load(&p[i].returns) == 2);
    }
    assert_true(atomic_load(&p[1].last_ms) <= atomic_load(&p[2].last_ms));
    assert_true(atomic_load(&p[2].last_ms) <= atomic_load(&p[0].last_ms));
    for (int i = 0; i < 3; i++) {
        tb_pool_job_destroy(job[i]);
    }
    tb_pool_destroy(pool);
}

static void test_parked_job_runs_only_when_woken(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t p;
    tb_pool_job_t *job;

    assert_non_null(pool);
    probe_init(&p, TB_POOL_PARK);
    job = tb_pool_job_create(pool, probe_run, &p);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 1);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 1);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&p.returns) == 2);
    drain(pool);
    assert_int_equal(atomic_load(&p.runs), 2);
    tb_pool_job_destroy(job);
    tb_pool_destroy(pool);
}

/* Destroys a job from another thread while it runs; the run checks that the
 * destroy has not returned before the run itself does. */
typedef struct {
    probe_t probe;
    tb_pool_job_t *job;
    atomic_bool destroy_called;
    atomic_bool destroy_returned;
    atomic_bool returned_too_early;
} slow_destroy_t;

static int64_t slow_run(void *opaque)
{
    slow_destroy_t *s = opaque;
    int64_t until;

    probe_enter(&s->probe);
    while (!atomic_load(&s->destroy_called)) {
        sleep_ms(1);
    }
    /* Keep running a while so the destroy has to wait for us. */
    until = now_ms() + 100;
    while (now_ms() < until) {
        if (atomic_load(&s->destroy_returned)) {
            atomic_store(&s->returned_too_early, true);
        }
        sleep_ms(1);
    }
    return probe_leave(&s->probe);
}

static void *destroyer(void *arg)
{
    slow_destroy_t *s = arg;

    atomic_store(&s->destroy_called, true);
    tb_pool_job_destroy(s->job);
    atomic_store(&s->destroy_returned, true);
    return NULL;
}

static void test_destroy_waits_for_a_running_job(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(2);
    slow_destroy_t s;
    pthread_t thread;

    assert_non_null(pool);
    probe_init(&s.probe, TB_POOL_RUN_AGAIN);
    atomic_init(&s.destroy_called, false);
    atomic_init(&s.destroy_returned, false);
    atomic_init(&s.returned_too_early, false);
    s.job = tb_pool_job_create(pool, slow_run, &s);
    assert_non_null(s.job);
    tb_pool_job_wake(s.job);
    WAIT_UNTIL(atomic_load(&s.probe.runs) == 1);
    assert_int_equal(pthread_create(&thread, NULL, destroyer, &s), 0);
    pthread_join(thread, NULL);
    /* The run had returned, and RUN_AGAIN was not honoured. */
    assert_false(atomic_load(&s.returned_too_early));
    assert_int_equal(atomic_load(&s.probe.returns), 1);
    assert_false(atomic_load(&s.probe.in_run));
    assert_int_equal(atomic_load(&s.probe.runs), 1);
    tb_pool_destroy(pool);
}

static void test_destroy_of_a_queued_job_removes_it(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    probe_t busy, queued;
    tb_pool_job_t *busy_job, *queued_job;

    assert_non_null(pool);
    probe_init(&busy, TB_POOL_PARK);
    probe_init(&queued, TB_POOL_PARK);
    atomic_store(&busy.hold, true);
    busy_job = tb_pool_job_create(pool, probe_run, &busy);
    queued_job = tb_pool_job_create(pool, probe_run, &queued);
    assert_non_null(busy_job);
    assert_non_null(queued_job);
    tb_pool_job_wake(busy_job);
    WAIT_UNTIL(atomic_load(&busy.runs) == 1);
    tb_pool_job_wake(queued_job); /* waits behind busy on the only thread */
    tb_pool_job_destroy(queued_job);
    atomic_store(&busy.hold, false);
    drain(pool);
    assert_int_equal(atomic_load(&queued.runs), 0);
    tb_pool_job_destroy(busy_job);
    tb_pool_destroy(pool);
}

/* Destroys its own job from inside its run, then asks to run again. */
typedef struct {
    probe_t probe;
    tb_pool_job_t *job;
    atomic_bool destroyed;
} self_destroy_t;

static int64_t self_destroy_run(void *opaque)
{
    self_destroy_t *s = opaque;

    probe_enter(&s->probe);
    tb_pool_job_destroy(s->job); /* must not wait for this very run */
    atomic_store(&s->destroyed, true);
    return probe_leave(&s->probe);
}

static void test_destroy_from_inside_its_own_run(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(1);
    self_destroy_t s;

    assert_non_null(pool);
    probe_init(&s.probe, TB_POOL_RUN_AGAIN);
    atomic_init(&s.destroyed, false);
    s.job = tb_pool_job_create(pool, self_destroy_run, &s);
    assert_non_null(s.job);
    tb_pool_job_wake(s.job);
    WAIT_UNTIL(atomic_load(&s.destroyed));
    drain(pool);
    /* RUN_AGAIN after its own destroy is ignored; the pool freed the job
     * (LeakSanitizer and ASan check exactly once). */
    assert_int_equal(atomic_load(&s.probe.runs), 1);
    tb_pool_destroy(pool);
}

/* Many jobs, each runs once, asks for a 5 ms timer, runs again and parks. */
typedef struct {
    atomic_int runs;
    atomic_int *total;
} many_t;

static int64_t many_run(void *opaque)
{
    many_t *m = opaque;
    int runs = atomic_fetch_add(&m->runs, 1) + 1;

    atomic_fetch_add(m->total, 1);
    return runs == 1 ? 5 : TB_POOL_PARK;
}

/* Starts and joins one thread, so that a sanitizer runtime that starts a
 * helper thread on the first pthread_create() has done so before counting. */
static void *nothing(void *arg)
{
    return arg;
}

static void settle_thread_count(void)
{
    pthread_t thread;

    assert_int_equal(pthread_create(&thread, NULL, nothing, NULL), 0);
    pthread_join(thread, NULL);
}

#define MANY_JOBS 500

static void test_500_jobs_on_2_threads(void **state)
{
    (void)state;
    static many_t jobs[MANY_JOBS];
    static tb_pool_job_t *handles[MANY_JOBS];
    atomic_int total;
    tb_pool_t *pool;
    int initial;
    int64_t deadline;

    settle_thread_count();
    initial = count_tasks();
    atomic_init(&total, 0);
    pool = tb_pool_create(2);
    assert_non_null(pool);
    assert_int_equal(count_tasks(), initial + 2 + 1);
    assert_int_equal(count_named_tasks("tb-pool-"), 2);
    assert_int_equal(count_named_tasks("tb-timer"), 1);
    for (int i = 0; i < MANY_JOBS; i++) {
        atomic_init(&jobs[i].runs, 0);
        jobs[i].total = &total;
        handles[i] = tb_pool_job_create(pool, many_run, &jobs[i]);
        assert_non_null(handles[i]);
    }
    assert_int_equal(count_tasks(), initial + 2 + 1);
    for (int i = 0; i < MANY_JOBS; i++) {
        tb_pool_job_wake(handles[i]);
    }
    deadline = now_ms() + WAIT_LIMIT_MS;
    while (atomic_load(&total) < 2 * MANY_JOBS) {
        assert_int_equal(count_tasks(), initial + 2 + 1);
        assert_true(now_ms() < deadline);
        sleep_ms(1);
    }
    for (int i = 0; i < MANY_JOBS; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 2);
    }
    assert_int_equal(count_tasks(), initial + 2 + 1);
    for (int i = 0; i < MANY_JOBS; i += 2) {
        tb_pool_job_destroy(handles[i]);
    }
    tb_pool_destroy(pool); /* frees the other half */
    assert_int_equal(count_tasks(), initial);
}

static void *release_later(void *arg)
{
    probe_t *p = arg;

    sleep_ms(50);
    atomic_store(&p->hold, false);
    return NULL;
}

static void test_pool_destroy_with_jobs_registered(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(2);
    probe_t never, parked, timed, spinning, held;
    tb_pool_job_t *job;
    pthread_t releaser;

    assert_non_null(pool);
    probe_init(&never, TB_POOL_PARK);
    probe_init(&parked, TB_POOL_PARK);
    probe_init(&timed, 3600 * 1000);
    probe_init(&spinning, TB_POOL_RUN_AGAIN);
    probe_init(&held, TB_POOL_RUN_AGAIN);
    atomic_store(&held.hold, true);

    assert_non_null(tb_pool_job_create(pool, probe_run, &never));
    job = tb_pool_job_create(pool, probe_run, &parked);
    assert_non_null(job);
    tb_pool_job_wake(job);
    job = tb_pool_job_create(pool, probe_run, &timed);
    assert_non_null(job);
    tb_pool_job_wake(job);
    job = tb_pool_job_create(pool, probe_run, &spinning);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&parked.returns) == 1 && atomic_load(&timed.returns) == 1 &&
               atomic_load(&spinning.returns) >= 10);
    job = tb_pool_job_create(pool, probe_run, &held);
    assert_non_null(job);
    tb_pool_job_wake(job);
    WAIT_UNTIL(atomic_load(&held.runs) == 1);
    /* Its run returns while tb_pool_destroy() waits for it. */
    assert_int_equal(pthread_create(&releaser, NULL, release_later, &held), 0);
    tb_pool_destroy(pool);
    assert_false(atomic_load(&held.hold));
    pthread_join(releaser, NULL);
    /* No run is left in progress, and the never-woken job never ran. */
    assert_false(atomic_load(&held.in_run));
    assert_false(atomic_load(&spinning.in_run));
    assert_int_equal(atomic_load(&held.runs), atomic_load(&held.returns));
    assert_int_equal(atomic_load(&spinning.runs), atomic_load(&spinning.returns));
    assert_int_equal(atomic_load(&never.runs), 0);
    assert_int_equal(atomic_load(&parked.runs), 1);
    assert_int_equal(atomic_load(&timed.runs), 1);
}

static void test_pool_threads_and_null(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(3);

    assert_non_null(pool);
    assert_int_equal(tb_pool_threads(pool), 3);
    tb_pool_destroy(pool);
    assert_null(tb_pool_create(0));
    assert_null(tb_pool_create(-1));
    tb_pool_destroy(NULL);
    tb_pool_job_destroy(NULL);
}

static void test_run_again_jobs_share_the_threads_fairly(void **state)
{
    (void)state;
    tb_pool_t *pool = tb_pool_create(2);
    probe_t p[3];
    tb_pool_job_t *job[3];

    assert_non_null(pool);
    for (int i = 0; i < 3; i++) {
        probe_init(&p[i], TB_POOL_RUN_AGAIN);
        job[i] = tb_pool_job_create(pool, probe_run, &p[i]);
        assert_non_null(job[i]);
    }
    for (int i = 0; i < 3; i++) {
        tb_pool_job_wake(job[i]);
    }
    WAIT_UNTIL(atomic_load(&p[0].runs) >= 200 && atomic_load(&p[1].runs) >= 200 &&
               atomic_load(&p[2].runs) >= 200);
    for (int i = 0; i < 3; i++) {
        tb_pool_job_destroy(job[i]);
        assert_int_equal(atomic_load(&p[i].overlaps), 0);
    }
    tb_pool_destroy(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wake_runs_once),
        cmocka_unit_test(test_not_run_before_first_wake),
        cmocka_unit_test(test_wake_while_running_runs_exactly_once_more),
        cmocka_unit_test(test_wake_while_running_on_one_thread_no_third_run),
        cmocka_unit_test(test_wake_from_own_run),
        cmocka_unit_test(test_concurrent_wakes_are_never_lost),
        cmocka_unit_test(test_run_again_reruns),
        cmocka_unit_test(test_timed_job_runs_again_after_its_delay),
        cmocka_unit_test(test_wake_before_delay_runs_early),
        cmocka_unit_test(test_wake_cancels_the_pending_timer),
        cmocka_unit_test(test_timers_fire_in_deadline_order),
        cmocka_unit_test(test_parked_job_runs_only_when_woken),
        cmocka_unit_test(test_destroy_waits_for_a_running_job),
        cmocka_unit_test(test_destroy_of_a_queued_job_removes_it),
        cmocka_unit_test(test_destroy_from_inside_its_own_run),
        cmocka_unit_test(test_500_jobs_on_2_threads),
        cmocka_unit_test(test_pool_destroy_with_jobs_registered),
        cmocka_unit_test(test_pool_threads_and_null),
        cmocka_unit_test(test_run_again_jobs_share_the_threads_fairly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
