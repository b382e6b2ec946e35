#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/tb_connector_file.h"

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/tb-connector-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static json_t *load(const char *text, char *errstr, size_t size)
{
    char *path = write_temp(text);
    json_t *out = tb_connector_file_load(path, errstr, size);
    unlink(path);
    free(path);
    return out;
}

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void test_properties_file(void **state)
{
    (void)state;
    char err[256];
    json_t *c = load("name=gen\nconnector.class=datagen\ntopic=t\n", err, sizeof(err));
    assert_non_null(c);
    assert_string_equal(str(c, "name"), "gen");
    assert_string_equal(str(c, "initial_state"), "RUNNING");
    assert_string_equal(str(json_object_get(c, "config"), "topic"), "t");
    json_decref(c);
}

static void test_json_map_and_wrapped_forms(void **state)
{
    (void)state;
    char err[256];
    json_t *c =
        load("{\"name\":\"m\",\"connector.class\":\"datagen\"}", err, sizeof(err));
    assert_string_equal(str(c, "name"), "m");
    assert_string_equal(str(json_object_get(c, "config"), "connector.class"), "datagen");
    json_decref(c);
    c = load(
        " {\"name\":\"w\",\"config\":{\"topic\":\"x\"},\"initial_state\":\"PAUSED\"}",
        err, sizeof(err));
    assert_string_equal(str(c, "name"), "w");
    assert_string_equal(str(c, "initial_state"), "PAUSED");
    assert_string_equal(str(json_object_get(c, "config"), "topic"), "x");
    json_decref(c);
}

static void test_errors_name_the_file_and_problem(void **state)
{
    (void)state;
    char err[256];
    assert_null(load("{\"name\":\"x\",\"tasks.max\":2}", err, sizeof(err)));
    assert_non_null(strstr(err, "the value of 'tasks.max' must be a string"));
    assert_null(load("topic=t\n", err, sizeof(err)));
    assert_non_null(strstr(err, "no connector name"));
    assert_null(load("{\"name\": ", err, sizeof(err)));
    assert_non_null(strstr(err, "/tmp/tb-connector-"));
    assert_null(tb_connector_file_load("/nonexistent.json", err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_properties_file),
        cmocka_unit_test(test_json_map_and_wrapped_forms),
        cmocka_unit_test(test_errors_name_the_file_and_problem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
