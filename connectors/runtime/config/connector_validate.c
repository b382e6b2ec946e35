#include "connectors/runtime/config/tb_connector_validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "core/tb_log.h"
#include "core/tb_secret_seal.h"

/* The list of a config's errors as Connect words it for a 400. */
static tb_err_t invalid_config(const json_t *errors, char *msg, size_t msg_size)
{
    size_t used = (size_t)snprintf(msg, msg_size,
                                   "Connector configuration is invalid and contains "
                                   "the following %zu error(s):\n",
                                   tb_config_error_count(errors));
    if (used < msg_size) {
        used += tb_config_errors_join(errors, "\n", msg + used, msg_size - used);
    }
    if (used < msg_size) {
        snprintf(msg + used, msg_size - used,
                 "\nYou can also find the above list of errors at the endpoint "
                 "`/connector-plugins/{connectorType}/config/validate`");
    }
    return TB_ERR_BAD_REQUEST;
}

/* Connect accepts keys it does not know, and so do we; each is named once,
 * when the config is stored, in case it is a typo. Prefixed keys belong to
 * clients, converters and transforms and are checked by them. */
void tb_connector_validate_log_unused(const char *name, const tb_plugin_t *plugin,
                                      const json_t *config)
{
    static const char *const owned_prefixes[] = {
        "producer.override.", "consumer.override.", "admin.override.",
        "key.converter.",     "value.converter.",   "header.converter.",
        "transforms.",        "predicates.",        NULL};
    const tb_config_table_t *tables[3];
    size_t n = tb_connector_config_tables(plugin, tables);
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)config, key, value) {
        bool owned = tb_config_find(tables, n, key) != NULL;
        for (size_t i = 0; !owned && owned_prefixes[i] != NULL; i++) {
            owned = strncmp(key, owned_prefixes[i], strlen(owned_prefixes[i])) == 0;
        }
        const char *ignored = tb_java_client_key_ignored(key, json_string_value(value));
        if (!owned) {
            TB_LOG_TASK(TB_LOG_WARN, "tributary.config", name, -1,
                        "config key '%s' is not used by %s", key, plugin->class_name);
        } else if (ignored != NULL) {
            TB_LOG_TASK(TB_LOG_INFO, "tributary.config", name, -1,
                        "config key '%s' is accepted and has no effect: %s", key,
                        ignored);
        }
    }
}

/* A secret-bearing value of a connector config, looked at entry by entry. */
typedef struct {
    const char *owner;
    const char *config_key;
    bool literal;      /* a credential header is written literally */
    char reason[1024]; /* why a sealed one may not stay; "" when all may */
} secret_look_t;

/* Notes, of one secret (a whole value, or the credential header name's),
 * whether it is literal and whether a sealed one may stay in this key. */
static void look_at(secret_look_t *look, const char *header, const char *value)
{
    char what[1024];
    if (!tb_secret_is_sealed(value)) {
        look->literal = look->literal || !tb_secret_is_reference(value);
        return;
    }
    if (header != NULL) {
        snprintf(what, sizeof(what), "%s.%s", look->config_key, header);
    }
    if (look->reason[0] == '\0') {
        tb_secret_seal_check(value, look->owner, header != NULL ? what : look->config_key,
                             look->reason, sizeof(look->reason));
    }
}

/* tb_secret_header_fn: looks at a credential header that is not a
 * reference to a file or variable. */
static const char *look_at_header(void *arg, const char *name, const char *value)
{
    look_at(arg, name, value);
    return NULL;
}

/* Looks at value of key when it holds secrets; false when it holds none. */
static bool look_at_secrets(const tb_plugin_t *plugin, const char *key, const char *value,
                            secret_look_t *look)
{
    look->config_key = key;
    if (tb_connector_config_secret_key(plugin, key)) {
        look_at(look, NULL, value);
        return true;
    }
    if (tb_connector_config_headers_key(plugin, key)) {
        free(tb_secret_headers_rewrite(value, look_at_header, look));
        return true;
    }
    return false;
}

/* Every secret of the config: a literal one refused unless the worker takes
 * them (once per key: the client checks may have named it already), a
 * sealed one only in its own connector and key, and every reference
 * checked against the worker's config.providers. */
static void check_secret_values(const tb_connector_checks_t *checks,
                                const tb_plugin_t *plugin, const json_t *config,
                                json_t *errors)
{
    const char *owner = json_string_value(json_object_get(config, "name"));
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)config, key, value) {
        const char *text = json_string_value(value);
        char message[1536], reason[1024];
        secret_look_t look = {.owner = owner != NULL ? owner : ""};
        if (text == NULL || json_object_get(errors, key) != NULL) {
            continue;
        }
        bool secrets = look_at_secrets(plugin, key, text, &look);
        if (secrets && look.literal &&
            tb_client_literal_refused(checks->client, key, message, sizeof(message))) {
            tb_config_error_add(errors, key, message);
        } else if (secrets && look.reason[0] != '\0') {
            snprintf(message, sizeof(message), "%s: a sealed secret is refused: %s", key,
                     look.reason);
            tb_config_error_add(errors, key, message);
        } else if (tb_secret_policy_check(checks->secret_policy, look.owner, text, reason,
                                          sizeof(reason)) != 0) {
            snprintf(message, sizeof(message), "%s: %s", key, reason);
            tb_config_error_add(errors, key, message);
        }
    }
}

/* The connector's Kafka clients (secrets unresolved) and its PASSWORD keys:
 * literal secrets refused unless the worker allows them, weak transports
 * and forbidden overrides refused. */
static void check_secrets_and_clients(const tb_connector_checks_t *checks,
                                      const tb_plugin_t *plugin, const json_t *config,
                                      json_t *errors)
{
    /* every role, so that no override goes unchecked, used or not */
    for (int r = TB_CLIENT_PRODUCER; r <= TB_CLIENT_ADMIN; r++) {
        json_decref(
            tb_client_props(checks->client, (tb_client_role_t)r, config, false, errors));
    }
    check_secret_values(checks, plugin, config, errors);
}

/* What a source that runs in transactions needs, of its config and of this
 * worker; exactly.once.support=required where the worker cannot is refused. */
static void check_worker_support(const tb_connector_checks_t *checks,
                                 const tb_connector_settings_t *settings, json_t *errors)
{
    if (!tb_connector_config_transactional(settings, checks->exactly_once_available)) {
        return;
    }
    tb_connector_config_check_transactions(settings, errors);
    if (!checks->exactly_once_source) {
        tb_config_error_add(errors, "exactly.once.support",
                            "exactly.once.support=required needs the worker's "
                            "exactly.once.source.support=enabled");
    } else if (!checks->exactly_once_available) { /* enabled: dev mode */
        tb_config_error_add(errors, "exactly.once.support",
                            "exactly-once is not available in dev mode: the in-process "
                            "cluster does not keep transactions as a broker does");
    }
}

/* Every problem of a connector config: its own keys, and what this worker
 * allows (exactly-once, secrets, client settings). New reference. */
json_t *tb_connector_validate_errors(const tb_connector_checks_t *checks,
                                     const tb_plugin_t *plugin, const json_t *config)
{
    json_t *errors = json_object();
    json_t *values = tb_connector_config_validate(plugin, config, errors);
    tb_connector_settings_t settings;
    tb_connector_settings_fill(plugin, values, &settings);
    tb_limits_check(checks->limits, plugin->config, config, errors);
    check_worker_support(checks, &settings, errors);
    check_secrets_and_clients(checks, plugin, config, errors);
    json_decref(values);
    return errors;
}

/* Checks a config before it is stored; finds its plugin. */
tb_err_t tb_connector_validate(const tb_connector_checks_t *checks, const char *name,
                               const json_t *config, const tb_plugin_t **plugin,
                               char *msg, size_t msg_size)
{
    const char *config_name = json_string_value(json_object_get(config, "name"));
    if (config_name != NULL && strcmp(config_name, name) != 0) {
        snprintf(msg, msg_size,
                 "Connector name configuration (%s) doesn't match connector name "
                 "in the URL (%s)",
                 config_name, name);
        return TB_ERR_BAD_REQUEST;
    }
    const char *class_name =
        json_string_value(json_object_get(config, "connector.class"));
    if (class_name == NULL) {
        /* the config's values may be secrets: name the missing key only */
        snprintf(msg, msg_size,
                 "Connector config of %s contains no connector type: "
                 "connector.class is missing",
                 name);
        return TB_ERR_BAD_REQUEST;
    }
    *plugin = tb_plugin_find(class_name);
    if (*plugin == NULL) {
        size_t used = (size_t)snprintf(
            msg, msg_size,
            "Failed to find any class that implements Connector and which name "
            "matches %s, available connectors are: ",
            class_name);
        for (size_t i = 0; tb_plugins[i] != NULL && used < msg_size; i++) {
            used += (size_t)snprintf(msg + used, msg_size - used, "%s%s", i ? ", " : "",
                                     tb_plugins[i]->class_name);
        }
        /* Connect answers 500; an unknown class is the client's mistake */
        return TB_ERR_BAD_REQUEST;
    }
    json_t *full = json_deep_copy(config);
    json_object_set_new(full, "name", json_string(name));
    json_t *errors = tb_connector_validate_errors(checks, *plugin, full);
    tb_err_t err = TB_OK;
    if (tb_config_error_count(errors) > 0) {
        err = invalid_config(errors, msg, msg_size);
    }
    json_decref(errors);
    json_decref(full);
    return err;
}
