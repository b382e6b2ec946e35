#include "tb_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/tb_props.h"

static int directory_syncs;

/* Counts fsync() of directories; the test's own definition comes before
 * libc's, which it calls. */
int fsync(int fd)
{
    static int (*real_fsync)(int);
    struct stat st;
    if (real_fsync == NULL) {
        real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        directory_syncs++;
    }
    return real_fsync(fd);
}

static json_t *parse(const char *text)
{
    char errstr[256];
    json_t *props = tb_props_parse(text, strlen(text), errstr, sizeof(errstr));
    assert_non_null(props);
    return props;
}

static void test_separators_and_comments(void **state)
{
    (void)state;
    json_t *p = parse("# comment\n! also\n  a=1\nb : 2\nc 3\nd=\n e\t=  x y \n");
    assert_string_equal(json_string_value(json_object_get(p, "a")), "1");
    assert_string_equal(json_string_value(json_object_get(p, "b")), "2");
    assert_string_equal(json_string_value(json_object_get(p, "c")), "3");
    assert_string_equal(json_string_value(json_object_get(p, "d")), "");
    assert_string_equal(json_string_value(json_object_get(p, "e")), "x y ");
    assert_int_equal(json_object_size(p), 5);
    json_decref(p);
}

static void test_continuation_escapes_and_repeats(void **state)
{
    (void)state;
    json_t *p =
        parse("list=a,\\\n    b,\\\r\n  c\nk\\=ey=v\\tw\nu=\\u00e9\\u20ac\nr=1\nr=2");
    assert_string_equal(json_string_value(json_object_get(p, "list")), "a,b,c");
    assert_string_equal(json_string_value(json_object_get(p, "k=ey")), "v\tw");
    assert_string_equal(json_string_value(json_object_get(p, "u")),
                        "\xc3\xa9\xe2\x82\xac");
    assert_string_equal(json_string_value(json_object_get(p, "r")), "2");
    json_decref(p);
}

static void test_bad_unicode_escape_names_the_line(void **state)
{
    (void)state;
    char errstr[256];
    const char *text = "a=1\nb=\\u12x4\n";
    assert_null(tb_props_parse(text, strlen(text), errstr, sizeof(errstr)));
    assert_string_equal(errstr, "line 2: malformed \\uXXXX escape");
}

/* Both were dropped silently, the parse succeeding without them. */
static void test_surrogate_pair_is_one_character(void **state)
{
    (void)state;
    char errstr[256];
    json_t *p = parse("emoji=\\uD83D\\uDE00\n");
    assert_string_equal(json_string_value(json_object_get(p, "emoji")),
                        "\xf0\x9f\x98\x80");
    json_decref(p);
    const char *lone = "a=1\nb=\\uD83Dx\n";
    assert_null(tb_props_parse(lone, strlen(lone), errstr, sizeof(errstr)));
    assert_string_equal(errstr, "line 2: malformed \\uXXXX escape");
}

static void test_text_not_utf8_names_the_line(void **state)
{
    (void)state;
    char errstr[256];
    const char *latin1 = "a=1\n\nb=caf\xe9\n";
    assert_null(tb_props_parse(latin1, strlen(latin1), errstr, sizeof(errstr)));
    assert_string_equal(errstr, "line 3: the key or value is not valid UTF-8");
}

static void test_missing_file_names_the_path(void **state)
{
    (void)state;
    char errstr[256];
    assert_null(tb_props_load_file("/nonexistent/w.properties", errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "/nonexistent/w.properties"));
}

static void test_file_set_round_trips_and_is_private(void **state)
{
    (void)state;
    char dir[] = "/tmp/tb-props-XXXXXX";
    char path[64], errstr[256];
    struct stat st;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/secrets.properties", dir);
    directory_syncs = 0;
    assert_int_equal(tb_props_file_set(path, "c.sasl.password", " a=b:c\\d#\n", errstr,
                                       sizeof(errstr)),
                     0);
    /* the rename is durable: the directory was synced after it */
    assert_int_equal(directory_syncs, 1);
    assert_int_equal(
        tb_props_file_set(path, "key with:sep", "second", errstr, sizeof(errstr)), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    json_t *p = tb_props_load_file(path, errstr, sizeof(errstr));
    assert_string_equal(json_string_value(json_object_get(p, "c.sasl.password")),
                        " a=b:c\\d#\n");
    assert_string_equal(json_string_value(json_object_get(p, "key with:sep")), "second");
    json_decref(p);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_separators_and_comments),
        cmocka_unit_test(test_continuation_escapes_and_repeats),
        cmocka_unit_test(test_bad_unicode_escape_names_the_line),
        cmocka_unit_test(test_surrogate_pair_is_one_character),
        cmocka_unit_test(test_text_not_utf8_names_the_line),
        cmocka_unit_test(test_missing_file_names_the_path),
        cmocka_unit_test(test_file_set_round_trips_and_is_private),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
