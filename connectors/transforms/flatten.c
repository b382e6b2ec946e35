/*
 * Flatten: makes nested structs (with a schema) or maps (without) one
 * level, each leaf named by its path joined with delimiter ("a.b.c"). A
 * leaf under an optional struct becomes optional, and takes the default
 * its ancestors' defaults give it, as in Connect; maps with a schema
 * cannot be flattened, structs without one neither. A null passes
 * unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_transform.h"

#define PURPOSE "flattening"

/* Flatten's keys, filled from flatten_keys. */
typedef struct {
    const char *delimiter;
} tb_flatten_keys_t;

typedef struct {
    tb_side_t side;
    const char *delimiter; /* the config's */
    tb_schema_cache_t cache;
} tb_flatten_t;

static void flatten_destroy(void *state)
{
    tb_flatten_t *f = state;
    if (f != NULL) {
        tb_schema_cache_clear(&f->cache);
        free(f);
    }
}

static void *flatten_create(const void *config, tb_side_t side, char *errstr,
                            size_t errstr_size)
{
    tb_flatten_t *f = calloc(1, sizeof(*f));
    if (f == NULL) {
        tb_field_oom(errstr, errstr_size);
        return NULL;
    }
    f->side = side;
    f->delimiter = ((const tb_flatten_keys_t *)config)->delimiter;
    return f;
}

/* prefix + delimiter + name (name alone at the top), malloc'd. */
static char *path_of(const char *prefix, const char *delimiter, const char *name)
{
    size_t len = strlen(prefix) + strlen(delimiter) + strlen(name) + 1;
    char *path = malloc(len);
    if (path != NULL) {
        snprintf(path, len, "%s%s%s", prefix, prefix[0] != '\0' ? delimiter : "", name);
    }
    return path;
}

static int flatten_map(const tb_value_t *map, const char *prefix, const char *delimiter,
                       tb_value_t *out, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < tb_value_size(map); i++) {
        const tb_value_t *v = tb_value_map_value(map, i);
        const char *key = tb_value_text(tb_value_map_key(map, i), NULL);
        char *path = path_of(prefix, delimiter, key != NULL ? key : "");
        int rc = path != NULL ? 0 : tb_field_oom(errstr, errstr_size);
        if (rc == 0 && v != NULL && tb_value_type(v) == TB_TYPE_MAP) {
            rc = flatten_map(v, path, delimiter, out, errstr, errstr_size);
        } else if (rc == 0 && v != NULL && tb_value_type(v) == TB_TYPE_STRUCT) {
            snprintf(
                errstr, errstr_size,
                "Flatten transformation does not support class %s for record without "
                "schemas (for field %s).",
                tb_value_class_name(v), path);
            rc = -1;
        } else if (rc == 0 &&
                   tb_value_map_put(out, tb_field_string(path), tb_value_copy(v)) != 0) {
            rc = tb_field_oom(errstr, errstr_size);
        }
        free(path);
        if (rc != 0) {
            return -1;
        }
    }
    return 0;
}

/* Adds the leaves of struct schema s under prefix to out. */
static int flatten_schema(const tb_schema_t *s, const char *prefix, const char *delimiter,
                          bool optional, const tb_value_t *parent_default,
                          tb_schema_t *out, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        bool leaf_optional = optional || tb_schema_optional(f->schema);
        const tb_value_t *def = tb_schema_default(f->schema);
        if (def == NULL && parent_default != NULL) {
            def = tb_field_get(parent_default, f, true);
        }
        char *path = path_of(prefix, delimiter, f->name);
        int rc = path != NULL ? 0 : tb_field_oom(errstr, errstr_size);
        tb_type_t type = tb_schema_type(f->schema);
        if (rc == 0 && type == TB_TYPE_STRUCT) {
            rc = flatten_schema(f->schema, path, delimiter, leaf_optional, def, out,
                                errstr, errstr_size);
        } else if (rc == 0 && type == TB_TYPE_MAP) {
            snprintf(
                errstr, errstr_size,
                "Flatten transformation does not support MAP for record with schemas "
                "(for field %s).",
                path);
            rc = -1;
        } else if (rc == 0) {
            tb_schema_t *leaf = tb_schema_copy(f->schema);
            tb_value_t *leaf_default = tb_value_copy(def);
            if (leaf == NULL || (def != NULL && leaf_default == NULL)) {
                tb_schema_decref(leaf);
                tb_value_free(leaf_default);
                rc = tb_field_oom(errstr, errstr_size);
            } else {
                tb_schema_set_optional(leaf, leaf_optional);
                tb_schema_set_default(leaf, leaf_default);
                if (tb_schema_add_field(out, path, leaf) != 0) {
                    snprintf(errstr, errstr_size,
                             "Cannot create field because of field name duplication %s",
                             path);
                    rc = -1;
                }
            }
        }
        free(path);
        if (rc != 0) {
            return -1;
        }
    }
    return 0;
}

/* Sets the leaves of st (a struct, not null) under prefix in out. -1 on no
 * memory. */
static int flatten_struct(const tb_value_t *st, const char *prefix, const char *delimiter,
                          tb_value_t *out)
{
    const tb_schema_t *s = tb_value_struct_schema(st);
    for (size_t i = 0; i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        char *path = path_of(prefix, delimiter, f->name);
        const tb_value_t *v =
            tb_field_get(st, f, tb_schema_type(f->schema) != TB_TYPE_STRUCT);
        int rc = path == NULL ? -1 : 0;
        if (rc == 0 && tb_schema_type(f->schema) == TB_TYPE_STRUCT) {
            rc = v != NULL ? flatten_struct(v, path, delimiter, out) : 0;
        } else if (rc == 0) {
            tb_value_t *copy = tb_value_copy(v);
            rc = v != NULL && copy == NULL ? -1 : tb_value_struct_set(out, path, copy);
        }
        free(path);
        if (rc != 0) {
            return -1;
        }
    }
    return 0;
}

/* The flattened schema of struct schema s; NULL with errstr. */
static tb_schema_t *flattened_schema(const tb_schema_t *s, const char *delimiter,
                                     char *errstr, size_t errstr_size)
{
    tb_schema_t *schema = tb_field_struct_like(s);
    if (schema == NULL) {
        tb_field_oom(errstr, errstr_size);
        return NULL;
    }
    if (flatten_schema(s, "", delimiter, tb_schema_optional(s), tb_schema_default(s),
                       schema, errstr, errstr_size) != 0) {
        tb_schema_decref(schema);
        return NULL;
    }
    return schema;
}

static int flatten_apply(void *state, tb_record_t *record, char *errstr,
                         size_t errstr_size)
{
    tb_flatten_t *f = state;
    const char *delimiter = f->delimiter;
    tb_record_side_t *s = tb_record_typed(record, f->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->value == NULL) {
        return 0;
    }
    if ((s = tb_field_structured(record, f->side, PURPOSE, errstr, errstr_size)) ==
        NULL) {
        return -1;
    }
    if (s->schema == NULL) {
        tb_value_t *out = tb_value_map();
        if (out == NULL) {
            return tb_field_oom(errstr, errstr_size);
        }
        if (flatten_map(s->value, "", delimiter, out, errstr, errstr_size) != 0) {
            tb_value_free(out);
            return -1;
        }
        tb_record_set(record, f->side, NULL, out);
        return 0;
    }
    tb_schema_t *schema = tb_schema_cache_get(&f->cache, s->schema);
    if (schema == NULL &&
        (schema = flattened_schema(s->schema, delimiter, errstr, errstr_size)) == NULL) {
        return -1;
    }
    tb_schema_cache_put(&f->cache, s->schema, schema);
    tb_value_t *out = tb_value_struct(schema);
    if (out == NULL) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    if (flatten_struct(s->value, "", delimiter, out) != 0) {
        tb_value_free(out);
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    return tb_field_set_checked(record, f->side, schema, out, errstr, errstr_size);
}

static const tb_config_def_t flatten_keys[] = {
    {.name = "delimiter",
     .type = TB_CONFIG_STRING,
     .default_value = ".",
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "What joins the names on the path to a nested field into the name of "
         "its flattened field.",
     .field = TB_CONFIG_AT(tb_flatten_keys_t, delimiter)},
};

static const tb_config_table_t flatten_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "Flatten", flatten_keys);

TB_SIDED_CLASSES(tb_flatten, "Flatten", flatten_table, tb_flatten_keys_t, NULL,
                 flatten_create, flatten_destroy, flatten_apply, NULL);
