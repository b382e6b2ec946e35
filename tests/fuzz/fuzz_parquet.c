/*
 * libFuzzer target: the S3 sink's Parquet writer (s3_format_parquet.c) on
 * records the input makes, checked from the reader's side. The input picks
 * the codec and the row group bound, then each record of a schema of every
 * shape the writer maps (optional fields, a decimal, a timestamp, a nested
 * struct, a list with nulls, maps with string and other keys). The file must
 * be "PAR1", pages, a footer in Thrift's compact protocol and "PAR1"; the
 * footer must read whole with a reader of its own here (every field walked,
 * lengths within the file), count the records written, and place each
 * column chunk's pages inside the file before the footer. The same records
 * must give the same bytes again.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/s3/tb_parquet_pages.h"
#include "connectors/s3/tb_s3_format.h"
#include "core/tb_data.h"

#define MAX_RECORDS 64
#define MAX_ITEMS 8
#define MAX_DEPTH 32

/* ---- the input, read a byte at a time (zeros once it is spent) ---- */

typedef struct {
    const uint8_t *data;
    size_t size, at;
} input_t;

static uint8_t next(input_t *in)
{
    return in->at < in->size ? in->data[in->at++] : 0;
}

static int64_t next_i64(input_t *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = v << 8 | next(in);
    }
    return (int64_t)v;
}

/* ---- the records ---- */

static tb_schema_t *optional(tb_schema_t *s)
{
    tb_schema_set_optional(s, true);
    return s;
}

static tb_schema_t *schema_of_every_shape(void)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_t *inner = optional(tb_schema_new(TB_TYPE_STRUCT));
    tb_schema_add_field(inner, "x", tb_schema_new(TB_TYPE_INT16));
    tb_schema_add_field(inner, "y", optional(tb_schema_new(TB_TYPE_BYTES)));
    tb_schema_add_field(s, "id", tb_schema_new(TB_TYPE_INT32));
    tb_schema_add_field(s, "name", optional(tb_schema_new(TB_TYPE_STRING)));
    tb_schema_add_field(s, "flag", tb_schema_new(TB_TYPE_BOOLEAN));
    tb_schema_add_field(s, "ratio", optional(tb_schema_new(TB_TYPE_FLOAT32)));
    tb_schema_add_field(s, "price", tb_schema_decimal(3));
    tb_schema_add_field(s, "at", tb_schema_timestamp());
    tb_schema_add_field(s, "day", optional(tb_schema_date()));
    tb_schema_add_field(s, "inner", inner);
    tb_schema_add_field(s, "list",
                        tb_schema_array(optional(tb_schema_new(TB_TYPE_INT64))));
    tb_schema_add_field(
        s, "tags",
        tb_schema_map(tb_schema_new(TB_TYPE_STRING), tb_schema_new(TB_TYPE_FLOAT64)));
    tb_schema_add_field(s, "codes",
                        optional(tb_schema_map(tb_schema_new(TB_TYPE_INT32),
                                               tb_schema_new(TB_TYPE_STRING))));
    return s;
}

static tb_value_t *text_of(input_t *in)
{
    char text[16];
    size_t len = next(in) % sizeof(text);
    for (size_t i = 0; i < len; i++) {
        text[i] = (char)next(in);
    }
    return tb_value_string(text, len);
}

/* A record the input describes; each optional field absent when its byte
 * says so. */
static tb_value_t *record_of(input_t *in, tb_schema_t *s)
{
    tb_value_t *v = tb_value_struct(s);
    uint8_t present = next(in);
    tb_value_struct_set(v, "id", tb_value_int(TB_TYPE_INT32, (int32_t)next_i64(in)));
    if (present & 1) {
        tb_value_struct_set(v, "name", text_of(in));
    }
    tb_value_struct_set(v, "flag", tb_value_bool(present & 2));
    if (present & 4) {
        tb_value_struct_set(v, "ratio",
                            tb_value_float(TB_TYPE_FLOAT32, (float)next(in) / 7));
    }
    uint8_t unscaled[17];
    size_t digits = 1 + next(in) % 16;
    for (size_t i = 0; i < digits; i++) {
        unscaled[i] = next(in);
    }
    tb_value_struct_set(v, "price", tb_value_bytes(unscaled, digits));
    tb_value_struct_set(v, "at", tb_value_int(TB_TYPE_INT64, next_i64(in)));
    if (present & 8) {
        tb_value_struct_set(v, "day", tb_value_int(TB_TYPE_INT32, (int8_t)next(in)));
    }
    if (present & 16) {
        tb_value_t *inner = tb_value_struct(tb_schema_field(s, "inner")->schema);
        tb_value_struct_set(inner, "x", tb_value_int(TB_TYPE_INT16, (int8_t)next(in)));
        if (present & 32) {
            uint8_t y[3] = {next(in), next(in), next(in)};
            tb_value_struct_set(inner, "y", tb_value_bytes(y, next(in) % sizeof(y)));
        }
        tb_value_struct_set(v, "inner", inner);
    }
    tb_value_t *list = tb_value_array();
    for (size_t i = 0, n = next(in) % MAX_ITEMS; i < n; i++) {
        uint8_t item = next(in);
        tb_value_array_append(list,
                              item % 3 == 0 ? NULL : tb_value_int(TB_TYPE_INT64, item));
    }
    tb_value_struct_set(v, "list", list);
    tb_value_t *tags = tb_value_map();
    for (size_t i = 0, n = next(in) % MAX_ITEMS; i < n; i++) {
        tb_value_map_put(tags, text_of(in), tb_value_float(TB_TYPE_FLOAT64, next(in)));
    }
    tb_value_struct_set(v, "tags", tags);
    if (present & 64) {
        tb_value_t *codes = tb_value_map();
        for (size_t i = 0, n = next(in) % MAX_ITEMS; i < n; i++) {
            tb_value_map_put(codes, tb_value_int(TB_TYPE_INT32, next(in)), text_of(in));
        }
        tb_value_struct_set(v, "codes", codes);
    }
    return v;
}

/* ---- the reader's side: Thrift's compact protocol, walked whole ---- */

typedef struct {
    const uint8_t *p, *end;
    bool bad;
} reader_t;

static uint64_t varint(reader_t *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->bad = true;
            return 0;
        }
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            return v;
        }
    }
    r->bad = true;
    return 0;
}

static int64_t zigzag(reader_t *r)
{
    uint64_t v = varint(r);
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* What the footer says that the check needs. */
typedef struct {
    int64_t num_rows, row_group_rows;
    size_t row_groups, chunks;
    int64_t chunk_offset,
        chunk_size; /* the chunk being read: its first page, its bytes */
    bool chunks_inside;
    size_t footer_start;
} footer_t;

typedef enum { IN_FILE, IN_ROW_GROUP, IN_COLUMN_CHUNK, IN_COLUMN_META, IN_OTHER } where_t;

static void skip(reader_t *r, int type, int depth, footer_t *f, where_t where);

/* A struct's fields up to its stop; the ones the check needs noted. */
static void read_struct(reader_t *r, int depth, footer_t *f, where_t where)
{
    if (depth > MAX_DEPTH) {
        r->bad = true;
        return;
    }
    int id = 0;
    while (!r->bad) {
        if (r->p >= r->end) {
            r->bad = true;
            return;
        }
        uint8_t head = *r->p++;
        if (head == 0) {
            return;
        }
        int type = head & 0x0f;
        id = (head >> 4) != 0 ? id + (head >> 4) : (int)zigzag(r);
        if (type == 6 &&
            ((where == IN_FILE && id == 3) || (where == IN_ROW_GROUP && id == 3) ||
             (where == IN_COLUMN_META && (id == 7 || id == 9 || id == 11)))) {
            int64_t value = zigzag(r);
            if (where == IN_FILE) {
                f->num_rows = value;
            } else if (where == IN_ROW_GROUP) {
                f->row_group_rows += value;
            } else if (id == 7) {
                f->chunk_size = value;
            } else if (f->chunk_offset < 0 || value < f->chunk_offset) {
                f->chunk_offset = value; /* the dictionary page comes first */
            }
            continue;
        }
        where_t inner = where == IN_FILE && id == 4           ? IN_ROW_GROUP
                        : where == IN_ROW_GROUP && id == 1    ? IN_COLUMN_CHUNK
                        : where == IN_COLUMN_CHUNK && id == 3 ? IN_COLUMN_META
                                                              : IN_OTHER;
        skip(r, type, depth + 1, f, inner);
    }
}

static void skip(reader_t *r, int type, int depth, footer_t *f, where_t where)
{
    switch (type) {
    case 1: /* true */
    case 2: /* false */
        return;
    case 3: /* byte */
        r->bad = r->bad || r->p >= r->end;
        r->p += r->bad ? 0 : 1;
        return;
    case 4: /* i16 */
    case 5: /* i32 */
    case 6: /* i64 */
        (void)zigzag(r);
        return;
    case 7: /* double */
        r->bad = r->bad || r->end - r->p < 8;
        r->p += r->bad ? 0 : 8;
        return;
    case 8: { /* binary */
        uint64_t len = varint(r);
        r->bad = r->bad || len > (uint64_t)(r->end - r->p);
        r->p += r->bad ? 0 : len;
        return;
    }
    case 9:    /* list */
    case 10: { /* set */
        if (r->p >= r->end) {
            r->bad = true;
            return;
        }
        uint8_t head = *r->p++;
        uint64_t count = (head >> 4) == 15 ? varint(r) : head >> 4;
        int kind = head & 0x0f;
        for (uint64_t i = 0; i < count && !r->bad; i++) {
            if (kind == 1 || kind == 2) { /* a list's booleans take a byte each */
                skip(r, 3, depth, f, IN_OTHER);
            } else if (kind == 12) { /* the structs of a list the check reads */
                if (where == IN_COLUMN_CHUNK) {
                    f->chunk_offset = f->chunk_size = -1;
                }
                read_struct(r, depth, f, where);
                f->row_groups += where == IN_ROW_GROUP;
                if (where == IN_COLUMN_CHUNK) {
                    f->chunks++;
                    f->chunks_inside =
                        f->chunks_inside && f->chunk_offset >= 4 && f->chunk_size > 0 &&
                        (uint64_t)f->chunk_offset + (uint64_t)f->chunk_size <=
                            f->footer_start;
                }
            } else {
                skip(r, kind, depth, f, IN_OTHER);
            }
        }
        return;
    }
    case 11: { /* map */
        uint64_t count = varint(r);
        uint8_t kinds = count > 0 && r->p < r->end ? *r->p++ : 0;
        for (uint64_t i = 0; i < count && !r->bad; i++) {
            skip(r, kinds >> 4, depth, f, IN_OTHER);
            skip(r, kinds & 0x0f, depth, f, IN_OTHER);
        }
        return;
    }
    case 12:
        read_struct(r, depth, f, where);
        return;
    default:
        r->bad = true;
    }
}

/* Traps unless file is a whole Parquet file of records rows. */
static void check_file(const tb_buf_t *file, int64_t records)
{
    const uint8_t *d = (const uint8_t *)file->data;
    if (file->failed || file->len < 12 || memcmp(d, "PAR1", 4) != 0 ||
        memcmp(d + file->len - 4, "PAR1", 4) != 0) {
        abort();
    }
    const uint8_t *tail = d + file->len - 8;
    uint32_t length = tail[0] | tail[1] << 8 | tail[2] << 16 | (uint32_t)tail[3] << 24;
    if (length == 0 || length > file->len - 12) {
        abort();
    }
    footer_t f = {.chunks_inside = true, .footer_start = file->len - 8 - length};
    reader_t r = {.p = d + f.footer_start, .end = d + file->len - 8};
    read_struct(&r, 0, &f, IN_FILE);
    if (r.bad || r.p != r.end || f.num_rows != records || f.row_group_rows != records ||
        f.row_groups == 0 || f.chunks == 0 || !f.chunks_inside) {
        abort();
    }
}

/* ---- the target ---- */

/* Writes the records the input makes; returns how many, or -1 when the
 * writer refused one (none should be). */
static int64_t write_file(input_t in, tb_schema_t *s, tb_buf_t *out)
{
    static const int codecs[] = {TB_PARQUET_UNCOMPRESSED, TB_PARQUET_SNAPPY,
                                 TB_PARQUET_GZIP, TB_PARQUET_ZSTD};
    tb_s3_parquet_options_t options = {.codec = codecs[next(&in) % 4],
                                       .row_group_bytes = 64 + (size_t)next(&in) * 64};
    size_t count = 1 + next(&in) % MAX_RECORDS;
    const tb_s3_format_t *format = &tb_s3_format_parquet;
    void *state = NULL;
    char errstr[512];
    int64_t written = 0;
    for (size_t i = 0; i < count && written >= 0; i++) {
        tb_value_t *v = record_of(&in, s);
        tb_sink_record_t record = {.value_schema = s, .value_data = v};
        if ((i == 0 && format->open(&options, &record, "k", &state, out, errstr,
                                    sizeof(errstr)) != 0) ||
            format->write(&options, state, &record, out, errstr, sizeof(errstr)) != 0) {
            written = -1;
        } else {
            written++;
        }
        tb_value_free(v);
    }
    if (state != NULL && format->close(state, out) != 0) {
        written = -1;
    }
    if (state != NULL) {
        format->free(state);
    }
    return written;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tb_schema_t *schema;
    if (schema == NULL) {
        schema = schema_of_every_shape();
    }
    input_t in = {.data = data, .size = size};
    tb_buf_t first = {0}, again = {0};
    int64_t records = write_file(in, schema, &first);
    if (records < 0 || write_file(in, schema, &again) != records) {
        abort(); /* every record conforms to its schema */
    }
    check_file(&first, records);
    if (first.len != again.len || memcmp(first.data, again.data, first.len) != 0) {
        abort();
    }
    tb_buf_release(&first);
    tb_buf_release(&again);
    return 0;
}
