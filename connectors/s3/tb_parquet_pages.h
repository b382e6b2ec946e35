/*
 * tb_parquet_pages.h - the byte-level pieces of a Parquet page
 * (s3_format_parquet.c writes the pages with them): the RLE/bit-packed
 * hybrid encoding of levels and dictionary indices, and the codecs of
 * parquet.codec (zlib's gzip, libsnappy, libzstd).
 */
#ifndef TB_PARQUET_PAGES_H
#define TB_PARQUET_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/tb_buf.h"

/* Parquet's CompressionCodec numbers of the codecs built. */
typedef enum {
    TB_PARQUET_UNCOMPRESSED = 0,
    TB_PARQUET_SNAPPY = 1,
    TB_PARQUET_GZIP = 2,
    TB_PARQUET_ZSTD = 6,
} tb_parquet_codec_t;

/* The bits a value up to max takes (0 for 0). */
int tb_parquet_bit_width(uint32_t max);

/* Appends values[0..n) in the RLE/bit-packed hybrid encoding of width
 * bits (1..16), without a length prefix: a run of 8 or more equal values
 * as an RLE run, the others bit-packed in groups of 8 (the last group
 * padded with zeros, which a reader ignores past the page's count). */
void tb_parquet_hybrid(tb_buf_t *out, const uint16_t *values, size_t n, int width);

/* Appends data[0..len) compressed with codec to out. 0, or -1 when the
 * codec failed or memory ran out. */
int tb_parquet_compress(tb_parquet_codec_t codec, const void *data, size_t len,
                        tb_buf_t *out);

#endif
