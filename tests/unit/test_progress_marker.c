/* The exactly-once progress marker: its metadata (generation and source
 * offsets), its size limit, the form before generations, and the offsets
 * generation kept among a connector's stored offsets. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_progress_marker.h"

/* count {partition, offset} entries of FileStreamSource's shape. */
static json_t *file_offsets(size_t count)
{
    json_t *offsets = json_array();
    for (size_t i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof(name), "/var/log/app/part-%05zu.log", i);
        json_array_append_new(offsets,
                              json_pack("{s:{s:s}, s:{s:I}}", "partition", "filename",
                                        name, "offset", "position", (json_int_t)i * 100));
    }
    return offsets;
}

static void test_metadata_round_trip(void **state)
{
    (void)state;
    json_t *offsets = file_offsets(3);
    char errstr[256] = "";
    size_t size;
    char *metadata = tb_progress_marker_encode(7, offsets, &size, errstr, sizeof(errstr));
    assert_non_null(metadata);
    assert_int_equal(size, strlen(metadata));
    int64_t generation = -1;
    json_t *decoded = NULL;
    assert_int_equal(tb_progress_marker_decode(metadata, size, &generation, &decoded), 0);
    assert_int_equal(generation, 7);
    assert_true(json_equal(decoded, offsets));
    json_decref(decoded);
    free(metadata);
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

/* The limit is the broker's 4096 bytes: a transaction over many source
 * partitions does not fit (the engine halves it until it does), and the
 * message says how large it was and why that is too large. */
static void test_many_partitions_do_not_fit(void **state)
{
    (void)state;
    size_t fitting = 0;
    char errstr[512] = "";
    for (size_t count = 1; count < 200; count++) {
        json_t *offsets = file_offsets(count);
        size_t size;
        char *metadata =
            tb_progress_marker_encode(INT64_MAX, offsets, &size, errstr, sizeof(errstr));
        json_decref(offsets);
        if (metadata == NULL) {
            break;
        }
        assert_true(size <= TB_PROGRESS_MARKER_MAX_BYTES);
        free(metadata);
        fitting = count;
    }
    assert_true(fitting > 10 && fitting < 199);
    assert_non_null(strstr(errstr, "do not fit in a progress marker"));
    assert_non_null(strstr(errstr, "offset.metadata.max.bytes"));
    json_t *offsets = file_offsets(fitting + 1);
    rd_kafka_topic_partition_list_t *list =
        tb_progress_marker_make("t", 5, INT64_MAX, offsets, errstr, sizeof(errstr));
    assert_null(list);
    json_decref(offsets);
    offsets = file_offsets(fitting);
    list = tb_progress_marker_make("t", 5, INT64_MAX, offsets, errstr, sizeof(errstr));
    assert_non_null(list);
    assert_int_equal(list->elems[0].offset, 5);
    assert_int_equal(list->elems[0].partition, 0);
    rd_kafka_topic_partition_list_destroy(list);
    json_decref(offsets);
}

static void test_generation_among_stored_offsets(void **state)
{
    (void)state;
    json_t *stored = file_offsets(2);
    assert_int_equal(tb_progress_marker_generation_of(stored), 0);
    json_t *entry = tb_progress_marker_generation_entry(3);
    assert_true(tb_progress_marker_is_generation(json_object_get(entry, "partition")));
    json_array_append_new(stored, entry);
    assert_int_equal(tb_progress_marker_generation_of(stored), 3);
    assert_false(tb_progress_marker_is_generation(
        json_object_get(json_array_get(stored, 0), "partition")));
    json_decref(stored);
}

static void test_group_names(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(tb_progress_marker_group("orders", 2, buf, sizeof(buf)),
                        "__tributary-eos-orders-2");
    assert_string_equal(tb_progress_marker_legacy_group("orders", 2, buf, sizeof(buf)),
                        "connect-orders-2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metadata_round_trip),
        cmocka_unit_test(test_the_form_before_generations_is_generation_zero),
        cmocka_unit_test(test_other_metadata_is_no_marker),
        cmocka_unit_test(test_many_partitions_do_not_fit),
        cmocka_unit_test(test_generation_among_stored_offsets),
        cmocka_unit_test(test_group_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
