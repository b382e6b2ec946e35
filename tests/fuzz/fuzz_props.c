/*
 * libFuzzer target: the worker's configuration sources. The input is read
 * as a Java properties file (core/tb_props.h), then each of its lines as a
 * NAME=value environment entry over it (tb_worker_config_apply_env, which
 * decodes TRIBUTARY_* names into keys).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_props.h"
#include "server/tb_worker_config.h"

#define MAX_ENV 64

/* Every value of a parsed file or environment is a string. */
static void check_strings(const json_t *props)
{
    const char *key;
    json_t *value;
    if (!json_is_object(props)) {
        __builtin_trap();
    }
    json_object_foreach ((json_t *)props, key, value) {
        if (!json_is_string(value)) {
            __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256] = "";
    char *env[MAX_ENV + 1];
    size_t count = 0;
    char *text = malloc(size + 1);

    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    json_t *props = tb_props_parse(text, size, errstr, sizeof(errstr));
    if (props == NULL) {
        if (errstr[0] == '\0') {
            __builtin_trap(); /* a refusal says why */
        }
        props = json_object();
    }
    for (char *save = NULL, *line = strtok_r(text, "\n", &save);
         line != NULL && count < MAX_ENV; line = strtok_r(NULL, "\n", &save)) {
        env[count++] = line;
    }
    env[count] = NULL;
    tb_worker_config_apply_env(props, env);
    check_strings(props);
    json_decref(props);
    free(text);
    return 0;
}
