#include "tb_test.h"

#include <string.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/kafka/tb_java_client_keys.h"
#include "core/tb_config.h"

/* The client properties of role for a worker's keys and a connector's. */
static json_t *props_of(tb_client_role_t role, const char *worker_json,
                        const char *config_json, json_t *errors)
{
    json_t *worker = json_loads(worker_json, 0, NULL);
    json_t *config = json_loads(config_json, 0, NULL);
    json_t *allowlist = json_array();
    tb_client_settings_t settings = {.worker_props = worker,
                                     .overrides_allowed = true,
                                     .allowlist = allowlist,
                                     .literal_secrets = true};
    json_t *props = tb_client_props(&settings, role, config, true, errors);
    json_decref(worker);
    json_decref(config);
    json_decref(allowlist);
    return props;
}

static const char *prop(const json_t *props, const char *key)
{
    return json_string_value(json_object_get(props, key));
}

/* The errors of one config key, joined. */
static const char *first_error(const json_t *errors, const char *key)
{
    return json_string_value(json_array_get(json_object_get(errors, key), 0));
}

static void test_producer_keys_become_librdkafka_properties(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p =
        props_of(TB_CLIENT_PRODUCER, "{}",
                 "{\"producer.override.buffer.memory\": \"33554433\","
                 " \"producer.override.max.request.size\": \"2097152\","
                 " \"producer.override.max.in.flight.requests.per.connection\": \"3\","
                 " \"producer.override.retries\": \"7\","
                 " \"producer.override.delivery.timeout.ms\": \"90000\","
                 " \"producer.override.receive.buffer.bytes\": \"-1\","
                 " \"producer.override.metadata.max.age.ms\": \"60000\","
                 " \"producer.override.compression.type\": \"zstd\","
                 " \"producer.override.compression.zstd.level\": \"7\","
                 " \"producer.override.compression.gzip.level\": \"5\","
                 " \"producer.override.max.block.ms\": \"1000\","
                 " \"producer.override.key.serializer\": \"x.Y\","
                 " \"producer.override.max.poll.records\": \"3\","
                 " \"producer.override.linger.ms\": \"5\"}",
                 errors);
    assert_non_null(p);
    assert_string_equal(prop(p, "queue.buffering.max.kbytes"), "32769"); /* rounded up */
    assert_string_equal(prop(p, "message.max.bytes"), "2097152");
    assert_string_equal(prop(p, "max.in.flight"), "3");
    assert_string_equal(prop(p, "message.send.max.retries"), "7");
    assert_string_equal(prop(p, "message.timeout.ms"), "90000");
    assert_string_equal(prop(p, "socket.receive.buffer.bytes"), "0");
    assert_string_equal(prop(p, "topic.metadata.refresh.interval.ms"), "60000");
    assert_string_equal(prop(p, "compression.level"), "7"); /* zstd's, not gzip's */
    assert_string_equal(prop(p, "linger.ms"), "5");
    assert_string_equal(prop(p, "partitioner"), "murmur2_random"); /* Java's default */
    assert_int_equal(json_object_size(p), 12); /* and socket.nagle.disable */
    assert_int_equal(json_object_size(errors), 0);
    json_decref(p);
    json_decref(errors);
}

static void test_consumer_keys_and_the_batch_bound(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p = props_of(TB_CLIENT_CONSUMER,
                         "{\"consumer.fetch.max.wait.ms\": \"100\","
                         " \"consumer.max.poll.records\": \"50\"}",
                         "{\"consumer.override.max.poll.records\": \"3\","
                         " \"consumer.override.request.timeout.ms\": \"20000\","
                         " \"consumer.override.key.deserializer\": \"x.Y\"}",
                         errors);
    assert_non_null(p);
    assert_string_equal(prop(p, "fetch.wait.max.ms"), "100");
    assert_string_equal(prop(p, TB_JAVA_MAX_POLL_RECORDS), "3");
    assert_string_equal(prop(p, "socket.timeout.ms"), "20000");
    /* and the two queue defaults, socket.nagle.disable */
    assert_int_equal(json_object_size(p), 6);
    json_decref(p);
    json_decref(errors);
}

/* librdkafka 2.0.2 waits up to a second before it fetches again once its
 * queue bounds are reached: a consumer gets bounds a fast sink does not reach,
 * unless the worker or the connector sets them. */
static void test_role_defaults_yield_to_the_user(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p = props_of(TB_CLIENT_CONSUMER, "{}", "{}", errors);
    assert_string_equal(prop(p, "queued.min.messages"), "10000000");
    assert_string_equal(prop(p, "queued.max.messages.kbytes"), "131072");
    json_decref(p);
    p = props_of(TB_CLIENT_CONSUMER, "{\"consumer.queued.min.messages\": \"1000\"}",
                 "{\"consumer.override.queued.max.messages.kbytes\": \"2048\"}", errors);
    assert_string_equal(prop(p, "queued.min.messages"), "1000");
    assert_string_equal(prop(p, "queued.max.messages.kbytes"), "2048");
    json_decref(p);
    p = props_of(TB_CLIENT_PRODUCER, "{}", "{}", errors);
    assert_null(prop(p, "queued.min.messages"));
    assert_string_equal(prop(p, "partitioner"), "murmur2_random");
    json_decref(p);
    p = props_of(TB_CLIENT_PRODUCER, "{}",
                 "{\"producer.override.partitioner.class\": "
                 "\"org.apache.kafka.clients.producer.UniformStickyPartitioner\"}",
                 errors);
    assert_string_equal(prop(p, "partitioner"), "random");
    json_decref(p);
    p = props_of(TB_CLIENT_CONSUMER, "{}", "{}", errors);
    assert_null(prop(p, "partitioner"));
    json_decref(p);
    assert_int_equal(json_object_size(errors), 0);
    json_decref(errors);
}

/* Java's client always sets TCP_NODELAY; librdkafka leaves Nagle's
 * algorithm on unless told: every role's client is told, and a worker's or
 * a connector's key still wins. */
static void test_every_client_turns_nagle_off_unless_the_user_says(void **state)
{
    (void)state;
    json_t *errors = json_object();
    const tb_client_role_t roles[] = {TB_CLIENT_PRODUCER, TB_CLIENT_CONSUMER,
                                      TB_CLIENT_ADMIN};
    for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
        json_t *p = props_of(roles[i], "{}", "{}", errors);
        assert_string_equal(prop(p, "socket.nagle.disable"), "true");
        json_decref(p);
    }
    json_t *p = props_of(TB_CLIENT_CONSUMER,
                         "{\"consumer.socket.nagle.disable\": \"false\"}", "{}", errors);
    assert_string_equal(prop(p, "socket.nagle.disable"), "false");
    json_decref(p);
    p = props_of(TB_CLIENT_PRODUCER, "{}",
                 "{\"producer.override.socket.nagle.disable\": \"false\"}", errors);
    assert_string_equal(prop(p, "socket.nagle.disable"), "false");
    json_decref(p);
    assert_int_equal(json_object_size(errors), 0);
    json_decref(errors);
}

static void test_a_later_layer_wins_under_either_name(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p = props_of(TB_CLIENT_CONSUMER, "{\"consumer.fetch.wait.max.ms\": \"100\"}",
                         "{\"consumer.override.fetch.max.wait.ms\": \"200\"}", errors);
    assert_string_equal(prop(p, "fetch.wait.max.ms"), "200");
    json_decref(p);
    p = props_of(TB_CLIENT_CONSUMER, "{\"consumer.fetch.max.wait.ms\": \"100\"}",
                 "{\"consumer.override.fetch.wait.max.ms\": \"300\"}", errors);
    assert_string_equal(prop(p, "fetch.wait.max.ms"), "300");
    json_decref(p);
    assert_int_equal(json_object_size(errors), 0);
    json_decref(errors);
}

static void test_out_of_range_names_the_key_written(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p = props_of(TB_CLIENT_PRODUCER, "{\"producer.buffer.memory\": \"0\"}",
                         "{\"producer.override.linger.ms\": \"5000000\","
                         " \"producer.override.acks\": \"2\","
                         " \"producer.override.no.such.thing\": \"1\"}",
                         errors);
    assert_null(p);
    assert_string_equal(first_error(errors, "producer.override.linger.ms"),
                        "Invalid value 5000000 for configuration "
                        "producer.override.linger.ms: Value must be no more than 900000");
    assert_string_equal(first_error(errors, "producer.buffer.memory"),
                        "Invalid value 0 for configuration producer.buffer.memory: Value "
                        "must be at least 1");
    assert_string_equal(first_error(errors, "producer.override.acks"),
                        "Invalid value 2 for configuration producer.override.acks: "
                        "String must be one of: all, -1, 0, 1");
    assert_non_null(strstr(first_error(errors, "producer.override.no.such.thing"),
                           "No such configuration property: "
                           "\"producer.override.no.such.thing\""));
    assert_int_equal(json_object_size(errors), 4);
    json_decref(errors);
}

static void test_jaas_plain_scram_and_oauthbearer(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p =
        props_of(TB_CLIENT_CONSUMER, "{}",
                 "{\"consumer.override.security.protocol\": \"SASL_SSL\","
                 " \"consumer.override.sasl.jaas.config\": "
                 "\"org.apache.kafka.common.security.plain.PlainLoginModule Required "
                 "username=\\\"u;1\\\" /* c */ password=\\\"p\\\\\\\"w d\\\";\"}",
                 errors);
    assert_non_null(p);
    assert_string_equal(prop(p, "sasl.username"), "u;1");
    assert_string_equal(prop(p, "sasl.password"), "p\"w d");
    assert_null(prop(p, "sasl.jaas.config"));
    json_decref(p);
    p = props_of(TB_CLIENT_ADMIN,
                 "{\"security.protocol\": \"SASL_SSL\", \"sasl.jaas.config\": "
                 "\"org.apache.kafka.common.security.scram.ScramLoginModule required "
                 "username=admin password=secret ;\"}",
                 "{}", errors);
    assert_string_equal(prop(p, "sasl.username"), "admin");
    assert_string_equal(prop(p, "sasl.password"), "secret");
    json_decref(p);
    p = props_of(TB_CLIENT_PRODUCER, "{}",
                 "{\"producer.override.security.protocol\": \"SASL_PLAINTEXT\","
                 " \"producer.override.sasl.jaas.config\": "
                 "\"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
                 "required unsecuredLoginStringClaim_sub=\\\"alice\\\" "
                 "unsecuredLoginListClaim_scope=\\\",read,write\\\";\"}",
                 errors);
    assert_string_equal(prop(p, "sasl.oauthbearer.config"),
                        "principal=alice scope=read,write");
    assert_string_equal(prop(p, "enable.sasl.oauthbearer.unsecure.jwt"), "true");
    json_decref(p);
    assert_int_equal(json_object_size(errors), 0);
    json_decref(errors);
}

static void test_jaas_refusals_say_why_and_hide_the_value(void **state)
{
    (void)state;
    static const char *const configs[][2] = {
        {"com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
         "keyTab=\\\"/k\\\" principal=\\\"p@R\\\";",
         "sasl.kerberos.keytab"},
        {"org.apache.kafka.common.security.plain.PlainLoginModule required "
         "username=\\\"u\\\" password=\\\"hunter2\\\"",
         "cannot be read"},
        {"org.apache.kafka.common.security.plain.PlainLoginModule required "
         "password=\\\"hunter2\\\";",
         "needs username and password"},
        {"org.example.Custom required a=\\\"hunter2\\\";", "org.example.Custom"},
    };
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        char config[1024];
        snprintf(config, sizeof(config),
                 "{\"consumer.override.sasl.jaas.config\": \"%s\"}", configs[i][0]);
        json_t *errors = json_object();
        assert_null(props_of(TB_CLIENT_CONSUMER, "{}", config, errors));
        const char *message = first_error(errors, "consumer.override.sasl.jaas.config");
        assert_non_null(message);
        assert_non_null(strstr(message, configs[i][1]));
        assert_null(strstr(message, "hunter2"));
        json_decref(errors);
    }
}

static void test_trust_and_key_stores(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p = props_of(TB_CLIENT_CONSUMER, "{}",
                         "{\"consumer.override.security.protocol\": \"SSL\","
                         " \"consumer.override.ssl.truststore.location\": \"/ca.pem\","
                         " \"consumer.override.ssl.truststore.type\": \"PEM\","
                         " \"consumer.override.ssl.keystore.location\": \"/c.p12\","
                         " \"consumer.override.ssl.keystore.type\": \"PKCS12\"}",
                         errors);
    assert_non_null(p);
    assert_string_equal(prop(p, "ssl.ca.location"), "/ca.pem");
    assert_string_equal(prop(p, "ssl.keystore.location"), "/c.p12");
    /* and the two queue defaults, socket.nagle.disable */
    assert_int_equal(json_object_size(p), 6);
    json_decref(p);
    assert_null(props_of(TB_CLIENT_CONSUMER, "{}",
                         "{\"consumer.override.ssl.truststore.location\": \"/t.jks\"}",
                         errors));
    assert_non_null(
        strstr(first_error(errors, "consumer.override.ssl.truststore.location"),
               "is a JKS store"));
    json_decref(errors);
}

static void test_keys_without_effect_are_named(void **state)
{
    (void)state;
    assert_non_null(tb_java_client_key_ignored("producer.override.max.block.ms", "1"));
    assert_non_null(tb_java_client_key_ignored("consumer.key.deserializer", "x"));
    assert_non_null(
        tb_java_client_key_ignored("producer.override.max.poll.records", "3"));
    assert_non_null(tb_java_client_key_ignored("producer.override.partitioner.class",
                                               "org.example.Mine"));
    assert_null(tb_java_client_key_ignored(
        "producer.override.partitioner.class",
        "org.apache.kafka.clients.producer.internals.DefaultPartitioner"));
    assert_null(tb_java_client_key_ignored("consumer.override.max.poll.records", "3"));
    assert_null(tb_java_client_key_ignored("producer.override.linger.ms", "3"));
    assert_null(
        tb_java_client_key_ignored("producer.override.queue.buffering.max.ms", "3"));
}

/* Kafka 4.x's OIDC keys, and an OAuthBearerLoginModule with a token
 * endpoint, become librdkafka's OIDC keys, the method included. */
static void test_oidc_keys_of_kafka_4(void **state)
{
    (void)state;
    json_t *errors = json_object();
    json_t *p = props_of(
        TB_CLIENT_CONSUMER, "{}",
        "{\"consumer.override.sasl.oauthbearer.token.endpoint.url\": \"https://i/t\","
        " \"consumer.override.sasl.oauthbearer.scope\": \"read\","
        " \"consumer.override.sasl.oauthbearer.client.credentials.client.id\": \"c1\","
        " \"consumer.override.sasl.oauthbearer.client.credentials.client.secret\": \"s\","
        " \"consumer.override.metadata.recovery.rebootstrap.trigger.ms\": \"300000\","
        " \"consumer.override.share.acquire.mode\": \"BATCH_OPTIMIZED\"}",
        errors);
    assert_non_null(p);
    assert_string_equal(prop(p, "sasl.oauthbearer.method"), "oidc");
    assert_string_equal(prop(p, "sasl.oauthbearer.token.endpoint.url"), "https://i/t");
    assert_string_equal(prop(p, "sasl.oauthbearer.scope"), "read");
    assert_string_equal(prop(p, "sasl.oauthbearer.client.id"), "c1");
    assert_string_equal(prop(p, "sasl.oauthbearer.client.secret"), "s");
    assert_null(prop(p, "metadata.recovery.rebootstrap.trigger.ms"));
    json_decref(p);
    p = props_of(
        TB_CLIENT_PRODUCER, "{}",
        "{\"producer.override.sasl.oauthbearer.token.endpoint.url\": \"https://i/t\","
        " \"producer.override.sasl.jaas.config\": "
        "\"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
        "required clientId=c2 clientSecret=\\\"s2\\\" scope=write;\"}",
        errors);
    assert_non_null(p);
    assert_string_equal(prop(p, "sasl.oauthbearer.client.id"), "c2");
    assert_string_equal(prop(p, "sasl.oauthbearer.client.secret"), "s2");
    assert_string_equal(prop(p, "sasl.oauthbearer.scope"), "write");
    json_decref(p);
    assert_int_equal(json_object_size(errors), 0);
    assert_non_null(tb_java_client_key_ignored(
        "consumer.override.sasl.oauthbearer.assertion.file", "/a"));
    assert_non_null(tb_java_client_key_ignored("producer.config.providers", ""));
    json_decref(errors);
}

/* What librdkafka cannot do is refused, naming the key. */
static void test_kafka_4_refusals_name_the_key(void **state)
{
    (void)state;
    static const char *const configs[][2] = {
        {"producer.override.transaction.two.phase.commit.enable", "true"},
        {"producer.override.sasl.oauthbearer.jwt.retriever.class",
         "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"},
    };
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        char config[1024];
        snprintf(config, sizeof(config), "{\"%s\": \"%s\"}", configs[i][0],
                 configs[i][1]);
        json_t *errors = json_object();
        assert_null(props_of(TB_CLIENT_PRODUCER, "{}", config, errors));
        const char *message = first_error(errors, configs[i][0]);
        assert_non_null(message);
        assert_non_null(strstr(message, "String must be one of"));
        json_decref(errors);
    }
    json_t *errors = json_object();
    assert_null(props_of(TB_CLIENT_PRODUCER, "{}",
                         "{\"producer.override.sasl.jaas.config\": "
                         "\"org.apache.kafka.common.security.oauthbearer."
                         "OAuthBearerLoginModule required clientId=c;\"}",
                         errors));
    assert_non_null(strstr(first_error(errors, "producer.override.sasl.jaas.config"),
                           "sasl.oauthbearer.token.endpoint.url"));
    json_decref(errors);
}

/* Issue 36: KIP-848's group protocol, which a Kafka 4.4 broker offers, is
 * refused by the key written, with the reason (librdkafka 2.8's is early
 * access); classic passes. */
static void test_the_consumer_group_protocol_is_refused_with_why(void **state)
{
    (void)state;
    json_t *errors = json_object();
    assert_null(props_of(TB_CLIENT_CONSUMER, "{}",
                         "{\"consumer.override.group.protocol\": \"consumer\"}", errors));
    assert_string_equal(
        first_error(errors, "consumer.override.group.protocol"),
        "Invalid value consumer for configuration "
        "consumer.override.group.protocol: String must be one of: "
        "classic; consumer (KIP-848) is refused: librdkafka 2.8 has it as "
        "early access, not for production use");
    json_decref(errors);
    errors = json_object();
    json_t *props =
        props_of(TB_CLIENT_CONSUMER, "{}",
                 "{\"consumer.override.group.protocol\": \"classic\"}", errors);
    assert_non_null(props);
    assert_int_equal(json_object_size(errors), 0);
    json_decref(props);
    json_decref(errors);
}

/* Issue 36: a sink's own assignor, by Java's class or librdkafka's name;
 * Java's default list (eager range, then cooperative-sticky) is the range a
 * Java group naming it uses; the eager StickyAssignor, which librdkafka
 * lacks, is refused by the key written. */
static void test_assignors_by_java_class_or_name(void **state)
{
    (void)state;
    static const char *const taken[][2] = {
        {"org.apache.kafka.clients.consumer.RoundRobinAssignor", "roundrobin"},
        {"class org.apache.kafka.clients.consumer.RangeAssignor,class "
         "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
         "range"},
        {"cooperative-sticky", "cooperative-sticky"},
        {"range, roundrobin", "range,roundrobin"},
    };
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
        char config[512];
        snprintf(config, sizeof(config),
                 "{\"consumer.override.partition.assignment.strategy\": \"%s\"}",
                 taken[i][0]);
        json_t *errors = json_object();
        json_t *props = props_of(TB_CLIENT_CONSUMER, "{}", config, errors);
        assert_non_null(props);
        assert_string_equal(prop(props, "partition.assignment.strategy"), taken[i][1]);
        json_decref(props);
        json_decref(errors);
    }
    json_t *errors = json_object();
    assert_null(props_of(TB_CLIENT_CONSUMER, "{}",
                         "{\"consumer.override.partition.assignment.strategy\": "
                         "\"org.apache.kafka.clients.consumer.StickyAssignor\"}",
                         errors));
    const char *message =
        first_error(errors, "consumer.override.partition.assignment.strategy");
    assert_non_null(message);
    assert_non_null(strstr(message, "StickyAssignor is not an assignor librdkafka has"));
    json_decref(errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_keys_become_librdkafka_properties),
        cmocka_unit_test(test_consumer_keys_and_the_batch_bound),
        cmocka_unit_test(test_role_defaults_yield_to_the_user),
        cmocka_unit_test(test_every_client_turns_nagle_off_unless_the_user_says),
        cmocka_unit_test(test_a_later_layer_wins_under_either_name),
        cmocka_unit_test(test_out_of_range_names_the_key_written),
        cmocka_unit_test(test_jaas_plain_scram_and_oauthbearer),
        cmocka_unit_test(test_jaas_refusals_say_why_and_hide_the_value),
        cmocka_unit_test(test_trust_and_key_stores),
        cmocka_unit_test(test_keys_without_effect_are_named),
        cmocka_unit_test(test_oidc_keys_of_kafka_4),
        cmocka_unit_test(test_kafka_4_refusals_name_the_key),
        cmocka_unit_test(test_the_consumer_group_protocol_is_refused_with_why),
        cmocka_unit_test(test_assignors_by_java_class_or_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
