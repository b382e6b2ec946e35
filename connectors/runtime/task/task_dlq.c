/* A task's dead letter queue, made from its connector's errors.* keys and
 * producer settings: the same for sinks and sources. */
#include <string.h>

#include "connectors/runtime/task/tb_dlq_topic.h"
#include "connectors/runtime/task/tb_task_engine.h"
#include "core/tb_config.h"

#define DLQ_TOPIC_TIMEOUT_MS 30000 /* Connect's admin request.timeout.ms */

/* Creates the topic unless it exists, through an admin client with the
 * connector's admin settings. */
static int ensure_topic(const tb_task_env_t *env, const char *topic, char *errstr,
                        size_t errstr_size)
{
    json_t *props = tb_client_props_resolved(env->client, TB_CLIENT_ADMIN,
                                             env->connector_config, errstr, errstr_size);
    if (props == NULL) {
        return -1;
    }
    int factor = env->framework.errors_deadletterqueue_topic_replication_factor;
    int rc = tb_dlq_topic_ensure(props, topic, factor, DLQ_TOPIC_TIMEOUT_MS, errstr,
                                 errstr_size);
    json_decref(props);
    return rc;
}

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
    const char *topic = env->framework.errors_deadletterqueue_topic_name;
    *dlq = NULL;
    if (env->framework.errors_tolerance != TB_ERRORS_TOLERANCE_ALL || topic == NULL ||
        topic[0] == '\0') {
        return 0;
    }
    /* dev mode's mock cluster creates the topic at its first record */
    if (env->cluster_creates_topics &&
        ensure_topic(env, topic, errstr, errstr_size) != 0) {
        return -1;
    }
    *dlq =
        open_dlq(env, topic, env->framework.errors_deadletterqueue_context_headers_enable,
                 errstr, errstr_size);
    return *dlq != NULL ? 0 : -1;
}
