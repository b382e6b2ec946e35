#include "server/tb_forward.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include <openssl/crypto.h>

#include "connectors/runtime/cluster/tb_session_key.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "core/tb_log.h"
#include "core/tb_time.h"
#include "server/tb_http_handlers.h"
#include "server/tb_request_signature.h"

#define RETRY_MS 100
#define CONNECT_TIMEOUT_MS 2000
/* how a refused signature's message begins: the sender tries again */
#define REFUSED "Refused a request forwarded by another worker"

struct tb_forward {
    tb_cluster_t *cluster;
    char *signature_algorithm;
    json_t *verification_algorithms;
    atomic_bool stopping; /* tb_forward_stop was called */
};

tb_forward_t *tb_forward_create(const tb_forward_options_t *options)
{
    tb_forward_t *forward = calloc(1, sizeof(*forward));
    if (forward == NULL) {
        return NULL;
    }
    forward->cluster = options->cluster;
    forward->signature_algorithm = strdup(options->signature_algorithm);
    forward->verification_algorithms = json_deep_copy(options->verification_algorithms);
    if (forward->signature_algorithm == NULL ||
        forward->verification_algorithms == NULL) {
        tb_forward_destroy(forward);
        return NULL;
    }
    return forward;
}

void tb_forward_destroy(tb_forward_t *forward)
{
    if (forward == NULL) {
        return;
    }
    free(forward->signature_algorithm);
    json_decref(forward->verification_algorithms);
    free(forward);
}

/* Whether algorithm is one of inter.worker.verification.algorithms. */
static bool verifies_with(const tb_forward_t *forward, const char *algorithm)
{
    size_t i;
    json_t *item;
    json_array_foreach (forward->verification_algorithms, i, item) {
        if (strcmp(json_string_value(item), algorithm) == 0) {
            return true;
        }
    }
    return false;
}

/* The reason a request that says it was forwarded is not to be answered,
 * or NULL when its signature is good. */
static const char *refusal_of(const tb_forward_t *forward, const tb_api_request_t *req)
{
    tb_connect_session_key_t current, previous;
    const char *reason = NULL;
    if (req->signature == NULL || req->signature_algorithm == NULL) {
        return "it carries no " TB_SIGNATURE_HEADER
               " or no " TB_SIGNATURE_ALGORITHM_HEADER;
    }
    if (!verifies_with(forward, req->signature_algorithm)) {
        return "its signature algorithm is not one of "
               "inter.worker.verification.algorithms";
    }
    if (tb_session_keys_get(tb_cluster_session_keys(forward->cluster), &current,
                            &previous) != 0) {
        reason = "this worker knows no session key yet";
    } else if (!tb_request_signature_matches(&current, req->signature_algorithm, req,
                                             req->signature) &&
               !tb_request_signature_matches(&previous, req->signature_algorithm, req,
                                             req->signature)) {
        reason = "its signature is not the session key's";
    }
    OPENSSL_cleanse(&current, sizeof(current));
    OPENSSL_cleanse(&previous, sizeof(previous));
    return reason;
}

/* Whether another worker may answer req (its route's flags, tb_api.h). */
static bool answered_elsewhere(const tb_api_request_t *req)
{
    return (req->route->flags & (TB_API_LEADER | TB_API_TASK_OWNER)) != 0;
}

typedef struct {
    char *data;
    size_t len;
} buffer_t;

static size_t collect(char *ptr, size_t size, size_t nmemb, void *opaque)
{
    buffer_t *buf = opaque;
    size_t n = size * nmemb;
    char *grown = realloc(buf->data, buf->len + n + 1);
    if (grown == NULL) {
        return 0;
    }
    memcpy(grown + buf->len, ptr, n);
    buf->data = grown;
    buf->len += n;
    buf->data[buf->len] = '\0';
    return n;
}

/* CURLOPT_HEADERFUNCTION: keeps the Location header in *opaque. */
static size_t keep_location(char *line, size_t size, size_t nmemb, void *opaque)
{
    char **location = opaque;
    size_t n = size * nmemb;
    static const char name[] = "location:";
    if (n > sizeof(name) - 1 && strncasecmp(line, name, sizeof(name) - 1) == 0) {
        const char *value = line + sizeof(name) - 1;
        size_t len = n - (sizeof(name) - 1);
        while (len > 0 && (*value == ' ' || *value == '\t')) {
            value++;
            len--;
        }
        while (len > 0 && (value[len - 1] == '\r' || value[len - 1] == '\n')) {
            len--;
        }
        free(*location);
        *location = strndup(value, len);
    }
    return n;
}

/* leader's URL for req, its query escaped (a new string), or NULL when out
 * of memory: a parameter is never left out. */
static char *url_of(CURL *curl, const char *leader, const tb_api_request_t *req)
{
    char *url = NULL;
    if (asprintf(&url, "%s%s", leader, req->path) < 0) {
        return NULL;
    }
    const char *name;
    json_t *values;
    char sep = '?';
    json_object_foreach ((json_t *)req->query, name, values) {
        size_t i;
        json_t *value;
        json_array_foreach (values, i, value) {
            char *n = curl_easy_escape(curl, name, 0);
            char *v = curl_easy_escape(curl, json_string_value(value), 0);
            char *longer = NULL;
            if (n == NULL || v == NULL ||
                asprintf(&longer, "%s%c%s=%s", url, sep, n, v) < 0) {
                longer = NULL;
            }
            curl_free(n);
            curl_free(v);
            free(url);
            url = longer;
            if (url == NULL) {
                return NULL;
            }
            sep = '&';
        }
    }
    return url;
}

/* Sends req to leader. Returns 0 with res filled from the leader's reply,
 * or -1 with errstr when the leader could not be reached. */
static int send_to(const tb_forward_t *forward, const char *leader,
                   const tb_api_request_t *req, int64_t deadline_ms,
                   tb_api_response_t *res, char *errstr, size_t errstr_size)
{
    tb_connect_session_key_t key, previous;
    char signature[TB_SIGNATURE_MAX];
    char signature_header[sizeof(TB_SIGNATURE_HEADER) + TB_SIGNATURE_MAX + 2];
    char algorithm_header[sizeof(TB_SIGNATURE_ALGORITHM_HEADER) + 64];
    int signed_ok = tb_session_keys_get(tb_cluster_session_keys(forward->cluster), &key,
                                        &previous) == 0 &&
                            tb_request_signature_sign(&key, forward->signature_algorithm,
                                                      req, signature) == 0
                        ? 0
                        : -1;
    OPENSSL_cleanse(&key, sizeof(key));
    OPENSSL_cleanse(&previous, sizeof(previous));
    CURL *curl = signed_ok == 0 ? curl_easy_init() : NULL;
    if (curl == NULL) {
        snprintf(errstr, errstr_size, "%s",
                 signed_ok == 0 ? "out of memory" : "no session key is known yet");
        return -1;
    }
    snprintf(signature_header, sizeof(signature_header), "%s: %s", TB_SIGNATURE_HEADER,
             signature);
    snprintf(algorithm_header, sizeof(algorithm_header), "%s: %s",
             TB_SIGNATURE_ALGORITHM_HEADER, forward->signature_algorithm);
    char *url = url_of(curl, leader, req);
    if (url == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        curl_easy_cleanup(curl);
        return -1;
    }
    struct curl_slist *headers =
        curl_slist_append(NULL, "Content-Type: application/json");
    headers = curl_slist_append(headers, TB_FORWARDED_HEADER ": yes");
    headers = curl_slist_append(headers, signature_header);
    headers = curl_slist_append(headers, algorithm_header);
    char *auth = NULL;
    if (req->authorization != NULL &&
        asprintf(&auth, "Authorization: %s", req->authorization) > 0) {
        headers = curl_slist_append(headers, auth);
    }
    buffer_t body = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    int64_t left_ms = deadline_ms - tb_monotonic_ms();
    left_ms = left_ms < 1 ? 1 : left_ms;
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(left_ms < CONNECT_TIMEOUT_MS ? left_ms : CONNECT_TIMEOUT_MS));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)left_ms);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    char *location = NULL;
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, keep_location);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &location);
    if (req->body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)req->body_len);
    }
    CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    int rc = code == CURLE_OK ? 0 : -1;
    if (rc == 0) {
        json_t *json =
            body.len > 0 ? json_loadb(body.data, body.len, JSON_DECODE_ANY, NULL) : NULL;
        tb_api_reply(res, (unsigned)status, json);
        if (json == NULL && body.len > 0) {
            res->text = body.data;
            body.data = NULL;
        }
        res->location = location;
        location = NULL;
    } else {
        snprintf(errstr, errstr_size, "%s", curl_easy_strerror(code));
    }
    free(body.data);
    free(location);
    free(auth);
    free(url);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    OPENSSL_cleanse(signature_header, sizeof(signature_header));
    return rc;
}

/* Where req is answered: 1 here, 0 at url, -1 nowhere known yet. A task's
 * restart goes to the worker running it, as the status topic says (only
 * it can restart it); every other write to the leader. */
static int target_of(tb_cluster_t *cluster, const tb_api_request_t *req, char *url,
                     size_t url_size)
{
    json_t *status = NULL;
    char msg[256];
    if ((req->route->flags & TB_API_TASK_OWNER) != 0 &&
        tb_herder_task_status(req->ctx->herder, req->params[0], atoi(req->params[1]),
                              &status, msg, sizeof(msg)) == TB_OK) {
        const char *owner = json_string_value(json_object_get(status, "worker_id"));
        const char *state = json_string_value(json_object_get(status, "state"));
        int who = owner == NULL || strcmp(state, "UNASSIGNED") == 0 ? -1
                  : strcmp(owner, req->ctx->worker_id) == 0         ? 1
                                                                    : 0;
        if (who == 0) {
            const char *sep = strstr(req->base_url, "://");
            snprintf(url, url_size, "%.*s://%s",
                     sep != NULL ? (int)(sep - req->base_url) : 4,
                     sep != NULL ? req->base_url : "http", owner);
        }
        json_decref(status);
        return who;
    }
    return tb_cluster_leader(cluster, url, url_size);
}

/* Whether res is a receiver's refusal of the signature, which a newer
 * key on its side cures: res is then emptied for the next try. */
static bool refused_signature(tb_api_response_t *res)
{
    const char *message = json_string_value(json_object_get(res->body, "message"));
    if (res->status != 403 || message == NULL ||
        strncmp(message, REFUSED, strlen(REFUSED)) != 0) {
        return false;
    }
    json_decref(res->body);
    free(res->text);
    free(res->location);
    memset(res, 0, sizeof(*res));
    return true;
}

void tb_forward_stop(tb_forward_t *forward)
{
    if (forward != NULL) {
        atomic_store(&forward->stopping, true);
    }
}

bool tb_forward_request(void *opaque, const tb_api_request_t *req, tb_api_response_t *res)
{
    tb_forward_t *forward = opaque;
    if (req->forwarded_by != NULL || req->signature != NULL) {
        const char *reason = refusal_of(forward, req);
        if (reason == NULL) {
            return false;
        }
        TB_LOG(TB_LOG_WARN, "tributary.cluster",
               "refused %s %s, which says another worker forwarded it: %s", req->method,
               req->path, reason);
        tb_api_reply_error(res, TB_ERR_FORBIDDEN, "%s: %s", REFUSED, reason);
        return true;
    }
    if (!answered_elsewhere(req)) {
        return false;
    }
    int64_t deadline = tb_deadline_get();
    char leader[512];
    char errstr[256] = "no leader is known";
    for (;;) {
        int who = target_of(forward->cluster, req, leader, sizeof(leader));
        if (who == 1) {
            return false;
        }
        if (who == 0 &&
            send_to(forward, leader, req, deadline, res, errstr, sizeof(errstr)) == 0) {
            if (!refused_signature(res)) {
                return true;
            }
            snprintf(errstr, sizeof(errstr), "the receiver refused the signature");
        }
        if (atomic_load(&forward->stopping)) {
            tb_api_reply_error(res, TB_ERR_UNAVAILABLE,
                               "The worker is stopping: the request was not carried "
                               "out (%s)",
                               errstr);
            res->retry_after_s = TB_HTTP_RETRY_AFTER_S;
            return true;
        }
        if (tb_monotonic_ms() + RETRY_MS >= deadline) {
            break;
        }
        struct timespec pause = {0, RETRY_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
    tb_api_reply_error(res, TB_ERR_UNAVAILABLE,
                       "Request timed out: the worker that answers it (the leader, or "
                       "the task's worker) could not be reached "
                       "within rest.request.timeout.ms (%s)",
                       errstr);
    res->retry_after_s = TB_HTTP_RETRY_AFTER_S;
    return true;
}
