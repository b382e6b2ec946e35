#include "connectors/runtime/tb_limits.h"

#include <curl/curl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The real path of a file that may not exist yet: its directory resolved,
 * its name appended. NULL when the directory does not exist. malloc'd. */
static char *real_target(const char *path)
{
    char *resolved = realpath(path, NULL);
    if (resolved != NULL) {
        return resolved;
    }
    char *dir_copy = strdup(path);
    char *name_copy = strdup(path);
    char *dir = realpath(dirname(dir_copy), NULL);
    char *out = NULL;
    if (dir != NULL && asprintf(&out, "%s/%s", dir, basename(name_copy)) < 0) {
        out = NULL;
    }
    free(dir);
    free(dir_copy);
    free(name_copy);
    return out;
}

static bool path_allowed(const json_t *dirs, const char *path)
{
    char *target = real_target(path);
    bool allowed = false;
    size_t i;
    json_t *dir;
    json_array_foreach ((json_t *)dirs, i, dir) {
        char *root = realpath(json_string_value(dir), NULL);
        size_t n = root != NULL ? strlen(root) : 0;
        allowed =
            allowed || (target != NULL && root != NULL && strncmp(target, root, n) == 0 &&
                        (target[n] == '/' || strcmp(root, "/") == 0));
        free(root);
    }
    free(target);
    return allowed;
}

static bool host_allowed(const json_t *hosts, const char *url)
{
    CURLU *parsed = curl_url();
    char *host = NULL;
    bool allowed = false;
    if (curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(parsed, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        size_t i;
        json_t *entry;
        json_array_foreach ((json_t *)hosts, i, entry) {
            allowed = allowed || strcasecmp(json_string_value(entry), host) == 0;
        }
    }
    curl_free(host);
    curl_url_cleanup(parsed);
    return allowed;
}

void tb_limits_check(const tb_limits_t *limits, const tb_config_table_t *table,
                     const json_t *config, json_t *errors)
{
    for (size_t i = 0; i < table->count; i++) {
        const tb_config_def_t *def = &table->defs[i];
        const char *value = json_string_value(json_object_get(config, def->name));
        char message[1024];
        if (value == NULL || def->role == TB_CONFIG_ROLE_NONE) {
            continue;
        }
        if (def->role == TB_CONFIG_ROLE_PATH &&
            json_array_size(limits->allowed_dirs) > 0 &&
            !path_allowed(limits->allowed_dirs, value)) {
            snprintf(message, sizeof(message),
                     "Invalid value %s for configuration %s: the path is outside the "
                     "worker's file.allowed.dirs",
                     value, def->name);
            tb_config_error_add(errors, def->name, message);
        }
        if (def->role == TB_CONFIG_ROLE_URL &&
            json_array_size(limits->allowed_hosts) > 0 &&
            !host_allowed(limits->allowed_hosts, value)) {
            snprintf(message, sizeof(message),
                     "Invalid value for configuration %s: its host is not in the "
                     "worker's http.sink.allowed.hosts",
                     def->name);
            tb_config_error_add(errors, def->name, message);
        }
    }
}
