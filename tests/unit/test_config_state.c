/*
 * The config state (what the cluster knows of its connectors, written
 * through the store) and the standalone assignor over it.
 */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connectors/runtime/assignment/tb_assignor.h"
#include "connectors/runtime/config/tb_config_state.h"

typedef struct {
    char dir[64];
    char path[128];
    tb_store_t *store;
    tb_config_state_t *state;
    const tb_plugin_t *plugin;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    char err[256];
    snprintf(f->dir, sizeof(f->dir), "/tmp/tb_config_state_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/store.db", f->dir);
    f->store = tb_store_open(f->path, err, sizeof(err));
    assert_non_null(f->store);
    f->state = tb_config_state_create(f->store);
    f->plugin = tb_plugin_find("FileStreamSink");
    assert_non_null(f->plugin);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    char file[256];
    tb_config_state_destroy(f->state);
    tb_store_close(f->store);
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(file, sizeof(file), "%s%s", f->path, suffixes[i]);
        unlink(file);
    }
    assert_int_equal(rmdir(f->dir), 0);
    free(f);
    return 0;
}

/* Puts connector name with tasks task configs. */
static tb_known_connector_t *put(fixture_t *f, tb_config_state_t *state, const char *name,
                                 size_t tasks, tb_target_state_t target)
{
    char err[256];
    json_t *config = json_pack("{s:s, s:s, s:s}", "name", name, "connector.class",
                               "FileStreamSink", "topics", "t");
    json_t *task_configs = json_array();
    for (size_t i = 0; i < tasks; i++) {
        json_array_append_new(task_configs, json_pack("{s:s}", "topics", "t"));
    }
    tb_known_connector_t *c = tb_config_state_put(state, NULL, name, config, f->plugin,
                                                  target, task_configs, err, sizeof(err));
    json_decref(config);
    json_decref(task_configs);
    return c;
}

static void test_put_is_written_through_the_store(void **state)
{
    fixture_t *f = *state;
    char err[256];
    assert_non_null(put(f, f->state, "a", 2, TB_TARGET_STARTED));
    tb_known_connector_t *b = put(f, f->state, "b", 0, TB_TARGET_STOPPED);
    assert_non_null(b);
    /* a replacement changes the entry in place */
    assert_ptr_equal(put(f, f->state, "b", 1, TB_TARGET_PAUSED), b);
    assert_int_equal(b->target, TB_TARGET_PAUSED);
    assert_int_equal(json_array_size(b->task_configs), 1);

    tb_config_state_t *loaded = tb_config_state_create(f->store);
    assert_int_equal(tb_config_state_load(loaded, err, sizeof(err)), 0);
    tb_known_connector_t *a = tb_config_state_find(loaded, "a");
    assert_non_null(a);
    assert_ptr_equal(a->plugin, f->plugin);
    assert_int_equal(a->target, TB_TARGET_STARTED);
    assert_int_equal(json_array_size(a->task_configs), 2);
    assert_int_equal(tb_config_state_find(loaded, "b")->target, TB_TARGET_PAUSED);
    tb_config_state_destroy(loaded);
}

static void test_remove_deletes_from_the_store(void **state)
{
    fixture_t *f = *state;
    char err[256];
    put(f, f->state, "a", 1, TB_TARGET_STARTED);
    assert_int_equal(tb_config_state_remove(f->state, NULL, "a", err, sizeof(err)), 0);
    assert_null(tb_config_state_find(f->state, "a"));
    assert_null(tb_config_state_first(f->state));

    tb_config_state_t *loaded = tb_config_state_create(f->store);
    assert_int_equal(tb_config_state_load(loaded, err, sizeof(err)), 0);
    assert_null(tb_config_state_first(loaded));
    tb_config_state_destroy(loaded);
}

/* Other workers changed a, deleted b and created c (here: through a view of
 * their own over the same store); one reread of the three names brings
 * them all into this view, and leaves d, not named, as it was. */
static void test_reread_brings_a_batch_of_changes_in(void **state)
{
    fixture_t *f = *state;
    char err[256];
    put(f, f->state, "a", 1, TB_TARGET_STARTED);
    put(f, f->state, "b", 1, TB_TARGET_STARTED);
    tb_known_connector_t *d = put(f, f->state, "d", 1, TB_TARGET_STARTED);
    tb_config_state_t *others = tb_config_state_create(f->store);
    assert_int_equal(tb_config_state_load(others, err, sizeof(err)), 0);
    put(f, others, "a", 3, TB_TARGET_PAUSED);
    assert_int_equal(tb_config_state_remove(others, NULL, "b", err, sizeof(err)), 0);
    put(f, others, "c", 2, TB_TARGET_STARTED);
    put(f, others, "d", 4, TB_TARGET_STOPPED);
    tb_config_state_destroy(others);

    json_t *names = json_pack("[s, s, s]", "a", "b", "c");
    assert_int_equal(tb_config_state_reread(f->state, names, err, sizeof(err)), 0);
    json_decref(names);
    tb_known_connector_t *a = tb_config_state_find(f->state, "a");
    assert_int_equal(a->target, TB_TARGET_PAUSED);
    assert_int_equal(json_array_size(a->task_configs), 3);
    assert_null(tb_config_state_find(f->state, "b"));
    tb_known_connector_t *c = tb_config_state_find(f->state, "c");
    assert_non_null(c);
    assert_ptr_equal(c->plugin, f->plugin);
    assert_int_equal(json_array_size(c->task_configs), 2);
    assert_ptr_equal(tb_config_state_find(f->state, "d"), d);
    assert_int_equal(d->target, TB_TARGET_STARTED);
}

static void test_standalone_assigns_everything_to_the_one_worker(void **state)
{
    fixture_t *f = *state;
    const char *const workers[] = {"host:8083"};
    put(f, f->state, "a", 2, TB_TARGET_STARTED);
    put(f, f->state, "b", 0, TB_TARGET_STOPPED);
    tb_assignment_t assignment;
    assert_int_equal(tb_assignor_standalone(f->state, workers, 1, &assignment), 0);
    assert_int_equal(assignment.count, 1);
    assert_int_equal(assignment.workers[0].count, 4); /* a, its two tasks, b */
    assert_true(tb_assignor_runs(&assignment, workers[0], "a", TB_ASSIGNOR_CONNECTOR));
    assert_true(tb_assignor_runs(&assignment, workers[0], "a", 0));
    assert_true(tb_assignor_runs(&assignment, workers[0], "a", 1));
    assert_true(tb_assignor_runs(&assignment, workers[0], "b", TB_ASSIGNOR_CONNECTOR));
    assert_false(tb_assignor_runs(&assignment, workers[0], "a", 2));
    assert_false(tb_assignor_runs(&assignment, workers[0], "b", 0));
    assert_false(tb_assignor_runs(&assignment, "other:8083", "a", 0));
    tb_assignment_clear(&assignment);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_is_written_through_the_store, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reread_brings_a_batch_of_changes_in, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_remove_deletes_from_the_store, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_standalone_assigns_everything_to_the_one_worker, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
