/*
 * tb_offsets_ops.h - the operations on a connector's offsets: GET, PATCH
 * and DELETE /connectors/{name}/offsets, and dev mode's drop of a sink's
 * offsets at start.
 *
 * Offsets live in the store; a sink's also in its consumer group, which a
 * change alters through the Kafka admin API (or, in dev mode, as a group
 * member), so a change may take long: the herder calls it with the
 * connector claimed and its lock released. A source's change also raises
 * the connector's offsets generation (tb_progress_marker.h). A sink plugin
 * that keeps its own offsets (tb_plugin_t.alter_offsets) changes them
 * first: a failure there fails the request with nothing else changed.
 *
 * Ownership: everything is borrowed; *out is a new reference, on TB_OK
 * only. Locking: none of its own.
 */
#ifndef TB_OFFSETS_OPS_H
#define TB_OFFSETS_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/runtime/config/tb_config_state.h"
#include "connectors/runtime/source/eos/tb_fencing.h"
#include "connectors/tb_limits.h"
#include "core/tb_error.h"
#include "store/tb_store.h"

/* Where offsets are changed. */
typedef struct {
    tb_store_t *store;
    const tb_client_settings_t *client; /* the worker's side of clients */
    bool dev;                           /* the mock cluster's groups */
    const tb_limits_t *limits;          /* what a plugin's alter_offsets may reach */
    /* sources run in transactions: their old producers are fenced before
     * their offsets change (NULL: they do not) */
    tb_fencing_t *fencing;
} tb_offsets_env_t;

/* ConnectorOffsets {"offsets":[{partition, offset}]} of connector name, the
 * offsets generation's entry left out. */
tb_err_t tb_offsets_get(tb_store_t *store, const char *name, json_t **out, char *msg,
                        size_t msg_size);

/* Alters (offsets given) or resets (offsets NULL) the offsets of c, which
 * must be STOPPED with no task running (tasks_running false). *out is
 * Connect's {"message":...}. */
tb_err_t tb_offsets_alter(const tb_offsets_env_t *env, const tb_known_connector_t *c,
                          bool tasks_running, const json_t *offsets, json_t **out,
                          char *msg, size_t msg_size);

/* Dev mode only (a dev worker opens nothing but a dev store): the
 * in-memory cluster starts empty, so a sink's offsets of the last run
 * point past the end of its topics and would stop every partition; they
 * are deleted, and that is logged. */
void tb_offsets_drop_dev_sink(tb_store_t *store, const char *name);

#endif
