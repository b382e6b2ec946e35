#include "tb_test.h"

#include <string.h>
#include <unistd.h>

#include "core/tb_log.h"
#include "server/tb_advertised.h"
#include "server/tb_http.h"
#include "server/tb_worker_config.h"

static void test_env_names_map_to_keys(void **state)
{
    (void)state;
    char key[128];
    assert_int_equal(
        tb_worker_config_env_key("TRIBUTARY_BOOTSTRAP_SERVERS", key, sizeof(key)), 0);
    assert_string_equal(key, "bootstrap.servers");
    assert_int_equal(tb_worker_config_env_key("TRIBUTARY_A__B___C_D", key, sizeof(key)),
                     0);
    assert_string_equal(key, "a_b-c.d");
    assert_int_equal(tb_worker_config_env_key("PATH", key, sizeof(key)), -1);
}

static void test_env_overrides_file_values(void **state)
{
    (void)state;
    char *env[] = {"TRIBUTARY_LISTENERS=http://127.0.0.1:9", "HOME=/root", NULL};
    json_t *raw = json_pack("{s:s}", "listeners", "http://127.0.0.1:1");
    tb_worker_config_apply_env(raw, env);
    assert_string_equal(json_string_value(json_object_get(raw, "listeners")),
                        "http://127.0.0.1:9");
    assert_int_equal(json_object_size(raw), 1);
    json_decref(raw);
}

static void test_kafka_props_take_client_keys_only(void **state)
{
    (void)state;
    json_t *raw =
        json_pack("{s:s, s:s, s:s, s:s}", "bootstrap.servers", "b:1", "security.protocol",
                  "SASL_SSL", "sasl.mechanism", "PLAIN", "listeners", "http://x:1");
    json_t *props = tb_worker_config_kafka_props(raw);
    assert_int_equal(json_object_size(props), 3);
    assert_null(json_object_get(props, "listeners"));
    json_decref(props);
    json_decref(raw);
}

/* As in Connect 4.2 (KIP-1161): bootstrap.servers has no default; the
 * worker refuses to start without it unless in dev mode (server/main.c). */
static void test_kafka_props_have_no_default_bootstrap(void **state)
{
    (void)state;
    json_t *raw = json_pack("{s:s}", "listeners", "http://x:1");
    json_t *props = tb_worker_config_kafka_props(raw);
    assert_null(json_object_get(props, "bootstrap.servers"));
    json_decref(props);
    json_decref(raw);
}

/* metadata.recovery.strategy: rebootstrap taken, none refused with why. */
static void test_metadata_recovery_none_refused(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    json_t *raw = json_pack("{s:s}", "metadata.recovery.strategy", "none");
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    char joined[1024];
    tb_config_errors_join(errors, "\n", joined, sizeof(joined));
    assert_non_null(strstr(joined, "metadata.recovery.strategy"));
    assert_non_null(strstr(joined, "librdkafka always goes back to the bootstrap"));
    json_decref(values);
    json_decref(errors);
    json_object_set_new(raw, "metadata.recovery.strategy", json_string("REBOOTSTRAP"));
    errors = json_object();
    values = tb_config_parse(tables, 1, raw, errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    assert_string_equal(tb_config_string(values, "metadata.recovery.strategy"),
                        "rebootstrap");
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

static void test_dev_mode_is_off_unless_asked_for(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    json_t *raw = json_object();
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    assert_int_equal(tb_config_error_count(errors), 0);
    assert_false(tb_config_bool(values, "dev"));
    assert_true(json_is_null(tb_config_list(values, "bootstrap.servers")));
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

static void test_empty_bootstrap_servers_refused(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    json_t *raw = json_pack("{s:s}", "bootstrap.servers", " ");
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    char joined[512];
    tb_config_errors_join(errors, "\n", joined, sizeof(joined));
    assert_non_null(strstr(joined, "configuration bootstrap.servers: The list is empty"));
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

static void test_listener_urls(void **state)
{
    (void)state;
    char scheme[16], host[64], err[256];
    unsigned port;
    assert_int_equal(tb_http_listener_parse("http://127.0.0.1:8083", scheme,
                                            sizeof(scheme), host, sizeof(host), &port,
                                            err, sizeof(err)),
                     0);
    assert_string_equal(scheme, "http");
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8083);
    assert_int_equal(tb_http_listener_parse("https://[::1]:443", scheme, sizeof(scheme),
                                            host, sizeof(host), &port, err, sizeof(err)),
                     0);
    assert_string_equal(host, "::1");
    assert_int_equal(tb_http_listener_parse("http://:8083", scheme, sizeof(scheme), host,
                                            sizeof(host), &port, err, sizeof(err)),
                     0);
    assert_string_equal(host, "");
    assert_int_equal(tb_http_listener_parse("ftp://x:1", scheme, sizeof(scheme), host,
                                            sizeof(host), &port, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "configuration listeners"));
    assert_int_equal(tb_http_listener_parse("http://x:99999", scheme, sizeof(scheme),
                                            host, sizeof(host), &port, err, sizeof(err)),
                     -1);
}

/* The decisions agree with the worker's table: a key is implemented
 * exactly when the table defines it. */
static void test_connect_key_decisions_match_the_table(void **state)
{
    (void)state;
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    for (size_t i = 0; i < tb_connect_worker_key_count; i++) {
        const tb_connect_key_t *row = &tb_connect_worker_keys[i];
        if (strchr(row->name, '*') != NULL) {
            continue;
        }
        bool defined = tb_config_find(tables, 1, row->name) != NULL;
        if (defined != (row->decision == TB_CONNECT_KEY_IMPLEMENTED)) {
            fail_msg("%s: %s, but the worker table %s it", row->name,
                     tb_connect_key_decision_name(row->decision),
                     defined ? "defines" : "does not define");
        }
    }
}

static void test_connect_key_find_prefers_exact_rows(void **state)
{
    (void)state;
    assert_int_equal(tb_worker_connect_key_find("ssl.client.auth")->decision,
                     TB_CONNECT_KEY_REFUSED);
    assert_int_equal(tb_worker_connect_key_find("ssl.truststore.location")->decision,
                     TB_CONNECT_KEY_CLIENT);
    assert_string_equal(tb_worker_connect_key_find("admin.listeners")->name,
                        "admin.listeners");
    assert_string_equal(tb_worker_connect_key_find("admin.request.timeout.ms")->name,
                        "admin.*");
    assert_null(tb_worker_connect_key_find("no.such.key"));
}

static void test_unimplemented_distributed_and_refused_keys_stop_the_worker(void **state)
{
    (void)state;
    json_t *raw =
        json_pack("{s:s, s:s}", "plugin.path", "/x", "bootstrap.servers", "b:1");
    assert_int_equal(tb_worker_config_check_connect_keys(raw), 0);
    /* distributed mode's keys are the worker's own */
    json_object_set_new(raw, "group.id", json_string("g"));
    json_object_set_new(raw, "scheduled.rebalance.max.delay.ms", json_string("1"));
    assert_int_equal(tb_worker_config_check_connect_keys(raw), 0);
    json_object_set_new(raw, "connect.protocol", json_string("sessioned"));
    assert_int_equal(tb_worker_config_check_connect_keys(raw), -1);
    json_object_del(raw, "connect.protocol");
    json_object_set_new(raw, "response.http.headers.config", json_string("set X: y"));
    assert_int_equal(tb_worker_config_check_connect_keys(raw), -1);
    json_decref(raw);
}

/* The URL tb_advertised_url makes of raw worker keys; "" when refused
 * (errstr then names the key). */
static void expect_advertised(json_t *raw, const char *expected, const char *error_key)
{
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    char url[300] = "", errstr[300] = "";
    tb_worker_settings_t settings;
    assert_int_equal(tb_config_error_count(errors), 0);
    assert_int_equal(tb_config_fill(&tb_worker_config_table, values, &settings), 0);
    int rc = tb_advertised_url(&settings, NULL, url, sizeof(url), errstr, sizeof(errstr));
    if (error_key != NULL) {
        assert_int_equal(rc, -1);
        assert_non_null(strstr(errstr, error_key));
    } else {
        assert_int_equal(rc, 0);
        assert_string_equal(url, expected);
    }
    json_decref(values);
    json_decref(errors);
    json_decref(raw);
}

static void test_advertised_url(void **state)
{
    (void)state;
    char machine[256] = "", everywhere[300];
    assert_int_equal(gethostname(machine, sizeof(machine)), 0);
    snprintf(everywhere, sizeof(everywhere), "http://%s:8083", machine);
    expect_advertised(json_pack("{s:s}", "listeners", "http://127.0.0.1:8083"),
                      "http://127.0.0.1:8083", NULL);
    /* a listener on every interface names no machine: the host name does */
    expect_advertised(json_pack("{s:s}", "listeners", "http://0.0.0.0:8083"), everywhere,
                      NULL);
    expect_advertised(json_pack("{s:s}", "listeners", "http://:8083"), everywhere, NULL);
    expect_advertised(json_pack("{s:s}", "listeners", "http://[::1]:8083"),
                      "http://[::1]:8083", NULL);
    expect_advertised(json_pack("{s:s, s:s, s:s}", "listeners", "http://0.0.0.0:8083",
                                "rest.advertised.host.name", "w1.example",
                                "rest.advertised.port", "9000"),
                      "http://w1.example:9000", NULL);
    expect_advertised(json_pack("{s:s, s:s}", "listeners",
                                "http://127.0.0.1:8083,https://127.0.0.1:8443",
                                "rest.advertised.listener", "HTTPS"),
                      "https://127.0.0.1:8443", NULL);
    expect_advertised(json_pack("{s:s, s:s}", "listeners", "http://127.0.0.1:8083",
                                "rest.advertised.listener", "https"),
                      NULL, "rest.advertised.listener");
    expect_advertised(json_pack("{s:s, s:s}", "listeners", "http://127.0.0.1:8083",
                                "rest.advertised.host.name", "a:b"),
                      NULL, "rest.advertised.host.name");
    expect_advertised(json_pack("{s:s, s:s}", "listeners", "http://127.0.0.1:8083",
                                "rest.advertised.port", "0"),
                      NULL, "rest.advertised.port");
}

/* tb_worker_config_load fills the settings once: typed members, the enum
 * keys as the enums that name their one_of lists' order, a null port when
 * unset. */
static void test_load_fills_the_settings(void **state)
{
    (void)state;
    char *env[] = {"TRIBUTARY_CONNECTOR_CLIENT_CONFIG_OVERRIDE_POLICY=allowlist",
                   "TRIBUTARY_EXACTLY_ONCE_SOURCE_SUPPORT=Enabled",
                   "TRIBUTARY_LOG_FORMAT=json",
                   "TRIBUTARY_REST_THREADS=3",
                   "TRIBUTARY_GROUP_ID=g",
                   "TRIBUTARY_CONFIG_STORAGE_REPLICATION_FACTOR=-1",
                   NULL};
    json_t *raw = NULL;
    json_t *errors = json_array();
    tb_worker_settings_t settings;
    json_t *values = tb_worker_config_load(NULL, true, env, &raw, &settings, errors);
    assert_non_null(values);
    assert_int_equal(json_array_size(errors), 0);
    assert_true(settings.dev);
    assert_int_equal(settings.connector_client_config_override_policy,
                     TB_OVERRIDE_POLICY_ALLOWLIST);
    assert_int_equal(settings.exactly_once_source_support, TB_EOS_SUPPORT_ENABLED);
    assert_int_equal(settings.log_format, TB_LOG_FORMAT_JSON);
    assert_int_equal(settings.rest_threads, 3);
    assert_string_equal(settings.group_id, "g");
    assert_int_equal(settings.config_storage_replication_factor, -1);
    assert_int_equal(settings.offset_storage_partitions, 25);
    assert_true(json_is_null(settings.rest_advertised_port));
    assert_string_equal(settings.offset_storage_file_filename, "data/tributary.db");
    assert_int_equal(json_array_size(settings.config_providers), 2);
    json_decref(values);
    json_decref(raw);
    json_decref(errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_names_map_to_keys),
        cmocka_unit_test(test_env_overrides_file_values),
        cmocka_unit_test(test_kafka_props_take_client_keys_only),
        cmocka_unit_test(test_kafka_props_have_no_default_bootstrap),
        cmocka_unit_test(test_metadata_recovery_none_refused),
        cmocka_unit_test(test_dev_mode_is_off_unless_asked_for),
        cmocka_unit_test(test_empty_bootstrap_servers_refused),
        cmocka_unit_test(test_listener_urls),
        cmocka_unit_test(test_connect_key_decisions_match_the_table),
        cmocka_unit_test(test_connect_key_find_prefers_exact_rows),
        cmocka_unit_test(test_unimplemented_distributed_and_refused_keys_stop_the_worker),
        cmocka_unit_test(test_advertised_url),
        cmocka_unit_test(test_load_fills_the_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
