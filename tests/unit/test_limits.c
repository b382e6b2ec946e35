/* What file connectors may open: never the worker's store, its -wal, -shm
 * and .secrets files or anything else in its data directory, whatever
 * file.allowed.dirs says, neither through a symbolic link nor a hard link. */
#include "tb_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "connectors/tb_limits.h"

typedef struct {
    char root[64];   /* a fresh temporary directory */
    char data[128];  /* root/data: the worker's data directory */
    char store[192]; /* root/data/store.db */
    char secrets[256];
    char files[128]; /* root/files: where connectors work */
    json_t *no_dirs;
    tb_limits_t limits;
} bed_t;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int bed_setup(void **state)
{
    bed_t *b = calloc(1, sizeof(*b));
    strcpy(b->root, "/tmp/tb_test_limits_XXXXXX");
    assert_non_null(mkdtemp(b->root));
    snprintf(b->data, sizeof(b->data), "%s/data", b->root);
    snprintf(b->store, sizeof(b->store), "%s/store.db", b->data);
    snprintf(b->secrets, sizeof(b->secrets), "%s.secrets", b->store);
    snprintf(b->files, sizeof(b->files), "%s/files", b->root);
    assert_int_equal(mkdir(b->data, 0700), 0);
    assert_int_equal(mkdir(b->files, 0700), 0);
    write_file(b->store, "the store");
    write_file(b->secrets, "the secrets");
    b->no_dirs = json_array();
    b->limits = (tb_limits_t){
        .allowed_dirs = b->no_dirs, .allowed_hosts = b->no_dirs, .store_path = b->store};
    *state = b;
    return 0;
}

static int bed_teardown(void **state)
{
    bed_t *b = *state;
    char command[256];
    snprintf(command, sizeof(command), "rm -rf '%s'", b->root);
    assert_int_equal(system(command), 0);
    json_decref(b->no_dirs);
    free(b);
    return 0;
}

/* path_in_files: root/files/<name> */
static void in_files(const bed_t *b, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", b->files, name);
}

static void assert_refused(const bed_t *b, const char *path, const char *why)
{
    char errstr[512];
    FILE *f = tb_limits_fopen(&b->limits, path, false, errstr, sizeof(errstr));
    assert_null(f);
    assert_int_equal(errno, EACCES);
    assert_non_null(strstr(errstr, path));
    assert_non_null(strstr(errstr, why));
    f = tb_limits_fopen(&b->limits, path, true, errstr, sizeof(errstr));
    assert_null(f);
    assert_non_null(strstr(errstr, why));
}

static void test_the_store_and_its_directory_are_never_opened(void **state)
{
    bed_t *b = *state;
    char alias[256], other[256];
    assert_refused(b, b->store, "data directory");
    assert_refused(b, b->secrets, "data directory");
    snprintf(other, sizeof(other), "%s/new.txt", b->data);
    assert_refused(b, other, "data directory");
    in_files(b, "to-store", alias, sizeof(alias));
    assert_int_equal(symlink(b->store, alias), 0);
    assert_refused(b, alias, "data directory");
    in_files(b, "hard-secrets", alias, sizeof(alias));
    assert_int_equal(link(b->secrets, alias), 0);
    assert_refused(b, alias, "the worker's store or its secrets file");
}

static void test_validation_names_the_key(void **state)
{
    bed_t *b = *state;
    static const tb_config_def_t keys[] = {
        {.name = "file", .role = TB_CONFIG_ROLE_PATH, .type = TB_CONFIG_STRING}};
    static const tb_config_table_t table = TB_CONFIG_TABLE("t", keys);
    char fine[256];
    in_files(b, "fine.txt", fine, sizeof(fine));
    const char *paths[] = {b->store, b->secrets, b->data};
    for (size_t i = 0; i < 3; i++) {
        json_t *config = json_pack("{s:s}", "file", paths[i]);
        json_t *errors = json_object();
        tb_limits_check(&b->limits, &table, config, errors);
        const char *message =
            json_string_value(json_array_get(json_object_get(errors, "file"), 0));
        assert_non_null(message);
        assert_non_null(strstr(message, "configuration file: the path is in the "
                                        "worker's data directory"));
        json_decref(errors);
        json_decref(config);
    }
    json_t *config = json_pack("{s:s}", "file", fine);
    json_t *errors = json_object();
    tb_limits_check(&b->limits, &table, config, errors);
    assert_int_equal(json_object_size(errors), 0);
    json_decref(errors);
    json_decref(config);
}

static void test_allowed_files_open_and_missing_ones_say_so(void **state)
{
    bed_t *b = *state;
    char path[256], errstr[512], line[32];
    in_files(b, "out.txt", path, sizeof(path));
    assert_null(tb_limits_fopen(&b->limits, path, false, errstr, sizeof(errstr)));
    assert_int_equal(errno, ENOENT);
    FILE *f = tb_limits_fopen(&b->limits, path, true, errstr, sizeof(errstr));
    assert_non_null(f);
    fputs("hello\n", f);
    fclose(f);
    f = tb_limits_fopen(&b->limits, path, false, errstr, sizeof(errstr));
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "hello\n");
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_store_and_its_directory_are_never_opened,
                                        bed_setup, bed_teardown),
        cmocka_unit_test_setup_teardown(test_validation_names_the_key, bed_setup,
                                        bed_teardown),
        cmocka_unit_test_setup_teardown(test_allowed_files_open_and_missing_ones_say_so,
                                        bed_setup, bed_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
