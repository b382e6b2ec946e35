/* What exactly-once sources keep beside a connector's source offsets (the
 * offsets generation, each task's record), and the old progress marker's
 * metadata, read once for the upgrade. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "connectors/runtime/source/eos/tb_progress_marker.h"

static void test_marker_metadata(void **state)
{
    (void)state;
    const char *marker = "{\"generation\":7,\"offsets\":[{\"offset\":{\"position\":42},"
                         "\"partition\":{\"filename\":\"f\"}}]}";
    int64_t generation = -1;
    json_t *offsets = NULL;
    assert_int_equal(
        tb_progress_marker_decode(marker, strlen(marker), &generation, &offsets), 0);
    assert_int_equal(generation, 7);
    assert_int_equal(json_array_size(offsets), 1);
    json_decref(offsets);
}

/* tributary 0.1.0 wrote the offsets as a bare array: generation 0. */
static void test_the_form_before_generations_is_generation_zero(void **state)
{
    (void)state;
    const char *old =
        "[{\"offset\":{\"position\":42},\"partition\":{\"filename\":\"f\"}}]";
    int64_t generation = -1;
    json_t *offsets = NULL;
    assert_int_equal(tb_progress_marker_decode(old, strlen(old), &generation, &offsets),
                     0);
    assert_int_equal(generation, 0);
    assert_int_equal(json_array_size(offsets), 1);
    json_decref(offsets);
    /* a client that counts the C string's NUL in the metadata */
    assert_int_equal(
        tb_progress_marker_decode(old, strlen(old) + 1, &generation, &offsets), 0);
    json_decref(offsets);
}

/* A sink's commit (no metadata, or other text) is no marker. */
static void test_other_metadata_is_no_marker(void **state)
{
    (void)state;
    const char *texts[] = {"", "hello", "{\"offsets\":[]}", "{\"generation\":1}", "7"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        int64_t generation;
        json_t *offsets = NULL;
        assert_int_equal(
            tb_progress_marker_decode(texts[i], strlen(texts[i]), &generation, &offsets),
            -1);
        assert_null(offsets);
    }
    int64_t generation;
    json_t *offsets = NULL;
    assert_int_equal(tb_progress_marker_decode(NULL, 0, &generation, &offsets), -1);
}

static void test_generation_among_stored_offsets(void **state)
{
    (void)state;
    json_t *stored = json_pack("[{s:{s:s}, s:{s:i}}]", "partition", "filename", "f",
                               "offset", "position", 1);
    assert_int_equal(tb_eos_offsets_generation_of(stored), 0);
    json_t *entry = tb_eos_offsets_generation_entry(3);
    assert_true(tb_eos_offsets_is_reserved(json_object_get(entry, "partition")));
    json_array_append_new(stored, entry);
    assert_int_equal(tb_eos_offsets_generation_of(stored), 3);
    assert_false(tb_eos_offsets_is_reserved(
        json_object_get(json_array_get(stored, 0), "partition")));
    json_decref(stored);
}

/* A task's record is reserved, is not the generation, and carries its
 * transactions and generation. */
static void test_task_record(void **state)
{
    (void)state;
    json_t *partition = tb_eos_offsets_task_partition(2);
    json_t *offset = tb_eos_offsets_task_offset(41, 5);
    assert_true(tb_eos_offsets_is_reserved(partition));
    json_t *stored = json_pack("[{s:O, s:O}]", "partition", partition, "offset", offset);
    assert_int_equal(tb_eos_offsets_generation_of(stored), 0);
    assert_int_equal(tb_eos_offsets_task_transactions(offset), 41);
    assert_int_equal(tb_eos_offsets_generation_in(offset), 5);
    json_t *plugin = json_pack("{s:i, s:i}", "task", 2, "slot", 0);
    assert_false(tb_eos_offsets_is_reserved(plugin));
    json_decref(plugin);
    json_decref(stored);
    json_decref(partition);
    json_decref(offset);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marker_metadata),
        cmocka_unit_test(test_the_form_before_generations_is_generation_zero),
        cmocka_unit_test(test_other_metadata_is_no_marker),
        cmocka_unit_test(test_generation_among_stored_offsets),
        cmocka_unit_test(test_task_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
