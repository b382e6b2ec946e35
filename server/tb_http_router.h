/*
 * tb_http_router.h - from a request's raw path and method to its route in
 * the API's table (api/tb_api.h) with the path's decoded captures, and from
 * its query string to decoded arguments. libmicrohttpd's own decoding is
 * kept off (tb_http_unescape_none), so that an escaped '/' in a connector's
 * name stays inside its segment; each segment is decoded after the split.
 */
#ifndef TB_HTTP_ROUTER_H
#define TB_HTTP_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <microhttpd.h>

#include "api/tb_api.h"

/* Room for a request path's decoded segments, which the captures point
 * into. A path that does not fit matches no route: it is never cut. */
#define TB_HTTP_PATH_BUF_SIZE 4096

/* The route of method and path (a query string ignored) among the routes a
 * listener serves: admin routes only where serves_admin, and nothing else
 * on an admin_only listener. Its captures go to params, pointing into buf
 * (TB_HTTP_PATH_BUF_SIZE bytes); NULL when there is none. *path_route is
 * the first served route whose template matches whatever its method, or
 * NULL: the route a request is counted under, and the 405 / 404 choice. */
const tb_api_route_t *tb_http_route_find(bool serves_admin, bool admin_only,
                                         const char *path, const char *method, char *buf,
                                         const char **params,
                                         const tb_api_route_t **path_route);

/* tb_http_route_find as a listener serving every route does: for tests and
 * tests/fuzz. */
const tb_api_route_t *tb_http_route_match(const char *path, const char *method, char *buf,
                                          const char **params,
                                          const tb_api_route_t **path_route);

/* libmicrohttpd's MHD_OPTION_UNESCAPE_CALLBACK that leaves the text as it
 * came: the router decodes. */
size_t tb_http_unescape_none(void *cls, struct MHD_Connection *c, char *s);

/* An MHD_KeyValueIterator over MHD_GET_ARGUMENT_KIND: adds each argument,
 * name and value decoded ('+' a space), to cls, a JSON object of
 * name -> array of values. */
enum MHD_Result tb_http_query_collect(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value);

#endif
