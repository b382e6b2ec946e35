/*
 * The Kafka clients of MM2's two clusters, their admin requests (topics
 * and partitions), and MM2's Struct encodings (tb_mirror.h).
 */
#include <stdio.h>
#include <string.h>

#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/mirror/tb_mirror.h"
#include "core/tb_log.h"

/* Copies the client keys of config under prefix into props, the prefix
 * taken off (MM2's own keys there, source.cluster.alias, aside), and
 * records where each came from in origins. With connection_only, as MM2
 * does under <side>.cluster., only the connection keys: MM2's dedicated
 * mode writes there the cluster's worker keys as well, which its clients
 * leave out. */
static void take_prefixed(const json_t *config, const char *prefix, bool connection_only,
                          json_t *props, json_t *origins)
{
    const char *key;
    const json_t *value;
    size_t n = strlen(prefix);
    const tb_config_table_t *const tables[] = {
        &tb_mirror_source_table, &tb_mirror_heartbeat_table, &tb_mirror_checkpoint_table};
    char left_out[512] = "";
    size_t used = 0;
    json_object_foreach ((json_t *)config, key, value) {
        if (strncmp(key, prefix, n) != 0 || key[n] == '\0' || !json_is_string(value) ||
            (strcmp(key + n, "bootstrap.servers") != 0 &&
             tb_config_find(tables, 3, key) != NULL)) {
            continue;
        }
        if (connection_only && !tb_java_client_key_is_connection(key + n)) {
            if (used < sizeof(left_out)) {
                used += (size_t)snprintf(left_out + used, sizeof(left_out) - used, "%s%s",
                                         used > 0 ? ", " : "", key);
            }
            continue;
        }
        json_object_set(props, key + n, (json_t *)value);
        json_object_set_new(origins, key + n, json_string(key));
    }
    if (used > 0) {
        TB_LOG(
            TB_LOG_WARN, "tributary.mirror",
            "%s left out of the client: under %s* only the connection keys "
            "(bootstrap.servers, security.protocol, ssl.*, sasl.*) reach the clients, as "
            "in MirrorMaker 2; a client key goes under the consumer.* or producer.* "
            "prefix of that side",
            left_out, prefix);
    }
}

rd_kafka_t *tb_mirror_client(const json_t *config, const char *side, rd_kafka_type_t type,
                             const json_t *extra, char *errstr, size_t errstr_size)
{
    char prefix[64];
    const char *role = type == RD_KAFKA_CONSUMER ? "consumer" : "producer";
    tb_client_role_t client_role =
        type == RD_KAFKA_CONSUMER ? TB_CLIENT_CONSUMER : TB_CLIENT_PRODUCER;
    json_t *props = extra != NULL ? json_deep_copy(extra) : json_object();
    json_t *origins = json_object();
    json_t *errors = json_object();
    rd_kafka_t *rk = NULL;
    rd_kafka_conf_t *conf = NULL;

    snprintf(prefix, sizeof(prefix), "%s.cluster.", side);
    take_prefixed(config, prefix, true, props, origins);
    snprintf(prefix, sizeof(prefix), "%s.%s.", side, role);
    take_prefixed(config, prefix, false, props, origins);
    if (tb_java_client_keys_translate(client_role, props, origins, errors) != 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        goto fail;
    }
    /* what the runtime takes out of a consumer's keys itself */
    json_object_del(props, TB_JAVA_MAX_POLL_RECORDS);
    conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        goto fail;
    }
    rk = rd_kafka_new(type, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
    }
fail:
    json_decref(errors);
    json_decref(origins);
    json_decref(props);
    return rk;
}

uint8_t *tb_mirror_put_i16(uint8_t *p, int16_t v)
{
    uint16_t u = (uint16_t)v;
    p[0] = (uint8_t)(u >> 8);
    p[1] = (uint8_t)u;
    return p + 2;
}

uint8_t *tb_mirror_put_i32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(u >> (24 - 8 * i));
    }
    return p + 4;
}

uint8_t *tb_mirror_put_i64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(u >> (56 - 8 * i));
    }
    return p + 8;
}

bool tb_mirror_get_i16(const uint8_t **p, const uint8_t *end, int16_t *v)
{
    if (end - *p < 2) {
        return false;
    }
    *v = (int16_t)(uint16_t)(((unsigned)(*p)[0] << 8) | (*p)[1]);
    *p += 2;
    return true;
}

bool tb_mirror_get_i32(const uint8_t **p, const uint8_t *end, int32_t *v)
{
    uint32_t u = 0;
    if (end - *p < 4) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        u = (u << 8) | (*p)[i];
    }
    *v = (int32_t)u;
    *p += 4;
    return true;
}

bool tb_mirror_get_i64(const uint8_t **p, const uint8_t *end, int64_t *v)
{
    uint64_t u = 0;
    if (end - *p < 8) {
        return false;
    }
    for (int i = 0; i < 8; i++) {
        u = (u << 8) | (*p)[i];
    }
    *v = (int64_t)u;
    *p += 8;
    return true;
}

bool tb_mirror_get_stringn(const uint8_t **p, const uint8_t *end, char **s, size_t *len)
{
    int16_t n;
    const uint8_t *at = *p;
    if (!tb_mirror_get_i16(&at, end, &n) || n < 0 || end - at < n ||
        (*s = malloc((size_t)n + 1)) == NULL) {
        return false;
    }
    memcpy(*s, at, (size_t)n);
    (*s)[n] = '\0';
    if (len != NULL) {
        *len = (size_t)n;
    }
    *p = at + n;
    return true;
}

bool tb_mirror_get_string(const uint8_t **p, const uint8_t *end, char **s)
{
    return tb_mirror_get_stringn(p, end, s, NULL);
}

uint8_t *tb_mirror_put_stringn(uint8_t *p, const char *s, size_t len)
{
    p = tb_mirror_put_i16(p, (int16_t)len);
    memcpy(p, s, len);
    return p + len;
}

uint8_t *tb_mirror_put_string(uint8_t *p, const char *s)
{
    return tb_mirror_put_stringn(p, s, strlen(s));
}

int tb_mirror_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms,
                              char *errstr, size_t errstr_size)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    int count = -1;
    if (rkt == NULL) {
        snprintf(errstr, errstr_size, "topic %s: %s", topic,
                 rd_kafka_err2str(rd_kafka_last_error()));
        return -1;
    }
    /* asking for one topic does not create it (the request allows no auto
     * creation from librdkafka's side for a topic it only describes) */
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "metadata of topic %s: %s", topic,
                 rd_kafka_err2str(err));
    } else if (md->topic_cnt == 1 &&
               (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                md->topics[0].err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)) {
        count = md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ? 0 : -1;
        snprintf(errstr, errstr_size, "topic %s: %s", topic,
                 rd_kafka_err2str(md->topics[0].err));
    } else if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        count = md->topics[0].partition_cnt;
    } else {
        snprintf(errstr, errstr_size, "metadata of topic %s: %s", topic,
                 md->topic_cnt == 1 ? rd_kafka_err2str(md->topics[0].err) : "no answer");
    }
    if (md != NULL) {
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    return count;
}

/* Waits for the result of an admin request on queue; its error (the
 * request's, else the one topic's) with the reason in errstr. */
static rd_kafka_resp_err_t admin_result(rd_kafka_queue_t *queue, int timeout_ms,
                                        bool create, char *errstr, size_t errstr_size)
{
    rd_kafka_event_t *ev = rd_kafka_queue_poll(queue, timeout_ms + 5000);
    rd_kafka_resp_err_t err;
    size_t count = 0;
    const rd_kafka_topic_result_t **results = NULL;
    if (ev == NULL) {
        snprintf(errstr, errstr_size, "no answer in %d ms", timeout_ms);
        return RD_KAFKA_RESP_ERR__TIMED_OUT;
    }
    err = rd_kafka_event_error(ev);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "%s", rd_kafka_event_error_string(ev));
    } else {
        results = create ? rd_kafka_CreateTopics_result_topics(
                               rd_kafka_event_CreateTopics_result(ev), &count)
                         : rd_kafka_CreatePartitions_result_topics(
                               rd_kafka_event_CreatePartitions_result(ev), &count);
        err = count == 1 ? rd_kafka_topic_result_error(results[0])
                         : RD_KAFKA_RESP_ERR__FAIL;
        const char *message =
            count == 1 ? rd_kafka_topic_result_error_string(results[0]) : NULL;
        snprintf(errstr, errstr_size, "%s",
                 message != NULL ? message : rd_kafka_err2str(err));
    }
    rd_kafka_event_destroy(ev);
    return err;
}

/* One CreateTopics or CreatePartitions request for topic. */
static rd_kafka_resp_err_t admin_topic(rd_kafka_t *rk, const char *topic, int partitions,
                                       int replication_factor, const json_t *configs,
                                       int timeout_ms, char *errstr, size_t errstr_size)
{
    bool create = replication_factor != 0;
    rd_kafka_queue_t *queue = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *options = rd_kafka_AdminOptions_new(
        rk, create ? RD_KAFKA_ADMIN_OP_CREATETOPICS : RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
    rd_kafka_NewTopic_t *new_topic = NULL;
    rd_kafka_NewPartitions_t *new_partitions = NULL;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__INVALID_ARG;
    rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, NULL, 0);
    rd_kafka_AdminOptions_set_operation_timeout(options, timeout_ms, NULL, 0);
    if (create) {
        new_topic = rd_kafka_NewTopic_new(topic, partitions, replication_factor, errstr,
                                          errstr_size);
        const char *name;
        const json_t *value;
        json_object_foreach ((json_t *)configs, name, value) {
            if (new_topic != NULL) {
                rd_kafka_NewTopic_set_config(new_topic, name, json_string_value(value));
            }
        }
        if (new_topic != NULL) {
            rd_kafka_CreateTopics(rk, &new_topic, 1, options, queue);
            err = admin_result(queue, timeout_ms, true, errstr, errstr_size);
        }
    } else {
        new_partitions =
            rd_kafka_NewPartitions_new(topic, (size_t)partitions, errstr, errstr_size);
        if (new_partitions != NULL) {
            rd_kafka_CreatePartitions(rk, &new_partitions, 1, options, queue);
            err = admin_result(queue, timeout_ms, false, errstr, errstr_size);
        }
    }
    if (new_topic != NULL) {
        rd_kafka_NewTopic_destroy(new_topic);
    }
    if (new_partitions != NULL) {
        rd_kafka_NewPartitions_destroy(new_partitions);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    return err;
}

int tb_mirror_ensure_topic(rd_kafka_t *rk, const char *topic, int partitions,
                           int replication_factor, const json_t *configs, int timeout_ms,
                           char *errstr, size_t errstr_size)
{
    char reason[512];
    int have = partitions;
    /* created first: asking for the metadata of a topic that does not exist
     * makes a broker with auto.create.topics.enable create it, with its
     * default partitions and none of the configs */
    rd_kafka_resp_err_t err = admin_topic(rk, topic, partitions, replication_factor,
                                          configs, timeout_ms, reason, sizeof(reason));
    if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        have = tb_mirror_partition_count(rk, topic, timeout_ms, reason, sizeof(reason));
        err = RD_KAFKA_RESP_ERR_NO_ERROR;
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && have > 0 && have < partitions) {
        err = admin_topic(rk, topic, partitions, 0, NULL, timeout_ms, reason,
                          sizeof(reason));
        if (err == RD_KAFKA_RESP_ERR_INVALID_PARTITIONS &&
            tb_mirror_partition_count(rk, topic, timeout_ms, reason, sizeof(reason)) >=
                partitions) {
            err = RD_KAFKA_RESP_ERR_NO_ERROR; /* another task added them */
        }
    }
    if (have <= 0 || err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "cannot make topic %s with %d partitions: %s",
                 topic, partitions, reason);
        return -1;
    }
    return 0;
}
