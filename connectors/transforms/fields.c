/*
 * Transformations of a key's or value's fields, on Connect data: with a
 * schema on structs, without one on maps with string keys, as Connect.
 *
 *   HoistField    wraps the data in a struct (or map) with one field
 *   InsertField   adds the record's topic, partition, offset, timestamp or
 *                 a static string as fields ("name!" required, "name?" or
 *                 "name" optional); a null passes unchanged
 *   ExtractField  replaces the data by one of its fields
 *   ValueToKey    makes the key a struct (or map) of value fields
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_transform.h"

/*
 * HoistField
 */

/* HoistField's keys, filled from hoist_keys. */
typedef struct {
    const char *field;
} tb_hoist_keys_t;

static int hoist_apply(void *state, tb_record_t *record, char *errstr, size_t errstr_size)
{
    tb_field_use_t *use = state;
    const char *field = ((const tb_hoist_keys_t *)use->config)->field;
    tb_record_side_t *s = tb_record_typed(record, use->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->schema == NULL) {
        tb_value_t *map = tb_value_map();
        if (map == NULL ||
            tb_value_map_put(map, tb_field_string(field), tb_value_copy(s->value)) != 0) {
            tb_value_free(map);
            return tb_field_oom(errstr, errstr_size);
        }
        tb_record_set(record, use->side, NULL, map);
        return 0;
    }
    tb_schema_t *schema = tb_schema_new(TB_TYPE_STRUCT);
    if (schema == NULL ||
        tb_schema_add_field(schema, field, tb_schema_incref(s->schema)) != 0) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    tb_value_t *st = tb_value_struct(schema);
    if (st == NULL || tb_value_struct_set_at(st, 0, tb_value_copy(s->value)) != 0) {
        tb_value_free(st);
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    return tb_field_set_checked(record, use->side, schema, st, errstr, errstr_size);
}

static const tb_config_def_t hoist_keys[] = {
    {.name = "field",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "Name of the one field of the new struct or map that holds the original"
         " key or value.",
     .field = TB_CONFIG_AT(tb_hoist_keys_t, field)},
};

static const tb_config_table_t hoist_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "HoistField", hoist_keys);

TB_SIDED_CLASSES(tb_hoist_field, "HoistField", hoist_table, tb_hoist_keys_t, NULL,
                 tb_field_use_create, tb_field_use_destroy, hoist_apply, NULL);

/*
 * ExtractField
 */

/* ExtractField's keys, filled from extract_keys. */
typedef struct {
    const char *field;
    bool replace_null;
} tb_extract_keys_t;

static int extract_apply(void *state, tb_record_t *record, char *errstr,
                         size_t errstr_size)
{
    tb_field_use_t *use = state;
    const tb_extract_keys_t *keys = use->config;
    const char *field = keys->field;
    tb_record_side_t *s = tb_record_typed(record, use->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->value == NULL) {
        return 0; /* a null stays null */
    }
    s = tb_field_structured(record, use->side, "field extraction", errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->schema == NULL) {
        tb_record_set(record, use->side, NULL,
                      tb_value_copy(tb_value_map_get_string(s->value, field)));
        return 0;
    }
    const tb_field_t *f = tb_schema_field(s->schema, field);
    if (f == NULL) {
        snprintf(errstr, errstr_size, "Unknown field: %s", field);
        return -1;
    }
    tb_record_set(record, use->side, tb_schema_incref(f->schema),
                  tb_value_copy(tb_field_get(s->value, f, keys->replace_null)));
    return 0;
}

static const tb_config_def_t extract_keys[] = {
    {.name = "field",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation = "Name of the field whose value replaces the whole key or value.",
     .field = TB_CONFIG_AT(tb_extract_keys_t, field)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_extract_keys_t),
    TB_FIELD_SYNTAX_VERSION_DEF,
};

static const tb_config_table_t extract_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "ExtractField", extract_keys);

TB_SIDED_CLASSES(tb_extract_field, "ExtractField", extract_table, tb_extract_keys_t, NULL,
                 tb_field_use_create, tb_field_use_destroy, extract_apply, NULL);

/*
 * InsertField
 */

/* A field spec of InsertField: "name", "name?" (optional) or "name!". */
typedef struct {
    char name[256];
    bool optional;
    bool set;
} tb_insert_spec_t;

/* InsertField's keys, filled from insert_keys. */
typedef struct {
    const char *topic_field;
    const char *partition_field;
    const char *offset_field;
    const char *timestamp_field;
    const char *static_field;
    const char *static_value;
    bool replace_null;
} tb_insert_keys_t;

typedef struct {
    tb_side_t side;
    tb_insert_spec_t topic, partition, offset, timestamp, fixed;
    const char *fixed_value; /* the config's */
    bool replace_null;
    tb_schema_cache_t cache;
} tb_insert_t;

static void parse_spec(tb_insert_spec_t *spec, const char *text)
{
    size_t n = text != NULL ? strlen(text) : 0;
    spec->set = n > 0;
    spec->optional = !(n > 0 && text[n - 1] == '!');
    if (n > 0 && (text[n - 1] == '!' || text[n - 1] == '?')) {
        n--;
    }
    snprintf(spec->name, sizeof(spec->name), "%.*s", (int)n, text != NULL ? text : "");
}

static void insert_destroy(void *state)
{
    tb_insert_t *t = state;
    if (t != NULL) {
        tb_schema_cache_clear(&t->cache);
        free(t);
    }
}

static void *insert_create(const void *config, tb_side_t side, char *errstr,
                           size_t errstr_size)
{
    const tb_insert_keys_t *keys = config;
    tb_insert_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    t->side = side;
    t->fixed_value = keys->static_value;
    t->replace_null = keys->replace_null;
    parse_spec(&t->topic, keys->topic_field);
    parse_spec(&t->partition, keys->partition_field);
    parse_spec(&t->offset, keys->offset_field);
    parse_spec(&t->timestamp, keys->timestamp_field);
    parse_spec(&t->fixed, keys->static_field);
    return t;
}

/* The fields InsertField adds, in Connect's order, with their schemas and
 * values for record. */
typedef struct {
    const tb_insert_spec_t *spec;
    tb_type_t type;
    bool is_timestamp;
    bool present; /* the record has it */
    int64_t number;
    const char *text;
} tb_insertion_t;

static size_t insertions(const tb_insert_t *t, const tb_record_t *record,
                         tb_insertion_t out[5])
{
    const tb_insertion_t all[5] = {
        {&t->topic, TB_TYPE_STRING, false, record->topic != NULL, 0, record->topic},
        {&t->partition, TB_TYPE_INT32, false, record->partition >= 0, record->partition,
         NULL},
        {&t->offset, TB_TYPE_INT64, false, record->offset >= 0, record->offset, NULL},
        {&t->timestamp, TB_TYPE_INT64, true, record->timestamp >= 0, record->timestamp,
         NULL},
        {&t->fixed, TB_TYPE_STRING, false, t->fixed_value != NULL, 0, t->fixed_value},
    };
    size_t n = 0;
    for (size_t i = 0; i < 5; i++) {
        if (all[i].spec->set) {
            out[n++] = all[i];
        }
    }
    return n;
}

static tb_value_t *insertion_value(const tb_insertion_t *in)
{
    if (!in->present) {
        return NULL;
    }
    return in->type == TB_TYPE_STRING ? tb_field_string(in->text)
                                      : tb_value_int(in->type, in->number);
}

static tb_schema_t *insertion_schema(const tb_insertion_t *in)
{
    tb_schema_t *s = in->is_timestamp ? tb_schema_timestamp() : tb_schema_new(in->type);
    if (s != NULL) {
        tb_schema_set_optional(s, in->spec->optional);
    }
    return s;
}

static int insert_schemaless(tb_record_t *record, tb_side_t side,
                             const tb_insertion_t *ins, size_t n, char *errstr,
                             size_t errstr_size)
{
    tb_value_t *map = tb_record_side(record, side)->value; /* the record's: changed */
    for (size_t i = 0; i < n; i++) {
        if (tb_value_map_put(map, tb_field_string(ins[i].spec->name),
                             insertion_value(&ins[i])) != 0) {
            return tb_field_oom(errstr, errstr_size);
        }
    }
    return 0;
}

/* The schema's name, version, doc and parameters, its fields, then the
 * inserted ones; NULL with errstr. */
static tb_schema_t *inserted_schema(const tb_schema_t *from, const tb_insertion_t *ins,
                                    size_t n, char *errstr, size_t errstr_size)
{
    tb_schema_t *schema = tb_schema_copy(from);
    if (schema == NULL) {
        tb_field_oom(errstr, errstr_size);
    }
    for (size_t i = 0; schema != NULL && i < n; i++) {
        if (tb_schema_add_field(schema, ins[i].spec->name, insertion_schema(&ins[i])) !=
            0) {
            tb_schema_decref(schema);
            snprintf(errstr, errstr_size,
                     "Cannot create field because of field name duplication %s",
                     ins[i].spec->name);
            return NULL;
        }
    }
    return schema;
}

/* A source record has no offset to insert, as Connect says. */
static int offset_refused(char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size,
             "Only SinkRecord supported for [field insertion], found: "
             "org.apache.kafka.connect.source.SourceRecord");
    return -1;
}

static int insert_apply(void *state, tb_record_t *record, char *errstr,
                        size_t errstr_size)
{
    tb_insert_t *t = state;
    tb_insertion_t ins[5];
    size_t n = insertions(t, record, ins);
    tb_record_side_t *s = tb_record_typed(record, t->side, errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    if (s->value == NULL) {
        return 0; /* a tombstone passes unchanged */
    }
    if (t->offset.set && record->offset < 0) {
        return offset_refused(errstr, errstr_size);
    }
    if ((s = tb_field_structured(record, t->side, "field insertion", errstr,
                                 errstr_size)) == NULL) {
        return -1;
    }
    if (s->schema == NULL) {
        return insert_schemaless(record, t->side, ins, n, errstr, errstr_size);
    }
    tb_schema_t *schema = tb_schema_cache_get(&t->cache, s->schema);
    if (schema == NULL &&
        (schema = inserted_schema(s->schema, ins, n, errstr, errstr_size)) == NULL) {
        return -1;
    }
    tb_schema_cache_put(&t->cache, s->schema, schema);
    tb_value_t *st = tb_value_struct(schema);
    if (st == NULL) {
        tb_schema_decref(schema);
        return tb_field_oom(errstr, errstr_size);
    }
    size_t kept = tb_schema_field_count(s->schema);
    for (size_t i = 0; i < kept; i++) {
        tb_value_struct_set_at(
            st, i,
            tb_field_take(s->value, tb_schema_field_at(s->schema, i), t->replace_null));
    }
    for (size_t i = 0; i < n; i++) {
        tb_value_struct_set_at(st, kept + i, insertion_value(&ins[i]));
    }
    return tb_field_set_checked(record, t->side, schema, st, errstr, errstr_size);
}

/* insert_apply() on a schemaless JSON object held as text. */
static int insert_edit(void *state, tb_record_t *record, tb_json_object_t *object,
                       char *errstr, size_t errstr_size)
{
    tb_insert_t *t = state;
    tb_insertion_t ins[5];
    size_t n = insertions(t, record, ins);
    if (t->offset.set && record->offset < 0) {
        return offset_refused(errstr, errstr_size);
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = ins[i].spec->name;
        int rc = !ins[i].present || ins[i].type == TB_TYPE_STRING
                     ? tb_json_object_put_string(object, name,
                                                 ins[i].present ? ins[i].text : NULL,
                                                 ins[i].present ? strlen(ins[i].text) : 0)
                     : tb_json_object_put_int(object, name, ins[i].number);
        if (rc != 0) {
            return tb_field_oom(errstr, errstr_size);
        }
    }
    return 0;
}

static const tb_config_def_t insert_keys[] = {
    {.name = "topic.field",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "Field that receives the record's topic; a trailing ! makes the field "
         "required in the schema, a trailing ? (the default) optional.",
     .field = TB_CONFIG_AT(tb_insert_keys_t, topic_field)},
    {.name = "partition.field",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "Field that receives the record's partition; a trailing ! makes the "
         "field required, ? (the default) optional.",
     .field = TB_CONFIG_AT(tb_insert_keys_t, partition_field)},
    {.name = "offset.field",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "Field that receives the record's Kafka offset (sink connectors only); "
         "a trailing ! makes the field required, ? (the default) optional.",
     .field = TB_CONFIG_AT(tb_insert_keys_t, offset_field)},
    {.name = "timestamp.field",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "Field that receives the record's timestamp; a trailing ! makes the "
         "field required, ? (the default) optional.",
     .field = TB_CONFIG_AT(tb_insert_keys_t, timestamp_field)},
    {.name = "static.field",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation = "Field that receives static.value; a trailing ! makes the field "
                      "required, ? (the default) optional.",
     .field = TB_CONFIG_AT(tb_insert_keys_t, static_field)},
    {.name = "static.value",
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation = "The value written into static.field.",
     .field = TB_CONFIG_AT(tb_insert_keys_t, static_value)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_insert_keys_t),
};

static const tb_config_table_t insert_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "InsertField", insert_keys);

TB_SIDED_CLASSES(tb_insert_field, "InsertField", insert_table, tb_insert_keys_t, NULL,
                 insert_create, insert_destroy, insert_apply, insert_edit);

/*
 * ValueToKey
 */

/* ValueToKey's keys, filled from value_to_key_keys. */
typedef struct {
    const json_t *fields;
    bool replace_null;
} tb_value_to_key_keys_t;

static int value_to_key_apply(void *state, tb_record_t *record, char *errstr,
                              size_t errstr_size)
{
    const tb_value_to_key_keys_t *keys = ((tb_field_use_t *)state)->config;
    const json_t *fields = keys->fields;
    bool replace_null = keys->replace_null;
    tb_record_side_t *s = tb_field_structured(
        record, TB_SIDE_VALUE, "copying fields from value to key", errstr, errstr_size);
    if (s == NULL) {
        return -1;
    }
    size_t i;
    json_t *item;
    if (s->schema == NULL) {
        tb_value_t *key = tb_value_map();
        json_array_foreach (fields, i, item) {
            const char *name = json_string_value(item);
            if (tb_value_map_put(
                    key, tb_field_string(name),
                    tb_value_copy(tb_value_map_get_string(s->value, name))) != 0) {
                tb_value_free(key);
                return tb_field_oom(errstr, errstr_size);
            }
        }
        tb_record_set(record, TB_SIDE_KEY, NULL, key);
        return 0;
    }
    tb_schema_t *schema = tb_schema_new(TB_TYPE_STRUCT);
    json_array_foreach (fields, i, item) {
        const tb_field_t *f = tb_schema_field(s->schema, json_string_value(item));
        if (f == NULL) {
            snprintf(errstr, errstr_size, "Field does not exist: %s",
                     json_string_value(item));
            tb_schema_decref(schema);
            return -1;
        }
        tb_schema_add_field(schema, f->name, tb_schema_incref(f->schema));
    }
    tb_value_t *key = tb_value_struct(schema);
    for (i = 0; key != NULL && i < tb_schema_field_count(schema); i++) {
        const tb_field_t *f =
            tb_schema_field(s->schema, tb_schema_field_at(schema, i)->name);
        tb_value_struct_set_at(key, i,
                               tb_value_copy(tb_field_get(s->value, f, replace_null)));
    }
    return tb_field_set_checked(record, TB_SIDE_KEY, schema, key, errstr, errstr_size);
}

static const tb_config_def_t value_to_key_keys[] = {
    {.name = "fields",
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation =
         "Fields of the value that make up the new key, a struct (or map) of "
         "them in this order.",
     .field = TB_CONFIG_AT(tb_value_to_key_keys_t, fields)},
    TB_REPLACE_NULL_WITH_DEFAULT_DEF(tb_value_to_key_keys_t),
    TB_FIELD_SYNTAX_VERSION_DEF,
};

static const tb_config_table_t value_to_key_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "ValueToKey", value_to_key_keys);

const tb_transform_class_t tb_value_to_key = {
    .name = TB_TRANSFORMS_PACKAGE "ValueToKey",
    .config = &value_to_key_table,
    .config_size = sizeof(tb_value_to_key_keys_t),
    .create = tb_field_use_create,
    .destroy = tb_field_use_destroy,
    .apply = value_to_key_apply,
};
