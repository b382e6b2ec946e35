/* Change events (tb_pg_events.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "connectors/postgres/tb_pg_envelope.h"
#include "connectors/postgres/tb_pg_events.h"
#include "core/tb_buf.h"
#include "core/tb_time.h"

/* Debezium's source.sequence: ["<the last commit's end LSN>","<LSN>"], with
 * null while no commit was read since the stream's start (a snapshot's
 * rows, the first transaction after it or after the slot's creation). */
static char *put_lsn(char *out, uint64_t lsn)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + lsn % 10);
        lsn /= 10;
    } while (lsn != 0);
    *out++ = '"';
    while (n > 0) {
        *out++ = digits[--n];
    }
    *out++ = '"';
    return out;
}

/* Into out, of at least SEQUENCE_SIZE bytes (per record: no printf). */
#define SEQUENCE_SIZE 64
static void sequence_text(const tb_pg_position_t *p, char *out)
{
    *out++ = '[';
    if (p->commit_known) {
        out = put_lsn(out, p->lsn_commit);
    } else {
        memcpy(out, "null", 4);
        out += 4;
    }
    *out++ = ',';
    out = put_lsn(out, p->lsn);
    *out++ = ']';
    *out = '\0';
}

static tb_value_t *source_block(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                                const tb_pg_position_t *p, const char *marker)
{
    char sequence[SEQUENCE_SIZE];
    sequence_text(p, sequence);
    tb_pg_source_t info = {.name = ev->options->prefix,
                           .db = ev->options->dbname,
                           .schema = r->schema_name,
                           .table = r->table_name,
                           .snapshot = marker,
                           .sequence = sequence,
                           .ts_us = p->ts_us,
                           .tx_id = p->tx_id,
                           .lsn = (int64_t)p->lsn,
                           .xmin = -1};
    return tb_pg_source_value(ev->source_schema, &info);
}

static int64_t now_us(void)
{
    return tb_wall_ms() * 1000;
}

/* The envelope of op (before and after stolen), counted in its
 * transaction when there is transaction metadata. NULL on no memory. */
static tb_value_t *envelope_of(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                               char op, tb_value_t *before, tb_value_t *after,
                               const tb_pg_position_t *p, const char *marker)
{
    tb_value_t *transaction = NULL;
    if (ev->transactions != NULL && !p->snapshot &&
        (transaction = tb_pg_transactions_event(ev->transactions, r->schema_name,
                                                r->table_name, p->lsn)) == NULL) {
        tb_value_free(before);
        tb_value_free(after);
        return NULL;
    }
    return tb_pg_envelope_value(r->envelope_schema, op, before, after,
                                source_block(ev, r, p, marker), transaction, now_us());
}

/* Queues the envelope of op with key (stolen; NULL when r has no key). */
static int queue_envelope(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                          const char *topic, char op, tb_value_t *key, tb_value_t *before,
                          tb_value_t *after, const tb_pg_position_t *p,
                          const char *marker)
{
    tb_value_t *envelope = envelope_of(ev, r, op, before, after, p, marker);
    if (envelope == NULL) {
        tb_value_free(key);
        return -1;
    }
    return tb_pg_queue_push(ev->queue, topic, r->key_schema, key, r->envelope_schema,
                            envelope, p);
}

static int queue_delete(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                        const char *topic, tb_value_t *key, tb_value_t *before,
                        const tb_pg_position_t *p, const char *marker)
{
    if (ev->options->skipped & TB_PG_SKIP_DELETE) {
        tb_value_free(key);
        tb_value_free(before);
        return 0;
    }
    tb_value_t *tombstone_key = ev->options->tombstones ? tb_value_copy(key) : NULL;
    if (queue_envelope(ev, r, topic, 'd', key, before, NULL, p, marker) != 0) {
        tb_value_free(tombstone_key);
        return -1;
    }
    if (!ev->options->tombstones) {
        return 0;
    }
    return tb_pg_queue_push(ev->queue, topic, r->key_schema, tombstone_key, NULL, NULL,
                            p);
}

/* A Decimal's text as Java's BigDecimal.toString() writes it, when that
 * has no exponent (scale >= 0 and the adjusted exponent >= -6); else
 * false. */
static bool decimal_text(tb_buf_t *b, const tb_value_t *v, const tb_schema_t *schema)
{
    size_t len = 0;
    const char *unscaled = tb_value_text(v, &len);
    int scale = tb_decimal_scale(schema);
    char *text = scale >= 0 ? tb_decimal_text(unscaled, len, scale) : NULL;
    if (text == NULL) {
        return false;
    }
    long digits = 0; /* of the unscaled value, without leading zeros, at least 1 */
    for (const char *c = text; *c != '\0'; c++) {
        digits += (*c >= '1' && *c <= '9') || (digits > 0 && *c == '0');
    }
    bool plain = (digits > 0 ? digits : 1) - 1 - scale >= -6;
    if (plain) {
        tb_buf_puts(b, text);
    }
    free(text);
    return plain;
}

/* Connect's text of v under schema (Values.convertToString(), as
 * SimpleHeaderConverter writes a header's Struct) into b: numbers,
 * booleans, strings (quoted and escaped inside a struct), bytes in base64,
 * structs as {"field":value,...}. False for what Java would spell in a way
 * not reproduced here: a float, Connect's Date, Time and Timestamp, a
 * Decimal with an exponent, an array, a map. */
static bool connect_text(tb_buf_t *b, const tb_value_t *v, const tb_schema_t *schema,
                         bool embedded)
{
    if (v == NULL) {
        tb_buf_puts(b, "null");
        return true;
    }
    if (tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
        return decimal_text(b, v, schema);
    }
    if (tb_schema_is_logical(schema, TB_LOGICAL_DATE) ||
        tb_schema_is_logical(schema, TB_LOGICAL_TIME) ||
        tb_schema_is_logical(schema, TB_LOGICAL_TIMESTAMP)) {
        return false;
    }
    size_t len = 0;
    switch (tb_value_type(v)) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
        tb_buf_printf(b, "%lld", (long long)tb_value_int64(v));
        return true;
    case TB_TYPE_BOOLEAN:
        tb_buf_puts(b, tb_value_boolean(v) ? "true" : "false");
        return true;
    case TB_TYPE_STRING: {
        const char *text = tb_value_text(v, &len);
        if (embedded) {
            tb_buf_putc(b, '"');
        }
        for (size_t i = 0; i < len; i++) {
            if (embedded && (text[i] == '\\' || text[i] == '"')) {
                tb_buf_putc(b, '\\');
            }
            tb_buf_putc(b, text[i]);
        }
        if (embedded) {
            tb_buf_putc(b, '"');
        }
        return true;
    }
    case TB_TYPE_BYTES: {
        const unsigned char *bytes = (const unsigned char *)tb_value_text(v, &len);
        if (len > (size_t)(INT32_MAX / 4 * 3) ||
            !tb_buf_reserve(b, 4 * (len / 3 + 1) + 2)) {
            return false;
        }
        if (embedded) {
            tb_buf_putc(b, '"');
        }
        b->len +=
            (size_t)EVP_EncodeBlock((unsigned char *)b->data + b->len, bytes, (int)len);
        if (embedded) {
            tb_buf_putc(b, '"');
        }
        return true;
    }
    case TB_TYPE_STRUCT:
        tb_buf_putc(b, '{');
        for (size_t i = 0; i < tb_schema_field_count(schema); i++) {
            const tb_field_t *f = tb_schema_field_at(schema, i);
            tb_buf_printf(b, "%s\"", i > 0 ? "," : "");
            tb_buf_puts(b, f->name); /* a column's name, as Connect: not escaped */
            tb_buf_puts(b, "\":");
            if (!connect_text(b, tb_value_struct_get_at(v, i), f->schema, true)) {
                return false;
            }
        }
        tb_buf_putc(b, '}');
        return true;
    default:
        return false;
    }
}

/* Connect's text of key for Debezium's header name on the records of a
 * key change, malloc'd; NULL when it is not reproduced (logged once: the
 * records go without it) or on no memory (*failed set). */
static char *key_header_text(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                             const char *name, const tb_value_t *key, bool *failed)
{
    tb_buf_t b = {0};
    if (!connect_text(&b, key, r->key_schema, false)) {
        *failed |= b.failed;
        tb_buf_release(&b);
        if (!*failed && ev->notice != NULL) {
            char column[300], what[300];
            snprintf(column, sizeof(column), "%s.%s (the primary key)", r->schema_name,
                     r->table_name);
            snprintf(what, sizeof(what),
                     "a key change goes without Debezium's header %s: tributary does not "
                     "spell a float, a Connect time or a Decimal with an exponent as "
                     "Java does",
                     name);
            ev->notice(ev->notice_arg, column, what);
        }
        return NULL;
    }
    char *text = tb_buf_take(&b, NULL);
    *failed |= text == NULL;
    return text;
}

/* The key and value structs of cells; -1 with errstr. */
static int read_row(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                    const tb_pg_cell_t *cells, size_t n, tb_value_t **key,
                    tb_value_t **value, char *errstr, size_t errstr_size)
{
    *key = *value = NULL;
    if (tb_pg_relation_row(r, &ev->options->modes, cells, n, true, key, errstr,
                           errstr_size) != 0 ||
        tb_pg_relation_row(r, &ev->options->modes, cells, n, false, value, errstr,
                           errstr_size) != 0) {
        tb_value_free(*key);
        *key = NULL;
        return -1;
    }
    return 0;
}

int tb_pg_event_change(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                       const char *topic, const tb_pg_change_t *c,
                       const tb_pg_position_t *p, char *errstr, size_t errstr_size)
{
    tb_value_t *old_key = NULL, *before = NULL, *key = NULL, *after = NULL;
    int rc = 0;
    if ((c->op == 'c' && (ev->options->skipped & TB_PG_SKIP_CREATE)) ||
        (c->op == 'u' && (ev->options->skipped & TB_PG_SKIP_UPDATE) &&
         c->before == NULL)) {
        return 0;
    }
    if (c->before != NULL && read_row(ev, r, c->before, c->nbefore, &old_key, &before,
                                      errstr, errstr_size) != 0) {
        return -1;
    }
    if (c->after != NULL &&
        read_row(ev, r, c->after, c->nafter, &key, &after, errstr, errstr_size) != 0) {
        tb_value_free(old_key);
        tb_value_free(before);
        return -1;
    }
    if (c->op == 'd') {
        return queue_delete(ev, r, topic, old_key, before, p, c->marker) == 0 ? 0 : -1;
    }
    if (c->op == 'u' && old_key != NULL && !tb_value_equal(old_key, key)) {
        /* the primary key changed: a delete of the old, a create of the new,
         * each with Debezium's header holding the other key */
        bool failed = false;
        char *new_text = key_header_text(ev, r, "__debezium.newkey", key, &failed);
        char *old_text = key_header_text(ev, r, "__debezium.oldkey", old_key, &failed);
        size_t from = ev->queue->count;
        rc = queue_delete(ev, r, topic, old_key, before, p, c->marker);
        if (rc == 0 && new_text != NULL) {
            rc = tb_pg_queue_tag(ev->queue, from, "__debezium.newkey", new_text);
        }
        from = ev->queue->count;
        if (rc == 0 && !(ev->options->skipped & TB_PG_SKIP_CREATE)) {
            rc = queue_envelope(ev, r, topic, 'c', key, NULL, after, p, c->marker);
            if (rc == 0 && old_text != NULL) {
                rc = tb_pg_queue_tag(ev->queue, from, "__debezium.oldkey", old_text);
            }
        } else {
            tb_value_free(key);
            tb_value_free(after);
        }
        free(new_text);
        free(old_text);
        return failed ? -1 : rc;
    }
    tb_value_free(old_key);
    if (c->op == 'u' && (ev->options->skipped & TB_PG_SKIP_UPDATE)) {
        tb_value_free(before);
        tb_value_free(key);
        tb_value_free(after);
        return 0;
    }
    return queue_envelope(ev, r, topic, c->op, key, before, after, p, c->marker);
}

int tb_pg_event_truncate(const tb_pg_events_t *ev, const tb_pg_relation_t *r,
                         const char *topic, const tb_pg_position_t *p, char *errstr,
                         size_t errstr_size)
{
    if (ev->options->skipped & TB_PG_SKIP_TRUNCATE) {
        return 0;
    }
    tb_value_t *envelope = envelope_of(ev, r, 't', NULL, NULL, p, "false");
    if (envelope == NULL || tb_pg_queue_push(ev->queue, topic, NULL, NULL,
                                             r->envelope_schema, envelope, p) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}
