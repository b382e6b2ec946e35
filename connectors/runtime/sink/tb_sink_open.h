/*
 * tb_sink_open.h - Connect's open() and close() of a sink plugin, for the
 * sink engine: the partitions a task is given and loses, and the start
 * offsets a plugin that keeps its own (tb_plugin_t.open) supplies.
 */
#ifndef TB_SINK_OPEN_H
#define TB_SINK_OPEN_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "connectors/tb_plugin.h"

/* Tells plugin that the partitions of list are opened, with the store's
 * offset of each in stored (list->cnt of them, TB_OFFSET_NONE where none;
 * NULL: none at all). Returns a new array
 * of list->cnt offsets (the caller frees it), TB_PLUGIN_NO_OFFSET where the
 * plugin has none, or, for a plugin without open(), an array of only that.
 * NULL with errstr when open() failed or memory ran out: the partitions
 * then wait. */
int64_t *tb_sink_open(const tb_plugin_t *plugin, void *task,
                      const rd_kafka_topic_partition_list_t *list, const int64_t *stored,
                      char *errstr, size_t errstr_size);

/* Tells plugin that the partitions of list are closed. A plugin without
 * close() is not told. */
void tb_sink_close(const tb_plugin_t *plugin, void *task,
                   const rd_kafka_topic_partition_list_t *list);

#endif
