/*
 * tb_s3_recovery.h - where a partition resumes, from the bucket.
 *
 * Every object the sink writes carries, as user metadata, the first offset
 * of its commit group (tributary-group-start: the records of a Kafka
 * partition that are rotated together, one object per encoded partition),
 * and the object of a group written last (the one with the highest start
 * offset; objects are made visible in that order) also the offset after
 * the group (tributary-next) when it is written whole in one PutObject.
 * The object of a partition with the highest start offset in its name then
 * says where the partition resumes: tributary-next when it has it (its
 * group is whole), else its group's start (the group is written again,
 * object by object over the same names, since the partitioner is
 * deterministic). An object without them (written by another tool) says
 * nothing. Only objects of values count: the keys and headers objects
 * beside them (store.kafka.keys, store.kafka.headers) are committed before
 * their value object, so the values' names alone say what is whole.
 */
#ifndef TB_S3_RECOVERY_H
#define TB_S3_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "connectors/s3/tb_s3_client.h"
#include "connectors/s3/tb_s3_partitioner.h"

#define TB_S3_META_GROUP_START "tributary-group-start"
#define TB_S3_META_NEXT "tributary-next"

typedef struct {
    int64_t next;     /* where to resume; TB_PLUGIN_NO_OFFSET: the bucket says nothing */
    char latest[512]; /* the newest object of the partition, "" when none */
    bool foreign;     /* latest has no metadata of ours */
} tb_s3_recovery_t;

/* Lists the partition's objects and reads the newest one's metadata into
 * out. TB_S3_OK, or another outcome with errstr. */
tb_s3_outcome_t tb_s3_recovery_find(tb_s3_client_t *client, const tb_s3_layout_t *layout,
                                    const tb_s3_partitioner_t *partitioner,
                                    const char *topic, int32_t partition,
                                    tb_s3_recovery_t *out, char *errstr,
                                    size_t errstr_size);

#endif
