#include "core/tb_secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/tb_props.h"

#define ENV_PREFIX "${env:"
#define FILE_PREFIX "${file:"

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The text between a prefix and the closing brace, or NULL. malloc'd. */
static char *inner(const char *value, const char *prefix)
{
    size_t n = strlen(value);
    size_t p = strlen(prefix);
    if (!has_prefix(value, prefix) || n <= p + 1 || value[n - 1] != '}') {
        return NULL;
    }
    return strndup(value + p, n - p - 1);
}

bool tb_secret_is_reference(const char *value)
{
    char *env = value != NULL ? inner(value, ENV_PREFIX) : NULL;
    char *file = value != NULL ? inner(value, FILE_PREFIX) : NULL;
    bool reference = (env != NULL && env[0] != '\0') ||
                     (file != NULL && strrchr(file, ':') != NULL && file[0] == '/');
    free(env);
    free(file);
    return reference;
}

static char *from_env(const char *name, char *errstr, size_t errstr_size)
{
    const char *value = getenv(name);
    if (value == NULL) {
        snprintf(errstr, errstr_size, "secret reference ${env:%s}: no such variable",
                 name);
        return NULL;
    }
    return strdup(value);
}

static char *from_file(char *spec, char *errstr, size_t errstr_size)
{
    char *colon = strrchr(spec, ':');
    char reason[512];
    *colon = '\0';
    const char *key = colon + 1;
    json_t *props = tb_props_load_file(spec, reason, sizeof(reason));
    const char *value = json_string_value(json_object_get(props, key));
    char *secret = value != NULL ? strdup(value) : NULL;
    if (props == NULL) {
        snprintf(errstr, errstr_size, "secret reference ${file:%s:%s}: %s", spec, key,
                 reason);
    } else if (secret == NULL) {
        snprintf(errstr, errstr_size, "secret reference ${file:%s:%s}: no key %s in %s",
                 spec, key, key, spec);
    }
    json_decref(props);
    return secret;
}

char *tb_secret_resolve(const char *value, char *errstr, size_t errstr_size)
{
    char *spec = NULL;
    char *secret;
    if (!tb_secret_is_reference(value)) {
        return strdup(value);
    }
    if ((spec = inner(value, ENV_PREFIX)) != NULL) {
        secret = from_env(spec, errstr, errstr_size);
    } else {
        spec = inner(value, FILE_PREFIX);
        secret = from_file(spec, errstr, errstr_size);
    }
    free(spec);
    return secret;
}
