/*
 * tb_kafka_stats.h - reading librdkafka's statistics (statistics.interval.ms).
 */
#ifndef TB_KAFKA_STATS_H
#define TB_KAFKA_STATS_H

#include <stdint.h>

#include <jansson.h>

/* The fetch state librdkafka reports for a partition ("active",
 * "offset-query", "offset-wait", "stopped", "none", ...), borrowed from
 * stats, or NULL when the statistics do not mention the partition. */
const char *tb_kafka_stats_fetch_state(const json_t *stats, const char *topic,
                                       int32_t partition);

#endif
