/*
 * libFuzzer target: a REST request as server/http.c hands it to api/: the
 * path split, percent-decoded and matched against tb_api_routes()
 * (tb_http_route_match), then the route's handler on the body: the body
 * checks of create, config, patch, offsets, validate and loggers.
 *
 * Input: "METHOD /path?a=1&b=2" on the first line, the body after it.
 *
 * The herder is replaced by the stand-in below (the linker takes these
 * definitions and leaves herder.o out of the library), which answers
 * without a store or Kafka and traps when the API layer hands it something
 * its contract excludes: an empty name, a config that is not a map of
 * strings, an empty offsets list. A new herder call in api/ needs a
 * stand-in here: without one the link fails with duplicate definitions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/herder/tb_herder.h"
#include "core/tb_log.h"
#include "server/tb_http_router.h"

#define MAX_LINE 4096

static void check(bool condition)
{
    if (!condition) {
        __builtin_trap();
    }
}

/* A path capture: "{}" matches a non-empty segment. */
static void check_name(const char *name)
{
    check(name != NULL && name[0] != '\0');
}

static void check_map(const json_t *map, bool nulls_allowed)
{
    const char *key;
    json_t *value;
    check(json_is_object(map));
    json_object_foreach ((json_t *)map, key, value) {
        check(json_is_string(value) || (nulls_allowed && json_is_null(value)));
    }
}

/* The stand-in's store: every connector exists but "gone". */
static tb_err_t answer(const char *name, json_t **out, char *msg, size_t msg_size)
{
    check_name(name);
    if (strcmp(name, "gone") == 0) {
        snprintf(msg, msg_size, "Connector %s not found", name);
        return TB_ERR_NOT_FOUND;
    }
    if (out != NULL) {
        *out = json_pack("{s:s, s:{}}", "name", name, "config");
    }
    return TB_OK;
}

tb_health_t tb_herder_health(tb_herder_t *herder, char *message, size_t message_size)
{
    (void)herder;
    snprintf(message, message_size, "fuzzing");
    return TB_HEALTH_HEALTHY;
}

bool tb_herder_cluster_id(tb_herder_t *herder, char *buf, size_t size)
{
    (void)herder;
    snprintf(buf, size, "fuzz");
    return true;
}

json_t *tb_herder_connectors(tb_herder_t *herder)
{
    (void)herder;
    return json_pack("[s, s]", "a", "gone");
}

tb_err_t tb_herder_connector_put(tb_herder_t *herder, const char *name,
                                 const json_t *config, tb_target_state_t initial_state,
                                 bool replace, bool *created, json_t **out, char *msg,
                                 size_t msg_size)
{
    (void)herder;
    check_map(config, false);
    check(initial_state <= TB_TARGET_STOPPED);
    check_name(name);
    /* a new connector's name is trimmed */
    check(replace || (strchr(" \t\r\n", name[0]) == NULL &&
                      strchr(" \t\r\n", name[strlen(name) - 1]) == NULL));
    *created = !replace;
    return answer(name, out, msg, msg_size);
}

json_t *tb_herder_validate(tb_herder_t *herder, const struct tb_plugin *plugin,
                           const json_t *config)
{
    (void)herder;
    check(plugin != NULL && json_is_object(config));
    return json_object();
}

tb_err_t tb_herder_connector_patch(tb_herder_t *herder, const char *name,
                                   const json_t *patch, json_t **out, char *msg,
                                   size_t msg_size)
{
    (void)herder;
    check_map(patch, true);
    return answer(name, out, msg, msg_size);
}

#define READ_STAND_IN(fn)                                                                \
    tb_err_t fn(tb_herder_t *herder, const char *name, json_t **out, char *msg,          \
                size_t msg_size)                                                         \
    {                                                                                    \
        (void)herder;                                                                    \
        return answer(name, out, msg, msg_size);                                         \
    }
READ_STAND_IN(tb_herder_connector_info)
READ_STAND_IN(tb_herder_connector_config)
READ_STAND_IN(tb_herder_connector_status)
READ_STAND_IN(tb_herder_tasks)
READ_STAND_IN(tb_herder_tasks_config)
READ_STAND_IN(tb_herder_offsets_get)

tb_err_t tb_herder_task_status(tb_herder_t *herder, const char *name, int task,
                               json_t **out, char *msg, size_t msg_size)
{
    (void)herder;
    check(task >= 0);
    return answer(name, out, msg, msg_size);
}

tb_err_t tb_herder_connector_restart(tb_herder_t *herder, const char *name,
                                     bool include_tasks, bool only_failed, json_t **out,
                                     char *msg, size_t msg_size)
{
    (void)herder;
    return answer(name, include_tasks || only_failed ? out : NULL, msg, msg_size);
}

tb_err_t tb_herder_task_restart(tb_herder_t *herder, const char *name, int task,
                                char *msg, size_t msg_size)
{
    (void)herder;
    check(task >= 0);
    return answer(name, NULL, msg, msg_size);
}

tb_err_t tb_herder_target_state_set(tb_herder_t *herder, const char *name,
                                    tb_target_state_t target, char *msg, size_t msg_size)
{
    (void)herder;
    check(target <= TB_TARGET_STOPPED);
    return answer(name, NULL, msg, msg_size);
}

tb_err_t tb_herder_connector_delete(tb_herder_t *herder, const char *name, char *msg,
                                    size_t msg_size)
{
    (void)herder;
    return answer(name, NULL, msg, msg_size);
}

tb_err_t tb_herder_offsets_alter(tb_herder_t *herder, const char *name,
                                 const json_t *offsets, json_t **out, char *msg,
                                 size_t msg_size)
{
    (void)herder;
    check(offsets == NULL || (json_is_array(offsets) && json_array_size(offsets) > 0));
    return answer(name, out, msg, msg_size);
}

json_t *tb_herder_topics(tb_herder_t *herder, const char *name)
{
    (void)herder;
    check_name(name);
    return json_pack("{s:{s:[]}}", name, "topics");
}

void tb_herder_topics_reset(tb_herder_t *herder, const char *name)
{
    (void)herder;
    check_name(name);
}

/* The query string's arguments, name -> [values], undecoded (libmicrohttpd
 * splits them in the server). */
static json_t *query_of(const char *path)
{
    json_t *query = json_object();
    const char *q = strchr(path, '?');
    char *args = strdup(q != NULL ? q + 1 : "");
    char *save = NULL;
    for (char *arg = strtok_r(args, "&", &save); arg != NULL;
         arg = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(arg, '=');
        if (eq != NULL) {
            *eq = '\0';
        }
        json_t *list = json_object_get(query, arg);
        if (list == NULL) {
            list = json_array();
            json_object_set_new(query, arg, list);
        }
        json_array_append_new(list, json_string(eq != NULL ? eq + 1 : ""));
    }
    free(args);
    return query;
}

/* Warnings and errors only: handlers log at INFO. */
static void quiet_log(void)
{
    json_decref(tb_log_level_set("root", TB_LOG_WARN, 0));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    quiet_log();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const tb_api_context_t ctx = {.herder = NULL, .worker_id = "fuzz:8083"};
    char line[MAX_LINE], method[16], buf[TB_HTTP_PATH_BUF_SIZE];
    const uint8_t *eol = memchr(data, '\n', size);
    size_t line_len = eol != NULL ? (size_t)(eol - data) : size;
    const tb_api_route_t *path_route;

    if (line_len >= sizeof(line) || memchr(data, '\0', line_len) != NULL) {
        return 0;
    }
    memcpy(line, data, line_len);
    line[line_len] = '\0';
    char *path = strchr(line, ' ');
    if (path == NULL || (size_t)(path - line) >= sizeof(method)) {
        return 0;
    }
    snprintf(method, sizeof(method), "%.*s", (int)(path - line), line);
    path++;

    /* the body, NUL-terminated as the server keeps it */
    size_t body_len = eol != NULL ? size - line_len - 1 : 0;
    char *body = body_len > 0 ? malloc(body_len + 1) : NULL;
    if (body != NULL) {
        memcpy(body, eol + 1, body_len);
        body[body_len] = '\0';
    }
    tb_api_request_t req = {.method = method,
                            .path = path,
                            .query = query_of(path),
                            .body = body,
                            .body_len = body != NULL ? body_len : 0,
                            .base_url = "http://localhost:8083",
                            .ctx = &ctx};
    tb_api_response_t res = {0};
    const tb_api_route_t *route =
        tb_http_route_match(path, method, buf, req.params, &path_route);
    check(route == NULL || path_route != NULL);
    if (route != NULL) {
        route->handler(&req, &res);
        check(res.status >= 200 && res.status < 600);
        if ((route->flags & TB_API_ADMIN) != 0) {
            quiet_log(); /* PUT /admin/loggers/{} may have made it verbose */
        }
    }
    json_decref(res.body);
    free(res.text);
    free(res.location);
    json_decref((json_t *)req.query);
    free(body);
    return 0;
}
