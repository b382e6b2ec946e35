/*
 * The S3 sink's Parquet writer: the Thrift compact encoder and the hybrid
 * level encoding against bytes worked out by hand from their specs, the
 * codecs round-tripped through their libraries' decoders, and
 * ParquetFormat's file shape (magic, footer length, what it refuses).
 * Readers of the files themselves (pyarrow, DuckDB) are in
 * tests/integration/test_sink_s3_parquet.py.
 */
#include "tb_test.h"

#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "connectors/s3/tb_parquet_pages.h"
#include "connectors/s3/tb_s3_format.h"
#include "connectors/s3/tb_thrift_compact.h"
#include "core/tb_data.h"

static void assert_bytes(const tb_buf_t *b, const unsigned char *want, size_t len)
{
    assert_false(b->failed);
    assert_int_equal(b->len, len);
    assert_memory_equal(b->data, want, len);
}

static void test_thrift_fields(void **state)
{
    (void)state;
    tb_buf_t out = {0};
    tb_thrift_t t;
    tb_thrift_begin(&t, &out);
    tb_thrift_field_i32(&t, 1, 1);       /* delta 1, i32: 0x15, zigzag 2 */
    tb_thrift_field_string(&t, 4, "ab"); /* delta 3, binary: 0x38 */
    tb_thrift_field_struct(&t, 10);      /* delta 6, struct: 0x6c */
    tb_thrift_field_bool(&t, 1, true);   /* the value in the type: 0x11 */
    tb_thrift_field_bool(&t, 2, false);  /* 0x12 */
    tb_thrift_struct_end(&t);
    tb_thrift_field_i64(&t, 30, -1); /* delta 20: a bare type, the id zigzag 60 */
    tb_thrift_field_list(&t, 31, TB_THRIFT_I32, 3);
    tb_thrift_list_i32(&t, 0);
    tb_thrift_list_i32(&t, -2);
    tb_thrift_list_i32(&t, 300); /* zigzag 600: 0xd8 0x04 */
    tb_thrift_struct_end(&t);
    assert_int_equal(tb_thrift_end(&t), 0);
    static const unsigned char want[] = {0x15, 0x02, 0x38, 0x02, 'a',  'b',  0x6c,
                                         0x11, 0x12, 0x00, 0x06, 0x3c, 0x01, 0x19,
                                         0x35, 0x00, 0x03, 0xd8, 0x04, 0x00};
    assert_bytes(&out, want, sizeof(want));
    tb_buf_release(&out);
}

static void test_thrift_long_list_of_structs(void **state)
{
    (void)state;
    tb_buf_t out = {0};
    tb_thrift_t t;
    tb_thrift_begin(&t, &out);
    tb_thrift_field_list(&t, 2, TB_THRIFT_STRUCT, 15); /* 15 and up: 0xfc, varint */
    for (int i = 0; i < 15; i++) {
        tb_thrift_list_struct(&t);
        tb_thrift_field_i32(&t, 1, i == 14 ? -1 : 0); /* each struct's own last id */
        tb_thrift_struct_end(&t);
    }
    tb_thrift_field_list(&t, 3, TB_THRIFT_BINARY, 1);
    tb_thrift_list_string(&t, "x");
    tb_thrift_struct_end(&t);
    assert_int_equal(tb_thrift_end(&t), 0);
    unsigned char want[3 + 15 * 3 + 5];
    size_t n = 0;
    want[n++] = 0x29;
    want[n++] = 0xfc;
    want[n++] = 0x0f;
    for (int i = 0; i < 15; i++) {
        want[n++] = 0x15;
        want[n++] = i == 14 ? 0x01 : 0x00;
        want[n++] = 0x00;
    }
    want[n++] = 0x19;
    want[n++] = 0x18;
    want[n++] = 0x01;
    want[n++] = 'x';
    want[n++] = 0x00;
    assert_bytes(&out, want, n);
    tb_buf_release(&out);
}

static void test_thrift_unbalanced_is_an_error(void **state)
{
    (void)state;
    tb_buf_t out = {0};
    tb_thrift_t t;
    tb_thrift_begin(&t, &out);
    tb_thrift_field_struct(&t, 1);
    tb_thrift_struct_end(&t);
    assert_int_equal(tb_thrift_end(&t), -1); /* the outermost struct is still open */
    tb_buf_release(&out);
}

static void test_hybrid_runs_and_packs(void **state)
{
    (void)state;
    tb_buf_t out = {0};
    static const uint16_t ones[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    tb_parquet_hybrid(&out, ones, 10, 1); /* an RLE run: varint 10 << 1, one byte */
    static const unsigned char want_run[] = {0x14, 0x01};
    assert_bytes(&out, want_run, sizeof(want_run));

    out.len = 0;
    static const uint16_t four[4] = {0, 1, 2, 3};
    tb_parquet_hybrid(&out, four, 4, 2); /* one bit-packed group, padded with zeros */
    static const unsigned char want_packed[] = {0x03, 0xe4, 0x00};
    assert_bytes(&out, want_packed, sizeof(want_packed));

    out.len = 0;
    static const uint16_t mixed[12] = {5, 5, 5, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    tb_parquet_hybrid(&out, mixed, 12, 3); /* two groups: no run starts on a group */
    static const unsigned char want_mixed[] = {0x05, 0x6d, 0xff, 0xff, 0xff, 0x0f, 0x00};
    assert_bytes(&out, want_mixed, sizeof(want_mixed));

    out.len = 0;
    uint16_t then_run[24];
    for (int i = 0; i < 24; i++) {
        then_run[i] = i < 8 ? (uint16_t)i : 300;
    }
    tb_parquet_hybrid(&out, then_run, 24, 9); /* a group, then a run of 16 */
    assert_int_equal(out.len, 1 + 9 + 1 + 2);
    assert_int_equal((unsigned char)out.data[0], 0x03);
    assert_int_equal((unsigned char)out.data[10], 16 << 1);
    assert_int_equal((unsigned char)out.data[11], 300 & 0xff);
    assert_int_equal((unsigned char)out.data[12], 300 >> 8);
    tb_buf_release(&out);
}

static void test_bit_width(void **state)
{
    (void)state;
    assert_int_equal(tb_parquet_bit_width(0), 0);
    assert_int_equal(tb_parquet_bit_width(1), 1);
    assert_int_equal(tb_parquet_bit_width(3), 2);
    assert_int_equal(tb_parquet_bit_width(4), 3);
    assert_int_equal(tb_parquet_bit_width(65535), 16);
}

static void test_codecs_round_trip(void **state)
{
    (void)state;
    char text[4096];
    for (size_t i = 0; i < sizeof(text); i++) {
        text[i] = (char)('a' + (i * 7 % 13));
    }
    static const tb_parquet_codec_t codecs[] = {
        TB_PARQUET_UNCOMPRESSED, TB_PARQUET_SNAPPY, TB_PARQUET_GZIP, TB_PARQUET_ZSTD};
    for (size_t c = 0; c < 4; c++) {
        tb_buf_t out = {0};
        tb_buf_append(&out, "head", 4); /* appended after what is there */
        assert_int_equal(tb_parquet_compress(codecs[c], text, sizeof(text), &out), 0);
        char back[sizeof(text)];
        size_t len = sizeof(back);
        const char *packed = out.data + 4;
        size_t packed_len = out.len - 4;
        if (codecs[c] == TB_PARQUET_UNCOMPRESSED) {
            assert_int_equal(packed_len, sizeof(text));
            memcpy(back, packed, packed_len);
        } else if (codecs[c] == TB_PARQUET_SNAPPY) {
            assert_int_equal(snappy_uncompress(packed, packed_len, back, &len),
                             SNAPPY_OK);
        } else if (codecs[c] == TB_PARQUET_GZIP) {
            assert_int_equal((unsigned char)packed[0], 0x1f); /* gzip's, not zlib's */
            z_stream z = {0};
            assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
            z.next_in = (Bytef *)packed;
            z.avail_in = (uInt)packed_len;
            z.next_out = (Bytef *)back;
            z.avail_out = sizeof(back);
            assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
            inflateEnd(&z);
        } else {
            len = ZSTD_decompress(back, sizeof(back), packed, packed_len);
            assert_int_equal(len, sizeof(text));
        }
        assert_memory_equal(back, text, sizeof(text));
        assert_memory_equal(out.data, "head", 4);
        tb_buf_release(&out);
    }
}

/* A schema of every kind of field ParquetFormat maps. */
static tb_schema_t *wide_schema(void)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_t *opt = tb_schema_new(TB_TYPE_STRING);
    tb_schema_set_optional(opt, true);
    tb_schema_t *inner = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_add_field(inner, "x", tb_schema_new(TB_TYPE_INT16));
    tb_schema_set_optional(inner, true);
    tb_schema_t *items = tb_schema_new(TB_TYPE_INT64);
    tb_schema_set_optional(items, true);
    assert_int_equal(tb_schema_add_field(s, "id", tb_schema_new(TB_TYPE_INT32)), 0);
    assert_int_equal(tb_schema_add_field(s, "name", opt), 0);
    assert_int_equal(tb_schema_add_field(s, "flag", tb_schema_new(TB_TYPE_BOOLEAN)), 0);
    assert_int_equal(tb_schema_add_field(s, "price", tb_schema_decimal(2)), 0);
    assert_int_equal(tb_schema_add_field(s, "at", tb_schema_timestamp()), 0);
    assert_int_equal(tb_schema_add_field(s, "inner", inner), 0);
    assert_int_equal(tb_schema_add_field(s, "list", tb_schema_array(items)), 0);
    assert_int_equal(tb_schema_add_field(s, "tags",
                                         tb_schema_map(tb_schema_new(TB_TYPE_STRING),
                                                       tb_schema_new(TB_TYPE_FLOAT64))),
                     0);
    assert_int_equal(tb_schema_add_field(s, "codes",
                                         tb_schema_map(tb_schema_new(TB_TYPE_INT32),
                                                       tb_schema_new(TB_TYPE_STRING))),
                     0);
    return s;
}

static tb_value_t *wide_value(tb_schema_t *s, int i)
{
    tb_value_t *v = tb_value_struct(s);
    tb_value_struct_set(v, "id", tb_value_int(TB_TYPE_INT32, i));
    if (i % 2 == 0) {
        tb_value_struct_set(v, "name", tb_value_string("even", 4));
    }
    tb_value_struct_set(v, "flag", tb_value_bool(i % 3 == 0));
    unsigned char cents[2] = {0x01, (unsigned char)i};
    tb_value_struct_set(v, "price", tb_value_bytes(cents, 2));
    tb_value_struct_set(v, "at", tb_value_int(TB_TYPE_INT64, 1700000000000 + i));
    tb_value_t *list = tb_value_array();
    for (int k = 0; k < i % 4; k++) {
        tb_value_array_append(list, k == 1 ? NULL : tb_value_int(TB_TYPE_INT64, k));
    }
    tb_value_struct_set(v, "list", list);
    tb_value_t *tags = tb_value_map();
    tb_value_map_put(tags, tb_value_string("a", 1), tb_value_float(TB_TYPE_FLOAT64, i));
    tb_value_struct_set(v, "tags", tags);
    tb_value_t *codes = tb_value_map();
    tb_value_map_put(codes, tb_value_int(TB_TYPE_INT32, i), tb_value_string("c", 1));
    tb_value_struct_set(v, "codes", codes);
    return v;
}

/* A whole file of n records through the format, row groups of bound
 * bytes. */
static void write_file(tb_schema_t *s, int n, size_t bound, tb_buf_t *out)
{
    tb_s3_parquet_options_t options = {.codec = TB_PARQUET_SNAPPY,
                                       .row_group_bytes = bound};
    const tb_s3_format_t *f = &tb_s3_format_parquet;
    void *st = NULL;
    char errstr[512];
    for (int i = 0; i < n; i++) {
        tb_value_t *v = wide_value(s, i);
        tb_sink_record_t r = {.value_schema = s, .value_data = v};
        if (i == 0) {
            if (f->open(&options, &r, "k", &st, out, errstr, sizeof(errstr)) != 0) {
                fail_msg("%s", errstr);
            }
        }
        assert_true(f->fits(st, &r));
        int rc = f->write(&options, st, &r, out, errstr, sizeof(errstr));
        if (rc != 0) {
            fail_msg("%s", errstr);
        }
        tb_value_free(v);
    }
    assert_int_equal(f->close(st, out), 0);
    f->free(st);
}

static void test_file_shape(void **state)
{
    (void)state;
    tb_schema_t *s = wide_schema();
    tb_buf_t small = {0}, again = {0}, large = {0};
    write_file(s, 500, 1024, &small); /* many row groups */
    write_file(s, 500, 1024, &again);
    write_file(s, 500, 1 << 24, &large); /* one */
    assert_false(small.failed);
    assert_memory_equal(small.data, "PAR1", 4);
    assert_memory_equal(small.data + small.len - 4, "PAR1", 4);
    const unsigned char *tail = (const unsigned char *)small.data + small.len - 8;
    uint32_t footer = tail[0] | tail[1] << 8 | tail[2] << 16 | (uint32_t)tail[3] << 24;
    assert_true(footer > 0 && footer < small.len - 12);
    /* the same records give the same bytes: an object written again after
     * a restart is the same object */
    assert_int_equal(small.len, again.len);
    assert_memory_equal(small.data, again.data, small.len);
    assert_true(large.len < small.len);
    tb_buf_release(&small);
    tb_buf_release(&again);
    tb_buf_release(&large);
    tb_schema_decref(s);
}

static void test_refuses_what_it_cannot_write(void **state)
{
    (void)state;
    tb_s3_parquet_options_t options = {.codec = TB_PARQUET_UNCOMPRESSED,
                                       .row_group_bytes = 1024};
    const tb_s3_format_t *f = &tb_s3_format_parquet;
    char errstr[512];
    void *st = NULL;
    tb_buf_t out = {0};

    tb_sink_record_t schemaless = {.value = "x", .value_len = 1};
    assert_int_equal(
        f->open(&options, &schemaless, "k", &st, &out, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "format.class ParquetFormat"));
    assert_non_null(strstr(errstr, "no schema"));

    tb_schema_t *empty = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_t *outer = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_add_field(outer, "e", empty);
    tb_value_t *v = tb_value_struct(outer);
    tb_sink_record_t r = {.value_schema = outer, .value_data = v};
    assert_int_equal(f->open(&options, &r, "k", &st, &out, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "field e"));
    tb_value_free(v);
    tb_schema_decref(outer);

    /* a record that does not conform is refused, and what was written stays */
    tb_schema_t *s = wide_schema();
    tb_value_t *good = wide_value(s, 1);
    tb_value_t *bad = wide_value(s, 2);
    tb_value_struct_set(bad, "id", NULL);
    tb_sink_record_t g = {.value_schema = s, .value_data = good};
    tb_sink_record_t b = {.value_schema = s, .value_data = bad};
    assert_int_equal(f->open(&options, &g, "k", &st, &out, errstr, sizeof(errstr)), 0);
    assert_int_equal(f->write(&options, st, &g, &out, errstr, sizeof(errstr)), 0);
    assert_int_equal(f->write(&options, st, &b, &out, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "id"));
    assert_int_equal(f->close(st, &out), 0);
    f->free(st);
    tb_value_free(good);
    tb_value_free(bad);
    tb_schema_decref(s);
    tb_buf_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thrift_fields),
        cmocka_unit_test(test_thrift_long_list_of_structs),
        cmocka_unit_test(test_thrift_unbalanced_is_an_error),
        cmocka_unit_test(test_hybrid_runs_and_packs),
        cmocka_unit_test(test_bit_width),
        cmocka_unit_test(test_codecs_round_trip),
        cmocka_unit_test(test_file_shape),
        cmocka_unit_test(test_refuses_what_it_cannot_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
