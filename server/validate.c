#include "server/tb_validate.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/config/tb_connector_config.h"
#include "core/tb_state.h"
#include "server/tb_connector_file.h"

/* Prints {"file","error"} on out and the message on err. */
static void report_error(const char *path, const char *message, FILE *out, FILE *err)
{
    json_t *line = json_pack("{s:s, s:s}", "file", path, "error", message);
    json_dumpf(line, out, JSON_COMPACT);
    fputc('\n', out);
    json_decref(line);
    fprintf(err, "tributary validate: %s\n", message);
}

/* The plugin of config's connector.class; NULL with message naming the key
 * when it is missing or no plugin of this build has it. */
static const tb_plugin_t *plugin_of(const char *path, const json_t *config, char *message,
                                    size_t message_size)
{
    const char *class_name =
        json_string_value(json_object_get(config, "connector.class"));
    const tb_plugin_t *plugin = tb_plugin_find(class_name);
    if (class_name == NULL) {
        snprintf(message, message_size, "%s: connector.class is missing", path);
    } else if (plugin == NULL) {
        size_t used = (size_t)snprintf(message, message_size,
                                       "%s: connector.class: %s is not a connector of "
                                       "this build; it has ",
                                       path, class_name);
        for (size_t i = 0; tb_plugins[i] != NULL && used < message_size; i++) {
            used += (size_t)snprintf(message + used, message_size - used, "%s%s",
                                     i ? ", " : "", tb_plugins[i]->class_name);
        }
    }
    return plugin;
}

/* The errors of one file's config (named name) for plugin, as the worker
 * would find them when the file is applied. New reference. */
static json_t *config_errors(const tb_connector_checks_t *checks,
                             const tb_plugin_t *plugin, const char *name, json_t *config)
{
    const char *config_name = json_string_value(json_object_get(config, "name"));
    bool mismatch = config_name != NULL && strcmp(config_name, name) != 0;
    char message[1024];
    if (mismatch) {
        snprintf(message, sizeof(message),
                 "the config's name (%s) is not the file's connector name (%s)",
                 config_name, name);
    } else {
        json_object_set_new(config, "name", json_string(name));
    }
    json_t *errors = tb_connector_validate_errors(checks, plugin, config);
    if (mismatch) {
        tb_config_error_add(errors, "name", message);
    }
    return errors;
}

/* Validates one file; true when it has no error. */
static bool validate_file(const tb_connector_checks_t *checks, const char *path,
                          FILE *out, FILE *err)
{
    char message[4096];
    tb_target_state_t initial;
    json_t *file = tb_connector_file_load(path, message, sizeof(message));
    if (file == NULL) {
        report_error(path, message, out, err);
        return false;
    }
    const char *name = json_string_value(json_object_get(file, "name"));
    const char *state = json_string_value(json_object_get(file, "initial_state"));
    json_t *config = json_deep_copy(json_object_get(file, "config"));
    const tb_plugin_t *plugin = plugin_of(path, config, message, sizeof(message));
    bool valid = false;
    if (tb_initial_state_parse(state, &initial) != 0) {
        snprintf(message, sizeof(message),
                 "%s: initial_state: %s is not RUNNING, PAUSED or STOPPED", path, state);
        report_error(path, message, out, err);
    } else if (plugin == NULL) {
        report_error(path, message, out, err);
    } else {
        json_t *errors = config_errors(checks, plugin, name, config);
        json_t *line = json_pack("{s:s, s:s, s:o}", "file", path, "name", name, "result",
                                 tb_connector_config_infos(plugin, config, errors));
        json_dumpf(line, out, JSON_COMPACT);
        fputc('\n', out);
        json_decref(line);
        const char *key;
        json_t *list;
        size_t i;
        json_t *text;
        json_object_foreach (errors, key, list) {
            json_array_foreach (list, i, text) {
                fprintf(err, "tributary validate: %s: %s: %s\n", path, key,
                        json_string_value(text));
            }
        }
        valid = tb_config_error_count(errors) == 0;
        if (valid) {
            fprintf(err, "tributary validate: %s: %s (%s) is valid\n", path, name,
                    plugin->class_name);
        }
        json_decref(errors);
    }
    json_decref(config);
    json_decref(file);
    return valid;
}

int tb_validate_files(const tb_connector_checks_t *checks, const json_t *paths, FILE *out,
                      FILE *err)
{
    int invalid = 0;
    size_t i;
    json_t *path;
    json_array_foreach (paths, i, path) {
        invalid += validate_file(checks, json_string_value(path), out, err) ? 0 : 1;
    }
    fflush(out);
    return invalid;
}
