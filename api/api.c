/* The route list and the reply helpers every resource shares. */
#include "api/tb_api.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/tb_log.h"
#include "core/tb_secret.h"

/* Each resource's routes, in the order they are tried. */
static const tb_api_route_t *const resources[] = {
    tb_api_root_routes,    tb_api_connectors_routes, tb_api_offsets_routes,
    tb_api_plugins_routes, tb_api_loggers_routes,    tb_api_reload_routes,
    tb_api_metrics_routes, tb_api_ui_routes,
};

#define MAX_ROUTES 128

static tb_api_route_t all_routes[MAX_ROUTES + 1];
static pthread_once_t all_routes_once = PTHREAD_ONCE_INIT;

static void collect_routes(void)
{
    size_t n = 0;
    for (size_t r = 0; r < sizeof(resources) / sizeof(resources[0]); r++) {
        for (const tb_api_route_t *route = resources[r];
             route->method != NULL && n < MAX_ROUTES; route++) {
            all_routes[n++] = *route;
        }
    }
}

const tb_api_route_t *tb_api_routes(void)
{
    pthread_once(&all_routes_once, collect_routes);
    return all_routes;
}

void tb_api_reply(tb_api_response_t *res, unsigned status, json_t *body)
{
    json_decref(res->body);
    res->status = status;
    res->body = body;
}

void tb_api_reply_error(tb_api_response_t *res, tb_err_t err, const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    unsigned status = tb_err_http_status(err);
    tb_api_reply(res, status,
                 json_pack("{s:i, s:s}", "error_code", (int)status, "message", message));
    if (status >= 500) {
        TB_LOG(TB_LOG_ERROR, "tributary.api", "%u %s: %s", status, tb_err_name(err),
               message);
    }
}

const char *tb_api_query(const tb_api_request_t *req, const char *name)
{
    return json_string_value(json_array_get(json_object_get(req->query, name), 0));
}

json_t *tb_api_body_json(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_error_t error;
    if (req->body == NULL || req->body_len == 0) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Request body is empty; a JSON body is required");
        return NULL;
    }
    json_t *body = json_loadb(req->body, req->body_len, JSON_DECODE_ANY, &error);
    if (body == NULL) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Malformed JSON at line %d, column %d: %s", error.line,
                           error.column, tb_secret_json_error_text(&error));
    }
    return body;
}
