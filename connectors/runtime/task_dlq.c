/* A task's dead letter queue, made from its connector's errors.* keys and
 * producer settings: the same for sinks and sources. */
#include <string.h>

#include "connectors/runtime/tb_connector_config.h"
#include "connectors/runtime/tb_task_engine.h"

static tb_dlq_t *open_dlq(const tb_task_env_t *env, const char *topic,
                          bool context_headers, char *errstr, size_t errstr_size)
{
    json_t *props = tb_client_props_resolved(env->client, TB_CLIENT_PRODUCER,
                                             env->connector_config, errstr, errstr_size);
    if (props == NULL) {
        return NULL;
    }
    tb_dlq_t *dlq = tb_dlq_create(props, topic, context_headers, errstr, errstr_size);
    json_decref(props);
    return dlq;
}

int tb_task_dlq_create(const tb_task_env_t *env, tb_dlq_t **dlq, char *errstr,
                       size_t errstr_size)
{
    json_t *errors = json_object(); /* reported when the config was stored */
    json_t *values =
        tb_connector_config_validate(env->plugin, env->connector_config, errors);
    json_decref(errors);
    const char *topic = tb_config_string(values, "errors.deadletterqueue.topic.name");
    const char *tolerance = tb_config_string(values, "errors.tolerance");
    int rc = 0;
    *dlq = NULL;
    if (strcmp(tolerance, "all") == 0 && topic != NULL && topic[0] != '\0') {
        *dlq = open_dlq(
            env, topic,
            tb_config_bool(values, "errors.deadletterqueue.context.headers.enable"),
            errstr, errstr_size);
        rc = *dlq != NULL ? 0 : -1;
    }
    json_decref(values);
    return rc;
}
