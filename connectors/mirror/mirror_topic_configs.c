/*
 * The configs of source topics that the MirrorSourceConnector copies to
 * their remote topics (tb_mirror.h): those it makes a remote topic with,
 * and MM2's periodic sync (its syncTopicConfigs) with librdkafka's
 * incremental alter configs on the target.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/mirror/tb_mirror.h"
#include "core/tb_log.h"

#define LOGGER "tributary.mirror"
#define ANSWER_GRACE_MS 5000 /* beyond the request timeout, for librdkafka's answer */

int tb_mirror_topic_configs_init(tb_mirror_topic_configs_t *tc, rd_kafka_t *source,
                                 rd_kafka_t *target, const tb_mirror_settings_t *settings,
                                 const char *connector, int task, char *errstr,
                                 size_t errstr_size)
{
    *tc = (tb_mirror_topic_configs_t){.source = source,
                                      .target = target,
                                      .settings = settings,
                                      .connector = connector,
                                      .task = task,
                                      .failing = json_object()};
    return tb_mirror_config_filter_init(&tc->filter, settings, errstr, errstr_size);
}

void tb_mirror_topic_configs_free(tb_mirror_topic_configs_t *tc)
{
    tb_mirror_filter_free(&tc->filter);
    json_decref(tc->failing);
    tc->failing = NULL;
}

/* Logs a failure at WARN once while it lasts: again only when its reason
 * under key (a topic, or a request's name) changes. */
static void report(tb_mirror_topic_configs_t *tc, const char *key, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    const char *before = json_string_value(json_object_get(tc->failing, key));
    if (before != NULL && strcmp(before, text) == 0) {
        return;
    }
    json_object_set_new(tc->failing, key, json_string(text));
    TB_LOG_TASK(TB_LOG_WARN, LOGGER, tc->connector, tc->task, "%s", text);
}

/* The failure under key is over. */
static void recovered(tb_mirror_topic_configs_t *tc, const char *key)
{
    if (json_object_get(tc->failing, key) != NULL) {
        json_object_del(tc->failing, key);
        TB_LOG_TASK(TB_LOG_INFO, LOGGER, tc->connector, tc->task,
                    "topic configs: %s works again", key);
    }
}

/* The answer to an admin request on queue, or NULL with the reason in
 * errstr (the request's error included: the event is then destroyed). */
static rd_kafka_event_t *answer(rd_kafka_queue_t *queue, int timeout_ms, char *errstr,
                                size_t errstr_size)
{
    rd_kafka_event_t *ev = rd_kafka_queue_poll(queue, timeout_ms + ANSWER_GRACE_MS);
    if (ev == NULL) {
        snprintf(errstr, errstr_size, "no answer in %d ms", timeout_ms);
    } else if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "%s", rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        ev = NULL;
    }
    return ev;
}

/* One DescribeConfigs of count topics on rk's cluster: the answer (destroy
 * it), whose resources are in *resources, or NULL with errstr. */
static rd_kafka_event_t *describe(rd_kafka_t *rk, const char *const *topics, size_t count,
                                  int timeout_ms,
                                  const rd_kafka_ConfigResource_t ***resources,
                                  size_t *resource_count, char *errstr,
                                  size_t errstr_size)
{
    rd_kafka_ConfigResource_t **asked = calloc(count, sizeof(*asked));
    rd_kafka_queue_t *queue = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *options =
        rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_event_t *ev = NULL;
    *resource_count = 0;
    if (asked == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < count; i++) {
        asked[i] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topics[i]);
    }
    rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, NULL, 0);
    rd_kafka_DescribeConfigs(rk, asked, count, options, queue);
    ev = answer(queue, timeout_ms, errstr, errstr_size);
    if (ev != NULL) {
        *resources = rd_kafka_DescribeConfigs_result_resources(
            rd_kafka_event_DescribeConfigs_result(ev), resource_count);
    }
fail:
    for (size_t i = 0; asked != NULL && i < count; i++) {
        rd_kafka_ConfigResource_destroy(asked[i]);
    }
    free(asked);
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    return ev;
}

/* The resource of topic among resources, NULL when absent. */
static const rd_kafka_ConfigResource_t *
find_resource(const rd_kafka_ConfigResource_t **resources, size_t count,
              const char *topic)
{
    for (size_t i = 0; i < count; i++) {
        if (strcmp(rd_kafka_ConfigResource_name(resources[i]), topic) == 0) {
            return resources[i];
        }
    }
    return NULL;
}

/* Whether MM2 copies a source topic's config entry, set or default (its
 * targetConfig): not read-only or sensitive, not the broker's static
 * config, not named by config.properties.exclude. */
static bool entry_copied(const tb_mirror_topic_configs_t *tc,
                         const rd_kafka_ConfigEntry_t *e)
{
    return !rd_kafka_ConfigEntry_is_read_only(e) &&
           !rd_kafka_ConfigEntry_is_sensitive(e) &&
           rd_kafka_ConfigEntry_source(e) !=
               RD_KAFKA_CONFIG_SOURCE_STATIC_BROKER_CONFIG &&
           tb_mirror_config_copied(&tc->filter, rd_kafka_ConfigEntry_name(e));
}

#define DEFAULTS_FROM_TARGET 1 /* use.defaults.from=target */

/* Whether the remote topic is to have the target's default for the entry:
 * at its default on the source (MM2's isDefault: nothing set for the topic
 * or the cluster) with use.defaults.from=target. */
static bool entry_unset(const tb_mirror_settings_t *settings,
                        const rd_kafka_ConfigEntry_t *e)
{
    return settings->defaults_from == DEFAULTS_FROM_TARGET &&
           (rd_kafka_ConfigEntry_is_default(e) ||
            rd_kafka_ConfigEntry_source(e) == RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
}

json_t *tb_mirror_topic_configs_create(tb_mirror_topic_configs_t *tc, const char *topic)
{
    char errstr[512];
    const rd_kafka_ConfigResource_t **resources = NULL;
    size_t count = 0, entries = 0;
    json_t *configs = NULL;
    rd_kafka_event_t *ev =
        describe(tc->source, &topic, 1, (int)tc->settings->admin_timeout_ms, &resources,
                 &count, errstr, sizeof(errstr));
    const rd_kafka_ConfigResource_t *resource =
        ev != NULL ? find_resource(resources, count, topic) : NULL;
    if (ev != NULL && resource == NULL) {
        snprintf(errstr, sizeof(errstr), "no result");
    } else if (resource != NULL && rd_kafka_ConfigResource_error(resource) != 0) {
        snprintf(errstr, sizeof(errstr), "%s",
                 rd_kafka_ConfigResource_error_string(resource));
    } else if (resource != NULL) {
        configs = json_object();
        const rd_kafka_ConfigEntry_t **list =
            rd_kafka_ConfigResource_configs(resource, &entries);
        for (size_t i = 0; i < entries; i++) {
            if (rd_kafka_ConfigEntry_value(list[i]) != NULL &&
                !entry_unset(tc->settings, list[i]) && entry_copied(tc, list[i])) {
                json_object_set_new(configs, rd_kafka_ConfigEntry_name(list[i]),
                                    json_string(rd_kafka_ConfigEntry_value(list[i])));
            }
        }
    }
    if (configs == NULL) {
        TB_LOG_TASK(TB_LOG_WARN, LOGGER, tc->connector, tc->task,
                    "cannot read the configs of topic %s on cluster %s (%s); its remote "
                    "topic is made without them",
                    topic, tc->settings->source_alias, errstr);
    }
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    return configs;
}

/* The configs set on the remote topic itself (name -> value), from its
 * described resource. */
static json_t *set_on_topic(const rd_kafka_ConfigResource_t *resource)
{
    size_t entries = 0;
    json_t *set = json_object();
    const rd_kafka_ConfigEntry_t **list =
        rd_kafka_ConfigResource_configs(resource, &entries);
    for (size_t i = 0; i < entries; i++) {
        const char *value = rd_kafka_ConfigEntry_value(list[i]);
        if (rd_kafka_ConfigEntry_source(list[i]) ==
                RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG &&
            value != NULL) {
            json_object_set_new(set, rd_kafka_ConfigEntry_name(list[i]),
                                json_string(value));
        }
    }
    return set;
}

/* Appends "name" or "name=value" to the list in buf (for the logs). */
static void list_add(char *buf, size_t size, const char *name, const char *value)
{
    size_t used = strlen(buf);
    if (used < size) {
        snprintf(buf + used, size - used, "%s%s%s%s", used > 0 ? ", " : "", name,
                 value != NULL ? "=" : "", value != NULL ? value : "");
    }
}

/* The operations that make the remote topic's configs (described in
 * target) MM2's targetConfig of the source topic's (in source): each
 * config copied and set on the source topic is set where the remote topic
 * has it otherwise; each one at its default on the source is deleted where
 * the remote topic has it set, which gives it the target's default (with
 * use.defaults.from=target, MM2's default; with source, it is set to the
 * source's default value). NULL when nothing is to change; else a new
 * resource (destroy it) and what changes in changes. */
static rd_kafka_ConfigResource_t *operations(tb_mirror_topic_configs_t *tc,
                                             const char *remote,
                                             const rd_kafka_ConfigResource_t *source,
                                             const rd_kafka_ConfigResource_t *target,
                                             char *changes, size_t changes_size)
{
    size_t entries = 0;
    json_t *set = set_on_topic(target);
    rd_kafka_ConfigResource_t *ops = NULL;
    const rd_kafka_ConfigEntry_t **list =
        rd_kafka_ConfigResource_configs(source, &entries);
    changes[0] = '\0';
    for (size_t i = 0; i < entries; i++) {
        const char *name = rd_kafka_ConfigEntry_name(list[i]);
        const char *value = rd_kafka_ConfigEntry_value(list[i]);
        const char *have = json_string_value(json_object_get(set, name));
        bool unset = entry_unset(tc->settings, list[i]);
        if (!entry_copied(tc, list[i]) || (!unset && value == NULL) ||
            (unset ? have == NULL : have != NULL && strcmp(have, value) == 0)) {
            continue;
        }
        if (ops == NULL) {
            ops = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, remote);
        }
        rd_kafka_error_t *error = rd_kafka_ConfigResource_add_incremental_config(
            ops, name,
            unset ? RD_KAFKA_ALTER_CONFIG_OP_TYPE_DELETE
                  : RD_KAFKA_ALTER_CONFIG_OP_TYPE_SET,
            unset ? NULL : value);
        if (error != NULL) {
            report(tc, remote, "cannot sync config %s of topic %s to cluster %s: %s",
                   name, remote, tc->settings->target_alias,
                   rd_kafka_error_string(error));
            rd_kafka_error_destroy(error);
            continue;
        }
        list_add(changes, changes_size, name, unset ? NULL : value);
    }
    json_decref(set);
    return ops;
}

/* Sends the operations to the target in one IncrementalAlterConfigs and
 * logs what each topic got, or why not, naming its configs. */
static void alter(tb_mirror_topic_configs_t *tc, rd_kafka_ConfigResource_t **ops,
                  size_t count, json_t *changes)
{
    char errstr[512];
    int timeout = (int)tc->settings->admin_timeout_ms;
    size_t done = 0;
    rd_kafka_queue_t *queue = rd_kafka_queue_new(tc->target);
    rd_kafka_AdminOptions_t *options =
        rd_kafka_AdminOptions_new(tc->target, RD_KAFKA_ADMIN_OP_INCREMENTALALTERCONFIGS);
    rd_kafka_AdminOptions_set_request_timeout(options, timeout, NULL, 0);
    rd_kafka_IncrementalAlterConfigs(tc->target, ops, count, options, queue);
    rd_kafka_event_t *ev = answer(queue, timeout, errstr, sizeof(errstr));
    const rd_kafka_ConfigResource_t **results =
        ev != NULL ? rd_kafka_IncrementalAlterConfigs_result_resources(
                         rd_kafka_event_IncrementalAlterConfigs_result(ev), &done)
                   : NULL;
    for (size_t i = 0; i < count; i++) {
        const char *remote = rd_kafka_ConfigResource_name(ops[i]);
        const char *what = json_string_value(json_object_get(changes, remote));
        const rd_kafka_ConfigResource_t *result = find_resource(results, done, remote);
        if (result != NULL && rd_kafka_ConfigResource_error(result) == 0) {
            recovered(tc, remote);
            TB_LOG_TASK(TB_LOG_INFO, LOGGER, tc->connector, tc->task,
                        "configs of topic %s on cluster %s synced from cluster %s: %s (a "
                        "name alone: deleted, the target's default)",
                        remote, tc->settings->target_alias, tc->settings->source_alias,
                        what);
        } else {
            report(tc, remote,
                   "cannot sync the configs of topic %s on cluster %s (%s): %s", remote,
                   tc->settings->target_alias, what,
                   result != NULL ? rd_kafka_ConfigResource_error_string(result)
                   : ev != NULL   ? "no result"
                                  : errstr);
        }
    }
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
}

void tb_mirror_topic_configs_sync(tb_mirror_topic_configs_t *tc,
                                  const char *const *topics, const char *const *remotes,
                                  size_t count)
{
    char errstr[512], changes[2048];
    int timeout = (int)tc->settings->admin_timeout_ms;
    const rd_kafka_ConfigResource_t **sources = NULL, **targets = NULL;
    size_t source_count = 0, target_count = 0, op_count = 0;
    rd_kafka_ConfigResource_t **ops = calloc(count, sizeof(*ops));
    json_t *described = json_object();
    rd_kafka_event_t *target_ev = NULL;
    rd_kafka_event_t *source_ev = NULL;
    if (count == 0 || ops == NULL) {
        goto fail;
    }
    source_ev = describe(tc->source, topics, count, timeout, &sources, &source_count,
                         errstr, sizeof(errstr));
    if (source_ev == NULL) {
        report(tc, "describe-source",
               "cannot read the topic configs of cluster %s to sync them (%s); trying "
               "again in %lld s",
               tc->settings->source_alias, errstr, tc->settings->sync_configs_s);
        goto fail;
    }
    recovered(tc, "describe-source");
    target_ev = describe(tc->target, remotes, count, timeout, &targets, &target_count,
                         errstr, sizeof(errstr));
    if (target_ev == NULL) {
        report(tc, "describe-target",
               "cannot read the remote topics' configs on cluster %s to sync them (%s); "
               "trying again in %lld s",
               tc->settings->target_alias, errstr, tc->settings->sync_configs_s);
        goto fail;
    }
    recovered(tc, "describe-target");
    for (size_t i = 0; i < count; i++) {
        const rd_kafka_ConfigResource_t *source =
            find_resource(sources, source_count, topics[i]);
        const rd_kafka_ConfigResource_t *target =
            find_resource(targets, target_count, remotes[i]);
        bool source_bad = source == NULL || rd_kafka_ConfigResource_error(source) != 0;
        const rd_kafka_ConfigResource_t *bad = source_bad ? source : target;
        if (source_bad || target == NULL || rd_kafka_ConfigResource_error(target) != 0) {
            report(tc, remotes[i],
                   "cannot read the configs of topic %s on cluster %s to sync them: %s",
                   source_bad ? topics[i] : remotes[i],
                   source_bad ? tc->settings->source_alias : tc->settings->target_alias,
                   bad != NULL ? rd_kafka_ConfigResource_error_string(bad) : "no result");
            continue;
        }
        rd_kafka_ConfigResource_t *topic_ops =
            operations(tc, remotes[i], source, target, changes, sizeof(changes));
        if (topic_ops != NULL) {
            ops[op_count++] = topic_ops;
            json_object_set_new(described, remotes[i], json_string(changes));
        } else {
            recovered(tc, remotes[i]);
        }
    }
    if (op_count > 0) {
        alter(tc, ops, op_count, described);
    }
fail:
    for (size_t i = 0; i < op_count; i++) {
        rd_kafka_ConfigResource_destroy(ops[i]);
    }
    free(ops);
    json_decref(described);
    if (source_ev != NULL) {
        rd_kafka_event_destroy(source_ev);
    }
    if (target_ev != NULL) {
        rd_kafka_event_destroy(target_ev);
    }
}
