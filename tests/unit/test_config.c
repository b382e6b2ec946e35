#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_config.h"

static const char *const modes[] = {"none", "all", NULL};
static const tb_config_range_t positive = {.has_min = true, .min = 1};

static const tb_config_def_t defs[] = {
    {.name = "name",
     .type = TB_CONFIG_STRING,
     .required = true,
     .group = "Common",
     .documentation = "The name."},
    {.name = "tasks.max",
     .type = TB_CONFIG_INT,
     .default_value = "1",
     .range = &positive,
     .group = "Common"},
    {.name = "enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .group = "Common"},
    {.name = "topics", .type = TB_CONFIG_LIST, .default_value = "", .group = "Sink"},
    {.name = "mode",
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .one_of = modes,
     .group = "Sink"},
    {.name = "secret", .type = TB_CONFIG_PASSWORD, .group = "Sink"},
    {.name = "ratio", .type = TB_CONFIG_DOUBLE, .default_value = "0.5"},
};
static const tb_config_table_t table = TB_CONFIG_TABLE("Test", defs);
static const tb_config_table_t *const tables[] = {&table};

static json_t *parse_ok(const char *raw_text, json_t **errors_out)
{
    json_t *raw = json_loads(raw_text, 0, NULL);
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    json_decref(raw);
    *errors_out = errors;
    return values;
}

static const char *first_error(json_t *errors, const char *key)
{
    return json_string_value(json_array_get(json_object_get(errors, key), 0));
}

static void test_defaults_and_types(void **state)
{
    (void)state;
    json_t *errors;
    json_t *v =
        parse_ok("{\"name\":\"c\",\"topics\":\" a, b \",\"enabled\":\"TRUE\"}", &errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    assert_string_equal(tb_config_string(v, "name"), "c");
    assert_int_equal(tb_config_int(v, "tasks.max"), 1);
    assert_true(tb_config_bool(v, "enabled"));
    assert_int_equal(json_array_size(tb_config_list(v, "topics")), 2);
    assert_string_equal(json_string_value(json_array_get(tb_config_list(v, "topics"), 1)),
                        "b");
    assert_null(tb_config_string(v, "secret"));
    assert_true(tb_config_double(v, "ratio") == 0.5);
    json_decref(v);
    json_decref(errors);
}

static void test_every_error_is_collected_with_connect_texts(void **state)
{
    (void)state;
    json_t *errors;
    json_t *v = parse_ok("{\"tasks.max\":\"0\",\"enabled\":\"yes\",\"mode\":\"some\","
                         "\"ratio\":\"x\"}",
                         &errors);
    assert_int_equal(tb_config_error_count(errors), 5);
    assert_string_equal(first_error(errors, "name"),
                        "Missing required configuration \"name\" which has no "
                        "default value.");
    assert_string_equal(first_error(errors, "tasks.max"),
                        "Invalid value 0 for configuration tasks.max: Value must "
                        "be at least 1");
    assert_string_equal(first_error(errors, "enabled"),
                        "Invalid value yes for configuration enabled: Expected "
                        "value to be either true or false");
    assert_string_equal(first_error(errors, "mode"),
                        "Invalid value some for configuration mode: String must "
                        "be one of: none, all");
    assert_string_equal(first_error(errors, "ratio"),
                        "Invalid value x for configuration ratio: Not a number of "
                        "type DOUBLE");
    json_decref(v);
    json_decref(errors);
}

static void test_infos_hide_passwords_and_list_groups(void **state)
{
    (void)state;
    json_t *raw =
        json_loads("{\"name\":\"c\",\"secret\":\"s3cr3t\",\"tasks.max\":\"x\"}", 0, NULL);
    json_t *errors = json_object();
    json_decref(tb_config_parse(tables, 1, raw, errors));
    json_t *infos = tb_config_infos("Test", tables, 1, raw, errors);
    char *text = json_dumps(infos, 0);
    assert_null(strstr(text, "s3cr3t"));
    assert_int_equal(json_integer_value(json_object_get(infos, "error_count")), 1);
    json_t *groups = json_object_get(infos, "groups");
    assert_int_equal(json_array_size(groups), 2);
    assert_string_equal(json_string_value(json_array_get(groups, 0)), "Common");
    json_t *configs = json_object_get(infos, "configs");
    assert_int_equal(json_array_size(configs), 7);
    json_t *secret = json_array_get(configs, 5);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(secret, "value"), "value")),
        "[hidden]");
    json_t *name_def = json_object_get(json_array_get(configs, 0), "definition");
    assert_true(json_is_true(json_object_get(name_def, "required")));
    assert_true(json_is_null(json_object_get(name_def, "default_value")));
    free(text);
    json_t *redacted = tb_config_redact(tables, 1, raw);
    assert_string_equal(json_string_value(json_object_get(redacted, "secret")),
                        "[hidden]");
    assert_string_equal(json_string_value(json_object_get(redacted, "name")), "c");
    json_decref(redacted);
    json_decref(infos);
    json_decref(errors);
    json_decref(raw);
}

static void test_markdown_lists_every_key(void **state)
{
    (void)state;
    char *doc = NULL;
    assert_int_equal(tb_config_doc_markdown(&table, &doc), 0);
    for (size_t i = 0; i < table.count; i++) {
        char needle[64];
        snprintf(needle, sizeof(needle), "| `%s` |", defs[i].name);
        assert_non_null(strstr(doc, needle));
    }
    assert_non_null(strstr(doc, "`none`, `all`"));
    free(doc);
}

static void test_errors_join(void **state)
{
    (void)state;
    json_t *errors = json_object();
    char buf[64];
    assert_int_equal(tb_config_errors_join(errors, "; ", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
    tb_config_error_add(errors, "a", "first");
    tb_config_error_add(errors, "a", "second");
    tb_config_error_add(errors, "b", "third");
    assert_int_equal(tb_config_errors_join(errors, "; ", buf, sizeof(buf)),
                     strlen("first; second; third"));
    assert_string_equal(buf, "first; second; third");
    char small[8];
    assert_int_equal(tb_config_errors_join(errors, "; ", small, sizeof(small)), 7);
    assert_string_equal(small, "first; ");
    json_decref(errors);
}

/* A component's typed struct, one member of each kind. */
typedef struct {
    bool flag;
    int count;
    long long big;
    double ratio;
    const char *name;
    const json_t *list;
    int mode;
} typed_t;

static const char *const write_modes[] = {"insert", "upsert", NULL};

static const tb_config_def_t typed_defs[] = {
    {.name = "flag",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .field = TB_CONFIG_AT(typed_t, flag)},
    {.name = "count",
     .type = TB_CONFIG_INT,
     .default_value = "3",
     .field = TB_CONFIG_AT(typed_t, count)},
    {.name = "big",
     .type = TB_CONFIG_LONG,
     .default_value = "5000000000",
     .field = TB_CONFIG_AT(typed_t, big)},
    {.name = "ratio",
     .type = TB_CONFIG_DOUBLE,
     .default_value = "0.5",
     .field = TB_CONFIG_AT(typed_t, ratio)},
    {.name = "name",
     .type = TB_CONFIG_STRING,
     .required = true,
     .field = TB_CONFIG_AT(typed_t, name)},
    {.name = "list",
     .type = TB_CONFIG_LIST,
     .default_value = "a,b",
     .field = TB_CONFIG_AT(typed_t, list)},
    {.name = "mode",
     .type = TB_CONFIG_STRING,
     .default_value = "insert",
     .one_of = write_modes,
     .field = TB_CONFIG_ENUM_AT(typed_t, mode)},
    {.name = "untyped", .type = TB_CONFIG_STRING, .default_value = "x"},
};
static const tb_config_table_t typed_table = TB_CONFIG_TABLE("typed", typed_defs);

static void test_a_table_fills_its_typed_struct(void **state)
{
    (void)state;
    char errstr[256] = "";
    assert_int_equal(tb_config_fields_check(&typed_table, errstr, sizeof(errstr)), 0);
    json_t *raw = json_pack("{s:s, s:s, s:s, s:s}", "flag", "TRUE", "name", "n", "mode",
                            "UPSERT", "big", "6000000000");
    typed_t typed = {0};
    json_t *values = tb_config_load(&typed_table, raw, &typed, errstr, sizeof(errstr));
    assert_non_null(values);
    assert_true(typed.flag);
    assert_int_equal(typed.count, 3);
    assert_true(typed.big == 6000000000LL);
    assert_true(typed.ratio == 0.5);
    assert_string_equal(typed.name, "n");
    assert_int_equal(json_array_size(typed.list), 2);
    assert_int_equal(typed.mode, 1);
    json_decref(values);
    json_decref(raw);
}

static void test_a_table_that_cannot_be_read_names_its_keys(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *raw = json_pack("{s:s}", "count", "many");
    typed_t typed = {0};
    assert_null(tb_config_load(&typed_table, raw, &typed, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "Invalid value many for configuration count"));
    assert_non_null(strstr(errstr, "name"));
    json_decref(raw);
}

/* A key whose null means unset: its column holds the parsed value. */
static void test_a_value_column_tells_unset_from_a_number(void **state)
{
    (void)state;
    typedef struct {
        const json_t *version;
    } versioned_t;
    static const tb_config_def_t defs[] = {
        {.name = "version",
         .type = TB_CONFIG_INT,
         .field = TB_CONFIG_VALUE_AT(versioned_t, version)},
    };
    static const tb_config_table_t table = TB_CONFIG_TABLE("versioned", defs);
    char errstr[256] = "";
    json_t *unset = json_object();
    json_t *zero = json_pack("{s:s}", "version", "0");
    versioned_t a = {NULL};
    versioned_t b = {NULL};
    json_t *values_a = tb_config_load(&table, unset, &a, errstr, sizeof(errstr));
    json_t *values_b = tb_config_load(&table, zero, &b, errstr, sizeof(errstr));
    assert_true(json_is_null(a.version));
    assert_true(json_is_integer(b.version));
    assert_int_equal(json_integer_value(b.version), 0);
    json_decref(values_a);
    json_decref(values_b);
    json_decref(unset);
    json_decref(zero);
}

/* A key written is told from one left to its default by its column. */
static void test_a_column_tells_whether_its_key_was_given(void **state)
{
    (void)state;
    char errstr[256] = "";
    json_t *raw = json_pack("{s:s, s:s}", "name", "n", "count", "3");
    typed_t typed = {0};
    json_t *values = tb_config_load(&typed_table, raw, &typed, errstr, sizeof(errstr));
    assert_non_null(values);
    assert_true(tb_config_given(&typed_table, raw, &typed, &typed.count));
    assert_true(tb_config_given(&typed_table, raw, &typed, &typed.name));
    assert_false(tb_config_given(&typed_table, raw, &typed, &typed.big));
    assert_false(tb_config_given(&typed_table, raw, &typed, &typed.flag));
    json_decref(values);
    json_decref(raw);
}

static void test_a_column_of_another_type_is_found(void **state)
{
    (void)state;
    static const tb_config_def_t wrong[] = {
        {.name = "count",
         .type = TB_CONFIG_STRING,
         .default_value = "3",
         .field = TB_CONFIG_AT(typed_t, count)},
    };
    static const tb_config_table_t table = TB_CONFIG_TABLE("wrong", wrong);
    char reason[256] = "";
    assert_int_equal(tb_config_fields_check(&table, reason, sizeof(reason)), -1);
    assert_string_equal(reason,
                        "wrong: the column of count does not fit its type STRING");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_table_fills_its_typed_struct),
        cmocka_unit_test(test_a_table_that_cannot_be_read_names_its_keys),
        cmocka_unit_test(test_a_value_column_tells_unset_from_a_number),
        cmocka_unit_test(test_a_column_tells_whether_its_key_was_given),
        cmocka_unit_test(test_a_column_of_another_type_is_found),
        cmocka_unit_test(test_defaults_and_types),
        cmocka_unit_test(test_every_error_is_collected_with_connect_texts),
        cmocka_unit_test(test_infos_hide_passwords_and_list_groups),
        cmocka_unit_test(test_markdown_lists_every_key),
        cmocka_unit_test(test_errors_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
