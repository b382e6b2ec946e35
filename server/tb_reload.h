/*
 * tb_reload.h - reloading the worker file without a restart: on SIGHUP
 * and POST /admin/reload.
 *
 * A reload reads the worker file (and the TRIBUTARY_* variables) again.
 * When it is invalid, or the https listeners' new certificate or key
 * cannot be used, nothing is applied and the reload fails, naming why.
 * Otherwise it applies what can change live:
 * - the https listeners' certificate and key, read again from their files
 *   (the key password's reference resolved again): connections open keep
 *   theirs, new ones get the new certificate (tb_http_tls.h);
 * - log.level (the root logger and those below it) and log.format;
 * - config.providers and its allowed paths and env pattern, for the
 *   configs validated from then on (tb_herder_secret_policy_set);
 * - connectors.dir and connectors.dir.prune, then applies the directory
 *   (tb_connector_dir.h; distributed, only the leader does);
 * and restarts each task whose referenced secrets changed
 * (tb_herder_secrets_reload). Every other key whose value differs from
 * the one the worker runs with is named, logged at WARN, and listed as
 * needing a restart: the REST listeners and their limits, the Kafka
 * keys, the store, and the paths of the worker's own files, which the set
 * of files no connector may reach (tb_secret_deny_t) was built from at
 * start. Values are never logged or returned, only key names.
 *
 * Ownership: borrows the herder, the server and the cluster; owns its
 * copies of the keys. Locking: one reload at a time (a mutex).
 */
#ifndef TB_RELOAD_H
#define TB_RELOAD_H

#include <stdbool.h>

#include <jansson.h>

#include "connectors/runtime/cluster/tb_cluster.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "server/tb_http.h"
#include "server/tb_worker_config.h"

typedef struct tb_reload tb_reload_t;

typedef struct {
    const char *worker_file; /* borrowed; NULL: none */
    bool dev;                /* --dev */
    const json_t *raw;       /* the keys the worker started with (copied) */
    /* the settings the worker started with (read by tb_reload_create) */
    const tb_worker_settings_t *settings;
    const char *store_path; /* offset.storage.file.filename (copied) */
    tb_herder_t *herder;    /* borrowed */
    tb_http_server_t *http; /* borrowed */
    tb_cluster_t *cluster;  /* borrowed; NULL standalone */
} tb_reload_options_t;

/* NULL when out of memory. */
tb_reload_t *tb_reload_create(const tb_reload_options_t *options);

/* NULL is a no-op. */
void tb_reload_destroy(tb_reload_t *reload);

/* Reloads, as cause ("SIGHUP", "POST /admin/reload") says, and returns the
 * report (new reference): {"applied":[keys], "restart_required":[keys],
 * "tasks_restarted":["<connector>-<task>"], "certificate_serial":hex or
 * absent, "connectors_dir":{created,updated,unchanged,deleted,invalid} or
 * absent}; *ok is false, and the report Connect's error body
 * {"error_code":400,"message"}, when nothing could be applied. */
json_t *tb_reload_run(tb_reload_t *reload, const char *cause, bool *ok);

/* Applies connectors.dir as the last reload set it, when it is set: on a
 * distributed worker that has just become the leader. */
void tb_reload_apply_dir(tb_reload_t *reload, const char *why);

/* tb_api_context_t's reload: POST /admin/reload. */
json_t *tb_reload_api(void *opaque, unsigned *status);

#endif
