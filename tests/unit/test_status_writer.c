/*
 * test_status_writer.c - the worker's status writer
 * (connectors/runtime/worker/tb_status_writer.h) over a real SQLite store:
 * states whose writes fail are written once the store takes them again,
 * the latest state of a task wins, a forgotten connector's states are
 * never written, and destroy writes what is pending.
 *
 * The store's status writes are made to fail with the test seam
 * TB_STATUS_WRITE_HOLD (core/tb_seam.h). Waits are bounded polls.
 */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "connectors/runtime/worker/tb_status_writer.h"
#include "core/tb_seam.h"
#include "core/tb_time.h"
#include "store/tb_store.h"

#define WAIT_LIMIT_MS 20000

typedef struct {
    char dir[64];
    char path[128];
    char hold[128];
    char err[512];
    tb_store_t *store;
} fixture_t;

static void hold_writes(fixture_t *f, int on)
{
    if (on) {
        FILE *file = fopen(f->hold, "w");
        assert_non_null(file);
        fclose(file);
    } else {
        assert_int_equal(unlink(f->hold), 0);
    }
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    snprintf(f->dir, sizeof(f->dir), "/tmp/tb_status_test_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/store.db", f->dir);
    snprintf(f->hold, sizeof(f->hold), "%s/hold", f->dir);
    assert_int_equal(setenv(tb_seam_name(TB_SEAM_STATUS_WRITE_HOLD), f->hold, 1), 0);
    f->store = tb_store_open(f->path, f->err, sizeof(f->err));
    assert_non_null(f->store);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    char cmd[128];
    tb_store_close(f->store);
    unsetenv(tb_seam_name(TB_SEAM_STATUS_WRITE_HOLD));
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Polls until the seam has refused the write of line ("<name> <task>
 * <STATE>"); fails after WAIT_LIMIT_MS. */
static void wait_refused(fixture_t *f, const char *line)
{
    char text[4096], wanted[128];
    int64_t deadline = tb_monotonic_ms() + WAIT_LIMIT_MS;
    snprintf(wanted, sizeof(wanted), "%s\n", line);
    for (;;) {
        FILE *file = fopen(f->hold, "r");
        assert_non_null(file);
        size_t n = fread(text, 1, sizeof(text) - 1, file);
        fclose(file);
        text[n] = '\0';
        if (strstr(text, wanted) != NULL) {
            return;
        }
        assert_true(tb_monotonic_ms() < deadline);
        nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
    }
}

/* The stored state of name's task (-1: connector), "" when none. */
static const char *stored_state(fixture_t *f, const char *name, int task, char *buf,
                                size_t size, char *trace, size_t trace_size)
{
    char key[16];
    json_t *status = tb_store_status_get(f->store, name, f->err, sizeof(f->err));
    snprintf(key, sizeof(key), "%d", task);
    const json_t *entry = task < 0
                              ? json_object_get(status, "connector")
                              : json_object_get(json_object_get(status, "tasks"), key);
    snprintf(buf, size, "%s",
             entry != NULL ? json_string_value(json_object_get(entry, "state")) : "");
    if (trace != NULL) {
        const char *t = json_string_value(json_object_get(entry, "trace"));
        snprintf(trace, trace_size, "%s", t != NULL ? t : "");
    }
    json_decref(status);
    return buf;
}

/* Polls until name's task shows state in the store; fails after
 * WAIT_LIMIT_MS. */
static void wait_stored(fixture_t *f, const char *name, int task, const char *state)
{
    char buf[32];
    int64_t deadline = tb_monotonic_ms() + WAIT_LIMIT_MS;
    while (strcmp(stored_state(f, name, task, buf, sizeof(buf), NULL, 0), state) != 0) {
        assert_true(tb_monotonic_ms() < deadline);
        nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
    }
}

static void a_failed_write_is_retried_and_the_latest_state_wins(void **state)
{
    fixture_t *f = *state;
    char buf[32], trace[64];
    tb_status_writer_t *w = tb_status_writer_create(f->store);
    assert_non_null(w);
    hold_writes(f, 1);
    tb_status_writer_put(w, "c", -1, TB_STATE_RUNNING, NULL);
    tb_status_writer_put(w, "c", 0, TB_STATE_UNASSIGNED, NULL);
    tb_status_writer_put(w, "c", 0, TB_STATE_RUNNING, NULL);
    tb_status_writer_put(w, "c", 0, TB_STATE_FAILED, "boom");
    tb_status_writer_put(w, "c", 1, TB_STATE_UNASSIGNED, "waiting");
    wait_refused(f, "c -1 RUNNING");
    wait_refused(f, "c 0 FAILED");
    wait_refused(f, "c 1 UNASSIGNED");
    assert_string_equal(stored_state(f, "c", -1, buf, sizeof(buf), NULL, 0), "");
    hold_writes(f, 0);
    wait_stored(f, "c", -1, "RUNNING");
    wait_stored(f, "c", 0, "FAILED");
    wait_stored(f, "c", 1, "UNASSIGNED");
    stored_state(f, "c", 0, buf, sizeof(buf), trace, sizeof(trace));
    assert_string_equal(trace, "boom");
    /* a state put while the store fails again replaces a written one */
    hold_writes(f, 1);
    tb_status_writer_put(w, "c", 1, TB_STATE_RUNNING, NULL);
    wait_refused(f, "c 1 RUNNING");
    hold_writes(f, 0);
    wait_stored(f, "c", 1, "RUNNING");
    tb_status_writer_destroy(w);
}

static void a_forgotten_connector_is_never_written(void **state)
{
    fixture_t *f = *state;
    char buf[32];
    tb_status_writer_t *w = tb_status_writer_create(f->store);
    assert_non_null(w);
    hold_writes(f, 1);
    tb_status_writer_put(w, "gone", -1, TB_STATE_RUNNING, NULL);
    tb_status_writer_put(w, "gone", 0, TB_STATE_RUNNING, NULL);
    wait_refused(f, "gone 0 RUNNING");
    tb_status_writer_put(w, "kept", -1, TB_STATE_RUNNING, NULL);
    tb_status_writer_forget(w, "gone");
    hold_writes(f, 0);
    /* "gone" came first: once "kept" is written, "gone" never will be */
    wait_stored(f, "kept", -1, "RUNNING");
    tb_status_writer_destroy(w);
    assert_string_equal(stored_state(f, "gone", -1, buf, sizeof(buf), NULL, 0), "");
}

static void destroy_writes_what_is_pending(void **state)
{
    fixture_t *f = *state;
    char buf[32];
    tb_status_writer_t *w = tb_status_writer_create(f->store);
    assert_non_null(w);
    for (int i = 0; i < 50; i++) {
        tb_status_writer_put(w, "c", -1, TB_STATE_RUNNING, NULL);
        tb_status_writer_put(w, "c", i, TB_STATE_RUNNING, NULL);
    }
    tb_status_writer_destroy(w);
    for (int i = 0; i < 50; i++) {
        assert_string_equal(stored_state(f, "c", i, buf, sizeof(buf), NULL, 0),
                            "RUNNING");
    }
}

static void destroy_of_a_failing_writer_ends(void **state)
{
    fixture_t *f = *state;
    tb_status_writer_t *w = tb_status_writer_create(f->store);
    assert_non_null(w);
    hold_writes(f, 1);
    tb_status_writer_put(w, "c", -1, TB_STATE_RUNNING, NULL);
    tb_status_writer_put(w, "c", 0, TB_STATE_RUNNING, NULL);
    wait_refused(f, "c -1 RUNNING");
    tb_status_writer_destroy(w); /* no leak either: ASan checks */
    tb_status_writer_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_failed_write_is_retried_and_the_latest_state_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(a_forgotten_connector_is_never_written, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(destroy_writes_what_is_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(destroy_of_a_failing_writer_ends, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
