#include "connectors/runtime/config/tb_task_configs.h"

#include <stdio.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "core/tb_log.h"

/* The plugin's split of connector name's config into task configs (new
 * reference). When they exceed tasks.max and tasks.max.enforce refuses
 * them there are none, and failure gets Connect's TooManyTasksException
 * trace for the connector's state; else failure is "". */
json_t *tb_task_configs_split(const tb_plugin_t *plugin, const char *name,
                              const json_t *config, char *failure, size_t failure_size)
{
    char msg[1024];
    json_t *errors = json_object();
    json_t *values = tb_connector_config_validate(plugin, config, errors);
    tb_connector_settings_t settings;
    tb_connector_settings_fill(plugin, values, &settings);
    json_t *task_configs = plugin->task_configs(config, settings.tasks_max);
    int rc = tb_connector_config_check_task_count(
        name, &settings, json_array_size(task_configs), msg, sizeof(msg));
    json_decref(values);
    json_decref(errors);
    failure[0] = '\0';
    if (rc != 0) {
        snprintf(failure, failure_size,
                 "org.apache.kafka.connect.runtime.TooManyTasksException: %s", msg);
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1, "%s", msg);
        json_decref(task_configs);
        return json_array();
    }
    if (msg[0] != '\0') {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", name, -1, "%s", msg);
    }
    return task_configs;
}

/* The task configs c has in target: none when stopped; as in Connect,
 * generated only for a started connector that has none; else its own. New
 * reference. */
json_t *tb_task_configs_for(const tb_known_connector_t *c, tb_target_state_t target,
                            char *failure, size_t failure_size)
{
    failure[0] = '\0';
    if (target == TB_TARGET_STOPPED) {
        return json_array();
    }
    if (target == TB_TARGET_STARTED && json_array_size(c->task_configs) == 0) {
        return tb_task_configs_split(c->plugin, c->name, c->config, failure,
                                     failure_size);
    }
    return json_incref(c->task_configs);
}
