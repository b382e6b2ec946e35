/*
 * ReplaceField: keeps the fields of a struct (or map) that exclude does not
 * name and, when include names any, that it names; renames them by
 * renames ("old:new" pairs). A null passes unchanged. blacklist and
 * whitelist, which Connect 4.0 removed (KAFKA-17530), are refused naming
 * exclude and include, where 4.0 would ignore them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_field_util.h"

/* A config's list of names: the names borrowed from it, searched in turn
 * (a list is short, and comparing a few names costs less than hashing
 * one); the array is the list's own. */
typedef struct {
    struct {
        const char *s;
        size_t n;
    } * names;
    size_t count;
} tb_name_list_t;

typedef struct {
    tb_side_t side;
    tb_name_list_t exclude;
    tb_name_list_t include; /* empty: every field */
    json_t *renames;        /* old name -> new name */
    json_t *reverse;        /* new name -> old name */
    bool replace_null;
    tb_schema_cache_t cache;
} tb_replace_field_t;

/* The two names of a rename mapping, as Java's split(":") reads it (trailing
 * empty parts dropped): false unless there are exactly two. */
static bool rename_parts(const char *mapping, char *from, char *to, size_t size)
{
    const char *colon = strchr(mapping, ':');
    if (colon == NULL || strchr(colon + 1, ':') != NULL || colon[1] == '\0') {
        return false;
    }
    snprintf(from, size, "%.*s", (int)(colon - mapping), mapping);
    snprintf(to, size, "%s", colon + 1);
    return true;
}

static int renames_check(const json_t *value, char *reason, size_t reason_size)
{
    size_t i;
    json_t *item;
    char from[256], to[256];
    json_array_foreach (value, i, item) {
        if (!rename_parts(json_string_value(item), from, to, sizeof(from))) {
            snprintf(reason, reason_size, "Invalid rename mapping: %s",
                     json_string_value(item));
            return -1;
        }
    }
    return 0;
}

/* A key Connect 4.0 removed, named with its replacement. */
static int removed(const char *key, const char *replacement, char *reason,
                   size_t reason_size)
{
    snprintf(reason, reason_size, "%s was removed in Kafka Connect 4.0: use %s", key,
             replacement);
    return -1;
}

static int blacklist_check(const json_t *value, char *reason, size_t reason_size)
{
    (void)value;
    return removed("blacklist", "exclude", reason, reason_size);
}

static int whitelist_check(const json_t *value, char *reason, size_t reason_size)
{
    (void)value;
    return removed("whitelist", "include", reason, reason_size);
}

/* ReplaceField's keys, filled from replace_keys. */
typedef struct {
    const json_t *exclude;
    const json_t *include;
    const json_t *renames;
    bool replace_null;
} tb_replace_keys_t;

static void replace_destroy(void *state)
{
    tb_replace_field_t *r = state;
    if (r != NULL) {
        json_decref(r->renames);
        json_decref(r->reverse);
        free(r->exclude.names);
        free(r->include.names);
        tb_schema_cache_clear(&r->cache);
        free(r);
    }
}

/* Fills l with list's names; -1 out of memory. */
static int name_list_init(tb_name_list_t *l, const json_t *list)
{
    size_t i;
    json_t *item;
    l->count = json_array_size(list);
    l->names = l->count > 0 ? calloc(l->count, sizeof(*l->names)) : NULL;
    if (l->count > 0 && l->names == NULL) {
        return -1;
    }
    json_array_foreach (list, i, item) {
        l->names[i].s = json_string_value(item);
        l->names[i].n = json_string_length(item);
    }
    return 0;
}

static void *replace_create(const void *config, tb_side_t side, char *errstr,
                            size_t errstr_size)
{
    const tb_replace_keys_t *keys = config;
    tb_replace_field_t *r = calloc(1, sizeof(*r));
    size_t i;
    json_t *item;
    char from[256], to[256];
    if (r == NULL || (r->renames = json_object()) == NULL ||
        (r->reverse = json_object()) == NULL) {
        goto fail;
    }
    if (name_list_init(&r->exclude, keys->exclude) != 0 ||
        name_list_init(&r->include, keys->include) != 0) {
        goto fail;
    }
    r->side = side;
    r->replace_null = keys->replace_null;
    json_array_foreach (keys->renames, i, item) {
        rename_parts(json_string_value(item), from, to, sizeof(from));
        if (json_object_set_new(r->renames, from, json_string(to)) != 0 ||
            json_object_set_new(r->reverse, to, json_string(from)) != 0) {
            goto fail;
        }
    }
    return r;

fail:
    replace_destroy(r);
    tb_field_oom(errstr, errstr_size);
    return NULL;
}

/* Whether list names name[0..len). */
static bool listed(const tb_name_list_t *list, const char *name, size_t len)
{
    for (size_t i = 0; i < list->count; i++) {
        if (list->names[i].n == len && memcmp(list->names[i].s, name, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether the field called name[0..len) stays. */
static bool kept_n(const tb_replace_field_t *r, const char *name, size_t len)
{
    return !listed(&r->exclude, name, len) &&
           (r->include.count == 0 || listed(&r->include, name, len));
}

static bool kept(const tb_replace_field_t *r, const char *name)
{
    return kept_n(r, name, strlen(name));
}

static const char *renamed(const json_t *map, const char *name)
{
    const char *to = json_string_value(json_object_get(map, name));
    return to != NULL ? to : name;
}

/* The text of a map's STRING key, NULL for any other key. */
static const char *key_name(const tb_value_t *key)
{
    return key != NULL && tb_value_type(key) == TB_TYPE_STRING ? tb_value_text(key, NULL)
                                                               : NULL;
}

/* Without renames the record's own map loses the dropped entries in place;
 * with them a new map gets the kept values, renamed (a rename onto a kept
 * name replaces its value, as a HashMap put does). */
static int replace_schemaless(tb_replace_field_t *r, tb_record_t *record, tb_value_t *map,
                              char *errstr, size_t errstr_size)
{
    if (json_object_size(r->renames) == 0) {
        for (size_t i = 0; i < tb_value_size(map);) {
            const char *name = key_name(tb_value_map_key(map, i));
            if (name != NULL && !kept(r, name)) {
                tb_value_map_remove_at(map, i);
            } else {
                i++;
            }
        }
        return 0;
    }
    tb_value_t *out = tb_value_map();
    for (size_t i = 0; out != NULL && i < tb_value_size(map); i++) {
        const char *name = key_name(tb_value_map_key(map, i));
        if (name != NULL && !kept(r, name)) {
            continue;
        }
        tb_value_t *key = name != NULL ? tb_field_string(renamed(r->renames, name))
                                       : tb_value_copy(tb_value_map_key(map, i));
        if (tb_value_map_put(out, key, tb_value_map_take_value(map, i)) != 0) {
            tb_value_free(out);
            out = NULL;
        }
    }
    if (out == NULL) {
        return tb_field_oom(errstr, errstr_size);
    }
    tb_record_set(record, r->side, NULL, out);
    return 0;
}

/* replace_schemaless() on a JSON object held as text: the kept members
 * move up in place, renamed, a rename onto a name already kept replacing
 * that member's value. */
static int replace_edit(void *state, tb_record_t *record, tb_json_object_t *object,
                        char *errstr, size_t errstr_size)
{
    tb_replace_field_t *r = state;
    size_t count = object->count;
    (void)record;
    (void)errstr;
    (void)errstr_size;
    bool renames = json_object_size(r->renames) > 0;
    object->count = 0;
    for (size_t i = 0; i < count; i++) {
        tb_json_member_t m = object->members[i];
        if (!kept_n(r, m.name, m.name_len)) {
            continue;
        }
        const char *to =
            renames ? json_string_value(json_object_getn(r->renames, m.name, m.name_len))
                    : NULL;
        if (to != NULL) {
            m.name = to;
            m.name_len = strlen(to);
            m.name_plain = false;
        }
        /* the object's names are distinct (tb_json_object_read): only a
         * rename can meet a name already kept */
        long at = renames ? tb_json_object_find(object, m.name, m.name_len) : -1;
        object->members[at >= 0 ? (size_t)at : object->count++] = m;
    }
    return 0;
}

/* The schema ReplaceField makes of struct schema s; NULL with errstr. */
static tb_schema_t *replaced_schema(const tb_replace_field_t *r, const tb_schema_t *s,
                                    char *errstr, size_t errstr_size)
{
    tb_schema_t *schema = tb_field_struct_like(s);
    if (schema == NULL) {
        tb_field_oom(errstr, errstr_size);
    }
    for (size_t i = 0; schema != NULL && i < tb_schema_field_count(s); i++) {
        const tb_field_t *f = tb_schema_field_at(s, i);
        if (kept(r, f->name) && tb_schema_add_field(schema, renamed(r->renames, f->name),
                                                    tb_schema_incref(f->schema)) != 0) {
            tb_schema_decref(schema);
            snprintf(errstr, errstr_size,
                     "Cannot create field because of field name duplication %s",
                     renamed(r->renames, f->name));
            return NULL;
        }
    }
    return schema;
}

static int replace_apply(void *state, tb_record_t *record, char *errstr,
                         size_t errstr_size)
{
    tb_replace_field_t *r = state;
    tb_record_side_t *s = tb_record_typed(record, r->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->value == NULL) {
        return 0;
    }
    if ((s = tb_field_structured(record, r->side, "field replacement", errstr,
                                 errstr_size)) == NULL) {
        return -1;
    }
    if (s->schema == NULL) {
        return replace_schemaless(r, record, s->value, errstr, errstr_size);
    }
    tb_schema_t *schema = tb_schema_cache_get(&r->cache, s->schema);
    if (schema == NULL &&
        (schema = replaced_schema(r, s->schema, errstr, errstr_size)) == NULL) {
        return -1;
    }
    tb_schema_cache_put(&r->cache, s->schema, schema);
    tb_value_t *st = tb_value_struct(schema);
    if (st == NULL) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    for (size_t i = 0; i < tb_schema_field_count(schema); i++) {
        const tb_field_t *f = tb_schema_field(
            s->schema, renamed(r->reverse, tb_schema_field_at(schema, i)->name));
        tb_value_struct_set_at(st, i, tb_field_take(s->value, f, r->replace_null));
    }
    return tb_field_set_checked(record, r->side, schema, st, errstr, errstr_size);
}

static const tb_config_def_t replace_keys[] = {
    {.name = "exclude",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation = "Fields dropped, whatever include says.",
     .field = TB_CONFIG_AT(tb_replace_keys_t, exclude)},
    {.name = "blacklist",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_LOW,
     .check = blacklist_check,
     .documentation = "Removed in Kafka Connect 4.0: refused, naming exclude."},
    {.name = "include",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation = "Fields kept (all when empty), unless exclude names them.",
     .field = TB_CONFIG_AT(tb_replace_keys_t, include)},
    {.name = "whitelist",
     .type = TB_CONFIG_LIST,
     .importance = TB_IMPORTANCE_LOW,
     .check = whitelist_check,
     .documentation = "Removed in Kafka Connect 4.0: refused, naming include."},
    {.name = "renames",
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .check = renames_check,
     .documentation = "Field rename mappings, as old:new pairs (foo:bar,abc:xyz).",
     .field = TB_CONFIG_AT(tb_replace_keys_t, renames)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_replace_keys_t),
};

static const tb_config_table_t replace_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "ReplaceField", replace_keys);

TB_SIDED_CLASSES(tb_replace_field, "ReplaceField", replace_table, tb_replace_keys_t, NULL,
                 replace_create, replace_destroy, replace_apply, replace_edit);
