#include "tb_test.h"

#include <stdbool.h>
#include <string.h>

#include "connectors/runtime/assignment/tb_incremental_assignment.h"

/* Two connectors with three tasks each: 2 connectors and 6 tasks in all. */
static const tb_work_t all_work[] = {
    {"a", -1}, {"a", 0}, {"a", 1}, {"a", 2}, {"b", -1}, {"b", 0}, {"b", 1}, {"b", 2},
};
#define ALL_WORK (sizeof(all_work) / sizeof(all_work[0]))

static const tb_worker_work_t *entry_of(const tb_assignment_t *a, const char *worker)
{
    for (size_t w = 0; w < a->count; w++) {
        if (strcmp(a->workers[w].worker, worker) == 0) {
            return &a->workers[w];
        }
    }
    return NULL;
}

static size_t count_kind(const tb_worker_work_t *e, bool tasks)
{
    size_t n = 0;
    for (size_t i = 0; e != NULL && i < e->count; i++) {
        n += (e->work[i].task >= 0) == tasks;
    }
    return n;
}

static bool holds(const tb_worker_work_t *e, const char *connector, int task)
{
    for (size_t i = 0; e != NULL && i < e->count; i++) {
        if (strcmp(e->work[i].connector, connector) == 0 && e->work[i].task == task) {
            return true;
        }
    }
    return false;
}

static size_t total(const tb_assignment_t *a)
{
    size_t n = 0;
    for (size_t w = 0; w < a->count; w++) {
        n += a->workers[w].count;
    }
    return n;
}

/* Every unit of work exactly once, and no worker above ceil(share) of a kind. */
static void assert_balanced(const tb_assignment_t *a, size_t connectors, size_t tasks)
{
    assert_int_equal(total(a), connectors + tasks);
    for (size_t w = 0; w < a->count; w++) {
        assert_true(count_kind(&a->workers[w], false) <=
                    (connectors + a->count - 1) / a->count);
        assert_true(count_kind(&a->workers[w], true) <=
                    (tasks + a->count - 1) / a->count);
    }
    for (size_t i = 0; i < ALL_WORK; i++) {
        size_t owners = 0;
        for (size_t w = 0; w < a->count; w++) {
            owners += holds(&a->workers[w], all_work[i].connector, all_work[i].task);
        }
        assert_true(owners <= 1);
    }
}

static void test_first_assignment_spreads_connectors_and_tasks(void **state)
{
    (void)state;
    const char *live[] = {"w3", "w1", "w2"};
    tb_assignment_input_t in = {
        .live = live, .live_count = 3, .work = all_work, .work_count = ALL_WORK};
    tb_assignment_t a;
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_int_equal(a.count, 3);
    assert_string_equal(a.workers[0].worker, "w1"); /* sorted */
    assert_balanced(&a, 2, 6);
    for (size_t w = 0; w < 3; w++) {
        assert_int_equal(count_kind(&a.workers[w], true), 2);
    }
    tb_assignment_clear(&a);
}

static void test_a_joining_worker_takes_only_the_excess(void **state)
{
    (void)state;
    const tb_work_t w1_work[] = {{"a", -1}, {"a", 0}, {"a", 1}, {"a", 2}};
    const tb_work_t w2_work[] = {{"b", -1}, {"b", 0}, {"b", 1}, {"b", 2}};
    const tb_worker_work_t previous[] = {{"w1", w1_work, 4}, {"w2", w2_work, 4}};
    const char *live[] = {"w1", "w2", "w3"};
    tb_assignment_input_t in = {.live = live,
                                .live_count = 3,
                                .previous = previous,
                                .previous_count = 2,
                                .work = all_work,
                                .work_count = ALL_WORK};
    tb_assignment_t a;
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_balanced(&a, 2, 6);
    /* Each old worker keeps its connector and two of its tasks; exactly one
     * task of each moves to the new worker. */
    const tb_worker_work_t *w1 = entry_of(&a, "w1"), *w2 = entry_of(&a, "w2");
    const tb_worker_work_t *w3 = entry_of(&a, "w3");
    assert_true(holds(w1, "a", -1) && holds(w1, "a", 0) && holds(w1, "a", 1));
    assert_true(holds(w2, "b", -1) && holds(w2, "b", 0) && holds(w2, "b", 1));
    assert_int_equal(w3->count, 2);
    assert_true(holds(w3, "a", 2) && holds(w3, "b", 2));
    tb_assignment_clear(&a);
}

static void test_a_departed_workers_work_waits_for_it_then_moves(void **state)
{
    (void)state;
    const tb_work_t w1_work[] = {{"a", -1}, {"a", 0}, {"a", 1}, {"a", 2}};
    const tb_work_t w2_work[] = {{"b", -1}, {"b", 0}, {"b", 1}, {"b", 2}};
    const tb_worker_work_t previous[] = {{"w1", w1_work, 4}, {"w2", w2_work, 4}};
    const char *live[] = {"w1"};
    const char *waiting[] = {"w2"};
    tb_assignment_input_t in = {.live = live,
                                .live_count = 1,
                                .waiting = waiting,
                                .waiting_count = 1,
                                .previous = previous,
                                .previous_count = 2,
                                .work = all_work,
                                .work_count = ALL_WORK};
    tb_assignment_t a;
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_int_equal(a.count, 1);
    assert_int_equal(a.workers[0].count, 4); /* w2's work is held back for it */
    assert_false(holds(&a.workers[0], "b", -1));
    tb_assignment_clear(&a);

    in.waiting_count = 0; /* its grace is over */
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_int_equal(a.workers[0].count, ALL_WORK);
    tb_assignment_clear(&a);

    /* Back in time, it gets its own work again. */
    const char *both[] = {"w1", "w2"};
    in.live = both;
    in.live_count = 2;
    in.waiting_count = 1;
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_true(holds(entry_of(&a, "w2"), "b", -1) && holds(entry_of(&a, "w2"), "b", 2));
    assert_int_equal(entry_of(&a, "w2")->count, 4);
    tb_assignment_clear(&a);
}

static void test_work_that_no_longer_exists_is_dropped(void **state)
{
    (void)state;
    const tb_work_t w1_work[] = {{"a", -1}, {"a", 0}, {"gone", -1}, {"gone", 0}};
    const tb_worker_work_t previous[] = {{"w1", w1_work, 4}};
    const char *live[] = {"w1"};
    tb_assignment_input_t in = {.live = live,
                                .live_count = 1,
                                .previous = previous,
                                .previous_count = 1,
                                .work = all_work,
                                .work_count = 2};
    tb_assignment_t a;
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_int_equal(a.workers[0].count, 2);
    assert_false(holds(&a.workers[0], "gone", -1));
    tb_assignment_clear(&a);
}

static void test_no_live_worker_gives_an_empty_assignment(void **state)
{
    (void)state;
    tb_assignment_input_t in = {.work = all_work, .work_count = ALL_WORK};
    tb_assignment_t a;
    assert_int_equal(tb_assignment_compute(&in, &a), 0);
    assert_int_equal(a.count, 0);
    tb_assignment_clear(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_assignment_spreads_connectors_and_tasks),
        cmocka_unit_test(test_a_joining_worker_takes_only_the_excess),
        cmocka_unit_test(test_a_departed_workers_work_waits_for_it_then_moves),
        cmocka_unit_test(test_work_that_no_longer_exists_is_dropped),
        cmocka_unit_test(test_no_live_worker_gives_an_empty_assignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
