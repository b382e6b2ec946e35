/*
 * tb_consumer_protocol.h - reading a member's assignment in Kafka's consumer
 * protocol, as DescribeGroups returns it (rd_kafka_group_member_info).
 *
 * The assignment is: int16 version, an array (int32 count) of topics, each a
 * string (int16 length) and an array of int32 partitions, then user data
 * (int32 length, -1 for none). Every integer is big-endian. A worker group
 * reads it to learn which member owns the coordination partition.
 */
#ifndef TB_CONSUMER_PROTOCOL_H
#define TB_CONSUMER_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the assignment in data (size bytes, borrowed) holds partition of
 * topic. Returns 1 when it does, 0 when it does not, -1 when data is not a
 * well-formed assignment (truncated, negative counts). An empty assignment
 * (size 0, as a member that has none yet reports) holds nothing. */
int tb_consumer_assignment_holds(const void *data, size_t size, const char *topic,
                                 int32_t partition);

#endif
