/* Every table tributary has, the worker's, the connector framework's, each
 * plugin's and each converter's, parses what users write the way the
 * engines read it: an enum value in any case to its listed spelling, a
 * boolean in any case to true or false. Iterating the tables covers keys
 * added later. */
#include "tb_test.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/tb_plugin.h"
#include "server/tb_worker_config.h"

static const char *const converter_classes[] = {
    "org.apache.kafka.connect.storage.StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter",
    "org.apache.kafka.connect.json.JsonConverter",
    "io.confluent.connect.avro.AvroConverter",
    "io.confluent.connect.json.JsonSchemaConverter",
    "io.confluent.connect.protobuf.ProtobufConverter",
};

typedef enum { UPPER, LOWER, MIXED } spelling_t;

static void respell(const char *text, spelling_t spelling, char *out, size_t size)
{
    size_t i = 0;
    for (; text[i] != '\0' && i + 1 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        bool up = spelling == UPPER || (spelling == MIXED && i % 2 == 0);
        out[i] = (char)(up ? toupper(c) : tolower(c));
    }
    out[i] = '\0';
}

/* The value def parses text to, asserting that it gave no error. New
 * reference. */
static json_t *parsed(const tb_config_table_t *table, const tb_config_def_t *def,
                      const char *text)
{
    const tb_config_table_t *tables[] = {table};
    json_t *raw = json_pack("{s:s}", def->name, text);
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    json_t *errors_of_key = json_object_get(errors, def->name);
    if (errors_of_key != NULL) {
        print_error("%s=%s: %s\n", def->name, text,
                    json_string_value(json_array_get(errors_of_key, 0)));
        fail();
    }
    json_t *value = json_incref(json_object_get(values, def->name));
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
    return value;
}

static void check_enum(const tb_config_table_t *table, const tb_config_def_t *def)
{
    for (size_t i = 0; def->one_of[i] != NULL; i++) {
        for (size_t j = i + 1; def->one_of[j] != NULL; j++) {
            /* two values one case apart could not be told apart */
            assert_int_not_equal(strcasecmp(def->one_of[i], def->one_of[j]), 0);
        }
        for (spelling_t s = UPPER; s <= MIXED; s++) {
            char text[128];
            respell(def->one_of[i], s, text, sizeof(text));
            json_t *value = parsed(table, def, text);
            if (!json_is_string(value) ||
                strcmp(json_string_value(value), def->one_of[i]) != 0) {
                print_error("%s=%s parsed to %s, not %s\n", def->name, text,
                            json_string_value(value), def->one_of[i]);
                fail();
            }
            json_decref(value);
        }
    }
}

static void check_boolean(const tb_config_table_t *table, const tb_config_def_t *def)
{
    static const char *const trues[] = {"TRUE", "true", "True", " tRuE "};
    static const char *const falses[] = {"FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof(trues) / sizeof(trues[0]); i++) {
        json_t *value = parsed(table, def, trues[i]);
        assert_true(json_is_true(value));
        json_decref(value);
    }
    for (size_t i = 0; i < sizeof(falses) / sizeof(falses[0]); i++) {
        json_t *value = parsed(table, def, falses[i]);
        assert_true(json_is_false(value));
        json_decref(value);
    }
}

/* Checks every enum and boolean key of table; counts them into *checked. */
static void check_table(const tb_config_table_t *table, size_t *checked)
{
    char reason[256] = "";
    if (tb_config_fields_check(table, reason, sizeof(reason)) != 0) {
        fail_msg("%s", reason); /* a typed column that does not fit its key */
    }
    for (size_t i = 0; i < table->count; i++) {
        /* The case rule is the table's: a key's own check, which may refuse
         * a listed value (metadata.recovery.strategy=none) or a boolean
         * (publish.via.partition.root=true) with its reason, is left out
         * here and tested with its key. */
        tb_config_def_t bare = table->defs[i];
        bare.check = NULL;
        const tb_config_table_t one = {.name = table->name, .defs = &bare, .count = 1};
        if (bare.one_of != NULL) {
            check_enum(&one, &bare);
            (*checked)++;
        }
        if (bare.type == TB_CONFIG_BOOLEAN) {
            check_boolean(&one, &bare);
            (*checked)++;
        }
    }
}

static void test_every_table_parses_any_case(void **state)
{
    (void)state;
    size_t checked = 0;
    check_table(&tb_worker_config_table, &checked);
    check_table(&tb_connector_common_table, &checked);
    check_table(&tb_connector_sink_table, &checked);
    check_table(&tb_connector_source_table, &checked);
    for (size_t i = 0; tb_plugins[i] != NULL; i++) {
        check_table(tb_plugins[i]->config, &checked);
    }
    for (size_t i = 0; i < sizeof(converter_classes) / sizeof(converter_classes[0]);
         i++) {
        const tb_config_table_t *table = tb_converter_config(converter_classes[i]);
        assert_non_null(table);
        check_table(table, &checked);
    }
    /* the framework's own: errors.tolerance, exactly.once.support, ... */
    assert_true(checked >= 10);
}

static void test_unlisted_value_is_refused_naming_the_key(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_connector_common_table};
    json_t *raw = json_pack("{s:s}", "errors.tolerance", "some");
    json_t *errors = json_object();
    json_decref(tb_config_parse(tables, 1, raw, errors));
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(errors, "errors.tolerance"), 0)),
        "Invalid value some for configuration errors.tolerance: String must be one of: "
        "none, all");
    json_decref(errors);
    json_decref(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_table_parses_any_case),
        cmocka_unit_test(test_unlisted_value_is_refused_naming_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
