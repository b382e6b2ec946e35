/*
 * tb_eos_offsets.h - the entries tributary keeps among a source connector's
 * offsets for exactly-once, beside the plugin's source partitions. Each is
 * a partition of one key that no plugin uses, so that it travels with the
 * offsets wherever they are kept (the store, the offsets topic) and is
 * never shown by, nor taken from, the offsets API:
 *
 *  - the offsets generation {"tributary.offsets.generation":true} ->
 *    {"generation":G}: counts the operator's changes of the connector's
 *    offsets (PATCH or DELETE of /connectors/{name}/offsets), written in
 *    the same store write as the change;
 *  - the task record {"tributary.exactly.once.task":N} ->
 *    {"transactions":S,"generation":G}: written by task N in each of its
 *    transactions, with the offsets that transaction reached. S counts the
 *    task's transactions, G is the offsets generation it ran in. A task
 *    record older than the generation predates the operator's change, so
 *    the change wins; a task without one has never committed a transaction
 *    with its offsets in the offsets topic.
 *
 * Pure functions; partitions and stored arrays are borrowed, and what is
 * returned is new.
 */
#ifndef TB_EOS_OFFSETS_H
#define TB_EOS_OFFSETS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/runtime/source/eos/tb_offsets_reader.h"

/* Where a worker's exactly-once source tasks keep their transactions. */
typedef struct {
    /* transactional ids are <prefix>-<connector>-<task>: Connect's
     * <group.id>-..., and "connect" on a standalone worker */
    const char *transactional_id_prefix;
    /* the worker's offsets topic, unless a connector names its own
     * (offsets.storage.topic) */
    tb_offsets_topic_t offsets_topic;
    /* the worker's store keeps its offsets in that topic (distributed):
     * a transaction's offsets are in the store once it commits */
    bool offsets_topic_is_store;
} tb_eos_settings_t;

/* Whether partition is one of the entries above. */
bool tb_eos_offsets_is_reserved(const json_t *partition);

/* The offsets generation among a connector's stored offsets (an array of
 * {partition, offset}); 0 when none was recorded. */
int64_t tb_eos_offsets_generation_of(const json_t *stored);

/* The generation of an offset of the generation entry or of a task record
 * (0 when it has none). */
int64_t tb_eos_offsets_generation_in(const json_t *offset);

/* The partition of the generation entry. */
json_t *tb_eos_offsets_generation_partition(void);

/* The entry {partition, offset} that records generation. */
json_t *tb_eos_offsets_generation_entry(int64_t generation);

/* The partition of task's record. */
json_t *tb_eos_offsets_task_partition(int task);

/* The task a task record's partition names; -1 for any other partition. */
int tb_eos_offsets_task_of(const json_t *partition);

/* The offset of a task record. */
json_t *tb_eos_offsets_task_offset(int64_t transactions, int64_t generation);

/* The transactions count of a task record's offset. */
int64_t tb_eos_offsets_task_transactions(const json_t *offset);

#endif
