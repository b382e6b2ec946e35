/*
 * MirrorMaker 2's keys (MirrorConnectorConfig, MirrorSourceConfig,
 * MirrorHeartbeatConfig), its replication policies and its topic filter
 * (tb_mirror.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/mirror/tb_mirror.h"

#define POLICY_PACKAGE "org.apache.kafka.connect.mirror."

static const tb_config_range_t positive = {.has_min = true, .min = 1};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
/* -1 asks for the broker's default.replication.factor, as Kafka's admin does */
static const tb_config_range_t replication = {
    .has_min = true, .min = -1, .has_max = true, .max = 32767};
static const char *const locations[] = {"source", "target", NULL};

static const char *const policies[] = {"DefaultReplicationPolicy",
                                       "IdentityReplicationPolicy", NULL};

/* The policy a class name names (with or without its package), or -1. */
static int policy_of(const char *name)
{
    size_t package = strlen(POLICY_PACKAGE);
    if (name != NULL && strncmp(name, POLICY_PACKAGE, package) == 0) {
        name += package;
    }
    for (int i = 0; name != NULL && policies[i] != NULL; i++) {
        if (strcmp(name, policies[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static int check_policy(const json_t *value, char *reason, size_t reason_size)
{
    if (policy_of(json_string_value(value)) < 0) {
        snprintf(reason, reason_size,
                 "tributary has MirrorMaker 2's " POLICY_PACKAGE
                 "DefaultReplicationPolicy and IdentityReplicationPolicy; a custom "
                 "ReplicationPolicy class cannot be loaded");
        return -1;
    }
    return 0;
}

static int check_filter_class(const json_t *value, char *reason, size_t reason_size)
{
    const char *name = json_string_value(value);
    if (name == NULL ||
        (strcmp(name, POLICY_PACKAGE "DefaultTopicFilter") != 0 &&
         strcmp(name, POLICY_PACKAGE "DefaultConfigPropertyFilter") != 0 &&
         strcmp(name, POLICY_PACKAGE "DefaultGroupFilter") != 0)) {
        snprintf(reason, reason_size,
                 "tributary has MirrorMaker 2's default filters only; a custom filter "
                 "class cannot be loaded (topics, topics.exclude, groups, groups.exclude "
                 "and config.properties.exclude say what is copied)");
        return -1;
    }
    return 0;
}

static int check_patterns(const json_t *value, char *reason, size_t reason_size)
{
    size_t i;
    const json_t *pattern;
    json_array_foreach (value, i, pattern) {
        regex_t re;
        char *posix = tb_mirror_posix_regex(json_string_value(pattern));
        int rc = posix != NULL ? regcomp(&re, posix, REG_EXTENDED | REG_NOSUB) : -1;
        free(posix);
        if (rc != 0) {
            snprintf(reason, reason_size,
                     "%s is not a regular expression tributary reads",
                     json_string_value(pattern));
            return -1;
        }
        regfree(&re);
    }
    return 0;
}

#define S tb_mirror_settings_t
/* The keys every MM2 connector has. */
#define COMMON_KEYS                                                                      \
    {.name = "source.cluster.alias",                                                     \
     .type = TB_CONFIG_STRING,                                                           \
     .default_value = "source",                                                          \
     .importance = TB_IMPORTANCE_HIGH,                                                   \
     .group = "Mirror",                                                                  \
     .order = 1,                                                                         \
     .field = TB_CONFIG_AT(S, source_alias),                                             \
     .documentation = "Alias of the source cluster."},                                   \
        {.name = "target.cluster.alias",                                                 \
         .type = TB_CONFIG_STRING,                                                       \
         .default_value = "target",                                                      \
         .importance = TB_IMPORTANCE_HIGH,                                               \
         .group = "Mirror",                                                              \
         .order = 2,                                                                     \
         .field = TB_CONFIG_AT(S, target_alias),                                         \
         .documentation = "Alias of the target cluster: the worker's own cluster, "      \
                          "which the records are written to."},                          \
        {.name = "source.cluster.bootstrap.servers",                                     \
         .type = TB_CONFIG_STRING,                                                       \
         .required = true,                                                               \
         .importance = TB_IMPORTANCE_HIGH,                                               \
         .group = "Mirror",                                                              \
         .order = 3,                                                                     \
         .field = TB_CONFIG_AT(S, source_bootstrap),                                     \
         .documentation = "Brokers of the source cluster. source.cluster.* "             \
                          "connection keys (security.protocol, ssl.*, sasl.*; Java "     \
                          "names) set every client of it, the other keys there are "     \
                          "left out as MM2 leaves them out; source.consumer.* (any "     \
                          "client key) the consumer's alone (admin requests go "         \
                          "through the same clients)."},                                 \
        {.name = "target.cluster.bootstrap.servers",                                     \
         .type = TB_CONFIG_STRING,                                                       \
         .required = true,                                                               \
         .importance = TB_IMPORTANCE_HIGH,                                               \
         .group = "Mirror",                                                              \
         .order = 4,                                                                     \
         .field = TB_CONFIG_AT(S, target_bootstrap),                                     \
         .documentation =                                                                \
             "Brokers of the target cluster, for its topics and internal "               \
             "topics; target.cluster.* and target.producer.* as for the source."},       \
        {.name = "replication.policy.class",                                             \
         .type = TB_CONFIG_CLASS,                                                        \
         .default_value = POLICY_PACKAGE "DefaultReplicationPolicy",                     \
         .importance = TB_IMPORTANCE_LOW,                                                \
         .group = "Mirror",                                                              \
         .order = 5,                                                                     \
         .check = check_policy,                                                          \
         .field = TB_CONFIG_AT(S, policy_class),                                         \
         .documentation =                                                                \
             "How remote topics are named: DefaultReplicationPolicy "                    \
             "(<source alias><separator><topic>) or IdentityReplicationPolicy "          \
             "(the topic's own name)."},                                                 \
        {.name = "replication.policy.separator",                                         \
         .type = TB_CONFIG_STRING,                                                       \
         .default_value = ".",                                                           \
         .importance = TB_IMPORTANCE_LOW,                                                \
         .group = "Mirror",                                                              \
         .order = 6,                                                                     \
         .field = TB_CONFIG_AT(S, separator),                                            \
         .documentation = "Separator used in remote topic naming convention."},          \
    {                                                                                    \
        .name = "replication.policy.internal.topic.separator.enabled",                   \
        .type = TB_CONFIG_BOOLEAN, .default_value = "true",                              \
        .importance = TB_IMPORTANCE_LOW, .group = "Mirror", .order = 7,                  \
        .field = TB_CONFIG_AT(S, internal_separator),                                    \
        .documentation =                                                                 \
            "Whether the internal topics' names (offset syncs, checkpoints) "            \
            "use replication.policy.separator too, else '.'."                            \
    }

/* MirrorConnectorConfig's admin.timeout.ms, which every connector has */
#define ADMIN_TIMEOUT_KEY                                                                \
    {                                                                                    \
        .name = "admin.timeout.ms", .type = TB_CONFIG_LONG, .default_value = "60000",    \
        .importance = TB_IMPORTANCE_LOW, .group = "Mirror", .order = 8,                  \
        .range = &positive, .field = TB_CONFIG_AT(S, admin_timeout_ms),                  \
        .documentation = "Bound of each admin request (topic creation, configs)."        \
    }

/* MirrorConnectorConfig's enabled, which MM2's dedicated mode sets to false
 * for the flows that are not enabled (tb_mirror_task_configs) */
#define ENABLED_KEY                                                                      \
    {                                                                                    \
        .name = "enabled", .type = TB_CONFIG_BOOLEAN, .default_value = "true",           \
        .importance = TB_IMPORTANCE_LOW, .group = "Mirror", .order = 9,                  \
        .field = TB_CONFIG_AT(S, enabled),                                               \
        .documentation = "Whether the connector runs its tasks: false, none (MM2's "     \
                         "dedicated mode sets it for a flow that is not enabled)."       \
    }

static const tb_config_def_t source_keys[] = {
    COMMON_KEYS,
    ADMIN_TIMEOUT_KEY,
    ENABLED_KEY,
    {.name = "topics",
     .type = TB_CONFIG_LIST,
     .default_value = ".*",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 10,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, topics),
     .documentation = "Topics to replicate: topic names or regexes, comma-separated."},
    {.name = "topics.exclude",
     .type = TB_CONFIG_LIST,
     .default_value = ".*[\\-\\.]internal, .*\\.replica, __.*",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 11,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, topics_exclude),
     .documentation =
         "Topics not to replicate: topic names or regexes, comma-separated."},
    {.name = "topic.filter.class",
     .type = TB_CONFIG_CLASS,
     .default_value = POLICY_PACKAGE "DefaultTopicFilter",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 12,
     .check = check_filter_class,
     .documentation = "The topic filter: MM2's DefaultTopicFilter only."},
    {.name = "config.properties.exclude",
     .type = TB_CONFIG_LIST,
     .default_value = "follower\\.replication\\.throttled\\.replicas, "
                      "leader\\.replication\\.throttled\\.replicas, "
                      "message\\.timestamp\\.difference\\.max\\.ms, "
                      "message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, "
                      "min\\.insync\\.replicas",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 13,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, config_exclude),
     .documentation = "Topic config properties not to copy: names or regexes."},
    {.name = "config.property.filter.class",
     .type = TB_CONFIG_CLASS,
     .default_value = POLICY_PACKAGE "DefaultConfigPropertyFilter",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 14,
     .check = check_filter_class,
     .documentation =
         "The config property filter: MM2's DefaultConfigPropertyFilter only."},
    {.name = "use.defaults.from",
     .type = TB_CONFIG_STRING,
     .default_value = "target",
     .one_of = locations,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Mirror",
     .order = 14,
     .field = TB_CONFIG_ENUM_AT(S, defaults_from),
     .documentation =
         "For a topic config at its default on the source: target, the remote topic "
         "has the target cluster's default (a value set on it is deleted); source, it "
         "gets the source cluster's default value."},
    {.name = "replication.factor",
     .type = TB_CONFIG_INT,
     .default_value = "2",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 15,
     .range = &replication,
     .field = TB_CONFIG_AT(S, replication_factor),
     .documentation = "Replication factor of the remote topics created."},
    {.name = "refresh.topics.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 16,
     .field = TB_CONFIG_AT(S, refresh_topics),
     .documentation = "Whether new topics and partitions of the source are looked for."},
    {.name = "refresh.topics.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "600",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 17,
     .range = &positive,
     .field = TB_CONFIG_AT(S, refresh_topics_s),
     .documentation = "How often new topics and partitions are looked for."},
    {.name = "sync.topic.configs.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 18,
     .field = TB_CONFIG_AT(S, sync_configs),
     .documentation = "Whether the remote topics' configs are synced from the source "
                      "topics' every sync.topic.configs.interval.seconds (a remote topic "
                      "is made with them either way, as in MM2)."},
    {.name = "sync.topic.configs.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "600",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 19,
     .range = &positive,
     .field = TB_CONFIG_AT(S, sync_configs_s),
     .documentation =
         "How often the remote topics' configs are synced from the source topics' "
         "(at the task's start, then every interval), by the task that copies "
         "partition 0 of the topic."},
    {.name = "sync.topic.acls.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 20,
     .field = TB_CONFIG_AT(S, sync_acls),
     .documentation =
         "Copying topic ACLs is not built: true is refused (MM2's default is "
         "true, tributary's false)."},
    {.name = "sync.topic.acls.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "600",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 21,
     .range = &positive,
     .documentation = "Accepted for MM2's configs; no ACLs are copied."},
    {.name = "emit.offset-syncs.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 22,
     .field = TB_CONFIG_AT(S, emit_offset_syncs),
     .documentation =
         "Whether offset syncs are written for the checkpoints (not with exactly once "
         "yet: docs/mirror.md)."},
    {.name = "offset-syncs.topic.location",
     .type = TB_CONFIG_STRING,
     .default_value = "source",
     .one_of = locations,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 23,
     .field = TB_CONFIG_ENUM_AT(S, offset_syncs_location),
     .documentation = "The cluster of the offset-syncs topic: source or target."},
    {.name = "offset-syncs.topic.replication.factor",
     .type = TB_CONFIG_SHORT,
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 24,
     .range = &replication,
     .field = TB_CONFIG_AT(S, offset_syncs_rf),
     .documentation = "Replication factor of the offset-syncs topic when it is created."},
    {.name = "offset.lag.max",
     .type = TB_CONFIG_LONG,
     .default_value = "100",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 25,
     .range = &non_negative,
     .field = TB_CONFIG_AT(S, offset_lag_max),
     .documentation = "How far a remote partition may go past its last offset sync "
                      "before another is written."},
    {.name = "heartbeats.replication.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 26,
     .field = TB_CONFIG_AT(S, heartbeats_replication),
     .documentation = "Whether heartbeats topics are replicated whatever topics says."},
    {.name = "consumer.poll.timeout.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 28,
     .range = &non_negative,
     .documentation = "Accepted for MM2's configs: tributary's task never blocks in a "
                      "poll; idle, it looks for records again every 20 ms."},
};

static const tb_config_def_t heartbeat_keys[] = {
    COMMON_KEYS,
    ADMIN_TIMEOUT_KEY,
    {.name = "emit.heartbeats.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 10,
     .field = TB_CONFIG_AT(S, emit_heartbeats),
     .documentation = "Whether heartbeats are written."},
    {.name = "emit.heartbeats.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "1",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 11,
     .range = &positive,
     .field = TB_CONFIG_AT(S, emit_heartbeats_s),
     .documentation = "How often a heartbeat is written."},
    {.name = "heartbeats.topic.replication.factor",
     .type = TB_CONFIG_SHORT,
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 12,
     .range = &replication,
     .field = TB_CONFIG_AT(S, heartbeats_rf),
     .documentation = "Replication factor of the heartbeats topic when it is created."},
};

static const tb_config_def_t checkpoint_keys[] = {
    COMMON_KEYS,
    ADMIN_TIMEOUT_KEY,
    ENABLED_KEY,
    {.name = "groups",
     .type = TB_CONFIG_LIST,
     .default_value = ".*",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 10,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, groups),
     .documentation = "Consumer groups to replicate: group ids or regexes, "
                      "comma-separated."},
    {.name = "groups.exclude",
     .type = TB_CONFIG_LIST,
     .default_value = "console-consumer-.*, connect-.*, __.*",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 11,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, groups_exclude),
     .documentation = "Consumer groups not to replicate: group ids or regexes, "
                      "comma-separated; they win over groups."},
    {.name = "group.filter.class",
     .type = TB_CONFIG_CLASS,
     .default_value = POLICY_PACKAGE "DefaultGroupFilter",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 12,
     .check = check_filter_class,
     .documentation = "The group filter: MM2's DefaultGroupFilter only."},
    {.name = "topics",
     .type = TB_CONFIG_LIST,
     .default_value = ".*",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 13,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, topics),
     .documentation = "Topics whose group offsets are checkpointed: topic names or "
                      "regexes, comma-separated."},
    {.name = "topics.exclude",
     .type = TB_CONFIG_LIST,
     .default_value = ".*[\\-\\.]internal, .*\\.replica, __.*",
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Mirror",
     .order = 14,
     .check = check_patterns,
     .field = TB_CONFIG_AT(S, topics_exclude),
     .documentation = "Topics whose group offsets are not checkpointed."},
    {.name = "topic.filter.class",
     .type = TB_CONFIG_CLASS,
     .default_value = POLICY_PACKAGE "DefaultTopicFilter",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 15,
     .check = check_filter_class,
     .documentation = "The topic filter: MM2's DefaultTopicFilter only."},
    {.name = "refresh.groups.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 16,
     .field = TB_CONFIG_AT(S, refresh_groups),
     .documentation = "Whether new consumer groups of the source are looked for."},
    {.name = "refresh.groups.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "600",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 17,
     .range = &positive,
     .field = TB_CONFIG_AT(S, refresh_groups_s),
     .documentation = "How often new consumer groups are looked for."},
    {.name = "emit.checkpoints.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 18,
     .field = TB_CONFIG_AT(S, emit_checkpoints),
     .documentation = "Whether checkpoints are written: false is refused, as MM2 "
                      "refuses it."},
    {.name = "emit.checkpoints.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "60",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 19,
     .range = &positive,
     .field = TB_CONFIG_AT(S, emit_checkpoints_s),
     .documentation = "How often the groups' offsets are translated and checkpointed."},
    {.name = "sync.group.offsets.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 20,
     .field = TB_CONFIG_AT(S, sync_group_offsets),
     .documentation = "Whether the translated offsets are committed to the target "
                      "cluster's groups of the same names, while a group has no active "
                      "member there."},
    {.name = "sync.group.offsets.interval.seconds",
     .type = TB_CONFIG_LONG,
     .default_value = "60",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 21,
     .range = &positive,
     .field = TB_CONFIG_AT(S, sync_group_offsets_s),
     .documentation =
         "How often translated offsets are committed to the target's groups."},
    {.name = "checkpoints.topic.replication.factor",
     .type = TB_CONFIG_SHORT,
     .default_value = "3",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 22,
     .range = &replication,
     .field = TB_CONFIG_AT(S, checkpoints_rf),
     .documentation = "Replication factor of the checkpoints topic when it is created."},
    {.name = "offset-syncs.topic.location",
     .type = TB_CONFIG_STRING,
     .default_value = "source",
     .one_of = locations,
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 23,
     .field = TB_CONFIG_ENUM_AT(S, offset_syncs_location),
     .documentation = "The cluster of the offset-syncs topic read: source or target, as "
                      "the MirrorSourceConnector's."},
    {.name = "emit.offset-syncs.enabled",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 24,
     .field = TB_CONFIG_AT(S, emit_offset_syncs),
     .documentation = "The MirrorSourceConnector's key, often shared with it: false is "
                      "refused, as MM2 refuses it (checkpoints need the offset syncs)."},
    {.name = "consumer.poll.timeout.ms",
     .type = TB_CONFIG_LONG,
     .default_value = "1000",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Mirror",
     .order = 25,
     .range = &non_negative,
     .documentation = "Accepted for MM2's configs: tributary's task never blocks in a "
                      "poll."},
};
#undef S

const tb_config_table_t tb_mirror_source_table =
    TB_CONFIG_TABLE("MirrorSourceConnector", source_keys);
const tb_config_table_t tb_mirror_heartbeat_table =
    TB_CONFIG_TABLE("MirrorHeartbeatConnector", heartbeat_keys);
const tb_config_table_t tb_mirror_checkpoint_table =
    TB_CONFIG_TABLE("MirrorCheckpointConnector", checkpoint_keys);

json_t *tb_mirror_task_configs(const tb_config_table_t *table, const json_t *config,
                               int max_tasks)
{
    json_t *tasks = json_array();
    tb_mirror_settings_t settings = {.enabled = true};
    char errstr[256];
    json_t *values = tb_config_load(table, config, &settings, errstr, sizeof(errstr));
    json_decref(values); /* only the boolean is read */
    if (!settings.enabled) {
        return tasks;
    }
    for (int i = 0; i < max_tasks; i++) {
        json_t *task = json_deep_copy(config);
        char number[16];
        snprintf(number, sizeof(number), "%d", i);
        json_object_set_new(task, "task.index", json_string(number));
        snprintf(number, sizeof(number), "%d", max_tasks);
        json_object_set_new(task, "task.count", json_string(number));
        json_array_append_new(tasks, task);
    }
    return tasks;
}

void tb_mirror_task_share(const json_t *config, int *index, int *count)
{
    const char *i = json_string_value(json_object_get(config, "task.index"));
    const char *n = json_string_value(json_object_get(config, "task.count"));
    *index = i != NULL ? atoi(i) : 0;
    *count = n != NULL ? atoi(n) : 1;
    if (*count < 1 || *index < 0 || *index >= *count) {
        *index = 0;
        *count = 1;
    }
}

uint32_t tb_mirror_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        h = (h ^ *p) * 16777619u;
    }
    return h;
}

/* Fills settings from values by the connector's table and checks the keys
 * every connector has. */
static void validate_common(const tb_config_table_t *table, const json_t *values,
                            tb_mirror_settings_t *settings, json_t *errors)
{
    *settings = (tb_mirror_settings_t){0};
    tb_config_fill(table, values, settings);
    const struct {
        const char *key;
        const char *alias;
    } aliases[] = {{"source.cluster.alias", settings->source_alias},
                   {"target.cluster.alias", settings->target_alias}};
    for (size_t i = 0; i < 2; i++) {
        if (aliases[i].alias != NULL && strlen(aliases[i].alias) > TB_MIRROR_ALIAS_MAX) {
            char message[160];
            snprintf(message, sizeof(message),
                     "%s is longer than MirrorMaker 2's records can hold (%d bytes)",
                     aliases[i].key, TB_MIRROR_ALIAS_MAX);
            tb_config_error_add(errors, aliases[i].key, message);
        }
    }
    if (settings->separator != NULL && settings->separator[0] == '\0') {
        tb_config_error_add(
            errors, "replication.policy.separator",
            "replication.policy.separator must not be empty: remote topic "
            "names could not be told from local ones");
    }
}

void tb_mirror_source_validate(const json_t *values, json_t *errors)
{
    tb_mirror_settings_t settings;
    validate_common(&tb_mirror_source_table, values, &settings, errors);
    if (settings.sync_acls) {
        tb_config_error_add(errors, "sync.topic.acls.enabled",
                            "sync.topic.acls.enabled=true is refused: tributary does not "
                            "copy topic ACLs to the target cluster; set it to false and "
                            "manage the remote topics' ACLs on the target");
    }
}

void tb_mirror_heartbeat_validate(const json_t *values, json_t *errors)
{
    tb_mirror_settings_t settings;
    validate_common(&tb_mirror_heartbeat_table, values, &settings, errors);
}

void tb_mirror_checkpoint_validate(const json_t *values, json_t *errors)
{
    tb_mirror_settings_t settings;
    validate_common(&tb_mirror_checkpoint_table, values, &settings, errors);
    if (!settings.emit_checkpoints) {
        tb_config_error_add(errors, "emit.checkpoints.enabled",
                            "MirrorCheckpointConnector cannot run with "
                            "emit.checkpoints.enabled=false (as in MirrorMaker 2): leave "
                            "the connector out instead");
    }
    if (!settings.emit_offset_syncs) {
        tb_config_error_add(errors, "emit.offset-syncs.enabled",
                            "MirrorCheckpointConnector cannot run without offset syncs "
                            "(emit.offset-syncs.enabled=false): it translates group "
                            "offsets through them");
    }
}

void tb_mirror_names_init(tb_mirror_names_t *names, const tb_mirror_settings_t *settings)
{
    *names = (tb_mirror_names_t){
        .kind = policy_of(settings->policy_class) == 1 ? TB_MIRROR_POLICY_IDENTITY
                                                       : TB_MIRROR_POLICY_DEFAULT,
        .separator = settings->separator,
        .internal_separator = settings->internal_separator ? settings->separator : ".",
        .source_alias = settings->source_alias,
        .target_alias = settings->target_alias,
    };
}

/* A new string of the parts joined (NULL-terminated list). */
static char *join(const char *first, ...)
{
    va_list ap;
    size_t len = 0;
    va_start(ap, first);
    for (const char *s = first; s != NULL; s = va_arg(ap, const char *)) {
        len += strlen(s);
    }
    va_end(ap);
    char *out = malloc(len + 1);
    if (out == NULL) {
        return NULL;
    }
    out[0] = '\0';
    va_start(ap, first);
    for (const char *s = first; s != NULL; s = va_arg(ap, const char *)) {
        strcat(out, s);
    }
    va_end(ap);
    return out;
}

/* DefaultReplicationPolicy.topicSource: the alias before the first
 * separator, as Java's String.split sees it (trailing empty parts dropped:
 * "a." has no source). Its length in *len; false when none. */
static bool default_source(const tb_mirror_names_t *names, const char *topic, size_t *len)
{
    const char *at = strstr(topic, names->separator);
    if (at == NULL) {
        return false;
    }
    size_t sep = strlen(names->separator);
    const char *rest = at + sep;
    while (strncmp(rest, names->separator, sep) == 0) {
        rest += sep;
    }
    if (*rest == '\0') {
        return false;
    }
    *len = (size_t)(at - topic);
    return true;
}

/* DefaultReplicationPolicy.upstreamTopic: the topic after its source
 * alias, or NULL when it has none (borrowed from topic). */
static const char *default_upstream(const tb_mirror_names_t *names, const char *topic)
{
    size_t len;
    return default_source(names, topic, &len) ? topic + len + strlen(names->separator)
                                              : NULL;
}

/* ReplicationPolicy.originalTopic is "heartbeats" (DefaultReplicationPolicy
 * follows the upstream names; IdentityReplicationPolicy looks at the end). */
static bool is_heartbeats(const tb_mirror_names_t *names, const char *topic)
{
    if (names->kind == TB_MIRROR_POLICY_IDENTITY) {
        size_t n = strlen(topic), h = strlen(TB_MIRROR_HEARTBEATS_TOPIC);
        return n >= h && strcmp(topic + n - h, TB_MIRROR_HEARTBEATS_TOPIC) == 0;
    }
    for (const char *t = topic, *up; t != NULL; t = up) {
        up = default_upstream(names, t);
        if (up == NULL || strcmp(up, t) == 0) {
            return strcmp(t, TB_MIRROR_HEARTBEATS_TOPIC) == 0;
        }
    }
    return false;
}

char *tb_mirror_remote_topic(const tb_mirror_names_t *names, const char *topic)
{
    if (names->kind == TB_MIRROR_POLICY_IDENTITY && !is_heartbeats(names, topic)) {
        return strdup(topic);
    }
    return join(names->source_alias, names->separator, topic, NULL);
}

char *tb_mirror_offset_syncs_topic(const tb_mirror_names_t *names, bool on_target)
{
    return join("mm2-offset-syncs", names->internal_separator,
                on_target ? names->source_alias : names->target_alias,
                names->internal_separator, "internal", NULL);
}

char *tb_mirror_checkpoints_topic(const tb_mirror_names_t *names)
{
    return join(names->source_alias, names->internal_separator, "checkpoints",
                names->internal_separator, "internal", NULL);
}

/* ReplicationPolicy.isInternalTopic: MM2's, Kafka's and Connect's own. */
static bool is_internal(const char *topic)
{
    size_t n = strlen(topic);
    return strncmp(topic, "__", 2) == 0 || topic[0] == '.' ||
           (n >= 9 && (strcmp(topic + n - 9, ".internal") == 0 ||
                       strcmp(topic + n - 9, "-internal") == 0));
}

/* MirrorSourceConnector.isCycle: whether topic came from the target
 * cluster already, following its upstream names. */
static bool is_cycle(const tb_mirror_names_t *names, const char *topic)
{
    if (names->kind == TB_MIRROR_POLICY_IDENTITY && !is_heartbeats(names, topic)) {
        /* IdentityReplicationPolicy names every topic's source the source
         * alias and its upstream topic itself: it cannot see cycles */
        return strcmp(names->source_alias, names->target_alias) == 0;
    }
    for (const char *t = topic; t != NULL;) {
        size_t len;
        if (!default_source(names, t, &len)) {
            return false;
        }
        if (len == strlen(names->target_alias) &&
            strncmp(t, names->target_alias, len) == 0) {
            return true;
        }
        const char *up = default_upstream(names, t);
        t = up != NULL && strcmp(up, t) != 0 ? up : NULL;
    }
    return false;
}

/* ReplicationPolicy.upstreamTopic of either policy: IdentityReplicationPolicy
 * sees every topic but heartbeats as its own upstream. */
static const char *upstream_of(const tb_mirror_names_t *names, const char *topic)
{
    if (names->kind == TB_MIRROR_POLICY_IDENTITY && !is_heartbeats(names, topic)) {
        return topic;
    }
    return default_upstream(names, topic);
}

/* ReplicationPolicy.topicSource is the target cluster's alias. */
static bool from_target(const tb_mirror_names_t *names, const char *topic)
{
    size_t len;
    if (names->kind == TB_MIRROR_POLICY_IDENTITY && !is_heartbeats(names, topic)) {
        return strcmp(names->source_alias, names->target_alias) == 0;
    }
    return default_source(names, topic, &len) && len == strlen(names->target_alias) &&
           strncmp(topic, names->target_alias, len) == 0;
}

char *tb_mirror_checkpoint_topic(const tb_mirror_names_t *names, const char *topic)
{
    if (!from_target(names, topic)) {
        return tb_mirror_remote_topic(names, topic);
    }
    /* ReplicationPolicy.originalTopic: upstream names followed to the end */
    const char *t = topic;
    for (const char *up = upstream_of(names, t); up != NULL && strcmp(up, t) != 0;
         up = upstream_of(names, t)) {
        t = up;
    }
    return strdup(t);
}

char *tb_mirror_posix_regex(const char *java)
{
    size_t n = java != NULL ? strlen(java) : 0;
    char *out = malloc(3 * n + 5); /* "\\D" becomes "[^0-9]" */
    size_t o = 0;
    bool in_bracket = false, dash = false;
    if (out == NULL) {
        return NULL;
    }
    out[o++] = '^';
    out[o++] = '(';
    for (size_t i = 0; i < n; i++) {
        char c = java[i];
        if (!in_bracket) {
            if (c == '\\' && i + 1 < n && (java[i + 1] == 'd' || java[i + 1] == 'D')) {
                const char *digits = java[++i] == 'd' ? "[0-9]" : "[^0-9]";
                memcpy(out + o, digits, strlen(digits));
                o += strlen(digits);
                continue;
            }
            out[o++] = c;
            if (c == '\\' && i + 1 < n) {
                out[o++] = java[++i];
            } else if (c == '[') {
                in_bracket = true;
                dash = false;
                if (i + 1 < n && java[i + 1] == '^') {
                    out[o++] = java[++i];
                }
            }
            continue;
        }
        if (c == '\\' && i + 1 < n) {
            c = java[++i];
            if (c == '-') {
                dash = true;
                continue;
            }
            if (c == 'd') {
                memcpy(out + o, "0-9", 3);
                o += 3;
                continue;
            }
            out[o++] = c;
        } else if (c == ']') {
            if (dash) {
                out[o++] = '-';
            }
            out[o++] = ']';
            in_bracket = false;
        } else {
            out[o++] = c;
        }
    }
    out[o++] = ')';
    out[o++] = '$';
    out[o] = '\0';
    return out;
}

/* Compiles a list of Java regexes. -1 with errstr naming key. */
static int compile_list(const json_t *list, const char *key, regex_t **out, size_t *count,
                        char *errstr, size_t errstr_size)
{
    size_t n = json_array_size(list), i;
    const json_t *item;
    *out = calloc(n + 1, sizeof(regex_t));
    *count = 0;
    json_array_foreach (list, i, item) {
        char *posix = tb_mirror_posix_regex(json_string_value(item));
        int rc =
            posix != NULL ? regcomp(&(*out)[i], posix, REG_EXTENDED | REG_NOSUB) : -1;
        free(posix);
        if (rc != 0) {
            snprintf(errstr, errstr_size,
                     "%s: %s is not a regular expression tributary reads", key,
                     json_string_value(item));
            return -1;
        }
        (*count)++;
    }
    return 0;
}

static bool any_matches(const regex_t *patterns, size_t count, const char *s)
{
    for (size_t i = 0; i < count; i++) {
        if (regexec(&patterns[i], s, 0, NULL, 0) == 0) {
            return true;
        }
    }
    return false;
}

int tb_mirror_filter_init(tb_mirror_filter_t *filter, const tb_mirror_names_t *names,
                          const tb_mirror_settings_t *settings, char *errstr,
                          size_t errstr_size)
{
    *filter = (tb_mirror_filter_t){.names = names,
                                   .heartbeats = settings->heartbeats_replication};
    if (compile_list(settings->topics, "topics", &filter->include, &filter->include_count,
                     errstr, errstr_size) != 0 ||
        compile_list(settings->topics_exclude, "topics.exclude", &filter->exclude,
                     &filter->exclude_count, errstr, errstr_size) != 0) {
        tb_mirror_filter_free(filter);
        return -1;
    }
    return 0;
}

int tb_mirror_group_filter_init(tb_mirror_filter_t *filter,
                                const tb_mirror_settings_t *settings, char *errstr,
                                size_t errstr_size)
{
    *filter = (tb_mirror_filter_t){0};
    if (compile_list(settings->groups, "groups", &filter->include, &filter->include_count,
                     errstr, errstr_size) != 0 ||
        compile_list(settings->groups_exclude, "groups.exclude", &filter->exclude,
                     &filter->exclude_count, errstr, errstr_size) != 0) {
        tb_mirror_filter_free(filter);
        return -1;
    }
    return 0;
}

bool tb_mirror_filter_matches(const tb_mirror_filter_t *filter, const char *name)
{
    return any_matches(filter->include, filter->include_count, name) &&
           !any_matches(filter->exclude, filter->exclude_count, name);
}

bool tb_mirror_filter_topic(const tb_mirror_filter_t *filter, const char *topic)
{
    bool chosen = tb_mirror_filter_matches(filter, topic) ||
                  (filter->heartbeats && is_heartbeats(filter->names, topic));
    return chosen && !is_internal(topic) && !is_cycle(filter->names, topic);
}

void tb_mirror_filter_free(tb_mirror_filter_t *filter)
{
    for (size_t i = 0; i < filter->include_count; i++) {
        regfree(&filter->include[i]);
    }
    for (size_t i = 0; i < filter->exclude_count; i++) {
        regfree(&filter->exclude[i]);
    }
    free(filter->include);
    free(filter->exclude);
    filter->include = filter->exclude = NULL;
    filter->include_count = filter->exclude_count = 0;
}

int tb_mirror_config_filter_init(tb_mirror_filter_t *filter,
                                 const tb_mirror_settings_t *settings, char *errstr,
                                 size_t errstr_size)
{
    *filter = (tb_mirror_filter_t){0};
    if (compile_list(settings->config_exclude, "config.properties.exclude",
                     &filter->exclude, &filter->exclude_count, errstr,
                     errstr_size) != 0) {
        tb_mirror_filter_free(filter);
        return -1;
    }
    return 0;
}

bool tb_mirror_config_copied(const tb_mirror_filter_t *filter, const char *property)
{
    return !any_matches(filter->exclude, filter->exclude_count, property);
}
