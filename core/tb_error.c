#include "core/tb_error.h"

/* The HTTP status of each error, as the REST API answers it. */
static const unsigned http_statuses[TB_ERR__COUNT] = {
    [TB_OK] = 200,
    [TB_ERR_BAD_REQUEST] = 400,
    [TB_ERR_UNAUTHORIZED] = 401,
    [TB_ERR_FORBIDDEN] = 403,
    [TB_ERR_NOT_FOUND] = 404,
    [TB_ERR_METHOD] = 405,
    [TB_ERR_CONFLICT] = 409,
    [TB_ERR_TOO_LARGE] = 413,
    [TB_ERR_INTERNAL] = 500,
    [TB_ERR_UNAVAILABLE] = 503,
    [TB_ERR_TOO_MANY] = 429,
    [TB_ERR_URI_TOO_LONG] = 414,
};

unsigned tb_err_http_status(tb_err_t err)
{
    return http_statuses[err];
}
