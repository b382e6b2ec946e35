/* /connector-plugins: the plugins built in, their config keys, and config
 * validation. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/tb_api.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "connectors/tb_plugin.h"
#include "connectors/transforms/tb_chain.h"
#include "core/tb_version_range.h"
#include "tb_version.h"

/* Connect lists sinks first, then sources, each sorted by class. */
static int compare_plugins(const void *a, const void *b)
{
    const tb_plugin_t *pa = *(const tb_plugin_t *const *)a;
    const tb_plugin_t *pb = *(const tb_plugin_t *const *)b;
    if (pa->kind != pb->kind) {
        return pa->kind == TB_PLUGIN_SINK ? -1 : 1;
    }
    return strcmp(pa->class_name, pb->class_name);
}

/* Lists one transformation or predicate class, as Connect 3.9 does. */
static void list_transform(void *opaque, const char *name, const char *kind,
                           const tb_config_table_t *config)
{
    (void)config;
    json_array_append_new(opaque, json_pack("{s:s, s:s, s:s}", "class", name, "type",
                                            kind, "version", TB_CONNECT_VERSION));
}

static void list_plugins(const tb_api_request_t *req, tb_api_response_t *res)
{
    size_t n = 0;
    const char *connectors_only = tb_api_query(req, "connectorsOnly");
    while (tb_plugins[n] != NULL) {
        n++;
    }
    const tb_plugin_t **sorted = calloc(n ? n : 1, sizeof(*sorted));
    memcpy(sorted, tb_plugins, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), compare_plugins);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(list,
                              json_pack("{s:s, s:s, s:s}", "class", sorted[i]->class_name,
                                        "type", tb_plugin_kind_name(sorted[i]->kind),
                                        "version", sorted[i]->version));
    }
    free(sorted);
    if (connectors_only != NULL && strcasecmp(connectors_only, "false") == 0) {
        tb_chain_classes(list_transform, list);
    }
    tb_api_reply(res, 200, list);
}

/* GET /connector-plugins/{p}/config[?version=<range>]: the range (KIP-891,
 * Connect 4.1) must hold the plugin's one version; a malformed one is
 * refused before the plugin is looked up, as Connect does. Built-in
 * transformations and predicates have the version the plugin list shows. */
static void plugin_config(const tb_api_request_t *req, tb_api_response_t *res)
{
    char text[512];
    const char *name = req->params[0];
    const char *requested = tb_api_query(req, "version");
    const tb_plugin_t *plugin = tb_plugin_find(name);
    const tb_config_table_t *transform = tb_chain_class_config(name);
    const char *version = plugin != NULL ? plugin->version : TB_CONNECT_VERSION;
    tb_version_range_match_t match =
        tb_version_range_match(requested, version, text, sizeof(text));
    if (match == TB_VERSION_RANGE_MALFORMED) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Invalid version specification: %s: %s", requested, text);
    } else if (plugin == NULL && transform == NULL) {
        tb_api_reply_error(res, TB_ERR_NOT_FOUND, "Unknown plugin %s.", name);
    } else if (match == TB_VERSION_RANGE_OUTSIDE) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Plugin %s has version %s which does not match the required "
                           "version range %s",
                           plugin != NULL ? plugin->class_name : name, version, text);
    } else if (plugin == NULL) {
        tb_api_reply(res, 200, tb_config_keys_json(&transform, 1));
    } else {
        tb_api_reply(res, 200, tb_connector_config_keys(plugin));
    }
}

/* Connect strips "Connector" from the body's class and requires it to end
 * with the plugin named in the path. */
static bool class_matches_path(const char *class_name, const char *path_plugin)
{
    const tb_plugin_t *by_class = tb_plugin_find(class_name);
    return by_class != NULL && by_class == tb_plugin_find(path_plugin);
}

static void validate_config(const tb_api_request_t *req, tb_api_response_t *res)
{
    json_t *config = tb_api_body_json(req, res);
    if (config == NULL) {
        return;
    }
    const char *class_name =
        json_string_value(json_object_get(config, "connector.class"));
    const tb_plugin_t *plugin = tb_plugin_find(class_name);
    if (!json_is_object(config)) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "The connector config must be a JSON object");
    } else if (class_name == NULL) {
        /* Connect answers these two with 500; they are the client's
         * mistakes. Connect's message quotes the whole config: not this
         * one, whose values may be secrets */
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Connector config contains no connector type: "
                           "connector.class is missing");
    } else if (plugin == NULL) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Failed to find any class that implements Connector and "
                           "which name matches %s",
                           class_name);
    } else if (!class_matches_path(class_name, req->params[0])) {
        tb_api_reply_error(res, TB_ERR_BAD_REQUEST,
                           "Included connector type %s does not match request type %s",
                           class_name, req->params[0]);
    } else {
        tb_api_reply(res, 200, tb_herder_validate(req->ctx->herder, plugin, config));
    }
    json_decref(config);
}

const tb_api_route_t tb_api_plugins_routes[] = {
    {"GET", "/connector-plugins", list_plugins, 0},
    {"GET", "/connector-plugins/{}/config", plugin_config, 0},
    {"PUT", "/connector-plugins/{}/config/validate", validate_config, 0},
    {0},
};
