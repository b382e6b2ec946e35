#include "core/tb_error.h"

/* Each error's name, as logs print it, and the HTTP status the REST API
 * answers with. */
static const struct {
    const char *name;
    unsigned http_status;
} descs[TB_ERR__COUNT] = {
    [TB_OK] = {"ok", 200},
    [TB_ERR_BAD_REQUEST] = {"bad request", 400},
    [TB_ERR_UNAUTHORIZED] = {"unauthorized", 401},
    [TB_ERR_FORBIDDEN] = {"forbidden", 403},
    [TB_ERR_NOT_FOUND] = {"not found", 404},
    [TB_ERR_METHOD] = {"method not allowed", 405},
    [TB_ERR_CONFLICT] = {"conflict", 409},
    [TB_ERR_TOO_LARGE] = {"request too large", 413},
    [TB_ERR_INTERNAL] = {"internal error", 500},
    [TB_ERR_UNAVAILABLE] = {"unavailable", 503},
    [TB_ERR_TOO_MANY] = {"too many requests", 429},
    [TB_ERR_URI_TOO_LONG] = {"URI too long", 414},
};

const char *tb_err_name(tb_err_t err)
{
    return descs[err].name;
}

unsigned tb_err_http_status(tb_err_t err)
{
    return descs[err].http_status;
}
