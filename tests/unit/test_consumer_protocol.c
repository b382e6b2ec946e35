#include "tb_test.h"

#include <string.h>

#include "connectors/runtime/cluster/tb_consumer_protocol.h"

/* version 1; topics "other" [0, 3] and "coord" [0]; user data null. */
static const unsigned char two_topics[] = {
    0, 1, 0,   0,   0,    2,                        /* version, 2 topics */
    0, 5, 'o', 't', 'h',  'e',  'r',  0,   0, 0, 2, /* "other", 2 partitions */
    0, 0, 0,   0,   0,    0,    0,    3,            /* 0, 3 */
    0, 5, 'c', 'o', 'o',  'r',  'd',  0,   0, 0, 1, /* "coord", 1 partition */
    0, 0, 0,   0,   0xff, 0xff, 0xff, 0xff};        /* 0; no user data */

static void test_finds_the_partition_of_the_named_topic_only(void **state)
{
    (void)state;
    assert_int_equal(
        tb_consumer_assignment_holds(two_topics, sizeof(two_topics), "coord", 0), 1);
    assert_int_equal(
        tb_consumer_assignment_holds(two_topics, sizeof(two_topics), "other", 3), 1);
    assert_int_equal(
        tb_consumer_assignment_holds(two_topics, sizeof(two_topics), "coord", 3), 0);
    assert_int_equal(
        tb_consumer_assignment_holds(two_topics, sizeof(two_topics), "coor", 0), 0);
}

static void test_an_empty_assignment_holds_nothing(void **state)
{
    (void)state;
    assert_int_equal(tb_consumer_assignment_holds(NULL, 0, "coord", 0), 0);
}

static void test_a_truncated_assignment_is_refused(void **state)
{
    (void)state;
    for (size_t cut = 1; cut < sizeof(two_topics) - 4; cut++) {
        assert_int_equal(tb_consumer_assignment_holds(two_topics, cut, "coord", 0), -1);
    }
    unsigned char negative[sizeof(two_topics)];
    memcpy(negative, two_topics, sizeof(two_topics));
    negative[2] = 0xff; /* topic count -16777214 */
    assert_int_equal(tb_consumer_assignment_holds(negative, sizeof(negative), "coord", 0),
                     -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_the_partition_of_the_named_topic_only),
        cmocka_unit_test(test_an_empty_assignment_holds_nothing),
        cmocka_unit_test(test_a_truncated_assignment_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
