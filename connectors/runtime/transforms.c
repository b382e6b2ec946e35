#include "connectors/runtime/tb_transforms.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/tb_config.h"

/* The keys that list a chain's aliases; `<key>.<alias>.type` names a class. */
static const char *const chain_keys[] = {"transforms", "predicates"};

static bool has_duplicate(const json_t *aliases)
{
    for (size_t i = 0; i < json_array_size(aliases); i++) {
        for (size_t j = 0; j < i; j++) {
            if (json_equal(json_array_get(aliases, i), json_array_get(aliases, j))) {
                return true;
            }
        }
    }
    return false;
}

/* `<chain>.<alias>.type`: present, and a class tributary has (none yet). */
static void check_alias_type(const char *chain, const char *alias, const json_t *raw,
                             json_t *errors)
{
    char key[512];
    char message[1024];
    snprintf(key, sizeof(key), "%s.%s.type", chain, alias);
    const char *type = json_string_value(json_object_get(raw, key));
    if (type == NULL || type[0] == '\0') {
        snprintf(message, sizeof(message),
                 "Missing required configuration \"%s\" which has no default value.",
                 key);
    } else {
        snprintf(message, sizeof(message),
                 "Invalid value %s for configuration %s: Class %s could not be found.",
                 type, key, type);
    }
    tb_config_error_add(errors, key, message);
}

void tb_transforms_validate(const json_t *values, const json_t *raw, json_t *errors)
{
    for (size_t c = 0; c < sizeof(chain_keys) / sizeof(chain_keys[0]); c++) {
        const json_t *aliases = tb_config_list(values, chain_keys[c]);
        if (has_duplicate(aliases)) {
            char message[1024];
            snprintf(message, sizeof(message),
                     "Invalid value %s for configuration %s: Duplicate alias provided.",
                     json_string_value(json_object_get(raw, chain_keys[c])),
                     chain_keys[c]);
            tb_config_error_add(errors, chain_keys[c], message);
            continue;
        }
        size_t i;
        json_t *alias;
        json_array_foreach (aliases, i, alias) {
            check_alias_type(chain_keys[c], json_string_value(alias), raw, errors);
        }
    }
}
