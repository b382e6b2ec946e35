/* Sealed secrets (core/tb_secret_seal.h): what a distributed worker keeps in
 * the config topic in place of a literal secret. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_secrets.h"
#include "core/tb_secret.h"
#include "core/tb_secret_seal.h"

/* Two keys, as two workers of different clusters would have. */
static const char *const KEY_A = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
static const char *const KEY_B = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=";

static void use_key(const char *text)
{
    unsigned char key[TB_SECRET_SEAL_KEY_SIZE];
    char errstr[256];
    assert_int_equal(tb_secret_seal_key_parse(text, key, errstr, sizeof(errstr)), 0);
    assert_int_equal(tb_secret_seal_key_set(key), 0);
}

static int teardown(void **state)
{
    (void)state;
    tb_secret_seal_key_set(NULL);
    return 0;
}

static void test_a_sealed_secret_opens_only_where_it_was_sealed(void **state)
{
    (void)state;
    char errstr[512];
    use_key(KEY_A);
    char *sealed =
        tb_secret_seal("pg", "database.password", "s3cret", errstr, sizeof(errstr));
    assert_non_null(sealed);
    assert_null(strstr(sealed, "s3cret"));
    assert_true(strncmp(sealed, "${sealed:v1:", 12) == 0);
    assert_true(tb_secret_is_sealed(sealed) && tb_secret_is_reference(sealed));
    /* a fresh nonce for every value */
    char *again =
        tb_secret_seal("pg", "database.password", "s3cret", errstr, sizeof(errstr));
    assert_string_not_equal(sealed, again);
    char *secret = tb_secret_resolve(sealed, errstr, sizeof(errstr));
    assert_string_equal(secret, "s3cret");
    free(secret);
    assert_int_equal(
        tb_secret_seal_check(sealed, "pg", "database.password", errstr, sizeof(errstr)),
        0);
    assert_int_equal(tb_secret_seal_check(sealed, "pg", NULL, errstr, sizeof(errstr)), 0);

    /* another worker's key: named by id, no secret */
    use_key(KEY_B);
    assert_null(tb_secret_resolve(sealed, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "pg.database.password was sealed under another "
                                   "secrets.encryption.key"));
    assert_int_equal(tb_secret_seal_check(sealed, "pg", NULL, errstr, sizeof(errstr)),
                     -1);
    /* no key at all */
    tb_secret_seal_key_set(NULL);
    assert_null(tb_secret_resolve(sealed, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "needs the worker's secrets.encryption.key"));
    assert_null(tb_secret_seal("pg", "database.password", "x", errstr, sizeof(errstr)));
    free(sealed);
    free(again);
}

/* The connector's name and the key are authenticated: relabelled, altered or
 * claimed by another connector, a sealed secret does not open. */
static void test_a_sealed_secret_cannot_move(void **state)
{
    (void)state;
    char errstr[512];
    use_key(KEY_A);
    char *sealed =
        tb_secret_seal("pg", "database.password", "s3cret", errstr, sizeof(errstr));
    char *moved = NULL;
    char *at = strstr(sealed, ":pg.database.password:");
    assert_non_null(at);
    assert_true(asprintf(&moved, "%.*s:pg2.database.password:%s", (int)(at - sealed),
                         sealed, at + strlen(":pg.database.password:")) > 0);
    assert_null(tb_secret_resolve(moved, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "cannot be opened"));
    assert_null(strstr(errstr, "s3cret"));
    free(moved);

    char *altered = strdup(sealed);
    char *data = strrchr(altered, ':') + 1;
    data[2] = data[2] == 'A' ? 'B' : 'A';
    assert_null(tb_secret_resolve(altered, errstr, sizeof(errstr)));
    free(altered);

    /* another connector (even one whose name starts alike) or another key */
    assert_int_equal(tb_secret_seal_check(sealed, "p", NULL, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "its own sealed secrets"));
    assert_int_equal(tb_secret_seal_check(sealed, "pg2", NULL, errstr, sizeof(errstr)),
                     -1);
    assert_int_equal(
        tb_secret_seal_check(sealed, "pg", "http.auth.token", errstr, sizeof(errstr)),
        -1);
    tb_secret_policy_t policy = {.file_enabled = true, .env_enabled = true};
    assert_int_equal(
        tb_secret_policy_check(&policy, "other", sealed, errstr, sizeof(errstr)), -1);
    assert_int_equal(
        tb_secret_policy_check(&policy, "pg", sealed, errstr, sizeof(errstr)), 0);
    free(sealed);
}

/* Secrets that contain anything, empty ones included. */
static void test_any_secret_round_trips(void **state)
{
    (void)state;
    char errstr[512];
    const char *secrets[] = {"", "a", "p@ss:w}rd=${env:X}|é", "0123456789012345678901"};
    use_key(KEY_A);
    for (size_t i = 0; i < sizeof(secrets) / sizeof(*secrets); i++) {
        char *sealed = tb_secret_seal("a.b:c", "http.headers.X-API-Key", secrets[i],
                                      errstr, sizeof(errstr));
        assert_non_null(sealed);
        assert_true(tb_secret_is_sealed(sealed));
        char *secret = tb_secret_seal_open(sealed, errstr, sizeof(errstr));
        assert_non_null(secret);
        assert_string_equal(secret, secrets[i]);
        free(secret);
        free(sealed);
    }
}

static void test_keys_and_forms_that_are_refused(void **state)
{
    (void)state;
    unsigned char key[TB_SECRET_SEAL_KEY_SIZE];
    char errstr[256];
    const char *keys[] = {"", "short", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZQ==",
                          "not base64 at all, not at all, not at all, not!!"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        assert_int_equal(tb_secret_seal_key_parse(keys[i], key, errstr, sizeof(errstr)),
                         -1);
        assert_non_null(strstr(errstr, "openssl rand -base64 32"));
    }
    const char *forms[] = {"${sealed:v1:}",
                           "${sealed:v1:0123456:a.b:AAAA}",
                           "${sealed:v1:01234567::AAAA}",
                           "${sealed:v1:01234567:a.b:}",
                           "${sealed:v1:01234567:a.b:AA AA}",
                           "${sealed:v2:01234567:a.b:AA}"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
        assert_false(tb_secret_is_sealed(forms[i]));
    }
    assert_true(tb_secret_is_sealed("${sealed:v1:01234567:a.b:AAAA}"));
}

/* A header list gives its sealed credentials to the rewrite, for redaction. */
static const char *hide(void *arg, const char *name, const char *value)
{
    (void)arg;
    (void)name;
    (void)value;
    return "[hidden]";
}

static void test_sealed_headers_are_hidden(void **state)
{
    (void)state;
    char *out = tb_secret_headers_rewrite(
        "Authorization: ${sealed:v1:01234567:h.http.headers.Authorization:AAAA}|"
        "X-Key: ${env:K}",
        hide, NULL);
    assert_string_equal(out, "Authorization: [hidden]|X-Key: ${env:K}");
    free(out);
}

/* A distributed worker's write of an HTTP sink config: its literal secrets
 * sealed, and sealed again only when they changed, so that the same config
 * written twice is the same (tasks kept). */
static void test_a_config_written_again_keeps_its_sealed_secrets(void **state)
{
    (void)state;
    char msg[512];
    const tb_plugin_t *plugin = tb_plugin_find("HttpSink");
    use_key(KEY_A);
    json_t *given =
        json_pack("{s:s, s:s, s:s}", "http.auth.token", "t0ken", "http.headers",
                  "X-API-Key: k3y|X-Tenant: blue", "topics", "t");
    json_t *first = json_deep_copy(given);
    assert_int_equal(tb_connector_secrets_externalize("/nonexistent/store", true, "h",
                                                      plugin, NULL, first, msg,
                                                      sizeof(msg)),
                     0);
    const char *token = json_string_value(json_object_get(first, "http.auth.token"));
    const char *headers = json_string_value(json_object_get(first, "http.headers"));
    assert_true(tb_secret_is_sealed(token));
    assert_non_null(strstr(headers, "X-API-Key: ${sealed:v1:"));
    assert_non_null(strstr(headers, ":h.http.headers.X-API-Key:"));
    assert_non_null(strstr(headers, "|X-Tenant: blue"));
    assert_null(strstr(headers, "k3y"));

    json_t *again = json_deep_copy(given);
    assert_int_equal(tb_connector_secrets_externalize("/nonexistent/store", true, "h",
                                                      plugin, first, again, msg,
                                                      sizeof(msg)),
                     0);
    assert_true(json_equal(first, again));

    json_object_set_new(given, "http.auth.token", json_string("changed"));
    json_t *changed = json_deep_copy(given);
    assert_int_equal(tb_connector_secrets_externalize("/nonexistent/store", true, "h",
                                                      plugin, first, changed, msg,
                                                      sizeof(msg)),
                     0);
    assert_string_not_equal(
        json_string_value(json_object_get(changed, "http.auth.token")), token);
    assert_string_equal(json_string_value(json_object_get(changed, "http.headers")),
                        headers);
    char *opened = tb_secret_resolve(
        json_string_value(json_object_get(changed, "http.auth.token")), msg, sizeof(msg));
    assert_string_equal(opened, "changed");
    free(opened);
    json_decref(given);
    json_decref(first);
    json_decref(again);
    json_decref(changed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_a_sealed_secret_opens_only_where_it_was_sealed,
                                  teardown),
        cmocka_unit_test_teardown(test_a_sealed_secret_cannot_move, teardown),
        cmocka_unit_test_teardown(test_any_secret_round_trips, teardown),
        cmocka_unit_test(test_keys_and_forms_that_are_refused),
        cmocka_unit_test(test_sealed_headers_are_hidden),
        cmocka_unit_test_teardown(test_a_config_written_again_keeps_its_sealed_secrets,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
