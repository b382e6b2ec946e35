/*
 * Connect values (tb_data.h): one owner each; containers own their members.
 * A text's bytes and a struct's fields live in their value's allocation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_data.h"

struct tb_value {
    tb_type_t type;
    union {
        bool boolean;
        int64_t integer;
        double real;
        struct {
            char *data; /* NUL-terminated for STRING */
            size_t len;
        } text;
        struct {
            tb_value_t **items; /* ARRAY items; MAP keys then values, paired */
            tb_value_t **values;
            size_t count;
            size_t capacity;
        } list;
        struct {
            tb_schema_t *schema;
            tb_value_t **fields; /* one per schema field */
        } st;
    } u;
};

/* A value with room for extra bytes after it, in the same allocation (a
 * text's bytes, a struct's fields: one malloc per value). */
static tb_value_t *value_with_room(tb_type_t type, size_t extra)
{
    if (extra > SIZE_MAX - sizeof(tb_value_t)) {
        return NULL;
    }
    tb_value_t *v = calloc(1, sizeof(tb_value_t) + extra);
    if (v != NULL) {
        v->type = type;
    }
    return v;
}

static tb_value_t *value_new(tb_type_t type)
{
    return value_with_room(type, 0);
}

tb_value_t *tb_value_int(tb_type_t type, int64_t i)
{
    tb_value_t *v = value_new(type);
    if (v != NULL) {
        v->u.integer = i;
    }
    return v;
}

tb_value_t *tb_value_float(tb_type_t type, double f)
{
    tb_value_t *v = value_new(type);
    if (v != NULL) {
        v->u.real = type == TB_TYPE_FLOAT32 ? (double)(float)f : f;
    }
    return v;
}

tb_value_t *tb_value_bool(bool b)
{
    tb_value_t *v = value_new(TB_TYPE_BOOLEAN);
    if (v != NULL) {
        v->u.boolean = b;
    }
    return v;
}

static tb_value_t *text_new(tb_type_t type, const void *data, size_t len)
{
    tb_value_t *v = len < SIZE_MAX ? value_with_room(type, len + 1) : NULL;
    if (v == NULL) {
        return NULL;
    }
    v->u.text.data = (char *)(v + 1);
    if (len > 0) {
        memcpy(v->u.text.data, data, len);
    }
    v->u.text.data[len] = '\0';
    v->u.text.len = len;
    return v;
}

tb_value_t *tb_value_string(const char *s, size_t len)
{
    return text_new(TB_TYPE_STRING, s, len);
}

tb_value_t *tb_value_bytes(const void *data, size_t len)
{
    return text_new(TB_TYPE_BYTES, data, len);
}

tb_value_t *tb_value_array(void)
{
    return value_new(TB_TYPE_ARRAY);
}

tb_value_t *tb_value_map(void)
{
    return value_new(TB_TYPE_MAP);
}

tb_value_t *tb_value_struct(tb_schema_t *schema)
{
    size_t n = tb_schema_field_count(schema);
    tb_value_t *v = n <= SIZE_MAX / sizeof(tb_value_t *)
                        ? value_with_room(TB_TYPE_STRUCT, n * sizeof(tb_value_t *))
                        : NULL;
    if (v == NULL) {
        return NULL;
    }
    v->u.st.fields = (tb_value_t **)(v + 1);
    v->u.st.schema = tb_schema_incref(schema);
    return v;
}

/* Makes room for one more member of an ARRAY or MAP. */
static int grow(tb_value_t *v)
{
    if (v->u.list.count < v->u.list.capacity) {
        return 0;
    }
    size_t capacity = v->u.list.capacity ? 2 * v->u.list.capacity : 4;
    tb_value_t **items = realloc(v->u.list.items, capacity * sizeof(*items));
    if (items == NULL) {
        return -1;
    }
    v->u.list.items = items;
    if (v->type == TB_TYPE_MAP) {
        tb_value_t **values = realloc(v->u.list.values, capacity * sizeof(*values));
        if (values == NULL) {
            return -1;
        }
        v->u.list.values = values;
    }
    v->u.list.capacity = capacity;
    return 0;
}

int tb_value_array_append(tb_value_t *array, tb_value_t *item)
{
    if (grow(array) != 0) {
        tb_value_free(item);
        return -1;
    }
    array->u.list.items[array->u.list.count++] = item;
    return 0;
}

int tb_value_map_put(tb_value_t *map, tb_value_t *key, tb_value_t *value)
{
    for (size_t i = 0; i < map->u.list.count; i++) {
        if (tb_value_equal(map->u.list.items[i], key)) {
            tb_value_free(key);
            tb_value_free(map->u.list.values[i]);
            map->u.list.values[i] = value;
            return 0;
        }
    }
    if (grow(map) != 0) {
        tb_value_free(key);
        tb_value_free(value);
        return -1;
    }
    map->u.list.items[map->u.list.count] = key;
    map->u.list.values[map->u.list.count++] = value;
    return 0;
}

int tb_value_struct_set_at(tb_value_t *st, size_t index, tb_value_t *value)
{
    if (index >= tb_schema_field_count(st->u.st.schema)) {
        tb_value_free(value);
        return -1;
    }
    tb_value_free(st->u.st.fields[index]);
    st->u.st.fields[index] = value;
    return 0;
}

int tb_value_struct_set(tb_value_t *st, const char *field, tb_value_t *value)
{
    const tb_field_t *f = tb_schema_field(st->u.st.schema, field);
    if (f == NULL) {
        tb_value_free(value);
        return -1;
    }
    return tb_value_struct_set_at(st, f->index, value);
}

tb_type_t tb_value_type(const tb_value_t *v)
{
    return v->type;
}

int64_t tb_value_int64(const tb_value_t *v)
{
    return v->u.integer;
}

double tb_value_double(const tb_value_t *v)
{
    return v->u.real;
}

bool tb_value_boolean(const tb_value_t *v)
{
    return v->u.boolean;
}

const char *tb_value_text(const tb_value_t *v, size_t *len)
{
    if (len != NULL) {
        *len = v->u.text.len;
    }
    return v->u.text.data;
}

size_t tb_value_size(const tb_value_t *v)
{
    if (v->type == TB_TYPE_STRUCT) {
        return tb_schema_field_count(v->u.st.schema);
    }
    return v->u.list.count;
}

const tb_value_t *tb_value_array_get(const tb_value_t *v, size_t i)
{
    return i < v->u.list.count ? v->u.list.items[i] : NULL;
}

const tb_value_t *tb_value_map_key(const tb_value_t *v, size_t i)
{
    return i < v->u.list.count ? v->u.list.items[i] : NULL;
}

const tb_value_t *tb_value_map_value(const tb_value_t *v, size_t i)
{
    return i < v->u.list.count ? v->u.list.values[i] : NULL;
}

const tb_value_t *tb_value_map_get(const tb_value_t *v, const tb_value_t *key)
{
    for (size_t i = 0; i < v->u.list.count; i++) {
        if (tb_value_equal(v->u.list.items[i], key)) {
            return v->u.list.values[i];
        }
    }
    return NULL;
}

const tb_value_t *tb_value_map_get_string(const tb_value_t *v, const char *name)
{
    for (size_t i = 0; i < v->u.list.count; i++) {
        const tb_value_t *key = v->u.list.items[i];
        if (key != NULL && key->type == TB_TYPE_STRING &&
            strcmp(key->u.text.data, name) == 0) {
            return v->u.list.values[i];
        }
    }
    return NULL;
}

tb_schema_t *tb_value_struct_schema(const tb_value_t *v)
{
    return v->u.st.schema;
}

const tb_value_t *tb_value_struct_get(const tb_value_t *v, const char *field)
{
    const tb_field_t *f = tb_schema_field(v->u.st.schema, field);
    return f != NULL ? v->u.st.fields[f->index] : NULL;
}

const tb_value_t *tb_value_struct_get_at(const tb_value_t *v, size_t index)
{
    return index < tb_schema_field_count(v->u.st.schema) ? v->u.st.fields[index] : NULL;
}

tb_value_t *tb_value_map_take_value(tb_value_t *map, size_t i)
{
    tb_value_t *v = i < map->u.list.count ? map->u.list.values[i] : NULL;
    if (v != NULL) {
        map->u.list.values[i] = NULL;
    }
    return v;
}

void tb_value_map_remove_at(tb_value_t *map, size_t i)
{
    if (i >= map->u.list.count) {
        return;
    }
    tb_value_free(map->u.list.items[i]);
    tb_value_free(map->u.list.values[i]);
    size_t after = map->u.list.count - i - 1;
    memmove(map->u.list.items + i, map->u.list.items + i + 1,
            after * sizeof(tb_value_t *));
    memmove(map->u.list.values + i, map->u.list.values + i + 1,
            after * sizeof(tb_value_t *));
    map->u.list.count--;
}

tb_value_t *tb_value_struct_take_at(tb_value_t *st, size_t index)
{
    tb_value_t *v = NULL;
    if (index < tb_schema_field_count(st->u.st.schema)) {
        v = st->u.st.fields[index];
        st->u.st.fields[index] = NULL;
    }
    return v;
}

/* Appends a copy of member i of the ARRAY or MAP from to copy. */
static int copy_member(tb_value_t *copy, const tb_value_t *from, size_t i)
{
    const tb_value_t *item = from->u.list.items[i];
    tb_value_t *item_copy = tb_value_copy(item);
    if (item != NULL && item_copy == NULL) {
        return -1;
    }
    if (from->type == TB_TYPE_ARRAY) {
        return tb_value_array_append(copy, item_copy);
    }
    const tb_value_t *value = from->u.list.values[i];
    tb_value_t *value_copy = tb_value_copy(value);
    if (value != NULL && value_copy == NULL) {
        tb_value_free(item_copy);
        return -1;
    }
    return tb_value_map_put(copy, item_copy, value_copy);
}

tb_value_t *tb_value_copy(const tb_value_t *v)
{
    tb_value_t *copy = NULL;
    if (v == NULL) {
        return NULL;
    }
    switch (v->type) {
    case TB_TYPE_STRING:
    case TB_TYPE_BYTES:
        return text_new(v->type, v->u.text.data, v->u.text.len);
    case TB_TYPE_ARRAY:
    case TB_TYPE_MAP:
        if ((copy = value_new(v->type)) == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < v->u.list.count; i++) {
            if (copy_member(copy, v, i) != 0) {
                tb_value_free(copy);
                return NULL;
            }
        }
        return copy;
    case TB_TYPE_STRUCT:
        if ((copy = tb_value_struct(v->u.st.schema)) == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < tb_schema_field_count(v->u.st.schema); i++) {
            if (v->u.st.fields[i] != NULL &&
                (copy->u.st.fields[i] = tb_value_copy(v->u.st.fields[i])) == NULL) {
                tb_value_free(copy);
                return NULL;
            }
        }
        return copy;
    default:
        if ((copy = value_new(v->type)) != NULL) {
            copy->u = v->u;
        }
        return copy;
    }
}

bool tb_value_equal(const tb_value_t *a, const tb_value_t *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case TB_TYPE_BOOLEAN:
        return a->u.boolean == b->u.boolean;
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        return a->u.real == b->u.real;
    case TB_TYPE_STRING:
    case TB_TYPE_BYTES:
        return a->u.text.len == b->u.text.len &&
               memcmp(a->u.text.data, b->u.text.data, a->u.text.len) == 0;
    case TB_TYPE_ARRAY:
    case TB_TYPE_MAP:
        if (a->u.list.count != b->u.list.count) {
            return false;
        }
        for (size_t i = 0; i < a->u.list.count; i++) {
            if (a->type == TB_TYPE_ARRAY
                    ? !tb_value_equal(a->u.list.items[i], b->u.list.items[i])
                    : !tb_value_equal(a->u.list.values[i],
                                      tb_value_map_get(b, a->u.list.items[i]))) {
                return false;
            }
        }
        return true;
    case TB_TYPE_STRUCT:
        if (!tb_schema_equal(a->u.st.schema, b->u.st.schema)) {
            return false;
        }
        for (size_t i = 0; i < tb_schema_field_count(a->u.st.schema); i++) {
            if (!tb_value_equal(a->u.st.fields[i], b->u.st.fields[i])) {
                return false;
            }
        }
        return true;
    default:
        return a->u.integer == b->u.integer;
    }
}

void tb_value_free(tb_value_t *v)
{
    if (v == NULL) {
        return;
    }
    switch (v->type) {
    case TB_TYPE_ARRAY:
    case TB_TYPE_MAP:
        for (size_t i = 0; i < v->u.list.count; i++) {
            tb_value_free(v->u.list.items[i]);
            if (v->type == TB_TYPE_MAP) {
                tb_value_free(v->u.list.values[i]);
            }
        }
        free(v->u.list.items);
        free(v->u.list.values);
        break;
    case TB_TYPE_STRUCT:
        for (size_t i = 0; i < tb_schema_field_count(v->u.st.schema); i++) {
            tb_value_free(v->u.st.fields[i]);
        }
        tb_schema_decref(v->u.st.schema);
        break;
    default:
        break;
    }
    free(v);
}

static const char *java_class(tb_type_t type);

const char *tb_value_class_name(const tb_value_t *v)
{
    return v != NULL ? java_class(v->type) : "null";
}

/* The Java class Connect would name for a value of this type. */
static const char *java_class(tb_type_t type)
{
    static const char *const classes[] = {
        "java.lang.Byte",
        "java.lang.Short",
        "java.lang.Integer",
        "java.lang.Long",
        "java.lang.Float",
        "java.lang.Double",
        "java.lang.Boolean",
        "java.lang.String",
        "[B",
        "java.util.ArrayList",
        "java.util.HashMap",
        "org.apache.kafka.connect.data.Struct",
    };
    return classes[type];
}

static int validate_at(const tb_schema_t *schema, const tb_value_t *value,
                       const char *location, char *errstr, size_t errstr_size)
{
    char inner[300];
    if (value == NULL) {
        if (tb_schema_optional(schema)) {
            return 0;
        }
        snprintf(errstr, errstr_size,
                 "Invalid value: null used for required %s, schema type: %s", location,
                 tb_type_name(tb_schema_type(schema)));
        return -1;
    }
    if (value->type != tb_schema_type(schema)) {
        snprintf(errstr, errstr_size,
                 "Invalid Java object for schema with type %s: class %s for %s",
                 tb_type_name(tb_schema_type(schema)), java_class(value->type), location);
        return -1;
    }
    switch (value->type) {
    case TB_TYPE_STRUCT:
        if (!tb_schema_equal(value->u.st.schema, schema)) {
            snprintf(errstr, errstr_size, "Struct schemas do not match.");
            return -1;
        }
        for (size_t i = 0; i < tb_schema_field_count(schema); i++) {
            const tb_field_t *f = tb_schema_field_at(schema, i);
            snprintf(inner, sizeof(inner), "field: \"%s\"", f->name);
            if (validate_at(f->schema, value->u.st.fields[i], inner, errstr,
                            errstr_size) != 0) {
                return -1;
            }
        }
        return 0;
    case TB_TYPE_ARRAY:
        for (size_t i = 0; i < value->u.list.count; i++) {
            if (validate_at(tb_schema_items(schema), value->u.list.items[i],
                            "element of array", errstr, errstr_size) != 0) {
                return -1;
            }
        }
        return 0;
    case TB_TYPE_MAP:
        for (size_t i = 0; i < value->u.list.count; i++) {
            if (validate_at(tb_schema_key_schema(schema), value->u.list.items[i],
                            "key of map", errstr, errstr_size) != 0 ||
                validate_at(tb_schema_value_schema(schema), value->u.list.values[i],
                            "value of map", errstr, errstr_size) != 0) {
                return -1;
            }
        }
        return 0;
    default:
        return 0;
    }
}

int tb_value_validate(const tb_schema_t *schema, const tb_value_t *value, char *errstr,
                      size_t errstr_size)
{
    return validate_at(schema, value, "value", errstr, errstr_size);
}
