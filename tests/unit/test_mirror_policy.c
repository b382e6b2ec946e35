/*
 * MirrorMaker 2's replication policies and topic filter
 * (connectors/mirror/tb_mirror.h): remote topic names under
 * DefaultReplicationPolicy (any separator) and IdentityReplicationPolicy,
 * the default topics.exclude, MM2's internal topics, cycles back to the
 * target and heartbeats, each as MM2 decides them.
 */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/mirror/tb_mirror.h"

typedef struct {
    json_t *values;
    tb_mirror_settings_t settings;
    tb_mirror_names_t names;
    tb_mirror_filter_t filter;
} policy_t;

/* A MirrorSourceConnector's settings from a JSON config of its keys (the
 * aliases and bootstrap servers added). */
static void policy_load(policy_t *p, const char *json)
{
    char errstr[512];
    json_t *config = json_loads(json, 0, NULL);
    assert_non_null(config);
    json_object_set_new(config, "source.cluster.alias", json_string("src"));
    json_object_set_new(config, "target.cluster.alias", json_string("tgt"));
    json_object_set_new(config, "source.cluster.bootstrap.servers", json_string("a:1"));
    json_object_set_new(config, "target.cluster.bootstrap.servers", json_string("b:1"));
    p->values = tb_config_load(&tb_mirror_source_table, config, &p->settings, errstr,
                               sizeof(errstr));
    json_decref(config);
    assert_non_null(p->values);
    tb_mirror_names_init(&p->names, &p->settings);
    assert_int_equal(tb_mirror_filter_init(&p->filter, &p->names, &p->settings, errstr,
                                           sizeof(errstr)),
                     0);
}

static void policy_free(policy_t *p)
{
    tb_mirror_filter_free(&p->filter);
    json_decref(p->values);
}

static void assert_remote(const policy_t *p, const char *topic, const char *want)
{
    char *remote = tb_mirror_remote_topic(&p->names, topic);
    assert_string_equal(remote, want);
    free(remote);
}

static void test_default_policy_prefixes_the_source_alias(void **state)
{
    (void)state;
    policy_t p;
    policy_load(&p, "{}");
    assert_remote(&p, "orders", "src.orders");
    assert_remote(&p, "other.orders", "src.other.orders");
    assert_remote(&p, "heartbeats", "src.heartbeats");
    policy_free(&p);
    policy_load(&p, "{\"replication.policy.separator\": \"__\"}");
    assert_remote(&p, "orders", "src__orders");
    policy_free(&p);
}

static void test_identity_policy_keeps_names_but_heartbeats(void **state)
{
    (void)state;
    policy_t p;
    policy_load(&p, "{\"replication.policy.class\": \"IdentityReplicationPolicy\"}");
    assert_remote(&p, "orders", "orders");
    assert_remote(&p, "a.orders", "a.orders");
    assert_remote(&p, "heartbeats", "src.heartbeats");
    assert_remote(&p, "x.heartbeats", "src.x.heartbeats");
    policy_free(&p);
}

static void test_filter_follows_topics_and_mm2s_exclusions(void **state)
{
    (void)state;
    policy_t p;
    policy_load(&p, "{\"topics\": \"orders.*, pay\"}");
    assert_true(tb_mirror_filter_topic(&p.filter, "orders"));
    assert_true(tb_mirror_filter_topic(&p.filter, "orders-eu"));
    assert_true(tb_mirror_filter_topic(&p.filter, "pay"));
    assert_false(tb_mirror_filter_topic(&p.filter, "payments")); /* matched whole */
    assert_false(tb_mirror_filter_topic(&p.filter, "xorders"));
    /* the default topics.exclude, and MM2's internal topics whatever topics says */
    assert_false(tb_mirror_filter_topic(&p.filter, "orders.internal"));
    assert_false(tb_mirror_filter_topic(&p.filter, "orders-internal"));
    assert_false(tb_mirror_filter_topic(&p.filter, "orders.replica"));
    /* a topic that came from the target already is not sent back */
    assert_false(tb_mirror_filter_topic(&p.filter, "tgt.orders"));
    /* heartbeats are copied whatever topics says, from any upstream */
    assert_true(tb_mirror_filter_topic(&p.filter, "heartbeats"));
    assert_true(tb_mirror_filter_topic(&p.filter, "third.heartbeats"));
    assert_false(tb_mirror_filter_topic(&p.filter, "tgt.heartbeats"));
    policy_free(&p);

    policy_load(&p, "{\"topics\": \".*\", \"heartbeats.replication.enabled\": \"false\", "
                    "\"topics.exclude\": \"heartbeats, secret\\\\..*\"}");
    assert_true(tb_mirror_filter_topic(&p.filter, "orders"));
    assert_false(tb_mirror_filter_topic(&p.filter, "heartbeats"));
    assert_false(tb_mirror_filter_topic(&p.filter, "secret.x"));
    assert_true(tb_mirror_filter_topic(&p.filter, "secretx"));
    assert_false(tb_mirror_filter_topic(&p.filter, "__consumer_offsets"));
    policy_free(&p);
}

static void test_java_brackets_read_as_posix(void **state)
{
    (void)state;
    char *posix = tb_mirror_posix_regex(".*[\\-\\.]internal");
    assert_string_equal(posix, "^(.*[.-]internal)$");
    free(posix);
    posix = tb_mirror_posix_regex("a\\.b");
    assert_string_equal(posix, "^(a\\.b)$");
    free(posix);
    posix = tb_mirror_posix_regex("v\\d+\\D[\\d_]");
    assert_string_equal(posix, "^(v[0-9]+[^0-9][0-9_])$");
    free(posix);
}

static void test_topic_configs_excluded_as_mm2s(void **state)
{
    (void)state;
    policy_t p;
    tb_mirror_filter_t filter;
    char errstr[256];
    policy_load(&p, "{}");
    assert_int_equal(
        tb_mirror_config_filter_init(&filter, &p.settings, errstr, sizeof(errstr)), 0);
    assert_true(tb_mirror_config_copied(&filter, "cleanup.policy"));
    assert_true(tb_mirror_config_copied(&filter, "retention.ms"));
    assert_false(tb_mirror_config_copied(&filter, "min.insync.replicas"));
    assert_false(
        tb_mirror_config_copied(&filter, "leader.replication.throttled.replicas"));
    tb_mirror_filter_free(&filter);
    policy_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_policy_prefixes_the_source_alias),
        cmocka_unit_test(test_identity_policy_keeps_names_but_heartbeats),
        cmocka_unit_test(test_filter_follows_topics_and_mm2s_exclusions),
        cmocka_unit_test(test_java_brackets_read_as_posix),
        cmocka_unit_test(test_topic_configs_excluded_as_mm2s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
