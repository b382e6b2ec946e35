/*
 * MaskField: replaces the fields it names by a value of the same type
 * that says nothing: false, 0, "", the epoch, an empty array or map; or,
 * with replacement, by that text read as the field's type (numbers and
 * strings only). A null field stays null; a struct or bytes field cannot
 * be masked, as in Connect.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_java_number.h"

/* MaskField's keys, filled from mask_keys. */
typedef struct {
    const json_t *fields;
    const char *replacement;
    bool replace_null;
} tb_mask_keys_t;

typedef struct {
    tb_side_t side;
    json_t *fields;          /* name -> true */
    const char *replacement; /* the config's; NULL: type's empty value */
    bool replace_null;
} tb_mask_field_t;

static void mask_destroy(void *state)
{
    tb_mask_field_t *m = state;
    if (m != NULL) {
        json_decref(m->fields);
        free(m);
    }
}

static void *mask_create(const void *config, tb_side_t side, char *errstr,
                         size_t errstr_size)
{
    const tb_mask_keys_t *keys = config;
    tb_mask_field_t *m = calloc(1, sizeof(*m));
    size_t i;
    json_t *item;
    if (m == NULL || (m->fields = json_object()) == NULL) {
        goto fail;
    }
    json_array_foreach (keys->fields, i, item) {
        if (json_object_set(m->fields, json_string_value(item), json_true()) != 0) {
            goto fail;
        }
    }
    m->side = side;
    m->replacement = keys->replacement;
    m->replace_null = keys->replace_null;
    return m;

fail:
    mask_destroy(m);
    tb_field_oom(errstr, errstr_size);
    return NULL;
}

/* Connect's masked value of v (not null): *out, or -1 with errstr. is_date
 * and is_decimal say whether v is a java.util.Date or a BigDecimal under
 * its schema. */
static int masked(const tb_mask_field_t *m, const tb_value_t *v, bool is_date,
                  bool is_decimal, tb_value_t **out, char *errstr, size_t errstr_size)
{
    tb_type_t type = tb_value_type(v);
    const char *cls = is_date      ? "java.util.Date"
                      : is_decimal ? "java.math.BigDecimal"
                                   : tb_value_class_name(v);
    if (m->replacement == NULL) {
        switch (type) {
        case TB_TYPE_INT8:
        case TB_TYPE_INT16:
        case TB_TYPE_INT32:
        case TB_TYPE_INT64:
            *out = tb_value_int(type, 0);
            break;
        case TB_TYPE_FLOAT32:
        case TB_TYPE_FLOAT64:
            *out = tb_value_float(type, 0);
            break;
        case TB_TYPE_BOOLEAN:
            *out = tb_value_bool(false);
            break;
        case TB_TYPE_STRING:
            *out = tb_field_string("");
            break;
        case TB_TYPE_ARRAY:
            *out = tb_value_array();
            break;
        case TB_TYPE_MAP:
            *out = tb_value_map();
            break;
        case TB_TYPE_BYTES:
            if (is_decimal) {
                *out = tb_value_bytes("", 1); /* unscaled 0 */
                break;
            }
            /* fall through */
        default:
            snprintf(errstr, errstr_size, "Cannot mask value of type: class %s", cls);
            return -1;
        }
        return *out != NULL ? 0 : tb_field_oom(errstr, errstr_size);
    }
    bool number = type <= TB_TYPE_FLOAT64 && !is_date;
    if (!number && type != TB_TYPE_STRING) {
        snprintf(errstr, errstr_size,
                 "Cannot mask value of type class %s with custom replacement.", cls);
        return -1;
    }
    if (type == TB_TYPE_STRING) {
        *out = tb_field_string(m->replacement);
        return *out != NULL ? 0 : tb_field_oom(errstr, errstr_size);
    }
    long double parsed =
        tb_java_number_text(m->replacement) ? strtold(m->replacement, NULL) : NAN;
    if (isnan(parsed)) {
        snprintf(errstr, errstr_size,
                 "Unable to convert %s (class java.lang.String) to number",
                 m->replacement);
        return -1;
    }
    *out = type >= TB_TYPE_FLOAT32
               ? tb_value_float(type, (double)parsed)
               : tb_value_int(type, tb_java_narrow(type, (int64_t)parsed));
    return *out != NULL ? 0 : tb_field_oom(errstr, errstr_size);
}

static int mask_schemaless(tb_mask_field_t *m, tb_record_t *record, const tb_value_t *map,
                           char *errstr, size_t errstr_size)
{
    tb_value_t *out = tb_value_copy(map);
    const char *name;
    json_t *ignored;
    json_object_foreach (m->fields, name, ignored) {
        const tb_value_t *v = tb_value_map_get_string(map, name);
        tb_value_t *mask = NULL;
        if (out == NULL ||
            (v != NULL && masked(m, v, false, false, &mask, errstr, errstr_size) != 0)) {
            tb_value_free(out);
            return out == NULL ? tb_field_oom(errstr, errstr_size) : -1;
        }
        /* a masked field is there afterwards, null when it was absent */
        if (tb_value_map_put(out, tb_field_string(name), mask) != 0) {
            tb_value_free(out);
            return tb_field_oom(errstr, errstr_size);
        }
    }
    tb_record_set(record, m->side, NULL, out);
    return 0;
}

static int mask_apply(void *state, tb_record_t *record, char *errstr, size_t errstr_size)
{
    tb_mask_field_t *m = state;
    tb_record_side_t *s =
        tb_field_structured(record, m->side, "mask fields", errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->schema == NULL) {
        return mask_schemaless(m, record, s->value, errstr, errstr_size);
    }
    tb_value_t *st = tb_value_struct(s->schema);
    for (size_t i = 0; st != NULL && i < tb_schema_field_count(s->schema); i++) {
        const tb_field_t *f = tb_schema_field_at(s->schema, i);
        const tb_value_t *v = tb_field_get(s->value, f, m->replace_null);
        tb_value_t *out = NULL;
        if (v == NULL || json_object_get(m->fields, f->name) == NULL) {
            out = tb_value_copy(v);
        } else if (masked(m, v, tb_field_is_date(f->schema),
                          tb_schema_is_logical(f->schema, TB_LOGICAL_DECIMAL), &out,
                          errstr, errstr_size) != 0) {
            tb_value_free(st);
            return -1;
        }
        tb_value_struct_set_at(st, i, out);
    }
    if (st == NULL) {
        return tb_field_oom(errstr, errstr_size);
    }
    return tb_field_set_checked(record, m->side, tb_schema_incref(s->schema), st, errstr,
                                errstr_size);
}

static const tb_config_def_t mask_keys[] = {
    {.name = "fields",
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .check = tb_field_non_empty_list,
     .documentation = "The fields whose values are masked.",
     .field = TB_CONFIG_AT(tb_mask_keys_t, fields)},
    {.name = "replacement",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .check = tb_field_non_empty_string,
     .documentation =
         "Text that replaces every masked value, read as the field's type: for "
         "number and string fields only. Unset: each type's empty value.",
     .field = TB_CONFIG_AT(tb_mask_keys_t, replacement)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_mask_keys_t),
};

static const tb_config_table_t mask_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "MaskField", mask_keys);

TB_SIDED_CLASSES(tb_mask_field, "MaskField", mask_table, tb_mask_keys_t, NULL,
                 mask_create, mask_destroy, mask_apply, NULL);
