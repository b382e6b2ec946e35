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
    /* MirrorSourceConnector */
    const json_t *topics;
    const json_t *topics_exclude;
    const json_t *config_exclude;
    int replication_factor;
    bool refresh_topics;
    long long refresh_topics_s;
    bool sync_configs;
    bool emit_offset_syncs;
    int offset_syncs_location; /* 0: source cluster, 1: target */
    int offset_syncs_rf;
    long long offset_lag_max;
    bool heartbeats_replication;
    long long admin_timeout_ms;
    /* MirrorHeartbeatConnector */
    long long emit_heartbeats_s;
    int heartbeats_rf;
} tb_mirror_settings_t;

/* The keys of each connector, as MM2 defines them (defaults included). */
extern const tb_config_table_t tb_mirror_source_table;
extern const tb_config_table_t tb_mirror_heartbeat_table;

/* Checks across keys shared by the connectors (tb_plugin_t.validate). */
void tb_mirror_validate(const json_t *values, json_t *errors);

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

/* The offset-syncs topic of the clusters,
 * "mm2-offset-syncs<s><target alias><s>internal" with s the internal
 * separator, new (free()). */
char *tb_mirror_offset_syncs_topic(const tb_mirror_names_t *names);

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
void tb_mirror_filter_free(tb_mirror_filter_t *filter);

/* Whether a topic config property is copied to the remote topic
 * (config.properties.exclude). Patterns compiled per call: configs are
 * synced seldom. */
bool tb_mirror_config_copied(const json_t *exclude, const char *property);

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
uint8_t *tb_mirror_put_i16(uint8_t *p, int16_t v);
uint8_t *tb_mirror_put_i32(uint8_t *p, int32_t v);
uint8_t *tb_mirror_put_i64(uint8_t *p, int64_t v);

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

#endif
