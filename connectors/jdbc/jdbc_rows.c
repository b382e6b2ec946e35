/*
 * jdbc_rows.c - what a record writes: its table (table.name.format), its
 * primary key columns (pk.mode, pk.fields), and its other columns (the
 * value's fields, fields.whitelist), as Confluent's JDBC sink reads them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"

static const char *const kafka_names[] = {"__connect_topic", "__connect_partition",
                                          "__connect_offset"};
static const char *const pk_mode_names[] = {"none", "kafka", "record_key",
                                            "record_value"};

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

/* The text of ${source.<name>} (len bytes of name) in record, a Debezium
 * change event: its source block's field, or NULL with the reason. */
static const char *source_field(const tb_sink_record_t *record, const char *name,
                                size_t len, char *reason, size_t reason_size)
{
    char field[128];
    snprintf(field, sizeof(field), "%.*s", (int)len, name);
    if (envelope_op(record->value_schema, record->value_data) == NULL) {
        snprintf(reason, reason_size,
                 "the table name format holds ${source.%s}, but the record is not a "
                 "Debezium change event (a struct *.Envelope with a source block)",
                 field);
        return NULL;
    }
    const tb_value_t *source = tb_value_struct_get(record->value_data, "source");
    const tb_value_t *value = source != NULL && tb_value_type(source) == TB_TYPE_STRUCT
                                  ? tb_value_struct_get(source, field)
                                  : NULL;
    if (value == NULL || tb_value_type(value) != TB_TYPE_STRING) {
        snprintf(reason, reason_size,
                 "the table name format holds ${source.%s}, but the change event's "
                 "source block has no text field '%s'",
                 field, field);
        return NULL;
    }
    return tb_value_text(value, NULL);
}

/* table.name.format with every ${topic} replaced; Debezium's: with the
 * topic's dots as underscores, and every ${source.<field>} with that
 * field of the change event's source block, as its default collection
 * naming does. A new string, or NULL with the reason. */
static char *table_name(const tb_jdbc_settings_t *s, const tb_sink_record_t *record,
                        char *reason, size_t reason_size)
{
    tb_jdbc_sql_t out = {0};
    char *topic = strdup(record->topic);
    for (char *c = topic; s->debezium && c != NULL && *c != '\0'; c++) {
        *c = *c == '.' ? '_' : *c;
    }
    tb_jdbc_sql_append(&out, "%s", "");
    for (const char *p = s->table_format; !out.failed && topic != NULL && *p != '\0';) {
        const char *end =
            s->debezium && strncmp(p, "${source.", 9) == 0 ? strchr(p + 9, '}') : NULL;
        if (strncmp(p, "${topic}", 8) == 0) {
            tb_jdbc_sql_append(&out, "%s", topic);
            p += 8;
        } else if (end != NULL) {
            const char *text =
                source_field(record, p + 9, (size_t)(end - p - 9), reason, reason_size);
            if (text == NULL) {
                free(topic);
                tb_jdbc_sql_free(&out);
                return NULL;
            }
            tb_jdbc_sql_append(&out, "%s", text);
            p = end + 1;
        } else {
            tb_jdbc_sql_bytes(&out, p++, 1);
        }
    }
    if (topic == NULL || out.data == NULL) {
        snprintf(reason, reason_size, "out of memory");
        tb_jdbc_sql_free(&out);
    }
    free(topic);
    return out.data;
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

/* text without its leading and trailing spaces equals name. */
static bool trimmed_equal(const char *text, size_t len, const char *name)
{
    while (len > 0 && isspace((unsigned char)*text)) {
        text++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)text[len - 1])) {
        len--;
    }
    return strlen(name) == len && strncmp(text, name, len) == 0;
}

/* Whether field name of a record of topic is written, per Debezium's
 * field.include.list / field.exclude.list: an entry "field" matches the
 * field in every topic, "topic:field" in that topic only. */
static bool field_kept(const tb_jdbc_settings_t *s, const char *topic, const char *name)
{
    size_t i;
    json_t *item;
    if (s->field_filter == NULL) {
        return true;
    }
    json_array_foreach (s->field_filter, i, item) {
        const char *entry = json_string_value(item);
        const char *colon = strchr(entry, ':');
        if ((colon == NULL && trimmed_equal(entry, strlen(entry), name)) ||
            (colon != NULL && strchr(colon + 1, ':') == NULL &&
             trimmed_equal(entry, (size_t)(colon - entry), topic) &&
             trimmed_equal(colon + 1, strlen(colon + 1), name))) {
            return s->field_include;
        }
    }
    return !s->field_include;
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
 * pk.fields, or all of them that Debezium's field filter keeps when it is
 * empty; a name that is not a field is an error naming side. */
static int key_fields(tb_jdbc_row_t *row, const tb_jdbc_settings_t *s, const char *topic,
                      const tb_schema_t *st, const tb_value_t *v, const char *side,
                      char *reason, size_t reason_size)
{
    size_t n = json_array_size(s->pk_fields);
    size_t count = n > 0 ? n : tb_schema_field_count(st);
    for (size_t i = 0; i < count; i++) {
        const char *name = n > 0 ? json_string_value(json_array_get(s->pk_fields, i))
                                 : tb_schema_field_at(st, i)->name;
        const tb_field_t *f = tb_schema_field(st, name);
        if (n == 0 && !field_kept(s, topic, name)) {
            continue;
        }
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
 * those of fields.whitelist, and those Debezium's field filter keeps. */
static int value_fields(tb_jdbc_row_t *row, const tb_jdbc_settings_t *s,
                        const char *topic, const tb_schema_t *st, const tb_value_t *v,
                        char *reason, size_t reason_size)
{
    for (size_t f = 0; f < tb_schema_field_count(st); f++) {
        const tb_field_t *field = tb_schema_field_at(st, f);
        bool key = false;
        for (size_t k = 0; k < row->key_count && !key; k++) {
            key = strcmp(row->columns[k].name, field->name) == 0;
        }
        if (key ||
            (json_array_size(s->fields_allow) > 0 &&
             !listed(s->fields_allow, field->name)) ||
            !field_kept(s, topic, field->name)) {
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
        return key_fields(row, s, r->topic, r->key_schema, r->key_data, "key", reason,
                          reason_size);
    case TB_JDBC_PK_RECORD_VALUE:
        return key_fields(row, s, r->topic, r->value_schema, r->value_data, "value",
                          reason, reason_size);
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
    if (s->debezium && record->value_data == NULL &&
        strstr(s->table_format, "${source.") != NULL) {
        return 1; /* a tombstone has no source block to name its table, and its delete
                   * event deleted the row: skipped, as Debezium skips it */
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
    row->table = table_name(s, record, reason, reason_size);
    if (row->table == NULL) {
        goto fail;
    }
    row->columns = calloc(fields * 2 + keys + 3, sizeof(*row->columns));
    if (row->columns == NULL) {
        snprintf(reason, reason_size, "out of memory");
        goto fail;
    }
    if (key_columns(row, s, kafka, r, reason, reason_size) != 0) {
        goto fail;
    }
    if (!row->is_delete && value_fields(row, s, r->topic, r->value_schema, r->value_data,
                                        reason, reason_size) != 0) {
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
