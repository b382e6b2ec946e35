/*
 * Connect schemas (tb_data.h): reference counted, built by their creator,
 * read only once shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_data.h"

struct tb_schema {
    int refcount;
    tb_type_t type;
    bool optional;
    bool has_version;
    int version;
    char *name;
    char *doc;
    json_t *parameters; /* object of strings, or NULL */
    tb_value_t *default_value;
    tb_field_t *fields; /* STRUCT */
    size_t field_count;
    tb_schema_t *items;      /* ARRAY items; MAP values */
    tb_schema_t *key_schema; /* MAP */
};

static const char *const type_names[] = {
    "INT8",    "INT16",  "INT32", "INT64", "FLOAT32", "FLOAT64",
    "BOOLEAN", "STRING", "BYTES", "ARRAY", "MAP",     "STRUCT",
};

const char *tb_type_name(tb_type_t type)
{
    return type_names[type];
}

bool tb_type_is_primitive(tb_type_t type)
{
    return type < TB_TYPE_ARRAY;
}

tb_schema_t *tb_schema_new(tb_type_t type)
{
    tb_schema_t *s = calloc(1, sizeof(*s));
    if (s != NULL) {
        s->refcount = 1;
        s->type = type;
    }
    return s;
}

tb_schema_t *tb_schema_array(tb_schema_t *items)
{
    tb_schema_t *s = items != NULL ? tb_schema_new(TB_TYPE_ARRAY) : NULL;
    if (s == NULL) {
        tb_schema_decref(items);
        return NULL;
    }
    s->items = items;
    return s;
}

tb_schema_t *tb_schema_map(tb_schema_t *keys, tb_schema_t *values)
{
    tb_schema_t *s = keys != NULL && values != NULL ? tb_schema_new(TB_TYPE_MAP) : NULL;
    if (s == NULL) {
        tb_schema_decref(keys);
        tb_schema_decref(values);
        return NULL;
    }
    s->key_schema = keys;
    s->items = values;
    return s;
}

static tb_schema_t *logical(tb_type_t type, const char *name)
{
    tb_schema_t *s = tb_schema_new(type);
    if (s != NULL) {
        tb_schema_set_version(s, true, 1);
        if (tb_schema_set_name(s, name) != 0) {
            tb_schema_decref(s);
            return NULL;
        }
    }
    return s;
}

tb_schema_t *tb_schema_decimal(int scale)
{
    char text[16];
    tb_schema_t *s = logical(TB_TYPE_BYTES, TB_LOGICAL_DECIMAL);
    snprintf(text, sizeof(text), "%d", scale);
    if (s != NULL && tb_schema_set_parameter(s, TB_DECIMAL_SCALE, text) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

tb_schema_t *tb_schema_date(void)
{
    return logical(TB_TYPE_INT32, TB_LOGICAL_DATE);
}

tb_schema_t *tb_schema_time(void)
{
    return logical(TB_TYPE_INT32, TB_LOGICAL_TIME);
}

tb_schema_t *tb_schema_timestamp(void)
{
    return logical(TB_TYPE_INT64, TB_LOGICAL_TIMESTAMP);
}

tb_schema_t *tb_schema_incref(tb_schema_t *s)
{
    if (s != NULL) {
        s->refcount++;
    }
    return s;
}

void tb_schema_decref(tb_schema_t *s)
{
    if (s == NULL || --s->refcount > 0) {
        return;
    }
    for (size_t i = 0; i < s->field_count; i++) {
        free((char *)s->fields[i].name);
        tb_schema_decref(s->fields[i].schema);
    }
    free(s->fields);
    tb_schema_decref(s->items);
    tb_schema_decref(s->key_schema);
    tb_value_free(s->default_value);
    json_decref(s->parameters);
    free(s->name);
    free(s->doc);
    free(s);
}

tb_schema_t *tb_schema_copy(const tb_schema_t *s)
{
    tb_schema_t *copy = tb_schema_new(s->type);
    if (copy == NULL) {
        return NULL;
    }
    copy->optional = s->optional;
    copy->has_version = s->has_version;
    copy->version = s->version;
    copy->items = tb_schema_incref(s->items);
    copy->key_schema = tb_schema_incref(s->key_schema);
    if (tb_schema_set_name(copy, s->name) != 0 || tb_schema_set_doc(copy, s->doc) != 0 ||
        (s->parameters != NULL &&
         (copy->parameters = json_deep_copy(s->parameters)) == NULL) ||
        (s->default_value != NULL &&
         (copy->default_value = tb_value_copy(s->default_value)) == NULL)) {
        goto fail;
    }
    for (size_t i = 0; i < s->field_count; i++) {
        if (tb_schema_add_field(copy, s->fields[i].name,
                                tb_schema_incref(s->fields[i].schema)) != 0) {
            goto fail;
        }
    }
    return copy;

fail:
    tb_schema_decref(copy);
    return NULL;
}

static bool same_string(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

bool tb_schema_equal(const tb_schema_t *a, const tb_schema_t *b)
{
    if (a == b) {
        return true;
    }
    if (a == NULL || b == NULL || a->type != b->type || a->optional != b->optional ||
        a->has_version != b->has_version ||
        (a->has_version && a->version != b->version) || !same_string(a->name, b->name) ||
        !same_string(a->doc, b->doc) ||
        !(a->parameters == b->parameters || json_equal(a->parameters, b->parameters)) ||
        !tb_value_equal(a->default_value, b->default_value) ||
        a->field_count != b->field_count || !tb_schema_equal(a->items, b->items) ||
        !tb_schema_equal(a->key_schema, b->key_schema)) {
        return false;
    }
    for (size_t i = 0; i < a->field_count; i++) {
        if (strcmp(a->fields[i].name, b->fields[i].name) != 0 ||
            !tb_schema_equal(a->fields[i].schema, b->fields[i].schema)) {
            return false;
        }
    }
    return true;
}

void tb_schema_set_optional(tb_schema_t *s, bool optional)
{
    s->optional = optional;
}

/* Replaces *slot by a copy of text (NULL clears). */
static int set_text(char **slot, const char *text)
{
    char *copy = text != NULL ? strdup(text) : NULL;
    if (text != NULL && copy == NULL) {
        return -1;
    }
    free(*slot);
    *slot = copy;
    return 0;
}

int tb_schema_set_name(tb_schema_t *s, const char *name)
{
    return set_text(&s->name, name);
}

void tb_schema_set_version(tb_schema_t *s, bool has_version, int version)
{
    s->has_version = has_version;
    s->version = has_version ? version : 0;
}

int tb_schema_set_doc(tb_schema_t *s, const char *doc)
{
    return set_text(&s->doc, doc);
}

int tb_schema_set_parameter(tb_schema_t *s, const char *key, const char *value)
{
    if (s->parameters == NULL && (s->parameters = json_object()) == NULL) {
        return -1;
    }
    return json_object_set_new(s->parameters, key, json_string(value));
}

void tb_schema_set_default(tb_schema_t *s, tb_value_t *value)
{
    tb_value_free(s->default_value);
    s->default_value = value;
}

int tb_schema_add_field(tb_schema_t *s, const char *name, tb_schema_t *schema)
{
    tb_field_t *grown = NULL;
    char *copy = NULL;
    if (schema == NULL || tb_schema_field(s, name) != NULL ||
        (copy = strdup(name)) == NULL ||
        (grown = realloc(s->fields, (s->field_count + 1) * sizeof(*grown))) == NULL) {
        free(copy);
        tb_schema_decref(schema);
        return -1;
    }
    s->fields = grown;
    s->fields[s->field_count] =
        (tb_field_t){.name = copy, .index = s->field_count, .schema = schema};
    s->field_count++;
    return 0;
}

tb_type_t tb_schema_type(const tb_schema_t *s)
{
    return s->type;
}

bool tb_schema_optional(const tb_schema_t *s)
{
    return s->optional;
}

const char *tb_schema_name(const tb_schema_t *s)
{
    return s->name;
}

bool tb_schema_has_version(const tb_schema_t *s)
{
    return s->has_version;
}

int tb_schema_version(const tb_schema_t *s)
{
    return s->version;
}

const char *tb_schema_doc(const tb_schema_t *s)
{
    return s->doc;
}

const json_t *tb_schema_parameters(const tb_schema_t *s)
{
    return s->parameters;
}

const char *tb_schema_parameter(const tb_schema_t *s, const char *key)
{
    return json_string_value(json_object_get(s->parameters, key));
}

const tb_value_t *tb_schema_default(const tb_schema_t *s)
{
    return s->default_value;
}

size_t tb_schema_field_count(const tb_schema_t *s)
{
    return s->field_count;
}

const tb_field_t *tb_schema_field_at(const tb_schema_t *s, size_t index)
{
    return index < s->field_count ? &s->fields[index] : NULL;
}

const tb_field_t *tb_schema_field(const tb_schema_t *s, const char *name)
{
    for (size_t i = 0; i < s->field_count; i++) {
        if (strcmp(s->fields[i].name, name) == 0) {
            return &s->fields[i];
        }
    }
    return NULL;
}

tb_schema_t *tb_schema_items(const tb_schema_t *s)
{
    return s->type == TB_TYPE_ARRAY ? s->items : NULL;
}

tb_schema_t *tb_schema_key_schema(const tb_schema_t *s)
{
    return s->key_schema;
}

tb_schema_t *tb_schema_value_schema(const tb_schema_t *s)
{
    return s->type == TB_TYPE_MAP ? s->items : NULL;
}

bool tb_schema_is_logical(const tb_schema_t *s, const char *logical_name)
{
    return s != NULL && s->name != NULL && strcmp(s->name, logical_name) == 0;
}

void tb_schema_error_in_field(char *errstr, size_t errstr_size, const char *field)
{
    char inner[512];
    bool nested = strncmp(errstr, "field ", 6) == 0;
    snprintf(inner, sizeof(inner), "%s", nested ? errstr + 6 : errstr);
    snprintf(errstr, errstr_size, "field %s%s%s", field, nested ? "." : ": ", inner);
}

bool tb_schema_contains_logical(const tb_schema_t *s, const char *logical_name)
{
    if (s == NULL || tb_schema_is_logical(s, logical_name)) {
        return s != NULL;
    }
    for (size_t i = 0; i < tb_schema_field_count(s); i++) {
        if (tb_schema_contains_logical(tb_schema_field_at(s, i)->schema, logical_name)) {
            return true;
        }
    }
    switch (tb_schema_type(s)) {
    case TB_TYPE_ARRAY:
        return tb_schema_contains_logical(tb_schema_items(s), logical_name);
    case TB_TYPE_MAP:
        return tb_schema_contains_logical(tb_schema_key_schema(s), logical_name) ||
               tb_schema_contains_logical(tb_schema_value_schema(s), logical_name);
    default:
        return false;
    }
}
