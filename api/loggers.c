/* /admin/loggers: read and change log levels at run time. */
#include <string.h>
#include <strings.h>

#include "api/tb_api.h"
#include "core/tb_log.h"
#include "core/tb_time.h"

static void list_loggers(const tb_api_request_t *req, tb_api_response_t *res)
{
    (void)req;
    tb_api_reply(res, 200, tb_log_levels_get());
}

static void get_logger(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *level = tb_log_level_get(req->params[0]);
    if (level == NULL) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "Logger %s not found.", req->params[0]);
        return;
    }
    tb_api_reply(res, 200, level);
}

static void put_logger(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *body = tb_api_body_json(req, res);
    tb_log_level_t level;
    if (body == NULL) {
        return;
    }
    const char *name = json_string_value(json_object_get(body, "level"));
    const char *scope = tb_api_query(req, "scope");
    if (name == NULL) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Desired 'level' parameter was not specified in request.");
    } else if (tb_log_level_parse(name, &level) != 0) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "invalid log level '%s'.", name);
    } else {
        json_t *affected = tb_log_level_set(req->params[0], level, tb_wall_ms());
        if (scope != NULL && strcasecmp(scope, "cluster") == 0) {
            /* a standalone worker is its own cluster */
            json_decref(affected);
            tb_api_reply(res, 204, NULL);
        } else {
            tb_api_reply(res, 200, affected);
        }
    }
    json_decref(body);
}

const tb_api_route_t tb_api_loggers_routes[] = {
    {"GET", "/admin/loggers", list_loggers, TB_API_ADMIN},
    {"GET", "/admin/loggers/{}", get_logger, TB_API_ADMIN},
    {"PUT", "/admin/loggers/{}", put_logger, TB_API_ADMIN},
    {0},
};
