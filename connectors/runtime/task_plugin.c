/* Starting a task's plugin: its secrets are resolved only now, handed over,
 * and the resolved copy is dropped at once. */
#include <string.h>

#include "connectors/runtime/tb_connector_config.h"
#include "connectors/runtime/tb_task_engine.h"

int tb_task_start_plugin(const tb_task_env_t *env, const tb_task_context_t *ctx,
                         void **plugin_task, char *errstr, size_t errstr_size)
{
    json_t *config =
        tb_connector_config_resolve(env->plugin, env->config, errstr, errstr_size);
    if (config == NULL) {
        return -1;
    }
    int rc = env->plugin->task_start(ctx, config, plugin_task, errstr, errstr_size);
    json_decref(config);
    if (rc != 0) {
        *plugin_task = NULL;
    }
    return rc;
}
