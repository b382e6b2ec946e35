/*
 * tb_group_offsets.h - changing a consumer group's committed offsets, for
 * the offsets endpoints of a stopped sink connector: with Kafka's Admin API
 * on a real cluster, and as a member of the group on dev mode's mock
 * cluster, which accepts an offset commit from members only and cannot
 * delete one.
 */
#ifndef TB_GROUP_OFFSETS_H
#define TB_GROUP_OFFSETS_H

#include <stddef.h>

#include <jansson.h>

/* The assignor of a sink connector's consumer group whose consumer
 * settings name none, and so the group's protocol: cooperative-sticky, so
 * that a task that keeps its partitions through a rebalance (a task that
 * joins or leaves the group) is not made to let go of them and read them
 * again. A member that joins the group (dev mode's commit) names the same
 * one (the connector's own, else this), since the mock cluster aborts the
 * whole process when the members it elects a leader among name different
 * ones first. */
#define TB_SINK_GROUP_ASSIGNOR "cooperative-sticky"

/* Sets (offset >= 0) or deletes (offset -1) the group's committed offset of
 * each entry of offsets, an array of {"topic","partition","offset"}, using a
 * short-lived admin client made from kafka_props. Returns -1 with errstr
 * (Kafka's reason, naming the group) on failure. */
int tb_group_offsets_alter(const json_t *kafka_props, const char *group,
                           const json_t *offsets, char *errstr, size_t errstr_size);

/* Dev mode's tb_group_offsets_alter: joins group as a consumer made from
 * kafka_props (a consumer's properties; not taken over) with the sink's
 * assignor, TB_SINK_GROUP_ASSIGNOR, waiting at most
 * 30 s to be let in (the mock cluster first waits out the group's earlier
 * members' session.timeout.ms), commits each entry of offsets, and leaves.
 * An offset -1 commits the partition's low watermark instead, since the
 * mock cluster cannot delete a group offset. Returns -1 with errstr
 * (naming the group) on failure. */
int tb_group_offsets_commit_as_member(const json_t *kafka_props, const char *group,
                                      const json_t *offsets, char *errstr,
                                      size_t errstr_size);

#endif
