/*
 * tb_dlq_topic.h - the dead letter queue's topic, created at task start as
 * Kafka Connect does: one partition, errors.deadletterqueue.topic.replication.factor
 * replicas (-1: the broker's default.replication.factor). A topic that exists
 * is used as it is, whatever its replication.
 */
#ifndef TB_DLQ_TOPIC_H
#define TB_DLQ_TOPIC_H

#include <stddef.h>

#include <jansson.h>

/* Creates topic through an admin client with admin_props (borrowed), waiting
 * up to timeout_ms. Returns 0 when the topic was created or already existed,
 * -1 with errstr (naming the replication factor key and the broker's
 * reason) otherwise. */
int tb_dlq_topic_ensure(const json_t *admin_props, const char *topic,
                        int replication_factor, int timeout_ms, char *errstr,
                        size_t errstr_size);

#endif
