/*
 * MirrorHeartbeatConnector - writes a heartbeat every
 * emit.heartbeats.interval.seconds to the "heartbeats" topic of the
 * worker's cluster (the target), as MirrorMaker 2's does: the key is the
 * Struct {sourceClusterAlias, targetClusterAlias}, the value the version
 * (INT16 0) then {timestamp INT64}, the record's timestamp that time, its
 * source partition {"sourceClusterAlias","targetClusterAlias"} and offset
 * {"offset":0}. A MirrorSourceConnector of another flow copies the topic
 * on (heartbeats.replication.enabled), which is how MM2's monitoring sees
 * that a flow is alive and what RemoteClusterUtils follows upstream.
 *
 * One task, none with emit.heartbeats.enabled=false. The task makes the
 * topic on the target when it is missing (one compacted partition,
 * heartbeats.topic.replication.factor), and writes each heartbeat from
 * buffers of its own (bytes_borrowed), built once for the key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/mirror/tb_mirror.h"
#include "connectors/tb_plugin.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

#define LOGGER "tributary.mirror"
#define VALUE_SIZE (2 + 8) /* version, timestamp */

typedef struct {
    json_t *values; /* parsed keys; settings' strings point into them */
    tb_mirror_settings_t settings;
    json_t *source_partition; /* {"sourceClusterAlias","targetClusterAlias"} */
    uint8_t *key;
    size_t key_len;
    uint8_t value[VALUE_SIZE];
    int64_t next_ms; /* monotonic time of the next heartbeat */
} mirror_heartbeat_t;

static json_t *task_configs(const json_t *config, int max_tasks)
{
    json_t *tasks = json_array();
    tb_mirror_settings_t settings = {.emit_heartbeats = true};
    char errstr[256];
    json_t *values = tb_config_load(&tb_mirror_heartbeat_table, config, &settings, errstr,
                                    sizeof(errstr));
    json_decref(values); /* only the boolean is read */
    (void)max_tasks;
    if (settings.emit_heartbeats) {
        json_array_append_new(tasks, json_deep_copy(config));
    }
    return tasks;
}

static void task_stop(void *opaque);

/* Makes the heartbeats topic on the target unless it exists. -1 with
 * errstr. */
static int make_topic(const json_t *config, const tb_mirror_settings_t *settings,
                      char *errstr, size_t errstr_size)
{
    char reason[512];
    json_t *extra =
        json_pack("{s:s,s:s}", "bootstrap.servers", settings->target_bootstrap,
                  "allow.auto.create.topics", "false");
    json_t *compact = json_pack("{s:s}", "cleanup.policy", "compact");
    int rc = -1;
    rd_kafka_t *admin = tb_mirror_client(config, "target", RD_KAFKA_PRODUCER, extra,
                                         reason, sizeof(reason));
    if (admin == NULL) {
        snprintf(errstr, errstr_size, "cannot make the admin client of cluster %s: %s",
                 settings->target_alias, reason);
    } else if (tb_mirror_ensure_topic(
                   admin, TB_MIRROR_HEARTBEATS_TOPIC, 1, settings->heartbeats_rf, compact,
                   (int)settings->admin_timeout_ms, reason, sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size,
                 "on cluster %s, %s (heartbeats.topic.replication.factor)",
                 settings->target_alias, reason);
    } else {
        rc = 0;
    }
    if (admin != NULL) {
        rd_kafka_destroy(admin);
    }
    json_decref(compact);
    json_decref(extra);
    return rc;
}

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    mirror_heartbeat_t *h = calloc(1, sizeof(*h));
    (void)ctx;
    h->values = tb_config_load(&tb_mirror_heartbeat_table, config, &h->settings, errstr,
                               errstr_size);
    if (h->values == NULL || make_topic(config, &h->settings, errstr, errstr_size) != 0) {
        goto fail;
    }
    h->source_partition =
        json_pack("{s:s,s:s}", "sourceClusterAlias", h->settings.source_alias,
                  "targetClusterAlias", h->settings.target_alias);
    h->key_len =
        2 + strlen(h->settings.source_alias) + 2 + strlen(h->settings.target_alias);
    h->key = malloc(h->key_len);
    tb_mirror_put_string(tb_mirror_put_string(h->key, h->settings.source_alias),
                         h->settings.target_alias);
    h->next_ms = tb_monotonic_ms() + h->settings.emit_heartbeats_s * 1000;
    *out = h;
    return 0;

fail:
    task_stop(h);
    return -1;
}

static int poll(void *opaque, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size)
{
    mirror_heartbeat_t *h = opaque;
    int64_t now = tb_monotonic_ms();
    (void)max;
    (void)errstr;
    (void)errstr_size;
    *count = 0;
    if (now < h->next_ms) {
        *wake_ms = h->next_ms - now;
        return 0;
    }
    int64_t timestamp = tb_wall_ms();
    tb_mirror_put_i64(tb_mirror_put_i16(h->value, 0), timestamp);
    out[0] = (tb_source_record_t){
        .topic = TB_MIRROR_HEARTBEATS_TOPIC,
        .partition = 0,
        .key = h->key,
        .key_len = h->key_len,
        .key_kind = TB_DATA_BYTES,
        .value = h->value,
        .value_len = VALUE_SIZE,
        .value_kind = TB_DATA_BYTES,
        .bytes_borrowed = true,
        .source_partition = json_incref(h->source_partition),
        .source_offset = json_pack("{s:i}", "offset", 0),
        .timestamp = timestamp,
    };
    *count = 1;
    h->next_ms = now + h->settings.emit_heartbeats_s * 1000;
    return 0;
}

static void task_stop(void *opaque)
{
    mirror_heartbeat_t *h = opaque;
    json_decref(h->source_partition);
    json_decref(h->values);
    free(h->key);
    free(h);
}

static const char *const mirror_heartbeat_aliases[] = {"MirrorHeartbeatConnector",
                                                       "MirrorHeartbeat", NULL};

const tb_plugin_t tb_mirror_heartbeat_plugin = {
    .class_name = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
    .aliases = mirror_heartbeat_aliases,
    .kind = TB_PLUGIN_SOURCE,
    .version = TB_MIRROR_VERSION,
    .config = &tb_mirror_heartbeat_table,
    .validate = tb_mirror_heartbeat_validate,
    .task_configs = task_configs,
    .task_start = task_start,
    .poll = poll,
    .task_stop = task_stop,
};
