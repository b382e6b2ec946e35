/*
 * jdbc_rows.c - what a record writes: its table (table.name.format), its
 * primary key columns (pk.mode, pk.fields), and its other columns (the
 * value's fields, fields.whitelist), as Confluent's JDBC sink reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"

static const char *const kafka_names[] = {"__connect_topic", "__connect_partition",
                                          "__connect_offset"};
static const char *const pk_mode_names[] = {"none", "kafka", "record_key",
                                            "record_value"};

/* table.name.format with every ${topic} replaced (Debezium's: with the
 * topic's dots as underscores). */
static char *table_name(const char *format, const char *topic, bool dots)
{
    tb_jdbc_sql_t out = {0};
    char *name = strdup(topic);
    for (char *c = name; dots && c != NULL && *c != '\0'; c++) {
        *c = *c == '.' ? '_' : *c;
    }
    tb_jdbc_sql_append(&out, "%s", "");
    for (const char *p = format; !out.failed && name != NULL && *p != '\0';) {
        const char *at = strstr(p, "${topic}");
        size_t n = at != NULL ? (size_t)(at - p) : strlen(p);
        tb_jdbc_sql_append(&out, "%.*s%s", (int)n, p, at != NULL ? name : "");
        p += n + (at != NULL ? strlen("${topic}") : 0);
    }
    if (name == NULL) {
        tb_jdbc_sql_free(&out);
    }
    free(name);
    return out.data;
}

/* Debezium's change event envelope: a struct named *.Envelope with op and
 * after. Its op, or NULL when value is none. */
static const char *envelope_op(const tb_schema_t *schema, const tb_value_t *value)
{
    const char *name = schema != NULL ? tb_schema_name(schema) : NULL;
    size_t n = name != NULL ? strlen(name) : 0;
    if (value == NULL || n < 9 || strcmp(name + n - 9, ".Envelope") != 0 ||
        tb_schema_field(schema, "after") == NULL) {
        return NULL;
    }
    const tb_value_t *op = tb_value_struct_get(value, "op");
    return op != NULL && tb_value_type(op) == TB_TYPE_STRING ? tb_value_text(op, NULL)
                                                             : NULL;
}

/* For Debezium's sink: the record as its row sees it (the envelope's after,
 * or a null value for a delete event). Returns 1 when it writes nothing. */
static int unwrap(const tb_jdbc_settings_t *s, tb_sink_record_t *r)
{
    const char *op = envelope_op(r->value_schema, r->value_data);
    if (op != NULL && strcmp(op, "d") == 0) {
        r->value_data = NULL;
    } else if (op != NULL) {
        r->value_schema = tb_schema_field(r->value_schema, "after")->schema;
        r->value_data = tb_value_struct_get(r->value_data, "after");
    }
    return r->value_data == NULL && !s->delete_enabled ? 1 : 0;
}

static bool listed(const json_t *list, const char *name)
{
    size_t i;
    json_t *item;
    json_array_foreach ((json_t *)list, i, item) {
        if (strcmp(json_string_value(item), name) == 0) {
            return true;
        }
    }
    return false;
}

/* Appends a column; the parameter is made from value. */
static int add_column(tb_jdbc_row_t *row, const tb_jdbc_settings_t *s, const char *name,
                      const tb_schema_t *schema, const tb_value_t *value, bool key,
                      char *reason, size_t reason_size)
{
    tb_jdbc_column_t *c = &row->columns[row->count];
    char why[256];
    if (value == NULL && s->replace_null && schema != NULL) {
        value = tb_schema_default(schema);
    }
    *c = (tb_jdbc_column_t){.name = name, .schema = schema, .key = key};
    if (tb_jdbc_param_of(schema, value, s->zone, &c->param, why, sizeof(why)) != 0) {
        snprintf(reason, reason_size, "field '%s' of table '%s' cannot be written: %s",
                 name, row->table, why);
        return -1;
    }
    row->count++;
    row->key_count += key;
    return 0;
}

/* Key columns: the fields of a struct (schema st, value v) named in
 * pk.fields, or all of them when it is empty; a name that is not a field is
 * an error naming side. */
static int key_fields(tb_jdbc_row_t *row, const tb_jdbc_settings_t *s,
                      const tb_schema_t *st, const tb_value_t *v, const char *side,
                      char *reason, size_t reason_size)
{
    size_t n = json_array_size(s->pk_fields);
    size_t count = n > 0 ? n : tb_schema_field_count(st);
    for (size_t i = 0; i < count; i++) {
        const char *name = n > 0 ? json_string_value(json_array_get(s->pk_fields, i))
                                 : tb_schema_field_at(st, i)->name;
        const tb_field_t *f = tb_schema_field(st, name);
        if (f == NULL) {
            snprintf(reason, reason_size,
                     "PK mode for table '%s' is %s with configured PK fields, but "
                     "record %s schema does not contain field: %s",
                     row->table, pk_mode_names[s->pk_mode], side, name);
            return -1;
        }
        if (add_column(row, s, f->name, f->schema, tb_value_struct_get_at(v, f->index),
                       true, reason, reason_size) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The other columns: the value's fields that are not key columns, all or
 * those of fields.whitelist. */
static int value_fields(tb_jdbc_row_t *row, const tb_jdbc_settings_t *s,
                        const tb_schema_t *st, const tb_value_t *v, char *reason,
                        size_t reason_size)
{
    for (size_t f = 0; f < tb_schema_field_count(st); f++) {
        const tb_field_t *field = tb_schema_field_at(st, f);
        bool key = false;
        for (size_t k = 0; k < row->key_count && !key; k++) {
            key = strcmp(row->columns[k].name, field->name) == 0;
        }
        if (key || (json_array_size(s->fields_allow) > 0 &&
                    !listed(s->fields_allow, field->name))) {
            continue;
        }
        if (add_column(row, s, field->name, field->schema,
                       tb_value_struct_get_at(v, field->index), false, reason,
                       reason_size) != 0) {
            return -1;
        }
    }
    return 0;
}

static int key_columns(tb_jdbc_row_t *row, const tb_jdbc_settings_t *s,
                       const tb_jdbc_kafka_schemas_t *kafka, const tb_sink_record_t *r,
                       char *reason, size_t reason_size)
{
    const json_t *fields = s->pk_fields;
    switch (s->pk_mode) {
    case TB_JDBC_PK_KAFKA: {
        const char *names[3];
        for (int i = 0; i < 3; i++) {
            names[i] = json_array_size(fields) == 3
                           ? json_string_value(json_array_get(fields, (size_t)i))
                           : kafka_names[i];
        }
        tb_jdbc_column_t *c = &row->columns[0];
        c[0] = (tb_jdbc_column_t){
            .name = names[0],
            .schema = kafka->topic,
            .key = true,
            .param = {.kind = TB_JDBC_P_TEXT, .data = r->topic, .len = strlen(r->topic)}};
        c[1] = (tb_jdbc_column_t){.name = names[1],
                                  .schema = kafka->partition,
                                  .key = true,
                                  .param = {.kind = TB_JDBC_P_INT, .i = r->partition}};
        c[2] = (tb_jdbc_column_t){.name = names[2],
                                  .schema = kafka->offset,
                                  .key = true,
                                  .param = {.kind = TB_JDBC_P_INT, .i = r->offset}};
        row->count = row->key_count = 3;
        return 0;
    }
    case TB_JDBC_PK_RECORD_KEY:
        if (r->key_schema == NULL) {
            snprintf(reason, reason_size,
                     "PK mode for table '%s' is record_key, but record key schema is "
                     "missing",
                     row->table);
            return -1;
        }
        if (r->key_data == NULL) {
            snprintf(reason, reason_size,
                     "PK mode for table '%s' is record_key, but the record key is null",
                     row->table);
            return -1;
        }
        if (tb_schema_type(r->key_schema) != TB_TYPE_STRUCT) {
            if (json_array_size(fields) != 1) {
                snprintf(reason, reason_size,
                         "Need exactly one PK column defined since the key schema for "
                         "records is a primitive type, defined columns are: %zu "
                         "(pk.fields)",
                         json_array_size(fields));
                return -1;
            }
            return add_column(row, s, json_string_value(json_array_get(fields, 0)),
                              r->key_schema, r->key_data, true, reason, reason_size);
        }
        return key_fields(row, s, r->key_schema, r->key_data, "key", reason, reason_size);
    case TB_JDBC_PK_RECORD_VALUE:
        return key_fields(row, s, r->value_schema, r->value_data, "value", reason,
                          reason_size);
    default:
        return 0;
    }
}

int tb_jdbc_row_build(const tb_jdbc_settings_t *s, const tb_jdbc_kafka_schemas_t *kafka,
                      const tb_sink_record_t *record, tb_jdbc_row_t *row, char *reason,
                      size_t reason_size)
{
    tb_sink_record_t seen = *record;
    const tb_sink_record_t *r = &seen;
    *row = (tb_jdbc_row_t){0};
    if (s->debezium && unwrap(s, &seen) == 1) {
        return 1;
    }
    bool is_struct = r->value_schema != NULL &&
                     tb_schema_type(r->value_schema) == TB_TYPE_STRUCT &&
                     r->value_data != NULL;
    *row = (tb_jdbc_row_t){.is_delete = r->value_data == NULL && s->delete_enabled};
    if (!is_struct && !row->is_delete) {
        snprintf(reason, reason_size,
                 "the JDBC sink writes records whose value is a struct with a schema "
                 "(JsonConverter with schemas.enable=true, Avro, Protobuf or JSON "
                 "Schema)%s, but this record has a %s value and %s%s value schema",
                 r->value_data == NULL ? " and a null value only as a delete, with "
                                         "delete.enabled=true"
                                       : "",
                 tb_value_class_name(r->value_data), r->value_schema != NULL ? "a " : "",
                 r->value_schema != NULL ? tb_type_name(tb_schema_type(r->value_schema))
                                         : "no");
        return -1;
    }
    size_t fields = is_struct ? tb_schema_field_count(r->value_schema) : 0;
    size_t keys = r->key_schema != NULL && tb_schema_type(r->key_schema) == TB_TYPE_STRUCT
                      ? tb_schema_field_count(r->key_schema)
                      : 1;
    row->table = table_name(s->table_format, r->topic, s->debezium);
    row->columns = calloc(fields * 2 + keys + 3, sizeof(*row->columns));
    if (row->table == NULL || row->columns == NULL) {
        snprintf(reason, reason_size, "out of memory");
        goto fail;
    }
    if (key_columns(row, s, kafka, r, reason, reason_size) != 0) {
        goto fail;
    }
    if (!row->is_delete &&
        value_fields(row, s, r->value_schema, r->value_data, reason, reason_size) != 0) {
        goto fail;
    }
    return 0;

fail:
    tb_jdbc_row_clear(row);
    return -1;
}

void tb_jdbc_row_clear(tb_jdbc_row_t *row)
{
    for (size_t i = 0; row->columns != NULL && i < row->count; i++) {
        tb_jdbc_param_clear(&row->columns[i].param);
    }
    free(row->columns);
    free(row->table);
    *row = (tb_jdbc_row_t){0};
}

bool tb_jdbc_row_same_shape(const tb_jdbc_row_t *a, const tb_jdbc_row_t *b)
{
    if (a->is_delete != b->is_delete || a->count != b->count ||
        a->key_count != b->key_count || strcmp(a->table, b->table) != 0) {
        return false;
    }
    for (size_t i = 0; i < a->count; i++) {
        if (strcmp(a->columns[i].name, b->columns[i].name) != 0) {
            return false;
        }
    }
    return true;
}
