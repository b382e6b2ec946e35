/*
 * HeaderFrom: adds a header per field (fields[i] into headers[i]) from a
 * struct (with a schema) or map (without), and with operation=move also
 * removes those fields. A header's bytes are the field's text as a sink
 * plugin sees data: a string's text, bytes as they are, anything else its
 * JSON; a null field makes a null header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_transform.h"

/* HeaderFrom's operations, as operation lists them. */
typedef enum { HEADER_MOVE = 0, HEADER_COPY } tb_header_operation_t;

/* HeaderFrom's keys, filled from header_from_keys. */
typedef struct {
    const json_t *fields;
    const json_t *headers;
    int operation; /* tb_header_operation_t */
    bool replace_null;
} tb_header_from_keys_t;

typedef struct {
    tb_side_t side;
    const json_t *fields; /* the config's */
    const json_t *headers;
    bool move;
    bool replace_null;
    tb_schema_cache_t cache;
} tb_header_from_t;

static const char *header_from_check(const void *config, char *message,
                                     size_t message_size)
{
    const tb_header_from_keys_t *keys = config;
    if (json_array_size(keys->fields) != json_array_size(keys->headers)) {
        snprintf(message, message_size,
                 "'fields' config must have the same number of elements as 'headers' "
                 "config.");
        return "fields";
    }
    return NULL;
}

static void header_from_destroy(void *state)
{
    tb_header_from_t *h = state;
    if (h != NULL) {
        tb_schema_cache_clear(&h->cache);
        free(h);
    }
}

static void *header_from_create(const void *config, tb_side_t side, char *errstr,
                                size_t errstr_size)
{
    const tb_header_from_keys_t *keys = config;
    tb_header_from_t *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        tb_field_oom(errstr, errstr_size);
        return NULL;
    }
    h->side = side;
    h->fields = keys->fields;
    h->headers = keys->headers;
    h->move = keys->operation == HEADER_MOVE;
    h->replace_null = keys->replace_null;
    return h;
}

static bool moved(const tb_header_from_t *h, const char *name)
{
    size_t i;
    json_t *item;
    json_array_foreach (h->fields, i, item) {
        if (strcmp(json_string_value(item), name) == 0) {
            return true;
        }
    }
    return false;
}

/* Adds header name with the text of v (under schema; NULL: schemaless). */
static int add_header(tb_record_t *record, const char *name, const tb_schema_t *schema,
                      const tb_value_t *v, char *errstr, size_t errstr_size)
{
    void *text = NULL;
    size_t len = 0;
    if (tb_typed_to_plugin(schema, v, &text, &len, errstr, errstr_size) != 0) {
        return -1;
    }
    int rc = tb_record_header_add(record, name, text, len);
    free(text);
    return rc == 0 ? 0 : tb_field_oom(errstr, errstr_size);
}

/* The data without the moved fields, into *schema and *out. -1 on no
 * memory. */
static int without_moved(tb_header_from_t *h, const tb_record_side_t *s,
                         tb_schema_t **schema, tb_value_t **out)
{
    *schema = NULL;
    if (s->schema == NULL) {
        *out = tb_value_map();
        for (size_t i = 0; *out != NULL && i < tb_value_size(s->value); i++) {
            const tb_value_t *key = tb_value_map_key(s->value, i);
            const char *name = tb_value_text(key, NULL);
            if ((name == NULL || !moved(h, name)) &&
                tb_value_map_put(*out, tb_value_copy(key),
                                 tb_value_copy(tb_value_map_value(s->value, i))) != 0) {
                tb_value_free(*out);
                *out = NULL;
            }
        }
        return *out != NULL ? 0 : -1;
    }
    *schema = tb_schema_cache_get(&h->cache, s->schema);
    if (*schema == NULL) {
        *schema = tb_field_struct_like(s->schema);
        for (size_t i = 0; *schema != NULL && i < tb_schema_field_count(s->schema); i++) {
            const tb_field_t *f = tb_schema_field_at(s->schema, i);
            if (!moved(h, f->name) &&
                tb_schema_add_field(*schema, f->name, tb_schema_incref(f->schema)) != 0) {
                tb_schema_decref(*schema);
                *schema = NULL;
            }
        }
        if (*schema == NULL) {
            return -1;
        }
    }
    tb_schema_cache_put(&h->cache, s->schema, *schema);
    *out = tb_value_struct(*schema);
    for (size_t i = 0; *out != NULL && i < tb_schema_field_count(*schema); i++) {
        const tb_field_t *f =
            tb_schema_field(s->schema, tb_schema_field_at(*schema, i)->name);
        tb_value_struct_set_at(*out, i,
                               tb_value_copy(tb_field_get(s->value, f, h->replace_null)));
    }
    if (*out == NULL) {
        tb_schema_decref(*schema);
        *schema = NULL;
        return -1;
    }
    return 0;
}

static int header_from_apply(void *state, tb_record_t *record, char *errstr,
                             size_t errstr_size)
{
    tb_header_from_t *h = state;
    tb_record_side_t *s = tb_field_structured(
        record, h->side, h->move ? "header move" : "header copy", errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    for (size_t i = 0; i < json_array_size(h->fields); i++) {
        const char *name = json_string_value(json_array_get(h->fields, i));
        const char *header = json_string_value(json_array_get(h->headers, i));
        const tb_schema_t *schema = NULL;
        const tb_value_t *v;
        if (s->schema == NULL) {
            v = tb_value_map_get_string(s->value, name);
        } else {
            const tb_field_t *f = tb_schema_field(s->schema, name);
            if (f == NULL) {
                snprintf(errstr, errstr_size, "Unknown field: %s", name);
                return -1;
            }
            schema = f->schema;
            v = tb_field_get(s->value, f, h->replace_null);
        }
        if (add_header(record, header, schema, v, errstr, errstr_size) != 0) {
            return -1;
        }
    }
    if (h->move) {
        tb_schema_t *schema;
        tb_value_t *out;
        if (without_moved(h, s, &schema, &out) != 0) {
            return tb_field_oom(errstr, errstr_size);
        }
        tb_record_set(record, h->side, schema, out);
    }
    return 0;
}

static const tb_config_def_t header_from_keys[] = {
    {.name = "fields",
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .check = tb_field_non_empty_list,
     .documentation = "The fields whose values become headers, in the order of headers.",
     .field = TB_CONFIG_AT(tb_header_from_keys_t, fields)},
    {.name = "headers",
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .check = tb_field_non_empty_list,
     .documentation = "The names of the headers made, one for each of fields.",
     .field = TB_CONFIG_AT(tb_header_from_keys_t, headers)},
    {.name = "operation",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .one_of = (const char *const[]){"move", "copy", NULL},
     .documentation = "move removes the fields from the data; copy leaves them.",
     .field = TB_CONFIG_ENUM_AT(tb_header_from_keys_t, operation)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_header_from_keys_t),
};

static const tb_config_table_t header_from_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "HeaderFrom", header_from_keys);

TB_SIDED_CLASSES(tb_header_from, "HeaderFrom", header_from_table, tb_header_from_keys_t,
                 header_from_check, header_from_create, header_from_destroy,
                 header_from_apply, NULL);
