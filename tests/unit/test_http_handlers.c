/*
 * test_http_handlers.c - the REST writes' pool (server/tb_http_handlers.h):
 * a call's answer, the 503 with Retry-After at its deadline for a call
 * that runs too long (its late answer dropped) and for one that never got
 * a thread (never run), and the stop that answers what waits.
 *
 * Waits are bounded polls; a run that must outlast its deadline blocks on
 * a flag the test releases.
 */
#include "tb_test.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_time.h"
#include "server/tb_http_handlers.h"

#define WAIT_LIMIT_MS 10000
#define DEADLINE_MS 200

typedef struct {
    atomic_bool hold; /* while set, run waits */
    atomic_int runs;
    atomic_int ready; /* times ready was told */
    atomic_int freed;
} probe_t;

static void run(void *arg, tb_api_response_t *res)
{
    probe_t *p = arg;
    atomic_fetch_add(&p->runs, 1);
    int64_t deadline = tb_monotonic_ms() + WAIT_LIMIT_MS;
    while (atomic_load(&p->hold) && tb_monotonic_ms() < deadline) {
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    tb_api_reply(res, 201, json_pack("{s:s}", "done", "yes"));
}

static void ready(void *arg)
{
    atomic_fetch_add(&((probe_t *)arg)->ready, 1);
}

static void free_probe(void *arg)
{
    atomic_fetch_add(&((probe_t *)arg)->freed, 1);
}

static void wait_until_ready(probe_t *p)
{
    int64_t deadline = tb_monotonic_ms() + WAIT_LIMIT_MS;
    while (atomic_load(&p->ready) == 0) {
        assert_true(tb_monotonic_ms() < deadline);
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

static tb_http_call_t *submit(tb_http_handlers_t *h, probe_t *p)
{
    tb_http_call_t *call = tb_http_call_new(h, run, ready, free_probe, "PUT /x", p);
    assert_non_null(call);
    tb_http_handlers_submit(h, call);
    return call;
}

static void a_call_answers_with_its_handlers_reply(void **state)
{
    (void)state;
    probe_t p = {0};
    tb_api_response_t res = {0};
    tb_http_handlers_t *h = tb_http_handlers_create(WAIT_LIMIT_MS);
    assert_non_null(h);
    tb_http_call_t *call = submit(h, &p);
    wait_until_ready(&p);
    assert_true(tb_http_call_take(h, call, &res));
    assert_int_equal(res.status, 201);
    assert_int_equal(res.retry_after_s, 0);
    json_decref(res.body);
    tb_http_call_release(h, call);
    assert_int_equal(atomic_load(&p.freed), 1);
    tb_http_handlers_destroy(h);
    assert_int_equal(atomic_load(&p.ready), 1);
}

static void
a_call_past_its_deadline_answers_503_and_its_late_answer_is_dropped(void **state)
{
    (void)state;
    probe_t slow = {0};
    probe_t queued[TB_HTTP_HANDLER_THREADS] = {0};
    tb_api_response_t res = {0};
    tb_http_handlers_t *h = tb_http_handlers_create(DEADLINE_MS);
    assert_non_null(h);
    /* every thread held: the call after them waits for one */
    atomic_store(&slow.hold, true);
    tb_http_call_t *calls[TB_HTTP_HANDLER_THREADS];
    for (int i = 0; i < TB_HTTP_HANDLER_THREADS; i++) {
        atomic_store(&queued[i].hold, true);
        calls[i] = submit(h, &queued[i]);
    }
    tb_http_call_t *waiting = submit(h, &slow);
    for (int i = 0; i < TB_HTTP_HANDLER_THREADS; i++) {
        wait_until_ready(&queued[i]);
        assert_true(tb_http_call_take(h, calls[i], &res));
        assert_int_equal(res.status, 503);
        assert_int_equal(res.retry_after_s, TB_HTTP_RETRY_AFTER_S);
        json_decref(res.body);
    }
    wait_until_ready(&slow);
    assert_true(tb_http_call_take(h, waiting, &res));
    assert_int_equal(res.status, 503);
    assert_non_null(strstr(json_string_value(json_object_get(res.body, "message")),
                           "rest.request.timeout.ms"));
    json_decref(res.body);
    tb_http_call_release(h, waiting);
    assert_int_equal(atomic_load(&slow.runs), 0); /* never ran: freed at once */
    assert_int_equal(atomic_load(&slow.freed), 1);
    for (int i = 0; i < TB_HTTP_HANDLER_THREADS; i++) {
        tb_http_call_release(h, calls[i]);
        assert_int_equal(atomic_load(&queued[i].freed), 0); /* still runs */
        atomic_store(&queued[i].hold, false);
    }
    tb_http_handlers_destroy(h); /* waits for the runs, drops their answers */
    for (int i = 0; i < TB_HTTP_HANDLER_THREADS; i++) {
        assert_int_equal(atomic_load(&queued[i].runs), 1);
        assert_int_equal(atomic_load(&queued[i].ready), 1);
        assert_int_equal(atomic_load(&queued[i].freed), 1);
    }
}

static void abort_answers_what_waits_and_what_comes_after(void **state)
{
    (void)state;
    probe_t held = {0}, late = {0};
    tb_api_response_t res = {0};
    tb_http_handlers_t *h = tb_http_handlers_create(WAIT_LIMIT_MS);
    assert_non_null(h);
    atomic_store(&held.hold, true);
    tb_http_call_t *first = submit(h, &held);
    tb_http_handlers_abort(h);
    wait_until_ready(&held);
    assert_true(tb_http_call_take(h, first, &res));
    assert_int_equal(res.status, 503);
    json_decref(res.body);
    tb_http_call_t *second = submit(h, &late);
    assert_int_equal(atomic_load(&late.ready), 1); /* answered in submit */
    assert_true(tb_http_call_take(h, second, &res));
    assert_int_equal(res.status, 503);
    json_decref(res.body);
    tb_http_call_release(h, second);
    tb_http_call_release(h, first);
    atomic_store(&held.hold, false);
    tb_http_handlers_destroy(h);
    assert_int_equal(atomic_load(&late.runs), 0);
    assert_int_equal(atomic_load(&held.freed), 1);
    assert_int_equal(atomic_load(&late.freed), 1);
    tb_http_handlers_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_call_answers_with_its_handlers_reply),
        cmocka_unit_test(
            a_call_past_its_deadline_answers_503_and_its_late_answer_is_dropped),
        cmocka_unit_test(abort_answers_what_waits_and_what_comes_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
