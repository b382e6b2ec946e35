#include "server/tb_connector_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_state.h"
#include "server/tb_connector_file.h"

#define FACILITY "tributary.connectors.dir"

static const tb_metric_def_t invalid_files_def = {
    .name = "tributary_connectors_dir_invalid_files",
    .type = TB_METRIC_GAUGE,
    .help = "Files of connectors.dir that its last pass could not apply (each named "
            "in the log)",
};

/* True for the name of a connector file: *.json or *.properties, not hidden
 * (editors' and Kubernetes' ConfigMap bookkeeping files start with '.'). */
static bool connector_file_name(const char *name)
{
    size_t len = strlen(name);
    static const char *const suffixes[] = {".json", ".properties"};
    if (name[0] == '.') {
        return false;
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t n = strlen(suffixes[i]);
        if (len > n && strcmp(name + len - n, suffixes[i]) == 0) {
            return true;
        }
    }
    return false;
}

json_t *tb_connector_dir_files(const char *dir)
{
    struct dirent **entries = NULL;
    int count = scandir(dir, &entries, NULL, alphasort);
    if (count < 0) {
        return NULL;
    }
    json_t *paths = json_array();
    for (int i = 0; i < count; i++) {
        if (connector_file_name(entries[i]->d_name)) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name);
            json_array_append_new(paths, json_string(path));
        }
        free(entries[i]);
    }
    free(entries);
    return paths;
}

/* Creates or updates the connector of one file; records its name in seen.
 * Returns false when the file is invalid (logged). */
static bool apply_file(tb_herder_t *herder, const char *path, json_t *seen,
                       tb_connector_dir_result_t *result, bool *unreadable)
{
    char msg[4096];
    tb_target_state_t initial;
    json_t *file = tb_connector_file_load(path, msg, sizeof(msg));
    if (file == NULL) {
        TB_LOG(TB_LOG_ERROR, FACILITY, "connector file %s; nothing applied from it", msg);
        *unreadable = true;
        return false;
    }
    const char *name = json_string_value(json_object_get(file, "name"));
    const char *state = json_string_value(json_object_get(file, "initial_state"));
    /* the origin, which prune reads: the file's name, the same on every
     * worker wherever each mounts the directory */
    json_t *config = json_deep_copy(json_object_get(file, "config"));
    const char *base = strrchr(path, '/');
    json_object_set_new(config, TB_CONNECTOR_DIR_ORIGIN_KEY,
                        json_string(base != NULL ? base + 1 : path));
    const char *other = json_string_value(json_object_get(seen, name));
    bool ok = false;
    if (other != NULL) {
        TB_LOG(TB_LOG_ERROR, FACILITY,
               "connector file %s: connector %s is also %s's; nothing applied from "
               "this one",
               path, name, other);
        goto done;
    }
    json_object_set_new(seen, name, json_string(path));
    if (tb_initial_state_parse(state, &initial) != 0) {
        TB_LOG(TB_LOG_ERROR, FACILITY,
               "connector file %s: initial_state %s is not RUNNING, PAUSED or STOPPED; "
               "connector %s left as it is",
               path, state, name);
    } else if (tb_herder_connector_config_is(herder, name, config)) {
        result->unchanged++;
        ok = true;
    } else {
        bool created = false;
        json_t *info = NULL;
        tb_err_t err = tb_herder_connector_put(herder, name, config, initial, true,
                                               &created, &info, msg, sizeof(msg));
        json_decref(info);
        ok = err == TB_OK;
        if (!ok) {
            TB_LOG(TB_LOG_ERROR, FACILITY,
                   "connector file %s: connector %s left as it is: %s", path, name, msg);
        } else {
            TB_LOG(TB_LOG_INFO, FACILITY, "connector %s %s from %s", name,
                   created ? "created" : "updated", path);
            (*(created ? &result->created : &result->updated))++;
        }
    }

done:
    json_decref(config);
    json_decref(file);
    return ok;
}

/* Whether connector name came from a file of the directory: its config
 * records the file (TB_CONNECTOR_DIR_ORIGIN_KEY). */
static bool from_dir(tb_herder_t *herder, const char *name)
{
    char msg[256];
    json_t *config = NULL;
    bool origin =
        tb_herder_connector_config(herder, name, &config, msg, sizeof(msg)) == TB_OK &&
        json_object_get(config, TB_CONNECTOR_DIR_ORIGIN_KEY) != NULL;
    json_decref(config);
    return origin;
}

/* Deletes each connector of the directory that no file named. */
static void prune(tb_herder_t *herder, const json_t *seen,
                  tb_connector_dir_result_t *result)
{
    json_t *names = tb_herder_connectors(herder);
    size_t i;
    json_t *value;
    json_array_foreach (names, i, value) {
        const char *name = json_string_value(value);
        char msg[1024];
        if (json_object_get(seen, name) != NULL || !from_dir(herder, name)) {
            continue;
        }
        if (tb_herder_connector_delete(herder, name, msg, sizeof(msg)) == TB_OK) {
            TB_LOG(TB_LOG_INFO, FACILITY,
                   "connector %s deleted: it has no file (connectors.dir.prune=true)",
                   name);
            result->deleted++;
        } else {
            TB_LOG(TB_LOG_ERROR, FACILITY, "cannot delete connector %s: %s", name, msg);
        }
    }
    json_decref(names);
}

int tb_connector_dir_apply(tb_herder_t *herder, const char *dir, bool pruning,
                           tb_connector_dir_result_t *result)
{
    *result = (tb_connector_dir_result_t){0};
    json_t *paths = tb_connector_dir_files(dir);
    if (paths == NULL) {
        TB_LOG(TB_LOG_ERROR, FACILITY,
               "cannot read connectors.dir %s: %s; no connector created, updated or "
               "deleted",
               dir, strerror(errno));
        return -1;
    }
    json_t *seen = json_object(); /* connector name -> its file */
    bool unreadable = false;
    size_t i;
    json_t *path;
    json_array_foreach (paths, i, path) {
        if (!apply_file(herder, json_string_value(path), seen, result, &unreadable)) {
            result->invalid++;
        }
    }
    if (pruning && unreadable) {
        TB_LOG(TB_LOG_WARN, FACILITY,
               "nothing pruned: a file that cannot be read may be a connector's");
    } else if (pruning) {
        prune(herder, seen, result);
    }
    /* kept for the process's life; passes run one at a time (at start,
     * then under tb_reload.h's lock) */
    static tb_series_t *invalid_files;
    if (invalid_files == NULL) {
        invalid_files = tb_metrics_series(&invalid_files_def, NULL);
    }
    tb_series_set(invalid_files, result->invalid);
    TB_LOG(result->invalid > 0 ? TB_LOG_WARN : TB_LOG_INFO, FACILITY,
           "applied %s: %d created, %d updated, %d unchanged, %d deleted, %d invalid "
           "file(s)",
           dir, result->created, result->updated, result->unchanged, result->deleted,
           result->invalid);
    json_decref(seen);
    json_decref(paths);
    return 0;
}
