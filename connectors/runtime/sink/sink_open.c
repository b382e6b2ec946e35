/* Connect's open() and close() of a sink plugin (tb_sink_open.h). */
#include <stdio.h>
#include <stdlib.h>

#include "connectors/runtime/sink/tb_sink_open.h"

/* The partitions of list as the plugin sees them (topics borrowed), with
 * the store's offsets of stored (NULL: none). */
static tb_sink_partition_t *partitions_of(const rd_kafka_topic_partition_list_t *list,
                                          const int64_t *stored)
{
    tb_sink_partition_t *parts = calloc((size_t)list->cnt + 1, sizeof(*parts));
    for (int i = 0; parts != NULL && i < list->cnt; i++) {
        parts[i] = (tb_sink_partition_t){
            .topic = list->elems[i].topic,
            .partition = list->elems[i].partition,
            .offset = TB_PLUGIN_NO_OFFSET,
            .stored = stored != NULL && stored[i] >= 0 ? stored[i] : TB_PLUGIN_NO_OFFSET};
    }
    return parts;
}

int64_t *tb_sink_open(const tb_plugin_t *plugin, void *task,
                      const rd_kafka_topic_partition_list_t *list, const int64_t *stored,
                      char *errstr, size_t errstr_size)
{
    tb_sink_partition_t *parts = partitions_of(list, stored);
    int64_t *offsets = calloc((size_t)list->cnt + 1, sizeof(*offsets));
    if (parts == NULL || offsets == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (plugin->open != NULL &&
        plugin->open(task, parts, (size_t)list->cnt, errstr, errstr_size) != 0) {
        goto fail;
    }
    for (int i = 0; i < list->cnt; i++) {
        offsets[i] = parts[i].offset >= 0 ? parts[i].offset : TB_PLUGIN_NO_OFFSET;
    }
    free(parts);
    return offsets;

fail:
    free(parts);
    free(offsets);
    return NULL;
}

void tb_sink_close(const tb_plugin_t *plugin, void *task,
                   const rd_kafka_topic_partition_list_t *list)
{
    if (plugin->close == NULL || list == NULL || list->cnt == 0) {
        return;
    }
    tb_sink_partition_t *parts = partitions_of(list, NULL);
    if (parts != NULL) {
        plugin->close(task, parts, (size_t)list->cnt);
    }
    free(parts);
}
