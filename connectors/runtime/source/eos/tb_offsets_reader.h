/*
 * tb_offsets_reader.h - reads one connector's records of an offsets topic
 * (Connect's format: key ["<connector>",{partition}], value the offset, a
 * tombstone deletes it) as committed transactions left them, in bounded
 * steps, so that an exactly-once source task resumes from the offsets its
 * predecessors committed with their records without holding a pool thread
 * on the network.
 *
 * What a step does, in order:
 *  - create: the topic is created (compacted) when it does not exist; an
 *    error other than "already exists" is left for the next phase to tell;
 *  - metadata: the topic's partition count (a metadata request of at most
 *    step_ms a step);
 *  - the end: a read_uncommitted probe, assigned every partition at its end,
 *    reports each partition's high watermark (its end-of-partition event,
 *    or its first fetch answer: a partition other tasks keep writing to
 *    may never give it an end);
 *  - reading: a read_committed consumer reads every partition from its
 *    start until it has passed that watermark. The last stable offset is
 *    not enough: another task's open transaction holds it back, and records
 *    this task's predecessor committed after that transaction began lie
 *    beyond it.
 * Every phase but the reading fails the read once it has lasted
 * TB_OFFSETS_READER_TIMEOUT_MS; the reading fails once nothing arrived for
 * TB_OFFSETS_READER_STALL_MS, longer than a transaction may stay open by
 * default (transaction.timeout.ms, 60 s): a transaction left open by a
 * killed task holds read_committed back until the broker aborts it.
 *
 * Ownership: the reader owns its clients; tb_offsets_reader_offsets lends
 * its result until the reader is destroyed. Not thread-safe: one caller at
 * a time (the task's pool thread).
 */
#ifndef TB_OFFSETS_READER_H
#define TB_OFFSETS_READER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define TB_OFFSETS_READER_TIMEOUT_MS 30000
#define TB_OFFSETS_READER_STALL_MS 90000

/* An offsets topic, and how it is created when missing. */
typedef struct {
    const char *name;
    int partitions;         /* when created */
    int replication_factor; /* when created; -1: the broker's default */
    bool create;            /* false: it exists (the worker's store made it) */
} tb_offsets_topic_t;

typedef struct tb_offsets_reader tb_offsets_reader_t;

/* A reader of connector's records of topic (borrowed, copied), with clients
 * made from consumer_props (a consumer's librdkafka properties, security
 * included; borrowed). NULL with errstr. */
tb_offsets_reader_t *tb_offsets_reader_create(const json_t *consumer_props,
                                              const tb_offsets_topic_t *topic,
                                              const char *connector, char *errstr,
                                              size_t errstr_size);

/* One step of at most about step_ms. Returns 1 once every partition is read
 * to its end, 0 when another step is needed (*progress: whether this one
 * got anywhere), -1 with errstr when the read failed. */
int tb_offsets_reader_step(tb_offsets_reader_t *reader, int step_ms, bool *progress,
                           char *errstr, size_t errstr_size);

/* Once the step returned 1: the connector's offsets, an object from each
 * partition's canonical text (keys sorted, compact) to {"partition",
 * "offset", "key"}, key being the record key exactly as read (a Java
 * worker's may order a partition's fields otherwise: writing under the same
 * bytes keeps one key for compaction). Borrowed. */
const json_t *tb_offsets_reader_offsets(const tb_offsets_reader_t *reader);

/* NULL is a no-op. Never waits on the network. */
void tb_offsets_reader_destroy(tb_offsets_reader_t *reader);

#endif
