/*
 * tb_group_offsets.h - changing a consumer group's committed offsets with
 * Kafka's Admin API, for the offsets endpoints of a stopped sink connector.
 */
#ifndef TB_GROUP_OFFSETS_H
#define TB_GROUP_OFFSETS_H

#include <stddef.h>

#include <jansson.h>

/* Sets (offset >= 0) or deletes (offset -1) the group's committed offset of
 * each entry of offsets, an array of {"topic","partition","offset"}, using a
 * short-lived admin client made from kafka_props. Returns -1 with errstr
 * (Kafka's reason, naming the group) on failure. */
int tb_group_offsets_alter(const json_t *kafka_props, const char *group,
                           const json_t *offsets, char *errstr, size_t errstr_size);

#endif
