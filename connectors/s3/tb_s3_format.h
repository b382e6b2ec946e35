/*
 * tb_s3_format.h - how the S3 sink writes the records of an object, as
 * Confluent's formats do: JsonFormat (Connect data as JsonConverter writes
 * it without schemas, one value a line, ".json") and ByteArrayFormat (the
 * value's bytes, each followed by format.bytearray.separator, ".bin").
 * A format only appends bytes; compression is the sink's.
 */
#ifndef TB_S3_FORMAT_H
#define TB_S3_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/runtime/tb_plugin.h"
#include "registry/tb_buf.h"

/* How an object's records are written. */
typedef struct {
    const char *extension; /* ".json", or format.bytearray.extension */
    /* Appends record to out. Returns 0, or -1 with errstr: the record
     * cannot be written in this format (record_failed gets it). */
    int (*write)(const void *options, const tb_sink_record_t *record, tb_buf_t *out,
                 char *errstr, size_t errstr_size);
} tb_s3_format_t;

extern const tb_s3_format_t tb_s3_format_json;
extern const tb_s3_format_t tb_s3_format_bytes;

/* ByteArrayFormat's options (the write() options argument). */
typedef struct {
    const char *separator; /* format.bytearray.separator, written after each */
    size_t separator_len;
} tb_s3_bytes_options_t;

#endif
