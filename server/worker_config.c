#include "server/tb_worker_config.h"

#include <ctype.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ENV_PREFIX "TRIBUTARY_"

static const char *const eos_support_values[] = {"disabled", "enabled", NULL};
static const char *const override_policies[] = {"All", "None", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
static const char *const rest_auth_modes[] = {"none", "basic", "bearer", NULL};
static const char *const client_auth_modes[] = {"none", "requested", "required", NULL};
static const char *const log_levels[] = {"OFF",  "FATAL", "ERROR", "WARN",
                                         "INFO", "DEBUG", "TRACE", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t port_range = {
    .has_min = true, .min = 0, .has_max = true, .max = 65535};

/* An empty list would leave the worker with no broker at all. */
static int check_bootstrap_servers(const json_t *value, char *reason, size_t reason_size)
{
    if (json_array_size(value) > 0) {
        return 0;
    }
    snprintf(reason, reason_size,
             "The list is empty: name at least one broker as host:port, or leave "
             "bootstrap.servers out for " TB_WORKER_DEFAULT_BOOTSTRAP);
    return -1;
}

/* config.providers names the providers tributary has: file and env. */
static int check_providers(const json_t *value, char *reason, size_t reason_size)
{
    size_t i;
    json_t *name;
    json_array_foreach ((json_t *)value, i, name) {
        const char *text = json_string_value(name);
        if (strcmp(text, "file") != 0 && strcmp(text, "env") != 0) {
            snprintf(reason, reason_size,
                     "Unknown config provider %s: tributary has file and env", text);
            return -1;
        }
    }
    return 0;
}

static int check_pattern(const json_t *value, char *reason, size_t reason_size)
{
    regex_t re;
    const char *pattern = json_string_value(value);
    if (pattern[0] == '\0') {
        return 0;
    }
    int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, &re, reason, reason_size);
        return -1;
    }
    regfree(&re);
    return 0;
}

static const tb_config_def_t worker_keys[] = {
    {.name = "bootstrap.servers",
     .type = TB_CONFIG_LIST,
     .default_value = TB_WORKER_DEFAULT_BOOTSTRAP,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .check = check_bootstrap_servers,
     .documentation = "Kafka brokers to connect to (host:port,...), as in Connect. "
                      "Ignored in dev mode (see dev)."},
    {.name = "dev",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .documentation = "Dev mode: run against an in-process, in-memory Kafka cluster "
                      "(librdkafka's mock cluster) instead of bootstrap.servers; "
                      "the --dev option sets it. For development only: the "
                      "cluster's data is lost when tributary stops. A store used "
                      "in dev mode is marked so, and only dev mode opens it; dev "
                      "mode refuses a store that a worker connected to Kafka "
                      "wrote."},
    {.name = "listeners",
     .type = TB_CONFIG_LIST,
     .default_value = "http://127.0.0.1:8083",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST",
     .documentation = "REST API listeners, as http://host:port (comma-separated). "
                      "Connect's default binds every interface; tributary binds "
                      "loopback unless told otherwise."},
    {.name = "rest.advertised.host.name",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .documentation = "Host name shown in worker_id; defaults to the first "
                      "listener's host."},
    {.name = "rest.advertised.port",
     .type = TB_CONFIG_INT,
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &port_range,
     .documentation = "Port shown in worker_id; defaults to the first listener's "
                      "port."},
    {.name = "rest.request.body.max.bytes",
     .type = TB_CONFIG_LONG,
     .default_value = "1048576",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &at_least_one,
     .documentation = "Largest request body accepted; larger ones get 413."},
    {.name = "rest.threads",
     .type = TB_CONFIG_INT,
     .default_value = "2",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &at_least_one,
     .documentation = "Threads serving REST requests, per listener."},
    {.name = "rest.auth",
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .one_of = rest_auth_modes,
     .documentation = "Authentication of every REST request: none, basic (HTTP "
                      "Basic, user names and passwords) or bearer (Authorization: "
                      "Bearer <token-name>.<secret>), checked against "
                      "rest.auth.credentials.file. A request without valid "
                      "credentials gets 401 with WWW-Authenticate. A verified "
                      "header is remembered for the rest of its connection, so "
                      "clients that keep connections alive pay for the slow hash "
                      "once."},
    {.name = "rest.auth.credentials.file",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "File of credentials for rest.auth, read at start: one "
                      "<name>:<hash> a line (a user name for basic, a token name "
                      "of letters, digits and -_~+/= for bearer); blank lines and "
                      "lines starting with # are ignored. Each hash is "
                      "pbkdf2-sha256$<iterations>$<salt>$<hash> as printed by "
                      "`tributary --hash-password` (password or token secret on "
                      "stdin)."},
    {.name = "rest.allow.unauthenticated.remote",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "REST security",
     .documentation = "tributary refuses to start when a listener binds an "
                      "address other than loopback (127.0.0.0/8, ::1, "
                      "localhost) while rest.auth is none, unless this is true. "
                      "An https listener with "
                      "listeners.https.ssl.client.auth=required counts as "
                      "authenticated."},
    {.name = "admin.listeners",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST security",
     .documentation = "Where the admin endpoints (/admin/...) are served. Unset: "
                      "on the listeners. A list of http(s)://host:port: on those "
                      "listeners only, which serve nothing else (404 for admin "
                      "paths on the listeners). Empty: nowhere (404). https admin "
                      "listeners use the listeners.https.ssl.* settings."},
    {.name = "access.control.allow.origin",
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST security",
     .documentation = "CORS: origins allowed to call the REST API from a "
                      "browser, comma-separated, or * for any; empty turns CORS "
                      "off. Replies to an allowed origin carry "
                      "Access-Control-Allow-Origin (a listed origin also "
                      "Access-Control-Allow-Credentials), and its preflight "
                      "OPTIONS requests are answered 204 without "
                      "authentication."},
    {.name = "access.control.allow.methods",
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST security",
     .documentation = "CORS: the Access-Control-Allow-Methods of preflight "
                      "replies, comma-separated; empty means GET,POST,HEAD (as "
                      "in Kafka Connect)."},
    {.name = "listeners.https.ssl.certificate.location",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "PEM file of the certificate (chain) of the https:// "
                      "listeners and admin listeners, read at start."},
    {.name = "listeners.https.ssl.key.location",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "PEM file of the private key of "
                      "listeners.https.ssl.certificate.location, read at start."},
    {.name = "listeners.https.ssl.key.password",
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "Password of an encrypted listeners.https.ssl.key.location "
                      "(PKCS#8); ${env:NAME} or ${file:/path:key}, or literal."},
    {.name = "listeners.https.ssl.ca.location",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "REST security",
     .documentation = "PEM file of the CA certificates that client certificates "
                      "must verify against; needed by "
                      "listeners.https.ssl.client.auth. Connect's truststore, as "
                      "PEM."},
    {.name = "listeners.https.ssl.client.auth",
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "REST security",
     .one_of = client_auth_modes,
     .documentation = "TLS client certificates on https listeners: none; "
                      "requested (asked for; a presented one must verify against "
                      "listeners.https.ssl.ca.location, else 401); or required "
                      "(a request without a verified one gets 401). Connect's "
                      "ssl.client.auth, under the listener prefix because "
                      "tributary's ssl.* keys configure the Kafka clients."},
    {.name = "offset.storage.file.filename",
     .type = TB_CONFIG_STRING,
     .default_value = "data/tributary.db",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Store",
     .documentation = "The worker's store: an SQLite file holding connector "
                      "configs, states, task configs, status and offsets. "
                      "Connect's key of the same name names a Java-serialized "
                      "offsets file; tributary keeps everything in this one "
                      "file. Its directory is created when missing."},
    {.name = "key.converter",
     .type = TB_CONFIG_CLASS,
     .default_value = "org.apache.kafka.connect.json.JsonConverter",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Converters",
     .documentation = "Default converter of record keys. Connect requires this "
                      "key; tributary defaults it to what Connect's stock "
                      "worker files set."},
    {.name = "value.converter",
     .type = TB_CONFIG_CLASS,
     .default_value = "org.apache.kafka.connect.json.JsonConverter",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Converters",
     .documentation = "Default converter of record values (see key.converter)."},
    {.name = "task.threads",
     .type = TB_CONFIG_INT,
     .default_value = "4",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Tasks",
     .range = &at_least_one,
     .documentation = "Size of the bounded pool that runs every task. An idle "
                      "task holds no thread."},
    {.name = "task.shutdown.graceful.timeout.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "5000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Tasks",
     .range = &non_negative,
     .documentation = "How long shutdown waits for tasks to flush and stop."},
    {.name = "task.restart.backoff.initial.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Tasks",
     .range = &non_negative,
     .documentation = "A failed task restarts by itself after this delay, doubled "
                      "after each failure up to task.restart.backoff.max.ms; 0 "
                      "turns automatic restarts off (as in Kafka Connect)."},
    {.name = "task.restart.backoff.max.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "60000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Tasks",
     .range = &at_least_one,
     .documentation = "The longest delay between automatic restarts of a task; a "
                      "task that ran this long without failing starts its backoff "
                      "afresh."},
    {.name = "connector.client.config.override.policy",
     .type = TB_CONFIG_STRING,
     .default_value = "All",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .one_of = override_policies,
     .documentation = "Whether connectors may override their Kafka clients' "
                      "properties with producer.override.*, consumer.override.* and "
                      "admin.override.* keys: All or None (Connect's Principal policy "
                      "is not offered)."},
    {.name = "connector.client.config.override.allowlist",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .documentation = "With the All policy, the only client properties connectors may "
                      "override (e.g. acks,linger.ms); empty allows any (tributary)."},
    {.name = "secrets.literal.allowed",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .documentation = "Accept secrets (PASSWORD keys, sasl.password, ssl.key.password, "
                      "...) written literally instead of as ${env:NAME} or "
                      "${file:/path:key} references. Literal secrets are never shown "
                      "in responses or logs, but the store holds them as given "
                      "(tributary)."},
    {.name = "connector.client.security.downgrade.allowed",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .documentation = "With the worker's clients on SSL or SASL_SSL, a connector's "
                      "<client>.override.* keys may not set a plain-text "
                      "security.protocol, enable.ssl.certificate.verification=false "
                      "or ssl.endpoint.identification.algorithm=none unless this is "
                      "true (tributary)."},
    {.name = "config.providers",
     .type = TB_CONFIG_LIST,
     .default_value = "file,env",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Secrets",
     .check = check_providers,
     .documentation = "The kinds of secret reference connectors may use: file "
                      "(${file:/path:key}) and env (${env:NAME}). Connect's default is "
                      "none; tributary's is both, limited by the two keys below and, "
                      "whatever they say, never reaching the worker's store, its "
                      "directory or another connector's entries of the secrets file. "
                      "The worker's own file is not limited."},
    {.name = "config.providers.file.param.allowed.paths",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Secrets",
     .documentation = "Files and directories ${file:} references of connectors may "
                      "read (symbolic links resolved); empty allows any but the "
                      "worker's data directory (the store's), as in Connect."},
    {.name = "config.providers.env.param.allowlist.pattern",
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Secrets",
     .check = check_pattern,
     .documentation = "POSIX extended regular expression that the whole name of "
                      "every variable a connector's ${env:} reference reads must "
                      "match; empty allows any but TRIBUTARY_* (the worker's own "
                      "configuration), which no reference may read."},
    {.name = "file.allowed.dirs",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Connectors",
     .documentation = "Directories the file connectors may read and write under "
                      "(symbolic links resolved, so none leads out); empty allows "
                      "any path, as Kafka Connect does (tributary)."},
    {.name = "http.sink.allowed.hosts",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Connectors",
     .documentation = "Hosts the HTTP sink may send to; empty allows any "
                      "(tributary)."},
    {.name = "exactly.once.source.support",
     .type = TB_CONFIG_STRING,
     .default_value = "disabled",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Tasks",
     .one_of = eos_support_values,
     .documentation = "enabled lets source connectors ask for exactly-once delivery "
                      "(exactly.once.support=required): Kafka transactions with a "
                      "progress marker. Not available in dev mode."},
    {.name = "offset.flush.interval.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "60000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Tasks",
     .range = &non_negative,
     .documentation = "How often tasks flush and record their offsets."},
    {.name = "log.format",
     .type = TB_CONFIG_STRING,
     .default_value = "text",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Logging",
     .one_of = log_formats,
     .documentation = "Log lines as plain text or as one JSON object each."},
    {.name = "log.level",
     .type = TB_CONFIG_STRING,
     .default_value = "INFO",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Logging",
     .one_of = log_levels,
     .documentation = "Level of the root logger at start; change it at run time "
                      "through /admin/loggers."},
};

const tb_config_table_t tb_worker_config_table = TB_CONFIG_TABLE("Worker", worker_keys);

int tb_worker_config_env_key(const char *name, char *key, size_t key_size)
{
    size_t prefix = strlen(ENV_PREFIX);
    size_t out = 0;
    if (strncmp(name, ENV_PREFIX, prefix) != 0 || name[prefix] == '\0') {
        return -1;
    }
    for (const char *p = name + prefix; *p != '\0' && out + 1 < key_size;) {
        if (strncmp(p, "___", 3) == 0) {
            key[out++] = '-';
            p += 3;
        } else if (strncmp(p, "__", 2) == 0) {
            key[out++] = '_';
            p += 2;
        } else if (*p == '_') {
            key[out++] = '.';
            p++;
        } else {
            key[out++] = (char)tolower((unsigned char)*p++);
        }
    }
    key[out] = '\0';
    return 0;
}

void tb_worker_config_apply_env(json_t *raw, char *const *envp)
{
    for (char *const *env = envp; *env != NULL; env++) {
        char name[256], key[256];
        const char *eq = strchr(*env, '=');
        if (eq == NULL || (size_t)(eq - *env) >= sizeof(name)) {
            continue;
        }
        snprintf(name, sizeof(name), "%.*s", (int)(eq - *env), *env);
        if (tb_worker_config_env_key(name, key, sizeof(key)) == 0) {
            json_object_set_new(raw, key, json_string(eq + 1));
        }
    }
}

json_t *tb_worker_config_kafka_props(const json_t *raw)
{
    static const char *const client_prefixes[] = {
        "security.protocol", "sasl.", "ssl.", "producer.", "consumer.", "admin.", NULL};
    json_t *props = json_object();
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)raw, key, value) {
        bool take = strcmp(key, "bootstrap.servers") == 0;
        for (size_t i = 0; !take && client_prefixes[i] != NULL; i++) {
            take = strncmp(key, client_prefixes[i], strlen(client_prefixes[i])) == 0;
        }
        /* the worker's own keys (admin.listeners, ...) are not client keys,
         * except the one both share */
        const tb_config_table_t *tables[] = {&tb_worker_config_table};
        bool worker_key = tb_config_find(tables, 1, key) != NULL &&
                          strcmp(key, "bootstrap.servers") != 0;
        if (take && json_is_string(value) && !worker_key) {
            json_object_set(props, key, value);
        }
    }
    if (json_object_get(props, "bootstrap.servers") == NULL) {
        json_object_set_new(props, "bootstrap.servers",
                            json_string(TB_WORKER_DEFAULT_BOOTSTRAP));
    }
    return props;
}

json_t *tb_worker_config_converters(const json_t *raw, const json_t *values)
{
    static const char *const prefixes[] = {"key.converter.", "value.converter.",
                                           "header.converter.", NULL};
    json_t *out = json_pack("{s:s, s:s}", "key.converter",
                            tb_config_string(values, "key.converter"), "value.converter",
                            tb_config_string(values, "value.converter"));
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)raw, key, value) {
        for (size_t i = 0; prefixes[i] != NULL; i++) {
            if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0) {
                json_object_set(out, key, value);
            }
        }
    }
    return out;
}
