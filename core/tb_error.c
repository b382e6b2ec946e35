#include "core/tb_error.h"

static const struct {
    const char *name;
    unsigned http_status;
    const char *text;
} errors[TB_ERR__COUNT] = {
    [TB_OK] = {"OK", 200, "Success"},
    [TB_ERR_BAD_REQUEST] = {"BAD_REQUEST", 400, "Bad request"},
    [TB_ERR_UNAUTHORIZED] = {"UNAUTHORIZED", 401, "Unauthorized"},
    [TB_ERR_FORBIDDEN] = {"FORBIDDEN", 403, "Forbidden"},
    [TB_ERR_NOT_FOUND] = {"NOT_FOUND", 404, "HTTP 404 Not Found"},
    [TB_ERR_METHOD] = {"METHOD_NOT_ALLOWED", 405, "HTTP 405 Method Not Allowed"},
    [TB_ERR_CONFLICT] = {"CONFLICT", 409, "Conflict"},
    [TB_ERR_TOO_LARGE] = {"PAYLOAD_TOO_LARGE", 413, "Request body too large"},
    [TB_ERR_INTERNAL] = {"INTERNAL", 500, "Internal server error"},
    [TB_ERR_UNAVAILABLE] = {"UNAVAILABLE", 503, "Service unavailable"},
};

const char *tb_err_name(tb_err_t err)
{
    return errors[err].name;
}

unsigned tb_err_http_status(tb_err_t err)
{
    return errors[err].http_status;
}

const char *tb_err_text(tb_err_t err)
{
    return errors[err].text;
}
