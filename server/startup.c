/* The wiring of a worker, step by step (tb_startup.h). */
#include "server/tb_startup.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <openssl/crypto.h>

#include "core/tb_allocator.h"
#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_secret_seal.h"
#include "core/tb_time.h"
#include "server/tb_advertised.h"
#include "server/tb_auth.h"
#include "server/tb_connector_dir.h"
#include "server/tb_connector_file.h"
#include "server/tb_distributed.h"
#include "tb_version.h"

extern char **environ;

json_t *tb_startup_read_config(const tb_startup_args_t *args, json_t **raw_out,
                               tb_worker_settings_t *settings)
{
    json_t *errors = json_array();
    json_t *values = tb_worker_config_load(args->worker_file, args->dev, environ, raw_out,
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
static int put_connector_files(tb_herder_t *herder, const tb_startup_args_t *args)
{
    for (int i = 0; i < args->connector_file_count; i++) {
        const char *path = args->connector_files[i];
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

tb_worker_options_t tb_startup_worker_options(const tb_worker_settings_t *settings,
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
        .producers_shared = settings->connector_producer_sharing_enabled,
        .secret_policy = tb_worker_config_secret_policy(settings, store_path),
        .limits = {.allowed_dirs = settings->file_allowed_dirs,
                   .allowed_hosts = settings->http_sink_allowed_hosts,
                   .store_path = store_path},
        .exactly_once_source =
            settings->exactly_once_source_support == TB_EOS_SUPPORT_ENABLED,
    };
}

int tb_startup_settings(tb_startup_t *s, const tb_startup_args_t *args)
{
    s->args = args;
    s->values = tb_startup_read_config(args, &s->raw, &s->settings);
    if (s->values == NULL) {
        return -1;
    }
    tb_log_level_t root_level;
    tb_log_level_parse(s->settings.log_level, &root_level);
    json_decref(tb_log_level_set("root", root_level, -1));
    tb_log_set_format((tb_log_format_t)s->settings.log_format);
    tb_metrics_ms_names_set(s->settings.metrics_milliseconds_names);
    return 0;
}

int tb_startup_check(tb_startup_t *s)
{
    if (tb_worker_config_check_connect_keys(s->raw) != 0) {
        return -1;
    }
    if (set_dumpable(s->settings.core_dumps_enable) != 0) {
        return -1;
    }
    log_override_policy(&s->settings);
    if (!s->settings.dev && json_array_size(s->settings.bootstrap_servers) == 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: bootstrap.servers is not set: name the Kafka "
               "brokers (host:port,...) in the worker file or "
               "TRIBUTARY_BOOTSTRAP_SERVERS; it has no default since Connect 4.2 "
               "(KIP-1161), 3.9's was localhost:9092. For an in-memory development "
               "cluster run with --dev");
        return -1;
    }
    return 0;
}

int tb_startup_lock_store(tb_startup_t *s)
{
    const char *store_path = s->settings.offset_storage_file_filename;
    if (make_parent_dir(store_path) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "cannot create the directory of offset.storage.file.filename %s: %s",
               store_path, strerror(errno));
        return -1;
    }
    s->store_lock = lock_store(store_path);
    return s->store_lock < 0 ? -1 : 0;
}

int tb_startup_secrets(tb_startup_t *s)
{
    if (resolve_key_password(&s->settings, &s->key_password) != 0) {
        return -1;
    }
    /* before any connector can start: the worker's own files and variables */
    s->deny = tb_worker_config_deny(s->raw, s->args->worker_file);
    if (s->deny == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: out of memory");
        return -1;
    }
    return 0;
}

int tb_startup_bind(tb_startup_t *s)
{
    const tb_worker_settings_t *settings = &s->settings;
    char errstr[1024];
    s->listeners = joined_list(settings->listeners);
    s->admin_listeners = joined_list(settings->admin_listeners);
    s->http_options = (tb_http_options_t){
        .listeners = s->listeners != NULL ? s->listeners : "",
        .admin_listeners = s->admin_listeners,
        .body_max_bytes = (size_t)settings->rest_request_body_max_bytes,
        .threads = (unsigned)settings->rest_threads,
        .connections_max = (unsigned)settings->rest_connections_max,
        .connections_per_client = (unsigned)settings->rest_connections_per_client_max,
        .connection_timeout_ms = (unsigned)settings->rest_connection_timeout_ms,
        .header_timeout_ms = (unsigned)settings->rest_request_header_timeout_ms,
        .request_timeout_ms = settings->rest_request_timeout_ms,
        .auth_credentials_file = settings->rest_auth_credentials_file,
        .allow_unauthenticated_remote = settings->rest_allow_unauthenticated_remote,
        .ssl_certificate_location = settings->listeners_https_ssl_certificate_location,
        .ssl_key_location = settings->listeners_https_ssl_key_location,
        .ssl_key_password = s->key_password,
        .ssl_ca_location = settings->listeners_https_ssl_ca_location,
        .cors_allow_origin = settings->access_control_allow_origin,
        .cors_allow_methods = settings->access_control_allow_methods,
        .ctx = &s->ctx,
    };
    tb_auth_mode_parse(settings->rest_auth, &s->http_options.auth);
    tb_http_client_auth_parse(settings->listeners_https_ssl_client_auth,
                              &s->http_options.ssl_client_auth);
    /* bound before anything starts: dev mode's in-memory cluster and the
     * Kafka clients cannot take the port, and a worker that cannot have it
     * starts no connector */
    s->http = tb_http_bind(&s->http_options, errstr, sizeof(errstr));
    if (s->http == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "refusing to start: %s", errstr);
        return -1;
    }
    if (tb_advertised_url(settings, s->http, s->worker_url, sizeof(s->worker_url), errstr,
                          sizeof(errstr)) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "refusing to start: %s", errstr);
        return -1;
    }
    snprintf(s->worker_id, sizeof(s->worker_id), "%s",
             tb_advertised_worker_id(s->worker_url));
    return 0;
}

int tb_startup_store(tb_startup_t *s)
{
    char errstr[1024];
    s->kafka_props = tb_worker_config_kafka_props(s->raw);
    s->converters = tb_worker_config_converters(s->raw, &s->settings);
    s->distributed = tb_distributed_enabled(&s->settings);
    if (s->settings.connectors_dir_prune && s->settings.connectors_dir == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: connectors.dir.prune=true needs connectors.dir, the "
               "directory whose files are the connectors to keep");
        return -1;
    }
    if (s->distributed && (s->settings.dev || s->args->connector_file_count > 0)) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker",
               "refusing to start: group.id makes this worker distributed, %s",
               s->settings.dev
                   ? "and dev mode runs one worker on its in-process Kafka"
                   : "and a distributed worker's connectors are created through the "
                     "REST API, not named on the command line (as in Connect)");
        return -1;
    }
    if (load_encryption_key(&s->settings, s->distributed) != 0) {
        return -1;
    }
    if (s->distributed) {
        s->store = tb_distributed_store_open(&s->settings, s->kafka_props, s->worker_id,
                                             errstr, sizeof(errstr));
        if (s->store == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: %s", errstr);
            return -1;
        }
    }
    return 0;
}

int tb_startup_herder(tb_startup_t *s)
{
    char errstr[1024];
    tb_worker_options_t worker_options =
        tb_startup_worker_options(&s->settings, s->kafka_props);
    worker_options.store = s->store;
    worker_options.distributed = s->distributed;
    worker_options.converter_config = s->converters;
    worker_options.worker_id = s->worker_id;
    worker_options.eos = tb_distributed_eos_settings(&s->settings, s->raw);
    worker_options.limits.deny = s->deny;
    s->herder = tb_herder_create(&worker_options, errstr, sizeof(errstr));
    if (s->herder == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: %s", errstr);
        return -1;
    }
    if (put_connector_files(s->herder, s->args) != 0) {
        return -1;
    }
    if (s->settings.connectors_dir != NULL && !s->distributed) {
        tb_connector_dir_result_t applied;
        tb_connector_dir_apply(s->herder, s->settings.connectors_dir,
                               s->settings.connectors_dir_prune, &applied);
    }
    return 0;
}

int tb_startup_join(tb_startup_t *s)
{
    char errstr[1024];
    if (s->distributed) {
        s->cluster = tb_distributed_join(&s->settings, s->kafka_props, s->herder,
                                         s->worker_url, errstr, sizeof(errstr));
        if (s->cluster == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot join the cluster: %s",
                   errstr);
            return -1;
        }
        s->forward = tb_forward_create(&(tb_forward_options_t){
            .cluster = s->cluster,
            .signature_algorithm = s->settings.inter_worker_signature_algorithm,
            .verification_algorithms = s->settings.inter_worker_verification_algorithms,
        });
        if (s->forward == NULL) {
            TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: out of memory");
            return -1;
        }
    }
    log_kafka_link(s->herder, s->settings.dev);
    return 0;
}

int tb_startup_serve(tb_startup_t *s)
{
    char errstr[1024];
    s->reload = tb_reload_create(&(tb_reload_options_t){
        .worker_file = s->args->worker_file,
        .dev = s->args->dev,
        .raw = s->raw,
        .settings = &s->settings,
        .store_path = s->settings.offset_storage_file_filename,
        .herder = s->herder,
        .http = s->http,
        .cluster = s->cluster,
    });
    if (s->reload == NULL) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start: out of memory");
        return -1;
    }
    s->ctx = (tb_api_context_t){
        .herder = s->herder,
        .worker_id = s->worker_id,
        .topic_tracking_disabled = !s->settings.topic_tracking_enable,
        .topic_reset_disabled = !s->settings.topic_tracking_allow_reset,
        .forward = s->forward != NULL ? tb_forward_request : NULL,
        .forward_opaque = s->forward,
        .reload = tb_reload_api,
        .reload_opaque = s->reload,
    };
    if (tb_http_serve(s->http, errstr, sizeof(errstr)) != 0) {
        TB_LOG(TB_LOG_FATAL, "tributary.worker", "cannot start the REST API: %s", errstr);
        return -1;
    }
    tb_connect_app_info_take(s->app_info, s->worker_id, TB_CONNECT_VERSION, TB_GIT_COMMIT,
                             (double)tb_wall_ms() / 1000);
    char allocator[64];
    TB_LOG(TB_LOG_INFO, "tributary.worker",
           "tributary %s (%s) started as %s, librdkafka %s, %s", TB_VERSION,
           TB_GIT_COMMIT, s->worker_id, rd_kafka_version_str(),
           tb_allocator_describe(allocator, sizeof(allocator)));
    return 0;
}

void tb_startup_release(tb_startup_t *s)
{
    for (size_t i = 0; i < TB_CONNECT_APP_INFO_COUNT; i++) {
        tb_series_release(s->app_info[i]);
    }
    tb_forward_stop(s->forward);
    tb_http_stop(s->http);
    tb_reload_destroy(s->reload);
    tb_forward_destroy(s->forward);
    tb_cluster_stop(s->cluster);
    tb_herder_destroy(s->herder);
    tb_secret_deny_destroy(s->deny);
    if (s->key_password != NULL) {
        OPENSSL_cleanse(s->key_password, strlen(s->key_password));
        free(s->key_password);
    }
    tb_secret_seal_key_set(NULL);
    if (s->store_lock >= 0) {
        close(s->store_lock);
    }
    free(s->listeners);
    free(s->admin_listeners);
    json_decref(s->kafka_props);
    json_decref(s->converters);
    json_decref(s->values);
    json_decref(s->raw);
}
