/* /admin/reload: reload the worker file without a restart. */
#include "api/tb_api.h"

static void post_reload(const tb_api_request_t *req, tb_api_response_t *res)
{
    unsigned status;
    if (req->ctx->reload == NULL) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "This worker cannot reload.");
        return;
    }
    json_t *report = req->ctx->reload(req->ctx->reload_opaque, &status);
    tb_api_reply(res, status, report);
}

const tb_api_route_t tb_api_reload_routes[] = {
    {"POST", "/admin/reload", post_reload, TB_API_ADMIN},
    {0},
};
