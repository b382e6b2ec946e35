/*
 * The transformation chain of a connector (tb_chain.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_chain.h"
#include "connectors/transforms/tb_transform.h"

/* The keys Connect adds to every transformation, filled from use_keys. */
typedef struct {
    const char *predicate;
    bool negate;
} tb_use_keys_t;

static const tb_config_def_t use_keys[] = {
    {.name = "predicate",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Transforms",
     .documentation =
         "Alias of the predicate (under predicates) that decides which records "
         "this transform applies to; all records when unset.",
     .field = TB_CONFIG_AT(tb_use_keys_t, predicate)},
    {.name = "negate",
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Transforms",
     .documentation =
         "Apply the transform to the records the predicate rejects instead of "
         "those it accepts.",
     .field = TB_CONFIG_AT(tb_use_keys_t, negate)},
};

static const tb_config_table_t use_table = TB_CONFIG_TABLE("transform", use_keys);

typedef struct {
    const tb_transform_class_t *cls;
    char *alias;    /* as the config lists it */
    json_t *values; /* its parsed keys, which config borrows from */
    void *config;   /* cls's typed config, which state may point into */
    void *state;
    int predicate; /* index in the chain's predicates, -1: always applies */
    bool negate;
} tb_use_t;

struct tb_chain {
    tb_use_t *predicates;
    size_t predicate_count;
    tb_use_t *steps;
    size_t step_count;
    bool edits_json;         /* tb_chain_apply_json() may edit the value's text */
    tb_json_object_t object; /* the value it edits, reused */
};

/* Whether every step of chain either keeps the data or edits a $Value as
 * JSON text, with no predicate, and one does edit. */
static bool edits_json(const tb_chain_t *chain)
{
    bool edits = false;
    for (size_t i = 0; i < chain->step_count; i++) {
        const tb_use_t *step = &chain->steps[i];
        bool edit = step->cls->edit != NULL && step->cls->side == TB_SIDE_VALUE;
        if (step->predicate >= 0 || !(edit || step->cls->keeps_data)) {
            return false;
        }
        edits = edits || edit;
    }
    return edits;
}

/*
 * Keys
 */

/* Parses the keys of table written under prefix in raw. Returns the values
 * by their names without the prefix (new reference); errors gets every
 * problem under the key the user wrote, in Connect's words. */
static json_t *parse_prefixed(const tb_config_table_t *table, const json_t *raw,
                              const char *prefix, json_t *errors)
{
    tb_config_def_t *defs = calloc(table->count + 1, sizeof(*defs));
    json_t *values = json_object();
    json_t *parsed = NULL;
    size_t prefix_len = strlen(prefix);
    size_t named = 0;

    while (defs != NULL && named < table->count) {
        char *name = malloc(prefix_len + strlen(table->defs[named].name) + 1);
        if (name == NULL) {
            break;
        }
        sprintf(name, "%s%s", prefix, table->defs[named].name);
        defs[named] = table->defs[named];
        defs[named++].name = name;
    }
    if (defs != NULL && named == table->count) {
        tb_config_table_t prefixed = {.name = table->name, .defs = defs, .count = named};
        const tb_config_table_t *tables[] = {&prefixed};
        parsed = tb_config_parse(tables, 1, raw, errors);
    } else {
        tb_config_error_add(errors, prefix, "out of memory");
    }
    const char *key;
    json_t *value;
    json_object_foreach (parsed, key, value) {
        json_object_set(values, key + prefix_len, value);
    }
    json_decref(parsed);
    for (size_t i = 0; i < named; i++) {
        free((char *)defs[i].name);
    }
    free(defs);
    return values;
}

static const char *kind_interface(tb_transform_kind_t kind)
{
    return kind == TB_TRANSFORMATION
               ? "org.apache.kafka.connect.transforms.Transformation"
               : "org.apache.kafka.connect.transforms.predicates."
                 "Predicate";
}

/* The class `<chain>.<alias>.type` names, or NULL with the problem added
 * to errors. */
static const tb_transform_class_t *class_of(const json_t *raw, const char *chain,
                                            const char *alias, tb_transform_kind_t kind,
                                            json_t *errors)
{
    char key[512];
    char message[1024];
    snprintf(key, sizeof(key), "%s.%s.type", chain, alias);
    const char *type = json_string_value(json_object_get(raw, key));
    const tb_transform_class_t *cls = type != NULL ? tb_transform_class_find(type) : NULL;
    if (cls != NULL && cls->kind == kind) {
        return cls;
    }
    if (type == NULL || type[0] == '\0') {
        snprintf(message, sizeof(message),
                 "Missing required configuration \"%s\" which has no default value.",
                 key);
    } else if (cls != NULL) {
        snprintf(message, sizeof(message),
                 "Invalid value %s for configuration %s: Class %s does not implement %s",
                 type, key, type, kind_interface(kind));
    } else {
        snprintf(message, sizeof(message),
                 "Invalid value %s for configuration %s: Class %s could not be found.",
                 type, key, type);
    }
    tb_config_error_add(errors, key, message);
    return NULL;
}

static bool listed(const json_t *aliases, const char *alias)
{
    size_t i;
    json_t *item;
    json_array_foreach (aliases, i, item) {
        if (strcmp(json_string_value(item), alias) == 0) {
            return true;
        }
    }
    return false;
}

/* cls's typed config filled from values (tb_config_fill), or NULL with
 * the problem added to errors under prefix. Freed with free(). */
static void *config_of(const tb_transform_class_t *cls, const json_t *values,
                       const char *prefix, json_t *errors)
{
    void *config = calloc(1, cls->config_size > 0 ? cls->config_size : 1);
    if (config == NULL) {
        tb_config_error_add(errors, prefix, "out of memory");
    } else if (tb_config_fill(cls->config, values, config) != 0) {
        tb_config_error_add(errors, prefix, "a column does not fit its key's type");
        free(config);
        config = NULL;
    }
    return config;
}

/* Checks one alias of a chain; with use non-NULL, also makes it. */
static int check_use(const json_t *raw, const char *chain, const char *alias,
                     tb_transform_kind_t kind, const json_t *predicates, json_t *errors,
                     tb_use_t *use, char *errstr, size_t errstr_size)
{
    char prefix[512];
    tb_use_keys_t keys = {0};
    void *config = NULL;
    const tb_transform_class_t *cls = class_of(raw, chain, alias, kind, errors);
    if (cls == NULL) {
        return -1;
    }
    snprintf(prefix, sizeof(prefix), "%s.%s.", chain, alias);
    size_t before = tb_config_error_count(errors);
    json_t *values = parse_prefixed(cls->config, raw, prefix, errors);
    json_t *framework = kind == TB_TRANSFORMATION
                            ? parse_prefixed(&use_table, raw, prefix, errors)
                            : json_object();
    if (tb_config_error_count(errors) == before &&
        (config = config_of(cls, values, prefix, errors)) != NULL && cls->check != NULL) {
        char key[600];
        char message[1024];
        const char *bad = cls->check(config, message, sizeof(message));
        if (bad != NULL) {
            snprintf(key, sizeof(key), "%s%s", prefix, bad);
            tb_config_error_add(errors, key, message);
        }
    }
    if (kind == TB_TRANSFORMATION) {
        tb_config_fill(&use_table, framework, &keys);
    }
    if (keys.predicate != NULL && !listed(predicates, keys.predicate)) {
        char key[600];
        char message[1200];
        snprintf(key, sizeof(key), "%spredicate", prefix);
        snprintf(message, sizeof(message),
                 "Invalid value %s for configuration %s: No predicate is defined with "
                 "alias %s (predicates lists the aliases)",
                 keys.predicate, key, keys.predicate);
        tb_config_error_add(errors, key, message);
    }
    int rc = tb_config_error_count(errors) > before ? -1 : 0;
    if (rc == 0 && use != NULL) {
        *use =
            (tb_use_t){.cls = cls, .values = values, .config = config, .predicate = -1};
        values = NULL; /* the use's now */
        config = NULL;
        use->negate = keys.negate;
        for (size_t i = 0; keys.predicate != NULL && i < json_array_size(predicates);
             i++) {
            if (strcmp(json_string_value(json_array_get(predicates, i)),
                       keys.predicate) == 0) {
                use->predicate = (int)i;
            }
        }
        use->state = cls->create != NULL
                         ? cls->create(use->config, cls->side, errstr, errstr_size)
                         : use->config;
        if (use->state == NULL) {
            values = use->values; /* not made: freed below */
            config = use->config;
            rc = -1;
        }
    }
    free(config);
    json_decref(framework);
    json_decref(values);
    return rc;
}

void tb_chain_validate(const json_t *transforms, const json_t *predicates,
                       const json_t *raw, json_t *errors)
{
    size_t i;
    json_t *alias;
    char errstr[512];
    json_array_foreach (predicates, i, alias) {
        check_use(raw, "predicates", json_string_value(alias), TB_PREDICATE, predicates,
                  errors, NULL, errstr, sizeof(errstr));
    }
    json_array_foreach (transforms, i, alias) {
        check_use(raw, "transforms", json_string_value(alias), TB_TRANSFORMATION,
                  predicates, errors, NULL, errstr, sizeof(errstr));
    }
}

/*
 * Chains
 */

/* The column a chain's list of aliases is filled into. */
typedef struct {
    const json_t *aliases;
} tb_aliases_t;

/* The aliases listed under key in raw (a comma-separated list). */
static json_t *aliases_of(const json_t *raw, const char *key)
{
    tb_config_def_t def = {.name = key,
                           .type = TB_CONFIG_LIST,
                           .default_value = "",
                           .field = TB_CONFIG_AT(tb_aliases_t, aliases)};
    tb_config_table_t table = {.name = key, .defs = &def, .count = 1};
    const tb_config_table_t *tables[] = {&table};
    tb_aliases_t listed = {NULL};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    tb_config_fill(&table, values, &listed);
    json_t *aliases = json_incref((json_t *)listed.aliases);
    json_decref(values);
    json_decref(errors);
    return aliases;
}

/* Makes every alias of one chain into uses[]. */
static int build(const json_t *raw, const char *chain, tb_transform_kind_t kind,
                 const json_t *aliases, const json_t *predicates, tb_use_t *uses,
                 size_t *count, char *errstr, size_t errstr_size)
{
    json_t *errors = json_object();
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(aliases); i++) {
        const char *alias = json_string_value(json_array_get(aliases, i));
        rc = check_use(raw, chain, alias, kind, predicates, errors, &uses[i], errstr,
                       errstr_size);
        if (rc == 0) {
            (*count)++;
            if ((uses[i].alias = strdup(alias)) == NULL) {
                snprintf(errstr, errstr_size, "out of memory");
                rc = -1;
            }
        } else if (tb_config_error_count(errors) > 0) {
            tb_config_errors_join(errors, "; ", errstr, errstr_size);
        }
    }
    json_decref(errors);
    return rc;
}

tb_chain_t *tb_chain_create(const json_t *raw, char *errstr, size_t errstr_size)
{
    tb_chain_t *chain = calloc(1, sizeof(*chain));
    json_t *transforms = aliases_of(raw, "transforms");
    json_t *predicates = aliases_of(raw, "predicates");
    if (chain == NULL || transforms == NULL || predicates == NULL ||
        (chain->predicates = calloc(json_array_size(predicates) + 1, sizeof(tb_use_t))) ==
            NULL ||
        (chain->steps = calloc(json_array_size(transforms) + 1, sizeof(tb_use_t))) ==
            NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (build(raw, "predicates", TB_PREDICATE, predicates, predicates, chain->predicates,
              &chain->predicate_count, errstr, errstr_size) != 0 ||
        build(raw, "transforms", TB_TRANSFORMATION, transforms, predicates, chain->steps,
              &chain->step_count, errstr, errstr_size) != 0) {
        goto fail;
    }
    json_decref(transforms);
    json_decref(predicates);
    chain->edits_json = edits_json(chain);
    return chain;

fail:
    json_decref(transforms);
    json_decref(predicates);
    tb_chain_destroy(chain);
    return NULL;
}

static void release_uses(tb_use_t *uses, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (uses[i].cls->destroy != NULL) {
            uses[i].cls->destroy(uses[i].state);
        }
        free(uses[i].config); /* after the state, which may point into it */
        json_decref(uses[i].values);
        free(uses[i].alias);
    }
    free(uses);
}

void tb_chain_each(const tb_chain_t *chain,
                   void (*fn)(void *opaque, const char *kind, const char *alias,
                              const char *class_name),
                   void *opaque)
{
    for (size_t i = 0; chain != NULL && i < chain->predicate_count; i++) {
        fn(opaque, "predicate", chain->predicates[i].alias,
           chain->predicates[i].cls->name);
    }
    for (size_t i = 0; chain != NULL && i < chain->step_count; i++) {
        fn(opaque, "transform", chain->steps[i].alias, chain->steps[i].cls->name);
    }
}

void tb_chain_destroy(tb_chain_t *chain)
{
    if (chain == NULL) {
        return;
    }
    release_uses(chain->steps, chain->step_count);
    release_uses(chain->predicates, chain->predicate_count);
    tb_json_object_release(&chain->object);
    free(chain);
}

bool tb_chain_empty(const tb_chain_t *chain)
{
    return chain->step_count == 0;
}

int tb_chain_apply(tb_chain_t *chain, tb_record_t *record, const char **failed_class,
                   char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < chain->step_count; i++) {
        tb_use_t *step = &chain->steps[i];
        if (step->predicate >= 0) {
            tb_use_t *p = &chain->predicates[step->predicate];
            if (p->cls->test(p->state, record) == step->negate) {
                continue;
            }
        }
        int rc = step->cls->apply(step->state, record, errstr, errstr_size);
        if (rc == TB_RESULT_DROPPED) {
            return TB_RESULT_DROPPED;
        }
        if (rc != 0) {
            *failed_class = step->cls->name;
            return -1;
        }
    }
    return 0;
}

int tb_chain_apply_json(tb_chain_t *chain, tb_record_t *record, tb_buf_t *out,
                        const char **failed_class, char *errstr, size_t errstr_size)
{
    const tb_record_side_t *value = tb_record_side(record, TB_SIDE_VALUE);
    if (!chain->edits_json || value->typed || value->bytes == NULL ||
        !tb_json_object_read(&chain->object, value->bytes, value->len)) {
        return TB_RESULT_DECLINED;
    }
    for (size_t i = 0; i < chain->step_count; i++) {
        tb_use_t *step = &chain->steps[i];
        int rc = step->cls->edit != NULL
                     ? step->cls->edit(step->state, record, &chain->object, errstr,
                                       errstr_size)
                     : step->cls->apply(step->state, record, errstr, errstr_size);
        if (rc == TB_RESULT_DROPPED) {
            return TB_RESULT_DROPPED;
        }
        if (rc != 0) {
            *failed_class = step->cls->name;
            return -1;
        }
    }
    tb_json_object_write(&chain->object, out);
    return 0;
}

void tb_chain_classes(void (*fn)(void *opaque, const char *name, const char *kind,
                                 const tb_config_table_t *config),
                      void *opaque)
{
    for (size_t i = 0; tb_transform_classes[i] != NULL; i++) {
        const tb_transform_class_t *cls = tb_transform_classes[i];
        fn(opaque, cls->name,
           cls->kind == TB_TRANSFORMATION ? "transformation" : "predicate", cls->config);
    }
}

const tb_config_table_t *tb_chain_class_config(const char *name)
{
    const tb_transform_class_t *cls = tb_transform_class_find(name);
    return cls != NULL ? cls->config : NULL;
}
