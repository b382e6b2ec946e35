/*
 * libFuzzer target: the Protobuf codec (registry/protobuf/tb_protobuf.h) on
 * arbitrary bytes, under a schema with every field kind, nested and
 * recursive messages, maps and well-known types: the decoder, first on a
 * framed record (wire header, message indexes, message), then on a bare
 * payload; and the encoder, when the bytes are JSON, as a plugin's value.
 */
#include <stdint.h>
#include <stdlib.h>

#include "registry/protobuf/tb_protobuf.h"
#include "registry/tb_wire.h"

#define SCHEMA                                                                           \
    "syntax = \"proto3\";\n"                                                             \
    "package f;\n"                                                                       \
    "import \"google/protobuf/any.proto\";\n"                                            \
    "import \"google/protobuf/duration.proto\";\n"                                       \
    "import \"google/protobuf/struct.proto\";\n"                                         \
    "import \"google/protobuf/timestamp.proto\";\n"                                      \
    "import \"google/protobuf/wrappers.proto\";\n"                                       \
    "enum E { Z = 0; A = 1; }\n"                                                         \
    "message R {\n"                                                                      \
    "  double d = 1; float f = 2; int32 i = 3; int64 l = 4; uint32 u = 5;\n"             \
    "  uint64 ul = 6; sint32 si = 7; sint64 sl = 8; fixed32 x = 9; fixed64 xl = 10;\n"   \
    "  sfixed32 sx = 11; sfixed64 sxl = 12; bool b = 13; string s = 14; bytes y = 15;\n" \
    "  E e = 16; repeated E es = 17; repeated int64 ls = 18; repeated string ss = 19;\n" \
    "  map<string, R> m = 20; map<int64, E> me = 21; map<bool, bytes> mb = 22;\n"        \
    "  R child = 23; repeated R children = 24; optional int32 o = 25;\n"                 \
    "  oneof one { string os = 26; R or = 27; }\n"                                       \
    "  google.protobuf.Timestamp t = 28; google.protobuf.Duration du = 29;\n"            \
    "  google.protobuf.Int64Value w = 30; google.protobuf.Struct st = 31;\n"             \
    "  google.protobuf.Value v = 32; google.protobuf.Any any = 33;\n"                    \
    "  message N { message M { R r = 1; } M m = 1; }\n"                                  \
    "  N n = 34;\n"                                                                      \
    "}\n"

static tb_protobuf_schema_t *schema;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    tb_buf_t out = {0};
    const uint8_t *payload;
    size_t payload_len;
    int32_t id;

    if (schema == NULL) {
        schema = tb_protobuf_schema_create(SCHEMA, NULL, errstr, sizeof(errstr));
        if (schema == NULL) {
            abort();
        }
    }
    if (tb_wire_parse(data, size, &id, &payload, &payload_len, errstr, sizeof(errstr)) ==
        0) {
        (void)tb_protobuf_decode(schema, payload, payload_len, &out, errstr,
                                 sizeof(errstr));
    }
    tb_buf_release(&out);
    (void)tb_protobuf_decode(schema, data, size, &out, errstr, sizeof(errstr));
    tb_buf_release(&out);
    json_t *value = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (value != NULL) {
        (void)tb_protobuf_encode(schema, value, &out, errstr, sizeof(errstr));
        tb_buf_release(&out);
        json_decref(value);
    }
    return 0;
}
