/*
 * tb_api.h - the REST resources, independent of the HTTP library.
 *
 * server/ parses an HTTP request into a tb_api_request_t, finds the route
 * whose method and path template match, calls its handler, and writes the
 * tb_api_response_t back. Each api/ file holds one resource and exports its
 * routes; tb_api_routes() lists them all. Handlers translate HTTP to runtime
 * calls and nothing else.
 */
#ifndef TB_API_H
#define TB_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_error.h"

typedef struct tb_herder tb_herder_t;
struct tb_api_request;
struct tb_api_response;

/* What every handler can reach. Owned by the server; handlers borrow it. */
typedef struct {
    tb_herder_t *herder;
    const char *worker_id;        /* host:port, as Connect's worker_id */
    bool topic_tracking_disabled; /* topic.tracking.enable=false */
    bool topic_reset_disabled;    /* topic.tracking.allow.reset=false */
    /* Distributed mode: answers a request that the leader must answer by
     * forwarding it there (true, res filled); false: answer it here. NULL
     * standalone. */
    bool (*forward)(void *opaque, const struct tb_api_request *req,
                    struct tb_api_response *res);
    void *forward_opaque;
    /* POST /admin/reload: reloads the worker file and returns the report
     * (new reference) with *status its HTTP status (server/tb_reload.h).
     * NULL: the route answers 404. */
    json_t *(*reload)(void *opaque, unsigned *status);
    void *reload_opaque;
} tb_api_context_t;

#define TB_API_MAX_PARAMS 4

struct tb_api_route;

typedef struct tb_api_request {
    const char *method;
    const char *path;
    /* The route the request matched: its flags say where a cluster
     * answers it (TB_API_LEADER, TB_API_TASK_OWNER). */
    const struct tb_api_route *route;
    /* Decoded path segments captured by the template's "{}" parts. */
    const char *params[TB_API_MAX_PARAMS];
    /* Query arguments: name -> array of values (repeatable keys). */
    const json_t *query;
    /* The request body, NUL-terminated, or NULL when empty. */
    const char *body;
    size_t body_len;
    /* The scheme://host:port this request reached, for Location headers. */
    const char *base_url;
    /* The Authorization header as sent, or NULL; forwarded with the
     * request, so the leader checks it again. */
    const char *authorization;
    /* The X-Tributary-Forwarded header: another worker says it forwarded
     * it, which the signature below must prove (server/tb_forward.h). */
    const char *forwarded_by;
    /* X-Connect-Authorization and X-Connect-Request-Signature-Algorithm,
     * or NULL (server/tb_request_signature.h). */
    const char *signature;
    const char *signature_algorithm;
    const tb_api_context_t *ctx;
} tb_api_request_t;

typedef struct tb_api_response {
    unsigned status;
    json_t *body;             /* owned; NULL for an empty body */
    char *text;               /* owned; a non-JSON body, used when body is NULL */
    const char *content_type; /* static; defaults to application/json */
    char *location;           /* owned; a Location header, or NULL */
    unsigned retry_after_s;   /* a Retry-After header, or 0 */
} tb_api_response_t;

typedef void (*tb_api_handler_fn)(const tb_api_request_t *req, tb_api_response_t *res);

/* A path template is matched segment by segment; "{}" matches any one
 * non-empty segment and captures it into params. */
typedef struct tb_api_route {
    const char *method;
    const char *template;
    tb_api_handler_fn handler;
    unsigned flags; /* TB_API_* below, or 0 */
} tb_api_route_t;

/* An admin route (/admin/...), served where admin.listeners says. */
#define TB_API_ADMIN 1u
/* Answered without rest.auth's credentials (the probes: /health and
 * /health/live); a TLS client certificate is still asked for. */
#define TB_API_UNAUTHENTICATED 2u
/* In a cluster, answered by the leader, where any other worker forwards it:
 * a write of a connector's config, target state or offsets. */
#define TB_API_LEADER 4u
/* In a cluster, answered by the worker that runs the task the path names
 * (a task's restart), where any other worker forwards it. */
#define TB_API_TASK_OWNER 8u

/* Every route of the API, terminated by a zeroed entry. */
const tb_api_route_t *tb_api_routes(void);

/* Sets a JSON reply (steals body). */
void tb_api_reply(tb_api_response_t *res, unsigned status, json_t *body);

/* Sets Connect's error reply {"error_code":status,"message":...} for err. */
void tb_api_reply_error(tb_api_response_t *res, tb_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first value of a query argument, or NULL. */
const char *tb_api_query(const tb_api_request_t *req, const char *name);

/* Parses the request body as JSON. Replies 400 naming the problem and
 * returns NULL when it is missing or malformed. New reference. */
json_t *tb_api_body_json(const tb_api_request_t *req, tb_api_response_t *res);

/* The routes of each resource, terminated by a zeroed entry. */
extern const tb_api_route_t tb_api_root_routes[];
extern const tb_api_route_t tb_api_connectors_routes[];
extern const tb_api_route_t tb_api_offsets_routes[];
extern const tb_api_route_t tb_api_plugins_routes[];
extern const tb_api_route_t tb_api_loggers_routes[];
extern const tb_api_route_t tb_api_metrics_routes[];
extern const tb_api_route_t tb_api_ui_routes[];
extern const tb_api_route_t tb_api_reload_routes[];

#endif
