#include "tb_test.h"

#include <string.h>

#include "connectors/runtime/assignment/tb_assignment_json.h"

static void test_an_assignment_survives_its_json(void **state)
{
    (void)state;
    json_t *json = json_loads(
        "{\"w2:1\":[[\"sink\",0],[\"sink\",-1]],\"w1:1\":[[\"src\",0]],\"w3:1\":[]}", 0,
        NULL);
    tb_assignment_t a;
    assert_int_equal(tb_assignment_from_json(json, &a), 0);
    /* workers sorted, as tb_assignment_compute sorts them */
    assert_int_equal(a.count, 3);
    assert_string_equal(a.workers[0].worker, "w1:1");
    assert_string_equal(a.workers[1].worker, "w2:1");
    assert_int_equal(a.workers[1].count, 2);
    assert_string_equal(a.workers[1].work[1].connector, "sink");
    assert_int_equal(a.workers[1].work[1].task, -1);
    assert_int_equal(a.workers[2].count, 0);
    tb_assignment_t copy;
    assert_int_equal(tb_assignment_copy(&a, &copy), 0);
    json_t *back = tb_assignment_to_json(&copy);
    assert_true(json_equal(back, json));
    json_decref(back);
    tb_assignment_clear(&copy);
    tb_assignment_clear(&a);
    json_decref(json);
}

static void test_a_malformed_assignment_is_refused_whole(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[]",
        "{\"w\":{}}",
        "{\"w\":[[\"c\"]]}",
        "{\"w\":[[\"c\",0]],\"v\":[[1,0]]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *json = json_loads(bad[i], 0, NULL);
        tb_assignment_t a;
        assert_int_equal(tb_assignment_from_json(json, &a), -1);
        assert_int_equal(a.count, 0);
        assert_null(a.workers);
        json_decref(json);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_assignment_survives_its_json),
        cmocka_unit_test(test_a_malformed_assignment_is_refused_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
