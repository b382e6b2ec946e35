/*
 * tb_transforms.h - the single message transform and predicate chains of a
 * connector config (`transforms`, `predicates` and their `<alias>.*` keys),
 * validated as Kafka Connect validates them: repeated aliases, each
 * alias's class (connectors/transforms/), its keys against the class's
 * table, and each `.predicate` against the `predicates` aliases.
 */
#ifndef TB_TRANSFORMS_H
#define TB_TRANSFORMS_H

#include <jansson.h>

/* Checks the chains of a connector: transforms and predicates are its
 * parsed lists of aliases (tb_connector_settings_t's), raw the config as
 * written (for the per-alias keys). Adds each problem to errors under the
 * key the user wrote; borrows everything. */
void tb_transforms_validate(const json_t *transforms, const json_t *predicates,
                            const json_t *raw, json_t *errors);

#endif
