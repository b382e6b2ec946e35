/* The connector plugins built into tributary, and how a name finds one. */
#include <stdbool.h>
#include <string.h>

#include "connectors/tb_plugin.h"

extern const tb_plugin_t tb_datagen_plugin;
extern const tb_plugin_t tb_file_sink_plugin;
extern const tb_plugin_t tb_file_source_plugin;
extern const tb_plugin_t tb_http_sink_plugin;
extern const tb_plugin_t tb_jdbc_sink_plugin;
extern const tb_plugin_t tb_jdbc_debezium_plugin;
extern const tb_plugin_t tb_postgres_source_plugin;

const tb_plugin_t *const tb_plugins[] = {
    &tb_datagen_plugin,         &tb_file_sink_plugin,
    &tb_file_source_plugin,     &tb_http_sink_plugin,
    &tb_jdbc_sink_plugin,       &tb_jdbc_debezium_plugin,
    &tb_postgres_source_plugin, NULL,
};

const char *tb_plugin_kind_name(tb_plugin_kind_t kind)
{
    return kind == TB_PLUGIN_SINK ? "sink" : "source";
}

/* Connect accepts a class name with or without its package and with or
 * without the "Connector" suffix. */
static bool name_matches(const char *candidate, const char *name)
{
    static const char suffix[] = "Connector";
    size_t n = strlen(name);
    const char *simple = strrchr(candidate, '.');
    simple = simple != NULL ? simple + 1 : candidate;

    if (strcmp(candidate, name) == 0 || strcmp(simple, name) == 0) {
        return true;
    }
    /* name without the suffix, the candidate with it */
    size_t s = strlen(simple);
    size_t suffix_len = sizeof(suffix) - 1;
    return s == n + suffix_len && strncmp(simple, name, n) == 0 &&
           strcmp(simple + n, suffix) == 0;
}

const tb_plugin_t *tb_plugin_find(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; tb_plugins[i] != NULL; i++) {
        const tb_plugin_t *plugin = tb_plugins[i];
        if (name_matches(plugin->class_name, name)) {
            return plugin;
        }
        for (size_t a = 0; plugin->aliases != NULL && plugin->aliases[a] != NULL; a++) {
            if (strcmp(plugin->aliases[a], name) == 0) {
                return plugin;
            }
        }
    }
    return NULL;
}
