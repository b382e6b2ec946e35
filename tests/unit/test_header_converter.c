/* header.converter, of a connector and of the worker: Connect's header
 * converter classes (SimpleHeaderConverter, StringConverter and the
 * ByteArrayConverter MirrorMaker 2's configs name) are accepted, by class
 * name or short name; any other class is refused with Connect's message. */
#include "tb_test.h"

#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/tb_plugin.h"
#include "server/tb_worker_config.h"

#define SIMPLE "org.apache.kafka.connect.storage.SimpleHeaderConverter"
#define STRING "org.apache.kafka.connect.storage.StringConverter"
#define BYTES "org.apache.kafka.connect.converters.ByteArrayConverter"
#define UNKNOWN_MESSAGE                                                                  \
    "Invalid value com.example.Headers for configuration header.converter: Class "       \
    "com.example.Headers could not be found."

/* The errors of a file sink's config with header.converter set to name,
 * joined. */
static void connector_errors(const char *name, char *joined, size_t size)
{
    json_t *raw = json_pack("{s:s, s:s, s:s, s:s}", "name", "c", "connector.class",
                            "FileStreamSink", "topics", "t", "header.converter", name);
    json_t *errors = json_object();
    json_decref(
        tb_connector_config_validate(tb_plugin_find("FileStreamSink"), raw, errors));
    tb_config_errors_join(errors, "\n", joined, size);
    json_decref(errors);
    json_decref(raw);
}

static void worker_errors(const char *name, char *joined, size_t size)
{
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    json_t *raw = json_pack("{s:s}", "header.converter", name);
    json_t *errors = json_object();
    json_decref(tb_config_parse(tables, 1, raw, errors));
    tb_config_errors_join(errors, "\n", joined, size);
    json_decref(errors);
    json_decref(raw);
}

static void test_names_and_aliases(void **state)
{
    (void)state;
    assert_string_equal(tb_header_converter_canonical_name(SIMPLE), SIMPLE);
    assert_string_equal(tb_header_converter_canonical_name("SimpleHeaderConverter"),
                        SIMPLE);
    assert_string_equal(tb_header_converter_canonical_name(STRING), STRING);
    assert_string_equal(tb_header_converter_canonical_name("StringConverter"), STRING);
    assert_string_equal(tb_header_converter_canonical_name(BYTES), BYTES);
    assert_string_equal(tb_header_converter_canonical_name("ByteArrayConverter"), BYTES);
    assert_null(tb_header_converter_canonical_name(
        "org.apache.kafka.connect.json.JsonConverter"));
}

static void test_connector_accepts_each_and_refuses_others(void **state)
{
    (void)state;
    char joined[1024];
    const char *accepted[] = {SIMPLE, STRING, BYTES, "SimpleHeaderConverter",
                              "ByteArrayConverter"};
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        connector_errors(accepted[i], joined, sizeof(joined));
        assert_string_equal(joined, "");
    }
    connector_errors("com.example.Headers", joined, sizeof(joined));
    assert_string_equal(joined, UNKNOWN_MESSAGE);
}

static void test_worker_accepts_each_and_refuses_others(void **state)
{
    (void)state;
    char joined[1024];
    worker_errors(SIMPLE, joined, sizeof(joined));
    assert_string_equal(joined, "");
    worker_errors(STRING, joined, sizeof(joined));
    assert_string_equal(joined, "");
    worker_errors(BYTES, joined, sizeof(joined));
    assert_string_equal(joined, "");
    worker_errors("com.example.Headers", joined, sizeof(joined));
    assert_string_equal(joined, UNKNOWN_MESSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_aliases),
        cmocka_unit_test(test_connector_accepts_each_and_refuses_others),
        cmocka_unit_test(test_worker_accepts_each_and_refuses_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
