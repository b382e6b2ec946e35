#include "connectors/kafka/tb_client_props.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/kafka/tb_java_client_keys.h"
#include "core/tb_config.h"
#include "core/tb_secret.h"

static const char *const role_names[] = {"producer", "consumer", "admin"};

/* Client properties that hold secrets: librdkafka's, and the Java
 * client's that Connect users write (sasl.jaas.config carries a password,
 * ssl.keystore.key a private key). */
static const char *const secret_keys[] = {
    "sasl.password",
    "sasl.jaas.config",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.config",
    "ssl.key.password",
    "ssl.key.pem",
    "ssl.keystore.key",
    "ssl.keystore.password",
    "ssl.truststore.password",
    NULL};

static bool is_secret(const char *key)
{
    for (size_t i = 0; secret_keys[i] != NULL; i++) {
        if (strcmp(key, secret_keys[i]) == 0) {
            return true;
        }
    }
    return false;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool tb_client_secret_key(const char *config_key)
{
    static const char *const prefixes[] = {"producer.override.",
                                           "consumer.override.",
                                           "admin.override.",
                                           "producer.",
                                           "consumer.",
                                           "admin.",
                                           "",
                                           NULL};
    for (size_t i = 0; prefixes[i] != NULL; i++) {
        if (has_prefix(config_key, prefixes[i]) &&
            is_secret(config_key + strlen(prefixes[i]))) {
            return true;
        }
    }
    return false;
}

/* Is key one of the worker's role-prefixed keys? */
static bool is_role_key(const char *key)
{
    for (size_t r = 0; r < 3; r++) {
        size_t n = strlen(role_names[r]);
        if (strncmp(key, role_names[r], n) == 0 && key[n] == '.') {
            return true;
        }
    }
    return false;
}

bool tb_client_literal_refused(const tb_client_settings_t *s, const char *config_key,
                               char *msg, size_t msg_size)
{
    if (!s->literal_secrets) {
        snprintf(msg, msg_size,
                 "%s holds a literal secret, which is refused: use ${env:NAME} or "
                 "${file:/path:key} (or set the worker's secrets.literal.allowed=true)",
                 config_key);
    } else if (s->literal_unsealable) {
        snprintf(msg, msg_size,
                 "%s holds a literal secret, which this distributed worker cannot keep "
                 "safe: set the worker's secrets.encryption.key (a reference to a key "
                 "every worker has) to keep it encrypted in the config topic, or use "
                 "${env:NAME} or ${file:/path:key}",
                 config_key);
    }
    return !s->literal_secrets || s->literal_unsealable;
}

/* Adds one key to props, applying the secret rules. source is the config
 * key it came from, named in errors, a key of the connector's config or
 * (connector false) of the worker's. */
static void put_key(const tb_client_settings_t *s, json_t *props, const char *key,
                    const char *value, const char *source, bool connector, bool resolve,
                    json_t *errors)
{
    char message[1024];
    /* the worker's own secrets stay in its files: no key needed for them */
    if (is_secret(key) && !tb_secret_is_reference(value) &&
        (connector || !s->literal_secrets) &&
        tb_client_literal_refused(s, source, message, sizeof(message))) {
        tb_config_error_add(errors, source, message);
        return;
    }
    if (!resolve || !tb_secret_is_reference(value)) {
        json_object_set_new(props, key, json_string(value));
        return;
    }
    char *secret = tb_secret_resolve(value, message, sizeof(message));
    if (secret == NULL) {
        tb_config_error_add(errors, source, message);
        return;
    }
    json_object_set_new(props, key, json_string(secret));
    tb_secret_free(secret);
}

static bool sasl_protocol(const char *protocol)
{
    return protocol != NULL && (strcasecmp(protocol, "SASL_SSL") == 0 ||
                                strcasecmp(protocol, "SASL_PLAINTEXT") == 0);
}

static bool tls_protocol(const char *protocol)
{
    return protocol != NULL &&
           (strcasecmp(protocol, "SSL") == 0 || strcasecmp(protocol, "SASL_SSL") == 0);
}

/* A configuration silently weaker than it looks is refused, naming the
 * option that fixes it (fix_key). */
static void check_transport(const json_t *props, const char *fix_key, json_t *errors)
{
    static const char *const tls_files[] = {"ssl.ca.location", "ssl.certificate.location",
                                            "ssl.key.location", NULL};
    const char *protocol = json_string_value(json_object_get(props, "security.protocol"));
    const char *shown = protocol != NULL ? protocol : "PLAINTEXT (the default)";
    char message[512];
    if (!sasl_protocol(protocol) && (json_object_get(props, "sasl.username") != NULL ||
                                     json_object_get(props, "sasl.password") != NULL)) {
        snprintf(message, sizeof(message),
                 "SASL credentials are set but security.protocol is %s, so they would "
                 "never be used: set %s to SASL_SSL (or SASL_PLAINTEXT)",
                 shown, fix_key);
        tb_config_error_add(errors, fix_key, message);
    }
    if (!sasl_protocol(protocol) && (json_object_get(props, "sasl.mechanism") != NULL ||
                                     json_object_get(props, "sasl.mechanisms") != NULL)) {
        snprintf(message, sizeof(message),
                 "a SASL mechanism is set but security.protocol is %s: set %s to "
                 "SASL_SSL (or SASL_PLAINTEXT)",
                 shown, fix_key);
        tb_config_error_add(errors, fix_key, message);
    }
    for (size_t i = 0; tls_files[i] != NULL; i++) {
        if (!tls_protocol(protocol) && json_object_get(props, tls_files[i]) != NULL) {
            snprintf(message, sizeof(message),
                     "%s is set but security.protocol is %s, which sends everything in "
                     "plain text: set %s to SSL or SASL_SSL",
                     tls_files[i], shown, fix_key);
            tb_config_error_add(errors, fix_key, message);
        }
    }
}

/* With the worker on TLS, the override keys (fix_prefix + name) that would
 * turn TLS or its checks off are refused, unless the worker allows it. */
static void check_downgrade(const tb_client_settings_t *s, const json_t *worker,
                            const json_t *props, const char *fix_prefix, json_t *errors)
{
    static const struct {
        const char *key;
        const char *weak[5];
    } checks[] = {
        {"enable.ssl.certificate.verification", {"false", "0", "no", "off", NULL}},
        {"ssl.endpoint.identification.algorithm", {"none", "", NULL}},
    };
    const char *worker_protocol =
        json_string_value(json_object_get(worker, "security.protocol"));
    char key[128], message[512];
    if (s->downgrade_allowed || !tls_protocol(worker_protocol)) {
        return;
    }
    if (!tls_protocol(json_string_value(json_object_get(props, "security.protocol")))) {
        snprintf(key, sizeof(key), "%ssecurity.protocol", fix_prefix);
        snprintf(
            message, sizeof(message),
            "%s would send in plain text what the worker sends over %s: refused "
            "unless the worker sets connector.client.security.downgrade.allowed=true",
            key, worker_protocol);
        tb_config_error_add(errors, key, message);
    }
    for (size_t c = 0; c < sizeof(checks) / sizeof(checks[0]); c++) {
        const char *mine = json_string_value(json_object_get(props, checks[c].key));
        const char *theirs = json_string_value(json_object_get(worker, checks[c].key));
        bool weak = false;
        for (size_t w = 0; mine != NULL && checks[c].weak[w] != NULL; w++) {
            weak = weak || strcasecmp(mine, checks[c].weak[w]) == 0;
        }
        if (weak && (theirs == NULL || strcmp(mine, theirs) != 0)) {
            snprintf(key, sizeof(key), "%s%s", fix_prefix, checks[c].key);
            snprintf(message, sizeof(message),
                     "%s=%s turns off a check of the worker's %s connection: refused "
                     "unless the worker sets "
                     "connector.client.security.downgrade.allowed=true",
                     key, mine, worker_protocol);
            tb_config_error_add(errors, key, message);
        }
    }
}

static bool listed(const json_t *list, const char *key)
{
    size_t i;
    json_t *item;
    json_array_foreach ((json_t *)list, i, item) {
        if (strcmp(json_string_value(item), key) == 0) {
            return true;
        }
    }
    return false;
}

/* Why the override of name (under the config key key) is refused, in
 * message; 0 when it is allowed. */
static int check_override(const tb_client_settings_t *s, const char *key,
                          const char *name, char *message, size_t size)
{
    if (!s->overrides_allowed) {
        snprintf(message, size,
                 "%s is not allowed by the worker's "
                 "connector.client.config.override.policy",
                 key);
        return -1;
    }
    if (json_array_size(s->allowlist) > 0 && !listed(s->allowlist, name)) {
        snprintf(message, size,
                 "%s is not allowed by the worker's "
                 "connector.client.config.override.policy: "
                 "connector.client.config.override.allowlist does not name %s",
                 key, name);
        return -1;
    }
    if (strcmp(name, "bootstrap.servers") == 0 && !listed(s->allowlist, name)) {
        snprintf(message, size,
                 "%s would send the connector's credentials to another cluster: it is "
                 "allowed only when the worker's "
                 "connector.client.config.override.allowlist names bootstrap.servers",
                 key);
        return -1;
    }
    return 0;
}

/* What tributary gives a role's clients where neither the worker ("consumer."
 * keys) nor the connector ("consumer.override.") set the key: unset, then
 * merge. librdkafka 2.0.2 stops fetching a partition once the consumer queue
 * holds queued.min.messages (100000) records or queued.max.messages.kbytes
 * (65536) of them, and decides to fetch again only when its broker thread
 * next wakes up, up to a second later, however soon the task drains the
 * queue (librdkafka 2.2 names that wait fetch.queue.backoff.ms). A sink a
 * little slower than the fetcher then idles for most of each second, and its
 * throughput depends on what else wakes that thread. With no record bound and
 * 128 MiB, the queue holds more than a second of a sink writing 100 MB/s.
 * Producers partition keys as Java's default partitioner does (murmur2):
 * librdkafka's own default hashes them with CRC32, and a key would move to
 * another partition than the one Connect wrote it to. Every client turns
 * Nagle's algorithm off (TCP_NODELAY), as Java's client always does:
 * librdkafka leaves it on, and a request's last partial segment may then
 * wait for the broker's delayed acknowledgement of the previous ones. */
static const struct {
    tb_client_role_t role;
    const char *key;
    const char *value;
} role_defaults[] = {
    {TB_CLIENT_CONSUMER, "queued.min.messages", "10000000"},
    {TB_CLIENT_CONSUMER, "queued.max.messages.kbytes", "131072"},
    {TB_CLIENT_PRODUCER, "partitioner", "murmur2_random"},
    {TB_CLIENT_PRODUCER, "socket.nagle.disable", "true"},
    {TB_CLIENT_CONSUMER, "socket.nagle.disable", "true"},
    {TB_CLIENT_ADMIN, "socket.nagle.disable", "true"},
};

static void put_defaults(tb_client_role_t role, json_t *props)
{
    for (size_t i = 0; i < sizeof(role_defaults) / sizeof(role_defaults[0]); i++) {
        if (role_defaults[i].role == role &&
            json_object_get(props, role_defaults[i].key) == NULL) {
            json_object_set_new(props, role_defaults[i].key,
                                json_string(role_defaults[i].value));
        }
    }
}

json_t *tb_client_props(const tb_client_settings_t *s, tb_client_role_t role,
                        const json_t *connector_config, bool resolve, json_t *errors)
{
    char worker_prefix[32], override_prefix[48], fix_key[96], message[512];
    size_t before = tb_config_error_count(errors);
    json_t *props = json_object();
    json_t *origins = json_object(); /* props' key -> the config key written */
    const char *key;
    json_t *value;

    snprintf(worker_prefix, sizeof(worker_prefix), "%s.", role_names[role]);
    snprintf(override_prefix, sizeof(override_prefix), "%s.override.", role_names[role]);
    snprintf(fix_key, sizeof(fix_key), "%ssecurity.protocol", override_prefix);
    json_object_foreach ((json_t *)s->worker_props, key, value) {
        if (!is_role_key(key)) {
            put_key(s, props, key, json_string_value(value), key, false, resolve, errors);
            json_object_set_new(origins, key, json_string(key));
        } else if (has_prefix(key, worker_prefix)) {
            put_key(s, props, key + strlen(worker_prefix), json_string_value(value), key,
                    false, resolve, errors);
            json_object_set_new(origins, key + strlen(worker_prefix), json_string(key));
        }
    }
    json_t *worker = json_deep_copy(props);
    json_object_foreach ((json_t *)connector_config, key, value) {
        const char *name = key + strlen(override_prefix);
        if (!has_prefix(key, override_prefix) || !json_is_string(value)) {
            continue;
        }
        if (check_override(s, key, name, message, sizeof(message)) != 0) {
            tb_config_error_add(errors, key, message);
            continue;
        }
        put_key(s, props, name, json_string_value(value), key, true, resolve, errors);
        json_object_set_new(origins, name, json_string(key));
    }
    tb_java_client_keys_translate(role, props, origins, errors);
    put_defaults(role, props);
    json_decref(origins);
    check_transport(props, fix_key, errors);
    check_downgrade(s, worker, props, override_prefix, errors);
    json_decref(worker);
    if (tb_config_error_count(errors) > before) {
        json_decref(props);
        return NULL;
    }
    return props;
}

json_t *tb_client_props_resolved(const tb_client_settings_t *settings,
                                 tb_client_role_t role, const json_t *connector_config,
                                 char *errstr, size_t errstr_size)
{
    json_t *errors = json_object();
    json_t *props = tb_client_props(settings, role, connector_config, true, errors);
    tb_config_errors_join(errors, "; ", errstr, errstr_size);
    json_decref(errors);
    return props;
}
