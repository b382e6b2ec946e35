/* GET /metrics: the process's metrics in Prometheus' text format. */
#include "api/tb_api.h"
#include "core/tb_metrics.h"

static void get_metrics(const tb_api_request_t *req, tb_api_response_t *res)
{
    (void)req;
    char *text = tb_metrics_render();
    if (text == NULL) {
        tb_api_reply_error(res, TB_ERR_INTERNAL, "Out of memory rendering the metrics");
        return;
    }
    res->status = 200;
    res->text = text;
    res->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

const tb_api_route_t tb_api_metrics_routes[] = {
    {"GET", "/metrics", get_metrics, 0},
    {0},
};
