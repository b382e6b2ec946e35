#include "connectors/runtime/config/tb_transforms.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "connectors/transforms/tb_chain.h"
#include "core/tb_config.h"

/* The keys that list a chain's aliases. */
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

void tb_transforms_validate(const json_t *transforms, const json_t *predicates,
                            const json_t *raw, json_t *errors)
{
    const json_t *const lists[] = {transforms, predicates};
    for (size_t c = 0; c < sizeof(chain_keys) / sizeof(chain_keys[0]); c++) {
        if (has_duplicate(lists[c])) {
            char message[1024];
            snprintf(message, sizeof(message),
                     "Invalid value %s for configuration %s: Duplicate alias provided.",
                     json_string_value(json_object_get(raw, chain_keys[c])),
                     chain_keys[c]);
            tb_config_error_add(errors, chain_keys[c], message);
            return;
        }
    }
    tb_chain_validate(lists[0], lists[1], raw, errors);
}
