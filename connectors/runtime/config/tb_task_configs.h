/*
 * tb_task_configs.h - a connector's task configs: the plugin's split of its
 * config, bounded by tasks.max (and tasks.max.enforce), and which task
 * configs a target state asks for.
 *
 * Ownership: results are new references; inputs are borrowed. Locking:
 * none; they read only their inputs.
 */
#ifndef TB_TASK_CONFIGS_H
#define TB_TASK_CONFIGS_H

#include <stddef.h>

#include <jansson.h>

#include "connectors/runtime/config/tb_config_state.h"
#include "connectors/tb_plugin.h"
#include "core/tb_state.h"

/* The plugin's split of connector name's config into task configs. When
 * they exceed tasks.max and tasks.max.enforce refuses them there are none,
 * and failure gets Connect's TooManyTasksException trace for the
 * connector's state; else failure is "". */
json_t *tb_task_configs_split(const tb_plugin_t *plugin, const char *name,
                              const json_t *config, char *failure, size_t failure_size);

/* The task configs c has in target: none when stopped; as in Connect,
 * generated only for a started connector that has none; else its own.
 * failure as for tb_task_configs_split. */
json_t *tb_task_configs_for(const tb_known_connector_t *c, tb_target_state_t target,
                            char *failure, size_t failure_size);

#endif
