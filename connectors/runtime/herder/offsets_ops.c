#include "connectors/runtime/herder/tb_offsets_ops.h"

#include <stdio.h>
#include <stdlib.h>

#include "connectors/kafka/tb_group_offsets.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/source/eos/tb_eos_offsets.h"
#include "core/tb_log.h"

tb_err_t tb_offsets_get(tb_store_t *store, const char *name, json_t **out, char *msg,
                        size_t msg_size)
{
    json_t *stored = tb_store_offsets_get(store, name, msg, msg_size);
    if (stored == NULL) {
        return TB_ERR_INTERNAL;
    }
    json_t *offsets = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach (stored, i, entry) {
        if (!tb_eos_offsets_is_reserved(json_object_get(entry, "partition"))) {
            json_array_append(offsets, entry);
        }
    }
    json_decref(stored);
    *out = json_pack("{s:o}", "offsets", offsets);
    return TB_OK;
}

/* Checks source offsets by Connect's rules (partition and offset are maps
 * of primitive values; a missing offset is null) and returns them in the
 * store's shape, or NULL with msg naming the problem. New reference. */
static json_t *source_offsets_of(const json_t *offsets, char *msg, size_t msg_size)
{
    json_t *out = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_t *offset = json_object_get(entry, "offset");
        json_t *maps[] = {partition, offset};
        if (!json_is_object(partition)) {
            snprintf(msg, msg_size, "The partition of entry %zu must be a map", i);
            goto fail;
        }
        if (tb_eos_offsets_is_reserved(partition)) {
            snprintf(msg, msg_size,
                     "The partition of entry %zu is reserved: tributary records there "
                     "how often the connector's offsets were changed, and each "
                     "exactly-once task's last transaction",
                     i);
            goto fail;
        }
        if (offset != NULL && !json_is_null(offset) && !json_is_object(offset)) {
            snprintf(msg, msg_size, "The offset of entry %zu must be a map or null", i);
            goto fail;
        }
        for (size_t m = 0; m < 2; m++) {
            const char *key;
            json_t *value;
            json_object_foreach (maps[m], key, value) {
                if (json_is_object(value) || json_is_array(value)) {
                    snprintf(msg, msg_size,
                             "Offsets may only contain primitive types as values, but "
                             "field '%s' of entry %zu is not",
                             key, i);
                    goto fail;
                }
            }
        }
        json_array_append_new(out, json_pack("{s:O, s:O}", "partition", partition,
                                             "offset", offset ? offset : json_null()));
    }
    return out;

fail:
    json_decref(out);
    return NULL;
}

/* A partition number as Connect takes it: an integer or a numeric string. */
static bool integer_of(const json_t *value, json_int_t *out)
{
    char *end;
    if (json_is_integer(value)) {
        *out = json_integer_value(value);
        return true;
    }
    const char *text = json_string_value(value);
    if (text == NULL || *text == '\0') {
        return false;
    }
    *out = strtoll(text, &end, 10);
    return *end == '\0';
}

/* Checks sink offsets by Connect's rules and returns them in the store's
 * shape; *group_ops gets the matching {"topic","partition","offset"} (offset
 * -1 deletes). NULL with msg on a bad shape. New references. */
static json_t *sink_offsets_of(const json_t *offsets, json_t **group_ops, char *msg,
                               size_t msg_size)
{
    json_t *out = json_array();
    *group_ops = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach ((json_t *)offsets, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_t *offset = json_object_get(entry, "offset");
        const char *topic = json_string_value(json_object_get(partition, "kafka_topic"));
        json_int_t number, position = -1;
        if (topic == NULL ||
            !integer_of(json_object_get(partition, "kafka_partition"), &number)) {
            snprintf(msg, msg_size,
                     "The partition for a sink connector offset must contain the keys "
                     "'kafka_topic' and 'kafka_partition'");
            goto fail;
        }
        if (offset != NULL && !json_is_null(offset) &&
            (!integer_of(json_object_get(offset, "kafka_offset"), &position) ||
             position < 0)) {
            snprintf(msg, msg_size,
                     "The offset for a sink connector should either be null or contain "
                     "the key 'kafka_offset' with a non-negative number");
            goto fail;
        }
        json_array_append_new(
            out, json_pack("{s:{s:s, s:I}, s:o}", "partition", "kafka_topic", topic,
                           "kafka_partition", number, "offset",
                           position >= 0 ? json_pack("{s:I}", "kafka_offset", position)
                                         : json_null()));
        json_array_append_new(*group_ops,
                              json_pack("{s:s, s:I, s:I}", "topic", topic, "partition",
                                        number, "offset", position));
    }
    return out;

fail:
    json_decref(out);
    json_decref(*group_ops);
    *group_ops = NULL;
    return NULL;
}

/* Resets every stored offset of a sink connector: the group's too. */
static json_t *sink_reset_ops(const tb_offsets_env_t *env, const tb_known_connector_t *c,
                              char *msg, size_t msg_size)
{
    json_t *stored = tb_store_offsets_get(env->store, c->name, msg, msg_size);
    json_t *ops = stored != NULL ? json_array() : NULL;
    size_t i;
    json_t *entry;
    json_array_foreach (stored, i, entry) {
        json_t *partition = json_object_get(entry, "partition");
        json_array_append_new(
            ops, json_pack("{s:O, s:O, s:i}", "topic",
                           json_object_get(partition, "kafka_topic"), "partition",
                           json_object_get(partition, "kafka_partition"), "offset", -1));
    }
    json_decref(stored);
    return ops;
}

/* The store writes of a source connector's offsets change, in one store
 * transaction: checked (NULL resets: every stored offset deleted), and the
 * next offsets generation, so that an exactly-once task's record of a
 * transaction from before the change is ignored at its next start
 * (tb_eos_offsets.h). New reference, or NULL with msg. */
static json_t *source_offsets_change(const tb_offsets_env_t *env,
                                     const tb_known_connector_t *c, const json_t *checked,
                                     char *msg, size_t msg_size)
{
    json_t *stored = tb_store_offsets_get(env->store, c->name, msg, msg_size);
    if (stored == NULL) {
        return NULL;
    }
    json_t *writes = checked != NULL ? json_copy((json_t *)checked) : json_array();
    size_t i;
    json_t *entry;
    if (checked == NULL) {
        json_array_foreach (stored, i, entry) {
            json_t *partition = json_object_get(entry, "partition");
            if (!tb_eos_offsets_is_reserved(partition)) {
                json_array_append_new(
                    writes, json_pack("{s:O, s:n}", "partition", partition, "offset"));
            }
        }
    }
    json_array_append_new(writes, tb_eos_offsets_generation_entry(
                                      tb_eos_offsets_generation_of(stored) + 1));
    json_decref(stored);
    return writes;
}

/* As Connect's leader before an exactly-once source's offsets change: every
 * producer its tasks may have run is fenced, so that no zombie commits
 * offsets over the change. */
static int fence_zombies(const tb_offsets_env_t *env, const tb_known_connector_t *c,
                         char *msg, size_t msg_size)
{
    char why[512];
    if (env->fencing == NULL || c->plugin->kind != TB_PLUGIN_SOURCE ||
        tb_fencing_fence_now(env->fencing, c->name, c->config, 0, why, sizeof(why)) ==
            0) {
        return 0;
    }
    snprintf(msg, msg_size,
             "Failed to perform zombie fencing for source connector prior to modifying "
             "offsets: %s",
             why);
    TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", c->name, -1, "%s", msg);
    return -1;
}

/* Writes an offsets change into the store: a sink's as given (checked NULL
 * deletes them all), a source's with its next offsets generation. */
static int write_offsets(const tb_offsets_env_t *env, const tb_known_connector_t *c,
                         const json_t *checked, char *msg, size_t msg_size)
{
    if (c->plugin->kind == TB_PLUGIN_SINK) {
        return checked != NULL
                   ? tb_store_offsets_put(env->store, c->name, checked, msg, msg_size)
                   : tb_store_offsets_delete(env->store, c->name, msg, msg_size);
    }
    json_t *writes = source_offsets_change(env, c, checked, msg, msg_size);
    int rc = writes != NULL
                 ? tb_store_offsets_put(env->store, c->name, writes, msg, msg_size)
                 : -1;
    json_decref(writes);
    return rc;
}

/* Lets a sink plugin that keeps its own offsets change them, before the
 * store and the group are (the order Connect calls a connector's
 * alterOffsets in): plugin_ops as tb_sink_offsets_change_t.offsets has
 * them, NULL to reset them all. *managed tells whether the plugin did. */
static int alter_plugin_offsets(const tb_offsets_env_t *env,
                                const tb_known_connector_t *c, const json_t *plugin_ops,
                                bool *managed, char *msg, size_t msg_size)
{
    *managed = false;
    if (c->plugin->kind != TB_PLUGIN_SINK || c->plugin->alter_offsets == NULL) {
        return 0;
    }
    json_t *config = tb_connector_config_resolve(c->plugin, c->config, msg, msg_size);
    if (config == NULL) {
        return -1;
    }
    tb_sink_offsets_change_t change = {.connector = c->name,
                                       .config = config,
                                       .limits = env->limits,
                                       .offsets = plugin_ops};
    int rc = c->plugin->alter_offsets(&change, msg, msg_size);
    tb_connector_config_release(config);
    *managed = rc == 0;
    return rc;
}

/* Applies group_ops to the sink connector's consumer group: with an admin
 * client made from its settings, or in dev mode, where the mock cluster
 * takes offsets from group members only, as a member made from its
 * consumer's settings. */
static int alter_group(const tb_offsets_env_t *env, const tb_known_connector_t *c,
                       const json_t *group_ops, char *msg, size_t msg_size)
{
    char group[300];
    bool dev = env->dev;
    json_t *errors = json_object();
    json_t *props = tb_client_props(
        env->client, dev ? TB_CLIENT_CONSUMER : TB_CLIENT_ADMIN, c->config, true, errors);
    const char *name = tb_connector_sink_group(c->name, c->config, group, sizeof(group));
    int rc = -1;
    if (props == NULL) {
        tb_config_errors_join(errors, "\n", msg, msg_size);
    } else if (dev) {
        rc = tb_group_offsets_commit_as_member(props, name, group_ops, msg, msg_size);
    } else {
        rc = tb_group_offsets_alter(props, name, group_ops, msg, msg_size);
    }
    json_decref(props);
    json_decref(errors);
    return rc;
}

tb_err_t tb_offsets_alter(const tb_offsets_env_t *env, const tb_known_connector_t *c,
                          bool tasks_running, const json_t *offsets, json_t **out,
                          char *msg, size_t msg_size)
{
    const char *name = c->name;
    tb_err_t err = TB_OK;
    const char *verb = offsets != NULL ? "altered" : "reset";
    json_t *checked = NULL;
    json_t *group_ops = NULL;
    bool managed = false;
    if (c->target != TB_TARGET_STOPPED || tasks_running) {
        snprintf(msg, msg_size,
                 "Connectors must be in the STOPPED state before their offsets can be "
                 "modified. This can be done for the specified connector by issuing a "
                 "'PUT' request to the '/connectors/%s/stop' endpoint",
                 name);
        err = TB_ERR_BAD_REQUEST;
    } else if (offsets != NULL && c->plugin->kind == TB_PLUGIN_SOURCE &&
               (checked = source_offsets_of(offsets, msg, msg_size)) == NULL) {
        err = TB_ERR_BAD_REQUEST;
    } else if (offsets != NULL && c->plugin->kind == TB_PLUGIN_SINK &&
               (checked = sink_offsets_of(offsets, &group_ops, msg, msg_size)) == NULL) {
        err = TB_ERR_BAD_REQUEST;
    } else if (fence_zombies(env, c, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else if (alter_plugin_offsets(env, c, offsets != NULL ? group_ops : NULL, &managed,
                                    msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else if (c->plugin->kind == TB_PLUGIN_SINK && group_ops == NULL &&
               (group_ops = sink_reset_ops(env, c, msg, msg_size)) == NULL) {
        err = TB_ERR_INTERNAL;
    } else if (group_ops != NULL && alter_group(env, c, group_ops, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else if (write_offsets(env, c, checked, msg, msg_size) != 0) {
        err = TB_ERR_INTERNAL;
    } else {
        TB_LOG_TASK(TB_LOG_INFO, "tributary.herder", name, -1, "offsets %s", verb);
        char text[512];
        if (managed) {
            snprintf(text, sizeof(text),
                     "The offsets for this connector have been %s successfully", verb);
        } else {
            snprintf(text, sizeof(text),
                     "The Connect framework-managed offsets for this connector have "
                     "been %s successfully. However, if this connector manages offsets "
                     "externally, they will need to be manually %s in the system that "
                     "the connector uses.",
                     verb, verb);
        }
        *out = json_pack("{s:s}", "message", text);
    }
    json_decref(checked);
    json_decref(group_ops);
    return err;
}

/* Dev mode only (a dev worker opens nothing but a dev store): the
 * in-memory cluster starts empty, so a sink's offsets of the last run point
 * past the end of its topics and would stop every partition. */
void tb_offsets_drop_dev_sink(tb_store_t *store, const char *name)
{
    char errstr[256];
    if (tb_store_offsets_delete(store, name, errstr, sizeof(errstr)) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1,
                    "dev mode: the sink's offsets from the last run could not be "
                    "dropped, its partitions may stop: %s",
                    errstr);
        return;
    }
    TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", name, -1,
                "dev mode: the sink's offsets from the last run were dropped, "
                "since the in-memory cluster starts empty");
}
