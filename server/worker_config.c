#include "server/tb_worker_config.h"

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/converters/tb_converter.h"
#include "core/tb_props.h"
#include "core/tb_log.h"

#define ENV_PREFIX "TRIBUTARY_"

static const char *const eos_support_values[] = {"disabled", "enabled", NULL};
static const char *const metadata_recovery_strategies[] = {"rebootstrap", "none", NULL};
static const char *const override_policies[] = {"All", "None", "Allowlist", NULL};
static const char *const mac_algorithms[] = {"HmacSHA1",   "HmacSHA224", "HmacSHA256",
                                             "HmacSHA384", "HmacSHA512", NULL};
static const char *const listener_schemes[] = {"http", "https", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
static const char *const rest_auth_modes[] = {"none", "basic", "bearer", NULL};
static const char *const client_auth_modes[] = {"none", "requested", "required", NULL};
static const char *const log_levels[] = {"OFF",  "FATAL", "ERROR", "WARN",
                                         "INFO", "DEBUG", "TRACE", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t replication_range = {.has_min = true, .min = -1};
static const tb_config_range_t connections_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 65535};
/* at most a day: libmicrohttpd takes whole seconds */
static const tb_config_range_t connection_timeout_range = {
    .has_min = true, .min = 1000, .has_max = true, .max = 86400000};
static const tb_config_range_t port_range = {
    .has_min = true, .min = 0, .has_max = true, .max = 65535};

/* An empty list would leave the worker with no broker at all. */
static int check_bootstrap_servers(const json_t *value, char *reason, size_t reason_size)
{
    if (json_array_size(value) > 0) {
        return 0;
    }
    snprintf(reason, reason_size,
             "The list is empty: name at least one broker as host:port (or run "
             "with --dev for an in-memory development cluster)");
    return -1;
}

/* metadata.recovery.strategy=none: librdkafka always reconnects to the
 * bootstrap brokers, which none would forbid. */
static int check_metadata_recovery(const json_t *value, char *reason, size_t reason_size)
{
    if (strcasecmp(json_string_value(value), "none") != 0) {
        return 0;
    }
    snprintf(reason, reason_size,
             "librdkafka always goes back to the bootstrap.servers brokers when the "
             "brokers it learned are gone, which none forbids: leave the key out or "
             "set rebootstrap");
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

/* inter.worker.verification.algorithms: Mac algorithms tributary has. */
static int check_mac_list(const json_t *value, char *reason, size_t reason_size)
{
    size_t i;
    json_t *name;
    if (json_array_size(value) == 0) {
        snprintf(reason, reason_size, "The list is empty: name at least HmacSHA256");
        return -1;
    }
    json_array_foreach ((json_t *)value, i, name) {
        const char *text = json_string_value(name);
        bool known = false;
        for (size_t m = 0; mac_algorithms[m] != NULL && !known; m++) {
            known = strcmp(text, mac_algorithms[m]) == 0;
        }
        if (!known) {
            snprintf(reason, reason_size,
                     "Unknown Mac algorithm %s: tributary has HmacSHA1, HmacSHA224, "
                     "HmacSHA256, HmacSHA384 and HmacSHA512",
                     text);
            return -1;
        }
    }
    return 0;
}

/* inter.worker.key.size: whole bytes, as Java's Hmac key generators take. */
static int check_key_bits(const json_t *value, char *reason, size_t reason_size)
{
    json_int_t bits = json_integer_value(value);
    if (json_is_null(value) || (bits >= 40 && bits <= 8192 && bits % 8 == 0)) {
        return 0;
    }
    snprintf(reason, reason_size, "A key size is a multiple of 8 bits from 40 to 8192");
    return -1;
}

static const tb_config_def_t worker_keys[] = {
    {.name = "bootstrap.servers",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_worker_settings_t, bootstrap_servers),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .check = check_bootstrap_servers,
     .documentation = "Kafka brokers to connect to (host:port,...). Required, as in "
                      "Connect 4.2 and later (KIP-1161): a worker without it refuses "
                      "to start, naming the key (Connect 3.9 defaulted to "
                      "localhost:9092). Not needed, and ignored, in dev mode (see "
                      "dev)."},
    {.name = "dev",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, dev),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, listeners),
     .default_value = "http://127.0.0.1:8083",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST",
     .documentation = "REST API listeners, as http://host:port (comma-separated). "
                      "Connect's default binds every interface; tributary binds "
                      "loopback unless told otherwise."},
    {.name = "rest.advertised.host.name",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_advertised_host_name),
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .documentation = "The host the other workers of a cluster reach this one at, "
                      "and its worker_id's host; defaults to the advertised "
                      "listener's host, or the machine's host name when that "
                      "listener binds every interface."},
    {.name = "rest.advertised.port",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_VALUE_AT(tb_worker_settings_t, rest_advertised_port),
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &port_range,
     .documentation = "The port the other workers reach this one at, and its "
                      "worker_id's port; defaults to the advertised listener's port."},
    {.name = "rest.advertised.listener",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_advertised_listener),
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .one_of = listener_schemes,
     .documentation = "http or https: the first listener of that scheme is the one "
                      "advertised (its scheme, host and port); defaults to the first "
                      "listener."},
    {.name = "rest.request.body.max.bytes",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_request_body_max_bytes),
     .default_value = "1048576",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &at_least_one,
     .documentation = "Largest request body accepted; larger ones get 413."},
    {.name = "rest.threads",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_threads),
     .default_value = "2",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &at_least_one,
     .documentation = "Threads serving REST requests, per listener."},
    {.name = "rest.connections.max",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_connections_max),
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &connections_range,
     .documentation = "Connections a listener holds open at once, all clients "
                      "together; more wait in the listening socket's backlog until one "
                      "closes. At least rest.threads (tributary)."},
    {.name = "rest.connections.per.client.max",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_connections_per_client_max),
     .default_value = "128",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &connections_range,
     .documentation = "Connections one client may hold open at once, per listener, "
                      "counting those it closed that a busy REST thread has not reaped "
                      "yet; a client is an IPv4 address or an IPv6 /64 (a host often "
                      "holds a whole /64). A connection beyond them is closed as soon "
                      "as it is accepted (tributary)."},
    {.name = "rest.request.header.timeout.ms",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_request_header_timeout_ms),
     .default_value = "10000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &connection_timeout_range,
     .documentation = "How long a connection may take to send a request's headers, "
                      "counted from its accept or from the end of its previous "
                      "request; then it is closed, whatever it sent meanwhile (a byte "
                      "now and then does not extend it, as it does "
                      "rest.connection.timeout.ms). Checked every 200 ms (tributary)."},
    {.name = "rest.request.timeout.ms",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_request_timeout_ms),
     .default_value = "90000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &connection_timeout_range,
     .documentation = "How long a write (POST, PUT, PATCH, DELETE) may take before it "
                      "is answered 503 with Retry-After. Writes run on a pool of their "
                      "own, so that /health, /metrics and reads never wait behind "
                      "them; a write answered 503 may still take effect once its wait "
                      "(a leader, the broker) ends."},
    {.name = "rest.connection.timeout.ms",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_connection_timeout_ms),
     .default_value = "30000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .range = &connection_timeout_range,
     .documentation = "How long a REST connection may stay idle (no request, or a "
                      "request that stalls) before it is closed; counted in whole "
                      "seconds, rounded up (tributary)."},
    {.name = "rest.auth",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_auth),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_auth_credentials_file),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, rest_allow_unauthenticated_remote),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, admin_listeners),
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST security",
     .documentation = "Where the admin endpoints (/admin/...) are served. Unset: "
                      "on the listeners. A list of http(s)://host:port: on those "
                      "listeners only, which serve nothing else (404 for admin "
                      "paths on the listeners). Empty: nowhere (404). https admin "
                      "listeners use the listeners.https.ssl.* settings."},
    {.name = "access.control.allow.origin",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, access_control_allow_origin),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, access_control_allow_methods),
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST security",
     .documentation = "CORS: the Access-Control-Allow-Methods of preflight "
                      "replies, comma-separated; empty means GET,POST,HEAD (as "
                      "in Kafka Connect)."},
    {.name = "listeners.https.ssl.certificate.location",
     .type = TB_CONFIG_STRING,
     .field =
         TB_CONFIG_AT(tb_worker_settings_t, listeners_https_ssl_certificate_location),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "PEM file of the certificate (chain) of the https:// "
                      "listeners and admin listeners, read at start."},
    {.name = "listeners.https.ssl.key.location",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, listeners_https_ssl_key_location),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "PEM file of the private key of "
                      "listeners.https.ssl.certificate.location, read at start."},
    {.name = "listeners.https.ssl.key.password",
     .type = TB_CONFIG_PASSWORD,
     .field = TB_CONFIG_AT(tb_worker_settings_t, listeners_https_ssl_key_password),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "REST security",
     .documentation = "Password of an encrypted listeners.https.ssl.key.location "
                      "(PKCS#8); ${env:NAME} or ${file:/path:key}, or literal."},
    {.name = "listeners.https.ssl.ca.location",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, listeners_https_ssl_ca_location),
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "REST security",
     .documentation = "PEM file of the CA certificates that client certificates "
                      "must verify against; needed by "
                      "listeners.https.ssl.client.auth. Connect's truststore, as "
                      "PEM."},
    {.name = "listeners.https.ssl.client.auth",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, listeners_https_ssl_client_auth),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, offset_storage_file_filename),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, key_converter),
     .default_value = "org.apache.kafka.connect.json.JsonConverter",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Converters",
     .documentation = "Default converter of record keys. Connect requires this "
                      "key; tributary defaults it to what Connect's stock "
                      "worker files set."},
    {.name = "value.converter",
     .type = TB_CONFIG_CLASS,
     .field = TB_CONFIG_AT(tb_worker_settings_t, value_converter),
     .default_value = "org.apache.kafka.connect.json.JsonConverter",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Converters",
     .documentation = "Default converter of record values (see key.converter)."},
    {.name = "header.converter",
     .type = TB_CONFIG_CLASS,
     .field = TB_CONFIG_AT(tb_worker_settings_t, header_converter),
     .default_value = "org.apache.kafka.connect.storage.SimpleHeaderConverter",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Converters",
     .check = tb_header_converter_check,
     .documentation = "Default converter of record headers: SimpleHeaderConverter "
                      "(Connect's default), StringConverter or ByteArrayConverter; any "
                      "other class is refused. Header values reach plugins as their "
                      "bytes, read as text, under each (see the connector's "
                      "header.converter)."},
    {.name = "task.threads",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, task_threads),
     .default_value = "4",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Tasks",
     .range = &at_least_one,
     .documentation = "Size of the bounded pool that runs every task. An idle "
                      "task holds no thread."},
    {.name = "task.shutdown.graceful.timeout.ms",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_worker_settings_t, task_shutdown_graceful_timeout_ms),
     .default_value = "5000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Tasks",
     .range = &non_negative,
     .documentation = "How long shutdown waits for tasks to flush and stop."},
    {.name = "task.restart.backoff.initial.ms",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_worker_settings_t, task_restart_backoff_initial_ms),
     .default_value = "1000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Tasks",
     .range = &non_negative,
     .documentation = "A failed task restarts by itself after this delay, doubled "
                      "after each failure up to task.restart.backoff.max.ms; 0 "
                      "turns automatic restarts off (as in Kafka Connect)."},
    {.name = "task.restart.backoff.max.ms",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_worker_settings_t, task_restart_backoff_max_ms),
     .default_value = "60000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Tasks",
     .range = &at_least_one,
     .documentation = "The longest delay between automatic restarts of a task; a "
                      "task that ran this long without failing starts its backoff "
                      "afresh."},
    {.name = "metadata.recovery.strategy",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, metadata_recovery_strategy),
     .default_value = "rebootstrap",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Kafka",
     .one_of = metadata_recovery_strategies,
     .check = check_metadata_recovery,
     .documentation = "What the Kafka clients do when every broker they know is "
                      "gone. rebootstrap (Connect 4.0's default, KIP-899) is what "
                      "librdkafka before 2.10 does by itself: it keeps the brokers of "
                      "bootstrap.servers among those it reconnects to, so a cluster "
                      "reachable again under those names is found again; it does not "
                      "resolve the names anew into other brokers when the learned ones "
                      "keep answering with stale metadata. none (stay with the learned "
                      "brokers) cannot be had from librdkafka and is refused."},
    {.name = "connector.client.config.override.policy",
     .type = TB_CONFIG_STRING,
     .field =
         TB_CONFIG_ENUM_AT(tb_worker_settings_t, connector_client_config_override_policy),
     .default_value = "All",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .one_of = override_policies,
     .documentation = "Whether connectors may override their Kafka clients' "
                      "properties with producer.override.*, consumer.override.* and "
                      "admin.override.* keys: All, None, or Allowlist (Connect 4.2, "
                      "KIP-1188: only the keys connector.client.config.override."
                      "allowlist names, none when it is empty). Connect's Principal "
                      "policy, deprecated in 4.2, is not offered."},
    {.name = "connector.client.config.override.allowlist",
     .type = TB_CONFIG_LIST,
     .field =
         TB_CONFIG_AT(tb_worker_settings_t, connector_client_config_override_allowlist),
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .documentation = "The client properties connectors may override (e.g. "
                      "acks,linger.ms), as Connect 4.2's Allowlist policy reads it. "
                      "With the All policy a non-empty list restricts overrides too, "
                      "and the worker warns at start (Connect ignores the list under "
                      "All; tributary read it so before 4.2 had the key). "
                      "bootstrap.servers is overridden only when named here."},
    {.name = "secrets.literal.allowed",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, secrets_literal_allowed),
     .default_value = "true",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .documentation = "Accept secrets (PASSWORD keys, sasl.password, sasl.jaas.config, "
                      "ssl.key.password, credential headers, ...) written literally, "
                      "as Connect does, instead of as ${env:NAME} or ${file:/path:key} "
                      "references. A literal secret is never shown or logged and never "
                      "stored as given: standalone, it is kept in the owner-only "
                      "<offset.storage.file.filename>.secrets file; distributed, "
                      "encrypted in the config topic under secrets.encryption.key "
                      "(without which a distributed worker refuses it). false refuses "
                      "every literal secret (tributary)."},
    {.name = "secrets.encryption.key",
     .type = TB_CONFIG_PASSWORD,
     .field = TB_CONFIG_AT(tb_worker_settings_t, secrets_encryption_key),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .documentation = "Distributed mode: the key that encrypts connectors' literal "
                      "secrets in the config topic (AES-256-GCM), the same on every "
                      "worker of the cluster: a ${file:/path:key} or ${env:NAME} "
                      "reference to the base64 of 32 random bytes (openssl rand -base64 "
                      "32), read at start. Unset, a distributed worker refuses literal "
                      "secrets; a worker with another key fails the tasks whose secrets "
                      "it cannot open (tributary)."},
    {.name = "connector.client.security.downgrade.allowed",
     .type = TB_CONFIG_BOOLEAN,
     .field =
         TB_CONFIG_AT(tb_worker_settings_t, connector_client_security_downgrade_allowed),
     .default_value = "false",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .documentation = "With the worker's clients on SSL or SASL_SSL, a connector's "
                      "<client>.override.* keys may not set a plain-text "
                      "security.protocol, enable.ssl.certificate.verification=false "
                      "or ssl.endpoint.identification.algorithm=none unless this is "
                      "true (tributary)."},
    {.name = "connector.producer.sharing.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, connector_producer_sharing_enabled),
     .default_value = "true",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .documentation = "At-least-once source tasks whose final producer properties are "
                      "equal (worker keys, producer.override.*, resolved secrets; "
                      "client.id aside) share one idempotent producer, with client.id "
                      "connector-producer-shared-<n>, instead of one each: an idle "
                      "connector then costs no producer threads or buffers of its own. "
                      "Exactly-once tasks and tasks of other properties keep their "
                      "own. They share its buffer (queue.buffering.max.*) and its "
                      "fatal errors; false gives every task its own (tributary)."},
    {.name = "core.dumps.enable",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, core_dumps_enable),
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Secrets",
     .documentation = "Let the worker process be core dumped and traced by debuggers of "
                      "its user. false (the default) marks it not dumpable "
                      "(prctl PR_SET_DUMPABLE 0, set before it reads anything): a "
                      "crash writes no core file, which would hold resolved secrets "
                      "(connectors' passwords, keys), no other process of its user "
                      "can attach to it, and its /proc/<pid>/ files (environ, mem, "
                      "fd, io) are readable by root only. Set true to debug a crash; "
                      "its core files then hold secrets (tributary)."},
    {.name = "config.providers",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_worker_settings_t, config_providers),
     .default_value = "file,env",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Secrets",
     .check = check_providers,
     .documentation = "The kinds of secret reference connectors may use: file "
                      "(${file:/path:key}) and env (${env:NAME}). Connect's default is "
                      "none; tributary's is both, limited by the two keys below and, "
                      "whatever they say, never reaching the worker's store, its "
                      "directory, another connector's entries of the secrets file, "
                      "or the worker's own files and variables (its properties file "
                      "and every file and variable its config names). The worker's "
                      "own file is not limited."},
    {.name = "config.providers.file.param.allowed.paths",
     .type = TB_CONFIG_LIST,
     .field =
         TB_CONFIG_AT(tb_worker_settings_t, config_providers_file_param_allowed_paths),
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Secrets",
     .documentation = "Files and directories ${file:} references of connectors may "
                      "read (symbolic links resolved); empty allows any but the "
                      "worker's data directory (the store's), as in Connect."},
    {.name = "config.providers.env.param.allowlist.pattern",
     .type = TB_CONFIG_STRING,
     .field =
         TB_CONFIG_AT(tb_worker_settings_t, config_providers_env_param_allowlist_pattern),
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
     .field = TB_CONFIG_AT(tb_worker_settings_t, file_allowed_dirs),
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Connectors",
     .documentation = "Directories the file connectors may read and write under "
                      "(symbolic links resolved, so none leads out); empty allows "
                      "any path, as Kafka Connect does, except that the directory of "
                      "offset.storage.file.filename (the store and its secrets "
                      "file) and the worker's own files (its properties file, the "
                      "files its config names) are never reachable, whatever this "
                      "says (tributary)."},
    {.name = "connectors.dir",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, connectors_dir),
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Connectors",
     .documentation = "Directory of connector files (*.json and *.properties, as on "
                      "the command line) applied at start and on SIGHUP: a connector "
                      "whose file is new is created, one whose file changed is "
                      "updated, an invalid file is logged by name and its connector "
                      "left as it is. Distributed, the leader applies it, also when "
                      "it becomes leader (tributary)."},
    {.name = "connectors.dir.prune",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, connectors_dir_prune),
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Connectors",
     .documentation = "With connectors.dir, delete each connector that came from a "
                      "file there (its config's tributary.connectors.dir.file names "
                      "it) whose file is gone; connectors created through the REST "
                      "API or on the command line are never deleted. Nothing is "
                      "deleted while the directory cannot be read or holds a file "
                      "that cannot be read (tributary)."},
    {.name = "http.sink.allowed.hosts",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_worker_settings_t, http_sink_allowed_hosts),
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Connectors",
     .documentation = "Hosts the HTTP sink may send to; empty allows any "
                      "(tributary)."},
    {.name = "exactly.once.source.support",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_ENUM_AT(tb_worker_settings_t, exactly_once_source_support),
     .default_value = "disabled",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Tasks",
     .one_of = eos_support_values,
     .documentation = "enabled lets source connectors ask for exactly-once delivery "
                      "(exactly.once.support=required) and runs requested ones so: "
                      "Kafka transactions holding the records and their offsets "
                      "(offset.storage.topic). Not available in dev mode."},
    {.name = "offset.flush.interval.ms",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_worker_settings_t, offset_flush_interval_ms),
     .default_value = "60000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Tasks",
     .range = &non_negative,
     .documentation = "How often tasks flush and record their offsets."},
    {.name = "topic.tracking.enable",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, topic_tracking_enable),
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .documentation = "Track the topics each connector uses, for "
                      "GET /connectors/{name}/topics; false answers those "
                      "requests 403, as Connect does."},
    {.name = "topic.tracking.allow.reset",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, topic_tracking_allow_reset),
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "REST",
     .documentation = "Allow PUT /connectors/{name}/topics/reset; false answers "
                      "it 403, as Connect does."},
    {.name = "group.id",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, group_id),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Distributed",
     .documentation = "The cluster this worker joins. Set, the worker runs distributed "
                      "(docs/OPERATIONS.md, \"Running a cluster\"): its store is the "
                      "three topics below instead of offset.storage.file.filename, and "
                      "connectors are created through the REST API only."},
    {.name = "internal.topics.automatic.creation.enable",
     .type = TB_CONFIG_BOOLEAN,
     .field =
         TB_CONFIG_AT(tb_worker_settings_t, internal_topics_automatic_creation_enable),
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .documentation = "Whether a distributed worker creates the internal topics "
                      "(config, offset and status storage, and tributary's "
                      "<group.id>.tributary-cluster) when they are missing. false "
                      "(Connect 4.4, KIP-1209): it creates none, and refuses to start "
                      "naming each one that does not exist. No effect on a standalone "
                      "worker, which has no internal topics."},
    {.name = "config.storage.topic",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, config_storage_topic),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Distributed",
     .documentation = "The compacted topic of one partition holding connector configs, "
                      "in Connect's format; required with group.id."},
    {.name = "config.storage.replication.factor",
     .type = TB_CONFIG_SHORT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, config_storage_replication_factor),
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &replication_range,
     .documentation = "Replication factor of config.storage.topic and of the "
                      "coordination topic when the worker creates them; -1: the "
                      "broker's default."},
    {.name = "offset.storage.topic",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, offset_storage_topic),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Distributed",
     .documentation = "The compacted topic holding source offsets; required with "
                      "group.id. Exactly-once sources write their offsets there in "
                      "their transactions; a standalone worker's default is "
                      "tributary-offsets, created when missing."},
    {.name = "offset.storage.partitions",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, offset_storage_partitions),
     .default_value = "25",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &at_least_one,
     .documentation = "Partitions of offset.storage.topic when the worker creates it."},
    {.name = "offset.storage.replication.factor",
     .type = TB_CONFIG_SHORT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, offset_storage_replication_factor),
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &replication_range,
     .documentation = "Replication factor of offset.storage.topic when the worker "
                      "creates it; -1: the broker's default, which a standalone worker "
                      "uses when this is not set."},
    {.name = "status.storage.topic",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, status_storage_topic),
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Distributed",
     .documentation = "The compacted topic holding connector and task statuses; "
                      "required with group.id."},
    {.name = "status.storage.partitions",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, status_storage_partitions),
     .default_value = "5",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &at_least_one,
     .documentation = "Partitions of status.storage.topic when the worker creates it."},
    {.name = "status.storage.replication.factor",
     .type = TB_CONFIG_SHORT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, status_storage_replication_factor),
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &replication_range,
     .documentation = "Replication factor of status.storage.topic when the worker "
                      "creates it; -1: the broker's default."},
    {.name = "session.timeout.ms",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, session_timeout_ms),
     .default_value = "10000",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Distributed",
     .range = &at_least_one,
     .documentation = "How long the group's coordinator waits for a silent worker "
                      "before it counts it as gone."},
    {.name = "heartbeat.interval.ms",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, heartbeat_interval_ms),
     .default_value = "3000",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Distributed",
     .range = &at_least_one,
     .documentation = "How often a worker tells the group's coordinator it lives."},
    {.name = "scheduled.rebalance.max.delay.ms",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, scheduled_rebalance_max_delay_ms),
     .default_value = "300000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &non_negative,
     .documentation = "How long the leader holds back a departed worker's connectors "
                      "and tasks for it before it gives them to the others."},
    {.name = "inter.worker.key.generation.algorithm",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, inter_worker_key_generation_algorithm),
     .default_value = "HmacSHA256",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .one_of = mac_algorithms,
     .documentation = "The algorithm the leader names the session key after, which "
                      "signs the requests workers forward to one another; its digest's "
                      "size is the key's default size."},
    {.name = "inter.worker.key.size",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_worker_settings_t, inter_worker_key_size),
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .check = check_key_bits,
     .documentation = "Bits of the session key the leader draws; unset: the size of "
                      "inter.worker.key.generation.algorithm's digest."},
    {.name = "inter.worker.key.ttl.ms",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_worker_settings_t, inter_worker_key_ttl_ms),
     .default_value = "3600000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .range = &at_least_one,
     .documentation = "How old a session key gets before the leader writes a new one "
                      "to config.storage.topic."},
    {.name = "inter.worker.signature.algorithm",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, inter_worker_signature_algorithm),
     .default_value = "HmacSHA256",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .one_of = mac_algorithms,
     .documentation = "The HMAC this worker signs the requests it forwards with "
                      "(X-Connect-Authorization over the method, path, query and "
                      "body); one of inter.worker.verification.algorithms."},
    {.name = "inter.worker.verification.algorithms",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_worker_settings_t, inter_worker_verification_algorithms),
     .default_value = "HmacSHA256",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Distributed",
     .check = check_mac_list,
     .documentation = "The HMACs this worker accepts on a forwarded request; a "
                      "forwarded request signed otherwise, or not signed, is refused "
                      "with 403."},
    {.name = "metrics.milliseconds.names",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_worker_settings_t, metrics_milliseconds_names),
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Metrics",
     .documentation = "Also serve each Connect time that /metrics gives in seconds "
                      "(..._time_seconds, ..._time_since_last_rebalance_seconds, "
                      "..._start_time_seconds, and MirrorMaker 2's "
                      "..._record_age_seconds, ..._latency_seconds and their _max, "
                      "_min, _avg) under Connect's own _ms name, in ms, "
                      "for dashboards that query those names (Confluent's). Off by "
                      "default: promtool's lint refuses an abbreviated unit in a "
                      "metric name."},
    {.name = "log.format",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_ENUM_AT(tb_worker_settings_t, log_format),
     .default_value = "text",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Logging",
     .one_of = log_formats,
     .documentation = "Log lines as plain text or as one JSON object each."},
    {.name = "log.level",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_worker_settings_t, log_level),
     .default_value = "INFO",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Logging",
     .one_of = log_levels,
     .documentation = "Level of the root logger at start; change it at run time "
                      "through /admin/loggers."},
};

const tb_config_table_t tb_worker_config_table = TB_CONFIG_TABLE("Worker", worker_keys);

#define WORKER "WorkerConfig"
#define STANDALONE "StandaloneConfig"
#define DISTRIBUTED "DistributedConfig"
#define GROUP_CLIENT                                                                     \
    "Connect's distributed worker's own group client; unused, as in "                    \
    "connect-standalone (set client keys under producer., consumer. or admin.)"
#define DISTRIBUTED_ONLY "a distributed worker's key tributary does not implement yet"
#define METRICS "tributary serves its metrics at /metrics in Prometheus format"
#define BUILT_IN "tributary's plugins are built in; nothing is loaded"

const tb_connect_key_t tb_connect_worker_keys[] = {
    {"bootstrap.servers", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"listeners", WORKER, TB_CONNECT_KEY_IMPLEMENTED, "default binds loopback"},
    {"rest.advertised.host.name", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"rest.advertised.port", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"rest.advertised.listener", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"admin.listeners", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"access.control.allow.origin", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"access.control.allow.methods", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"response.http.headers.config", WORKER, TB_CONNECT_KEY_REFUSED,
     "tributary cannot add response headers yet"},
    {"rest.extension.classes", WORKER, TB_CONNECT_KEY_REFUSED,
     "Java REST extensions cannot run in tributary; rest.auth authenticates "
     "requests"},
    {"ssl.client.auth", WORKER, TB_CONNECT_KEY_REFUSED,
     "Connect's REST listener key: use listeners.https.ssl.client.auth "
     "(tributary's ssl.* keys configure the Kafka clients)"},
    {"ssl.*", WORKER, TB_CONNECT_KEY_CLIENT,
     "Connect's REST listener TLS; in tributary librdkafka properties of the "
     "Kafka clients (the REST listener's are listeners.https.ssl.*)"},
    {"security.protocol", DISTRIBUTED, TB_CONNECT_KEY_CLIENT, ""},
    {"sasl.*", DISTRIBUTED, TB_CONNECT_KEY_CLIENT, ""},
    {"producer.*", WORKER, TB_CONNECT_KEY_CLIENT, "source tasks' producers"},
    {"consumer.*", WORKER, TB_CONNECT_KEY_CLIENT, "sink tasks' consumers"},
    {"admin.*", WORKER, TB_CONNECT_KEY_CLIENT, "admin clients"},
    {"key.converter", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "defaults to JsonConverter; Connect requires it"},
    {"value.converter", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "defaults to JsonConverter; Connect requires it"},
    {"key.converter.*", WORKER, TB_CONNECT_KEY_IMPLEMENTED, "the converter's settings"},
    {"value.converter.*", WORKER, TB_CONNECT_KEY_IMPLEMENTED, "the converter's settings"},
    {"header.converter", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "SimpleHeaderConverter, StringConverter or ByteArrayConverter, validated; "
     "header values reach plugins as their bytes under each"},
    {"header.converter.*", WORKER, TB_CONNECT_KEY_NOOP,
     "neither header converter has settings tributary reads"},
    {"offset.storage.file.filename", STANDALONE, TB_CONNECT_KEY_IMPLEMENTED,
     "an SQLite store holding everything"},
    {"offset.flush.interval.ms", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"offset.flush.timeout.ms", WORKER, TB_CONNECT_KEY_NOOP,
     "offsets are recorded in the store when flushed; group commits are best "
     "effort"},
    {"task.shutdown.graceful.timeout.ms", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"connector.client.config.override.policy", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "All, None or Allowlist (4.2); Principal is refused"},
    {"topic.creation.enable", WORKER, TB_CONNECT_KEY_NOOP,
     "sources create no topics (the broker's auto-creation applies)"},
    {"topic.tracking.enable", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"topic.tracking.allow.reset", WORKER, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"exactly.once.source.support", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED,
     "disabled or enabled, in standalone mode too (no preparing)"},
    {"plugin.path", WORKER, TB_CONNECT_KEY_NOOP, BUILT_IN},
    {"plugin.discovery", WORKER, TB_CONNECT_KEY_NOOP, BUILT_IN},
    {"config.providers", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "file and env, the built-in ${file:path:key} and ${env:NAME} references"},
    {"config.providers.file.param.allowed.paths", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "the worker's store and data directory stay out of reach whatever it says"},
    {"config.providers.env.param.allowlist.pattern", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "TRIBUTARY_* variables stay out of reach whatever it says"},
    {"config.providers.*", WORKER, TB_CONNECT_KEY_NOOP, "no provider class is loaded"},
    {"metric.reporters", WORKER, TB_CONNECT_KEY_NOOP, METRICS},
    {"auto.include.jmx.reporter", WORKER, TB_CONNECT_KEY_NOOP,
     "removed in Connect 4.0 (KIP-830), whose workers ignore it with a warning, as "
     "tributary does; " METRICS},
    {"metrics.num.samples", WORKER, TB_CONNECT_KEY_NOOP, METRICS},
    {"metrics.recording.level", WORKER, TB_CONNECT_KEY_NOOP, METRICS},
    {"metrics.sample.window.ms", WORKER, TB_CONNECT_KEY_NOOP, METRICS},
    {"client.dns.lookup", WORKER, TB_CONNECT_KEY_NOOP,
     "librdkafka tries every address a broker name resolves to"},
    {"client.id", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"connections.max.idle.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"metadata.max.age.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"receive.buffer.bytes", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"send.buffer.bytes", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"reconnect.backoff.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"reconnect.backoff.max.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"request.timeout.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"retry.backoff.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"retry.backoff.max.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP, GROUP_CLIENT},
    {"socket.connection.setup.timeout.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP,
     GROUP_CLIENT},
    {"socket.connection.setup.timeout.max.ms", DISTRIBUTED, TB_CONNECT_KEY_NOOP,
     GROUP_CLIENT},
    {"group.id", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"internal.topics.automatic.creation.enable", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED,
     "Connect 4.4 (KIP-1209)"},
    {"metadata.recovery.strategy", WORKER, TB_CONNECT_KEY_IMPLEMENTED,
     "rebootstrap, as librdkafka before 2.10 can: none is refused"},
    {"config.storage.topic", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"config.storage.replication.factor", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"offset.storage.topic", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"offset.storage.partitions", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"offset.storage.replication.factor", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"status.storage.topic", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"status.storage.partitions", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"status.storage.replication.factor", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"connect.protocol", DISTRIBUTED, TB_CONNECT_KEY_DISTRIBUTED, DISTRIBUTED_ONLY},
    {"session.timeout.ms", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"heartbeat.interval.ms", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"rebalance.timeout.ms", DISTRIBUTED, TB_CONNECT_KEY_DISTRIBUTED, DISTRIBUTED_ONLY},
    {"scheduled.rebalance.max.delay.ms", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"worker.sync.timeout.ms", DISTRIBUTED, TB_CONNECT_KEY_DISTRIBUTED, DISTRIBUTED_ONLY},
    {"worker.unsync.backoff.ms", DISTRIBUTED, TB_CONNECT_KEY_DISTRIBUTED,
     DISTRIBUTED_ONLY},
    {"inter.worker.key.generation.algorithm", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED,
     ""},
    {"inter.worker.key.size", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"inter.worker.key.ttl.ms", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
    {"inter.worker.signature.algorithm", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED,
     "signs the method, path, query and body, not the body only"},
    {"inter.worker.verification.algorithms", DISTRIBUTED, TB_CONNECT_KEY_IMPLEMENTED, ""},
};

const size_t tb_connect_worker_key_count =
    sizeof(tb_connect_worker_keys) / sizeof(tb_connect_worker_keys[0]);

/* The length of a prefix row's prefix ("sasl." of "sasl.*"), else 0. */
static size_t prefix_length(const char *name)
{
    size_t len = strlen(name);
    return len >= 2 && strcmp(name + len - 2, ".*") == 0 ? len - 1 : 0;
}

const tb_connect_key_t *tb_worker_connect_key_find(const char *key)
{
    const tb_connect_key_t *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < tb_connect_worker_key_count; i++) {
        const tb_connect_key_t *row = &tb_connect_worker_keys[i];
        size_t prefix = prefix_length(row->name);
        if (prefix == 0 && strcmp(row->name, key) == 0) {
            return row;
        }
        if (prefix > best_len && strncmp(row->name, key, prefix) == 0) {
            best = row;
            best_len = prefix;
        }
    }
    return best;
}

const char *tb_connect_key_decision_name(tb_connect_key_decision_t decision)
{
    static const char *const names[] = {
        [TB_CONNECT_KEY_IMPLEMENTED] = "implemented",
        [TB_CONNECT_KEY_CLIENT] = "Kafka client key",
        [TB_CONNECT_KEY_NOOP] = "no effect",
        [TB_CONNECT_KEY_DISTRIBUTED] = "refused (distributed)",
        [TB_CONNECT_KEY_REFUSED] = "refused",
    };
    return names[decision];
}

/* Appends printf-style text to *out (grown with realloc). */
static int append_format(char **out, const char *fmt, ...)
{
    char *piece = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&piece, fmt, ap);
    va_end(ap);
    size_t len = *out != NULL ? strlen(*out) : 0;
    char *grown = n < 0 ? NULL : realloc(*out, len + (size_t)n + 1);
    if (grown != NULL) {
        memcpy(grown + len, piece, (size_t)n + 1);
        *out = grown;
    }
    free(piece);
    return grown != NULL ? 0 : -1;
}

int tb_worker_connect_keys_markdown(char **out)
{
    int rc = append_format(out, "## Kafka Connect worker keys\n\n"
                                "Every key of Kafka Connect 3.9's WorkerConfig, "
                                "StandaloneConfig and DistributedConfig, and what "
                                "tributary does with it. A key with no effect is logged "
                                "at start; a refused key stops the worker with the "
                                "reason.\n\n"
                                "| Key | Connect | tributary | Note |\n"
                                "|---|---|---|---|\n");
    for (size_t i = 0; i < tb_connect_worker_key_count && rc == 0; i++) {
        const tb_connect_key_t *row = &tb_connect_worker_keys[i];
        rc = append_format(out, "| `%s` | %s | %s | %s |\n", row->name, row->defined_by,
                           tb_connect_key_decision_name(row->decision), row->note);
    }
    return rc == 0 ? append_format(out, "\n") : rc;
}

/* Appends ", key" (or "key" first) to a list of key names. */
static void list_add(char *list, size_t size, const char *key)
{
    size_t len = strlen(list);
    snprintf(list + len, size - len, "%s%s", len > 0 ? ", " : "", key);
}

int tb_worker_config_check_connect_keys(const json_t *raw)
{
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    char distributed[1024] = "";
    int rc = 0;
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)raw, key, value) {
        const tb_connect_key_t *row = tb_worker_connect_key_find(key);
        if (tb_config_find(tables, 1, key) != NULL) {
            continue;
        }
        if (row == NULL) {
            TB_LOG(TB_LOG_WARN, "tributary.worker",
                   "worker key %s is ignored: neither Kafka Connect nor tributary "
                   "defines it",
                   key);
        } else if (row->decision == TB_CONNECT_KEY_NOOP) {
            TB_LOG(TB_LOG_WARN, "tributary.worker",
                   "worker key %s has no effect in tributary: %s", key, row->note);
        } else if (row->decision == TB_CONNECT_KEY_DISTRIBUTED) {
            list_add(distributed, sizeof(distributed), key);
        } else if (row->decision == TB_CONNECT_KEY_REFUSED) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker",
                   "refusing to start: worker key %s is not supported: %s", key,
                   row->note);
            rc = -1;
        }
    }
    if (distributed[0] != '\0') {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: the worker config sets Kafka Connect's distributed "
               "worker keys (%s), which tributary's distributed mode does not "
               "implement yet; remove them (docs/configuration.md lists the "
               "distributed keys it implements)",
               distributed);
        rc = -1;
    }
    return rc;
}

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
    json_t *props = json_object();
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)raw, key, value) {
        const tb_connect_key_t *row = tb_worker_connect_key_find(key);
        bool take = strcmp(key, "bootstrap.servers") == 0 ||
                    (row != NULL && row->decision == TB_CONNECT_KEY_CLIENT);
        /* the worker's own keys (admin.listeners, ...) are not client keys,
         * except the one both share */
        const tb_config_table_t *tables[] = {&tb_worker_config_table};
        bool worker_key = tb_config_find(tables, 1, key) != NULL &&
                          strcmp(key, "bootstrap.servers") != 0;
        if (take && json_is_string(value) && !worker_key) {
            json_object_set(props, key, value);
        }
    }
    return props;
}

json_t *tb_worker_config_converters(const json_t *raw,
                                    const tb_worker_settings_t *settings)
{
    static const char *const prefixes[] = {"key.converter.", "value.converter.",
                                           "header.converter.", NULL};
    json_t *out = json_pack("{s:s, s:s, s:s}", "key.converter", settings->key_converter,
                            "value.converter", settings->value_converter,
                            "header.converter", settings->header_converter);
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

/* True when key names a file: it ends in one of the suffixes (the store,
 * offset.storage.file.filename, has rules of its own). */
static bool names_file(const char *key)
{
    static const char *const suffixes[] = {".location", ".file", ".keytab", NULL};
    size_t len = strlen(key);
    for (size_t i = 0; suffixes[i] != NULL; i++) {
        size_t n = strlen(suffixes[i]);
        if (len > n && strcmp(key + len - n, suffixes[i]) == 0) {
            return true;
        }
    }
    return false;
}

tb_secret_deny_t *tb_worker_config_deny(const json_t *raw, const char *worker_file)
{
    tb_secret_deny_t *deny = tb_secret_deny_create();
    int rc = deny != NULL && worker_file != NULL
                 ? tb_secret_deny_add_file(deny, worker_file)
                 : 0;
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)raw, key, value) {
        const char *text = json_string_value(value);
        if (deny == NULL || rc != 0 || text == NULL) {
            continue;
        }
        rc = tb_secret_deny_add_references(deny, text);
        if (rc == 0 && names_file(key) && text[0] != '\0' &&
            !tb_secret_is_reference(text)) {
            rc = tb_secret_deny_add_file(deny, text);
        }
    }
    if (rc != 0) {
        tb_secret_deny_destroy(deny);
        deny = NULL;
    }
    return deny;
}

json_t *tb_worker_config_load(const char *path, bool dev, char *const *envp,
                              json_t **raw_out, tb_worker_settings_t *settings,
                              json_t *errors)
{
    char errstr[512];
    json_t *raw =
        path != NULL ? tb_props_load_file(path, errstr, sizeof(errstr)) : json_object();
    *raw_out = raw;
    if (raw == NULL) {
        json_array_append_new(errors, json_string(errstr));
        return NULL;
    }
    tb_worker_config_apply_env(raw, envp);
    if (dev) {
        json_object_set_new(raw, "dev", json_string("true"));
    }
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    json_t *problems = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, problems);
    const char *key;
    json_t *list;
    size_t i;
    json_t *message;
    json_object_foreach (problems, key, list) {
        json_array_foreach (list, i, message) {
            json_array_append(errors, message);
        }
    }
    if (tb_config_error_count(problems) == 0 &&
        tb_config_fill(&tb_worker_config_table, values, settings) != 0) {
        tb_config_error_add(problems, "Worker", "a column does not fit its key's type");
        json_array_append_new(errors,
                              json_string("a column does not fit its key's type"));
    }
    if (tb_config_error_count(problems) > 0) {
        json_decref(values);
        values = NULL;
    }
    json_decref(problems);
    return values;
}

tb_secret_policy_t tb_worker_config_secret_policy(const tb_worker_settings_t *settings,
                                                  const char *store_path)
{
    bool file = false, env = false;
    size_t i;
    json_t *name;
    json_array_foreach ((json_t *)settings->config_providers, i, name) {
        file = file || strcmp(json_string_value(name), "file") == 0;
        env = env || strcmp(json_string_value(name), "env") == 0;
    }
    return (tb_secret_policy_t){
        .file_enabled = file,
        .env_enabled = env,
        .allowed_paths = settings->config_providers_file_param_allowed_paths,
        .env_pattern = settings->config_providers_env_param_allowlist_pattern,
        .store_path = store_path,
    };
}
