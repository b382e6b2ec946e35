/*
 * tb_protobuf.h - Protobuf schemas and Protobuf binary <-> JSON, for the
 * registry formats. A C API over a C++ shim (protobuf_shim.cc) on
 * libprotobuf/libprotoc 3.21: no C++ exception crosses it; every failure is
 * a return value with the reason in errstr.
 *
 * A schema is a .proto file as the registry holds it: .proto text, or (what
 * confluent-kafka's serializers send, and the registry's format=serialized)
 * a base64 FileDescriptorProto; both are accepted, as Confluent's own
 * ProtobufSchema accepts both. Its imports are the registry's references
 * (import path -> schema text); google/protobuf/ (the well-known types) come
 * from libprotobuf when not referenced.
 *
 * A payload (what follows the 5-byte header) starts with the message indexes
 * (registry/tb_wire.h) that pick the message: [i] is the file's i-th
 * top-level message, [i, j] that message's j-th nested type, and so on.
 *
 * JSON form of Protobuf data (decoding; Protobuf's own JSON mapping with the
 * departures Kafka Connect's ProtobufConverter makes):
 *   field names as written in the .proto (not lowerCamelCase); every field
 *     is present: an unset field takes its default (0, "", false, the first
 *     enum value, [] for repeated, {} for a map), an unset message field or
 *     a field with explicit presence (proto2 optional, proto3 optional) is
 *     null; a oneof shows only its set member
 *   int32, uint32, int64, uint64 (and the sint and fixed kinds): JSON
 *     numbers, 64-bit ones included (Protobuf's mapping quotes them)
 *   float, double: numbers in their shortest exact spelling; NaN and the
 *     infinities as "NaN", "Infinity", "-Infinity"
 *   bool, string: the JSON value; bytes: base64 text
 *   enum: the value's name (a number the schema does not name: the number)
 *   map: an object (keys as text); repeated: an array
 *   well-known types (google.protobuf.*): Protobuf's JSON mapping, e.g.
 *     Timestamp "2024-01-02T03:04:05.678Z", Duration "1.5s", a wrapper its
 *     value, Struct an object
 * Encoding reads Protobuf's JSON mapping, by reflection (the well-known
 * types through libprotobuf's JsonStringToMessage): field names as in the
 * .proto or lowerCamelCase, integers as numbers (an integral real too) or
 * decimal text, floats also as "NaN", "Infinity", "-Infinity", bytes as
 * base64 (standard or URL-safe), enums by name or number (any number for a
 * proto3 enum), map keys as text, null for unset; a field the message does
 * not have, two members of one oneof, or a null inside a repeated field is
 * refused.
 */
#ifndef TB_PROTOBUF_H
#define TB_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/tb_buf.h"

typedef struct tb_protobuf_schema tb_protobuf_schema_t;

/*
 * Compiles a .proto schema. references (borrowed; NULL = none) maps import
 * paths to schema texts, as tb_registry_resolve_references() gives them.
 * Returns NULL with errstr (a syntax error with its line and column, an
 * import that is neither referenced nor well-known, an unknown type).
 */
tb_protobuf_schema_t *tb_protobuf_schema_create(const char *text,
                                                const json_t *references, char *errstr,
                                                size_t errstr_size);

/* NULL is a no-op. */
void tb_protobuf_schema_destroy(tb_protobuf_schema_t *schema);

/* The full name (package included) of the file's first message, or NULL
 * when it has none. Valid while schema is. */
const char *tb_protobuf_schema_name(const tb_protobuf_schema_t *schema);

/* Appends the JSON text of payload (message indexes, then the message) to
 * out. Returns 0, or -1 with errstr (bad message indexes, a message index
 * the schema does not have, bytes that are not that message). */
int tb_protobuf_decode(const tb_protobuf_schema_t *schema, const uint8_t *payload,
                       size_t len, tb_buf_t *out, char *errstr, size_t errstr_size);

/* Appends the payload for value as the schema's first message (the message
 * index [0], then the message) to out. Returns 0, or -1 with errstr naming
 * what does not fit. */
int tb_protobuf_encode(const tb_protobuf_schema_t *schema, const json_t *value,
                       tb_buf_t *out, char *errstr, size_t errstr_size);

/* The message that the message indexes indexes[0..count) pick as JSON, for
 * mapping it to other schemas: {"name": full name, "fields": [{"name",
 * "type" (Protobuf's type name: "int32", "message", "enum", ...),
 * "repeated", "presence" (explicit presence: proto2 optional, proto3
 * optional, a message or oneof member), and "message" (its description),
 * "enum" (its full name) or "map" ({"key", "value"}: fields)}]}. A new
 * reference, or NULL with errstr (indexes the schema does not have, or a
 * message nested beyond 32 levels, which a recursive message is). */
json_t *tb_protobuf_describe(const tb_protobuf_schema_t *schema, const int32_t *indexes,
                             size_t count, char *errstr, size_t errstr_size);

#ifdef __cplusplus
}
#endif

#endif
