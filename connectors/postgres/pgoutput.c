/* The pgoutput protocol's messages and the replication stream's framing
 * (tb_pgoutput.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pgoutput.h"

/* A cursor over a message; any read past its end sets failed. */
typedef struct {
    const uint8_t *p;
    const uint8_t *end;
    bool failed;
} reader_t;

static bool take(reader_t *r, size_t n)
{
    if (r->failed || (size_t)(r->end - r->p) < n) {
        r->failed = true;
        return false;
    }
    return true;
}

static uint8_t read_u8(reader_t *r)
{
    return take(r, 1) ? *r->p++ : 0;
}

static uint64_t read_be(reader_t *r, size_t n)
{
    uint64_t v = 0;
    if (!take(r, n)) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        v = v << 8 | r->p[i];
    }
    r->p += n;
    return v;
}

/* A NUL-terminated string in the message, borrowed. */
static const char *read_string(reader_t *r)
{
    if (r->failed) {
        return NULL;
    }
    const uint8_t *nul = memchr(r->p, '\0', (size_t)(r->end - r->p));
    if (nul == NULL) {
        r->failed = true;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p = nul + 1;
    return s;
}

/* Makes *array hold count elements of size bytes. */
static bool reserve(void **array, size_t *cap, size_t count, size_t size)
{
    if (count <= *cap) {
        return true;
    }
    void *grown = realloc(*array, count * size);
    if (grown == NULL) {
        return false;
    }
    *array = grown;
    *cap = count;
    return true;
}

static bool read_tuple(reader_t *r, tb_pg_tuple_t *t)
{
    t->count = (uint16_t)read_be(r, 2);
    if (r->failed ||
        !reserve((void **)&t->columns, &t->cap, t->count, sizeof(*t->columns))) {
        return false;
    }
    for (uint16_t i = 0; i < t->count && !r->failed; i++) {
        tb_pg_datum_t *d = &t->columns[i];
        d->kind = (char)read_u8(r);
        d->data = NULL;
        d->len = 0;
        if (d->kind == 't') {
            d->len = (uint32_t)read_be(r, 4);
            if (take(r, d->len)) {
                d->data = (const char *)r->p;
                r->p += d->len;
            }
        } else if (d->kind != 'n' && d->kind != 'u') {
            r->failed = true; /* 'b' (binary) is not asked for */
        }
    }
    return !r->failed;
}

static bool read_relation(reader_t *r, tb_pgoutput_msg_t *m)
{
    m->relid = (uint32_t)read_be(r, 4);
    m->nspname = read_string(r);
    m->relname = read_string(r);
    m->replica_identity = (char)read_u8(r);
    m->ncolumns = (uint16_t)read_be(r, 2);
    if (r->failed || !reserve((void **)&m->columns, &m->columns_cap, m->ncolumns,
                              sizeof(*m->columns))) {
        return false;
    }
    for (uint16_t i = 0; i < m->ncolumns && !r->failed; i++) {
        tb_pg_rel_column_t *c = &m->columns[i];
        c->flags = read_u8(r);
        c->name = read_string(r);
        c->type_oid = (uint32_t)read_be(r, 4);
        c->typmod = (int32_t)(uint32_t)read_be(r, 4);
    }
    return !r->failed;
}

/* Update and Delete: the optional old tuple ('K' or 'O'), then for an
 * update 'N' and the new one. */
static bool read_change(reader_t *r, tb_pgoutput_msg_t *m)
{
    m->relid = (uint32_t)read_be(r, 4);
    char tag = (char)read_u8(r);
    m->old_kind = 0;
    if (tag == 'K' || tag == 'O') {
        m->old_kind = tag;
        if (!read_tuple(r, &m->old_tuple)) {
            return false;
        }
        if (m->kind == TB_PGOUTPUT_DELETE) {
            return true;
        }
        tag = (char)read_u8(r);
    }
    if (m->kind == TB_PGOUTPUT_DELETE || tag != 'N') {
        return false;
    }
    return read_tuple(r, &m->new_tuple);
}

static bool read_truncate(reader_t *r, tb_pgoutput_msg_t *m)
{
    m->nrelids = (uint32_t)read_be(r, 4);
    m->truncate_options = read_u8(r);
    if (r->failed || !take(r, (size_t)m->nrelids * 4) ||
        !reserve((void **)&m->relids, &m->relids_cap, m->nrelids, sizeof(*m->relids))) {
        r->failed = true;
        return false;
    }
    for (uint32_t i = 0; i < m->nrelids; i++) {
        m->relids[i] = (uint32_t)read_be(r, 4);
    }
    return !r->failed;
}

int tb_pgoutput_decode(const uint8_t *buf, size_t len, tb_pgoutput_msg_t *msg,
                       char *errstr, size_t errstr_size)
{
    reader_t r = {.p = buf, .end = buf + len};
    msg->kind = (tb_pgoutput_kind_t)read_u8(&r);
    bool ok = !r.failed;
    switch (msg->kind) {
    case TB_PGOUTPUT_BEGIN:
        msg->lsn = read_be(&r, 8);
        msg->time_us = (int64_t)read_be(&r, 8);
        msg->xid = (uint32_t)read_be(&r, 4);
        break;
    case TB_PGOUTPUT_COMMIT:
        read_u8(&r); /* flags, unused */
        msg->lsn = read_be(&r, 8);
        msg->end_lsn = read_be(&r, 8);
        msg->time_us = (int64_t)read_be(&r, 8);
        break;
    case TB_PGOUTPUT_ORIGIN:
        msg->lsn = read_be(&r, 8);
        msg->nspname = read_string(&r);
        break;
    case TB_PGOUTPUT_RELATION:
        ok = read_relation(&r, msg);
        break;
    case TB_PGOUTPUT_TYPE:
        msg->relid = (uint32_t)read_be(&r, 4);
        msg->nspname = read_string(&r);
        msg->relname = read_string(&r);
        break;
    case TB_PGOUTPUT_INSERT:
        msg->relid = (uint32_t)read_be(&r, 4);
        msg->old_kind = 0;
        ok = read_u8(&r) == 'N' && read_tuple(&r, &msg->new_tuple);
        break;
    case TB_PGOUTPUT_UPDATE:
    case TB_PGOUTPUT_DELETE:
        ok = read_change(&r, msg);
        break;
    case TB_PGOUTPUT_TRUNCATE:
        ok = read_truncate(&r, msg);
        break;
    case TB_PGOUTPUT_MESSAGE:
        break; /* logical decoding messages: not asked for, ignored */
    default:
        snprintf(errstr, errstr_size, "unknown pgoutput message kind 0x%02x",
                 (unsigned)msg->kind);
        return -1;
    }
    if (!ok || r.failed) {
        snprintf(errstr, errstr_size, "malformed pgoutput message '%c' of %zu bytes",
                 (char)msg->kind, len);
        return -1;
    }
    return 0;
}

void tb_pgoutput_msg_clear(tb_pgoutput_msg_t *msg)
{
    free(msg->columns);
    free(msg->relids);
    free(msg->old_tuple.columns);
    free(msg->new_tuple.columns);
    memset(msg, 0, sizeof(*msg));
}

int tb_pg_frame_parse(const uint8_t *buf, size_t len, tb_pg_frame_t *frame, char *errstr,
                      size_t errstr_size)
{
    reader_t r = {.p = buf, .end = buf + len};
    memset(frame, 0, sizeof(*frame));
    frame->kind = (char)read_u8(&r);
    if (frame->kind == 'w') {
        frame->wal_start = read_be(&r, 8);
        frame->wal_end = read_be(&r, 8);
        frame->send_time_us = (int64_t)read_be(&r, 8);
        frame->data = r.p;
        frame->data_len = r.failed ? 0 : (size_t)(r.end - r.p);
    } else if (frame->kind == 'k') {
        frame->wal_end = read_be(&r, 8);
        frame->send_time_us = (int64_t)read_be(&r, 8);
        frame->reply_requested = read_u8(&r) != 0;
    } else {
        snprintf(errstr, errstr_size, "unknown replication message kind 0x%02x",
                 (unsigned)(uint8_t)frame->kind);
        return -1;
    }
    if (r.failed) {
        snprintf(errstr, errstr_size, "truncated replication message '%c'", frame->kind);
        return -1;
    }
    return 0;
}

static void write_be(uint8_t *out, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[n - 1 - i] = (uint8_t)(v >> (8 * i));
    }
}

void tb_pg_status_update(uint8_t out[TB_PG_STATUS_LEN], uint64_t lsn, int64_t now_us,
                         bool reply)
{
    out[0] = 'r';
    write_be(out + 1, lsn, 8);  /* written */
    write_be(out + 9, lsn, 8);  /* flushed */
    write_be(out + 17, lsn, 8); /* applied */
    write_be(out + 25, (uint64_t)now_us, 8);
    out[33] = reply ? 1 : 0;
}

void tb_pg_lsn_format(uint64_t lsn, char *out, size_t size)
{
    snprintf(out, size, "%" PRIX32 "/%" PRIX32, (uint32_t)(lsn >> 32), (uint32_t)lsn);
}

int tb_pg_lsn_parse(const char *text, uint64_t *lsn)
{
    unsigned int hi, lo;
    int used = 0;
    if (text == NULL || sscanf(text, "%X/%X%n", &hi, &lo, &used) != 2 ||
        text[used] != '\0') {
        return -1;
    }
    *lsn = (uint64_t)hi << 32 | lo;
    return 0;
}
