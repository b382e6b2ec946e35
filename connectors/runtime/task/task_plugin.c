/* Starting a task's plugin: its secrets are resolved only now, handed over,
 * and the resolved copy is dropped at once. */
#include <stdio.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/task/tb_task_engine.h"

int tb_task_start_plugin(const tb_task_env_t *env, tb_task_context_t *ctx,
                         void **plugin_task, char *errstr, size_t errstr_size)
{
    /* checked again now: a symbolic link may have changed since creation */
    json_t *errors = json_object();
    tb_limits_check(env->limits, env->plugin->config, env->config, errors);
    tb_config_errors_join(errors, "; ", errstr, errstr_size);
    size_t problems = json_object_size(errors);
    json_decref(errors);
    if (problems > 0) {
        return -1;
    }
    json_t *config =
        tb_connector_config_resolve(env->plugin, env->config, errstr, errstr_size);
    if (config == NULL) {
        return -1;
    }
    ctx->limits = env->limits;
    ctx->stopping = env->stopping;
    int rc = env->plugin->task_start(ctx, config, plugin_task, errstr, errstr_size);
    tb_connector_config_release(config);
    if (rc != 0) {
        *plugin_task = NULL;
    }
    return rc;
}
