/* The request router (tb_http_router.h): raw paths split before they are
 * decoded, templates matched segment by segment, query arguments decoded. */
#include "server/tb_http_router.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The most segments a path has that a route can match. */
#define MAX_SEGMENTS 16

/* Decodes %XX escapes and '+' (in query strings) in place. "%00" stays as
 * it is: decoded, it would cut the string short, so that
 * /connectors/a%00b would name connector "a" and /connectors/%00 an empty
 * name. */
static void url_decode(char *s, bool plus_is_space)
{
    char *out = s;
    for (char *in = s; *in != '\0'; in++) {
        if (*in == '%' && isxdigit((unsigned char)in[1]) &&
            isxdigit((unsigned char)in[2]) && !(in[1] == '0' && in[2] == '0')) {
            char hex[3] = {in[1], in[2], '\0'};
            *out++ = (char)strtol(hex, NULL, 16);
            in += 2;
        } else if (*in == '+' && plus_is_space) {
            *out++ = ' ';
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
}

/* libmicrohttpd would decode the path before we split it, turning an
 * escaped '/' in a connector name into a separator; keep it raw and decode
 * each segment and query argument ourselves. */
size_t tb_http_unescape_none(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

enum MHD_Result tb_http_query_collect(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    json_t *query = cls;
    (void)kind;
    char *name = strdup(key);
    char *text = strdup(value != NULL ? value : "");
    url_decode(name, true);
    url_decode(text, true);
    json_t *list = json_object_get(query, name);
    if (list == NULL) {
        list = json_array();
        json_object_set_new(query, name, list);
    }
    json_array_append_new(list, json_string(text));
    free(name);
    free(text);
    return MHD_YES;
}

/* Splits a path (a query string ignored) into decoded segments (in buf).
 * Returns the count, or -1 when there are too many or the path does not
 * fit buf: a path is never routed cut. */
static int split_path(const char *path, char *buf, size_t size,
                      char *segments[MAX_SEGMENTS])
{
    int n = 0;
    size_t len = strcspn(path, "?");
    if (len >= size) {
        return -1;
    }
    memcpy(buf, path, len);
    buf[len] = '\0';
    for (char *p = buf; *p != '\0';) {
        while (*p == '/') {
            *p++ = '\0';
        }
        if (*p == '\0') {
            break;
        }
        if (n == MAX_SEGMENTS) {
            return -1;
        }
        segments[n++] = p;
        while (*p != '\0' && *p != '/') {
            p++;
        }
    }
    for (int i = 0; i < n; i++) {
        url_decode(segments[i], false);
    }
    return n;
}

/* Does template match the segments? Fills params with captures. */
static bool template_matches(const char *template, char *const *segments, int count,
                             const char **params)
{
    char buf[256];
    char *parts[MAX_SEGMENTS];
    int n = split_path(template, buf, sizeof(buf), parts);
    int captured = 0;
    if (n != count) {
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(parts[i], "{}") == 0) {
            if (captured < TB_API_MAX_PARAMS) {
                params[captured++] = segments[i];
            }
        } else if (strcmp(parts[i], segments[i]) != 0) {
            return false;
        }
    }
    return true;
}

/* Admin routes only where admin.listeners puts them; admin listeners serve
 * nothing else. A route not served here does not exist here (404). */
static bool route_served(bool serves_admin, bool admin_only, const tb_api_route_t *route)
{
    return (route->flags & TB_API_ADMIN) != 0 ? serves_admin : !admin_only;
}

const tb_api_route_t *tb_http_route_find(bool serves_admin, bool admin_only,
                                         const char *path, const char *method, char *buf,
                                         const char **params,
                                         const tb_api_route_t **path_route)
{
    char *segments[MAX_SEGMENTS];
    int count = split_path(path, buf, TB_HTTP_PATH_BUF_SIZE, segments);

    *path_route = NULL;
    for (const tb_api_route_t *route = tb_api_routes();
         count >= 0 && route->method != NULL; route++) {
        const char *captured[TB_API_MAX_PARAMS] = {0};
        if (!route_served(serves_admin, admin_only, route) ||
            !template_matches(route->template, segments, count, captured)) {
            continue;
        }
        if (*path_route == NULL) {
            *path_route = route;
        }
        if (strcmp(route->method, method) == 0) {
            memcpy(params, captured, sizeof(captured));
            return route;
        }
    }
    return NULL;
}

const tb_api_route_t *tb_http_route_match(const char *path, const char *method, char *buf,
                                          const char **params,
                                          const tb_api_route_t **path_route)
{
    return tb_http_route_find(true, false, path, method, buf, params, path_route);
}
