/* Debezium's transaction metadata (tb_pg_transaction.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_java_order.h"
#include "connectors/postgres/tb_pg_transaction.h"
#include "connectors/postgres/tb_pg_types.h"

#define KEY_NAME "io.debezium.connector.common.TransactionMetadataKey"
#define VALUE_NAME "io.debezium.connector.common.TransactionMetadataValue"
#define BLOCK_NAME "event.block"
#define COLLECTION_NAME "event.collection"

/* One table's events in the transaction. */
typedef struct {
    char *name; /* <schema>.<table> */
    int64_t count;
} collection_t;

struct tb_pg_transactions {
    char *topic;
    tb_schema_t *key_schema;
    tb_schema_t *value_schema;
    tb_schema_t *block_schema;
    tb_schema_t *collection_schema;
    uint32_t xid;
    int64_t total;
    collection_t *collections; /* in the order of their first event */
    size_t ncollections;
    size_t cap;
    /* the buckets of Debezium's map of the counts, which it clears at each
     * transaction and so only grows over the task's life */
    size_t buckets;
};

/* A struct schema called name, version 1, of primitive fields. */
static tb_schema_t *struct_schema(const char *name, bool is_optional,
                                  const char *const *fields, const tb_type_t *types,
                                  size_t n)
{
    tb_schema_t *s = tb_pg_named_schema(TB_TYPE_STRUCT, name);
    int rc = s == NULL;
    for (size_t i = 0; i < n; i++) {
        rc = rc || tb_schema_add_field(s, fields[i], tb_schema_new(types[i]));
    }
    if (rc) {
        tb_schema_decref(s);
        return NULL;
    }
    tb_schema_set_optional(s, is_optional);
    return s;
}

tb_schema_t *tb_pg_transaction_block_schema(void)
{
    static const char *const fields[] = {"id", "total_order", "data_collection_order"};
    static const tb_type_t types[] = {TB_TYPE_STRING, TB_TYPE_INT64, TB_TYPE_INT64};
    return struct_schema(BLOCK_NAME, true, fields, types, 3);
}

/* The value schema; event_count optional, data_collections an optional
 * array of optional event.collection structs. */
static tb_schema_t *value_schema(tb_schema_t *collection)
{
    tb_schema_t *list = tb_schema_array(tb_schema_incref(collection));
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    if (list != NULL) {
        tb_schema_set_optional(list, true);
    }
    int rc = list == NULL || s == NULL || tb_schema_set_name(s, VALUE_NAME);
    rc = rc || tb_schema_add_field(s, "status", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "id", tb_schema_new(TB_TYPE_STRING));
    rc =
        rc || tb_schema_add_field(s, "event_count", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "data_collections", tb_schema_incref(list));
    rc = rc || tb_schema_add_field(s, "ts_ms", tb_schema_new(TB_TYPE_INT64));
    tb_schema_decref(list);
    if (rc) {
        tb_schema_decref(s);
        return NULL;
    }
    tb_schema_set_version(s, true, 1);
    return s;
}

tb_pg_transactions_t *tb_pg_transactions_create(const char *topic)
{
    static const char *const key_fields[] = {"id"};
    static const tb_type_t key_types[] = {TB_TYPE_STRING};
    static const char *const collection_fields[] = {"data_collection", "event_count"};
    static const tb_type_t collection_types[] = {TB_TYPE_STRING, TB_TYPE_INT64};
    tb_pg_transactions_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->topic = strdup(topic);
    t->buckets = TB_PG_JAVA_HASHMAP_BUCKETS;
    t->key_schema = struct_schema(KEY_NAME, false, key_fields, key_types, 1);
    t->collection_schema =
        struct_schema(COLLECTION_NAME, true, collection_fields, collection_types, 2);
    t->value_schema =
        t->collection_schema != NULL ? value_schema(t->collection_schema) : NULL;
    t->block_schema = tb_pg_transaction_block_schema();
    if (t->topic == NULL || t->key_schema == NULL || t->value_schema == NULL ||
        t->block_schema == NULL) {
        tb_pg_transactions_destroy(t);
        return NULL;
    }
    return t;
}

static void forget_collections(tb_pg_transactions_t *t)
{
    for (size_t i = 0; i < t->ncollections; i++) {
        free(t->collections[i].name);
    }
    t->ncollections = 0;
    t->total = 0;
}

void tb_pg_transactions_destroy(tb_pg_transactions_t *t)
{
    if (t == NULL) {
        return;
    }
    forget_collections(t);
    free(t->collections);
    tb_schema_decref(t->key_schema);
    tb_schema_decref(t->value_schema);
    tb_schema_decref(t->block_schema);
    tb_schema_decref(t->collection_schema);
    free(t->topic);
    free(t);
}

static tb_value_t *string(const char *s)
{
    return tb_value_string(s, strlen(s));
}

static tb_value_t *int64(int64_t v)
{
    return tb_value_int(TB_TYPE_INT64, v);
}

/* The per-table counts of an END, in the order Debezium's map of them
 * iterates (tb_pg_java_order.h). */
static tb_value_t *collections_value(tb_pg_transactions_t *t)
{
    size_t n = t->ncollections;
    const char **names = calloc(n + 1, sizeof(*names));
    size_t *order = calloc(n + 1, sizeof(*order));
    tb_value_t *list = tb_value_array();
    if (names == NULL || order == NULL || list == NULL) {
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = t->collections[i].name;
    }
    t->buckets = tb_pg_java_hashmap_buckets(n, t->buckets);
    if (tb_pg_java_hashmap_sort(names, n, t->buckets, order) != 0) {
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const collection_t *c = &t->collections[order[i]];
        tb_value_t *item = tb_value_struct(t->collection_schema);
        if (item == NULL ||
            tb_value_struct_set(item, "data_collection", string(c->name)) != 0 ||
            tb_value_struct_set(item, "event_count", int64(c->count)) != 0 ||
            tb_value_array_append(list, item) != 0) {
            tb_value_free(item);
            goto fail;
        }
    }
    free(names);
    free(order);
    return list;
fail:
    free(names);
    free(order);
    tb_value_free(list);
    return NULL;
}

/* Debezium's PostgreSQL id of a record of the transaction: "<xid>:<lsn>",
 * the LSN of the message the record comes from. */
static tb_value_t *id_at(const tb_pg_transactions_t *t, uint64_t lsn)
{
    char id[48];
    snprintf(id, sizeof(id), "%" PRIu32 ":%" PRIu64, t->xid, lsn);
    return string(id);
}

/* Queues the BEGIN or END record of the current transaction. */
static int queue_marker(tb_pg_transactions_t *t, tb_pg_queue_t *queue, bool end,
                        uint64_t lsn, int64_t commit_us, const tb_pg_position_t *position)
{
    tb_value_t *key = tb_value_struct(t->key_schema);
    tb_value_t *value = tb_value_struct(t->value_schema);
    int rc = key == NULL || value == NULL;
    rc = rc || tb_value_struct_set(key, "id", id_at(t, lsn));
    rc = rc || tb_value_struct_set(value, "status", string(end ? "END" : "BEGIN"));
    rc = rc || tb_value_struct_set(value, "id", id_at(t, lsn));
    rc = rc || tb_value_struct_set(value, "ts_ms", int64(commit_us / 1000));
    if (end) {
        rc = rc || tb_value_struct_set(value, "event_count", int64(t->total));
        rc = rc || tb_value_struct_set(value, "data_collections", collections_value(t));
    }
    if (rc) {
        tb_value_free(key);
        tb_value_free(value);
        return -1;
    }
    return tb_pg_queue_push(queue, t->topic, t->key_schema, key, t->value_schema, value,
                            position);
}

int tb_pg_transactions_begin(tb_pg_transactions_t *t, tb_pg_queue_t *queue, uint32_t xid,
                             uint64_t lsn, int64_t commit_us,
                             const tb_pg_position_t *position)
{
    forget_collections(t);
    t->xid = xid;
    return queue_marker(t, queue, false, lsn, commit_us, position);
}

int tb_pg_transactions_end(tb_pg_transactions_t *t, tb_pg_queue_t *queue, uint64_t lsn,
                           int64_t commit_us, const tb_pg_position_t *position)
{
    int rc = queue_marker(t, queue, true, lsn, commit_us, position);
    forget_collections(t);
    return rc;
}

/* The count of schema.table, added when it is the table's first event. */
static collection_t *collection_of(tb_pg_transactions_t *t, const char *schema,
                                   const char *table)
{
    size_t ls = strlen(schema);
    for (size_t i = 0; i < t->ncollections; i++) {
        const char *name = t->collections[i].name;
        if (strncmp(name, schema, ls) == 0 && name[ls] == '.' &&
            strcmp(name + ls + 1, table) == 0) {
            return &t->collections[i];
        }
    }
    if (t->ncollections == t->cap) {
        size_t cap = t->cap == 0 ? 4 : t->cap * 2;
        collection_t *grown = realloc(t->collections, cap * sizeof(*grown));
        if (grown == NULL) {
            return NULL;
        }
        t->collections = grown;
        t->cap = cap;
    }
    size_t size = ls + strlen(table) + 2;
    char *name = malloc(size);
    if (name == NULL) {
        return NULL;
    }
    snprintf(name, size, "%s.%s", schema, table);
    t->collections[t->ncollections] = (collection_t){.name = name, .count = 0};
    return &t->collections[t->ncollections++];
}

tb_value_t *tb_pg_transactions_event(tb_pg_transactions_t *t, const char *schema,
                                     const char *table, uint64_t lsn)
{
    collection_t *c = collection_of(t, schema, table);
    if (c == NULL) {
        return NULL;
    }
    c->count++;
    t->total++;
    tb_value_t *block = tb_value_struct(t->block_schema);
    if (block == NULL || tb_value_struct_set(block, "id", id_at(t, lsn)) != 0 ||
        tb_value_struct_set(block, "total_order", int64(t->total)) != 0 ||
        tb_value_struct_set(block, "data_collection_order", int64(c->count)) != 0) {
        tb_value_free(block);
        return NULL;
    }
    return block;
}
