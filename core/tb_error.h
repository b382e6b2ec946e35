/*
 * tb_error.h - the one error vocabulary of tributary.
 *
 * Each code maps to the HTTP status the REST API answers with. Functions
 * below the API return a tb_err_t and fill a message buffer; the API turns
 * both into {"error_code","message"} in one place (tb_api_reply_error).
 */
#ifndef TB_ERROR_H
#define TB_ERROR_H

typedef enum {
    TB_OK = 0,
    TB_ERR_BAD_REQUEST,  /* invalid input: names the key and why */
    TB_ERR_UNAUTHORIZED, /* missing or wrong credentials */
    TB_ERR_FORBIDDEN,    /* a disabled feature */
    TB_ERR_NOT_FOUND,    /* no such connector, task, plugin, path */
    TB_ERR_METHOD,       /* the path exists, the method does not */
    TB_ERR_CONFLICT,     /* already exists */
    TB_ERR_TOO_LARGE,    /* request body over the limit */
    TB_ERR_INTERNAL,     /* our fault, or a dependency failed */
    TB_ERR_UNAVAILABLE,  /* starting up or shutting down */
    TB_ERR_TOO_MANY,     /* the client must wait (failed authentications) */
    TB_ERR_URI_TOO_LONG, /* a request path longer than the worker routes */
    TB_ERR__COUNT,
} tb_err_t;

/* The error's name, as logs print it ("unavailable"); static. */
const char *tb_err_name(tb_err_t err);

/* The HTTP status the REST API answers with. */
unsigned tb_err_http_status(tb_err_t err);

#endif
