/*
 * tb_progress_marker.h - the progress marker of an exactly-once source task.
 *
 * Every transaction of the task commits, with its records, an offset to the
 * task's marker group (tb_progress_marker_group): partition 0 of the task's
 * topic, offset = the number of transactions committed so far, metadata =
 * {"generation":G,"offsets":[{partition, offset}, ...]}, compact JSON. The
 * offsets are the latest of each source partition the transaction wrote,
 * and only those: the task records every committed transaction's offsets in
 * the store before it begins the next one, so at any time the store lacks
 * at most the last transaction's. Kafka commits the marker atomically with
 * the records, so at start it tells exactly which source offsets are in
 * Kafka, and its size does not grow with time.
 *
 * The offsets generation counts the operator's changes of a connector's
 * offsets (PATCH or DELETE of /connectors/{name}/offsets). The store keeps
 * it among the connector's offsets, under a partition of its own
 * (tb_progress_marker_generation_entry), written in the same store
 * transaction as the change. A marker written in an older generation than
 * the store's predates the operator's change: the store is the authority
 * then, and the task ignores the marker.
 */
#ifndef TB_PROGRESS_MARKER_H
#define TB_PROGRESS_MARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

/* The broker's offset.metadata.max.bytes default: a marker's size limit. */
#define TB_PROGRESS_MARKER_MAX_BYTES 4096

/* A marker as read from its group. offsets is owned by the struct. */
typedef struct {
    int64_t sequence;   /* transactions committed so far */
    int64_t generation; /* the offsets generation it was written in */
    json_t *offsets;    /* array of {partition, offset} */
} tb_progress_marker_t;

typedef enum {
    TB_PROGRESS_MARKER_ERROR = -1,
    TB_PROGRESS_MARKER_NONE = 0,    /* the group has no offset there */
    TB_PROGRESS_MARKER_FOUND = 1,   /* *marker is filled */
    TB_PROGRESS_MARKER_FOREIGN = 2, /* an offset whose metadata is no marker */
} tb_progress_marker_status_t;

/* The prefix of every marker group, which no sink group may take. */
#define TB_PROGRESS_MARKER_GROUP_PREFIX "__tributary-eos-"

/* The marker group of a task: __tributary-eos-<connector>-<task>. No sink
 * group can take it: a sink's default group is connect-<name>, and
 * consumer.override.group.id refuses the prefix. Written into buf, which is
 * returned. */
const char *tb_progress_marker_group(const char *connector, int task, char *buf,
                                     size_t size);

/* The marker group of tributary 0.1.0: connect-<connector>-<task>, the
 * transactional id, which a sink named <connector>-<task> could also use.
 * Read once when a task has no marker under the new name. */
const char *tb_progress_marker_legacy_group(const char *connector, int task, char *buf,
                                            size_t size);

/* Reads the marker of group for topic with a short-lived consumer made from
 * kafka_props. On FOUND, *marker holds it (free its offsets with
 * tb_progress_marker_clear); on ERROR errstr says why. */
tb_progress_marker_status_t tb_progress_marker_read(const json_t *kafka_props,
                                                    const char *group, const char *topic,
                                                    tb_progress_marker_t *marker,
                                                    char *errstr, size_t errstr_size);

/* Releases marker->offsets. */
void tb_progress_marker_clear(tb_progress_marker_t *marker);

/* The metadata of a marker (malloc'd, *size bytes, no NUL counted), or NULL
 * with errstr when it would be larger than TB_PROGRESS_MARKER_MAX_BYTES.
 * offsets is borrowed. */
char *tb_progress_marker_encode(int64_t generation, const json_t *offsets, size_t *size,
                                char *errstr, size_t errstr_size);

/* Parses metadata into generation and offsets (a new array). A bare array,
 * the form before generations, is generation 0; trailing NULs are ignored. Returns -1
 * when metadata is no marker. */
int tb_progress_marker_decode(const char *metadata, size_t size, int64_t *generation,
                              json_t **offsets);

/* The offsets list to send with a transaction: topic partition 0 at
 * sequence, with the encoded marker as metadata. NULL with errstr when the
 * marker would be too large. */
rd_kafka_topic_partition_list_t *
tb_progress_marker_make(const char *topic, int64_t sequence, int64_t generation,
                        const json_t *offsets, char *errstr, size_t errstr_size);

/* Whether a source partition is the one that holds the offsets generation
 * in the store: not a plugin's, never shown by the offsets API. */
bool tb_progress_marker_is_generation(const json_t *partition);

/* The offsets generation among a connector's stored offsets (an array of
 * {partition, offset}, borrowed); 0 when none was recorded. */
int64_t tb_progress_marker_generation_of(const json_t *stored);

/* The store entry {partition, offset} that records generation (new). */
json_t *tb_progress_marker_generation_entry(int64_t generation);

#endif
