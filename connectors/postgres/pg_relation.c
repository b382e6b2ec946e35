/* Captured tables and their schemas (tb_pg_relation.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_envelope.h"
#include "connectors/postgres/tb_pg_relation.h"
#include "connectors/postgres/tb_pg_unknown.h"

/* Debezium's placeholder for an unchanged TOASTed value the server did not
 * send (unavailable.value.placeholder's default). */
#define UNAVAILABLE "__debezium_unavailable_value"

void tb_pg_column_info_free(tb_pg_column_info_t *info, size_t n)
{
    for (size_t i = 0; info != NULL && i < n; i++) {
        free(info[i].name);
        tb_pg_type_release(&info[i].type);
        free(info[i].default_expr);
    }
    free(info);
}

void tb_pg_relation_free(tb_pg_relation_t *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->ncolumns; i++) {
        free(r->columns[i].name);
        tb_pg_type_release(&r->columns[i].type);
        tb_schema_decref(r->columns[i].schema);
    }
    free(r->columns);
    free(r->schema_name);
    free(r->table_name);
    free(r->topic);
    tb_schema_decref(r->key_schema);
    tb_schema_decref(r->value_schema);
    tb_schema_decref(r->envelope_schema);
    free(r);
}

static const tb_pg_column_info_t *info_of(const tb_pg_column_info_t *info, size_t n,
                                          const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(info[i].name, name) == 0) {
            return &info[i];
        }
    }
    return NULL;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

/* A struct schema called <prefix>.<schema>.<table><suffix>. */
static tb_schema_t *row_schema(const tb_pg_relation_t *r, const char *prefix,
                               const char *suffix, bool key)
{
    char name[1024];
    snprintf(name, sizeof(name), "%s.%s.%s%s", prefix, r->schema_name, r->table_name,
             suffix);
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    if (s == NULL || tb_schema_set_name(s, name) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    for (size_t i = 0; i < r->ncolumns; i++) {
        const tb_pg_column_t *c = &r->columns[i];
        if ((key ? c->key : c->included) &&
            tb_schema_add_field(s, c->name, tb_schema_incref(c->schema)) != 0) {
            tb_schema_decref(s);
            return NULL;
        }
    }
    tb_schema_set_optional(s, !key);
    return s;
}

static int build_schemas(tb_pg_relation_t *r, const tb_pg_relation_ctx_t *ctx)
{
    char name[1024];
    bool has_key = false;
    for (size_t i = 0; i < r->ncolumns; i++) {
        has_key = has_key || r->columns[i].key;
    }
    r->key_schema = has_key ? row_schema(r, ctx->prefix, ".Key", true) : NULL;
    r->value_schema = row_schema(r, ctx->prefix, ".Value", false);
    snprintf(name, sizeof(name), "%s.%s.%s.Envelope", ctx->prefix, r->schema_name,
             r->table_name);
    r->envelope_schema =
        r->value_schema != NULL
            ? tb_pg_envelope_schema(name, r->value_schema, ctx->source_schema)
            : NULL;
    return (has_key && r->key_schema == NULL) || r->envelope_schema == NULL ? -1 : 0;
}

/* Column c of r, whose type tributary does not map, as Debezium treats it
 * (tb_pg_unknown.h): refused (-1 with errstr), left out (no schema), or
 * opaque; ctx is told of the last two. */
static int unmapped_column(const tb_pg_relation_ctx_t *ctx, const tb_pg_relation_t *r,
                           tb_pg_column_t *c, char *errstr, size_t errstr_size)
{
    char reason[256], id[512];
    tb_pg_fate_t fate = tb_pg_unknown_fate(&c->type, ctx->modes, reason, sizeof(reason));
    snprintf(id, sizeof(id), "%s.%s.%s", r->schema_name, r->table_name, c->name);
    if (fate == TB_PG_REFUSED) {
        snprintf(errstr, errstr_size,
                 "column %s: %s; column.exclude.list can leave the column out", id,
                 reason);
        return -1;
    }
    if (fate == TB_PG_OPAQUE) {
        c->type.opaque = true;
        c->schema = tb_pg_type_schema(&c->type, ctx->modes, errstr, errstr_size);
        if (c->schema == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            return -1;
        }
    }
    if (ctx->notice != NULL) {
        ctx->notice(ctx->notice_arg, id, reason);
    }
    return 0;
}

/* Column c of r from its name and type (column) and what the catalog
 * knows of it (NULL: nothing). The catalog's type (a domain's base type,
 * an enum's labels) applies only while it is still the type the column is
 * sent with: after an ALTER TABLE the catalog may be ahead of the stream. */
static int build_column(const tb_pg_relation_ctx_t *ctx, const tb_pg_relation_t *r,
                        tb_pg_column_t *c, const tb_pg_column_info_t *column,
                        const tb_pg_column_info_t *known, char *errstr,
                        size_t errstr_size)
{
    char reason[256];
    bool same_type = known != NULL && known->declared_oid == column->type.oid;
    const tb_pg_type_t *type = same_type ? &known->type : &column->type;
    c->name = strdup(column->name);
    c->type = (tb_pg_type_t){
        .oid = type->oid,
        .typmod = same_type && known->type.oid != column->type.oid ? known->type.typmod
                                                                   : column->type.typmod,
        .elem_oid = type->elem_oid != 0 ? type->elem_oid : tb_pg_array_elem(type->oid),
        .enum_labels = dup_or_null(type->enum_labels),
        .name = dup_or_null(type->name),
        .base_name = dup_or_null(type->base_name),
        .elem_name = dup_or_null(type->elem_name)};
    if (c->name == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    c->key = known != NULL && known->primary_key;
    c->included = c->key || tb_pg_filter_column(ctx->filter, r->schema_name,
                                                r->table_name, c->name);
    if (!c->included) {
        return 0; /* left out: its type need not be one tributary maps */
    }
    c->schema = tb_pg_type_schema(&c->type, ctx->modes, reason, sizeof(reason));
    if (c->schema == NULL && unmapped_column(ctx, r, c, errstr, errstr_size) != 0) {
        return -1;
    }
    if (c->schema == NULL) { /* left out, as Debezium leaves it */
        c->key = c->included = false;
        return 0;
    }
    tb_schema_set_optional(c->schema, known == NULL || !known->not_null);
    if (known != NULL && known->default_expr != NULL) {
        tb_schema_set_default(
            c->schema,
            tb_pg_type_default(&c->type, c->schema, ctx->modes, known->default_expr));
    }
    return 0;
}

tb_pg_relation_t *tb_pg_relation_build(const tb_pg_relation_ctx_t *ctx, uint32_t oid,
                                       const char *schema_name, const char *table_name,
                                       const tb_pg_column_info_t *columns,
                                       size_t ncolumns, const tb_pg_column_info_t *info,
                                       size_t ninfo, char *errstr, size_t errstr_size)
{
    tb_pg_relation_t *r = calloc(1, sizeof(*r));
    if (r == NULL || (r->columns = calloc(ncolumns + 1, sizeof(*r->columns))) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    r->oid = oid;
    r->schema_name = strdup(schema_name);
    r->table_name = strdup(table_name);
    if (r->schema_name == NULL || r->table_name == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    size_t topic_len = strlen(ctx->prefix) + strlen(schema_name) + strlen(table_name) + 3;
    r->topic = malloc(topic_len);
    if (r->topic != NULL) {
        snprintf(r->topic, topic_len, "%s.%s.%s", ctx->prefix, schema_name, table_name);
    }
    for (size_t i = 0; i < ncolumns; i++) {
        tb_pg_column_t *c = &r->columns[r->ncolumns++];
        if (build_column(ctx, r, c, &columns[i], info_of(info, ninfo, columns[i].name),
                         errstr, errstr_size) != 0) {
            goto fail;
        }
    }
    if (r->topic == NULL || build_schemas(r, ctx) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    return r;

fail:
    tb_pg_relation_free(r);
    return NULL;
}

/* The placeholder Debezium writes for an unchanged TOASTed value, under
 * the column's schema: its text, or its bytes. */
static tb_value_t *unavailable(const tb_schema_t *schema)
{
    switch (tb_schema_type(schema)) {
    case TB_TYPE_STRING:
        return tb_value_string(UNAVAILABLE, strlen(UNAVAILABLE));
    case TB_TYPE_BYTES:
        return tb_value_bytes(UNAVAILABLE, strlen(UNAVAILABLE));
    default:
        return NULL;
    }
}

/* What Debezium writes for a null in a required column (a delete's old
 * key tuple leaves the other columns null): the field's default (Connect's
 * Struct.get() gives it for a null), else the type's zero. */
static tb_value_t *fallback(tb_schema_t *schema)
{
    static const uint8_t zero = 0;
    tb_type_t type = tb_schema_type(schema);
    if (tb_schema_default(schema) != NULL) {
        return tb_value_copy(tb_schema_default(schema));
    }
    switch (type) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
        return tb_value_int(type, 0);
    case TB_TYPE_FLOAT32:
    case TB_TYPE_FLOAT64:
        return tb_value_float(type, 0);
    case TB_TYPE_BOOLEAN:
        return tb_value_bool(false);
    case TB_TYPE_STRING:
        return tb_value_string("", 0);
    case TB_TYPE_BYTES:
        return tb_value_bytes(&zero, 1);
    case TB_TYPE_ARRAY:
        return tb_value_array();
    default: { /* VariableScaleDecimal */
        tb_value_t *v = tb_value_struct(schema);
        if (v != NULL &&
            (tb_value_struct_set(v, "scale", tb_value_int(TB_TYPE_INT32, 0)) != 0 ||
             tb_value_struct_set(v, "value", tb_value_bytes(&zero, 1)) != 0)) {
            tb_value_free(v);
            return NULL;
        }
        return v;
    }
    }
}

int tb_pg_relation_row(const tb_pg_relation_t *r, const tb_pg_modes_t *modes,
                       const tb_pg_cell_t *cells, size_t ncells, bool key,
                       tb_value_t **out, char *errstr, size_t errstr_size)
{
    char reason[256];
    tb_schema_t *schema = key ? r->key_schema : r->value_schema;
    *out = NULL;
    if (schema == NULL) {
        return 0;
    }
    tb_value_t *row = tb_value_struct(schema);
    if (row == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    /* the schema's fields are the columns it takes, in order (row_schema) */
    size_t field = 0;
    for (size_t i = 0; i < r->ncolumns && i < ncells; i++) {
        const tb_pg_column_t *c = &r->columns[i];
        tb_value_t *v = NULL;
        if (!(key ? c->key : c->included)) {
            continue;
        }
        if (cells[i].unchanged) {
            v = unavailable(c->schema);
        } else if (cells[i].data != NULL &&
                   tb_pg_type_value(&c->type, c->schema, modes, cells[i].data,
                                    cells[i].len, &v, reason, sizeof(reason)) != 0) {
            snprintf(errstr, errstr_size, "column %s.%s.%s: %s", r->schema_name,
                     r->table_name, c->name, reason);
            tb_value_free(row);
            return -1;
        }
        if (v == NULL && !tb_schema_optional(c->schema)) {
            v = fallback(c->schema);
        }
        if (tb_value_struct_set_at(row, field++, v) != 0) {
            snprintf(errstr, errstr_size, "column %s.%s.%s: out of memory",
                     r->schema_name, r->table_name, c->name);
            tb_value_free(row);
            return -1;
        }
    }
    *out = row;
    return 0;
}

tb_pg_relation_t *tb_pg_relations_find(const tb_pg_relations_t *cache, uint32_t oid)
{
    for (size_t i = 0; i < cache->count; i++) {
        if (cache->items[i]->oid == oid) {
            return cache->items[i];
        }
    }
    return NULL;
}

int tb_pg_relations_put(tb_pg_relations_t *cache, tb_pg_relation_t *r)
{
    for (size_t i = 0; i < cache->count; i++) {
        if (cache->items[i]->oid == r->oid) {
            tb_pg_relation_free(cache->items[i]);
            cache->items[i] = r;
            return 0;
        }
    }
    if (cache->count == cache->cap) {
        size_t cap = cache->cap == 0 ? 16 : cache->cap * 2;
        tb_pg_relation_t **grown = realloc(cache->items, cap * sizeof(*grown));
        if (grown == NULL) {
            tb_pg_relation_free(r);
            return -1;
        }
        cache->items = grown;
        cache->cap = cap;
    }
    cache->items[cache->count++] = r;
    return 0;
}

void tb_pg_relations_clear(tb_pg_relations_t *cache)
{
    for (size_t i = 0; i < cache->count; i++) {
        tb_pg_relation_free(cache->items[i]);
    }
    free(cache->items);
    memset(cache, 0, sizeof(*cache));
}
