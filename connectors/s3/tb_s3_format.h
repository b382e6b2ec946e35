/*
 * tb_s3_format.h - how the S3 sink writes the records of an object, as
 * Confluent's formats do: JsonFormat (Connect data as JsonConverter writes
 * it without schemas, one value a line, ".json"), ByteArrayFormat (the
 * value's bytes, each followed by format.bytearray.separator, ".bin") and
 * AvroFormat (an Avro object container file of the values, ".avro") and
 * ParquetFormat (a Parquet file of the values, ".parquet").
 * A format only appends bytes; s3.compression.type is the sink's.
 * The keys and the headers of store.kafka.keys and store.kafka.headers
 * come to a format as the value of a record (s3_sink.c's record views), so
 * "value" below reads "what the object holds".
 */
#ifndef TB_S3_FORMAT_H
#define TB_S3_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/tb_plugin.h"
#include "core/tb_buf.h"

/* How an object's records are written. Only write is required; a format
 * that keeps state per object (AvroFormat: its schema, its block) has the
 * others. options is the format's own (below), NULL for JsonFormat. */
typedef struct {
    const char *extension; /* ".json", ".avro", or format.bytearray.extension */
    /* Begins an object whose first record is first, named key: *state gets
     * the format's state of it, and what the object starts with (a header)
     * is appended to out. 0, or -1 with errstr: the record cannot be
     * written in this format (record_failed gets it). */
    int (*open)(const void *options, const tb_sink_record_t *first, const char *key,
                void **state, tb_buf_t *out, char *errstr, size_t errstr_size);
    /* Whether record may join the object of state (its schema is the
     * object's); when not, the objects are rotated first. */
    bool (*fits)(const void *state, const tb_sink_record_t *record);
    /* Appends record (its bytes, or what of it is ready) to out. 0, or -1
     * with errstr: the record cannot be written (record_failed gets it). */
    int (*write)(const void *options, void *state, const tb_sink_record_t *record,
                 tb_buf_t *out, char *errstr, size_t errstr_size);
    /* Appends what the object still lacks to be whole (a last block). 0, or
     * -1 on no memory. */
    int (*close)(void *state, tb_buf_t *out);
    /* Frees state. */
    void (*free)(void *state);
    /* The bytes state holds of its object that are not in out yet
     * (ParquetFormat: its row group), for tributary_s3_buffered_bytes. */
    size_t (*held)(const void *state);
} tb_s3_format_t;

extern const tb_s3_format_t tb_s3_format_json;
extern const tb_s3_format_t tb_s3_format_bytes;
extern const tb_s3_format_t tb_s3_format_avro;
extern const tb_s3_format_t tb_s3_format_parquet;

/* ByteArrayFormat's options. */
typedef struct {
    const char *separator; /* format.bytearray.separator, written after each */
    size_t separator_len;
} tb_s3_bytes_options_t;

/* AvroFormat's options. */
typedef struct {
    bool deflate; /* avro.codec=deflate, else null */
} tb_s3_avro_options_t;

/* ParquetFormat's options. */
typedef struct {
    int codec;              /* parquet.codec: a tb_parquet_codec_t */
    size_t row_group_bytes; /* a row group is written once its columns hold this much */
} tb_s3_parquet_options_t;

#endif
