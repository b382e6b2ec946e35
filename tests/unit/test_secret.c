#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/runtime/config/tb_connector_secrets.h"
#include "core/tb_config.h"
#include "core/tb_props.h"
#include "core/tb_secret.h"

/* A scratch directory with a data/ folder (the store's) and a file beside. */
typedef struct {
    char dir[64];
    char store[128];
    char outside[128];
    tb_secret_policy_t policy;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/tb_secret_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    char data[96];
    snprintf(data, sizeof(data), "%s/data", f->dir);
    assert_int_equal(mkdir(data, 0700), 0);
    snprintf(f->store, sizeof(f->store), "%s/tributary.db", data);
    snprintf(f->outside, sizeof(f->outside), "%s/creds.properties", f->dir);
    f->policy = (tb_secret_policy_t){
        .file_enabled = true, .env_enabled = true, .store_path = f->store};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static int check(fixture_t *f, const char *owner, const char *value, char *reason)
{
    return tb_secret_policy_check(&f->policy, owner, value, reason, 1024);
}

static void test_references_never_reach_the_store_or_its_directory(void **state)
{
    fixture_t *f = *state;
    char value[512], reason[1024];
    snprintf(value, sizeof(value), "${file:%s:k}", f->store);
    assert_int_equal(check(f, "c", value, reason), -1);
    assert_non_null(strstr(reason, "data directory"));
    snprintf(value, sizeof(value), "${file:%s/../data/x.properties:k}", f->dir);
    assert_int_equal(check(f, "c", value, reason), -1);
    snprintf(value, sizeof(value), "${file:%s.secrets:other.sasl.password}", f->store);
    assert_int_equal(check(f, "c", value, reason), -1);
    assert_non_null(strstr(reason, "only its own entries (c.*)"));
    /* its own entry, and a file elsewhere, are fine */
    snprintf(value, sizeof(value), "${file:%s.secrets:c.sasl.password}", f->store);
    assert_int_equal(check(f, "c", value, reason), 0);
    snprintf(value, sizeof(value), "${file:%s:k}", f->outside);
    assert_int_equal(check(f, "c", value, reason), 0);
}

static void test_a_symbolic_link_does_not_lead_into_the_store(void **state)
{
    fixture_t *f = *state;
    char link[160], value[512], reason[1024];
    snprintf(link, sizeof(link), "%s/innocent", f->dir);
    char data[96];
    snprintf(data, sizeof(data), "%s/data", f->dir);
    assert_int_equal(symlink(data, link), 0);
    snprintf(value, sizeof(value), "${file:%s/tributary.db.secrets:x.k}", link);
    assert_int_equal(check(f, "c", value, reason), -1);
}

static void test_owner_prefix_cannot_be_borrowed(void **state)
{
    fixture_t *f = *state;
    char value[512], reason[1024], key[256];
    /* connector "a" may not read the entries of connector "a.b" */
    tb_secret_file_key("a.b", "sasl.password", key, sizeof(key));
    assert_string_equal(key, "a%2Eb.sasl.password");
    snprintf(value, sizeof(value), "${file:%s.secrets:%s}", f->store, key);
    assert_int_equal(check(f, "a", value, reason), -1);
    assert_int_equal(check(f, "a.b", value, reason), 0);
    tb_secret_file_key("we:ird/name é", "http.headers.X-Key", key, sizeof(key));
    assert_string_equal(key, "we%3Aird%2Fname%20%C3%A9.http.headers.X-Key");
}

/* Two connectors whose names share their first 2 100 bytes: neither reads
 * the other's entries, and deleting one keeps the other's. */
static void test_long_owners_are_compared_whole(void **state)
{
    fixture_t *f = *state;
    char a[2200], b[2200], reason[1024], path[160], errstr[256];
    memset(a, 'n', 2100);
    memcpy(b, a, 2100);
    snprintf(a + 2100, sizeof(a) - 2100, "-a");
    snprintf(b + 2100, sizeof(b) - 2100, "-b");
    char *key_a = tb_secret_file_key_new(a, "sasl.password");
    char *key_b = tb_secret_file_key_new(b, "sasl.password");
    char *value = NULL;
    assert_true(asprintf(&value, "${file:%s.secrets:%s}", f->store, key_a) > 0);
    assert_int_equal(check(f, b, value, reason), -1);
    assert_int_equal(check(f, a, value, reason), 0);
    snprintf(path, sizeof(path), "%s.secrets", f->store);
    assert_int_equal(tb_props_file_set(path, key_a, "1", errstr, sizeof(errstr)), 0);
    assert_int_equal(tb_props_file_set(path, key_b, "2", errstr, sizeof(errstr)), 0);
    tb_connector_secrets_forget(f->store, a);
    json_t *props = tb_props_load_file(path, errstr, sizeof(errstr));
    assert_null(json_object_get(props, key_a));
    assert_string_equal(json_string_value(json_object_get(props, key_b)), "2");
    json_decref(props);
    free(value);
    free(key_a);
    free(key_b);
}

/* ${file:} reads regular files of at most 1 MiB: a device, a FIFO (which
 * would block the reader for ever) or a larger file is refused at
 * validation and again when resolved. alarm() bounds the test if not. */
static void test_only_regular_files_are_read(void **state)
{
    fixture_t *f = *state;
    char fifo[160], big[160], value[512], reason[1024];
    snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
    snprintf(big, sizeof(big), "%s/big.properties", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FILE *out = fopen(big, "w");
    fprintf(out, "k=");
    for (int i = 0; i < TB_SECRET_FILE_MAX; i++) {
        fputc('x', out);
    }
    fclose(out);
    const char *paths[] = {"/dev/zero", fifo, big, f->dir};
    alarm(20);
    for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
        snprintf(value, sizeof(value), "${file:%s:k}", paths[i]);
        assert_int_equal(check(f, "c", value, reason), -1);
        assert_non_null(strstr(reason, paths[i] == big ? "larger than" : "regular file"));
        assert_null(tb_secret_resolve(value, reason, sizeof(reason)));
        assert_non_null(
            strstr(reason, paths[i] == big ? "larger than" : "not a regular file"));
    }
    alarm(0);
}

/* The worker's own files and variables: refused by real path (through a
 * link or "..") and by inode (a hard link); what it does not name passes. */
static void test_the_workers_own_files_are_denied(void **state)
{
    fixture_t *f = *state;
    char own[160], link_path[160], hard[160], value[512], reason[1536];
    snprintf(own, sizeof(own), "%s/worker.properties", f->dir);
    snprintf(link_path, sizeof(link_path), "%s/alias", f->dir);
    snprintf(hard, sizeof(hard), "%s/hard", f->dir);
    FILE *out = fopen(own, "w");
    fputs("k=v\n", out);
    fclose(out);
    assert_int_equal(symlink(own, link_path), 0);
    assert_int_equal(link(own, hard), 0);
    tb_secret_deny_t *deny = tb_secret_deny_create();
    assert_int_equal(tb_secret_deny_add_file(deny, own), 0);
    assert_int_equal(tb_secret_deny_add_references(deny, "x ${env:WORKER_PW} y"), 0);
    char dotted[192];
    snprintf(dotted, sizeof(dotted), "%s/data/../worker.properties", f->dir);
    const char *refused[] = {own, link_path, hard, dotted};
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
        snprintf(value, sizeof(value), "${file:%s:k}", refused[i]);
        assert_int_equal(tb_secret_deny_check(deny, value, reason, sizeof(reason)), -1);
        assert_non_null(strstr(reason, "worker's own files"));
    }
    assert_int_equal(
        tb_secret_deny_check(deny, "a ${env:WORKER_PW}", reason, sizeof(reason)), -1);
    assert_int_equal(tb_secret_deny_check(deny, "${env:OTHER}", reason, sizeof(reason)),
                     0);
    snprintf(value, sizeof(value), "${file:%s:k}", f->outside);
    assert_int_equal(tb_secret_deny_check(deny, value, reason, sizeof(reason)), 0);
    assert_int_equal(tb_secret_deny_check(NULL, value, reason, sizeof(reason)), 0);
    tb_secret_deny_destroy(deny);
}

/* A resolved secret about to be released is wiped in place, unless
 * something else still holds it. */
static void test_resolved_secrets_are_wiped(void **state)
{
    (void)state;
    json_t *held = json_string("kept-by-another");
    json_t *config =
        json_pack("{s:s, s:O, s:i}", "password", "s3cret", "shared", held, "n", 1);
    const char *password = json_string_value(json_object_get(config, "password"));
    tb_secret_wipe_json(config);
    assert_memory_equal(password, "\0\0\0\0\0\0", 6);
    assert_string_equal(json_string_value(held), "kept-by-another");
    json_incref(config); /* held elsewhere too: left as it is */
    json_object_set_new(config, "token", json_string("t0ken"));
    tb_secret_wipe_json(config);
    assert_string_equal(json_string_value(json_object_get(config, "token")), "t0ken");
    json_decref(config);
    json_decref(config);
    json_decref(held);
}

static void test_allowed_paths_and_providers(void **state)
{
    fixture_t *f = *state;
    char value[512], reason[1024];
    json_t *allowed = json_pack("[s]", "/etc/tributary");
    f->policy.allowed_paths = allowed;
    snprintf(value, sizeof(value), "${file:%s:k}", f->outside);
    assert_int_equal(check(f, "c", value, reason), -1);
    assert_non_null(strstr(reason, "config.providers.file.param.allowed.paths"));
    f->policy.allowed_paths = NULL;
    f->policy.file_enabled = false;
    assert_int_equal(check(f, "c", value, reason), -1);
    assert_non_null(strstr(reason, "does not name file"));
    json_decref(allowed);
}

static void test_env_references(void **state)
{
    fixture_t *f = *state;
    char reason[1024];
    assert_int_equal(check(f, "c", "${env:APP_TOKEN}", reason), 0);
    assert_int_equal(check(f, "c", "${env:TRIBUTARY_SASL_PASSWORD}", reason), -1);
    f->policy.env_pattern = "APP_.*";
    assert_int_equal(check(f, "c", "Bearer ${env:APP_TOKEN}", reason), 0);
    assert_int_equal(check(f, "c", "x|Authorization: ${env:HOME}", reason), -1);
    assert_non_null(strstr(reason, "${env:HOME}"));
    assert_non_null(strstr(reason, "allowlist.pattern"));
    f->policy.env_enabled = false;
    assert_int_equal(check(f, "c", "${env:APP_TOKEN}", reason), -1);
}

static const char *hide(void *arg, const char *name, const char *value)
{
    (void)arg;
    (void)name;
    (void)value;
    return "[hidden]";
}

static void test_credential_headers_are_rewritten(void **state)
{
    (void)state;
    char *out = tb_secret_headers_rewrite(
        "Authorization: Bearer abc| X-Tenant: blue|X-API-Key: ${env:K}|Cookie: s=1", hide,
        NULL);
    assert_string_equal(out, "Authorization: [hidden]| X-Tenant: blue|X-API-Key: "
                             "${env:K}|Cookie: [hidden]");
    free(out);
    out = tb_secret_headers_rewrite("", hide, NULL);
    assert_string_equal(out, "");
    free(out);
}

static void test_remove_prefix_keeps_other_connectors(void **state)
{
    fixture_t *f = *state;
    char path[160], errstr[256];
    snprintf(path, sizeof(path), "%s.secrets", f->store);
    assert_int_equal(tb_props_file_set(path, "a.k", "1", errstr, sizeof(errstr)), 0);
    assert_int_equal(tb_props_file_set(path, "ab.k", "2", errstr, sizeof(errstr)), 0);
    assert_int_equal(tb_props_file_remove_prefix(path, "a.", errstr, sizeof(errstr)), 0);
    json_t *props = tb_props_load_file(path, errstr, sizeof(errstr));
    assert_null(json_object_get(props, "a.k"));
    assert_string_equal(json_string_value(json_object_get(props, "ab.k")), "2");
    json_decref(props);
}

/* The client secret keys, under every prefix. */
static void test_client_secret_keys(void **state)
{
    (void)state;
    const char *secret[] = {
        "sasl.jaas.config",
        "consumer.override.sasl.jaas.config",
        "producer.override.ssl.key.pem",
        "admin.override.ssl.keystore.key",
        "ssl.truststore.password",
        "consumer.override.sasl.oauthbearer.client.secret",
        "producer.override.sasl.oauthbearer.client.credentials.client.secret",
        "admin.sasl.oauthbearer.assertion.private.key.passphrase",
        NULL};
    for (size_t i = 0; secret[i] != NULL; i++) {
        assert_true(tb_client_secret_key(secret[i]));
    }
    assert_false(tb_client_secret_key("consumer.override.ssl.ca.location"));
}

static json_t *props_errors(const tb_client_settings_t *s, const json_t *connector)
{
    json_t *errors = json_object();
    json_decref(tb_client_props(s, TB_CLIENT_CONSUMER, connector, false, errors));
    return errors;
}

/* With the worker on TLS no override turns it off, unless allowed. */
static void test_overrides_cannot_downgrade_tls(void **state)
{
    (void)state;
    json_t *worker = json_pack("{s:s, s:s}", "bootstrap.servers", "b:9093",
                               "security.protocol", "SSL");
    json_t *none = json_array();
    tb_client_settings_t s = {
        .worker_props = worker, .overrides_allowed = true, .allowlist = none};
    const char *weak[][2] = {
        {"consumer.override.security.protocol", "PLAINTEXT"},
        {"consumer.override.enable.ssl.certificate.verification", "false"},
        {"consumer.override.ssl.endpoint.identification.algorithm", "none"},
    };
    for (size_t i = 0; i < 3; i++) {
        json_t *connector = json_pack("{s:s}", weak[i][0], weak[i][1]);
        json_t *errors = props_errors(&s, connector);
        assert_non_null(json_object_get(errors, weak[i][0]));
        json_decref(errors);
        s.downgrade_allowed = true;
        errors = props_errors(&s, connector);
        assert_int_equal(tb_config_error_count(errors), 0);
        s.downgrade_allowed = false;
        json_decref(errors);
        json_decref(connector);
    }
    json_decref(worker);
    json_decref(none);
}

/* bootstrap.servers is overridden only when the allowlist names it. */
static void test_bootstrap_override_needs_the_allowlist(void **state)
{
    (void)state;
    json_t *worker = json_pack("{s:s}", "bootstrap.servers", "b:9092");
    json_t *none = json_array();
    json_t *named = json_pack("[s]", "bootstrap.servers");
    tb_client_settings_t s = {
        .worker_props = worker, .overrides_allowed = true, .allowlist = none};
    json_t *connector = json_pack("{s:s}", "consumer.override.bootstrap.servers", "x:1");
    json_t *errors = props_errors(&s, connector);
    const char *message = json_string_value(json_array_get(
        json_object_get(errors, "consumer.override.bootstrap.servers"), 0));
    assert_non_null(message);
    assert_non_null(strstr(message, "another cluster"));
    json_decref(errors);
    s.allowlist = named;
    errors = props_errors(&s, connector);
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    json_decref(connector);
    json_decref(worker);
    json_decref(none);
    json_decref(named);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_references_never_reach_the_store_or_its_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_symbolic_link_does_not_lead_into_the_store,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_prefix_cannot_be_borrowed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_long_owners_are_compared_whole, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_only_regular_files_are_read, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_workers_own_files_are_denied, setup,
                                        teardown),
        cmocka_unit_test(test_resolved_secrets_are_wiped),
        cmocka_unit_test_setup_teardown(test_allowed_paths_and_providers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_env_references, setup, teardown),
        cmocka_unit_test(test_credential_headers_are_rewritten),
        cmocka_unit_test_setup_teardown(test_remove_prefix_keeps_other_connectors, setup,
                                        teardown),
        cmocka_unit_test(test_client_secret_keys),
        cmocka_unit_test(test_overrides_cannot_downgrade_tls),
        cmocka_unit_test(test_bootstrap_override_needs_the_allowlist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
