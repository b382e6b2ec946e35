#include "connectors/runtime/config/tb_connector_config.h"

#include <regex.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/kafka/tb_client_props.h"
#include "connectors/runtime/config/tb_transforms.h"
#include "connectors/runtime/source/eos/tb_progress_marker.h"
#include "core/tb_secret.h"
#include "core/tb_secret_seal.h"
#include "core/tb_version_range.h"
#include "tb_version.h"

static const char *const tolerances[] = {"none", "all", NULL};
static const char *const reload_actions[] = {"none", "restart", NULL};
static const char *const eos_support[] = {"requested", "required", NULL};
static const char *const boundaries[] = {"poll", "interval", "connector", NULL};
static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t retry_timeout = {.has_min = true, .min = -1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t transaction_records = {
    .has_min = true, .min = 1, .has_max = true, .max = 512};

/* A connector name: non-empty, without ISO control characters. */
static int check_name(const json_t *value, char *reason, size_t size)
{
    const char *name = json_string_value(value);
    if (name[0] == '\0') {
        snprintf(reason, size, "String may not be empty");
        return -1;
    }
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        if (*c < 0x20 || *c == 0x7f) {
            snprintf(reason, size, "String may not contain control sequences");
            return -1;
        }
    }
    return 0;
}

static int check_regex(const json_t *value, char *reason, size_t size)
{
    regex_t re;
    const char *text = json_string_value(value);
    if (text[0] == '\0') {
        return 0;
    }
    int rc = regcomp(&re, text, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, &re, reason, size);
        return -1;
    }
    regfree(&re);
    return 0;
}

/* A converter class tributary has (Connect's class name or alias). */
static int check_converter(const json_t *value, char *reason, size_t size)
{
    const char *name = json_string_value(value);
    if (name[0] != '\0' && tb_converter_canonical_name(name) == NULL) {
        snprintf(reason, size, "Class %s could not be found.", name);
        return -1;
    }
    return 0;
}

/* A *.plugin.version key (KIP-891): a Maven version range, as Connect 4.1
 * reads it; whether the plugin's version lies in it is checked with the
 * plugin (check_plugin_versions). */
static int check_version_range(const json_t *value, char *reason, size_t size)
{
    return tb_version_range_match(json_string_value(value), "0", reason, size) ==
                   TB_VERSION_RANGE_MALFORMED
               ? -1
               : 0;
}

/* topic.creation.groups: tributary creates no topics, so a group that
 * would is refused rather than ignored. */
static int check_no_topic_creation(const json_t *value, char *reason, size_t size)
{
    if (json_array_size(value) == 0) {
        return 0;
    }
    snprintf(reason, size,
             "tributary creates no topics for source connectors yet: create the "
             "topic first, or let the broker create it");
    return -1;
}

#define COMMON "Common"
#define ERRORS "Error Handling"

static const tb_config_def_t common_keys[] = {
    {.name = "name",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = COMMON,
     .order = 1,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Connector name",
     .check = check_name,
     .documentation = "Globally unique name to use for this connector."},
    {.name = "connector.class",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = COMMON,
     .order = 2,
     .width = TB_WIDTH_LONG,
     .display_name = "Connector class",
     .documentation = "Name or alias of the connector class, e.g. "
                      "org.apache.kafka.connect.file.FileStreamSinkConnector, "
                      "FileStreamSink or FileStreamSinkConnector."},
    {.name = "connector.plugin.version",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = COMMON,
     .order = 3,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Connector version",
     .check = check_version_range,
     .documentation = "Version of the connector plugin (KIP-891, Connect 4.1): a Maven "
                      "version range such as 0.1.0 (exactly) or [0.1,1.0), or latest. "
                      "tributary's plugins are built in, with one version each, the one "
                      "GET /connector-plugins lists (the default): a range without it is "
                      "refused, naming this key."},
    {.name = "tasks.max",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_connector_settings_t, tasks_max),
     .default_value = "1",
     .importance = TB_IMPORTANCE_HIGH,
     .group = COMMON,
     .order = 4,
     .width = TB_WIDTH_SHORT,
     .display_name = "Tasks max",
     .range = &at_least_one,
     .documentation = "Maximum number of tasks to use for this connector."},
    {.name = "tasks.max.enforce",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_connector_settings_t, tasks_max_enforce),
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 5,
     .width = TB_WIDTH_SHORT,
     .display_name = "Enforce tasks max",
     .documentation = "(Deprecated, as in Connect) true: a connector that splits "
                      "into more task configs than tasks.max fails, naming the "
                      "counts. false: the extra tasks run, and a warning says "
                      "the connector exceeded tasks.max."},
    {.name = "key.converter",
     .type = TB_CONFIG_CLASS,
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 6,
     .width = TB_WIDTH_SHORT,
     .display_name = "Key converter class",
     .check = check_converter,
     .documentation = "Converter of record keys; null means the worker's "
                      "key.converter."},
    {.name = "key.converter.plugin.version",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 7,
     .width = TB_WIDTH_SHORT,
     .display_name = "Key converter version",
     .check = check_version_range,
     .documentation = "Version of the key converter (KIP-891, Connect 4.1): a Maven "
                      "version range such as 3.9.0 (exactly) or [3.0,4.0), or latest. "
                      "tributary's converters are built in, with one version each: a "
                      "range without it is refused, naming this key."},
    {.name = "value.converter",
     .type = TB_CONFIG_CLASS,
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 8,
     .width = TB_WIDTH_SHORT,
     .display_name = "Value converter class",
     .check = check_converter,
     .documentation = "Converter of record values; null means the worker's "
                      "value.converter."},
    {.name = "value.converter.plugin.version",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 9,
     .width = TB_WIDTH_SHORT,
     .display_name = "Value converter version",
     .check = check_version_range,
     .documentation = "Version of the value converter (KIP-891, Connect 4.1): a Maven "
                      "version range such as 3.9.0 (exactly) or [3.0,4.0), or latest. "
                      "tributary's converters are built in, with one version each: a "
                      "range without it is refused, naming this key."},
    {.name = "header.converter",
     .type = TB_CONFIG_CLASS,
     .field = TB_CONFIG_AT(tb_connector_settings_t, header_converter),
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 10,
     .width = TB_WIDTH_SHORT,
     .display_name = "Header converter class",
     .check = tb_header_converter_check,
     .documentation = "Converter of record headers; null means the worker's "
                      "header.converter. "
                      "org.apache.kafka.connect.storage.SimpleHeaderConverter, "
                      "org.apache.kafka.connect.storage.StringConverter or "
                      "org.apache.kafka.connect.converters.ByteArrayConverter (or "
                      "their short names); any other class is refused. tributary's "
                      "plugins read and write header values as text, so all three "
                      "convert them alike: the HTTP sink writes each value as a JSON "
                      "string, SimpleHeaderConverter's inferred types reach no plugin, "
                      "and the MirrorMaker 2 connectors copy header values as they "
                      "are under each."},
    {.name = "header.converter.plugin.version",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 11,
     .width = TB_WIDTH_SHORT,
     .display_name = "Header converter version",
     .check = check_version_range,
     .documentation = "Version of the header converter (KIP-891, Connect 4.1): a Maven "
                      "version range such as 3.9.0 (exactly) or [3.0,4.0), or latest. "
                      "tributary's converters are built in, with one version each: a "
                      "range without it is refused, naming this key."},
    {.name = "config.action.reload",
     .type = TB_CONFIG_STRING,
     .default_value = "restart",
     .importance = TB_IMPORTANCE_LOW,
     .group = COMMON,
     .order = 14,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Reload Action",
     .one_of = reload_actions,
     .documentation = "What to do when a referenced secret changes: none or "
                      "restart. tributary does not watch referenced secrets: it "
                      "resolves each reference when a task starts, and with restart "
                      "a reload of the worker (SIGHUP or POST /admin/reload) "
                      "restarts each task whose secrets changed since it started; "
                      "otherwise a changed secret takes effect at the task's next "
                      "start (a restart through the REST API, or the automatic "
                      "restart of a failed task). With restart, a connector that "
                      "references secrets logs this once when its tasks start."},
    {.name = "transforms",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_connector_settings_t, transforms),
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Transforms",
     .order = 12, /* Connect numbers it on from Common's keys */
     .width = TB_WIDTH_LONG,
     .display_name = "Transforms",
     .documentation = "Aliases of the single message transforms applied to each "
                      "record, in order; transforms.<alias>.type names each one's "
                      "class. tributary has no transform classes yet, so a chain is "
                      "refused naming the class it cannot find."},
    {.name = "predicates",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_connector_settings_t, predicates),
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Predicates",
     .order = 13, /* as transforms */
     .width = TB_WIDTH_LONG,
     .display_name = "Predicates",
     .documentation = "Aliases of the predicates that transforms may be made "
                      "conditional on; predicates.<alias>.type names each one's "
                      "class (none exists in tributary yet)."},
    {.name = "errors.retry.timeout",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_connector_settings_t, errors_retry_timeout),
     .default_value = "0",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 1,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Retry Timeout for Errors",
     .range = &retry_timeout,
     .documentation = "How long an operation that failed for a reason that may "
                      "pass is retried, in ms, in every stage: a sink's put and "
                      "flush, and the key and value converters of sinks and sources "
                      "(a schema registry that does not answer); 0 means no "
                      "retries, -1 retries forever. Then errors.tolerance decides."},
    {.name = "errors.retry.delay.max.ms",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_connector_settings_t, errors_retry_delay_max_ms),
     .default_value = "60000",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 2,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Maximum Delay Between Retries for Errors",
     .range = &non_negative,
     .documentation = "The longest wait between two retries, in ms."},
    {.name = "errors.tolerance",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_ENUM_AT(tb_connector_settings_t, errors_tolerance),
     .default_value = "none",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 3,
     .width = TB_WIDTH_SHORT,
     .display_name = "Error Tolerance",
     .one_of = tolerances,
     .documentation = "none: an error fails the task. all: the record is "
                      "skipped, counted, logged, and sent to the dead letter "
                      "queue when one is configured."},
    {.name = "errors.log.enable",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_connector_settings_t, errors_log_enable),
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 4,
     .width = TB_WIDTH_SHORT,
     .display_name = "Log Errors",
     .documentation = "Log each tolerated error with its context."},
    {.name = "errors.log.include.messages",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_connector_settings_t, errors_log_include_messages),
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 5,
     .width = TB_WIDTH_SHORT,
     .display_name = "Log Error Details",
     .documentation = "With errors.log.enable, a sink's log line of a failed "
                      "record shows its key and value (quoted, bytes outside "
                      "printable ASCII as \\xNN, the first 256 bytes of each) "
                      "after its topic, partition and offset; false: only those "
                      "coordinates. Keys and values may hold personal data, hence "
                      "the default."},
    {.name = "errors.deadletterqueue.topic.name",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, errors_deadletterqueue_topic_name),
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 6,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Dead Letter Queue Topic Name",
     .documentation = "Topic that receives records that failed, with "
                      "errors.tolerance=all: a sink's as they were read, a "
                      "source's as Kafka refused them (stage KAFKA_PRODUCE; "
                      "Connect has no source dead letter queue). Empty: no dead "
                      "letter queue."},
    {.name = "errors.deadletterqueue.topic.replication.factor",
     .type = TB_CONFIG_SHORT,
     .field = TB_CONFIG_AT(tb_connector_settings_t,
                           errors_deadletterqueue_topic_replication_factor),
     .default_value = "3",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 7,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Dead Letter Queue Topic Replication Factor",
     .documentation = "Replication factor of the dead letter queue topic, which "
                      "a task creates at start (one partition) unless it exists; "
                      "-1 means the broker's default.replication.factor. As in "
                      "Connect, the default 3 fails the task on a cluster of fewer "
                      "than 3 brokers, with the broker's reason: set 1 there. A "
                      "topic that exists is used as it is. Dev mode's mock cluster "
                      "creates the topic at its first record instead."},
    {.name = "errors.deadletterqueue.context.headers.enable",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_connector_settings_t,
                           errors_deadletterqueue_context_headers_enable),
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = ERRORS,
     .order = 8,
     .width = TB_WIDTH_MEDIUM,
     .display_name = "Enable Error Context Headers",
     .documentation = "Add the __connect.errors.* headers to dead letter "
                      "queue records."},
};

static const tb_config_def_t sink_keys[] = {
    {.name = "topics",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_connector_settings_t, topics),
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = COMMON,
     .order = 4,
     .width = TB_WIDTH_LONG,
     .display_name = "Topics",
     .documentation = "Topics to consume; exactly one of topics and "
                      "topics.regex must be set."},
    {.name = "topics.regex",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, topics_regex),
     .default_value = "",
     .importance = TB_IMPORTANCE_HIGH,
     .group = COMMON,
     .order = 4,
     .width = TB_WIDTH_LONG,
     .display_name = "Topics regex",
     .check = check_regex,
     .documentation = "POSIX extended regular expression of topics to consume: a "
                      "topic is read when its whole name matches, as in Kafka; "
                      "topics created later are picked up at the consumer's "
                      "metadata refresh (topic.metadata.refresh.interval.ms)."},
};

static const char *const write_modes[] = {"append", "upsert", NULL};

static const tb_config_def_t source_keys[] = {
    {.name = "write.mode",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, write_mode),
     .default_value = "append",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Records",
     .order = 1,
     .one_of = write_modes,
     .documentation = "append writes records as the plugin makes them. upsert needs "
                      "JSON object values: the primary.key fields become the key, "
                      "__row_kind=delete writes a tombstone, update_before writes "
                      "nothing, insert and update_after write the row without "
                      "__row_kind (tributary)."},
    {.name = "primary.key",
     .type = TB_CONFIG_LIST,
     .field = TB_CONFIG_AT(tb_connector_settings_t, primary_key),
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Records",
     .order = 2,
     .documentation = "Fields of the value that make the record key in upsert mode "
                      "(tributary)."},
    {.name = "message.id.header",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, message_id_header),
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Records",
     .order = 3,
     .documentation = "When set, each record carries a header of this name whose value "
                      "depends only on the record's source partition and offset, so a "
                      "record written again after a crash keeps its id and consumers "
                      "can drop the duplicate (tributary)."},
    {.name = "exactly.once.support",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, exactly_once_support),
     .default_value = "requested",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Exactly Once Support",
     .order = 1,
     .width = TB_WIDTH_SHORT,
     .one_of = eos_support,
     .documentation = "requested: the tasks run in Kafka transactions when the "
                      "worker has exactly.once.source.support=enabled (and a real "
                      "cluster, not dev mode), else at-least-once. required: the "
                      "connector is refused where they cannot."},
    {.name = "transaction.boundary",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, transaction_boundary),
     .default_value = "poll",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Exactly Once Support",
     .order = 2,
     .width = TB_WIDTH_SHORT,
     .one_of = boundaries,
     .documentation = "Where exactly-once transactions end: poll, interval or "
                      "connector."},
    {.name = "transaction.boundary.interval.ms",
     .type = TB_CONFIG_LONG,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Exactly Once Support",
     .order = 3,
     .width = TB_WIDTH_SHORT,
     .range = &non_negative,
     .documentation = "Transaction length with transaction.boundary=interval; "
                      "null means offset.flush.interval.ms."},
    {.name = "offsets.storage.topic",
     .type = TB_CONFIG_STRING,
     .field = TB_CONFIG_AT(tb_connector_settings_t, offsets_storage_topic),
     .importance = TB_IMPORTANCE_LOW,
     .group = "Exactly Once Support",
     .order = 4,
     .width = TB_WIDTH_LONG,
     .documentation = "The offsets topic of this connector's exactly-once tasks, "
                      "created (compacted) when missing; empty: the worker's "
                      "offset.storage.topic. At-least-once tasks keep their offsets "
                      "in the worker's store."},
    {.name = "topic.creation.groups",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Topic Creation",
     .order = 1,
     .width = TB_WIDTH_LONG,
     .check = check_no_topic_creation,
     .documentation = "Connect's topic creation groups; refused when set: "
                      "tributary creates no topics for sources yet."},
    {.name = "exactly.once.transaction.max.records",
     .type = TB_CONFIG_INT,
     .field = TB_CONFIG_AT(tb_connector_settings_t, exactly_once_transaction_max_records),
     .default_value = "512",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Exactly Once Support",
     .order = 4,
     .range = &transaction_records,
     .documentation = "Most records in one transaction (tributary)."},
    {.name = "exactly.once.transaction.max.bytes",
     .type = TB_CONFIG_LONG,
     .field = TB_CONFIG_AT(tb_connector_settings_t, exactly_once_transaction_max_bytes),
     .default_value = "1048576",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Exactly Once Support",
     .order = 5,
     .range = &at_least_one,
     .documentation = "Most key and value bytes in one transaction; a larger record "
                      "goes alone (tributary)."},
    {.name = "exactly.once.allow.missing.marker",
     .type = TB_CONFIG_BOOLEAN,
     .field = TB_CONFIG_AT(tb_connector_settings_t, exactly_once_allow_missing_marker),
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Exactly Once Support",
     .order = 6,
     .documentation = "Start a task that has no record of a committed transaction in "
                      "its offsets topic (nor an older release's progress marker) "
                      "from the stored offsets. Records written after those offsets "
                      "may then be written twice (tributary)."},
};

const tb_config_table_t tb_connector_common_table =
    TB_CONFIG_TABLE("Connector (all)", common_keys);
const tb_config_table_t tb_connector_sink_table =
    TB_CONFIG_TABLE("Connector (sink)", sink_keys);
const tb_config_table_t tb_connector_source_table =
    TB_CONFIG_TABLE("Connector (source)", source_keys);

void tb_connector_settings_fill(const tb_plugin_t *plugin, const json_t *values,
                                tb_connector_settings_t *out)
{
    const tb_config_table_t *tables[3];
    tb_connector_config_tables(plugin, tables);
    *out = (tb_connector_settings_t){0};
    /* the columns fit (test_config_tables checks every table's) */
    tb_config_fill(tables[0], values, out);
    tb_config_fill(tables[1], values, out);
}

size_t tb_connector_config_tables(const tb_plugin_t *plugin,
                                  const tb_config_table_t *tables[3])
{
    tables[0] = &tb_connector_common_table;
    tables[1] = plugin->kind == TB_PLUGIN_SINK ? &tb_connector_sink_table
                                               : &tb_connector_source_table;
    tables[2] = plugin->config;
    return 3;
}

/* As Connect 4.1, the default of connector.plugin.version is the plugin's
 * version: in definition (a ConfigKeyInfo) and, when the config does not
 * set it, in value (a ConfigValueInfo, or NULL). */
static void show_plugin_version(json_t *definition, json_t *value,
                                const tb_plugin_t *plugin)
{
    const char *name = json_string_value(json_object_get(definition, "name"));
    if (name == NULL || strcmp(name, "connector.plugin.version") != 0) {
        return;
    }
    json_object_set_new(definition, "default_value", json_string(plugin->version));
    if (value != NULL && json_is_null(json_object_get(value, "value"))) {
        json_object_set_new(value, "value", json_string(plugin->version));
    }
}

json_t *tb_connector_config_keys(const tb_plugin_t *plugin)
{
    const tb_config_table_t *framework[3];
    tb_connector_config_tables(plugin, framework);
    const tb_config_table_t *tables[] = {plugin->config, framework[0], framework[1]};
    json_t *keys = tb_config_keys_json(tables, 3);
    size_t i;
    json_t *key;
    json_array_foreach (keys, i, key) {
        show_plugin_version(key, NULL, plugin);
    }
    return keys;
}

/* Sinks read topics or topics.regex: exactly one of them. */
static void check_sink_topics(const tb_connector_settings_t *settings, json_t *errors)
{
    bool has_list = json_array_size(settings->topics) > 0;
    const char *regex = settings->topics_regex;
    bool has_regex = regex != NULL && regex[0] != '\0';
    const char *dlq = settings->errors_deadletterqueue_topic_name;
    size_t i;
    json_t *topic;

    if (has_list && has_regex) {
        const char *m = "topics and topics.regex are mutually exclusive options, "
                        "but both are set.";
        tb_config_error_add(errors, "topics", m);
        tb_config_error_add(errors, "topics.regex", m);
    } else if (!has_list && !has_regex) {
        const char *m = "Must configure one of topics or topics.regex";
        tb_config_error_add(errors, "topics", m);
        tb_config_error_add(errors, "topics.regex", m);
    }
    json_array_foreach ((json_t *)settings->topics, i, topic) {
        if (dlq != NULL && strcmp(dlq, json_string_value(topic)) == 0) {
            char m[512];
            snprintf(m, sizeof(m),
                     "The DLQ topic '%s' may not be included in the list of "
                     "topics ('topics=%s') consumed by the connector",
                     dlq, dlq);
            tb_config_error_add(errors, "errors.deadletterqueue.topic.name", m);
        }
    }
}

/* Keys the runtime sets itself; an override would break a guarantee. */
static const struct {
    const char *key;
    const char *reason;
} managed_keys[] = {
    {"consumer.override.enable.auto.commit",
     "only offsets recorded after the plugin has flushed are committed"},
    {"consumer.override.enable.auto.offset.store",
     "the runtime decides which offsets are safe to commit"},
    {"consumer.override.enable.partition.eof", "the sink engine relies on it being off"},
    {"producer.override.transactional.id",
     "exactly-once tasks derive it from the connector and task"},
};

/* Overrides of what the runtime manages are refused with the reason; every
 * other client key is checked where each client's properties are built
 * (tb_client_props.h, tb_java_client_keys.h). */
static void check_client_overrides(const json_t *raw, json_t *errors)
{
    for (size_t m = 0; m < sizeof(managed_keys) / sizeof(managed_keys[0]); m++) {
        if (json_object_get(raw, managed_keys[m].key) != NULL) {
            char message[512];
            snprintf(message, sizeof(message), "%s is managed by tributary: %s",
                     managed_keys[m].key, managed_keys[m].reason);
            tb_config_error_add(errors, managed_keys[m].key, message);
        }
    }
}

/* A sink's consumer group may not take the name of a progress marker's
 * group (tb_progress_marker.h): its commits would replace the marker an
 * exactly-once source upgraded from an older release resumes from. */
static void check_sink_group(const json_t *raw, json_t *errors)
{
    const char *key = "consumer.override.group.id";
    const char *group = json_string_value(json_object_get(raw, key));
    const char *prefix = TB_PROGRESS_MARKER_GROUP_PREFIX;
    if (group != NULL && strncmp(group, prefix, strlen(prefix)) == 0) {
        char message[512];
        snprintf(message, sizeof(message),
                 "Invalid value %s for configuration %s: groups named %s... are "
                 "tributary's own, for exactly-once sources",
                 group, key, prefix);
        tb_config_error_add(errors, key, message);
    }
}

/* Upsert mode needs to know which fields make the key. */
static void check_write_mode(const tb_connector_settings_t *settings, json_t *errors)
{
    const char *mode = settings->write_mode;
    if (mode != NULL && strcmp(mode, "upsert") == 0 &&
        json_array_size(settings->primary_key) == 0) {
        tb_config_error_add(
            errors, "primary.key",
            "Missing primary.key: write.mode=upsert needs the fields that "
            "make the record key");
    }
}

bool tb_connector_config_transactional(const tb_connector_settings_t *settings,
                                       bool worker_exactly_once)
{
    const char *support = settings->exactly_once_support;
    if (support == NULL) {
        return false; /* a sink */
    }
    return strcmp(support, "required") == 0 ||
           (strcmp(support, "requested") == 0 && worker_exactly_once);
}

void tb_connector_config_check_transactions(const tb_connector_settings_t *settings,
                                            json_t *errors)
{
    const char *boundary = settings->transaction_boundary;
    if (boundary != NULL && strcmp(boundary, "poll") != 0) {
        tb_config_error_add(errors, "transaction.boundary",
                            "Invalid value for configuration transaction.boundary: "
                            "tributary supports poll only");
    }
}

/* A key of the plugin's refused_keys that no table of the connector
 * defines. */
static void check_refused_keys(const tb_plugin_t *plugin, const json_t *raw,
                               json_t *errors)
{
    const tb_config_table_t *tables[3];
    size_t n_tables = tb_connector_config_tables(plugin, tables);
    const char *key;
    json_t *value;
    char message[512];
    json_object_foreach ((json_t *)raw, key, value) {
        if (tb_config_find(tables, n_tables, key) != NULL) {
            continue;
        }
        for (size_t i = 0; plugin->refused_keys[i] != NULL; i++) {
            const char *refused = plugin->refused_keys[i];
            size_t n = strlen(refused);
            bool prefix = n > 0 && refused[n - 1] == '.';
            if (prefix ? strncmp(key, refused, n) == 0 : strcmp(key, refused) == 0) {
                snprintf(message, sizeof(message),
                         "%s is a key of %s that tributary does not implement; remove it",
                         key, plugin->class_name);
                tb_config_error_add(errors, key, message);
                break;
            }
        }
    }
}

/* A *.plugin.version key of raw against the one version of the built-in
 * plugin class_name: a malformed range or one without version is refused,
 * naming the key (a malformed range of a table key is reported already). */
static void check_version_key(const json_t *raw, const char *key, const char *class_name,
                              const char *version, json_t *errors)
{
    char range[512], message[2048];
    const char *spec = json_string_value(json_object_get(raw, key));
    if (spec == NULL || json_object_get(errors, key) != NULL) {
        return;
    }
    tb_version_range_match_t match =
        tb_version_range_match(spec, version, range, sizeof(range));
    if (match == TB_VERSION_RANGE_MALFORMED) {
        snprintf(message, sizeof(message), "Invalid value %s for configuration %s: %s",
                 spec, key, range);
    } else if (match == TB_VERSION_RANGE_OUTSIDE) {
        snprintf(message, sizeof(message),
                 "Invalid value %s for configuration %s: Plugin %s has version %s which "
                 "does not match the required version range %s",
                 spec, key, class_name, version, range);
    } else {
        return;
    }
    tb_config_error_add(errors, key, message);
}

/* KIP-891's *.plugin.version keys (Connect 4.1): the connector's against
 * its plugin's version; the converters', transformations' and predicates'
 * against the Connect version tributary implements, which its built-in
 * ones have. */
static void check_plugin_versions(const tb_plugin_t *plugin,
                                  const tb_connector_settings_t *settings,
                                  const json_t *raw, json_t *errors)
{
    static const char *const converters[] = {"key.converter", "value.converter",
                                             "header.converter"};
    static const char *const chains[] = {"transforms", "predicates"};
    const json_t *const lists[] = {settings->transforms, settings->predicates};
    char key[512], type_key[512], worker_default[64];
    check_version_key(raw, "connector.plugin.version", plugin->class_name,
                      plugin->version, errors);
    for (size_t c = 0; c < sizeof(converters) / sizeof(converters[0]); c++) {
        const char *class_name = json_string_value(json_object_get(raw, converters[c]));
        snprintf(worker_default, sizeof(worker_default), "the worker's %s",
                 converters[c]);
        snprintf(key, sizeof(key), "%s.plugin.version", converters[c]);
        check_version_key(raw, key,
                          class_name != NULL && class_name[0] != '\0' ? class_name
                                                                      : worker_default,
                          TB_CONNECT_VERSION, errors);
    }
    for (size_t c = 0; c < sizeof(chains) / sizeof(chains[0]); c++) {
        size_t i;
        json_t *alias;
        json_array_foreach ((json_t *)lists[c], i, alias) {
            snprintf(key, sizeof(key), "%s.%s.plugin.version", chains[c],
                     json_string_value(alias));
            snprintf(type_key, sizeof(type_key), "%s.%s.type", chains[c],
                     json_string_value(alias));
            const char *class_name = json_string_value(json_object_get(raw, type_key));
            check_version_key(raw, key, class_name != NULL ? class_name : type_key,
                              TB_CONNECT_VERSION, errors);
        }
    }
}

json_t *tb_connector_config_validate(const tb_plugin_t *plugin, const json_t *raw,
                                     json_t *errors)
{
    const tb_config_table_t *tables[3];
    size_t n = tb_connector_config_tables(plugin, tables);
    json_t *values = tb_config_parse(tables, n, raw, errors);
    tb_connector_settings_t settings;
    tb_connector_settings_fill(plugin, values, &settings);
    if (plugin->kind == TB_PLUGIN_SINK) {
        check_sink_topics(&settings, errors);
        check_sink_group(raw, errors);
    }
    if (plugin->kind == TB_PLUGIN_SOURCE) {
        check_write_mode(&settings, errors);
    }
    check_client_overrides(raw, errors);
    tb_transforms_validate(settings.transforms, settings.predicates, raw, errors);
    check_plugin_versions(plugin, &settings, raw, errors);
    if (plugin->refused_keys != NULL) {
        check_refused_keys(plugin, raw, errors);
    }
    if (plugin->validate != NULL) {
        plugin->validate(values, errors);
    }
    return values;
}

json_t *tb_connector_config_infos(const tb_plugin_t *plugin, const json_t *raw,
                                  const json_t *errors)
{
    const tb_config_table_t *tables[3];
    size_t n = tb_connector_config_tables(plugin, tables);
    json_t *shown = tb_connector_config_redact(plugin, raw);
    json_t *infos = tb_config_infos(plugin->class_name, tables, n, shown, errors);
    size_t i;
    json_t *config;
    json_decref(shown);
    json_array_foreach (json_object_get(infos, "configs"), i, config) {
        show_plugin_version(json_object_get(config, "definition"),
                            json_object_get(config, "value"), plugin);
    }
    return infos;
}

bool tb_connector_config_secret_key(const tb_plugin_t *plugin, const char *key)
{
    const tb_config_table_t *tables[3];
    size_t n = tb_connector_config_tables(plugin, tables);
    const tb_config_def_t *def = tb_config_find(tables, n, key);
    return (def != NULL && def->type == TB_CONFIG_PASSWORD) ||
           tb_client_secret_key(key) || tb_converter_secret_key(key);
}

bool tb_connector_config_headers_key(const tb_plugin_t *plugin, const char *key)
{
    const tb_config_def_t *def = tb_config_find(&plugin->config, 1, key);
    return def != NULL && def->role == TB_CONFIG_ROLE_HEADERS;
}

/* tb_secret_header_fn: every literal credential is hidden. */
static const char *hide_header(void *arg, const char *name, const char *value)
{
    (void)arg;
    (void)name;
    (void)value;
    return "[hidden]";
}

json_t *tb_connector_config_redact(const tb_plugin_t *plugin, const json_t *raw)
{
    const tb_config_table_t *tables[3];
    size_t n = tb_connector_config_tables(plugin, tables);
    json_t *redacted = tb_config_redact(tables, n, raw);
    const char *key;
    json_t *value;
    json_object_foreach (redacted, key, value) {
        const char *text = json_string_value(value);
        if (text == NULL) {
            continue;
        }
        /* a reference to a file or variable says nothing secret and stays;
         * a sealed secret is hidden as a literal one is */
        if (tb_connector_config_secret_key(plugin, key) &&
            (!tb_secret_is_reference(text) || tb_secret_is_sealed(text))) {
            json_object_set_new(redacted, key, json_string("[hidden]"));
        } else if (tb_connector_config_headers_key(plugin, key)) {
            char *shown = tb_secret_headers_rewrite(text, hide_header, NULL);
            json_object_set_new(redacted, key, json_string(shown ? shown : "[hidden]"));
            free(shown);
        }
    }
    return redacted;
}

json_t *tb_connector_config_resolve(const tb_plugin_t *plugin, const json_t *config,
                                    char *errstr, size_t errstr_size)
{
    json_t *resolved = json_deep_copy(config);
    for (size_t i = 0; i < plugin->config->count; i++) {
        const tb_config_def_t *def = &plugin->config->defs[i];
        const char *value = json_string_value(json_object_get(resolved, def->name));
        if (def->type != TB_CONFIG_PASSWORD || value == NULL) {
            continue;
        }
        char *secret = tb_secret_resolve(value, errstr, errstr_size);
        if (secret == NULL) {
            json_decref(resolved);
            return NULL;
        }
        json_object_set_new(resolved, def->name, json_string(secret));
        tb_secret_free(secret);
    }
    return resolved;
}

void tb_connector_config_release(json_t *resolved)
{
    tb_secret_wipe_json(resolved);
    json_decref(resolved);
}

bool tb_connector_config_restarts_on_reload(const json_t *config)
{
    const char *action =
        json_string_value(json_object_get(config, "config.action.reload"));
    return action == NULL || strcasecmp(action, "none") != 0;
}

bool tb_connector_config_reload_unwatched(const json_t *config)
{
    const char *key;
    json_t *value;
    if (!tb_connector_config_restarts_on_reload(config)) {
        return false;
    }
    json_object_foreach ((json_t *)config, key, value) {
        const char *text = json_string_value(value);
        if (text != NULL && tb_secret_is_reference(text) && !tb_secret_is_sealed(text)) {
            return true;
        }
    }
    return false;
}

const char *tb_connector_sink_group(const char *name, const json_t *config, char *buf,
                                    size_t size)
{
    const char *group =
        json_string_value(json_object_get(config, "consumer.override.group.id"));
    if (group != NULL) {
        snprintf(buf, size, "%s", group);
    } else {
        snprintf(buf, size, "connect-%s", name);
    }
    return buf;
}

int tb_connector_config_check_task_count(const char *name,
                                         const tb_connector_settings_t *settings,
                                         size_t generated, char *msg, size_t msg_size)
{
    long long max = settings->tasks_max;
    msg[0] = '\0';
    if ((long long)generated <= max) {
        return 0;
    }
    if (settings->tasks_max_enforce) {
        snprintf(msg, msg_size,
                 "The connector %s has generated %zu tasks, which is greater than %lld, "
                 "the maximum number of tasks it is configured to create. This "
                 "behaviour should be considered a bug and is disallowed. If "
                 "necessary, it can be permitted by reconfiguring the connector with "
                 "'tasks.max.enforce' set to false; however, this option will be "
                 "removed in a future release of Kafka Connect.",
                 name, generated, max);
        return -1;
    }
    snprintf(msg, msg_size,
             "The connector %s has generated %zu tasks, which is greater than %lld, the "
             "maximum number of tasks it is configured to create; they all run because "
             "tasks.max.enforce is false (deprecated: this will be refused in a future "
             "release)",
             name, generated, max);
    return 0;
}

int tb_connector_config_secrets_digest(const json_t *config, unsigned char digest[32],
                                       char *errstr, size_t errstr_size)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    const char *key;
    json_t *value;
    int rc = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 ? 0 : -1;
    if (rc != 0) {
        snprintf(errstr, errstr_size, "out of memory");
    }
    json_object_foreach ((json_t *)config, key, value) {
        const char *text = json_string_value(value);
        if (rc != 0 || text == NULL || !tb_secret_is_reference(text)) {
            continue;
        }
        char *secret = tb_secret_resolve(text, errstr, errstr_size);
        if (secret == NULL) {
            rc = -1;
            continue;
        }
        /* key and secret with their NULs: "ab"+"c" differs from "a"+"bc" */
        EVP_DigestUpdate(md, key, strlen(key) + 1);
        EVP_DigestUpdate(md, secret, strlen(secret) + 1);
        tb_secret_free(secret);
    }
    if (rc == 0 && EVP_DigestFinal_ex(md, digest, NULL) != 1) {
        snprintf(errstr, errstr_size, "SHA-256 failed");
        rc = -1;
    }
    EVP_MD_CTX_free(md);
    return rc;
}
