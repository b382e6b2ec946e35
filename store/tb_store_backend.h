/*
 * tb_store_backend.h - what a store backend implements (for store/ only).
 *
 * A backend's object starts with a struct tb_store whose ops point at the
 * backend's static const table; the backend's constructor fills it. The
 * functions of tb_store.h check their arguments (the same checks, and the
 * same messages, for every backend) and then call the table, so an op
 * receives only valid input: configs are objects of strings, target states
 * and task ids are in range, traces are UTF-8, offsets are an array of
 * {"partition":{...},"offset":{...}|null}. Ops borrow their arguments and
 * follow the ownership rules of tb_store.h; each fills errstr through
 * tb_store_error() when it fails.
 */
#ifndef TB_STORE_BACKEND_H
#define TB_STORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "store/tb_store.h"

/* Compact JSON with sorted keys: the text by which two partitions (or two
 * configs) are the same. */
#define TB_STORE_JSON_CANONICAL (JSON_COMPACT | JSON_SORT_KEYS)

typedef struct {
    /* Frees the backend's object; never called with NULL. */
    void (*close)(tb_store_t *store);
    int (*connector_put)(tb_store_t *store, const tb_store_connector_t *connector,
                         char *errstr, size_t errstr_size);
    int (*connector_delete)(tb_store_t *store, const char *name, char *errstr,
                            size_t errstr_size);
    /* Appends every connector to list, ordered by name, as
     * {"name","config","target" (tb_target_state_t as an integer),
     * "task_configs"}; tb_store_connectors_load walks it with no lock held. */
    int (*connectors_list)(tb_store_t *store, json_t *list, char *errstr,
                           size_t errstr_size);
    int (*status_put)(tb_store_t *store, const char *name, int task_id, tb_state_t state,
                      const char *trace, char *errstr, size_t errstr_size);
    json_t *(*status_get)(tb_store_t *store, const char *name, char *errstr,
                          size_t errstr_size);
    int (*offsets_put)(tb_store_t *store, const char *connector, const json_t *offsets,
                       char *errstr, size_t errstr_size);
    json_t *(*offsets_get)(tb_store_t *store, const char *connector, char *errstr,
                           size_t errstr_size);
    int (*offsets_delete)(tb_store_t *store, const char *connector, char *errstr,
                          size_t errstr_size);
    int (*mode_bind)(tb_store_t *store, tb_store_mode_t mode, tb_store_mode_t *bound,
                     char *errstr, size_t errstr_size);
    /* Appends to changed the name (a JSON string) of each connector whose
     * row changed under another writer since the last open or refresh,
     * once each, in the order first seen. */
    int (*refresh)(tb_store_t *store, json_t *changed, char *errstr, size_t errstr_size);
    /* Optional (NULL: the store keeps no restart requests). */
    int (*restart_request)(tb_store_t *store, const char *name, bool include_tasks,
                           bool only_failed, char *errstr, size_t errstr_size);
    json_t *(*restarts_take)(tb_store_t *store);
    /* Optional (NULL: the store keeps no fencing records). */
    void (*fencing_get)(tb_store_t *store, const char *name, tb_store_fencing_t *out);
    int (*fencing_put)(tb_store_t *store, const char *name, int task_count, char *errstr,
                       size_t errstr_size);
} tb_store_ops_t;

struct tb_store {
    const tb_store_ops_t *ops;
};

/* Writes "store: <op>: <why>", or "store: <op> '<name>': <why>" when name
 * is not NULL, into errstr: the one form of every store error. */
void tb_store_error(char *errstr, size_t errstr_size, const char *op, const char *name,
                    const char *why);

/* The row of one connector as connectors_list appends it; config and
 * task_configs are borrowed (the row takes references of its own). NULL
 * when out of memory. */
json_t *tb_store_row_new(const char *name, json_t *config, tb_target_state_t target,
                         json_t *task_configs);

#endif
