/* The registry client without a registry (creation, an unreachable URL and
 * its fail-fast window), its cache, the wire format, and JSON Schema
 * validation. */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "core/tb_time.h"
#include "registry/json_schema/tb_json_schema.h"
#include "registry/tb_registry.h"
#include "registry/tb_registry_cache.h"
#include "core/tb_text.h"
#include "registry/tb_wire.h"

static tb_registry_config_t config_of(const char *urls)
{
    return (tb_registry_config_t){.urls = urls,
                                  .timeout_ms = 1000,
                                  .max_retries = 1,
                                  .retry_wait_ms = 50,
                                  .retry_max_wait_ms = 100,
                                  .cache_capacity = 4,
                                  .latest_ttl_ms = -1};
}

static void test_create_refuses_bad_settings(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_registry_config_t config = config_of("ftp://x");
    assert_null(tb_registry_create(&config, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "not http(s)"));
    config = config_of(" , ");
    assert_null(tb_registry_create(&config, errstr, sizeof(errstr)));
    config = config_of("http://a");
    config.user_info = "u:p";
    config.bearer_token = "t";
    assert_null(tb_registry_create(&config, errstr, sizeof(errstr)));
    config = config_of("https://user:secret@a:1/, http://b:2");
    tb_registry_t *r = tb_registry_create(&config, errstr, sizeof(errstr));
    assert_non_null(r);
    tb_registry_destroy(r);
}

static void test_unreachable_registry_is_unavailable_then_fails_fast(void **state)
{
    (void)state;
    char errstr[256] = "";
    /* port 9 (discard) on loopback: refused at once */
    tb_registry_config_t config =
        config_of("http://user:secret@127.0.0.1:9,http://127.0.0.1:9");
    tb_registry_t *r = tb_registry_create(&config, errstr, sizeof(errstr));
    tb_registry_schema_t *schema = NULL;
    assert_non_null(r);
    assert_int_equal(tb_registry_schema_by_id(r, 1, &schema, errstr, sizeof(errstr)),
                     TB_REGISTRY_UNAVAILABLE);
    assert_non_null(strstr(errstr, "unavailable after 2 attempt(s)"));
    assert_null(strstr(errstr, "secret")); /* user info is never shown */
    int64_t started = tb_monotonic_ms();
    assert_int_equal(tb_registry_schema_by_id(r, 1, &schema, errstr, sizeof(errstr)),
                     TB_REGISTRY_UNAVAILABLE);
    assert_true(tb_monotonic_ms() - started < 40);
    tb_registry_destroy(r);
}

static void test_cache_keeps_the_most_recently_used(void **state)
{
    (void)state;
    tb_registry_cache_t *c = tb_registry_cache_create(2);
    tb_registry_schema_t *a = tb_registry_schema_new();
    tb_registry_schema_t *b = tb_registry_schema_new();
    tb_registry_schema_t *d = tb_registry_schema_new();
    assert_int_equal(tb_registry_cache_put(c, "a", 1, a, 0), 0);
    assert_int_equal(tb_registry_cache_put(c, "b", 1, b, 0), 0);
    tb_registry_schema_release(tb_registry_cache_get(c, "a", 1, 0, -1)); /* a is used */
    assert_int_equal(tb_registry_cache_put(c, "d", 1, d, 0), 0);         /* evicts b */
    assert_null(tb_registry_cache_get(c, "b", 1, 0, -1));
    tb_registry_schema_t *got = tb_registry_cache_get(c, "a", 1, 0, -1);
    assert_ptr_equal(got, a);
    tb_registry_schema_release(got);
    assert_null(tb_registry_cache_get(c, "d", 1, 100, 50)); /* too old */
    tb_registry_schema_release(a);
    tb_registry_schema_release(b);
    tb_registry_schema_release(d);
    tb_registry_cache_destroy(c);
}

static void test_wire_frames_and_indexes(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_buf_t b = {0};
    const uint8_t *payload;
    size_t payload_len, count, used;
    int32_t id, indexes[TB_WIRE_MAX_INDEXES];
    static const int32_t path[] = {1, 0, 2};
    static const int32_t first[] = {0};

    tb_wire_header(&b, 258);
    tb_wire_write_indexes(&b, first, 1);
    tb_wire_write_indexes(&b, path, 3);
    assert_int_equal(tb_wire_parse((uint8_t *)b.data, b.len, &id, &payload, &payload_len,
                                   errstr, sizeof(errstr)),
                     0);
    assert_int_equal(id, 258);
    assert_int_equal(payload[0], 0); /* [0] is the single byte 0 */
    assert_int_equal(tb_wire_read_indexes(payload, payload_len, indexes, &count, &used,
                                          errstr, sizeof(errstr)),
                     0);
    assert_int_equal(count, 1);
    assert_int_equal(used, 1);
    assert_int_equal(tb_wire_read_indexes(payload + 1, payload_len - 1, indexes, &count,
                                          &used, errstr, sizeof(errstr)),
                     0);
    assert_int_equal(count, 3);
    assert_int_equal(indexes[2], 2);
    assert_int_equal(tb_wire_parse((const uint8_t *)"\x01\0\0\0\1", 5, &id, &payload,
                                   &payload_len, errstr, sizeof(errstr)),
                     -1);
    assert_non_null(strstr(errstr, "magic byte 1"));
    assert_int_equal(tb_wire_parse((const uint8_t *)"\0\0", 2, &id, &payload,
                                   &payload_len, errstr, sizeof(errstr)),
                     -1);
    tb_buf_release(&b);
}

static int validate(const char *schema_text, const char *value_text, char *errstr,
                    size_t errstr_size)
{
    tb_json_schema_t *schema =
        tb_json_schema_create(schema_text, NULL, errstr, errstr_size);
    json_t *value = json_loads(value_text, JSON_DECODE_ANY, NULL);
    assert_non_null(schema);
    assert_non_null(value);
    int rc = tb_json_schema_validate(schema, value, errstr, errstr_size);
    json_decref(value);
    tb_json_schema_destroy(schema);
    return rc;
}

static void test_json_schema_keywords(void **state)
{
    (void)state;
    char errstr[256] = "";
    const char *schema =
        "{\"type\":\"object\",\"required\":[\"a\"],\"additionalProperties\":false,"
        "\"definitions\":{\"pos\":{\"type\":\"integer\",\"exclusiveMinimum\":0}},"
        "\"properties\":{\"a\":{\"$ref\":\"#/definitions/pos\"},"
        "\"s\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\",\"maxLength\":3},"
        "\"l\":{\"type\":\"array\",\"uniqueItems\":true,\"items\":{\"enum\":[1,2,3]}},"
        "\"o\":{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]},"
        "\"n\":{\"not\":{\"type\":\"null\"}}}}";
    assert_int_equal(validate(schema, "{\"a\":1,\"s\":\"ab\",\"l\":[1,2],\"o\":3}",
                              errstr, sizeof(errstr)),
                     0);
    assert_int_equal(validate(schema, "{\"s\":\"ab\"}", errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "required"));
    assert_int_equal(validate(schema, "{\"a\":0}", errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "exclusiveMinimum"));
    assert_int_equal(validate(schema, "{\"a\":1,\"s\":\"AB\"}", errstr, sizeof(errstr)),
                     -1);
    assert_non_null(strstr(errstr, "/s: pattern"));
    assert_int_equal(validate(schema, "{\"a\":1,\"l\":[1,1]}", errstr, sizeof(errstr)),
                     -1);
    assert_non_null(strstr(errstr, "uniqueItems"));
    assert_int_equal(validate(schema, "{\"a\":1,\"l\":[4]}", errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "enum"));
    assert_int_equal(validate(schema, "{\"a\":1,\"o\":1.5}", errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "oneOf"));
    assert_int_equal(validate(schema, "{\"a\":1,\"n\":null}", errstr, sizeof(errstr)),
                     -1);
    assert_int_equal(validate(schema, "{\"a\":1,\"x\":1}", errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "additionalProperties"));
    assert_int_equal(validate("{\"type\":\"integer\"}", "2.0", errstr, sizeof(errstr)),
                     0);
}

/* Compact JSON as jansson writes it, but reals in their shortest spelling. */
static void test_json_text_keeps_short_reals(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"{ \"a\" : [1, 2.50, 0.1, -0.0, 1e300, 3.0], \"b\":null }",
         "{\"a\":[1,2.5,0.1,-0.0,1e+300,3.0],\"b\":null}"},
        {"{\"q\\\"\\n\":\"\\u0001\u00e9\",\"t\":true,\"f\":false}",
         "{\"q\\\"\\n\":\"\\u0001\u00e9\",\"t\":true,\"f\":false}"},
        {"4729.01", "4729.01"},
        {"-9223372036854775808", "-9223372036854775808"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *value = json_loads(cases[i][0], JSON_DECODE_ANY, NULL);
        tb_buf_t out = {0};
        size_t n;
        assert_non_null(value);
        tb_text_json(&out, value);
        char *text = tb_buf_take(&out, &n);
        assert_non_null(text);
        assert_int_equal(n, strlen(cases[i][1]));
        assert_memory_equal(text, cases[i][1], n);
        free(text);
        json_decref(value);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_refuses_bad_settings),
        cmocka_unit_test(test_unreachable_registry_is_unavailable_then_fails_fast),
        cmocka_unit_test(test_cache_keeps_the_most_recently_used),
        cmocka_unit_test(test_wire_frames_and_indexes),
        cmocka_unit_test(test_json_schema_keywords),
        cmocka_unit_test(test_json_text_keeps_short_reals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
