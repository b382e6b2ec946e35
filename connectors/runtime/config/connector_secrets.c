#include "connectors/runtime/config/tb_connector_secrets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "core/tb_log.h"
#include "core/tb_props.h"
#include "core/tb_secret.h"
#include "core/tb_secret_seal.h"

/* The worker's secrets file: beside the store. */
static void secrets_path(const char *store_path, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s.secrets", store_path);
}

/* Where a literal secret of config_key of connector owner goes. */
typedef struct {
    const char *path;       /* the worker's secrets file; NULL: sealed */
    const json_t *previous; /* the config stored before, or NULL */
    const char *owner;
    const char *config_key;
    char *reference;  /* the last one made (malloc'd) */
    char taken[1024]; /* the keys taken so far, for the warning */
    char *msg;
    size_t msg_size;
    bool failed;
} externalizer_t;

/* Notes what (a config key, or "<config key>.<header>") in the warning's
 * list, cut with "..." when it is long. */
static void note_taken(externalizer_t *x, const char *what)
{
    size_t used = strlen(x->taken);
    size_t room = sizeof(x->taken) - used;
    int n = snprintf(x->taken + used, room, "%s%s", used > 0 ? ", " : "", what);
    if (n < 0 || (size_t)n >= room) {
        snprintf(x->taken + sizeof(x->taken) - 4, 4, "...");
    }
}

/* A header of a list, looked for by name. */
typedef struct {
    const char *name;
    char *value; /* what the list gives it (malloc'd), or NULL */
} header_find_t;

/* tb_secret_header_fn: notes the value of the header looked for. */
static const char *find_header(void *arg, const char *name, const char *value)
{
    header_find_t *find = arg;
    if (find->value == NULL && strcmp(name, find->name) == 0) {
        find->value = strdup(value);
    }
    return NULL;
}

/* The sealed value the previous config holds for what (the config key, or
 * header of it), when it opens to value: kept, so that a config written
 * again is unchanged (a new nonce would make new task configs and restart
 * the tasks). malloc'd, or NULL. */
static char *sealed_before(const externalizer_t *x, const char *what, const char *header,
                           const char *value)
{
    const char *before = json_string_value(json_object_get(x->previous, x->config_key));
    header_find_t find = {.name = header};
    char errstr[512];
    char *kept = NULL;
    if (before != NULL && header != NULL) {
        free(tb_secret_headers_rewrite(before, find_header, &find));
        before = find.value;
    }
    if (before != NULL && tb_secret_is_sealed(before) &&
        tb_secret_seal_check(before, x->owner, what, errstr, sizeof(errstr)) == 0) {
        char *secret = tb_secret_seal_open(before, errstr, sizeof(errstr));
        if (secret != NULL && strcmp(secret, value) == 0) {
            kept = strdup(before);
        }
        if (secret != NULL) {
            OPENSSL_cleanse(secret, strlen(secret));
        }
        free(secret);
    }
    free(find.value);
    return kept;
}

/* Seals value, or moves it to the secrets file under its owner's key for
 * what (the config key, or header of it); returns what takes its place,
 * or NULL (x->failed set, msg filled). */
static const char *externalize(externalizer_t *x, const char *what, const char *header,
                               const char *value)
{
    free(x->reference);
    x->reference = NULL;
    if (x->path == NULL) {
        x->reference = sealed_before(x, what, header, value);
        if (x->reference == NULL) {
            x->reference = tb_secret_seal(x->owner, what, value, x->msg, x->msg_size);
        }
    } else {
        char *file_key = tb_secret_file_key_new(x->owner, what);
        if (file_key == NULL) {
            snprintf(x->msg, x->msg_size, "%s: out of memory", what);
        } else if (tb_props_file_set(x->path, file_key, value, x->msg, x->msg_size) ==
                       0 &&
                   asprintf(&x->reference, "${file:%s:%s}", x->path, file_key) < 0) {
            x->reference = NULL;
            snprintf(x->msg, x->msg_size, "%s: out of memory", what);
        }
        free(file_key);
    }
    x->failed = x->reference == NULL;
    if (!x->failed) {
        note_taken(x, what);
    }
    return x->reference;
}

/* tb_secret_header_fn: a literal credential header's value taken. */
static const char *externalize_header(void *arg, const char *name, const char *value)
{
    externalizer_t *x = arg;
    char *what = NULL;
    if (x->failed || tb_secret_is_sealed(value)) {
        return NULL;
    }
    if (asprintf(&what, "%s.%s", x->config_key, name) < 0) {
        snprintf(x->msg, x->msg_size, "%s: out of memory", x->config_key);
        x->failed = true;
        return NULL;
    }
    const char *reference = externalize(x, what, name, value);
    free(what);
    return reference;
}

/* Literal secrets never reach the store as given: sealed (distributed) or
 * moved to a properties file beside the store, readable by the worker's
 * user only (standalone), and the config keeps a reference in their
 * place. */
int tb_connector_secrets_externalize(const char *store_path, bool seal, const char *name,
                                     const tb_plugin_t *plugin, const json_t *previous,
                                     json_t *config, char *msg, size_t msg_size)
{
    char path[4096];
    const char *key;
    json_t *value;
    secrets_path(store_path, path, sizeof(path));
    externalizer_t x = {.path = seal ? NULL : path,
                        .previous = previous,
                        .owner = name,
                        .msg = msg,
                        .msg_size = msg_size};
    json_object_foreach (config, key, value) {
        const char *text = json_string_value(value);
        x.config_key = key;
        if (text == NULL) {
            continue;
        }
        if (tb_connector_config_secret_key(plugin, key) &&
            !tb_secret_is_reference(text)) {
            const char *reference = externalize(&x, key, NULL, text);
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
            break;
        }
    }
    free(x.reference);
    if (!x.failed && x.taken[0] != '\0') {
        TB_LOG_TASK(TB_LOG_WARN, "tributary.herder", name, -1,
                    "secrets written literally (%s) are kept %s and never shown; a "
                    "${env:NAME} or ${file:/path:key} reference would keep them out of "
                    "tributary altogether",
                    x.taken,
                    seal ? "encrypted in the config topic under the worker's "
                           "secrets.encryption.key"
                         : "in the worker's owner-only secrets file");
    }
    return x.failed ? -1 : 0;
}

/* Removes connector name's entries from the worker's secrets file; a
 * failure is logged (the connector is gone from the store all the same). */
void tb_connector_secrets_forget(const char *store_path, const char *name)
{
    char path[4096], reason[4096];
    char *own = tb_secret_file_key_new(name, "");
    secrets_path(store_path, path, sizeof(path));
    if (own == NULL) {
        snprintf(reason, sizeof(reason), "out of memory");
    }
    if (own == NULL ||
        tb_props_file_remove_prefix(path, own, reason, sizeof(reason)) != 0) {
        TB_LOG_TASK(TB_LOG_ERROR, "tributary.herder", name, -1,
                    "deleted, but its secrets stay in the secrets file: %s", reason);
    }
    free(own);
}
