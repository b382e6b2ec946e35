/*
 * tb_progress_marker.h - the progress marker of an exactly-once source task.
 *
 * Every transaction of the task commits, with its records, an offset to a
 * consumer group named after the task's transactional id: partition 0 of
 * the task's topic, offset = the number of transactions committed so far,
 * metadata = the task's source offsets as compact JSON. Kafka commits the
 * marker atomically with the records, so at start it tells exactly which
 * source offsets are already in Kafka.
 */
#ifndef TB_PROGRESS_MARKER_H
#define TB_PROGRESS_MARKER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

/* Reads the marker of group for topic. Returns 1 and sets *sequence and
 * *offsets (a new array of {partition, offset}) when one exists, 0 when the
 * group has none, -1 with errstr on failure. */
int tb_progress_marker_read(const json_t *kafka_props, const char *group,
                            const char *topic, int64_t *sequence, json_t **offsets,
                            char *errstr, size_t errstr_size);

/* The offsets list to send with a transaction: topic partition 0 at
 * sequence, with offsets (an array, borrowed) as metadata. NULL with errstr
 * when the metadata would be too large for the broker (4096 bytes). */
rd_kafka_topic_partition_list_t *
tb_progress_marker_make(const char *topic, int64_t sequence, const json_t *offsets,
                        char *errstr, size_t errstr_size);

#endif
