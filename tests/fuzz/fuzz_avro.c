/*
 * libFuzzer target: the Avro decoder (registry/avro/tb_avro.h) on arbitrary
 * bytes, under a schema that uses every type, and the wire frame in front.
 */
#include <stdint.h>
#include <stdlib.h>

#include "registry/avro/tb_avro.h"
#include "registry/tb_wire.h"

#define SCHEMA                                                                           \
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["                                   \
    "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"b\",\"type\":\"boolean\"},"          \
    "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"l\",\"type\":\"long\"},"              \
    "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"          \
    "{\"name\":\"y\",\"type\":\"bytes\"},{\"name\":\"s\",\"type\":\"string\"},"          \
    "{\"name\":\"dec\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\","        \
    "\"precision\":40,\"scale\":4}},"                                                    \
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\","     \
    "\"B\"]}},"                                                                          \
    "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"X\",\"size\":3}},"          \
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"R\"]}},"         \
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"null\"}},"                  \
    "{\"name\":\"u\",\"type\":[\"null\",\"string\",\"E\"]}]}"

static tb_avro_schema_t *schema;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    tb_buf_t out = {0};
    const uint8_t *payload;
    size_t payload_len;
    int32_t id;

    if (schema == NULL) {
        schema = tb_avro_schema_create(SCHEMA, NULL, errstr, sizeof(errstr));
        if (schema == NULL) {
            abort();
        }
    }
    if (tb_wire_parse(data, size, &id, &payload, &payload_len, errstr, sizeof(errstr)) ==
        0) {
        (void)tb_avro_decode(schema, payload, payload_len, &out, errstr, sizeof(errstr));
    }
    tb_buf_release(&out);
    (void)tb_avro_decode(schema, data, size, &out, errstr, sizeof(errstr));
    tb_buf_release(&out);
    return 0;
}
