/*
 * tb_wire.h - Confluent's wire format: magic byte 0, the schema id as 4
 * bytes big-endian, then the payload; Protobuf payloads start with the
 * message-index array (a zigzag varint count, then each index as a zigzag
 * varint; the single byte 0 stands for [0], the first message).
 */
#ifndef TB_WIRE_H
#define TB_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/tb_buf.h"

#define TB_WIRE_HEADER_SIZE 5
#define TB_WIRE_MAX_INDEXES 32 /* message nesting deeper than this is refused */

/* Splits a framed record. Returns 0 with *id and the payload (pointing into
 * data), or -1 with errstr (too short, or a magic byte other than 0). */
int tb_wire_parse(const uint8_t *data, size_t len, int32_t *id, const uint8_t **payload,
                  size_t *payload_len, char *errstr, size_t errstr_size);

/* Appends the header for id. */
void tb_wire_header(tb_buf_t *out, int32_t id);

/* Reads the message indexes at the start of data into indexes (room for
 * TB_WIRE_MAX_INDEXES); sets *count and *used (bytes read). Returns 0, or -1
 * with errstr. */
int tb_wire_read_indexes(const uint8_t *data, size_t len, int32_t *indexes, size_t *count,
                         size_t *used, char *errstr, size_t errstr_size);

/* Appends the message indexes (the single byte 0 for [0]). */
void tb_wire_write_indexes(tb_buf_t *out, const int32_t *indexes, size_t count);

#endif
