#include "connectors/kafka/tb_kafka_stats.h"

#include <stdio.h>

const char *tb_kafka_stats_fetch_state(const json_t *stats, const char *topic,
                                       int32_t partition)
{
    char id[16];
    snprintf(id, sizeof(id), "%d", (int)partition);
    const json_t *partitions = json_object_get(
        json_object_get(json_object_get(stats, "topics"), topic), "partitions");
    return json_string_value(
        json_object_get(json_object_get(partitions, id), "fetch_state"));
}
