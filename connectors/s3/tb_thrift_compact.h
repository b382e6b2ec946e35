/*
 * tb_thrift_compact.h - a small writer of Thrift's compact protocol, for
 * the metadata of Parquet files (s3_format_parquet.c): structs, their
 * fields by id, lists, and the scalar types Parquet's metadata uses.
 *
 * The writer appends to a tb_buf_t the caller owns (a failed allocation
 * shows in its failed flag, checked once at the end). Structs nest up to
 * TB_THRIFT_MAX_DEPTH; a field id must be greater than the previous one of
 * its struct (Thrift's encoders write them in order, and so do we).
 * A struct begun with tb_thrift_field_struct() or tb_thrift_list_struct()
 * is closed with tb_thrift_struct_end(), which writes its stop byte; the
 * outermost struct is begun with tb_thrift_begin() and closed likewise.
 */
#ifndef TB_THRIFT_COMPACT_H
#define TB_THRIFT_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tb_buf.h"

#define TB_THRIFT_MAX_DEPTH 16

/* The compact protocol's element types, as a list's header names them. */
typedef enum {
    TB_THRIFT_I32 = 5,
    TB_THRIFT_I64 = 6,
    TB_THRIFT_BINARY = 8,
    TB_THRIFT_STRUCT = 12,
} tb_thrift_type_t;

typedef struct {
    tb_buf_t *out;                         /* borrowed */
    int16_t last[TB_THRIFT_MAX_DEPTH + 1]; /* the last field id of each open struct */
    int depth;                             /* open structs */
    bool overflow;                         /* nested deeper than TB_THRIFT_MAX_DEPTH */
} tb_thrift_t;

/* Begins the outermost struct, written to out. */
void tb_thrift_begin(tb_thrift_t *t, tb_buf_t *out);

/* Fields of the struct being written. */
void tb_thrift_field_i32(tb_thrift_t *t, int16_t id, int32_t v);
void tb_thrift_field_i64(tb_thrift_t *t, int16_t id, int64_t v);
void tb_thrift_field_bool(tb_thrift_t *t, int16_t id, bool v);
void tb_thrift_field_binary(tb_thrift_t *t, int16_t id, const void *data, size_t len);
void tb_thrift_field_string(tb_thrift_t *t, int16_t id, const char *s);
/* Begins a struct-typed field (closed with tb_thrift_struct_end()). */
void tb_thrift_field_struct(tb_thrift_t *t, int16_t id);
/* Begins a list-typed field of count elements of type, which follow. */
void tb_thrift_field_list(tb_thrift_t *t, int16_t id, tb_thrift_type_t type,
                          size_t count);

/* Elements of a list. */
void tb_thrift_list_i32(tb_thrift_t *t, int32_t v);
void tb_thrift_list_string(tb_thrift_t *t, const char *s);
/* Begins a struct element (closed with tb_thrift_struct_end()). */
void tb_thrift_list_struct(tb_thrift_t *t);

/* Ends the innermost open struct. */
void tb_thrift_struct_end(tb_thrift_t *t);

/* 0 when everything was written and every struct closed; -1 when memory
 * ran out or the nesting was wrong. */
int tb_thrift_end(const tb_thrift_t *t);

#endif
