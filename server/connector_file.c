#include "server/tb_connector_file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/tb_props.h"
#include "core/tb_secret.h"

/* A JSON document starts with '{' after optional white space. */
static int looks_like_json(const char *text)
{
    while (isspace((unsigned char)*text)) {
        text++;
    }
    return *text == '{';
}

static json_t *parse(const char *path, const char *text, size_t len, char *errstr,
                     size_t errstr_size)
{
    json_error_t error;
    char reason[256];
    if (!looks_like_json(text)) {
        json_t *props = tb_props_parse(text, len, reason, sizeof(reason));
        if (props == NULL) {
            snprintf(errstr, errstr_size, "%s: %s", path, reason);
        }
        return props;
    }
    json_t *doc = json_loadb(text, len, 0, &error);
    if (doc == NULL) {
        snprintf(errstr, errstr_size, "%s: line %d, column %d: %s", path, error.line,
                 error.column, tb_secret_json_error_text(&error));
    }
    return doc;
}

json_t *tb_connector_file_load(const char *path, char *errstr, size_t errstr_size)
{
    size_t len;
    char *text = tb_file_read_all(path, &len, errstr, errstr_size);
    json_t *doc = text != NULL ? parse(path, text, len, errstr, errstr_size) : NULL;
    json_t *out = NULL;
    free(text);
    if (doc == NULL) {
        return NULL;
    }
    /* {name, config, initial_state}, or a plain map that is the config */
    json_t *config = json_object_get(doc, "config");
    if (!json_is_object(config)) {
        config = doc;
    }
    json_t *name = json_object_get(doc, "name");
    json_t *initial = json_object_get(doc, "initial_state");
    const char *key;
    json_t *value;
    json_object_foreach (config, key, value) {
        if (!json_is_string(value)) {
            snprintf(errstr, errstr_size, "%s: the value of '%s' must be a string", path,
                     key);
            goto done;
        }
    }
    if (!json_is_string(name)) {
        snprintf(errstr, errstr_size, "%s: no connector name (the 'name' key)", path);
        goto done;
    }
    if (initial != NULL && !json_is_string(initial)) {
        snprintf(errstr, errstr_size, "%s: initial_state must be a string", path);
        goto done;
    }
    out = json_pack("{s:O, s:O, s:s}", "name", name, "config", config, "initial_state",
                    initial != NULL ? json_string_value(initial) : "RUNNING");

done:
    json_decref(doc);
    return out;
}
