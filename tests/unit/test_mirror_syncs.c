/*
 * MirrorMaker 2's offset translation (connectors/mirror/tb_mirror.h): the
 * offset-sync store keeps syncs spaced about exponentially back from the
 * latest, and a group's offset translates through the latest kept sync at
 * or before it, one past it at most; the names of the checkpoints and
 * offset-syncs topics and of a checkpointed topic, as MM2's.
 */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/mirror/tb_mirror.h"

static int64_t seq;

static void add(tb_mirror_syncs_t *store, int64_t upstream, int64_t downstream,
                bool keep_last_only)
{
    tb_mirror_sync_t sync = {
        .upstream = upstream, .downstream = downstream, .seq = seq++};
    assert_int_equal(tb_mirror_syncs_add(store, "t", 0, sync, keep_last_only), 0);
}

/* -2: nothing can be said */
static int64_t translate(const tb_mirror_syncs_t *store, int64_t upstream)
{
    int64_t downstream;
    return tb_mirror_syncs_translate(store, "t", 0, upstream, &downstream) ? downstream
                                                                           : -2;
}

static void test_translation_never_passes_the_next_record(void **state)
{
    (void)state;
    tb_mirror_syncs_t *store = tb_mirror_syncs_new();
    add(store, 49, 40, false);
    add(store, 99, 90, false);
    assert_int_equal(translate(store, 70), -2); /* not read to the end yet */
    tb_mirror_syncs_read_to_end(store);
    assert_int_equal(translate(store, 49), 40);
    assert_int_equal(translate(store, 70), 41); /* past 49: its next record only */
    assert_int_equal(translate(store, 99), 90);
    assert_int_equal(translate(store, 150), 91);
    assert_int_equal(translate(store, 10), -1); /* before every sync */
    int64_t downstream;
    assert_false(tb_mirror_syncs_translate(store, "t", 1, 70, &downstream));
    assert_false(tb_mirror_syncs_translate(store, "other", 0, 70, &downstream));
    tb_mirror_syncs_free(store);
}

static void test_syncs_thin_out_exponentially(void **state)
{
    (void)state;
    tb_mirror_syncs_t *store = tb_mirror_syncs_new();
    for (int64_t i = 0; i < 10000; i++) {
        add(store, i, i + 5, false);
    }
    tb_mirror_syncs_read_to_end(store);
    /* near the end exact, further back within about the distance behind */
    assert_int_equal(translate(store, 9999), 10004);
    assert_int_equal(translate(store, 9998), 10003);
    for (int64_t back = 1; back < 10000; back *= 3) {
        int64_t upstream = 9999 - back;
        int64_t got = translate(store, upstream);
        assert_true(got <= upstream + 5);        /* never skips a record */
        assert_true(got >= upstream + 5 - back); /* loses no more than the distance */
    }
    assert_int_equal(translate(store, 0), 5); /* the first sync stays */
    tb_mirror_syncs_free(store);
}

static void test_rewind_and_initial_read_keep_the_last_sync(void **state)
{
    (void)state;
    tb_mirror_syncs_t *store = tb_mirror_syncs_new();
    add(store, 10, 10, true);
    add(store, 20, 20, true); /* before the end, with keep_last_only: alone */
    tb_mirror_syncs_read_to_end(store);
    assert_int_equal(translate(store, 15), -1);
    add(store, 30, 30, true);
    assert_int_equal(translate(store, 25), 21); /* after the end, kept as usual */
    add(store, 5, 100, false);                  /* the source topic went back */
    assert_int_equal(translate(store, 25), 101);
    assert_int_equal(translate(store, 4), -1);
    tb_mirror_syncs_free(store);
}

static void test_names_of_mm2s_topics(void **state)
{
    (void)state;
    char errstr[256];
    tb_mirror_settings_t settings;
    tb_mirror_names_t names;
    json_t *config =
        json_pack("{s:s,s:s,s:s,s:s}", "source.cluster.alias", "us",
                  "target.cluster.alias", "eu", "source.cluster.bootstrap.servers", "a:1",
                  "target.cluster.bootstrap.servers", "b:1");
    json_t *values = tb_config_load(&tb_mirror_checkpoint_table, config, &settings,
                                    errstr, sizeof(errstr));
    if (values == NULL) {
        fail_msg("%s", errstr);
    }
    tb_mirror_names_init(&names, &settings);
    char *s = tb_mirror_checkpoints_topic(&names);
    assert_string_equal(s, "us.checkpoints.internal");
    free(s);
    s = tb_mirror_offset_syncs_topic(&names, false);
    assert_string_equal(s, "mm2-offset-syncs.eu.internal");
    free(s);
    s = tb_mirror_offset_syncs_topic(&names, true);
    assert_string_equal(s, "mm2-offset-syncs.us.internal");
    free(s);
    s = tb_mirror_checkpoint_topic(&names, "orders");
    assert_string_equal(s, "us.orders");
    free(s);
    /* a topic that came from the target goes back to its own name */
    s = tb_mirror_checkpoint_topic(&names, "eu.orders");
    assert_string_equal(s, "orders");
    free(s);
    s = tb_mirror_checkpoint_topic(&names, "eu.us.orders");
    assert_string_equal(s, "orders");
    free(s);
    json_decref(values);
    json_decref(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_translation_never_passes_the_next_record),
        cmocka_unit_test(test_syncs_thin_out_exponentially),
        cmocka_unit_test(test_rewind_and_initial_read_keep_the_last_sync),
        cmocka_unit_test(test_names_of_mm2s_topics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
