/*
 * parquet_pages.c - the RLE/bit-packed hybrid encoding and the codecs of
 * a Parquet page (tb_parquet_pages.h).
 */
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "connectors/s3/tb_parquet_pages.h"

int tb_parquet_bit_width(uint32_t max)
{
    int width = 0;
    while (max != 0) {
        width++;
        max >>= 1;
    }
    return width;
}

/* How many values from i on equal values[i]. */
static size_t run_at(const uint16_t *values, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && values[j] == values[i]) {
        j++;
    }
    return j - i;
}

/* Appends groups of 8 values from start, bit-packed least significant bit
 * first; the values past n are zeros. */
static void bit_pack(tb_buf_t *out, const uint16_t *values, size_t n, size_t start,
                     size_t groups, int width)
{
    for (size_t g = 0; g < groups; g++) {
        unsigned char packed[16] = {0}; /* 8 values of at most 16 bits */
        for (size_t k = 0; k < 8; k++) {
            size_t i = start + g * 8 + k;
            uint32_t v = i < n ? values[i] : 0;
            for (int b = 0; b < width; b++) {
                size_t bit = k * (size_t)width + (size_t)b;
                if (v & (1u << b)) {
                    packed[bit / 8] |= (unsigned char)(1u << (bit % 8));
                }
            }
        }
        tb_buf_append(out, packed, (size_t)width);
    }
}

void tb_parquet_hybrid(tb_buf_t *out, const uint16_t *values, size_t n, int width)
{
    size_t value_bytes = ((size_t)width + 7) / 8;
    size_t i = 0;
    while (i < n) {
        size_t run = run_at(values, n, i);
        if (run >= 8) {
            unsigned char v[2] = {(unsigned char)(values[i] & 0xff),
                                  (unsigned char)(values[i] >> 8)};
            tb_buf_varint(out, (uint64_t)run << 1);
            tb_buf_append(out, v, value_bytes);
            i += run;
            continue;
        }
        size_t start = i;
        size_t groups = 0;
        do {
            i += 8;
            groups++;
        } while (i < n && run_at(values, n, i) < 8);
        tb_buf_varint(out, ((uint64_t)groups << 1) | 1);
        bit_pack(out, values, n, start, groups, width);
    }
}

static int gzip(const void *data, size_t len, tb_buf_t *out)
{
    uLong bound = compressBound((uLong)len) + 32; /* and gzip's header and trailer */
    z_stream z = {0};
    if (!tb_buf_reserve(out, bound) ||
        deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        return -1;
    }
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->data + out->len;
    z.avail_out = (uInt)bound;
    int rc = deflate(&z, Z_FINISH);
    out->len += bound - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

int tb_parquet_compress(tb_parquet_codec_t codec, const void *data, size_t len,
                        tb_buf_t *out)
{
    if (codec == TB_PARQUET_UNCOMPRESSED) {
        tb_buf_append(out, data, len);
        return out->failed ? -1 : 0;
    }
    if (codec == TB_PARQUET_GZIP) {
        return gzip(data, len, out);
    }
    size_t bound = codec == TB_PARQUET_SNAPPY ? snappy_max_compressed_length(len)
                                              : ZSTD_compressBound(len);
    if (!tb_buf_reserve(out, bound)) {
        return -1;
    }
    char *to = out->data + out->len;
    if (codec == TB_PARQUET_SNAPPY) {
        size_t written = bound;
        if (snappy_compress(data, len, to, &written) != SNAPPY_OK) {
            return -1;
        }
        out->len += written;
        return 0;
    }
    size_t written = ZSTD_compress(to, bound, data, len, ZSTD_CLEVEL_DEFAULT);
    if (ZSTD_isError(written)) {
        return -1;
    }
    out->len += written;
    return 0;
}
