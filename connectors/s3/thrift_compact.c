/*
 * thrift_compact.c - Thrift's compact protocol, the part Parquet's
 * metadata needs (tb_thrift_compact.h): a field's header is the delta from
 * the previous field id in the high nibble and the type in the low one
 * (the id as a zigzag varint after a bare type byte when the delta is not
 * 1..15); integers are zigzag varints; binaries a varint length and their
 * bytes; a bool field has its value in the type (1 true, 2 false); a list
 * header has the count in the high nibble (or 0xF and a varint) and the
 * element type in the low one; a struct ends with a 0 byte.
 */
#include <string.h>

#include "connectors/s3/tb_thrift_compact.h"

#define TYPE_TRUE 1
#define TYPE_FALSE 2
#define TYPE_LIST 9

void tb_thrift_begin(tb_thrift_t *t, tb_buf_t *out)
{
    memset(t, 0, sizeof(*t));
    t->out = out;
    t->depth = 1;
}

static void put_header(tb_thrift_t *t, int16_t id, int type)
{
    int16_t *last = &t->last[t->depth];
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        tb_buf_putc(t->out, (char)((delta << 4) | type));
    } else {
        tb_buf_putc(t->out, (char)type);
        tb_buf_zigzag(t->out, id);
    }
    *last = id;
}

static void push(tb_thrift_t *t)
{
    if (t->depth >= TB_THRIFT_MAX_DEPTH) {
        t->overflow = true;
        return;
    }
    t->depth++;
    t->last[t->depth] = 0;
}

void tb_thrift_field_i32(tb_thrift_t *t, int16_t id, int32_t v)
{
    put_header(t, id, TB_THRIFT_I32);
    tb_buf_zigzag(t->out, v);
}

void tb_thrift_field_i64(tb_thrift_t *t, int16_t id, int64_t v)
{
    put_header(t, id, TB_THRIFT_I64);
    tb_buf_zigzag(t->out, v);
}

void tb_thrift_field_bool(tb_thrift_t *t, int16_t id, bool v)
{
    put_header(t, id, v ? TYPE_TRUE : TYPE_FALSE);
}

void tb_thrift_field_binary(tb_thrift_t *t, int16_t id, const void *data, size_t len)
{
    put_header(t, id, TB_THRIFT_BINARY);
    tb_buf_varint(t->out, len);
    tb_buf_append(t->out, data, len);
}

void tb_thrift_field_string(tb_thrift_t *t, int16_t id, const char *s)
{
    tb_thrift_field_binary(t, id, s, strlen(s));
}

void tb_thrift_field_struct(tb_thrift_t *t, int16_t id)
{
    put_header(t, id, TB_THRIFT_STRUCT);
    push(t);
}

void tb_thrift_field_list(tb_thrift_t *t, int16_t id, tb_thrift_type_t type, size_t count)
{
    put_header(t, id, TYPE_LIST);
    if (count < 15) {
        tb_buf_putc(t->out, (char)((count << 4) | type));
    } else {
        tb_buf_putc(t->out, (char)(0xF0 | type));
        tb_buf_varint(t->out, count);
    }
}

void tb_thrift_list_i32(tb_thrift_t *t, int32_t v)
{
    tb_buf_zigzag(t->out, v);
}

void tb_thrift_list_string(tb_thrift_t *t, const char *s)
{
    size_t len = strlen(s);
    tb_buf_varint(t->out, len);
    tb_buf_append(t->out, s, len);
}

void tb_thrift_list_struct(tb_thrift_t *t)
{
    push(t);
}

void tb_thrift_struct_end(tb_thrift_t *t)
{
    tb_buf_putc(t->out, 0);
    if (t->depth > 0) {
        t->depth--;
    } else {
        t->overflow = true;
    }
}

int tb_thrift_end(const tb_thrift_t *t)
{
    return t->out->failed || t->overflow || t->depth != 0 ? -1 : 0;
}
