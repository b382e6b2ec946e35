/*
 * tributary - a Kafka Connect-compatible connector service.
 *
 *   tributary [--dev] [worker.properties [connector files...]]
 *     as connect-standalone: each connector file (properties, a JSON map, or
 *     {name,config,initial_state}) creates or updates its connector
 *   tributary validate [worker.properties] [connector...]
 *                                  Connect's validation of each connector
 *                                  file (or of connectors.dir's), with no
 *                                  Kafka and no server
 *   tributary --config-reference   prints docs/configuration.md
 *   tributary --routes             prints every REST route, one per line
 *   tributary --hash-password      reads a password or token secret on stdin,
 *                                  prints its hash for rest.auth.credentials.file
 *   tributary --version
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <librdkafka/rdkafka.h>
#include <openssl/crypto.h>

#include "connectors/runtime/herder/tb_herder.h"
#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "core/tb_time.h"
#include "core/tb_allocator.h"
#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_props.h"
#include "core/tb_secret.h"
#include "core/tb_secret_seal.h"
#include "server/tb_advertised.h"
#include "server/tb_auth.h"
#include "server/tb_connector_dir.h"
#include "server/tb_connector_file.h"
#include "server/tb_distributed.h"
#include "server/tb_forward.h"
#include "server/tb_http.h"
#include "server/tb_reload.h"
#include "server/tb_validate.h"
#include "server/tb_verbs.h"
#include "server/tb_worker_config.h"
#include "tb_version.h"

extern char **environ;

typedef struct {
    const char *worker_file;
    char **connector_files;
    int connector_file_count;
    int dev;
} cli_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: tributary [--dev] [worker.properties [connector ...]]\n"
                 "       tributary validate [worker.properties] [connector ...]\n"
                 "       tributary --config-reference\n"
                 "       tributary --routes\n"
                 "       tributary --hash-password < secret\n"
                 "       tributary --version\n");
}

/* Reads the worker file and the environment; parses and validates. Prints
 * every error (naming the key) and returns NULL when invalid. */
static json_t *load_worker_config(const cli_t *cli, json_t **raw_out,
                                  tb_worker_settings_t *settings)
{
    json_t *errors = json_array();
    json_t *values = tb_worker_config_load(cli->worker_file, cli->dev, environ, raw_out,
                                           settings, errors);
    size_t i;
    json_t *message;
    json_array_foreach (errors, i, message) {
        fprintf(stderr, "tributary: worker config: %s\n", json_string_value(message));
    }
    json_decref(errors);
    return values;
}

/* Creates the directory that will hold path, if any. */
static int make_parent_dir(const char *path)
{
    char *copy = strdup(path);
    char *dir = dirname(copy);
    int rc = 0;
    char partial[4096] = "";
    for (char *p = dir; rc == 0 && *p != '\0'; p++) {
        if (*p == '/' && p != dir) {
            snprintf(partial, sizeof(partial), "%.*s", (int)(p - dir), dir);
            rc = mkdir(partial, 0700) == 0 || errno == EEXIST ? 0 : -1;
        }
    }
    if (rc == 0 && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        rc = -1;
    }
    free(copy);
    return rc;
}

/* One worker per store: an advisory lock on <store>.lock, which records the
 * holder's pid. Returns the lock's descriptor, to keep open for the
 * process's life (the kernel releases the lock when the process ends, also
 * on kill -9), or -1 after logging why the worker cannot start. */
static int lock_store(const char *store_path)
{
    char path[4096], holder[32] = "";
    snprintf(path, sizeof(path), "%s.lock", store_path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot open the store's lock %s: %s",
               path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int error = errno;
        ssize_t n = pread(fd, holder, sizeof(holder) - 1, 0);
        holder[n > 0 ? strcspn(holder, "\n") : 0] = '\0';
        if (error == EWOULDBLOCK) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker",
                   "the store %s is in use by another worker (pid %s holds %s): a store "
                   "has one worker; stop that one, or give this one another "
                   "offset.storage.file.filename",
                   store_path, holder[0] != '\0' ? holder : "unknown", path);
        } else {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot lock %s: %s", path,
                   strerror(error));
        }
        close(fd);
        return -1;
    }
    if (ftruncate(fd, 0) != 0 || dprintf(fd, "%ld\n", (long)getpid()) < 0) {
        TB_LOG(TB_LOG_WARN, "tributary.worker",
               "cannot record this worker's pid in %s: %s", path, strerror(errno));
    }
    return fd;
}

/* The comma-joined items of a LIST key's value; NULL when it is null
 * (unset). */
static char *joined_list(const json_t *list)
{
    size_t i;
    json_t *item;
    char *out = NULL;
    size_t len = 0;
    if (json_is_null(list)) {
        return NULL;
    }
    json_array_foreach (list, i, item) {
        const char *s = json_string_value(item);
        char *grown = realloc(out, len + strlen(s) + 2);
        if (grown == NULL) {
            break;
        }
        out = grown;
        len += (size_t)sprintf(out + len, "%s%s", i ? "," : "", s);
    }
    return out != NULL ? out : strdup("");
}

/* Creates or updates the connectors of the files on the command line, as
 * connect-standalone does. Returns -1 (logged) at the first that fails. */
static int put_connector_files(tb_herder_t *herder, const cli_t *cli)
{
    for (int i = 0; i < cli->connector_file_count; i++) {
        const char *path = cli->connector_files[i];
        char msg[4096];
        json_t *info = NULL;
        bool created;
        tb_target_state_t initial;
        json_t *file = tb_connector_file_load(path, msg, sizeof(msg));
        if (file == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "connector file %s", msg);
            return -1;
        }
        const char *name = json_string_value(json_object_get(file, "name"));
        const char *state = json_string_value(json_object_get(file, "initial_state"));
        tb_err_t err = TB_ERR_BAD_REQUEST;
        if (tb_initial_state_parse(state, &initial) != 0) {
            snprintf(msg, sizeof(msg),
                     "initial_state %s is not RUNNING, PAUSED or STOPPED", state);
        } else {
            err =
                tb_herder_connector_put(herder, name, json_object_get(file, "config"),
                                        initial, true, &created, &info, msg, sizeof(msg));
        }
        json_decref(info);
        json_decref(file);
        if (err != TB_OK) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "connector file %s: %s", path, msg);
            return -1;
        }
    }
    return 0;
}

/* Says which Kafka the worker uses: the mock cluster or bootstrap.servers. */
static void log_kafka_link(const tb_herder_t *herder, bool dev)
{
    if (dev) {
        TB_LOG(TB_LOG_WARN, "tributary.worker",
               "DEV MODE: in-process, in-memory Kafka cluster at %s - for "
               "development only, its data is lost when tributary stops",
               tb_herder_bootstrap(herder));
    } else {
        TB_LOG(TB_LOG_INFO, "tributary.worker", "Kafka bootstrap.servers %s",
               tb_herder_bootstrap(herder));
    }
}

/* listeners.https.ssl.key.password, a reference resolved (malloc'd into
 * *out, NULL when unset). Returns -1, logged, when it cannot be resolved. */
static int resolve_key_password(const tb_worker_settings_t *settings, char **out)
{
    const char *value = settings->listeners_https_ssl_key_password;
    char errstr[1024];
    if (value == NULL) {
        return 0;
    }
    *out = tb_secret_resolve(value, errstr, sizeof(errstr));
    if (*out == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "listeners.https.ssl.key.password: %s",
               errstr);
        return -1;
    }
    return 0;
}

/* secrets.encryption.key: its reference resolved and the key handed to
 * tb_secret_seal.h. Returns -1, logged, when it is set and unusable. */
static int load_encryption_key(const tb_worker_settings_t *settings, bool distributed)
{
    const char *value = settings->secrets_encryption_key;
    unsigned char key[TB_SECRET_SEAL_KEY_SIZE];
    char errstr[1024];
    char *text = NULL;
    int rc = -1;
    if (value == NULL) {
        if (distributed && settings->secrets_literal_allowed) {
            TB_LOG(TB_LOG_INFO, "tributary.worker",
                   "secrets.encryption.key is not set: connectors' literal secrets are "
                   "refused (set it, the same on every worker, to keep them encrypted "
                   "in the config topic)");
        }
        return 0;
    }
    if (!tb_secret_is_reference(value) || tb_secret_is_sealed(value)) {
        snprintf(errstr, sizeof(errstr),
                 "it must be a ${file:/path:key} or ${env:NAME} reference, so that the "
                 "key stays out of the worker's properties");
    } else if ((text = tb_secret_resolve(value, errstr, sizeof(errstr))) != NULL &&
               tb_secret_seal_key_parse(text, key, errstr, sizeof(errstr)) == 0) {
        rc = tb_secret_seal_key_set(key);
        snprintf(errstr, sizeof(errstr), "out of memory");
    }
    if (rc != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: secrets.encryption.key: %s", errstr);
    }
    if (text != NULL) {
        OPENSSL_cleanse(text, strlen(text));
        free(text);
    }
    OPENSSL_cleanse(key, sizeof(key));
    return rc;
}

/* Makes the process dumpable (core files, ptrace by its user) or not, as
 * core.dumps.enable says, and logs what the kernel then reports. Returns
 * -1, logged, when the kernel refuses. */
static int set_dumpable(bool dumpable)
{
    if (prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "core.dumps.enable: prctl: %s",
               strerror(errno));
        return -1;
    }
    int state = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    TB_LOG(state == 1 ? TB_LOG_WARN : TB_LOG_INFO, "tributary.worker",
           "core dumps %s (the process is %sdumpable, core.dumps.enable=%s)%s",
           state == 1 ? "enabled" : "disabled", state == 1 ? "" : "not ",
           dumpable ? "true" : "false",
           state == 1 ? ": a core file of this worker holds its resolved secrets" : "");
    return 0;
}

/* Whether connector.client.config.override.policy lets connectors override
 * any client key: All does (restricted by a non-empty allowlist, as
 * tributary always did), Allowlist (KIP-1188) does when its allowlist names
 * one, None does not. */
static bool overrides_allowed(const tb_worker_settings_t *settings)
{
    int policy = settings->connector_client_config_override_policy;
    return policy == TB_OVERRIDE_POLICY_ALL ||
           (policy == TB_OVERRIDE_POLICY_ALLOWLIST &&
            json_array_size(settings->connector_client_config_override_allowlist) > 0);
}

/* Says, once at start, where tributary's reading of the override keys is
 * not what a Connect 4.2 user would guess. */
static void log_override_policy(const tb_worker_settings_t *settings)
{
    int policy = settings->connector_client_config_override_policy;
    size_t listed = json_array_size(settings->connector_client_config_override_allowlist);
    if (policy == TB_OVERRIDE_POLICY_ALL && listed > 0) {
        TB_LOG(TB_LOG_WARN, "tributary.worker",
               "connector.client.config.override.policy=All with a "
               "connector.client.config.override.allowlist: connectors may override "
               "only the listed keys (Connect 4.2 ignores the list under All; set the "
               "policy to Allowlist to say so)");
    } else if (policy == TB_OVERRIDE_POLICY_ALLOWLIST && listed == 0) {
        TB_LOG(TB_LOG_WARN, "tributary.worker",
               "connector.client.config.override.policy=Allowlist with an empty "
               "connector.client.config.override.allowlist: connectors may override no "
               "client key");
    }
}

/* The worker's options that its keys give; the caller sets the
 * store, the mode, the converters, the worker's id and exactly-once's
 * settings. Borrows settings and kafka_props. */
static tb_worker_options_t worker_options_of(const tb_worker_settings_t *settings,
                                             const json_t *kafka_props)
{
    const char *store_path = settings->offset_storage_file_filename;
    return (tb_worker_options_t){
        .store_path = store_path,
        .kafka_props = kafka_props,
        .dev = settings->dev,
        .task_threads = settings->task_threads,
        .offset_flush_interval_ms = settings->offset_flush_interval_ms,
        .shutdown_timeout_ms = settings->task_shutdown_graceful_timeout_ms,
        .restart_backoff_initial_ms = settings->task_restart_backoff_initial_ms,
        .restart_backoff_max_ms = settings->task_restart_backoff_max_ms,
        .overrides_allowed = overrides_allowed(settings),
        .override_allowlist = settings->connector_client_config_override_allowlist,
        .literal_secrets = settings->secrets_literal_allowed,
        .downgrade_allowed = settings->connector_client_security_downgrade_allowed,
        .secret_policy = tb_worker_config_secret_policy(settings, store_path),
        .limits = {.allowed_dirs = settings->file_allowed_dirs,
                   .allowed_hosts = settings->http_sink_allowed_hosts,
                   .store_path = store_path},
        .exactly_once_source =
            settings->exactly_once_source_support == TB_EOS_SUPPORT_ENABLED,
    };
}

/* Waits for SIGTERM or SIGINT, which it returns; meanwhile reloads on
 * SIGHUP (tb_reload.h) and, distributed (cluster set), applies
 * connectors.dir each time this worker becomes the leader, which alone
 * applies it. A standalone worker applied it at start. */
static int wait_for_stop(tb_reload_t *reload, tb_cluster_t *cluster)
{
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    bool was_leader = cluster == NULL;
    for (;;) {
        struct timespec tick = {.tv_sec = 1};
        char url[320] = "";
        int signal_number = cluster != NULL ? sigtimedwait(&signals, NULL, &tick)
                                            : sigwaitinfo(&signals, NULL);
        if (signal_number == SIGTERM || signal_number == SIGINT) {
            return signal_number;
        }
        bool leader =
            cluster == NULL || tb_cluster_leader(cluster, url, sizeof(url)) == 1;
        if (signal_number == SIGHUP) {
            bool ok;
            json_decref(tb_reload_run(reload, "SIGHUP received", &ok));
        } else if (leader && !was_leader) {
            tb_reload_apply_dir(reload, "this worker leads");
        }
        was_leader = leader;
    }
}

static int run(const cli_t *cli)
{
    json_t *raw = NULL;
    tb_worker_settings_t settings;
    json_t *values = load_worker_config(cli, &raw, &settings);
    tb_herder_t *herder = NULL;
    tb_cluster_t *cluster = NULL;
    tb_forward_t *forward = NULL;
    tb_http_server_t *http = NULL;
    tb_reload_t *reload = NULL;
    json_t *kafka_props = NULL;
    json_t *converters = NULL;
    char *listeners = NULL;
    char *admin_listeners = NULL;
    char *key_password = NULL;
    tb_secret_deny_t *deny = NULL;
    tb_api_context_t ctx = {0};
    tb_http_options_t http_options = {0};
    char errstr[1024];
    char worker_id[300];
    tb_series_t *app_info[TB_CONNECT_APP_INFO_COUNT] = {NULL};
    char worker_url[320];
    int rc = 1;
    int store_lock = -1;

    if (values == NULL) {
        goto done;
    }
    tb_log_level_t root_level;
    tb_log_level_parse(settings.log_level, &root_level);
    json_decref(tb_log_level_set("root", root_level, -1));
    tb_log_set_format((tb_log_format_t)settings.log_format);
    tb_metrics_ms_names_set(settings.metrics_milliseconds_names);

    if (tb_worker_config_check_connect_keys(raw) != 0) {
        goto done;
    }
    if (set_dumpable(settings.core_dumps_enable) != 0) {
        goto done;
    }
    log_override_policy(&settings);
    bool dev = settings.dev;
    if (!dev && json_array_size(settings.bootstrap_servers) == 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: bootstrap.servers is not set: name the Kafka "
               "brokers (host:port,...) in the worker file or "
               "TRIBUTARY_BOOTSTRAP_SERVERS; it has no default since Connect 4.2 "
               "(KIP-1161), 3.9's was localhost:9092. For an in-memory development "
               "cluster run with --dev");
        goto done;
    }
    const char *store_path = settings.offset_storage_file_filename;
    if (make_parent_dir(store_path) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "cannot create the directory of offset.storage.file.filename %s: %s",
               store_path, strerror(errno));
        goto done;
    }
    store_lock = lock_store(store_path);
    if (store_lock < 0 || resolve_key_password(&settings, &key_password) != 0) {
        goto done;
    }
    /* before any connector can start: the worker's own files and variables */
    deny = tb_worker_config_deny(raw, cli->worker_file);
    if (deny == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: out of memory");
        goto done;
    }
    listeners = joined_list(settings.listeners);
    admin_listeners = joined_list(settings.admin_listeners);
    http_options = (tb_http_options_t){
        .listeners = listeners != NULL ? listeners : "",
        .admin_listeners = admin_listeners,
        .body_max_bytes = (size_t)settings.rest_request_body_max_bytes,
        .threads = (unsigned)settings.rest_threads,
        .connections_max = (unsigned)settings.rest_connections_max,
        .connections_per_client = (unsigned)settings.rest_connections_per_client_max,
        .connection_timeout_ms = (unsigned)settings.rest_connection_timeout_ms,
        .header_timeout_ms = (unsigned)settings.rest_request_header_timeout_ms,
        .request_timeout_ms = settings.rest_request_timeout_ms,
        .auth_credentials_file = settings.rest_auth_credentials_file,
        .allow_unauthenticated_remote = settings.rest_allow_unauthenticated_remote,
        .ssl_certificate_location = settings.listeners_https_ssl_certificate_location,
        .ssl_key_location = settings.listeners_https_ssl_key_location,
        .ssl_key_password = key_password,
        .ssl_ca_location = settings.listeners_https_ssl_ca_location,
        .cors_allow_origin = settings.access_control_allow_origin,
        .cors_allow_methods = settings.access_control_allow_methods,
        .ctx = &ctx,
    };
    tb_auth_mode_parse(settings.rest_auth, &http_options.auth);
    tb_http_client_auth_parse(settings.listeners_https_ssl_client_auth,
                              &http_options.ssl_client_auth);
    /* bound before anything starts: dev mode's in-memory cluster and the
     * Kafka clients cannot take the port, and a worker that cannot have it
     * starts no connector */
    http = tb_http_bind(&http_options, errstr, sizeof(errstr));
    if (http == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "refusing to start: %s", errstr);
        goto done;
    }
    if (tb_advertised_url(&settings, worker_url, sizeof(worker_url), errstr,
                          sizeof(errstr)) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "refusing to start: %s", errstr);
        goto done;
    }
    snprintf(worker_id, sizeof(worker_id), "%s", tb_advertised_worker_id(worker_url));
    kafka_props = tb_worker_config_kafka_props(raw);
    converters = tb_worker_config_converters(raw, &settings);
    bool distributed = tb_distributed_enabled(&settings);
    tb_store_t *store = NULL;
    const char *connectors_dir = settings.connectors_dir;
    bool prune = settings.connectors_dir_prune;
    if (prune && connectors_dir == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: connectors.dir.prune=true needs connectors.dir, the "
               "directory whose files are the connectors to keep");
        goto done;
    }
    if (distributed && (dev || cli->connector_file_count > 0)) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: group.id makes this worker distributed, %s",
               dev ? "and dev mode runs one worker on its in-process Kafka"
                   : "and a distributed worker's connectors are created through the "
                     "REST API, not named on the command line (as in Connect)");
        goto done;
    }
    if (load_encryption_key(&settings, distributed) != 0) {
        goto done;
    }
    if (distributed) {
        store = tb_distributed_store_open(&settings, kafka_props, worker_id, errstr,
                                          sizeof(errstr));
        if (store == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: %s", errstr);
            goto done;
        }
    }
    tb_worker_options_t worker_options = worker_options_of(&settings, kafka_props);
    worker_options.store = store;
    worker_options.distributed = distributed;
    worker_options.converter_config = converters;
    worker_options.worker_id = worker_id;
    worker_options.eos = tb_distributed_eos_settings(&settings, raw);
    worker_options.limits.deny = deny;
    herder = tb_herder_create(&worker_options, errstr, sizeof(errstr));
    if (herder == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: %s", errstr);
        goto done;
    }
    if (put_connector_files(herder, cli) != 0) {
        goto done;
    }
    if (connectors_dir != NULL && !distributed) {
        tb_connector_dir_result_t applied;
        tb_connector_dir_apply(herder, connectors_dir, prune, &applied);
    }
    if (distributed) {
        cluster = tb_distributed_join(&settings, kafka_props, herder, worker_url, errstr,
                                      sizeof(errstr));
        if (cluster == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot join the cluster: %s",
                   errstr);
            goto done;
        }
        forward = tb_forward_create(&(tb_forward_options_t){
            .cluster = cluster,
            .signature_algorithm = settings.inter_worker_signature_algorithm,
            .verification_algorithms = settings.inter_worker_verification_algorithms,
        });
        if (forward == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: out of memory");
            goto done;
        }
    }
    log_kafka_link(herder, dev);
    reload = tb_reload_create(&(tb_reload_options_t){
        .worker_file = cli->worker_file,
        .dev = cli->dev,
        .raw = raw,
        .settings = &settings,
        .store_path = store_path,
        .herder = herder,
        .http = http,
        .cluster = cluster,
    });
    if (reload == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: out of memory");
        goto done;
    }
    ctx = (tb_api_context_t){
        .herder = herder,
        .worker_id = worker_id,
        .topic_tracking_disabled = !settings.topic_tracking_enable,
        .topic_reset_disabled = !settings.topic_tracking_allow_reset,
        .forward = forward != NULL ? tb_forward_request : NULL,
        .forward_opaque = forward,
        .reload = tb_reload_api,
        .reload_opaque = reload,
    };
    if (tb_http_serve(http, errstr, sizeof(errstr)) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start the REST API: %s", errstr);
        goto done;
    }
    tb_connect_app_info_take(app_info, worker_id, TB_CONNECT_VERSION, TB_GIT_COMMIT,
                             (double)tb_wall_ms() / 1000);
    char allocator[64];
    TB_LOG(TB_LOG_INFO, "tributary.worker",
           "tributary %s (%s) started as %s, librdkafka %s, %s", TB_VERSION,
           TB_GIT_COMMIT, worker_id, rd_kafka_version_str(),
           tb_allocator_describe(allocator, sizeof(allocator)));

    int signal_number = wait_for_stop(reload, cluster);
    TB_LOG(TB_LOG_INFO, "tributary.worker", "%s received; stopping",
           strsignal(signal_number));
    rc = 0;

done:
    for (size_t i = 0; i < TB_CONNECT_APP_INFO_COUNT; i++) {
        tb_series_release(app_info[i]);
    }
    tb_forward_stop(forward);
    tb_http_stop(http);
    tb_reload_destroy(reload);
    tb_forward_destroy(forward);
    tb_cluster_stop(cluster);
    tb_herder_destroy(herder);
    tb_secret_deny_destroy(deny);
    if (key_password != NULL) {
        OPENSSL_cleanse(key_password, strlen(key_password));
        free(key_password);
    }
    tb_secret_seal_key_set(NULL);
    if (store_lock >= 0) {
        close(store_lock);
    }
    free(listeners);
    free(admin_listeners);
    json_decref(kafka_props);
    json_decref(converters);
    json_decref(values);
    json_decref(raw);
    if (rc == 0) {
        TB_LOG(TB_LOG_INFO, "tributary.worker", "stopped");
    }
    tb_log_shutdown();
    return rc;
}

/* True when path is a worker file: not JSON, and with neither name nor
 * connector.class, which every connector file has. */
static bool is_worker_file(const char *path)
{
    char errstr[512];
    FILE *in = fopen(path, "r");
    int first = ' ';
    while (in != NULL &&
           (first == ' ' || first == '\t' || first == '\r' || first == '\n')) {
        first = fgetc(in);
    }
    if (in != NULL) {
        fclose(in);
    }
    json_t *props = in != NULL && first != '{'
                        ? tb_props_load_file(path, errstr, sizeof(errstr))
                        : NULL;
    bool worker = props != NULL && json_object_get(props, "name") == NULL &&
                  json_object_get(props, "connector.class") == NULL;
    json_decref(props);
    return worker;
}

/* The connector files validate reads: those named, or without any the files
 * of dir, the worker's connectors.dir (NULL: unset). NULL (said on stderr) when there are
 * none to read: *usage_error tells whether none were named. */
static json_t *files_to_validate(char *const *files, int count, const char *dir,
                                 bool *usage_error)
{
    json_t *paths = NULL;
    *usage_error = count == 0 && dir == NULL;
    if (count > 0) {
        paths = json_array();
        for (int i = 0; i < count; i++) {
            json_array_append_new(paths, json_string(files[i]));
        }
    } else if (dir != NULL) {
        paths = tb_connector_dir_files(dir);
        if (paths == NULL) {
            fprintf(stderr, "tributary validate: cannot read connectors.dir %s: %s\n",
                    dir, strerror(errno));
        } else if (json_array_size(paths) == 0) {
            fprintf(stderr,
                    "tributary validate: connectors.dir %s holds no connector file\n",
                    dir);
        }
    } else {
        fprintf(stderr, "tributary validate: no connector file to validate (name them, "
                        "or a worker file that sets connectors.dir)\n");
        usage(stderr);
    }
    return paths;
}

/* tributary validate [worker.properties] [connector...]: Connect's
 * validation of each connector file (of the worker's connectors.dir when
 * none is named) by a worker of that worker file (the defaults without
 * one), with no store, no Kafka and no listener. 0 when every file is
 * valid, 1 when any has an error (or the worker file has one), 2 on usage. */
static int validate(int argc, char **argv)
{
    cli_t cli = {0};
    json_t *raw = NULL;
    json_t *paths = NULL;
    tb_client_settings_t client;
    bool usage_error = false;
    int first = argc > 0 && is_worker_file(argv[0]) ? 1 : 0;
    int rc = 1;
    cli.worker_file = first == 1 ? argv[0] : NULL;
    tb_worker_settings_t settings;
    json_t *values = load_worker_config(&cli, &raw, &settings);
    json_t *kafka_props = raw != NULL ? tb_worker_config_kafka_props(raw) : NULL;
    if (values != NULL && tb_worker_config_check_connect_keys(raw) == 0) {
        paths = files_to_validate(argv + first, argc - first, settings.connectors_dir,
                                  &usage_error);
    }
    /* the worker's own files and variables, refused as the worker refuses them */
    tb_secret_deny_t *deny =
        paths != NULL ? tb_worker_config_deny(raw, cli.worker_file) : NULL;
    if (deny != NULL) {
        tb_worker_options_t options = worker_options_of(&settings, kafka_props);
        options.limits.deny = deny;
        tb_connector_checks_t checks = tb_herder_offline_checks(&options, &client);
        rc = tb_validate_files(&checks, paths, stdout, stderr) == 0 ? 0 : 1;
    } else if (paths != NULL) {
        fprintf(stderr, "tributary validate: out of memory\n");
    }
    tb_secret_deny_destroy(deny);
    json_decref(paths);
    json_decref(kafka_props);
    json_decref(values);
    json_decref(raw);
    tb_log_shutdown();
    return usage_error ? 2 : rc;
}

int main(int argc, char **argv)
{
    cli_t cli = {0};
    int positional = 0;
    sigset_t signals;

    /* not dumpable before any secret is read (core.dumps.enable undoes it) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    if (argc > 1 && strcmp(argv[1], "validate") == 0) {
        return validate(argc - 2, argv + 2);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dev") == 0) {
            cli.dev = 1;
        } else if (strcmp(argv[i], "--version") == 0) {
            char allocator[64];
            printf("tributary %s (%s), Kafka Connect REST %s, librdkafka %s, %s\n",
                   TB_VERSION, TB_GIT_COMMIT, TB_CONNECT_VERSION, rd_kafka_version_str(),
                   tb_allocator_describe(allocator, sizeof(allocator)));
            return 0;
        } else if (strcmp(argv[i], "--config-reference") == 0) {
            return tb_verbs_config_reference();
        } else if (strcmp(argv[i], "--routes") == 0) {
            return tb_verbs_routes();
        } else if (strcmp(argv[i], "--hash-password") == 0) {
            return tb_verbs_hash_password();
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "tributary: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (positional++ == 0) {
            cli.worker_file = argv[i];
        } else {
            if (cli.connector_files == NULL) {
                cli.connector_files = &argv[i];
            }
            cli.connector_file_count++;
        }
    }
    /* Every thread inherits this mask, so only the main thread's wait sees
     * the signals. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* once, before any thread: libcurl's global state (the HTTP sink) */
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = run(&cli);
    curl_global_cleanup();
    return rc;
}
