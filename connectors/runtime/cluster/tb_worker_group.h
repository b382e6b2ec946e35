/*
 * tb_worker_group.h - the group of tributary workers that form one cluster,
 * kept by Kafka's group coordinator.
 *
 * librdkafka cannot join a group of Connect's protocol type, so workers meet
 * in an ordinary consumer group (the worker's group.id) subscribed to one
 * coordination topic of exactly one partition. Kafka's coordinator keeps the
 * membership (session.timeout.ms, heartbeats) and the cooperative-sticky
 * assignor hands the one partition to one member: that member is the
 * leader. Sticky assignment keeps it the leader while it lives, so a worker
 * joining or another leaving never moves the leadership. No record of the
 * topic is read: the partition is paused as soon as it is assigned.
 *
 * Each member's client.id is its REST URL; DescribeGroups (run by the
 * group's thread after every rebalance and once a second) gives every worker
 * the list of live members and the leader's URL, to which writes are
 * forwarded.
 *
 * A group runs one thread of its own, which serves the consumer and calls
 * changed. The view is copied out under a mutex, so readers (REST calls)
 * never wait on the network.
 */
#ifndef TB_WORKER_GROUP_H
#define TB_WORKER_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct tb_worker_group tb_worker_group_t;

typedef struct {
    const char *group_id;   /* group.id of the cluster */
    const char *topic;      /* the coordination topic: it exists, one partition */
    const char *worker_url; /* this worker's advertised REST URL, its id in the group */
    const json_t *client_props; /* librdkafka properties: bootstrap.servers, security,
                                   session.timeout.ms, heartbeat.interval.ms, ... */
    /* Called on the group's thread each time the view changes; optional. */
    void (*changed)(void *opaque);
    void *opaque;
} tb_worker_group_options_t;

/* What this worker knows of the group, copied: the caller owns it and
 * releases it with tb_worker_group_view_clear(). */
typedef struct {
    bool leader;         /* this worker holds the coordination partition */
    char *leader_url;    /* NULL while no member holds it */
    char **members;      /* the live members' URLs, sorted, this worker's included */
    size_t member_count; /* 0 until the first rebalance completed */
    uint64_t changes;    /* how many times the view changed since the join */
} tb_worker_group_view_t;

/* Joins the group; the options are copied. The first view comes after the
 * first rebalance. Returns NULL and fills errstr when librdkafka refuses a
 * property (naming it). */
tb_worker_group_t *tb_worker_group_join(const tb_worker_group_options_t *options,
                                        char *errstr, size_t errstr_size);

/* The longest tb_worker_group_leave waits for the group. */
#define TB_WORKER_GROUP_LEAVE_MS 5000

/* Leaves the group (the coordinator rebalances the others at once, without
 * waiting for the session to time out) and frees it, within
 * TB_WORKER_GROUP_LEAVE_MS: a leave that a rebalance in flight holds longer
 * (a member that does not answer) is cut short and logged, and the others
 * notice the departure when this worker's session times out. NULL is a
 * no-op. */
void tb_worker_group_leave(tb_worker_group_t *group);

/* Copies the current view into *out. */
void tb_worker_group_view(tb_worker_group_t *group, tb_worker_group_view_t *out);

void tb_worker_group_view_clear(tb_worker_group_view_t *view);

#endif
