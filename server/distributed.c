#include "server/tb_distributed.h"

#include <stdio.h>
#include <string.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "store/kafka/kafka_log.h"
#include "store/kafka/tb_store_kafka.h"

/* How long the check of the internal topics waits for the cluster. */
#define CHECK_TIMEOUT_MS 30000

bool tb_distributed_enabled(const tb_worker_settings_t *settings)
{
    const char *group = settings->group_id;
    return group != NULL && group[0] != '\0';
}

/* The worker's client keys every client shares (bootstrap and security),
 * without those of one client role (producer., consumer., admin.): the
 * store's and the group's clients. New reference. */
static json_t *common_props(const json_t *kafka_props)
{
    static const char *const roles[] = {"producer.", "consumer.", "admin."};
    json_t *props = json_object();
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)kafka_props, key, value) {
        bool of_role = false;
        for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
            of_role = of_role || strncmp(key, roles[i], strlen(roles[i])) == 0;
        }
        if (!of_role) {
            json_object_set(props, key, value);
        }
    }
    return props;
}

/* topic, the value of key; NULL with errstr when it is unset. */
static const char *topic_of(const char *topic, const char *key, char *errstr,
                            size_t errstr_size)
{
    if (topic == NULL || topic[0] == '\0') {
        snprintf(errstr, errstr_size,
                 "%s is required in distributed mode (group.id is set)", key);
        return NULL;
    }
    return topic;
}

tb_eos_settings_t tb_distributed_eos_settings(const tb_worker_settings_t *settings,
                                              const json_t *raw)
{
    const char *topic = settings->offset_storage_topic;
    bool distributed = tb_distributed_enabled(settings);
    bool replication_set = tb_config_given(&tb_worker_config_table, raw, settings,
                                           &settings->offset_storage_replication_factor);
    return (tb_eos_settings_t){
        .transactional_id_prefix = distributed ? settings->group_id : "connect",
        .offsets_topic =
            {
                .name = topic != NULL && topic[0] != '\0' ? topic : "tributary-offsets",
                .partitions = settings->offset_storage_partitions,
                .replication_factor = distributed || replication_set
                                          ? settings->offset_storage_replication_factor
                                          : -1,
                .create = !distributed,
            },
        .offsets_topic_is_store = distributed,
    };
}

/* With internal.topics.automatic.creation.enable=false, Connect 4.4
 * (KIP-1209) refuses to start when an internal topic is missing, naming
 * them; so does this, for the three and tributary's coordination topic.
 * Returns -1 with errstr when any is missing or the cluster did not
 * answer. */
static int check_internal_topics(const char *group_id, const rd_kafka_conf_t *conf,
                                 const char *const *topics, char *errstr,
                                 size_t errstr_size)
{
    static const char *const roles[] = {"config.storage.topic", "offset.storage.topic",
                                        "status.storage.topic", "group.id"};
    char coordination[512];
    char names[1024] = "";
    bool missing[4];
    const char *all[4] = {topics[0], topics[1], topics[2], coordination};
    snprintf(coordination, sizeof(coordination), "%s.tributary-cluster", group_id);
    if (tb_kafka_log_find_missing(conf, all, 4, missing, CHECK_TIMEOUT_MS, errstr,
                                  errstr_size) != 0) {
        return -1;
    }
    for (size_t i = 0; i < 4; i++) {
        size_t len = strlen(names);
        if (missing[i]) {
            snprintf(names + len, sizeof(names) - len, "%s%s (%s)", len > 0 ? ", " : "",
                     all[i], roles[i]);
        }
    }
    if (names[0] == '\0') {
        return 0;
    }
    snprintf(errstr, errstr_size,
             "internal.topics.automatic.creation.enable is false and these internal "
             "topics do not exist: %s; create them, compacted (the config and "
             "coordination topics with one partition), or set the key to true",
             names);
    return -1;
}

tb_store_t *tb_distributed_store_open(const tb_worker_settings_t *settings,
                                      const json_t *kafka_props, const char *worker_id,
                                      char *errstr, size_t errstr_size)
{
    const char *config = topic_of(settings->config_storage_topic, "config.storage.topic",
                                  errstr, errstr_size);
    const char *offsets = config != NULL
                              ? topic_of(settings->offset_storage_topic,
                                         "offset.storage.topic", errstr, errstr_size)
                              : NULL;
    const char *status = offsets != NULL
                             ? topic_of(settings->status_storage_topic,
                                        "status.storage.topic", errstr, errstr_size)
                             : NULL;
    if (status == NULL) {
        return NULL;
    }
    json_t *props = common_props(kafka_props);
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    bool create = settings->internal_topics_automatic_creation_enable;
    const char *topics[] = {config, offsets, status};
    if (conf == NULL) {
        return NULL;
    }
    if (!create && check_internal_topics(settings->group_id, conf, topics, errstr,
                                         errstr_size) != 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    tb_store_kafka_options_t options = {
        .conf = conf,
        .config = {config, 1, settings->config_storage_replication_factor},
        .offsets = {offsets, settings->offset_storage_partitions,
                    settings->offset_storage_replication_factor},
        .status = {status, settings->status_storage_partitions,
                   settings->status_storage_replication_factor},
        .worker_id = worker_id,
        .generation_of_topic = true,
        .no_topic_creation = !create,
    };
    tb_store_t *store = tb_store_kafka_open(&options, errstr, errstr_size);
    rd_kafka_conf_destroy(conf);
    return store;
}

/* Connect's check: a worker verifies what it signs itself. */
static int check_signature_keys(const tb_worker_settings_t *settings, char *errstr,
                                size_t errstr_size)
{
    const char *signing = settings->inter_worker_signature_algorithm;
    size_t i;
    json_t *item;
    json_array_foreach ((json_t *)settings->inter_worker_verification_algorithms, i,
                        item) {
        if (strcmp(json_string_value(item), signing) == 0) {
            return 0;
        }
    }
    snprintf(errstr, errstr_size,
             "inter.worker.verification.algorithms must include "
             "inter.worker.signature.algorithm %s",
             signing);
    return -1;
}

tb_cluster_t *tb_distributed_join(const tb_worker_settings_t *settings,
                                  const json_t *kafka_props, tb_herder_t *herder,
                                  const char *worker_url, char *errstr,
                                  size_t errstr_size)
{
    if (check_signature_keys(settings, errstr, errstr_size) != 0) {
        return NULL;
    }
    json_t *props = common_props(kafka_props);
    tb_cluster_options_t options = {
        .herder = herder,
        .group_id = settings->group_id,
        .worker_url = worker_url,
        .client_props = props,
        .replication_factor = settings->config_storage_replication_factor,
        .no_topic_creation = !settings->internal_topics_automatic_creation_enable,
        .session_timeout_ms = settings->session_timeout_ms,
        .heartbeat_interval_ms = settings->heartbeat_interval_ms,
        .rebalance_delay_ms = settings->scheduled_rebalance_max_delay_ms,
        .session_keys =
            {
                .config_topic = settings->config_storage_topic,
                .algorithm = settings->inter_worker_key_generation_algorithm,
                .key_bits = settings->inter_worker_key_size,
                .ttl_ms = settings->inter_worker_key_ttl_ms,
            },
    };
    tb_cluster_t *cluster = tb_cluster_start(&options, errstr, errstr_size);
    json_decref(props);
    return cluster;
}
