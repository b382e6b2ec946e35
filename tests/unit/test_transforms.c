#include "tb_smt_test.h"

static void test_validation_names_the_key_the_user_wrote(void **state)
{
    (void)state;
    json_t *errors =
        validate("{\"transforms\":\"r,i,f,p\",\"transforms.r.type\":\"RegexRouter\","
                 "\"transforms.r.regex\":\"(\",\"transforms.i.type\":"
                 "\"org.apache.kafka.connect.transforms.InsertHeader\",\"transforms.i."
                 "header\":\"h\","
                 "\"transforms.f.type\":\"Filter\",\"transforms.f.predicate\":\"nope\","
                 "\"transforms.p.type\":\"TopicNameMatches\","
                 "\"predicates\":\"t\",\"predicates.t.type\":\"Unknown\"}");
    assert_error(errors, "transforms.r.replacement",
                 "Missing required configuration \"transforms.r.replacement\" which has "
                 "no default value.");
    assert_non_null(
        strstr(json_string_value(
                   json_array_get(json_object_get(errors, "transforms.r.regex"), 0)),
               "Invalid value ( for configuration transforms.r.regex: Invalid "
               "regex"));
    assert_error(
        errors, "transforms.i.value.literal",
        "Missing required configuration \"transforms.i.value.literal\" which has "
        "no default value.");
    assert_error(errors, "transforms.f.predicate",
                 "Invalid value nope for configuration transforms.f.predicate: No "
                 "predicate is defined with alias nope (predicates lists the aliases)");
    assert_error(errors, "transforms.p.type",
                 "Invalid value TopicNameMatches for configuration transforms.p.type: "
                 "Class TopicNameMatches does not implement "
                 "org.apache.kafka.connect.transforms.Transformation");
    assert_error(errors, "predicates.t.type",
                 "Invalid value Unknown for configuration predicates.t.type: Class "
                 "Unknown could not be found.");
    assert_int_equal(tb_config_error_count(errors), 6);
    json_decref(errors);

    errors =
        validate("{\"transforms\":\"f\",\"transforms.f.type\":\"Filter\","
                 "\"transforms.f.predicate\":\"t\",\"transforms.f.negate\":\"TRUE\","
                 "\"predicates\":\"t\",\"predicates.t.type\":\"RecordIsTombstone\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
}

static void test_regex_router_routes_without_parsing(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of("{\"transforms\":\"r\",\"transforms.r.type\":"
                                 "\"org.apache.kafka.connect.transforms.RegexRouter\","
                                 "\"transforms.r.regex\":\"(.*)-(raw)\","
                                 "\"transforms.r.replacement\":\"$2.$1\\\\$\"}");
    tb_record_t r = record_of("orders-raw", "x");
    apply(chain, &r, 0, NULL);
    assert_string_equal(r.topic, "raw.orders$");
    tb_record_t other = record_of("orders-raw-not", "x");
    apply(chain, &other, 0, NULL);
    assert_string_equal(other.topic, "orders-raw-not"); /* matches only in part */
    assert_int_equal(typed_calls, 0);
    assert_false(r.value.typed);
    tb_chain_destroy(chain);
}

static void test_timestamp_router(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of("{\"transforms\":\"t\",\"transforms.t.type\":"
                                 "\"TimestampRouter\",\"transforms.t.timestamp.format\":"
                                 "\"yyyy-MM-dd'T'HH\"}");
    tb_record_t r = record_of("logs", "x");
    apply(chain, &r, 0, NULL);
    assert_string_equal(r.topic, "logs-2023-11-14T22");
    r.timestamp = -1;
    apply(chain, &r, -1, "Timestamp missing on record: topic logs-2023-11-14T22");
    tb_chain_destroy(chain);
}

static void test_filter_with_predicates(void **state)
{
    (void)state;
    tb_chain_t *chain =
        chain_of("{\"transforms\":\"drop\",\"transforms.drop.type\":\"Filter\","
                 "\"transforms.drop.predicate\":\"isA\",\"predicates\":\"isA\","
                 "\"predicates.isA.type\":\"TopicNameMatches\",\"predicates.isA."
                 "pattern\":\"a.*\"}");
    tb_record_t a = record_of("alpha", "x");
    tb_record_t b = record_of("beta", "x");
    apply(chain, &a, TB_RESULT_DROPPED, NULL);
    apply(chain, &b, 0, NULL);
    tb_chain_destroy(chain);

    chain = chain_of("{\"transforms\":\"keep\",\"transforms.keep.type\":\"Filter\","
                     "\"transforms.keep.predicate\":\"tomb\","
                     "\"transforms.keep.negate\":\"true\",\"predicates\":\"tomb\","
                     "\"predicates.tomb.type\":\"RecordIsTombstone\"}");
    tb_record_t tomb = record_of("t", NULL);
    tb_record_t live = record_of("t", "x");
    apply(chain, &tomb, 0, NULL); /* negated: only live records are dropped */
    apply(chain, &live, TB_RESULT_DROPPED, NULL);
    assert_int_equal(typed_calls, 0);
    tb_chain_destroy(chain);
}

static void test_headers(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of(
        "{\"transforms\":\"add,drop,mark\",\"transforms.add.type\":\"InsertHeader\","
        "\"transforms.add.header\":\"source\",\"transforms.add.value.literal\":\"file\","
        "\"transforms.drop.type\":\"DropHeaders\",\"transforms.drop.headers\":\"secret,"
        "x\","
        "\"transforms.mark.type\":\"InsertHeader\",\"transforms.mark.header\":\"seen\","
        "\"transforms.mark.value.literal\":\"1\",\"transforms.mark.predicate\":\"has\","
        "\"predicates\":\"has\",\"predicates.has.type\":\"HasHeaderKey\","
        "\"predicates.has.name\":\"source\"}");
    tb_header_t headers[] = {{"secret", "s", 1}, {"keep", "k", 1}, {"secret", NULL, 0}};
    tb_record_t r = record_of("t", "x");
    r.headers = headers;
    r.header_count = 3;
    apply(chain, &r, 0, NULL);
    assert_int_equal(r.header_count, 3);
    assert_string_equal(r.headers[0].name, "keep");
    assert_string_equal(r.headers[1].name, "source");
    assert_memory_equal(r.headers[1].value, "file", 4);
    assert_string_equal(r.headers[2].name, "seen");
    assert_string_equal(headers[0].name, "secret"); /* the engine's stay as they were */
    tb_header_t *taken = NULL;
    size_t taken_count = 0;
    assert_true(tb_record_headers_take(&r, &taken, &taken_count)); /* a source's */
    assert_int_equal(taken_count, 3);
    assert_string_equal(taken[1].name, "source");
    assert_null(r.headers);
    assert_int_equal(r.header_count, 0);
    tb_record_release(&r);
    tb_headers_free(taken, taken_count);
    tb_record_t untouched = record_of("t", "x"); /* no header changed: none to take */
    untouched.headers = headers;
    untouched.header_count = 3;
    assert_false(tb_record_headers_take(&untouched, &taken, &taken_count));
    assert_ptr_equal(untouched.headers, headers);
    tb_chain_destroy(chain);
}

/* Connect's documented chain on a FileStreamSource line (a required string
 * value): HoistField$Value, InsertField$Value, ValueToKey, RegexRouter. */
#define SOURCE_CHAIN                                                                     \
    "{\"transforms\":\"hoist,insert,key,route\","                                        \
    "\"transforms.hoist.type\":\"HoistField$Value\",\"transforms.hoist.field\":"         \
    "\"line\","                                                                          \
    "\"transforms.insert.type\":\"InsertField$Value\","                                  \
    "\"transforms.insert.static.field\":\"source\","                                     \
    "\"transforms.insert.static.value\":\"file\","                                       \
    "\"transforms.insert.topic.field\":\"topic!\","                                      \
    "\"transforms.key.type\":\"ValueToKey\",\"transforms.key.fields\":\"line\","         \
    "\"transforms.route.type\":\"RegexRouter\",\"transforms.route.regex\":\"(.*)\","     \
    "\"transforms.route.replacement\":\"$1-routed\"}"

static void test_structure_chain_with_schema(void **state)
{
    (void)state;
    tb_chain_t *chain = chain_of(SOURCE_CHAIN);
    tb_record_t r = record_of("lines", "hello");
    apply(chain, &r, 0, NULL);
    assert_int_equal(typed_calls, 1); /* parsed once, lazily */
    assert_string_equal(r.topic, "lines-routed");
    char *key = json_of(&r, TB_SIDE_KEY, true);
    char *value = json_of(&r, TB_SIDE_VALUE, true);
    assert_string_equal(key, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":"
                             "\"string\",\"optional\":false,\"field\":\"line\"}],"
                             "\"optional\":false},\"payload\":{\"line\":\"hello\"}}");
    assert_string_equal(value,
                        "{\"schema\":{\"type\":\"struct\",\"fields\":["
                        "{\"type\":\"string\",\"optional\":false,\"field\":\"line\"},"
                        "{\"type\":\"string\",\"optional\":false,\"field\":\"topic\"},"
                        "{\"type\":\"string\",\"optional\":true,\"field\":\"source\"}],"
                        "\"optional\":false},\"payload\":{\"line\":\"hello\","
                        "\"topic\":\"lines\",\"source\":\"file\"}}");
    free(key);
    free(value);
    tb_record_release(&r);
    tb_chain_destroy(chain);
}

static void test_structure_chain_schemaless(void **state)
{
    (void)state;
    char errstr[256];
    json_t *settings = json_pack("{s:s}", "schemas.enable", "false");
    tb_converter_t *c =
        tb_converter_create("JsonConverter", settings, false, errstr, sizeof(errstr));
    json_decref(settings);
    tb_chain_t *chain = chain_of(
        "{\"transforms\":\"insert,key,id\",\"transforms.insert.type\":"
        "\"InsertField$Value\",\"transforms.insert.offset.field\":\"at\","
        "\"transforms.insert.partition.field\":\"p\","
        "\"transforms.key.type\":\"ValueToKey\",\"transforms.key.fields\":\"id,none\","
        "\"transforms.id.type\":\"ExtractField$Key\",\"transforms.id.field\":\"id\"}");
    tb_record_t r = record_of("t", "{\"id\":7,\"n\":\"x\"}");
    r.offset = 41;
    r.typer = converter_typer;
    r.typer_opaque = c;
    apply(chain, &r, 0, NULL);
    char *key = json_of(&r, TB_SIDE_KEY, false);
    char *value = json_of(&r, TB_SIDE_VALUE, false);
    assert_string_equal(key, "7");
    /* Connect inserts topic, partition, offset, timestamp, static */
    assert_string_equal(value, "{\"id\":7,\"n\":\"x\",\"p\":0,\"at\":41}");
    free(key);
    free(value);
    tb_record_release(&r);
    tb_chain_destroy(chain);
    tb_converter_destroy(c);
}

static void test_field_errors_and_tombstones(void **state)
{
    (void)state;
    tb_chain_t *insert = chain_of("{\"transforms\":\"i\",\"transforms.i.type\":"
                                  "\"InsertField$Value\",\"transforms.i.topic.field\":"
                                  "\"t\"}");
    tb_record_t r = record_of("t", "plain");
    apply(insert, &r, -1,
          "Only Struct objects supported for [field insertion], found: java.lang.String");
    tb_record_release(&r);
    tb_record_t tomb = record_of("t", NULL);
    apply(insert, &tomb, 0, NULL); /* a tombstone passes unchanged */
    assert_null(tomb.value.value);
    tb_record_release(&tomb);
    tb_chain_destroy(insert);

    tb_chain_t *chain = chain_of("{\"transforms\":\"h,k\",\"transforms.h.type\":"
                                 "\"HoistField$Value\",\"transforms.h.field\":\"line\","
                                 "\"transforms.k.type\":\"ValueToKey\","
                                 "\"transforms.k.fields\":\"missing\"}");
    r = record_of("t", "x");
    apply(chain, &r, -1, "Field does not exist: missing");
    tb_record_release(&r);
    tb_chain_destroy(chain);

    chain = chain_of("{\"transforms\":\"h,e\",\"transforms.h.type\":"
                     "\"HoistField$Value\",\"transforms.h.field\":\"line\","
                     "\"transforms.e.type\":\"ExtractField$Value\","
                     "\"transforms.e.field\":\"other\"}");
    r = record_of("t", "x");
    apply(chain, &r, -1, "Unknown field: other");
    tb_record_release(&r);
    /* a required string cannot hold a null */
    r = record_of("t", NULL);
    r.typer = string_typer;
    tb_chain_destroy(chain);
    chain = chain_of("{\"transforms\":\"h\",\"transforms.h.type\":\"HoistField$Value\","
                     "\"transforms.h.field\":\"line\"}");
    tb_record_set(&r, TB_SIDE_VALUE, tb_schema_new(TB_TYPE_STRING), NULL);
    apply(chain, &r, -1,
          "Invalid value: null used for required field: \"line\", schema type: STRING");
    tb_record_release(&r);
    tb_chain_destroy(chain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation_names_the_key_the_user_wrote),
        cmocka_unit_test(test_regex_router_routes_without_parsing),
        cmocka_unit_test(test_timestamp_router),
        cmocka_unit_test(test_filter_with_predicates),
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_structure_chain_with_schema),
        cmocka_unit_test(test_structure_chain_schemaless),
        cmocka_unit_test(test_field_errors_and_tombstones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
