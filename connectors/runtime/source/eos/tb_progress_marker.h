/*
 * tb_progress_marker.h - the progress marker of releases before the
 * offsets moved into the offsets topic, read once for the upgrade.
 *
 * Those releases committed, in each transaction of an exactly-once source
 * task, an offset of the consumer group __tributary-eos-<connector>-<task>
 * on partition 0 of the connector's topic whose metadata was
 * {"generation":G,"offsets":[{partition, offset}, ...]} (compact JSON; a
 * bare array, the form before generations, is generation 0): the source
 * offsets of that transaction. A task that has no task record in the
 * offsets topic (tb_eos_offsets.h) reads its marker once and resumes from
 * it; its first transaction then writes its offsets to the offsets topic,
 * and the marker is never read again. Nothing writes markers any more.
 *
 * The read is asynchronous (Kafka's Admin API on the task's own client,
 * answered on a queue the caller polls), so it holds no pool thread on the
 * network; it is answered within TB_PROGRESS_MARKER_TIMEOUT_MS.
 */
#ifndef TB_PROGRESS_MARKER_H
#define TB_PROGRESS_MARKER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#define TB_PROGRESS_MARKER_TIMEOUT_MS 30000

/* The prefix of every marker group, which no sink group may take. */
#define TB_PROGRESS_MARKER_GROUP_PREFIX "__tributary-eos-"

/* A marker as read from its group. offsets is owned by the struct. */
typedef struct {
    int64_t generation; /* the offsets generation it was written in */
    json_t *offsets;    /* array of {partition, offset} */
} tb_progress_marker_t;

typedef enum {
    TB_PROGRESS_MARKER_ERROR = -1,
    TB_PROGRESS_MARKER_NONE = 0,    /* the group has no offset there */
    TB_PROGRESS_MARKER_FOUND = 1,   /* *marker is filled */
    TB_PROGRESS_MARKER_FOREIGN = 2, /* an offset whose metadata is no marker */
    TB_PROGRESS_MARKER_PENDING = 3, /* not answered yet */
} tb_progress_marker_status_t;

typedef struct tb_progress_marker_query tb_progress_marker_query_t;

/* Asks rk (any client, borrowed: it must outlive the query) for the marker
 * of connector's task on partition 0 of topic. */
tb_progress_marker_query_t *tb_progress_marker_query_start(rd_kafka_t *rk,
                                                           const char *connector,
                                                           int task, const char *topic);

/* The answer, without waiting: PENDING until it came. On FOUND, *marker
 * holds it (tb_progress_marker_clear frees it); on ERROR and FOREIGN
 * errstr says why. */
tb_progress_marker_status_t
tb_progress_marker_query_poll(tb_progress_marker_query_t *query,
                              tb_progress_marker_t *marker, char *errstr,
                              size_t errstr_size);

/* NULL is a no-op. */
void tb_progress_marker_query_destroy(tb_progress_marker_query_t *query);

/* Releases marker->offsets. */
void tb_progress_marker_clear(tb_progress_marker_t *marker);

/* Parses metadata into generation and offsets (a new array); trailing NULs
 * are ignored. Returns -1 when metadata is no marker. */
int tb_progress_marker_decode(const char *metadata, size_t size, int64_t *generation,
                              json_t **offsets);

#endif
