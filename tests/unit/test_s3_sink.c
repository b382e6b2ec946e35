/*
 * The S3 sink's pure parts: its config checks (Confluent's keys, what is not
 * built refused by name), the partitioners' paths, the object names and how
 * a name is read back (tb_s3_partitioner.h), and the client's text helpers.
 */
#include "tb_test.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/s3/tb_s3_client.h"
#include "connectors/s3/tb_s3_config.h"
#include "connectors/s3/tb_s3_partitioner.h"
#include "connectors/s3/tb_s3_text.h"
#include "connectors/tb_plugin.h"
#include "core/tb_data.h"

extern const tb_plugin_t tb_s3_sink_plugin;

/* The errors of raw (a JSON object of strings) over the base config. */
static json_t *errors_of(const char *raw_extra)
{
    json_t *raw =
        json_pack("{s:s, s:s, s:s}", "s3.bucket.name", "b", "flush.size", "10",
                  "format.class", "io.confluent.connect.s3.format.json.JsonFormat");
    json_t *extra = json_loads(raw_extra, 0, NULL);
    assert_non_null(extra);
    json_object_update(raw, extra);
    const tb_config_table_t *tables[] = {tb_s3_sink_plugin.config};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    tb_s3_sink_plugin.validate(values, errors);
    json_decref(values);
    json_decref(extra);
    json_decref(raw);
    return errors;
}

/* The first message about key, or "". */
static const char *message_of(const json_t *errors, const char *key)
{
    const char *m = json_string_value(json_array_get(json_object_get(errors, key), 0));
    return m != NULL ? m : "";
}

static void test_plugin_is_found_by_confluents_names(void **state)
{
    (void)state;
    assert_ptr_equal(tb_plugin_find("io.confluent.connect.s3.S3SinkConnector"),
                     &tb_s3_sink_plugin);
    assert_ptr_equal(tb_plugin_find("S3SinkConnector"), &tb_s3_sink_plugin);
    assert_ptr_equal(tb_plugin_find("S3Sink"), &tb_s3_sink_plugin);
}

static void test_a_minimal_config_is_valid_with_confluents_defaults(void **state)
{
    (void)state;
    json_t *errors = errors_of("{}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);

    const tb_config_table_t *tables[] = {tb_s3_sink_plugin.config};
    json_t *raw = json_pack("{s:s}", "s3.bucket.name", "b");
    json_t *parse_errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, parse_errors);
    json_decref(parse_errors);
    assert_string_equal(tb_config_string(values, "topics.dir"), "topics");
    assert_string_equal(tb_config_string(values, "directory.delim"), "/");
    assert_string_equal(tb_config_string(values, "file.delim"), "+");
    assert_int_equal(tb_config_int(values, "s3.part.size"), 26214400);
    assert_int_equal(tb_config_int(values, "s3.part.retries"), 3);
    assert_int_equal(tb_config_int(values, "s3.retry.backoff.ms"), 200);
    assert_int_equal(tb_config_int(values, "rotate.interval.ms"), -1);
    assert_string_equal(tb_config_string(values, "timestamp.extractor"), "Wallclock");
    assert_string_equal(tb_config_string(values, "partitioner.class"),
                        "io.confluent.connect.storage.partitioner.DefaultPartitioner");
    json_decref(values);
    json_decref(raw);
}

static void test_formats_and_codecs_not_built_are_refused_by_name(void **state)
{
    (void)state;
    json_t *errors = errors_of(
        "{\"format.class\": \"io.confluent.connect.s3.format.parquet.ParquetFormat\"}");
    assert_int_equal(tb_config_error_count(errors), 0); /* snappy by default */
    json_decref(errors);
    static const char *const parquet_codecs[] = {"none", "gzip", "zstd"};
    for (size_t i = 0; i < 3; i++) {
        char raw[160];
        snprintf(raw, sizeof(raw),
                 "{\"format.class\": \"ParquetFormat\", \"parquet.codec\": \"%s\"}",
                 parquet_codecs[i]);
        errors = errors_of(raw);
        assert_int_equal(tb_config_error_count(errors), 0);
        json_decref(errors);
    }
    errors =
        errors_of("{\"format.class\": \"ParquetFormat\", \"parquet.codec\": \"lzo\", "
                  "\"s3.compression.type\": \"gzip\"}");
    assert_non_null(strstr(message_of(errors, "parquet.codec"), "lzo is not built"));
    assert_non_null(strstr(message_of(errors, "s3.compression.type"), "parquet.codec"));
    json_decref(errors);
    errors = errors_of(
        "{\"format.class\": \"io.confluent.connect.s3.format.avro.AvroFormat\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    errors = errors_of("{\"format.class\": \"AvroFormat\", \"avro.codec\": \"snappy\", "
                       "\"s3.compression.type\": \"gzip\"}");
    assert_non_null(strstr(message_of(errors, "avro.codec"), "snappy is not built"));
    assert_non_null(strstr(message_of(errors, "s3.compression.type"), "avro.codec"));
    json_decref(errors);
    errors = errors_of("{\"format.class\": \"com.example.Other\"}");
    assert_non_null(strstr(message_of(errors, "format.class"), "no format"));
    json_decref(errors);
}

static void test_buffer_bound_below_one_object_is_refused(void **state)
{
    (void)state;
    json_t *errors = errors_of("{\"s3.part.size\": \"8388608\", "
                               "\"s3.buffer.max.bytes\": \"8388608\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    /* ParquetFormat holds a row group beside the part */
    errors = errors_of("{\"s3.part.size\": \"8388608\", \"s3.buffer.max.bytes\": "
                       "\"8388608\", \"format.class\": \"ParquetFormat\"}");
    const char *message = message_of(errors, "s3.buffer.max.bytes");
    assert_non_null(
        strstr(message, "s3.buffer.max.bytes 8388608 is less than one object"));
    assert_non_null(strstr(message, "16777216 bytes"));
    json_decref(errors);
}

static void test_keys_not_built_are_refused_by_name(void **state)
{
    (void)state;
    json_t *errors = errors_of("{\"s3.sse.customer.key\": \"${env:X}\", "
                               "\"schema.compatibility\": \"BACKWARD\"}");
    assert_non_null(strstr(message_of(errors, "s3.sse.customer.key"), "SSE-C"));
    assert_non_null(strstr(message_of(errors, "schema.compatibility"), "only NONE"));
    json_decref(errors);
    /* keys of Confluent's sink outside the table: the runtime refuses them */
    bool listed = false;
    for (size_t i = 0; tb_s3_sink_plugin.refused_keys[i] != NULL; i++) {
        listed = listed || strcmp(tb_s3_sink_plugin.refused_keys[i], "s3.proxy.") == 0;
    }
    assert_true(listed);
}

static void test_keys_and_headers_take_confluents_formats(void **state)
{
    (void)state;
    json_t *errors =
        errors_of("{\"store.kafka.keys\": \"true\", \"store.kafka.headers\": \"true\"}");
    assert_int_equal(tb_config_error_count(errors), 0); /* AvroFormat by default */
    json_decref(errors);
    errors = errors_of("{\"store.kafka.keys\": \"true\", \"keys.format.class\": "
                       "\"io.confluent.connect.s3.format.bytearray.ByteArrayFormat\", "
                       "\"store.kafka.headers\": \"true\", \"headers.format.class\": "
                       "\"ParquetFormat\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    /* as Confluent's: ByteArrayFormat writes no headers */
    errors = errors_of("{\"store.kafka.headers\": \"true\", \"headers.format.class\": "
                       "\"ByteArrayFormat\", \"store.kafka.keys\": \"true\", "
                       "\"keys.format.class\": \"com.example.KeyFormat\"}");
    assert_non_null(strstr(message_of(errors, "headers.format.class"),
                           "ByteArrayFormat is no format of the S3 sink for headers"));
    assert_non_null(strstr(message_of(errors, "keys.format.class"),
                           "com.example.KeyFormat is no format of the S3 sink for keys"));
    json_decref(errors);
    /* a format a view is not stored in is not checked */
    errors = errors_of("{\"headers.format.class\": \"ByteArrayFormat\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    /* the codec of keys in AvroFormat, beside values in JsonFormat */
    errors = errors_of("{\"store.kafka.keys\": \"true\", \"avro.codec\": \"snappy\"}");
    assert_non_null(strstr(message_of(errors, "avro.codec"), "snappy is not built"));
    json_decref(errors);
    /* the memory of the companions counts */
    errors = errors_of("{\"s3.part.size\": \"8388608\", \"s3.buffer.max.bytes\": "
                       "\"16777216\", \"store.kafka.keys\": \"true\", "
                       "\"store.kafka.headers\": \"true\"}");
    assert_non_null(strstr(message_of(errors, "s3.buffer.max.bytes"), "25165824 bytes"));
    json_decref(errors);
}

static void test_a_kms_key_id_needs_a_libcurl_that_signs_it(void **state)
{
    (void)state;
    json_t *errors = errors_of("{\"s3.sse.algorithm\": \"aws:kms\", "
                               "\"s3.sse.kms.key.id\": \"my-key\"}");
    const char *message = message_of(errors, "s3.sse.kms.key.id");
    if (curl_version_info(CURLVERSION_NOW)->version_num < 0x080a00) {
        assert_non_null(strstr(message, "s3.sse.kms.key.id needs libcurl 8.10 or later"));
    } else {
        assert_int_equal(tb_config_error_count(errors), 0);
    }
    json_decref(errors);
    /* the account's key: one SSE header, signed right by every libcurl */
    errors = errors_of("{\"s3.sse.algorithm\": \"aws:kms\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
}

static void test_partitioners_need_their_keys(void **state)
{
    (void)state;
    json_t *errors = errors_of("{\"partitioner.class\": "
                               "\"io.confluent.connect.storage.partitioner."
                               "TimeBasedPartitioner\"}");
    assert_non_null(strstr(message_of(errors, "path.format"), "path.format"));
    assert_non_null(strstr(message_of(errors, "partition.duration.ms"), "positive"));
    assert_non_null(strstr(message_of(errors, "locale"), "locale"));
    assert_non_null(strstr(message_of(errors, "timezone"), "timezone"));
    json_decref(errors);

    errors = errors_of("{\"partitioner.class\": \"FieldPartitioner\"}");
    assert_non_null(strstr(message_of(errors, "partition.field.name"), "needs"));
    json_decref(errors);

    errors = errors_of("{\"partitioner.class\": \"HourlyPartitioner\", \"locale\": "
                       "\"en-US\", \"timezone\": \"Nowhere/Atlantis\"}");
    assert_non_null(strstr(message_of(errors, "timezone"), "Nowhere/Atlantis"));
    json_decref(errors);

    errors = errors_of("{\"partitioner.class\": \"HourlyPartitioner\", \"locale\": "
                       "\"en-US\", \"timezone\": \"UTC\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);

    errors = errors_of("{\"path.format\": \"'year'=GGGG\"}");
    assert_non_null(strstr(message_of(errors, "path.format"), "'G'"));
    json_decref(errors);

    errors = errors_of("{\"partitioner.class\": \"RandomPartitioner\"}");
    assert_non_null(strstr(message_of(errors, "partitioner.class"), "RandomPartitioner"));
    json_decref(errors);
}

static void test_credentials_come_together(void **state)
{
    (void)state;
    json_t *errors = errors_of("{\"aws.access.key.id\": \"${env:A}\"}");
    assert_non_null(strstr(message_of(errors, "aws.access.key.id"), "together"));
    json_decref(errors);
    /* both are PASSWORD: shown as [hidden], resolved from references */
    const tb_config_table_t *table = tb_s3_sink_plugin.config;
    for (size_t i = 0; i < table->count; i++) {
        if (strcmp(table->defs[i].name, "aws.access.key.id") == 0 ||
            strcmp(table->defs[i].name, "aws.secret.access.key") == 0) {
            assert_int_equal(table->defs[i].type, TB_CONFIG_PASSWORD);
        }
    }
}

/* ---- partitioners ---- */

static tb_s3_partitioner_t *partitioner_of(const char *raw_extra)
{
    json_t *raw = json_pack("{s:s}", "s3.bucket.name", "b");
    json_t *extra = json_loads(raw_extra, 0, NULL);
    json_object_update(raw, extra);
    const tb_config_table_t *tables[] = {tb_s3_sink_plugin.config};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    tb_s3_settings_t settings;
    assert_int_equal(tb_config_fill(&tb_s3_config_table, values, &settings), 0);
    char errstr[256];
    tb_s3_partitioner_t *p = tb_s3_partitioner_new(&settings, errstr, sizeof(errstr));
    assert_non_null(p);
    json_decref(values);
    json_decref(errors);
    json_decref(extra);
    json_decref(raw);
    return p;
}

static void assert_encoded(const tb_s3_partitioner_t *p, const tb_sink_record_t *r,
                           int64_t time, const char *expected)
{
    char errstr[256];
    char *encoded = tb_s3_partitioner_encode(p, r, time, errstr, sizeof(errstr));
    assert_non_null(encoded);
    assert_string_equal(encoded, expected);
    free(encoded);
}

static void test_default_partitioner(void **state)
{
    (void)state;
    tb_s3_partitioner_t *p = partitioner_of("{}");
    tb_sink_record_t r = {.topic = "t", .partition = 7, .offset = 3};
    assert_encoded(p, &r, 0, "partition=7");
    tb_s3_partitioner_free(p);
}

static void test_field_partitioner(void **state)
{
    (void)state;
    tb_s3_partitioner_t *p = partitioner_of(
        "{\"partitioner.class\": \"FieldPartitioner\", \"partition.field.name\": "
        "\"country,active\", \"directory.delim\": \"/\"}");
    tb_value_t *map = tb_value_map();
    tb_value_map_put(map, tb_value_string("country", 7), tb_value_string("fr", 2));
    tb_value_map_put(map, tb_value_string("active", 6), tb_value_bool(true));
    tb_sink_record_t r = {.topic = "t", .partition = 0, .value_data = map};
    assert_encoded(p, &r, 0, "country=fr/active=true");

    tb_value_t *missing = tb_value_map();
    tb_value_map_put(missing, tb_value_string("country", 7),
                     tb_value_int(TB_TYPE_INT64, 33));
    r.value_data = missing;
    char errstr[256];
    assert_null(tb_s3_partitioner_encode(p, &r, 0, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "active"));
    tb_value_free(map);
    tb_value_free(missing);
    tb_s3_partitioner_free(p);
}

static void test_time_based_partitioners(void **state)
{
    (void)state;
    /* 2026-03-29 01:30:15.250 UTC: the night Paris moves to summer time */
    const int64_t t = 1774747815250LL;
    tb_sink_record_t r = {.topic = "t", .partition = 0, .timestamp = t};

    tb_s3_partitioner_t *hourly = partitioner_of(
        "{\"partitioner.class\": \"HourlyPartitioner\", \"locale\": \"en\", "
        "\"timezone\": \"UTC\", \"timestamp.extractor\": \"Record\"}");
    char errstr[256];
    assert_int_equal(tb_s3_partitioner_time(hourly, &r, 0, errstr, sizeof(errstr)), t);
    assert_encoded(hourly, &r, t, "year=2026/month=03/day=29/hour=01");
    tb_s3_partitioner_free(hourly);

    tb_s3_partitioner_t *daily = partitioner_of(
        "{\"partitioner.class\": \"DailyPartitioner\", \"locale\": \"en\", "
        "\"timezone\": \"Europe/Paris\"}");
    assert_encoded(daily, &r, t, "year=2026/month=03/day=29");
    tb_s3_partitioner_free(daily);

    /* 15-minute directories in Paris (UTC+2 after 01:00 UTC that night) */
    tb_s3_partitioner_t *quarter = partitioner_of(
        "{\"partitioner.class\": \"TimeBasedPartitioner\", \"locale\": \"en\", "
        "\"timezone\": \"Europe/Paris\", \"partition.duration.ms\": \"900000\", "
        "\"path.format\": \"YYYY-MM-dd/HH-mm/'D'DDD/MMM\"}");
    assert_encoded(quarter, &r, t, "2026-03-29/03-30/D088/Mar");
    tb_s3_partitioner_free(quarter);

    /* RecordField: the value's field, a number of ms */
    tb_s3_partitioner_t *field = partitioner_of(
        "{\"partitioner.class\": \"HourlyPartitioner\", \"locale\": \"en\", "
        "\"timezone\": \"UTC\", \"timestamp.extractor\": \"RecordField\", "
        "\"timestamp.field\": \"at\"}");
    tb_value_t *map = tb_value_map();
    tb_value_map_put(map, tb_value_string("at", 2), tb_value_int(TB_TYPE_INT64, 0));
    r.value_data = map;
    assert_int_equal(tb_s3_partitioner_time(field, &r, 5, errstr, sizeof(errstr)), 0);
    assert_encoded(field, &r, 0, "year=1970/month=01/day=01/hour=00");
    r.value_data = NULL;
    assert_int_equal(tb_s3_partitioner_time(field, &r, 5, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "at"));
    tb_value_free(map);
    tb_s3_partitioner_free(field);

    /* Wallclock: now */
    tb_s3_partitioner_t *wall = partitioner_of(
        "{\"partitioner.class\": \"HourlyPartitioner\", \"locale\": \"en\", "
        "\"timezone\": \"UTC\"}");
    assert_int_equal(tb_s3_partitioner_time(wall, &r, 42, errstr, sizeof(errstr)), 42);
    tb_s3_partitioner_free(wall);
}

static void test_object_names_and_their_offsets(void **state)
{
    (void)state;
    tb_s3_layout_t layout = {.topics_dir = "topics",
                             .directory_delim = "/",
                             .file_delim = "+",
                             .zero_pad = 10};
    char *key = tb_s3_object_key(&layout, "orders", "partition=3", 3, 4200, ".json");
    assert_string_equal(key, "topics/orders/partition=3/orders+3+0000004200.json");
    assert_int_equal(tb_s3_key_start_offset(&layout, key, "orders", 3), 4200);
    assert_int_equal(tb_s3_key_start_offset(&layout, key, "orders", 1), -1);
    assert_int_equal(tb_s3_key_start_offset(&layout, key, "order", 3), -1);
    free(key);
    /* a topic holding the delimiters of the name, and a deep directory */
    assert_int_equal(
        tb_s3_key_start_offset(
            &layout, "topics/a+b/year=2026/hour=01/a+b+0+0000000007.bin.gz", "a+b", 0),
        7);
    assert_int_equal(
        tb_s3_key_start_offset(&layout, "topics/t/partition=0/t+0+.json", "t", 0), -1);
    /* the keys and headers beside an object are no objects of values */
    assert_int_equal(
        tb_s3_key_start_offset(&layout, "topics/t/partition=0/t+0+0000000042.keys.avro",
                               "t", 0),
        -1);
    assert_int_equal(tb_s3_key_start_offset(
                         &layout,
                         "topics/t/partition=0/t+0+0000000042.headers.snappy.parquet",
                         "t", 0),
                     -1);
    assert_int_equal(
        tb_s3_key_start_offset(&layout, "topics/t/partition=0/t+0+0000000042.keysx.avro",
                               "t", 0),
        42);
    assert_int_equal(
        tb_s3_key_start_offset(&layout, "topics/t/partition=0/t+0+12", "t", 0), -1);

    tb_s3_layout_t other = {
        .topics_dir = "out", .directory_delim = "#", .file_delim = "-", .zero_pad = 4};
    key = tb_s3_object_key(&other, "t", "partition=0", 0, 5, ".json");
    assert_string_equal(key, "out#t#partition=0#t-0-0005.json");
    assert_int_equal(tb_s3_key_start_offset(&other, key, "t", 0), 5);
    free(key);

    tb_s3_partitioner_t *p = partitioner_of("{}");
    char *prefix = tb_s3_list_prefix(&layout, p, "orders", 2);
    assert_string_equal(prefix, "topics/orders/partition=2/");
    free(prefix);
    tb_s3_partitioner_free(p);
    p = partitioner_of("{\"partitioner.class\": \"FieldPartitioner\", "
                       "\"partition.field.name\": \"x\"}");
    prefix = tb_s3_list_prefix(&layout, p, "orders", 2);
    assert_string_equal(prefix, "topics/orders/");
    free(prefix);
    tb_s3_partitioner_free(p);
}

static void test_client_text_helpers(void **state)
{
    (void)state;
    tb_buf_t out = {0};
    tb_s3_uri_encode(&out, "topics/t+0 x=1~_.-", true);
    assert_string_equal(out.data, "topics/t%2B0%20x%3D1~_.-");
    out.len = 0;
    tb_s3_uri_encode(&out, "a/b", false);
    assert_string_equal(out.data, "a%2Fb");
    free(out.data);

    const char xml[] =
        "<R><Key>a&amp;b&#43;c</Key><Key>two</Key><Code>SlowDown</Code></R>";
    char text[64];
    const char *next = tb_s3_xml_text(xml, strlen(xml), "Key", text, sizeof(text));
    assert_string_equal(text, "a&b+c");
    tb_s3_xml_text(next, strlen(next), "Key", text, sizeof(text));
    assert_string_equal(text, "two");
    assert_null(tb_s3_xml_text(xml, strlen(xml), "Message", text, sizeof(text)));
    assert_string_equal(text, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plugin_is_found_by_confluents_names),
        cmocka_unit_test(test_a_minimal_config_is_valid_with_confluents_defaults),
        cmocka_unit_test(test_formats_and_codecs_not_built_are_refused_by_name),
        cmocka_unit_test(test_buffer_bound_below_one_object_is_refused),
        cmocka_unit_test(test_keys_not_built_are_refused_by_name),
        cmocka_unit_test(test_keys_and_headers_take_confluents_formats),
        cmocka_unit_test(test_a_kms_key_id_needs_a_libcurl_that_signs_it),
        cmocka_unit_test(test_partitioners_need_their_keys),
        cmocka_unit_test(test_credentials_come_together),
        cmocka_unit_test(test_default_partitioner),
        cmocka_unit_test(test_field_partitioner),
        cmocka_unit_test(test_time_based_partitioners),
        cmocka_unit_test(test_object_names_and_their_offsets),
        cmocka_unit_test(test_client_text_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
