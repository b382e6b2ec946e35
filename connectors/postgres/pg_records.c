/* Queued records and their offsets (tb_pg_records.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "connectors/postgres/tb_pg_records.h"
#include "core/tb_time.h"

int tb_pg_queue_push(tb_pg_queue_t *q, const char *topic, tb_schema_t *key_schema,
                     tb_value_t *key, tb_schema_t *value_schema, tb_value_t *value,
                     const tb_pg_position_t *position)
{
    if (q->head + q->count == q->cap) {
        if (q->head > 0) { /* reuse the drained front */
            memmove(q->items, q->items + q->head, q->count * sizeof(*q->items));
            q->head = 0;
        } else {
            size_t cap = q->cap == 0 ? 256 : q->cap * 2;
            tb_pg_queued_t *grown = realloc(q->items, cap * sizeof(*grown));
            if (grown == NULL) {
                tb_value_free(key);
                tb_value_free(value);
                return -1;
            }
            q->items = grown;
            q->cap = cap;
        }
    }
    tb_pg_queued_t *item = &q->items[q->head + q->count++];
    memset(item, 0, sizeof(*item));
    item->record.topic = topic;
    item->record.partition = -1;
    item->record.typed = true;
    item->record.key_schema = tb_schema_incref(key_schema);
    item->record.key_data = key;
    item->record.value_schema = tb_schema_incref(value_schema);
    item->record.value_data = value;
    item->position = *position;
    return 0;
}

int tb_pg_run_id(char out[37])
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof(b)) != 1) {
        return -1;
    }
    uint64_t ms = (uint64_t)tb_wall_ms();
    for (int i = 0; i < 6; i++) { /* 48 bits of time, big-endian */
        b[i] = (unsigned char)(ms >> (8 * (5 - i)));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x70); /* version 7 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* the RFC 4122 variant */
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
    return 0;
}

/* Appends count headers (names and values copied) to r's. -1 on no memory
 * (r unchanged). */
static int append_headers(tb_source_record_t *r, const char *const *names,
                          const char *const *values, size_t count)
{
    size_t n = r->header_count;
    tb_header_t *h = tb_headers_copy(r->headers, n, count);
    bool ok = h != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        h[n + i].name = strdup(names[i]);
        h[n + i].value = strdup(values[i]);
        h[n + i].value_len = strlen(values[i]);
        ok = h[n + i].name != NULL && h[n + i].value != NULL;
    }
    if (!ok) {
        tb_headers_free(h, h != NULL ? n + count : 0);
        return -1;
    }
    tb_headers_free(r->headers, n);
    r->headers = h;
    r->header_count = n + count;
    return 0;
}

int tb_pg_queue_tag(tb_pg_queue_t *q, size_t from, const char *name, const char *text)
{
    for (size_t i = from; i < q->count; i++) {
        if (append_headers(&q->items[q->head + i].record, &name, &text, 1) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Appends the context headers to r's. -1 on no memory (r unchanged). */
static int add_context_headers(tb_source_record_t *r, const tb_pg_context_t *context)
{
    static const char *const names[] = {
        "__debezium.context.connectorLogicalName", "__debezium.context.taskId",
        "__debezium.context.connectorName", "__debezium.context.runId"};
    const char *const values[] = {context->logical_name, "0", "postgresql",
                                  context->run_id};
    return append_headers(r, names, values, sizeof(names) / sizeof(names[0]));
}

size_t tb_pg_queue_drain(tb_pg_queue_t *q, tb_source_record_t *out, size_t max,
                         json_t *partition, bool every, const tb_pg_context_t *context)
{
    size_t n = q->count < max ? q->count : max;
    for (size_t i = 0; context != NULL && i < n; i++) {
        tb_pg_queued_t *item = &q->items[q->head + i];
        if (item->position.change_event && !item->context_done) {
            if (add_context_headers(&item->record, context) != 0) {
                return 0; /* the ones made stay queued with their record */
            }
            item->context_done = true;
        }
    }
    for (size_t i = 0; i < n; i++) {
        tb_pg_queued_t *item = &q->items[q->head + i];
        out[i] = item->record;
        if (every || i + 1 == n) {
            out[i].source_partition = json_incref(partition);
            out[i].source_offset = tb_pg_offset_json(&item->position);
        }
    }
    q->head += n;
    q->count -= n;
    if (q->count == 0) {
        q->head = 0;
    }
    return n;
}

void tb_pg_queue_clear(tb_pg_queue_t *q)
{
    for (size_t i = 0; i < q->count; i++) {
        tb_source_record_t *r = &q->items[q->head + i].record;
        tb_schema_decref(r->key_schema);
        tb_value_free(r->key_data);
        tb_schema_decref(r->value_schema);
        tb_value_free(r->value_data);
        tb_headers_free(r->headers, r->header_count);
    }
    free(q->items);
    memset(q, 0, sizeof(*q));
}

json_t *tb_pg_offset_json(const tb_pg_position_t *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "lsn", json_integer((json_int_t)p->lsn));
    json_object_set_new(o, "ts_usec", json_integer(p->ts_us));
    if (p->tx_id >= 0) {
        json_object_set_new(o, "txId", json_integer(p->tx_id));
    }
    if (p->snapshot) {
        json_object_set_new(o, "snapshot", json_string("INITIAL"));
        json_object_set_new(o, "last_snapshot_record", json_boolean(p->last_snapshot));
        json_object_set_new(o, "snapshot_completed", json_false());
        return o;
    }
    json_object_set_new(o, "lsn_proc", json_integer((json_int_t)p->lsn));
    if (p->lsn_commit != 0) {
        json_object_set_new(o, "lsn_commit", json_integer((json_int_t)p->lsn_commit));
    }
    if (p->message_type != NULL) {
        json_object_set_new(o, "messageType", json_string(p->message_type));
    }
    return o;
}

int tb_pg_offset_parse(const json_t *offset, tb_pg_position_t *p)
{
    json_t *lsn = json_object_get(offset, "lsn");
    json_t *tx = json_object_get(offset, "txId");
    json_t *commit = json_object_get(offset, "lsn_commit");
    memset(p, 0, sizeof(*p));
    if (!json_is_integer(lsn)) {
        return -1;
    }
    p->lsn = (uint64_t)json_integer_value(lsn);
    p->tx_id = json_is_integer(tx) ? json_integer_value(tx) : -1;
    p->lsn_commit = json_is_integer(commit) ? (uint64_t)json_integer_value(commit) : 0;
    p->ts_us = json_integer_value(json_object_get(offset, "ts_usec"));
    p->snapshot = json_object_get(offset, "snapshot") != NULL;
    p->last_snapshot = json_is_true(json_object_get(offset, "last_snapshot_record"));
    return 0;
}
