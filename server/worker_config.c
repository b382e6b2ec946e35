#include "server/tb_worker_config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ENV_PREFIX "TRIBUTARY_"

static const char *const log_formats[] = {"text", "json", NULL};
static const char *const log_levels[] = {"OFF",  "FATAL", "ERROR", "WARN",
                                         "INFO", "DEBUG", "TRACE", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t port_range = {
    .has_min = true, .min = 0, .has_max = true, .max = 65535};

static const tb_config_def_t worker_keys[] = {
    {.name = "bootstrap.servers",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Kafka",
     .documentation = "Kafka brokers to connect to (host:port,...). When unset, "
                      "tributary runs in dev mode with an in-process, in-memory "
                      "Kafka cluster (librdkafka's mock cluster)."},
    {.name = "dev",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Kafka",
     .documentation = "Run against an in-process, in-memory Kafka cluster even "
                      "if bootstrap.servers is set. For development only: "
                      "nothing survives a restart."},
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
    static const char *const client_prefixes[] = {"security.protocol", "sasl.", "ssl.",
                                                  NULL};
    json_t *props = json_object();
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)raw, key, value) {
        bool take = strcmp(key, "bootstrap.servers") == 0;
        for (size_t i = 0; !take && client_prefixes[i] != NULL; i++) {
            take = strncmp(key, client_prefixes[i], strlen(client_prefixes[i])) == 0;
        }
        if (take && json_is_string(value)) {
            json_object_set(props, key, value);
        }
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
