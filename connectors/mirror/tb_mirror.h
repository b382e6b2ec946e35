/*
 * tb_mirror.h - what MirrorMaker 2's connectors share: their keys (the
 * typed settings below, filled from one table per connector), the
 * replication policies that name remote topics, the topic filter and the
 * Kafka clients of the two clusters.
 *
 * Names are MM2's, so that an MM2 deployment moves over unchanged: remote
 * topics "<source alias><separator><topic>" (DefaultReplicationPolicy) or
 * the topic's own name (IdentityReplicationPolicy), "heartbeats" followed
 * through both.
 */
#ifndef TB_MIRROR_H
#define TB_MIRROR_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "core/tb_config.h"
#include "core/tb_metrics.h"

#define TB_MIRROR_VERSION "3.9.2"
#define TB_MIRROR_HEARTBEATS_TOPIC "heartbeats"
/* an alias as MM2's records hold it: an INT16-length string */
#define TB_MIRROR_ALIAS_MAX 32767

typedef enum {
    TB_MIRROR_POLICY_DEFAULT = 0, /* <alias><separator><topic> */
    TB_MIRROR_POLICY_IDENTITY,    /* the topic's own name */
} tb_mirror_policy_t;

/* Every connector's keys: each table fills the ones it has. Strings and
 * lists are borrowed from the parsed values (tb_config_load). */
typedef struct {
    const char *source_alias;
    const char *target_alias;
    const char *source_bootstrap;
    const char *target_bootstrap;
    const char *policy_class;
    const char *separator;
    bool internal_separator; /* internal topics use separator too */
    bool enabled;            /* false: the connector runs no task (dedicated mode) */
    /* MirrorSourceConnector */
    const json_t *topics;
    const json_t *topics_exclude;
    const json_t *config_exclude;
    int defaults_from; /* use.defaults.from, 0: source cluster, 1: target */
    int replication_factor;
    bool refresh_topics;
    long long refresh_topics_s;
    bool sync_configs;
    long long sync_configs_s;
    bool sync_acls; /* refused when true: not built */
    bool emit_offset_syncs;
    int offset_syncs_location; /* 0: source cluster, 1: target */
    int offset_syncs_rf;
    long long offset_lag_max;
    bool heartbeats_replication;
    long long admin_timeout_ms;
    /* MirrorHeartbeatConnector */
    bool emit_heartbeats;
    long long emit_heartbeats_s;
    int heartbeats_rf;
    /* MirrorCheckpointConnector (topics, topics.exclude and
     * offset-syncs.topic.location above too) */
    const json_t *groups;
    const json_t *groups_exclude;
    bool refresh_groups;
    long long refresh_groups_s;
    bool emit_checkpoints; /* refused when false, as MM2 refuses it */
    long long emit_checkpoints_s;
    bool sync_group_offsets;
    long long sync_group_offsets_s;
    int checkpoints_rf;
} tb_mirror_settings_t;

/* The keys of each connector, as MM2 defines them (defaults included). */
extern const tb_config_table_t tb_mirror_source_table;
extern const tb_config_table_t tb_mirror_heartbeat_table;
extern const tb_config_table_t tb_mirror_checkpoint_table;

/* The tasks of a connector split its work themselves: each takes the items
 * (topic-partitions, groups) whose tb_mirror_hash falls to its index. The
 * task configs are config (read by the connector's table) copied max_tasks
 * times with "task.index" and "task.count" added (a new array), none with
 * enabled=false;
 * tb_mirror_task_share reads them back (index 0 of 1 when absent or
 * invalid). */
json_t *tb_mirror_task_configs(const tb_config_table_t *table, const json_t *config,
                               int max_tasks);
void tb_mirror_task_share(const json_t *config, int *index, int *count);
/* FNV-1a of s: stable across tasks and restarts. */
uint32_t tb_mirror_hash(const char *s);

/* Each connector's checks across keys (tb_plugin_t.validate): the aliases'
 * length and a non-empty separator for all three; the source refuses
 * sync.topic.acls.enabled=true, the checkpoint connector, as MM2 does, runs
 * with neither emit.checkpoints.enabled nor emit.offset-syncs.enabled
 * false. */
void tb_mirror_source_validate(const json_t *values, json_t *errors);
void tb_mirror_heartbeat_validate(const json_t *values, json_t *errors);
void tb_mirror_checkpoint_validate(const json_t *values, json_t *errors);

/* A replication policy with its aliases. Borrows settings' strings. */
typedef struct {
    tb_mirror_policy_t kind;
    const char *separator;
    const char *internal_separator;
    const char *source_alias;
    const char *target_alias;
} tb_mirror_names_t;

void tb_mirror_names_init(tb_mirror_names_t *names, const tb_mirror_settings_t *settings);

/* The remote name of a source topic on the target, new (free()). */
char *tb_mirror_remote_topic(const tb_mirror_names_t *names, const char *topic);

/* The offset-syncs topic of the clusters, "mm2-offset-syncs<s><alias><s>
 * internal" with s the internal separator and alias the cluster it is not
 * on (MM2's): the target's when it is on the source (on_target false), the
 * source's when it is on the target. New (free()). */
char *tb_mirror_offset_syncs_topic(const tb_mirror_names_t *names, bool on_target);

/* The checkpoints topic on the target, "<source alias><s>checkpoints<s>
 * internal", new (free()). */
char *tb_mirror_checkpoints_topic(const tb_mirror_names_t *names);

/* The name on the target of a source topic that a group consumed, as MM2's
 * checkpoints name it: a topic that came from the target cluster goes back
 * to its original name, any other is its remote topic. New (free()). */
char *tb_mirror_checkpoint_topic(const tb_mirror_names_t *names, const char *topic);

/* The topic filter: topics and topics.exclude (Java regexes, read as POSIX
 * extended ones with Java's escapes in brackets), MM2's internal topics,
 * heartbeats and cycles. */
typedef struct {
    const tb_mirror_names_t *names;
    regex_t *include;
    size_t include_count;
    regex_t *exclude;
    size_t exclude_count;
    bool heartbeats;
} tb_mirror_filter_t;

/* A Java regex as glibc's extended one, anchored at both ends as Java's
 * matches() is: outside brackets glibc reads Java's escapes of punctuation
 * ("\\.") alike; inside, POSIX has no escapes, so "[\\-\\.]" becomes "[.-]"
 * (a '-' last is literal); Java's "\\d" and "\\D", which POSIX lacks, become
 * digit classes. New (free()), NULL on no memory. */
char *tb_mirror_posix_regex(const char *java);

/* Compiles the filter of settings. -1 with errstr naming the key whose
 * pattern is invalid. */
int tb_mirror_filter_init(tb_mirror_filter_t *filter, const tb_mirror_names_t *names,
                          const tb_mirror_settings_t *settings, char *errstr,
                          size_t errstr_size);
bool tb_mirror_filter_topic(const tb_mirror_filter_t *filter, const char *topic);
/* MM2's DefaultTopicFilter alone (what the checkpoints follow): topics and
 * not topics.exclude, no internal topic or cycle rules. */
bool tb_mirror_filter_matches(const tb_mirror_filter_t *filter, const char *name);
/* The group filter: groups and groups.exclude (DefaultGroupFilter), read
 * with tb_mirror_filter_matches. -1 with errstr naming the key. */
int tb_mirror_group_filter_init(tb_mirror_filter_t *filter,
                                const tb_mirror_settings_t *settings, char *errstr,
                                size_t errstr_size);
void tb_mirror_filter_free(tb_mirror_filter_t *filter);

/* The config property filter: config.properties.exclude (MM2's
 * DefaultConfigPropertyFilter), read with tb_mirror_config_copied. -1 with
 * errstr naming the key. */
int tb_mirror_config_filter_init(tb_mirror_filter_t *filter,
                                 const tb_mirror_settings_t *settings, char *errstr,
                                 size_t errstr_size);
/* Whether a topic config property is copied to the remote topic. */
bool tb_mirror_config_copied(const tb_mirror_filter_t *filter, const char *property);

/* The topic configs MM2 copies (mirror_topic_configs.c): a task's clients
 * of the two clusters (borrowed), its settings (borrowed), and the
 * config.properties.exclude compiled and the failures it logged (owned;
 * each failure logged once while it lasts). */
typedef struct {
    rd_kafka_t *source;
    rd_kafka_t *target;
    const tb_mirror_settings_t *settings;
    const char *connector;
    int task;
    tb_mirror_filter_t filter; /* config.properties.exclude */
    json_t *failing;           /* a topic or request -> the reason logged */
} tb_mirror_topic_configs_t;

/* -1 with errstr naming the key whose pattern is invalid. */
int tb_mirror_topic_configs_init(tb_mirror_topic_configs_t *tc, rd_kafka_t *source,
                                 rd_kafka_t *target, const tb_mirror_settings_t *settings,
                                 const char *connector, int task, char *errstr,
                                 size_t errstr_size);
/* Accepts one never initialized (zeroed) or freed already. */
void tb_mirror_topic_configs_free(tb_mirror_topic_configs_t *tc);

/* The configs a remote topic is made with: those set on the source topic
 * (not defaults unless use.defaults.from=source, not read-only or sensitive, not the
 * broker's static ones, not those config.properties.exclude names), a new object of
 * strings; NULL when they cannot be read (logged: the topic is made without). */
json_t *tb_mirror_topic_configs_create(tb_mirror_topic_configs_t *tc, const char *topic);

/* MM2's syncTopicConfigs for count source topics and their remote topics
 * (remotes[i] of topics[i]), each existing on its cluster: every config
 * that MM2 copies and that is set on the source topic is set on the
 * remote topic where it differs, every one at its default on the source
 * is deleted from the remote topic where set there (which then has the
 * target's default; with use.defaults.from=source, set to the source's
 * default value instead). One DescribeConfigs
 * per cluster and one IncrementalAlterConfigs, each bounded by
 * admin.timeout.ms; what changes is logged, and each failure once, naming
 * the topic and its configs; none stops the replication. */
void tb_mirror_topic_configs_sync(tb_mirror_topic_configs_t *tc,
                                  const char *const *topics, const char *const *remotes,
                                  size_t count);

/* A librdkafka handle of one cluster: "source" or "target", from
 * <side>.cluster.bootstrap.servers and the <side>.cluster.* client keys
 * (Java or librdkafka names), then the <side>.<role>.* ones (role
 * "consumer", "producer" or "admin"), over extra (borrowed, may be NULL).
 * NULL with errstr naming the key at fault. */
rd_kafka_t *tb_mirror_client(const json_t *config, const char *side, rd_kafka_type_t type,
                             const json_t *extra, char *errstr, size_t errstr_size);

/* MM2's Struct encodings (its heartbeat, offset-sync and checkpoint
 * records): an INT16-length string, big-endian integers. Each writes at p
 * and returns the byte after. */
uint8_t *tb_mirror_put_string(uint8_t *p, const char *s);
/* The len bytes at s as such a string, NUL bytes included (commit
 * metadata, which MM2 copies as the broker holds it). */
uint8_t *tb_mirror_put_stringn(uint8_t *p, const char *s, size_t len);
uint8_t *tb_mirror_put_i16(uint8_t *p, int16_t v);
uint8_t *tb_mirror_put_i32(uint8_t *p, int32_t v);
uint8_t *tb_mirror_put_i64(uint8_t *p, int64_t v);

/* Reads of the same encodings from *p, at most end: each advances *p and
 * returns false when the bytes run out. tb_mirror_get_string gives a new
 * string (free()). */
bool tb_mirror_get_i16(const uint8_t **p, const uint8_t *end, int16_t *v);
bool tb_mirror_get_i32(const uint8_t **p, const uint8_t *end, int32_t *v);
bool tb_mirror_get_i64(const uint8_t **p, const uint8_t *end, int64_t *v);
bool tb_mirror_get_string(const uint8_t **p, const uint8_t *end, char **s);
/* The same, with its length in *len (len may be NULL): the bytes may hold
 * NULs; a NUL follows them. */
bool tb_mirror_get_stringn(const uint8_t **p, const uint8_t *end, char **s, size_t *len);

/* MM2's OffsetSyncStore: the offset syncs of each source topic-partition,
 * at most TB_MIRROR_SYNC_SLOTS kept, spaced about exponentially back from
 * the latest (MM2's invariants), and the translation of a group's
 * committed offset through them. */
#define TB_MIRROR_SYNC_SLOTS 64

typedef struct {
    int64_t upstream;   /* offset of a record on the source */
    int64_t downstream; /* of the same record in the remote topic */
    int64_t seq;        /* which sync record it came from (its identity) */
} tb_mirror_sync_t;

typedef struct tb_mirror_syncs tb_mirror_syncs_t;

/* New and empty; NULL on no memory. */
tb_mirror_syncs_t *tb_mirror_syncs_new(void);
void tb_mirror_syncs_free(tb_mirror_syncs_t *store);

/* Takes one offset sync, in the order of the offset-syncs topic. Until
 * tb_mirror_syncs_read_to_end, with keep_last_only (the checkpoints could
 * not be read back: older syncs could translate behind checkpoints written
 * before), each replaces every sync of its partition. -1 on no memory. */
int tb_mirror_syncs_add(tb_mirror_syncs_t *store, const char *topic, int32_t partition,
                        tb_mirror_sync_t sync, bool keep_last_only);

/* The offset-syncs topic was read to its end once: translations start. */
void tb_mirror_syncs_read_to_end(tb_mirror_syncs_t *store);

/* The downstream offset for a group's committed upstream offset of a
 * source topic-partition: the latest kept sync at or before it, plus one
 * when the group is past that sync (never further: records after it may
 * not have been copied yet). -1 when every kept sync is after the offset
 * (too old to translate); false when nothing can be said (no sync of the
 * partition, or the topic not read to its end yet). */
bool tb_mirror_syncs_translate(const tb_mirror_syncs_t *store, const char *topic,
                               int32_t partition, int64_t upstream, int64_t *downstream);

/* Creates topic on rk's cluster when it does not exist, with partitions
 * and replication_factor and configs (an object of strings, may be NULL);
 * when it exists with fewer partitions, adds them. Returns 0, or -1 with
 * errstr. */
int tb_mirror_ensure_topic(rd_kafka_t *rk, const char *topic, int partitions,
                           int replication_factor, const json_t *configs, int timeout_ms,
                           char *errstr, size_t errstr_size);

/* The partition count of topic on rk's cluster: 0 when it does not exist,
 * -1 with errstr when the cluster does not answer. */
int tb_mirror_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms,
                              char *errstr, size_t errstr_size);

/* MM2's sensor of a time (record-age-ms, replication-latency-ms,
 * checkpoint-latency-ms) in seconds, as every Connect time in ms is served
 * (docs/OPERATIONS.md): the last value under MM2's name, its -max, -min and
 * -avg over the last minute under MM2's names with _ms as _seconds (and
 * under MM2's _ms names in ms with metrics.milliseconds.names), all
 * windows over one histogram of tributary's own that keeps its extremes. */
typedef struct {
    tb_metric_def_t last, max, min, avg;
    tb_metric_def_t observed; /* the histogram */
} tb_mirror_timing_defs_t;

#define TB_MIRROR_TIMING_BUCKET_COUNT 10
extern const double tb_mirror_timing_buckets[TB_MIRROR_TIMING_BUCKET_COUNT];
/* a poll's times are gathered in a tb_observations_t, which holds this many */
_Static_assert(TB_MIRROR_TIMING_BUCKET_COUNT <= TB_OBSERVATIONS_BOUNDS,
               "a mirror timing's buckets fit a batch of observations");

#define TB_MIRROR_TIMING_DEF(metric, labelled, text)                                     \
    {                                                                                    \
        .name = metric, .type = TB_METRIC_UNTYPED, .help = text, .labels = labelled,     \
        .ms_name = true                                                                  \
    }
/* The defs of MM2's <attribute>-ms of the MBean kafka.connect.mirror
 * <group> (e.g. "source_connector", "record_age"), what describes it. */
#define TB_MIRROR_TIMING_DEFS(group, attribute, labelled, what)                          \
    {                                                                                    \
        .last =                                                                          \
            TB_MIRROR_TIMING_DEF("kafka_connect_mirror_" group "_" attribute "_seconds", \
                                 labelled, what " (the last one's)."),                   \
        .max = TB_MIRROR_TIMING_DEF("kafka_connect_mirror_" group "_" attribute          \
                                    "_seconds_max",                                      \
                                    labelled, what " (the largest, last minute)."),      \
        .min = TB_MIRROR_TIMING_DEF("kafka_connect_mirror_" group "_" attribute          \
                                    "_seconds_min",                                      \
                                    labelled, what " (the smallest, last minute)."),     \
        .avg = TB_MIRROR_TIMING_DEF("kafka_connect_mirror_" group "_" attribute          \
                                    "_seconds_avg",                                      \
                                    labelled, what " (the mean, last minute)."),         \
        .observed = {.name = "tributary_mirror_" attribute "_seconds",                   \
                     .type = TB_METRIC_HISTOGRAM,                                        \
                     .help = what ".",                                                   \
                     .labels = labelled,                                                 \
                     .buckets = tb_mirror_timing_buckets,                                \
                     .bucket_count = TB_MIRROR_TIMING_BUCKET_COUNT,                      \
                     .keep_max = true,                                                   \
                     .keep_min = true},                                                  \
    }

/* The series of one sensor; owned, released by tb_mirror_timing_stop().
 * With the times gathered since the last publication, by the one thread
 * that updates it. */
typedef struct {
    tb_series_t *last, *observed, *max, *min, *avg;
    const tb_metric_def_t *def; /* of observed */
    tb_observations_t batch;
    double latest; /* the batch's last time */
} tb_mirror_timing_t;

/* Makes the series of defs with these label values (NULL ones out of
 * memory: their updates are no-ops). */
void tb_mirror_timing_start(tb_mirror_timing_t *timing,
                            const tb_mirror_timing_defs_t *defs,
                            const char *const *values);

/* One time, in seconds, published at once: lock-free, no allocation. */
void tb_mirror_timing_record(tb_mirror_timing_t *timing, double seconds);

/* One time, in seconds, gathered for the next tb_mirror_timing_publish():
 * no atomic, no clock read, no allocation. */
void tb_mirror_timing_add(tb_mirror_timing_t *timing, double seconds);

/* Publishes the times gathered since the last call, as that many
 * tb_mirror_timing_record() calls would (the last value the last one's);
 * none gathered: a no-op. */
void tb_mirror_timing_publish(tb_mirror_timing_t *timing);

void tb_mirror_timing_stop(tb_mirror_timing_t *timing);

#endif
