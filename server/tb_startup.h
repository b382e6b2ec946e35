/*
 * tb_startup.h - the wiring of a worker: each step of its start, in the
 * order run() takes them (server/main.c), and the release of what they
 * made. Every step reads the worker's typed settings (tb_worker_config.h)
 * and logs, once, why it fails.
 *
 * Ownership: a tb_startup_t owns everything its steps make (the config,
 * the store's lock, the REST server, the herder, the cluster, ...) until
 * tb_startup_release; it borrows its args. Locking: the main thread's
 * alone.
 */
#ifndef TB_STARTUP_H
#define TB_STARTUP_H

#include <stdbool.h>

#include <jansson.h>

#include "connectors/runtime/cluster/tb_cluster.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "core/tb_secret.h"
#include "server/tb_forward.h"
#include "server/tb_http.h"
#include "server/tb_reload.h"
#include "server/tb_worker_config.h"

/* What the command line says about the worker to run. */
typedef struct {
    const char *worker_file; /* NULL: none, the defaults */
    char **connector_files;  /* connect-standalone's connector files */
    int connector_file_count;
    bool dev; /* --dev */
} tb_startup_args_t;

typedef struct {
    const tb_startup_args_t *args;
    json_t *raw;    /* the worker's keys as given */
    json_t *values; /* parsed; settings borrows from it */
    tb_worker_settings_t settings;
    int store_lock; /* -1 until the store is locked */
    char *key_password;
    tb_secret_deny_t *deny;
    char *listeners;
    char *admin_listeners;
    tb_http_options_t http_options;
    tb_http_server_t *http;
    char worker_url[320];
    char worker_id[300];
    json_t *kafka_props;
    json_t *converters;
    bool distributed;
    tb_store_t *store; /* handed to the herder */
    tb_herder_t *herder;
    tb_cluster_t *cluster;
    tb_forward_t *forward;
    tb_reload_t *reload;
    tb_api_context_t ctx;
    tb_series_t *app_info[TB_CONNECT_APP_INFO_COUNT];
} tb_startup_t;

/* A tb_startup_t before its first step. */
#define TB_STARTUP_INIT                                                                  \
    {                                                                                    \
        .store_lock = -1                                                                 \
    }

/* Reads the worker file and the environment; parses, validates and fills
 * *settings. Prints every error (naming the key) on stderr and returns
 * NULL when invalid; else the values (new reference), which *settings
 * borrows from. *raw_out gets the keys as given (tb_worker_config_load). */
json_t *tb_startup_read_config(const tb_startup_args_t *args, json_t **raw_out,
                               tb_worker_settings_t *settings);

/* The worker's options that its settings give; the caller sets the store,
 * the mode, the converters, the worker's id and exactly-once's settings.
 * Borrows settings and kafka_props. */
tb_worker_options_t tb_startup_worker_options(const tb_worker_settings_t *settings,
                                              const json_t *kafka_props);

/* The steps, in order; each returns 0, or -1 after logging why. */

/* Reads the config (tb_startup_read_config) and sets the log level, the
 * log format and the metrics' names it gives. */
int tb_startup_settings(tb_startup_t *s, const tb_startup_args_t *args);

/* Refuses what the worker cannot run with: Connect keys it refuses, no
 * bootstrap.servers out of dev mode, a core dump setting the kernel
 * refuses; logs the override policy's reading. */
int tb_startup_check(tb_startup_t *s);

/* Creates offset.storage.file.filename's directory and takes the store's
 * lock: one worker per store. */
int tb_startup_lock_store(tb_startup_t *s);

/* Resolves the https key's password and lists what no connector may reach
 * (the worker's own files and variables), before any connector can start. */
int tb_startup_secrets(tb_startup_t *s);

/* Binds the REST listeners (before anything starts, so that nothing else
 * takes the port) and makes the advertised URL and the worker's id. */
int tb_startup_bind(tb_startup_t *s);

/* The Kafka clients' keys and the converters; refuses a distributed
 * worker with dev mode or connector files; loads secrets.encryption.key;
 * opens the distributed store. */
int tb_startup_store(tb_startup_t *s);

/* Creates the herder and the connectors of the command line's files and,
 * standalone, of connectors.dir. */
int tb_startup_herder(tb_startup_t *s);

/* Distributed, joins the cluster and forwards to its leader; then says
 * which Kafka the worker uses. */
int tb_startup_join(tb_startup_t *s);

/* Serves the REST API (reloads included) and logs that the worker started. */
int tb_startup_serve(tb_startup_t *s);

/* Stops and frees everything the steps made, in reverse. */
void tb_startup_release(tb_startup_t *s);

#endif
