/* What a task runs, as Connect 4.1 tags its metrics (KIP-891): the
 * connector's and the task's class, type and version, its converters', and
 * each transformation's and predicate's of its chain. */
#include <stdio.h>

#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "connectors/runtime/task/tb_task_transforms.h"
#include "core/tb_log.h"
#include "tb_version.h"

#define SIMPLE_HEADER_CONVERTER "org.apache.kafka.connect.storage.SimpleHeaderConverter"

typedef struct {
    tb_task_metrics_t *m;
    const char *connector;
    int id;
    const char *task; /* id as text */
} describing_t;

static void describe_use(void *opaque, const char *kind, const char *alias,
                         const char *class_name)
{
    describing_t *d = opaque;
    /* built in, with the Connect version implemented, as the
     * *.plugin.version keys take it */
    if (tb_connect_chain_info_add(&d->m->connect, d->connector, d->task, kind, alias,
                                  class_name, TB_CONNECT_VERSION) != 0) {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.task", d->connector, d->id,
                    "out of memory: the %s %s is missing from the metrics", kind, alias);
    }
}

/* The header converter's class: the connector's, else the worker's, else
 * Connect's default. */
static const char *header_converter(const tb_task_env_t *env)
{
    const char *name = env->framework.header_converter;
    if (name == NULL || name[0] == '\0') {
        name = json_string_value(json_object_get(env->worker_config, "header.converter"));
    }
    const char *canonical =
        name != NULL ? tb_header_converter_canonical_name(name) : NULL;
    return canonical != NULL ? canonical : SIMPLE_HEADER_CONVERTER;
}

void tb_task_describe(const tb_task_env_t *env, tb_task_metrics_t *m,
                      const tb_converter_t *key, const tb_converter_t *value,
                      const tb_chain_t *chain)
{
    char task[16];
    snprintf(task, sizeof(task), "%d", env->id);
    const char *version = env->plugin->version != NULL ? env->plugin->version : "";
    const char *values[TB_CONNECT_TASK_INFO_COUNT] = {
        env->plugin->class_name,
        version,
        env->plugin->kind == TB_PLUGIN_SINK ? "sink" : "source",
        env->plugin->class_name, /* one plugin is connector and task alike */
        version,
        tb_converter_class_name(key),
        TB_CONNECT_VERSION,
        tb_converter_class_name(value),
        TB_CONNECT_VERSION,
        header_converter(env),
        TB_CONNECT_VERSION,
    };
    tb_connect_task_info_set(&m->connect, env->connector, task, values);
    describing_t d = {.m = m, .connector = env->connector, .id = env->id, .task = task};
    tb_chain_each(chain, describe_use, &d);
}
