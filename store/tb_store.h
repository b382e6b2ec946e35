/*
 * tb_store.h - the durable store of a worker: connector configs, target
 * states, task configs, connector and task status, and offsets.
 *
 * The interface says nothing about how data is kept. Two backends
 * implement it (tb_store_backend.h), each chosen by its constructor: the
 * standalone worker's SQLite file (tb_store_open, tb_store_sqlite.c), and
 * Kafka Connect's three internal topics in Connect's formats
 * (tb_store_kafka_open in tb_store_kafka.h, for distributed mode). Every
 * other function works on either; where the Kafka backend differs, its
 * header says so.
 *
 * Values cross the interface as jansson objects. Unless a comment says
 * otherwise, functions borrow their json_t arguments (the caller keeps its
 * reference) and return new references that the caller must json_decref().
 *
 * Every function that can fail returns 0 on success and -1 on failure with
 * a message in errstr. The store is safe to call from several threads: each
 * call is serialised internally and each write is one transaction, whole or
 * absent after a crash (the Kafka backend's exceptions are in its header).
 * What a commit survives is in docs/OPERATIONS.md ("Durability"): every
 * write survives a crash of the process (SIGKILL).
 *
 * Test seam of the SQLite backend (core/tb_seam.h): with TB_TEST_SEAMS (CMake
 * option, on in the sanitizer build), TB_STORE_CRASH_AFTER=<operation> in
 * the environment kills the process (SIGKILL) right after a write of that
 * operation commits; <operation> is a label of
 * tributary_store_write_seconds (connector_put, ...). Release builds do not
 * read the variable.
 */
#ifndef TB_STORE_H
#define TB_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_state.h"

typedef struct tb_store tb_store_t;

/* Opens (creating if needed) the SQLite store at path and applies pending
 * schema migrations. Returns NULL and fills errstr on failure. */
tb_store_t *tb_store_open(const char *path, char *errstr, size_t errstr_size);

/* Closes a store of either backend. NULL is a no-op. */
void tb_store_close(tb_store_t *store);

/* A connector's row: its config, target state and task configs. Borrowed:
 * tb_store_connectors_load lends it to its callback only for the call
 * (json_incref() what you keep). */
typedef struct {
    const char *name;
    const json_t *config; /* object of strings */
    tb_target_state_t target;
    const json_t *task_configs; /* array of objects, possibly empty */
} tb_store_connector_t;

/* Creates or replaces a connector's row, config, target state and task
 * configs together, in one transaction: after a crash the store holds the
 * row as it was before the call or as the call wrote it, never a mix (an
 * operation that changes the config, the target state or the tasks writes
 * the whole row). Its status and offsets are kept. */
int tb_store_connector_put(tb_store_t *store, const tb_store_connector_t *connector,
                           char *errstr, size_t errstr_size);

/* Deletes a connector's row and status in one transaction. Its offsets are
 * kept, as Connect keeps them, so a connector re-created under the same
 * name resumes. Deleting an unknown connector succeeds. */
int tb_store_connector_delete(tb_store_t *store, const char *name, char *errstr,
                              size_t errstr_size);

/* Calls cb once per stored connector, ordered by name. A non-zero return
 * from cb stops the walk and is returned. */
int tb_store_connectors_load(tb_store_t *store,
                             int (*cb)(const tb_store_connector_t *c, void *opaque),
                             void *opaque, char *errstr, size_t errstr_size);

/* Records the observed state of the connector (task_id -1) or of one task,
 * with a trace (NULL when none). */
int tb_store_status_put(tb_store_t *store, const char *name, int task_id,
                        tb_state_t state, const char *trace, char *errstr,
                        size_t errstr_size);

/* Returns the recorded status as {"connector":{"state","trace"?},
 * "tasks":{"0":{"state","trace"?},...}}, or NULL with errstr set when the
 * connector has no status. */
json_t *tb_store_status_get(tb_store_t *store, const char *name, char *errstr,
                            size_t errstr_size);

/* Writes offsets of a connector in one transaction. offsets is an array of
 * {"partition":{...},"offset":{...}|null}; a null offset deletes that
 * partition's entry. Partitions are compared by their canonical JSON text
 * (keys sorted, compact). */
int tb_store_offsets_put(tb_store_t *store, const char *connector, const json_t *offsets,
                         char *errstr, size_t errstr_size);

/* Returns every stored offset of a connector as an array of
 * {"partition":{...},"offset":{...}}, ordered by partition text; an empty
 * array when there are none. NULL with errstr on failure. */
json_t *tb_store_offsets_get(tb_store_t *store, const char *connector, char *errstr,
                             size_t errstr_size);

/* Deletes every stored offset of a connector. */
int tb_store_offsets_delete(tb_store_t *store, const char *connector, char *errstr,
                            size_t errstr_size);

/* What a store's offsets and statuses refer to: a real Kafka cluster, or
 * the in-memory cluster of dev mode, whose data is gone when the worker
 * stops. A store keeps the one mode it is bound to for its whole life. */
typedef enum {
    TB_STORE_MODE_KAFKA = 0,
    TB_STORE_MODE_DEV,
} tb_store_mode_t;

/* Binds the store to a mode, once, and sets *bound to the mode it is bound
 * to. A store not bound yet takes mode when it is empty (no connector,
 * status or offset); one with content (written before stores recorded a
 * mode) is bound to TB_STORE_MODE_KAFKA. A store already bound keeps its
 * mode. *bound != mode is no failure of the call: the caller decides
 * whether it can use such a store. */
int tb_store_mode_bind(tb_store_t *store, tb_store_mode_t mode, tb_store_mode_t *bound,
                       char *errstr, size_t errstr_size);

/* Applies what other writers wrote to the store since it was opened or
 * last refreshed, and returns the names of the connectors whose config,
 * target state or task configs changed (created, updated or deleted) as a
 * JSON array of strings, each once, in the order first seen; the caller
 * owns it. NULL with errstr on failure. A SQLite store has one writer, its
 * own process, and always returns an empty array. */
json_t *tb_store_refresh(tb_store_t *store, char *errstr, size_t errstr_size);

/* Asks every worker of a cluster to restart a connector's instances (per
 * the flags, Connect's includeTasks and onlyFailed) that it runs: the
 * Kafka store writes Connect's restart-connector-<name> record. A SQLite
 * store, which has no other reader, refuses it. */
int tb_store_restart_request(tb_store_t *store, const char *name, bool include_tasks,
                             bool only_failed, char *errstr, size_t errstr_size);

/* The restart requests the refreshes since the last call read (this
 * store's own included; none of those read at open), in order, as
 * [{"name","include_tasks","only_failed"}]; the caller owns it. NULL only
 * when out of memory. */
json_t *tb_store_restarts_take(tb_store_t *store);

/* The zombie fencing of an exactly-once source's task configs (KIP-618),
 * as the store records it: the Kafka store reads and writes Connect's
 * tasks-fencing-<name> records. A SQLite store keeps none (kept false):
 * its one worker fences before its own new tasks start, in memory. */
typedef struct {
    bool kept;      /* the store keeps fencing records */
    int task_count; /* of the last record; -1 when there is none */
    bool pending;   /* task configs were committed after it, or with none */
} tb_store_fencing_t;

/* Fills out for connector name (any name). */
void tb_store_fencing_get(tb_store_t *store, const char *name, tb_store_fencing_t *out);

/* Records that every producer of connector name's previous tasks is
 * fenced and that its task_count current tasks may start: the Kafka store
 * writes tasks-fencing-<name> {"task-count":N}. A SQLite store succeeds
 * and writes nothing. */
int tb_store_fencing_put(tb_store_t *store, const char *name, int task_count,
                         char *errstr, size_t errstr_size);

#endif
