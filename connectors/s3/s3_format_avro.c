/*
 * AvroFormat: an object is an Avro object container file of the records'
 * values (tb_s3_format.h): the header (magic, avro.schema, avro.codec and
 * a sync marker), then blocks of records, each a count, a size, the values
 * in Avro's binary encoding (deflated with avro.codec=deflate) and the sync
 * marker. The Avro schema is the values' Connect schema mapped as
 * Confluent's AvroData maps it (tb_avro_data.h); an object holds one
 * schema, so a record of another one rotates the objects first.
 *
 * The sync marker is the first 16 bytes of the SHA-256 of the object's
 * name, so an object written again after a restart is the same bytes.
 */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "connectors/converters/tb_avro_data.h"
#include "connectors/s3/tb_s3_format.h"

#define BLOCK_BYTES (64 * 1024) /* a block is written once this full */
#define SYNC_SIZE 16

typedef struct {
    tb_schema_t *schema; /* the values' Connect schema (a reference) */
    tb_avro_schema_t *avro;
    bool deflate;
    unsigned char sync[SHA256_DIGEST_LENGTH];
    tb_buf_t block;  /* the values of the block being filled */
    int64_t count;   /* how many */
    tb_buf_t packed; /* a block deflated */
} avro_state_t;

static void avro_free(void *opaque)
{
    avro_state_t *state = opaque;
    if (state == NULL) {
        return;
    }
    tb_schema_decref(state->schema);
    tb_avro_schema_destroy(state->avro);
    free(state->block.data);
    free(state->packed.data);
    free(state);
}

/* Appends an Avro string or bytes: its length, then its bytes. */
static void put_bytes(tb_buf_t *out, const void *data, size_t len)
{
    tb_buf_zigzag(out, (int64_t)len);
    tb_buf_append(out, data, len);
}

static int avro_open(const void *options, const tb_sink_record_t *first, const char *key,
                     void **out_state, tb_buf_t *out, char *errstr, size_t errstr_size)
{
    const tb_s3_avro_options_t *o = options;
    if (first->value_schema == NULL) {
        snprintf(errstr, errstr_size,
                 "AvroFormat needs values with a schema (a converter that gives one: "
                 "AvroConverter, JsonConverter with schemas.enable=true, ...)");
        return -1;
    }
    avro_state_t *state = calloc(1, sizeof(*state));
    char *text = NULL;
    if (state == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    state->deflate = o->deflate;
    state->schema = tb_schema_incref((tb_schema_t *)first->value_schema);
    text = tb_avro_from_connect(first->value_schema, errstr, errstr_size);
    if (text == NULL ||
        (state->avro = tb_avro_schema_create(text, NULL, errstr, errstr_size)) == NULL) {
        goto fail;
    }
    SHA256((const unsigned char *)key, strlen(key), state->sync);
    static const char codec_null[] = "null", codec_deflate[] = "deflate";
    tb_buf_append(out, "Obj\x01", 4);
    tb_buf_zigzag(out, 2); /* a block of two metadata entries */
    put_bytes(out, "avro.schema", 11);
    put_bytes(out, text, strlen(text));
    put_bytes(out, "avro.codec", 10);
    put_bytes(out, o->deflate ? codec_deflate : codec_null,
              o->deflate ? sizeof(codec_deflate) - 1 : sizeof(codec_null) - 1);
    tb_buf_zigzag(out, 0);
    tb_buf_append(out, state->sync, SYNC_SIZE);
    free(text);
    *out_state = state;
    return 0;

fail:
    free(text);
    avro_free(state);
    return -1;
}

static bool avro_fits(const void *opaque, const tb_sink_record_t *record)
{
    const avro_state_t *state = opaque;
    return record->value_schema != NULL &&
           (record->value_schema == state->schema ||
            tb_schema_equal(record->value_schema, state->schema));
}

/* Appends the block being filled to out, and empties it. 0, or -1 on no
 * memory. */
static int put_block(avro_state_t *state, tb_buf_t *out)
{
    if (state->count == 0) {
        return 0;
    }
    const tb_buf_t *data = &state->block;
    if (state->deflate) {
        uLong bound = compressBound((uLong)state->block.len);
        z_stream z = {0};
        state->packed.len = 0;
        if (!tb_buf_reserve(&state->packed, bound) ||
            deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
            return -1;
        }
        z.next_in = (Bytef *)state->block.data;
        z.avail_in = (uInt)state->block.len;
        z.next_out = (Bytef *)state->packed.data;
        z.avail_out = (uInt)bound;
        int rc = deflate(&z, Z_FINISH);
        state->packed.len = bound - z.avail_out;
        deflateEnd(&z);
        if (rc != Z_STREAM_END) {
            return -1;
        }
        data = &state->packed;
    }
    tb_buf_zigzag(out, state->count);
    put_bytes(out, data->data, data->len);
    tb_buf_append(out, state->sync, SYNC_SIZE);
    state->block.len = 0;
    state->count = 0;
    return out->failed ? -1 : 0;
}

static int avro_write(const void *options, void *opaque, const tb_sink_record_t *record,
                      tb_buf_t *out, char *errstr, size_t errstr_size)
{
    avro_state_t *state = opaque;
    (void)options;
    size_t mark = state->block.len;
    if (tb_avro_from_value(state->avro, state->schema, record->value_data, &state->block,
                           errstr, errstr_size) != 0) {
        state->block.len = mark; /* nothing of the record stays */
        return -1;
    }
    state->count++;
    if (state->block.len >= BLOCK_BYTES && put_block(state, out) != 0) {
        snprintf(errstr, errstr_size, "out of memory writing an Avro block");
        return -1;
    }
    return 0;
}

static int avro_close(void *opaque, tb_buf_t *out)
{
    return put_block(opaque, out);
}

const tb_s3_format_t tb_s3_format_avro = {.extension = ".avro",
                                          .open = avro_open,
                                          .fits = avro_fits,
                                          .write = avro_write,
                                          .close = avro_close,
                                          .free = avro_free};
