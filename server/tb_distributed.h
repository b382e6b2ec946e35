/*
 * tb_distributed.h - a worker whose config sets group.id runs distributed,
 * as connect-distributed does: its store is Connect's three internal
 * topics (tb_store_kafka.h) and it joins its cluster (tb_cluster.h).
 * This module reads the distributed keys (docs/configuration.md,
 * "Distributed") into those two; main wires them.
 *
 * Ownership: the store and the cluster returned belong to the caller
 * (tb_store_close, usually through the herder; tb_cluster_stop).
 */
#ifndef TB_DISTRIBUTED_H
#define TB_DISTRIBUTED_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/runtime/cluster/tb_cluster.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "server/tb_worker_config.h"

/* Whether the worker's settings make it distributed: group.id set. */
bool tb_distributed_enabled(const tb_worker_settings_t *settings);

/* Opens the Kafka store over the topics the settings name, for worker_id.
 * NULL with errstr (naming the key) on failure. */
tb_store_t *tb_distributed_store_open(const tb_worker_settings_t *settings,
                                      const json_t *kafka_props, const char *worker_id,
                                      char *errstr, size_t errstr_size);

/* Where the worker's exactly-once sources keep their transactions, read
 * from its settings and raw (its keys as written): distributed, Connect's
 * <group.id>-<connector>-<task> ids and the store's offset.storage.topic;
 * standalone, connect-<connector>-<task> and offset.storage.topic or
 * tributary-offsets, created by the first task that needs it, with
 * offset.storage.partitions and offset.storage.replication.factor when
 * set, else the broker's default. Its strings are borrowed from settings. */
tb_eos_settings_t tb_distributed_eos_settings(const tb_worker_settings_t *settings,
                                              const json_t *raw);

/* Joins the cluster as worker_url (scheme://worker_id) for herder. NULL
 * with errstr on failure. */
tb_cluster_t *tb_distributed_join(const tb_worker_settings_t *settings,
                                  const json_t *kafka_props, tb_herder_t *herder,
                                  const char *worker_url, char *errstr,
                                  size_t errstr_size);

#endif
