/* GET /, GET /health and GET /health/live: who this worker is, whether it
 * is ready (KIP-1017) and whether it is alive. */
#include <stdio.h>

#include "api/tb_api.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "tb_version.h"

/* Connect's ServerInfo. "version" is the Connect version whose REST contract
 * tributary implements, so clients that gate features on it keep working;
 * "commit" is tributary's own build. */
static void get_root(const tb_api_request_t *req, tb_api_response_t *res)
{
    char id[128];
    bool known = tb_herder_cluster_id(req->ctx->herder, id, sizeof(id));
    tb_api_reply(res, 200,
                 json_pack("{s:s, s:s, s:o}", "version", TB_CONNECT_VERSION, "commit",
                           TB_GIT_COMMIT, "kafka_cluster_id",
                           known ? json_string(id) : json_null()));
}

static void get_health(const tb_api_request_t *req, tb_api_response_t *res)
{
    static const struct {
        unsigned status;
        const char *name;
    } shown[] = {
        [TB_HEALTH_STARTING] = {503, "starting"},
        [TB_HEALTH_HEALTHY] = {200, "healthy"},
        [TB_HEALTH_UNHEALTHY] = {500, "unhealthy"},
    };
    char message[512];
    tb_health_t health = tb_herder_health(req->ctx->herder, message, sizeof(message));
    tb_api_reply(
        res, shown[health].status,
        json_pack("{s:s, s:s}", "status", shown[health].name, "message", message));
}

/* Liveness: answered by any REST thread that runs, touching nothing else
 * (no lock, no herder, no Kafka), so that a probe restarts only a process
 * that cannot answer at all, never one that waits for its broker. */
static void get_live(const tb_api_request_t *req, tb_api_response_t *res)
{
    (void)req;
    tb_api_reply(res, 200, json_pack("{s:s}", "status", "live"));
}

const tb_api_route_t tb_api_root_routes[] = {
    {"GET", "/", get_root, 0},
    {"GET", "/health", get_health, TB_API_UNAUTHENTICATED},
    {"GET", "/health/live", get_live, TB_API_UNAUTHENTICATED},
    {0},
};
