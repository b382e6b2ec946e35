/*
 * What the field transformations share (tb_field_util.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_field_util.h"

static bool is_type(const tb_value_t *v, tb_type_t type)
{
    return v != NULL && tb_value_type(v) == type;
}

void *tb_field_use_create(const void *config, tb_side_t side, char *errstr,
                          size_t errstr_size)
{
    tb_field_use_t *use = malloc(sizeof(*use));
    if (use == NULL) {
        tb_field_oom(errstr, errstr_size);
        return NULL;
    }
    use->side = side;
    use->config = config;
    return use;
}

void tb_field_use_destroy(void *state)
{
    free(state);
}

tb_record_side_t *tb_field_structured(tb_record_t *record, tb_side_t side,
                                      const char *purpose, char *errstr,
                                      size_t errstr_size)
{
    tb_record_side_t *s = tb_record_typed(record, side, errstr, errstr_size);
    if (s == NULL) {
        return NULL;
    }
    if (s->schema == NULL && is_type(s->value, TB_TYPE_MAP)) {
        return s;
    }
    if (s->schema != NULL && tb_schema_type(s->schema) == TB_TYPE_STRUCT &&
        is_type(s->value, TB_TYPE_STRUCT)) {
        return s;
    }
    if (s->schema == NULL) {
        snprintf(errstr, errstr_size,
                 "Only Map objects supported in absence of schema for [%s], found: %s",
                 purpose, tb_value_class_name(s->value));
    } else {
        snprintf(errstr, errstr_size, "Only Struct objects supported for [%s], found: %s",
                 purpose, tb_value_class_name(s->value));
    }
    return NULL;
}

const tb_value_t *tb_field_get(const tb_value_t *st, const tb_field_t *f,
                               bool replace_null)
{
    const tb_value_t *v = tb_value_struct_get_at(st, f->index);
    return v == NULL && replace_null ? tb_schema_default(f->schema) : v;
}

tb_value_t *tb_field_take(tb_value_t *st, const tb_field_t *f, bool replace_null)
{
    tb_value_t *v = tb_value_struct_take_at(st, f->index);
    return v == NULL && replace_null ? tb_value_copy(tb_schema_default(f->schema)) : v;
}

int tb_field_copy_basics(const tb_schema_t *from, tb_schema_t *to)
{
    const char *key;
    json_t *value;
    if (tb_schema_set_name(to, tb_schema_name(from)) != 0 ||
        tb_schema_set_doc(to, tb_schema_doc(from)) != 0) {
        return -1;
    }
    tb_schema_set_version(to, tb_schema_has_version(from), tb_schema_version(from));
    json_object_foreach ((json_t *)tb_schema_parameters(from), key, value) {
        if (tb_schema_set_parameter(to, key, json_string_value(value)) != 0) {
            return -1;
        }
    }
    return 0;
}

tb_schema_t *tb_field_struct_like(const tb_schema_t *from)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    if (s != NULL && tb_field_copy_basics(from, s) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

int tb_field_set_checked(tb_record_t *record, tb_side_t side, tb_schema_t *schema,
                         tb_value_t *value, char *errstr, size_t errstr_size)
{
    if (schema != NULL && tb_value_validate(schema, value, errstr, errstr_size) != 0) {
        tb_schema_decref(schema);
        tb_value_free(value);
        return -1;
    }
    tb_record_set(record, side, schema, value);
    return 0;
}

tb_value_t *tb_field_string(const char *s)
{
    return tb_value_string(s, strlen(s));
}

int tb_field_oom(char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size, "out of memory");
    return -1;
}

int tb_field_non_empty_list(const json_t *value, char *reason, size_t reason_size)
{
    if (json_array_size(value) == 0) {
        snprintf(reason, reason_size, "Empty list");
        return -1;
    }
    return 0;
}

int tb_field_non_empty_string(const json_t *value, char *reason, size_t reason_size)
{
    if (json_string_length(value) == 0) {
        snprintf(reason, reason_size, "String must be non-empty");
        return -1;
    }
    return 0;
}

bool tb_field_is_date(const tb_schema_t *s)
{
    return tb_schema_is_logical(s, TB_LOGICAL_DATE) ||
           tb_schema_is_logical(s, TB_LOGICAL_TIME) ||
           tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP);
}

tb_schema_t *tb_schema_cache_get(tb_schema_cache_t *c, const tb_schema_t *in)
{
    return c->in != NULL && tb_schema_equal(c->in, in) ? tb_schema_incref(c->out) : NULL;
}

void tb_schema_cache_put(tb_schema_cache_t *c, tb_schema_t *in, tb_schema_t *out)
{
    tb_schema_cache_clear(c);
    c->in = tb_schema_incref(in);
    c->out = tb_schema_incref(out);
}

void tb_schema_cache_clear(tb_schema_cache_t *c)
{
    tb_schema_decref(c->in);
    tb_schema_decref(c->out);
    c->in = NULL;
    c->out = NULL;
}
