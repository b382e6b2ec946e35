/*
 * The search sink's pure parts (connectors/search/): the plugins' names,
 * index names, document ids, the bulk lines a record comes to (actions,
 * external versions, upserts, tombstones) and the config checks that need
 * no cluster.
 */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/search/tb_search_sink.h"
#include "connectors/tb_plugin.h"
#include "core/tb_data.h"
#include "core/tb_record.h"

extern const tb_plugin_t tb_search_sink_plugin;
extern const tb_plugin_t tb_opensearch_sink_plugin;

/* The bulk lines of record under o, as text (owned), and its result. */
static char *lines_of(const tb_search_doc_options_t *o, const tb_sink_record_t *record,
                      tb_search_doc_result_t *result, char *reason, size_t reason_size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *body = open_memstream(&text, &len);
    assert_non_null(body);
    assert_int_equal(tb_search_doc_lines(o, record, body, result, reason, reason_size),
                     0);
    assert_int_equal(fclose(body), 0);
    return text;
}

/* A schemaless record of topic Orders, partition 2, offset 41, value
 * {"n": 7}; key as given (NULL: a null key). */
typedef struct {
    tb_value_t *key;
    tb_value_t *value;
    tb_sink_record_t record;
} fixture_t;

static void fixture_init(fixture_t *f, const char *key, bool tombstone)
{
    memset(f, 0, sizeof(*f));
    f->key = key != NULL ? tb_value_string(key, strlen(key)) : NULL;
    if (!tombstone) {
        f->value = tb_value_map();
        assert_int_equal(tb_value_map_put(f->value, tb_value_string("n", 1),
                                          tb_value_int(TB_TYPE_INT64, 7)),
                         0);
    }
    f->record = (tb_sink_record_t){.topic = "Orders",
                                   .partition = 2,
                                   .offset = 41,
                                   .timestamp = -1,
                                   .key_data = f->key,
                                   .value_data = f->value};
}

static void fixture_clear(fixture_t *f)
{
    tb_value_free(f->key);
    tb_value_free(f->value);
}

static void test_plugins_are_found_by_class_and_simple_name(void **state)
{
    (void)state;
    assert_ptr_equal(
        tb_plugin_find("io.confluent.connect.elasticsearch.ElasticsearchSinkConnector"),
        &tb_search_sink_plugin);
    assert_ptr_equal(tb_plugin_find("ElasticsearchSinkConnector"),
                     &tb_search_sink_plugin);
    assert_ptr_equal(tb_plugin_find("ElasticsearchSink"), &tb_search_sink_plugin);
    assert_ptr_equal(
        tb_plugin_find("io.aiven.kafka.connect.opensearch.OpensearchSinkConnector"),
        &tb_opensearch_sink_plugin);
    assert_ptr_equal(tb_plugin_find("OpensearchSink"), &tb_opensearch_sink_plugin);
}

static void test_index_is_the_topic_lower_cased_or_mapped(void **state)
{
    (void)state;
    char index[256];
    tb_search_doc_options_t o = {0};
    tb_search_doc_index(&o, "My.Orders", index, sizeof(index));
    assert_string_equal(index, "my.orders");

    json_t *map = json_pack("[s,s]", "other:x", "My.Orders:orders-v2");
    o.index_map = map;
    tb_search_doc_index(&o, "My.Orders", index, sizeof(index));
    assert_string_equal(index, "orders-v2");
    tb_search_doc_index(&o, "Unmapped", index, sizeof(index));
    assert_string_equal(index, "unmapped");
    json_decref(map);

    o = (tb_search_doc_options_t){.stream_type = TB_SEARCH_STREAM_LOGS,
                                  .stream_dataset = "shop"};
    tb_search_doc_index(&o, "Orders", index, sizeof(index));
    assert_string_equal(index, "logs-shop-orders");
}

static void test_ids_are_topic_partition_offset_or_the_key(void **state)
{
    (void)state;
    fixture_t f;
    char reason[256] = "";
    char *id = NULL;
    fixture_init(&f, "order-9", false);
    tb_search_doc_options_t o = {.key_ignore = true};
    assert_int_equal(tb_search_doc_id(&o, &f.record, &id, reason, sizeof(reason)), 0);
    assert_string_equal(id, "Orders+2+41");
    free(id);
    o.key_ignore = false;
    assert_int_equal(tb_search_doc_id(&o, &f.record, &id, reason, sizeof(reason)), 0);
    assert_string_equal(id, "order-9");
    free(id);
    fixture_clear(&f);

    fixture_init(&f, NULL, false);
    assert_int_equal(tb_search_doc_id(&o, &f.record, &id, reason, sizeof(reason)), -1);
    assert_null(id);
    assert_non_null(strstr(reason, "key.ignore"));
    fixture_clear(&f);
}

static void test_keyed_index_action_carries_the_offset_as_external_version(void **state)
{
    (void)state;
    fixture_t f;
    tb_search_doc_result_t result;
    char reason[256] = "";
    fixture_init(&f, "order-9", false);
    tb_search_doc_options_t o = {.compact_map_entries = true};
    char *text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_WRITE);
    assert_string_equal(text, "{\"index\":{\"_index\":\"orders\",\"_id\":\"order-9\","
                              "\"version\":41,\"version_type\":\"external\"}}\n"
                              "{\"n\":7}\n");
    free(text);

    /* key.ignore: no version, the id is unique anyway */
    o.key_ignore = true;
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_string_equal(text,
                        "{\"index\":{\"_index\":\"orders\",\"_id\":\"Orders+2+41\"}}\n"
                        "{\"n\":7}\n");
    free(text);

    /* upsert: an update merging the fields, which takes no external version */
    o = (tb_search_doc_options_t){.write_method = TB_SEARCH_UPSERT};
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_string_equal(text, "{\"update\":{\"_index\":\"orders\",\"_id\":\"order-9\"}}\n"
                              "{\"doc\":{\"n\":7},\"doc_as_upsert\":true}\n");
    free(text);
    fixture_clear(&f);
}

static void test_version_header_replaces_the_offset(void **state)
{
    (void)state;
    fixture_t f;
    tb_search_doc_result_t result;
    char reason[256] = "";
    fixture_init(&f, "k", false);
    tb_header_t header = {.name = "v", .value = "1000", .value_len = 4};
    f.record.headers = &header;
    f.record.header_count = 1;
    tb_search_doc_options_t o = {.version_header = "v"};
    char *text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_non_null(strstr(text, "\"version\":1000,"));
    free(text);

    header.value = "-3";
    header.value_len = 2;
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_INVALID);
    assert_non_null(strstr(reason, "external.version.header"));
    free(text);
    fixture_clear(&f);
}

static void test_tombstones_follow_behavior_on_null_values(void **state)
{
    (void)state;
    fixture_t f;
    tb_search_doc_result_t result;
    char reason[256] = "";
    fixture_init(&f, "order-9", true);
    tb_search_doc_options_t o = {.null_values = TB_SEARCH_NULL_DELETE};
    char *text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_WRITE);
    assert_string_equal(text, "{\"delete\":{\"_index\":\"orders\",\"_id\":\"order-9\","
                              "\"version\":41,\"version_type\":\"external\"}}\n");
    free(text);

    o.null_values = TB_SEARCH_NULL_IGNORE;
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_SKIP);
    assert_string_equal(text, "");
    free(text);

    o.null_values = TB_SEARCH_NULL_FAIL;
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_INVALID);
    assert_non_null(strstr(reason, "behavior.on.null.values=fail"));
    free(text);
    fixture_clear(&f);
}

static void test_a_value_that_is_no_structure_is_invalid(void **state)
{
    (void)state;
    tb_search_doc_result_t result;
    char reason[256] = "";
    tb_value_t *value = tb_value_string("plain", 5);
    tb_sink_record_t record = {.topic = "t", .offset = 1, .value_data = value};
    tb_search_doc_options_t o = {.key_ignore = true};
    char *text = lines_of(&o, &record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_INVALID);
    assert_non_null(strstr(reason, "string"));
    free(text);
    tb_value_free(value);
}

static void test_compact_map_entries_applies_to_maps_with_a_schema(void **state)
{
    (void)state;
    fixture_t f;
    tb_search_doc_result_t result;
    char reason[256] = "";
    fixture_init(&f, "k", false);
    /* schemaless: an object whatever compact.map.entries says */
    tb_search_doc_options_t o = {.key_ignore = true, .compact_map_entries = false};
    char *text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_int_equal(result, TB_SEARCH_DOC_WRITE);
    assert_non_null(strstr(text, "\n{\"n\":7}\n"));
    free(text);

    /* a struct's map field: entries under false, an object under true */
    tb_schema_t *schema = tb_schema_new(TB_TYPE_STRUCT);
    assert_int_equal(tb_schema_add_field(schema, "m",
                                         tb_schema_map(tb_schema_new(TB_TYPE_STRING),
                                                       tb_schema_new(TB_TYPE_INT64))),
                     0);
    tb_value_t *value = tb_value_struct(schema);
    assert_int_equal(tb_value_struct_set(value, "m", f.value), 0);
    f.value = NULL;
    f.record.value_schema = schema;
    f.record.value_data = value;
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_non_null(strstr(text, "\n{\"m\":[{\"key\":\"n\",\"value\":7}]}\n"));
    free(text);
    o.compact_map_entries = true;
    text = lines_of(&o, &f.record, &result, reason, sizeof(reason));
    assert_non_null(strstr(text, "\n{\"m\":{\"n\":7}}\n"));
    free(text);
    tb_value_free(value);
    tb_schema_decref(schema);
    fixture_clear(&f);
}

static void test_connection_urls_must_be_http(void **state)
{
    (void)state;
    char reason[256] = "";
    json_t *good = json_pack("[s,s]", "http://a:9200", "https://b:9200");
    json_t *bad = json_pack("[s,s]", "http://a:9200", "ftp://b");
    assert_int_equal(tb_search_urls_check(good, reason, sizeof(reason)), 0);
    assert_int_not_equal(tb_search_urls_check(bad, reason, sizeof(reason)), 0);
    assert_non_null(strstr(reason, "Entry 2"));
    json_decref(good);
    json_decref(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugins_are_found_by_class_and_simple_name),
        cmocka_unit_test(test_index_is_the_topic_lower_cased_or_mapped),
        cmocka_unit_test(test_ids_are_topic_partition_offset_or_the_key),
        cmocka_unit_test(test_keyed_index_action_carries_the_offset_as_external_version),
        cmocka_unit_test(test_version_header_replaces_the_offset),
        cmocka_unit_test(test_tombstones_follow_behavior_on_null_values),
        cmocka_unit_test(test_a_value_that_is_no_structure_is_invalid),
        cmocka_unit_test(test_compact_map_entries_applies_to_maps_with_a_schema),
        cmocka_unit_test(test_connection_urls_must_be_http),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
