/*
 * tb_config_state.h - what the cluster knows of its connectors: for each,
 * its config, target state and task configs, loaded from the store and
 * written through it. It holds no task objects: which worker runs what is
 * tb_assignor.h's, the running tasks are tb_worker.h's.
 *
 * Standalone, the store is the worker's SQLite file; distributed, Kafka
 * Connect's internal topics, whose changes by other workers
 * tb_config_state_reread brings into the view.
 *
 * Ownership: the config state owns its entries, their names and JSON; a
 * caller borrows an entry until the next tb_config_state_remove of it or
 * tb_config_state_destroy. It borrows the store.
 *
 * Locking: none of its own; the herder calls it under its lock. A put or a
 * remove given that lock releases it across the store's write (a Kafka
 * store waits for the broker there), so that no reader of the view waits
 * on the store; the caller's claim on the name keeps everyone else from
 * changing that entry meanwhile.
 */
#ifndef TB_CONFIG_STATE_H
#define TB_CONFIG_STATE_H

#include <pthread.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"
#include "core/tb_state.h"
#include "store/tb_store.h"

typedef struct tb_config_state tb_config_state_t;

/* One connector as the cluster knows it. Read its fields; change them only
 * through tb_config_state_put. */
typedef struct tb_known_connector {
    char *name;
    json_t *config; /* as given: an object of strings */
    const tb_plugin_t *plugin;
    tb_target_state_t target;
    json_t *task_configs; /* array of objects */
    /* Numbers each set of task configs the view held, across connectors,
     * never reused in this process: an exactly-once source's tasks start
     * once their generation is fenced (tb_fencing.h). */
    unsigned long task_generation;
    struct tb_known_connector *next;
} tb_known_connector_t;

/* An empty view over store (borrowed). */
tb_config_state_t *tb_config_state_create(tb_store_t *store);

/* Frees every entry. NULL is a no-op. */
void tb_config_state_destroy(tb_config_state_t *state);

/* Reads every stored connector; one whose class this build lacks is logged
 * and left out. Returns 0, or -1 with errstr when the store cannot be
 * read. */
int tb_config_state_load(tb_config_state_t *state, char *errstr, size_t errstr_size);

/* The first entry (then follow next), in no particular order; NULL when
 * there is none. */
tb_known_connector_t *tb_config_state_first(const tb_config_state_t *state);

/* Connector name, or NULL. */
tb_known_connector_t *tb_config_state_find(const tb_config_state_t *state,
                                           const char *name);

/* Writes connector name's config, target state and task configs in one
 * store transaction, so that a crash leaves it as it was or as it becomes,
 * never a mix; then the view, creating the entry when there is none. Takes
 * a reference to config and task_configs (the caller changes neither
 * afterwards). Returns the entry, or NULL with msg when the store refused
 * (the view is unchanged). lock: the caller's lock, held, released across
 * the store's write and held again on return, with name claimed; or NULL
 * (nothing released). */
tb_known_connector_t *tb_config_state_put(tb_config_state_t *state, pthread_mutex_t *lock,
                                          const char *name, json_t *config,
                                          const tb_plugin_t *plugin,
                                          tb_target_state_t target, json_t *task_configs,
                                          char *msg, size_t msg_size);

/* Reads the connectors named in names (an array of strings) again from the
 * store, which another worker wrote, in one walk of its rows whatever
 * their number (a bulk change costs one walk, not one per connector): each
 * named entry takes its row (created or replaced; a class this build lacks
 * is logged and the entry dropped), or is dropped when the store has none.
 * Writes nothing. Returns 0, or -1 with errstr when the store cannot be
 * read (the view is unchanged). */
int tb_config_state_reread(tb_config_state_t *state, const json_t *names, char *errstr,
                           size_t errstr_size);

/* Deletes connector name from the store, then frees its entry. Returns 0,
 * or -1 with msg when the store refused (the view is unchanged). lock: as
 * tb_config_state_put's. */
int tb_config_state_remove(tb_config_state_t *state, pthread_mutex_t *lock,
                           const char *name, char *msg, size_t msg_size);

#endif
