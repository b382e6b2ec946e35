/* GET /ui and GET /ui/{path}: the web UI (web/), from assets embedded at
 * build time (web/tb_web_assets.h). Behind rest.auth like every route. */
#include "api/tb_api.h"

#include <stdlib.h>
#include <string.h>

#include "web/tb_web_assets.h"

static const tb_web_asset_t *tb_ui_asset_find(const char *name)
{
    for (const tb_web_asset_t *asset = tb_web_assets; asset->name != NULL; asset++) {
        if (strcmp(asset->name, name) == 0) {
            return asset;
        }
    }
    return NULL;
}

/* Replies 200 with a copy of the asset (the server frees the body it
 * sends), or 404 when there is no asset of that name. */
static void tb_ui_reply_asset(tb_api_response_t *res, const char *name)
{
    const tb_web_asset_t *asset = tb_ui_asset_find(name);
    if (asset == NULL) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "No UI asset %.100s", name);
        return;
    }
    char *text = malloc(asset->size + 1);
    if (text == NULL) {
        tb_api_reply_error(res, TB_ERR_INTERNAL, "Out of memory serving /ui/%s", name);
        return;
    }
    memcpy(text, asset->data, asset->size);
    text[asset->size] = '\0';
    res->status = 200;
    res->text = text;
    res->content_type = asset->content_type;
}

static void get_ui(const tb_api_request_t *req, tb_api_response_t *res)
{
    (void)req;
    tb_ui_reply_asset(res, "index.html");
}

static void get_ui_asset(const tb_api_request_t *req, tb_api_response_t *res)
{
    tb_ui_reply_asset(res, req->params[0]);
}

const tb_api_route_t tb_api_ui_routes[] = {
    {"GET", "/ui", get_ui, 0},
    {"GET", "/ui/{}", get_ui_asset, 0},
    {0},
};
