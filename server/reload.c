#include "server/tb_reload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/tb_log.h"
#include "core/tb_secret.h"
#include "core/tb_time.h"
#include "server/tb_connector_dir.h"
#include "server/tb_worker_config.h"

#define FACILITY "tributary.worker"

extern char **environ;

/* The keys a reload applies; any other that changed needs a restart. */
static const char *const live_keys[] = {
    "log.level",
    "log.format",
    "config.providers",
    "config.providers.file.param.allowed.paths",
    "config.providers.env.param.allowlist.pattern",
    "connectors.dir",
    "connectors.dir.prune",
};
#define LIVE_KEY_COUNT (sizeof(live_keys) / sizeof(live_keys[0]))

struct tb_reload {
    pthread_mutex_t lock;
    char *worker_file;
    bool dev;
    char *store_path;
    tb_herder_t *herder;
    tb_http_server_t *http;
    tb_cluster_t *cluster;
    /* the keys as the worker runs with them: those it started with, the
     * live ones as the last reload applied them */
    json_t *running;
    char *dir; /* connectors.dir; NULL when unset */
    bool prune;
};

static bool is_live(const char *key)
{
    for (size_t i = 0; i < LIVE_KEY_COUNT; i++) {
        if (strcmp(key, live_keys[i]) == 0) {
            return true;
        }
    }
    return false;
}

tb_reload_t *tb_reload_create(const tb_reload_options_t *options)
{
    tb_reload_t *reload = calloc(1, sizeof(*reload));
    if (reload == NULL) {
        return NULL;
    }
    pthread_mutex_init(&reload->lock, NULL);
    reload->worker_file =
        options->worker_file != NULL ? strdup(options->worker_file) : NULL;
    reload->dev = options->dev;
    reload->store_path = strdup(options->store_path);
    reload->herder = options->herder;
    reload->http = options->http;
    reload->cluster = options->cluster;
    reload->running = json_deep_copy(options->raw);
    const char *dir = options->settings->connectors_dir;
    reload->dir = dir != NULL && dir[0] != '\0' ? strdup(dir) : NULL;
    reload->prune = options->settings->connectors_dir_prune;
    if (reload->store_path == NULL || reload->running == NULL ||
        (dir != NULL && dir[0] != '\0' && reload->dir == NULL) ||
        (options->worker_file != NULL && reload->worker_file == NULL)) {
        tb_reload_destroy(reload);
        return NULL;
    }
    return reload;
}

void tb_reload_destroy(tb_reload_t *reload)
{
    if (reload == NULL) {
        return;
    }
    pthread_mutex_destroy(&reload->lock);
    free(reload->worker_file);
    free(reload->store_path);
    json_decref(reload->running);
    free(reload->dir);
    free(reload);
}

/* Whether this worker applies connectors.dir: standalone, or the leader;
 * else url gets the leader's ("" when unknown). */
static bool applies_dir(const tb_reload_t *reload, char *url, size_t url_size)
{
    url[0] = '\0';
    return reload->cluster == NULL ||
           tb_cluster_leader(reload->cluster, url, url_size) == 1;
}

/* Applies connectors.dir, the reload's lock held; its counts into report
 * when it is not NULL. */
static void apply_dir(tb_reload_t *reload, const char *why, json_t *report)
{
    char url[320];
    tb_connector_dir_result_t result;
    if (reload->dir == NULL) {
        return;
    }
    if (!applies_dir(reload, url, sizeof(url))) {
        TB_LOG(TB_LOG_INFO, FACILITY,
               "%s: connectors.dir is applied by the leader (%s), and by this worker "
               "when it leads",
               why, url[0] != '\0' ? url : "none known yet");
        return;
    }
    TB_LOG(TB_LOG_INFO, FACILITY, "%s: applying connectors.dir %s", why, reload->dir);
    if (tb_connector_dir_apply(reload->herder, reload->dir, reload->prune, &result) ==
            0 &&
        report != NULL) {
        json_object_set_new(report, "connectors_dir",
                            json_pack("{s:i, s:i, s:i, s:i, s:i}", "created",
                                      result.created, "updated", result.updated,
                                      "unchanged", result.unchanged, "deleted",
                                      result.deleted, "invalid", result.invalid));
    }
}

void tb_reload_apply_dir(tb_reload_t *reload, const char *why)
{
    pthread_mutex_lock(&reload->lock);
    apply_dir(reload, why, NULL);
    pthread_mutex_unlock(&reload->lock);
}

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys whose values differ between running and raw, each into applied
 * (a live key) or restart (any other), sorted. */
static void diff_keys(const json_t *running, const json_t *raw, json_t *applied,
                      json_t *restart)
{
    json_t *keys = json_object();
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)running, key, value) {
        if (!json_equal(value, json_object_get(raw, key))) {
            json_object_set_new(keys, key, json_true());
        }
    }
    json_object_foreach ((json_t *)raw, key, value) {
        if (json_object_get(running, key) == NULL) {
            json_object_set_new(keys, key, json_true());
        }
    }
    const char **sorted = calloc(json_object_size(keys) + 1, sizeof(*sorted));
    size_t n = 0;
    json_object_foreach (keys, key, value) {
        if (sorted != NULL) {
            sorted[n++] = key;
        }
    }
    qsort(sorted, n, sizeof(*sorted), compare_keys);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(is_live(sorted[i]) ? applied : restart,
                              json_string(sorted[i]));
    }
    free(sorted);
    json_decref(keys);
}

/* Joins the strings of list with ", " into buf. */
static void join(const json_t *list, char *buf, size_t size)
{
    size_t i, len = 0;
    json_t *item;
    buf[0] = '\0';
    json_array_foreach (list, i, item) {
        if (len < size) {
            len += (size_t)snprintf(buf + len, size - len, "%s%s", i > 0 ? ", " : "",
                                    json_string_value(item));
        }
    }
}

/* Reads the worker file and checks what a reload needs before applying
 * anything: the keys, and the listeners' new certificate, which it makes
 * current. Returns the values (new reference; *raw gets the keys,
 * *settings borrows from the values), or NULL with msg saying why nothing
 * may be applied. */
static json_t *prepare(tb_reload_t *reload, json_t **raw, tb_worker_settings_t *settings,
                       char *serial, char *msg, size_t msg_size)
{
    json_t *errors = json_array();
    json_t *values = tb_worker_config_load(reload->worker_file, reload->dev, environ, raw,
                                           settings, errors);
    char *password = NULL;
    const char *reference = json_string_value(
        json_object_get(reload->running, "listeners.https.ssl.key.password"));
    msg[0] = '\0';
    if (values == NULL) {
        char problems[1536];
        join(errors, problems, sizeof(problems));
        snprintf(msg, msg_size, "worker config %s: %s",
                 reload->worker_file != NULL ? reload->worker_file : "(none)", problems);
    } else if (settings->connectors_dir_prune && settings->connectors_dir == NULL) {
        snprintf(msg, msg_size, "connectors.dir.prune=true needs connectors.dir");
    } else if (reference != NULL &&
               (password = tb_secret_resolve(reference, msg, msg_size)) == NULL) {
        char reason[512];
        snprintf(reason, sizeof(reason), "%s", msg);
        snprintf(msg, msg_size, "listeners.https.ssl.key.password: %s", reason);
    } else if (tb_http_tls_reload(reload->http, password, serial, msg, msg_size) < 0) {
        /* msg names the key */
    }
    if (password != NULL) {
        OPENSSL_cleanse(password, strlen(password));
        free(password);
    }
    json_decref(errors);
    if (msg[0] != '\0') {
        json_decref(values);
        return NULL;
    }
    return values;
}

/* Applies the live keys that changed (applied) from settings and raw. */
static void apply_live(tb_reload_t *reload, const json_t *applied,
                       const tb_worker_settings_t *settings, const json_t *raw)
{
    size_t i;
    json_t *item;
    bool policy = false;
    json_array_foreach (applied, i, item) {
        const char *key = json_string_value(item);
        json_t *value = json_object_get(raw, key);
        if (value != NULL) {
            json_object_set(reload->running, key, value);
        } else {
            json_object_del(reload->running, key);
        }
        if (strcmp(key, "log.level") == 0) {
            tb_log_level_t level;
            tb_log_level_parse(settings->log_level, &level);
            json_decref(tb_log_level_set("root", level, tb_wall_ms()));
        } else if (strcmp(key, "log.format") == 0) {
            tb_log_set_format((tb_log_format_t)settings->log_format);
        } else if (strncmp(key, "config.providers", 16) == 0) {
            policy = true;
        }
    }
    if (policy) {
        tb_secret_policy_t next =
            tb_worker_config_secret_policy(settings, reload->store_path);
        tb_herder_secret_policy_set(reload->herder, &next);
    }
    const char *dir = settings->connectors_dir;
    free(reload->dir);
    reload->dir = dir != NULL ? strdup(dir) : NULL;
    reload->prune = settings->connectors_dir_prune;
}

json_t *tb_reload_run(tb_reload_t *reload, const char *cause, bool *ok)
{
    char msg[2048], serial[48] = "", listed[1024];
    json_t *raw = NULL;
    pthread_mutex_lock(&reload->lock);
    tb_worker_settings_t settings = {0};
    json_t *values = prepare(reload, &raw, &settings, serial, msg, sizeof(msg));
    if (values == NULL) {
        TB_LOG(TB_LOG_ERROR, FACILITY,
               "%s: cannot reload: %s; nothing reloaded, the worker runs as before",
               cause, msg);
        json_decref(raw);
        pthread_mutex_unlock(&reload->lock);
        *ok = false;
        return json_pack("{s:i, s:s}", "error_code", 400, "message", msg);
    }
    json_t *applied = json_array(), *restart = json_array();
    diff_keys(reload->running, raw, applied, restart);
    apply_live(reload, applied, &settings, raw);
    if (json_array_size(restart) > 0) {
        join(restart, listed, sizeof(listed));
        TB_LOG(TB_LOG_WARN, FACILITY,
               "%s: changed in the worker config but applied only by a restart, the "
               "worker keeps the values it started with: %s",
               cause, listed);
    }
    json_t *restarted = tb_herder_secrets_reload(reload->herder);
    join(applied, listed, sizeof(listed));
    TB_LOG(
        TB_LOG_INFO, FACILITY,
        "%s: worker config reloaded: %s%s; keys applied: %s; %zu task(s) restarted for "
        "a changed secret",
        cause, serial[0] != '\0' ? "https certificate serial " : "no https listener",
        serial, listed[0] != '\0' ? listed : "none", json_array_size(restarted));
    json_t *report = json_pack("{s:o, s:o, s:o}", "applied", applied, "restart_required",
                               restart, "tasks_restarted", restarted);
    if (serial[0] != '\0') {
        json_object_set_new(report, "certificate_serial", json_string(serial));
    }
    apply_dir(reload, cause, report);
    json_decref(values);
    json_decref(raw);
    pthread_mutex_unlock(&reload->lock);
    *ok = true;
    return report;
}

json_t *tb_reload_api(void *opaque, unsigned *status)
{
    bool ok;
    json_t *report = tb_reload_run(opaque, "POST /admin/reload", &ok);
    *status = ok ? 200 : 400;
    return report;
}
