/* /connectors/{connector}/offsets: read, alter and reset a connector's
 * offsets (alter and reset only while it is STOPPED). */
#include "api/tb_api.h"
#include "connectors/runtime/herder/tb_herder.h"

#define MSG_SIZE 4096

static void get_offsets(const tb_api_request_t *req, tb_api_response_t *res)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err =
        tb_herder_offsets_get(req->ctx->herder, req->params[0], &out, msg, sizeof(msg));
    if (err != TB_OK) {
        tb_api_reply_error(res, err, "%s", msg);
    } else {
        tb_api_reply(res, 200, out);
    }
}

static void alter(const tb_api_request_t *req, tb_api_response_t *res,
                  const json_t *offsets)
{
    char msg[MSG_SIZE];
    json_t *out = NULL;
    tb_err_t err = tb_herder_offsets_alter(req->ctx->herder, req->params[0], offsets,
                                           &out, msg, sizeof(msg));
    if (err != TB_OK) {
        tb_api_reply_error(res, err, "%s", msg);
    } else {
        tb_api_reply(res, 200, out);
    }
}

static void patch_offsets(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *body = tb_api_body_json(req, res);
    if (body == NULL) {
        return;
    }
    json_t *offsets = json_object_get(body, "offsets");
    if (!json_is_object(body) || (offsets != NULL && !json_is_array(offsets))) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "The request body must be {\"offsets\":[...]}");
    } else if (json_array_size(offsets) == 0) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Partitions / offsets need to be provided for an alter "
                           "offsets request");
    } else {
        alter(req, res, offsets);
    }
    json_decref(body);
}

static void delete_offsets(const tb_api_request_t *req, tb_api_response_t *res)
{
    alter(req, res, NULL);
}

const tb_api_route_t tb_api_offsets_routes[] = {
    {"GET", "/connectors/{}/offsets", get_offsets, 0},
    {"PATCH", "/connectors/{}/offsets", patch_offsets, TB_API_LEADER},
    {"DELETE", "/connectors/{}/offsets", delete_offsets, TB_API_LEADER},
    {0},
};
