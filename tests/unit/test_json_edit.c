#include "tb_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/converters/tb_json_edit.h"
#include "connectors/runtime/task/tb_task_transforms.h"

/*
 * The chain on a schemaless JSON object's text (tb_chain_apply_json(),
 * connectors/converters/tb_json_edit.h) against the tree path
 * (tb_chain_apply() on the map JsonConverter reads, written back): the same
 * result, topic and bytes for every value the text path takes, and the text
 * path takes the values it should.
 */

typedef struct {
    const char *text;
    bool edited; /* whether the text path takes it */
} tb_case_t;

static tb_converter_t *json_converter(bool schemas)
{
    char errstr[256];
    json_t *settings = json_pack("{s:s}", "schemas.enable", schemas ? "true" : "false");
    tb_converter_t *c = tb_converter_create("org.apache.kafka.connect.json.JsonConverter",
                                            settings, false, errstr, sizeof(errstr));
    json_decref(settings);
    assert_non_null(c);
    return c;
}

static tb_chain_t *chain_of(const char *config_json)
{
    char errstr[256] = "";
    json_t *config = json_loads(config_json, 0, NULL);
    assert_non_null(config);
    tb_chain_t *chain = tb_chain_create(config, errstr, sizeof(errstr));
    json_decref(config);
    if (chain == NULL) {
        fail_msg("%s", errstr);
    }
    return chain;
}

static tb_record_t record_of(const char *text)
{
    return (tb_record_t){
        .topic = "bench-in-7",
        .partition = 3,
        .offset = 42,
        .timestamp = 1700000000000,
        .key = {.bytes = "k", .len = 1},
        .value = {.bytes = text, .len = text != NULL ? strlen(text) : 0}};
}

/* What the sink gets of text through chain: rc, topic, value (malloc'd). */
typedef struct {
    int rc;
    char topic[128];
    char *value;
    size_t len;
} tb_outcome_t;

static tb_outcome_t sink_outcome(tb_chain_t *chain, tb_converter_t *const converters[2],
                                 const char *text, bool text_out)
{
    tb_record_t record = record_of(text);
    tb_sink_record_t out = {0};
    bool converted[2] = {false, false};
    tb_transform_failure_t failure = {0};
    tb_outcome_t o = {0};
    o.rc = tb_sink_transform(chain, converters, &record, &out, text_out, converted,
                             &failure);
    if (o.rc == 0) {
        snprintf(o.topic, sizeof(o.topic), "%s", out.topic);
        assert_true(converted[TB_SIDE_VALUE]);
        assert_false(converted[TB_SIDE_KEY]);
        o.value = (char *)out.value;
        o.len = out.value_len;
    } else if (o.rc == -1) {
        o.value = strdup(failure.reason);
        o.len = strlen(o.value);
    }
    tb_record_release(&record);
    return o;
}

/* Whether the text path takes text (and then its result is the tree's). */
static bool edited(tb_chain_t *chain, const char *text)
{
    tb_record_t record = record_of(text);
    tb_buf_t out = {0};
    const char *failed_class = NULL;
    char errstr[256];
    int rc =
        tb_chain_apply_json(chain, &record, &out, &failed_class, errstr, sizeof(errstr));
    tb_buf_release(&out);
    tb_record_release(&record);
    return rc != TB_RESULT_DECLINED;
}

static void assert_cases(const char *config_json, const tb_case_t *cases, size_t n)
{
    tb_chain_t *chain = chain_of(config_json);
    tb_converter_t *converters[2] = {json_converter(false), json_converter(false)};
    for (size_t i = 0; i < n; i++) {
        const char *text = cases[i].text;
        if (edited(chain, text) != cases[i].edited) {
            fail_msg("%s: the text path %s it", text != NULL ? text : "(null)",
                     cases[i].edited ? "declined" : "took");
        }
        tb_outcome_t fast = sink_outcome(chain, converters, text, true);
        tb_outcome_t tree = sink_outcome(chain, converters, text, false);
        assert_int_equal(fast.rc, tree.rc);
        assert_string_equal(fast.topic, tree.topic);
        if (fast.len != tree.len ||
            (fast.len > 0 && memcmp(fast.value, tree.value, fast.len) != 0)) {
            fail_msg("%s:\n text path %.*s\n tree path %.*s", text, (int)fast.len,
                     fast.value, (int)tree.len, tree.value);
        }
        free(fast.value);
        free(tree.value);
    }
    tb_converter_destroy(converters[0]);
    tb_converter_destroy(converters[1]);
    tb_chain_destroy(chain);
}

/* The bench's chain, with every field InsertField can add. */
static const char bench_chain[] =
    "{\"transforms\":\"route,insert,drop\","
    "\"transforms.route.type\":\"org.apache.kafka.connect.transforms.RegexRouter\","
    "\"transforms.route.regex\":\"bench-in-(.*)\","
    "\"transforms.route.replacement\":\"routed-$1\","
    "\"transforms.insert.type\":"
    "\"org.apache.kafka.connect.transforms.InsertField$Value\","
    "\"transforms.insert.static.field\":\"origin\","
    "\"transforms.insert.static.value\":\"bench\","
    "\"transforms.insert.topic.field\":\"topic\","
    "\"transforms.insert.partition.field\":\"part!\","
    "\"transforms.insert.offset.field\":\"off?\","
    "\"transforms.insert.timestamp.field\":\"ts\","
    "\"transforms.drop.type\":"
    "\"org.apache.kafka.connect.transforms.ReplaceField$Value\","
    "\"transforms.drop.exclude\":\"note,gone\"}";

static void test_tricky_values(void **state)
{
    (void)state;
    static char deep[200];
    size_t d = 0;
    for (int i = 0; i < 40; i++) {
        d += (size_t)snprintf(deep + d, sizeof(deep) - d, "%s", i == 0 ? "{\"a\":" : "[");
    }
    d += (size_t)snprintf(deep + d, sizeof(deep) - d, "1");
    for (int i = 1; i < 40; i++) {
        d += (size_t)snprintf(deep + d, sizeof(deep) - d, "]");
    }
    snprintf(deep + d, sizeof(deep) - d, "}");
    const tb_case_t cases[] = {
        {"{\"id\":12,\"customer\":\"c95028\",\"amount\":56748.12,\"currency\":\"EUR\","
         "\"note\":\"xxxxxxxx\"}",
         true},
        {"{\"id\":1,\"ts\":1765140000000,\"note\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
         true},
        {" {\n \"id\" : 1 ,\t\"note\" : \"x\" ,\"b\":true } \r\n", true},
        {"{}", true},
        {"{ }", true},
        /* reals of every form: verbatim, or rewritten as the writer writes them */
        {"{\"a\":1.0,\"b\":1e5,\"c\":-0.0,\"d\":1.50,\"e\":0.001,\"f\":1E-7,"
         "\"g\":123456789012345678.0,\"h\":1.0E10,\"i\":2.5e+3,\"j\":-1.0E-5}",
         true},
        {"{\"pi\":3.14159265358979323846264338327950,\"dec\":0.1000000000000000055511}",
         true},
        {"{\"tiny\":4.9E-324,\"huge\":1.7976931348623157E308,\"z\":0.0,\"y\":0}", true},
        {"{\"over\":1E400}", false},
        {"{\"long\":1.00000000000000000000000000000000000000000001}", false},
        /* integers */
        {"{\"max\":9223372036854775807,\"min\":-9223372036854775808,\"zero\":0}", true},
        {"{\"big\":9223372036854775808}", false},
        {"{\"bigger\":123456789012345678901234567890}", false},
        {"{\"m\":-0}", false},
        /* strings */
        {"{\"u\":\"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80\",\"s\":\"\"}", true},
        {"{\"e\":\"a\\\"b\\\\c\\nd\\te\\rf\\bg\\fh\"}", true},
        {"{\"e\":\"caf\\u00e9\"}", false},
        {"{\"e\":\"a\\/b\"}", false},
        {"{\"e\":\"nul\\u0000\"}", false},
        {"{\"s\":\"\xff\"}", false},
        {"{\"s\":\"\xc0\xaf\"}", false},
        {"{\"k\\u0041\":1}", false},
        {"{\"k\\n\":1}", false},
        {"{\"\xc3\xa9t\xc3\xa9\":1}", true},
        /* keys the chain inserts or removes, already there */
        {"{\"origin\":\"elsewhere\",\"id\":1,\"topic\":null,\"part\":7,\"gone\":[1]}",
         true},
        {"{\"note\":1,\"note\":2}", false},
        {"{\"a\":1,\"b\":2,\"a\":3}", false},
        /* nested */
        {"{\"n\":{\"a\":[1,2,{\"b\":null}],\"c\":true,\"d\":false,\"e\":{}},\"l\":[]}",
         true},
        {"{\"n\":[1.5,\"s\",[],[[]],{\"x\":-2}]}", true},
        {"{\"n\":{\"a\": 1}}", false},
        {"{\"n\":[1, 2]}", false},
        {"{\"n\":{\"a\":1,\"a\":2}}", false},
        {"{\"n\":[1.50]}", false},
        {"{\"n\":[1e5]}", false},
        {"{\"n\":{\"k\\u0041\":1}}", false},
        {deep, false},
        /* not an object, or not JSON */
        {"[1,2]", false},
        {"\"text\"", false},
        {"42", false},
        {"null", false},
        {NULL, false},
        {"", false},
        {"{\"a\":1} x", false},
        {"{\"a\":1,}", false},
        {"{\"a\":01}", false},
        {"{\"a\":.5}", false},
        {"{\"a\":1.}", false},
        {"{\"a\":tru}", false},
        {"{\"a\" 1}", false},
        {"{\"a\":\"open}", false},
    };
    assert_cases(bench_chain, cases, sizeof(cases) / sizeof(cases[0]));
}

/* Reals without an exponent, which the text path takes as they are when
 * they are what Double.toString writes (json_edit.c, java_plain_decimal):
 * the edges of that test and a spread of random ones, each against the
 * tree path. */
static void test_plain_decimals(void **state)
{
    (void)state;
    static const char *const edges[] = {"0.001",
                                        "0.0009999",
                                        "0.00099999999999999",
                                        "0.01",
                                        "0.1",
                                        "0.10",
                                        "0.0",
                                        "-0.0",
                                        "0.00",
                                        "5.0",
                                        "5.00",
                                        "50.0",
                                        "-5.25",
                                        "1.5",
                                        "1.50",
                                        "9999999.0",
                                        "9999999.99",
                                        "9999999.99999999",
                                        "9999999.999999999",
                                        "10000000.0",
                                        "1234567.12345678",
                                        "1234567.123456789",
                                        "123456789012345.0",
                                        "0.123456789012345",
                                        "0.1234567890123456",
                                        "0.30000000000000004",
                                        "0.3",
                                        "100.001",
                                        "-0.001",
                                        "-9999999.99999999",
                                        "18916.04",
                                        "0.00100",
                                        "0.0010",
                                        "1000000.5",
                                        "3.0000001"};
    enum { RANDOM = 3000, EDGES = sizeof(edges) / sizeof(edges[0]) };
    static char texts[EDGES + RANDOM][64];
    static tb_case_t cases[EDGES + RANDOM];
    uint64_t seed = 41;
    for (size_t i = 0; i < EDGES + RANDOM; i++) {
        if (i < EDGES) {
            snprintf(texts[i], sizeof(texts[i]), "{\"a\":%s}", edges[i]);
        } else {
            char number[40];
            size_t n = 0;
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            size_t integer_digits = (size_t)(seed >> 60) % 9; /* 0: the number is 0.F */
            size_t fraction_digits = 1 + (size_t)(seed >> 40) % 16;
            if (seed >> 63) {
                number[n++] = '-';
            }
            for (size_t d = 0; d < integer_digits; d++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                number[n++] =
                    (char)('0' + (d == 0 ? 1 + (seed >> 33) % 9 : (seed >> 33) % 10));
            }
            if (integer_digits == 0) {
                number[n++] = '0';
            }
            number[n++] = '.';
            for (size_t d = 0; d < fraction_digits; d++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                /* zeros often, for the leading and trailing zero rules */
                number[n++] =
                    (char)((seed >> 33) % 3 == 0 ? '0' : '0' + (seed >> 35) % 10);
            }
            number[n] = '\0';
            snprintf(texts[i], sizeof(texts[i]), "{\"a\":%s}", number);
        }
        cases[i] = (tb_case_t){texts[i], true};
    }
    assert_cases(bench_chain, cases, EDGES + RANDOM);
}

/* What grew for one large object is freed when the next is read: the
 * chain's object stays small for the records after it. */
static void test_large_object_not_kept(void **state)
{
    (void)state;
    enum { MEMBERS = 1000, LONG_VALUE = 100 * 1024 };
    tb_buf_t large = {0};
    tb_buf_append(&large, "{", 1);
    for (int i = 0; i < MEMBERS; i++) {
        char member[32];
        int n = snprintf(member, sizeof(member), "%s\"m%d\":%d", i > 0 ? "," : "", i, i);
        tb_buf_append(&large, member, (size_t)n);
    }
    tb_buf_append(&large, "}", 1);
    assert_false(large.failed);
    char *long_value = malloc(LONG_VALUE);
    assert_non_null(long_value);
    memset(long_value, 'v', LONG_VALUE);

    tb_json_object_t o = {0};
    assert_true(tb_json_object_read(&o, large.data, large.len));
    assert_int_equal(o.count, MEMBERS);
    assert_int_equal(tb_json_object_put_string(&o, "long", long_value, LONG_VALUE), 0);
    assert_true(o.cap >= MEMBERS);
    assert_true(o.values.cap >= LONG_VALUE);

    const char small[] = "{\"a\":1.5}";
    assert_true(tb_json_object_read(&o, small, strlen(small)));
    assert_true(o.cap <= TB_JSON_OBJECT_KEEP_MEMBERS);
    assert_true(o.values.cap <= TB_JSON_OBJECT_KEEP_BYTES);
    tb_buf_t out = {0};
    tb_json_object_write(&o, &out);
    assert_int_equal(out.len, strlen(small));
    assert_memory_equal(out.data, small, out.len);

    tb_buf_release(&out);
    tb_json_object_release(&o);
    free(long_value);
    tb_buf_release(&large);
}

/* ReplaceField's renames and include: a rename onto a kept name replaces
 * its value where that name first stands. */
static void test_renames(void **state)
{
    (void)state;
    static const char renames_chain[] =
        "{\"transforms\":\"keep,insert\","
        "\"transforms.keep.type\":"
        "\"org.apache.kafka.connect.transforms.ReplaceField$Value\","
        "\"transforms.keep.include\":\"a,id,c,n,x\","
        "\"transforms.keep.renames\":\"a:id,c:z,x:c\","
        "\"transforms.insert.type\":"
        "\"org.apache.kafka.connect.transforms.InsertField$Value\","
        "\"transforms.insert.static.field\":\"z\","
        "\"transforms.insert.static.value\":\"static\"}";
    const tb_case_t cases[] = {
        {"{\"a\":1,\"id\":2,\"c\":3,\"dropped\":4}", true},
        {"{\"id\":2,\"a\":1,\"x\":\"xx\",\"c\":3}", true},
        {"{\"n\":{\"a\":1},\"other\":1.50,\"c\":1e3}", true},
        {"{\"a\":\"caf\\u00e9\"}", false},
    };
    assert_cases(renames_chain, cases, sizeof(cases) / sizeof(cases[0]));
}

/* Chains the text path leaves to the tree: a predicate, a $Key transform,
 * a transform with no text form; and a JsonConverter with schemas. */
static void test_declined_chains(void **state)
{
    (void)state;
    static const char *const chains[] = {
        "{\"transforms\":\"insert\","
        "\"transforms.insert.type\":"
        "\"org.apache.kafka.connect.transforms.InsertField$Value\","
        "\"transforms.insert.static.field\":\"o\","
        "\"transforms.insert.static.value\":\"v\","
        "\"transforms.insert.predicate\":\"p\",\"predicates\":\"p\","
        "\"predicates.p.type\":"
        "\"org.apache.kafka.connect.transforms.predicates.TopicNameMatches\","
        "\"predicates.p.pattern\":\"bench-.*\"}",
        "{\"transforms\":\"insert\","
        "\"transforms.insert.type\":"
        "\"org.apache.kafka.connect.transforms.InsertField$Key\","
        "\"transforms.insert.static.field\":\"o\","
        "\"transforms.insert.static.value\":\"v\"}",
        "{\"transforms\":\"insert,mask\","
        "\"transforms.insert.type\":"
        "\"org.apache.kafka.connect.transforms.InsertField$Value\","
        "\"transforms.insert.static.field\":\"o\","
        "\"transforms.insert.static.value\":\"v\","
        "\"transforms.mask.type\":\"org.apache.kafka.connect.transforms.MaskField$"
        "Value\","
        "\"transforms.mask.fields\":\"id\"}",
        "{\"transforms\":\"route\","
        "\"transforms.route.type\":\"org.apache.kafka.connect.transforms.RegexRouter\","
        "\"transforms.route.regex\":\"(.*)\",\"transforms.route.replacement\":\"x$1\"}",
    };
    for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
        tb_chain_t *chain = chain_of(chains[i]);
        assert_false(edited(chain, "{\"id\":1}"));
        tb_chain_destroy(chain);
    }
    /* with schemas.enable the value is an envelope: the sink takes the tree path */
    tb_chain_t *chain = chain_of(bench_chain);
    tb_converter_t *converters[2] = {json_converter(true), json_converter(true)};
    const char *text = "{\"schema\":null,\"payload\":{\"id\":1}}";
    tb_outcome_t o = sink_outcome(chain, converters, text, true);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.value, "{\"id\":1,\"topic\":\"routed-7\",\"part\":3,\"off\":42,"
                                 "\"ts\":1700000000000,\"origin\":\"bench\"}");
    free(o.value);
    tb_converter_destroy(converters[0]);
    tb_converter_destroy(converters[1]);
    tb_chain_destroy(chain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tricky_values),
        cmocka_unit_test(test_plain_decimals),
        cmocka_unit_test(test_large_object_not_kept),
        cmocka_unit_test(test_renames),
        cmocka_unit_test(test_declined_chains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
