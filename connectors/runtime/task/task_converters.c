/* The key and value converters of a task, from its connector's keys and the
 * worker's defaults. */
#include <stdio.h>
#include <string.h>

#include "connectors/runtime/task/tb_task_engine.h"

static const char *string_of(const json_t *config, const char *key, const char *fallback)
{
    const char *value = json_string_value(json_object_get(config, key));
    return value != NULL ? value : fallback;
}

/* As in Connect, a connector that names its own converter configures it
 * with its own settings; otherwise the worker's converter and settings
 * apply. */
tb_converter_t *tb_task_converter_create(const tb_task_env_t *env, const char *which,
                                         char *errstr, size_t errstr_size)
{
    char key[64], prefix[64];
    snprintf(key, sizeof(key), "%s.converter", which);
    snprintf(prefix, sizeof(prefix), "%s.converter.", which);
    const json_t *source = string_of(env->connector_config, key, NULL) != NULL
                               ? env->connector_config
                               : env->worker_config;
    const char *name = string_of(source, key, NULL);
    json_t *settings = json_object();
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)source, k, v) {
        if (strncmp(k, prefix, strlen(prefix)) == 0) {
            json_object_set(settings, k + strlen(prefix), v);
        }
    }
    tb_converter_t *c = tb_converter_create(name, settings, strcmp(which, "key") == 0,
                                            errstr, errstr_size);
    json_decref(settings);
    return c;
}
