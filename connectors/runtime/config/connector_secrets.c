#include "connectors/runtime/config/tb_connector_secrets.h"

#include <stdio.h>
#include <stdlib.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "core/tb_log.h"
#include "core/tb_props.h"
#include "core/tb_secret.h"

/* The worker's secrets file: beside the store. */
static void secrets_path(const char *store_path, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s.secrets", store_path);
}

/* Where a literal secret of config_key of connector owner goes. */
typedef struct {
    const char *path; /* the worker's secrets file */
    const char *owner;
    const char *config_key;
    char reference[6144]; /* the last one made */
    char *msg;
    size_t msg_size;
    bool failed;
} externalizer_t;

/* Moves value to the secrets file under its owner's key for what (a
 * config key, or "<config key>.<header>"); returns its ${file:...}
 * reference, or NULL (x->failed set, msg filled). */
static const char *externalize(externalizer_t *x, const char *what, const char *value)
{
    char file_key[2048];
    tb_secret_file_key(x->owner, what, file_key, sizeof(file_key));
    if (tb_props_file_set(x->path, file_key, value, x->msg, x->msg_size) != 0) {
        x->failed = true;
        return NULL;
    }
    snprintf(x->reference, sizeof(x->reference), "${file:%s:%s}", x->path, file_key);
    return x->reference;
}

/* tb_secret_header_fn: a credential header's value to the secrets file. */
static const char *externalize_header(void *arg, const char *name, const char *value)
{
    externalizer_t *x = arg;
    char what[1024];
    snprintf(what, sizeof(what), "%s.%s", x->config_key, name);
    return x->failed ? NULL : externalize(x, what, value);
}

/* Literal secrets (allowed by secrets.literal.allowed) never reach the
 * store: each goes to a properties file beside it, readable by the worker's
 * user only, and the config keeps a ${file:...} reference in its place. */
int tb_connector_secrets_externalize(const char *store_path, const char *name,
                                     const tb_plugin_t *plugin, json_t *config, char *msg,
                                     size_t msg_size)
{
    char path[4096];
    const char *key;
    json_t *value;
    secrets_path(store_path, path, sizeof(path));
    externalizer_t x = {.path = path, .owner = name, .msg = msg, .msg_size = msg_size};
    json_object_foreach (config, key, value) {
        const char *text = json_string_value(value);
        x.config_key = key;
        if (text == NULL) {
            continue;
        }
        if (tb_connector_config_secret_key(plugin, key) &&
            !tb_secret_is_reference(text)) {
            const char *reference = externalize(&x, key, text);
            if (reference != NULL) {
                json_object_set_new(config, key, json_string(reference));
            }
        } else if (tb_connector_config_headers_key(plugin, key)) {
            char *headers = tb_secret_headers_rewrite(text, externalize_header, &x);
            if (headers != NULL && !x.failed) {
                json_object_set_new(config, key, json_string(headers));
            }
            free(headers);
        }
        if (x.failed) {
            return -1;
        }
    }
    return 0;
}

/* Removes connector name's entries from the worker's secrets file; a
 * failure is logged (the connector is gone from the store all the same). */
void tb_connector_secrets_forget(const char *store_path, const char *name)
{
    char path[4096], own[2048], reason[4096];
    secrets_path(store_path, path, sizeof(path));
    tb_secret_file_key(name, "", own, sizeof(own));
    if (tb_props_file_remove_prefix(path, own, reason, sizeof(reason)) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1,
                    "deleted, but its secrets stay in the secrets file: %s", reason);
    }
}
