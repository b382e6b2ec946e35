/*
 * tb_protobuf_data.h - Protobuf messages <-> Connect schemas
 * (core/tb_data.h), after Confluent's ProtobufConverter; for
 * protobuf_converter.c.
 *
 * Protobuf -> Connect, the message a payload's message indexes pick: a
 * message is a STRUCT named by its full name, its fields in declaration
 * order; int32, sint32 and sfixed32 are INT32, the other integers INT64
 * (uint32 and fixed32 included, as their values outgrow an int32), float
 * FLOAT32, double FLOAT64, bool BOOLEAN, string STRING, bytes BYTES, an
 * enum STRING (parameter io.confluent.connect.protobuf.Enum: its full
 * name; values by name); repeated is ARRAY, map MAP.
 * google.protobuf.Timestamp is Timestamp, the wrappers
 * (google.protobuf.Int32Value, ...) their type, optional. A field with
 * explicit presence (a message, proto3 optional, a oneof member) is
 * optional; the others are required, as decoding gives each its default.
 * Other well-known types have no Connect form here.
 *
 * Connect -> Protobuf: a proto3 file whose first message is the value's
 * struct (package and name from the schema's name; unnamed structs are
 * ConnectDefault, ConnectDefault2, ...), every other struct a top-level
 * message of the same package, field numbers in field order from 1; INT8
 * and INT16 are int32 (and come back INT32), an optional primitive is a
 * proto3 optional field, Timestamp google.protobuf.Timestamp. Decimal,
 * Date and Time (which need Confluent's and Google's type files), arrays of
 * arrays or maps, and maps with other keys than STRING, integers and
 * BOOLEAN have no Protobuf form here.
 *
 * Values take the JSON form of registry/protobuf/tb_protobuf.h: Connect's payload
 * form, but a Timestamp is RFC 3339 text.
 */
#ifndef TB_PROTOBUF_DATA_H
#define TB_PROTOBUF_DATA_H

#include <stddef.h>

#include "core/tb_data.h"
#include "registry/protobuf/tb_protobuf.h"

/* The Connect schema of the message a payload holds (its message indexes
 * pick it), a new reference, or NULL with errstr naming the field that has
 * none. */
tb_schema_t *tb_protobuf_to_connect(const tb_protobuf_schema_t *schema,
                                    const uint8_t *payload, size_t len, char *errstr,
                                    size_t errstr_size);

/* The .proto text (malloc'd) of a Connect schema, which must be a STRUCT;
 * NULL with errstr naming the field that has no Protobuf form. */
char *tb_protobuf_from_connect(const tb_schema_t *schema, char *errstr,
                               size_t errstr_size);

/* The value (new, the caller's) of payload[0..len) (message indexes, then
 * the message) under connect, the Connect schema of that message. 0, or -1
 * with errstr. */
int tb_protobuf_to_value(const tb_protobuf_schema_t *schema, const tb_schema_t *connect,
                         const uint8_t *payload, size_t len, tb_value_t **value,
                         char *errstr, size_t errstr_size);

/* Appends the payload (message index [0], then the message) of value under
 * schema, which the Protobuf schema was derived from or fits. */
int tb_protobuf_from_value(const tb_protobuf_schema_t *protobuf,
                           const tb_schema_t *schema, const tb_value_t *value,
                           tb_buf_t *out, char *errstr, size_t errstr_size);

#endif
