/*
 * /connectors and everything under /connectors/{connector} except offsets
 * (api/offsets.c): create, read, configure, status, tasks, restart, pause,
 * resume, stop, delete, topics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/tb_api.h"
#include "connectors/runtime/herder/tb_herder.h"

#define MSG_SIZE 4096

static void reply_result(tb_api_response_t *res, tb_err_t err, unsigned status,
                         json_t *out, const char *msg)
{
    if (err != TB_OK) {
        tb_api_reply_error(res, err, "%s", msg);
    } else {
        tb_api_reply(res, status, out);
    }
}

/* The task id of a path like /connectors/{c}/tasks/{n}/...; -1 when the
 * segment is not a number (Connect answers 404 for those). */
static int task_id_of(const char *text)
{
    char *end;
    long id = strtol(text, &end, 10);
    return *text != '\0' && *end == '\0' && id >= 0 && id < 1000000 ? (int)id : -1;
}

/* True when the query flag is "true" (any case). */
static bool query_flag(const tb_api_request_t *req, const char *name)
{
    const char *value = tb_api_query(req, name);
    return value != NULL && strcasecmp(value, "true") == 0;
}

/* An object whose values are all strings (or, with nulls_allowed, null). */
static bool is_string_map(const json_t *config, bool nulls_allowed, const char **bad)
{
    const char *key;
    json_t *value;
    if (!json_is_object(config)) {
        *bad = NULL;
        return false;
    }
    json_object_foreach ((json_t *)config, key, value) {
        if (!json_is_string(value) && !(nulls_allowed && json_is_null(value))) {
            *bad = key;
            return false;
        }
    }
    return true;
}

static void reply_not_string_map(tb_api_response_t *res, const char *what,
                                 const char *bad)
{
    if (bad != NULL) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "The value of '%s' in the %s must be a string", bad, what);
    } else {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST, "The %s must be a JSON object", what);
    }
}

static void set_location(const tb_api_request_t *req, tb_api_response_t *res,
                         const char *name)
{
    if (asprintf(&res->location, "%s/connectors/%s", req->base_url, name) < 0) {
        res->location = NULL;
    }
}

static void list_connectors(const tb_api_request_t *req, tb_api_response_t *res)
{
    tb_herder_t *herder = req->ctx->herder;
    json_t *names = tb_herder_connectors(herder);
    json_t *expand = json_object_get(req->query, "expand");
    if (expand == NULL) {
        tb_api_reply(res, 200, names);
        return;
    }
    bool with_status = false, with_info = false;
    size_t i;
    json_t *value;
    json_array_foreach (expand, i, value) {
        with_status = with_status || strcmp(json_string_value(value), "status") == 0;
        with_info = with_info || strcmp(json_string_value(value), "info") == 0;
    }
    json_t *expanded = json_object();
    json_array_foreach (names, i, value) {
        const char *name = json_string_value(value);
        char msg[MSG_SIZE];
        json_t *entry = json_object();
        json_t *part;
        /* a connector deleted meanwhile is skipped, as Connect does */
        if (with_status &&
            tb_herder_connector_status(herder, name, &part, msg, sizeof(msg)) == TB_OK) {
            json_object_set_new(entry, "status", part);
        }
        if (with_info &&
            tb_herder_connector_info(herder, name, &part, msg, sizeof(msg)) == TB_OK) {
            json_object_set_new(entry, "info", part);
        }
        json_object_set_new(expanded, name, entry);
    }
    json_decref(names);
    tb_api_reply(res, 200, expanded);
}

/* Connect trims the name of a new connector. malloc'd; NULL for NULL. */
static char *trimmed_name(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    while (*name == ' ' || *name == '\t' || *name == '\n' || *name == '\r') {
        name++;
    }
    size_t n = strlen(name);
    while (n > 0 && strchr(" \t\n\r", name[n - 1]) != NULL) {
        n--;
    }
    return strndup(name, n);
}

/* The first key of a create request that is not name, config or
 * initial_state, or NULL. */
static const char *unknown_field(const json_t *body)
{
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)body, key, value) {
        if (strcmp(key, "name") != 0 && strcmp(key, "config") != 0 &&
            strcmp(key, "initial_state") != 0) {
            return key;
        }
    }
    return NULL;
}

static void create_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *body = tb_api_body_json(req, res);
    const char *bad = NULL;
    char msg[MSG_SIZE];
    json_t *out = NULL;
    bool created;
    tb_target_state_t initial = TB_TARGET_STARTED;

    if (body == NULL) {
        return;
    }
    char *name = trimmed_name(json_string_value(json_object_get(body, "name")));
    json_t *config = json_object_get(body, "config");
    json_t *initial_state = json_object_get(body, "initial_state");
    const char *unknown = unknown_field(body);
    if (!json_is_object(body) || name == NULL) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "The request body must be a JSON object with a string "
                           "'name' and a 'config' object");
    } else if (unknown != NULL) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Unrecognized field \"%s\": a connector is created from "
                           "name, config and initial_state",
                           unknown);
    } else if (!is_string_map(config, false, &bad)) {
        reply_not_string_map(res, "connector config", bad);
    } else if (initial_state != NULL && !json_is_null(initial_state) &&
               tb_initial_state_parse(json_string_value(initial_state), &initial) != 0) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Invalid initial_state; must be one of RUNNING, PAUSED, "
                           "STOPPED");
    } else {
        tb_err_t err = tb_herder_connector_put(req->ctx->herder, name, config, initial,
                                               false, &created, &out, msg, sizeof(msg));
        reply_result(res, err, 201, out, msg);
        if (err == TB_OK) {
            set_location(req, res, name);
        }
    }
    free(name);
    json_decref(body);
}

static void get_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err = tb_herder_connector_info(req->ctx->herder, req->params[0], &out, msg,
                                            sizeof(msg));
    reply_result(res, err, 200, out, msg);
}

static void get_config(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err = tb_herder_connector_config(req->ctx->herder, req->params[0], &out, msg,
                                              sizeof(msg));
    reply_result(res, err, 200, out, msg);
}

static void put_config(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *config = tb_api_body_json(req, res);
    const char *bad = NULL;
    char msg[MSG_SIZE];
    json_t *out = NULL;
    bool created = false;
    if (config == NULL) {
        return;
    }
    if (!is_string_map(config, false, &bad)) {
        reply_not_string_map(res, "connector config", bad);
    } else {
        tb_err_t err = tb_herder_connector_put(req->ctx->herder, req->params[0], config,
                                               TB_TARGET_STARTED, true, &created, &out,
                                               msg, sizeof(msg));
        reply_result(res, err, created ? 201 : 200, out, msg);
        if (err == TB_OK && created) {
            set_location(req, res, req->params[0]);
        }
    }
    json_decref(config);
}

static void patch_config(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *patch = tb_api_body_json(req, res);
    const char *bad = NULL;
    char msg[MSG_SIZE];
    json_t *out = NULL;
    if (patch == NULL) {
        return;
    }
    if (!is_string_map(patch, true, &bad)) {
        reply_not_string_map(res, "config patch", bad);
    } else {
        tb_err_t err = tb_herder_connector_patch(req->ctx->herder, req->params[0], patch,
                                                 &out, msg, sizeof(msg));
        reply_result(res, err, 200, out, msg);
    }
    json_decref(patch);
}

static void get_status(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err = tb_herder_connector_status(req->ctx->herder, req->params[0], &out, msg,
                                              sizeof(msg));
    reply_result(res, err, 200, out, msg);
}

static void get_tasks(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err =
        tb_herder_tasks(req->ctx->herder, req->params[0], &out, msg, sizeof(msg));
    reply_result(res, err, 200, out, msg);
}

static void get_tasks_config(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err =
        tb_herder_tasks_config(req->ctx->herder, req->params[0], &out, msg, sizeof(msg));
    reply_result(res, err, 200, out, msg);
}

static void get_task_status(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    int task = task_id_of(req->params[1]);
    if (task < 0) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "HTTP 404 Not Found");
        return;
    }
    tb_err_t err = tb_herder_task_status(req->ctx->herder, req->params[0], task, &out,
                                         msg, sizeof(msg));
    reply_result(res, err, 200, out, msg);
}

static void restart_task(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    int task = task_id_of(req->params[1]);
    if (task < 0) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "HTTP 404 Not Found");
        return;
    }
    tb_err_t err =
        tb_herder_task_restart(req->ctx->herder, req->params[0], task, msg, sizeof(msg));
    reply_result(res, err, 204, NULL, msg);
}

static void restart_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err = tb_herder_connector_restart(
        req->ctx->herder, req->params[0], query_flag(req, "includeTasks"),
        query_flag(req, "onlyFailed"), &out, msg, sizeof(msg));
    reply_result(res, err, out != NULL ? 202 : 204, out, msg);
}

static void set_target(const tb_api_request_t *req, tb_api_response_t *res,
                       tb_target_state_t target, unsigned status)
{
    char msg[MSG_SIZE];
    tb_err_t err = tb_herder_target_state_set(req->ctx->herder, req->params[0], target,
                                              msg, sizeof(msg));
    reply_result(res, err, status, NULL, msg);
}

static void pause_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    set_target(req, res, TB_TARGET_PAUSED, 202);
}

static void resume_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    set_target(req, res, TB_TARGET_STARTED, 202);
}

static void stop_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    set_target(req, res, TB_TARGET_STOPPED, 204);
}

static void delete_connector(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    tb_err_t err =
        tb_herder_connector_delete(req->ctx->herder, req->params[0], msg, sizeof(msg));
    reply_result(res, err, 204, NULL, msg);
}

/* topic.tracking.enable=false: 403, with Connect's message. */
static void get_topics(const tb_api_request_t *req, tb_api_response_t *res)
{
    if (req->ctx->topic_tracking_disabled) {
        tb_api_reply_error(res, TB_ERR_FORBIDDEN, "Topic tracking is disabled.");
        return;
    }
    tb_api_reply(res, 200, tb_herder_topics(req->ctx->herder, req->params[0]));
}

/* Also 403 when topic.tracking.allow.reset=false, as in Connect. */
static void reset_topics(const tb_api_request_t *req, tb_api_response_t *res)
{
    if (req->ctx->topic_tracking_disabled) {
        tb_api_reply_error(res, TB_ERR_FORBIDDEN, "Topic tracking is disabled.");
        return;
    }
    if (req->ctx->topic_reset_disabled) {
        tb_api_reply_error(res, TB_ERR_FORBIDDEN, "Topic tracking reset is disabled.");
        return;
    }
    tb_herder_topics_reset(req->ctx->herder, req->params[0]);
    tb_api_reply(res, 202, NULL);
}

const tb_api_route_t tb_api_connectors_routes[] = {
    {"GET", "/connectors", list_connectors, 0},
    {"POST", "/connectors", create_connector, TB_API_LEADER},
    {"GET", "/connectors/{}", get_connector, 0},
    {"DELETE", "/connectors/{}", delete_connector, TB_API_LEADER},
    {"GET", "/connectors/{}/config", get_config, 0},
    {"PUT", "/connectors/{}/config", put_config, TB_API_LEADER},
    {"PATCH", "/connectors/{}/config", patch_config, TB_API_LEADER},
    {"GET", "/connectors/{}/status", get_status, 0},
    {"GET", "/connectors/{}/tasks", get_tasks, 0},
    {"GET", "/connectors/{}/tasks-config", get_tasks_config, 0},
    {"GET", "/connectors/{}/tasks/{}/status", get_task_status, 0},
    {"POST", "/connectors/{}/tasks/{}/restart", restart_task, TB_API_TASK_OWNER},
    {"POST", "/connectors/{}/restart", restart_connector, TB_API_LEADER},
    {"PUT", "/connectors/{}/pause", pause_connector, TB_API_LEADER},
    {"PUT", "/connectors/{}/resume", resume_connector, TB_API_LEADER},
    {"PUT", "/connectors/{}/stop", stop_connector, TB_API_LEADER},
    {"GET", "/connectors/{}/topics", get_topics, 0},
    {"PUT", "/connectors/{}/topics/reset", reset_topics, 0},
    {0},
};
