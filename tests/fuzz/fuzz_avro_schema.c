/*
 * libFuzzer target: Avro schema text from a registry (libavro's parser and
 * tributary's compiler), then the decoder on a fixed datum under it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "registry/avro/tb_avro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t datum[] = {0x02, 0x06, 'a', 'b', 'c', 0x01, 0x00, 0x04, 0x00};
    char errstr[256];
    char *text = malloc(size + 1);
    tb_buf_t out = {0};

    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    tb_avro_schema_t *schema = tb_avro_schema_create(text, NULL, errstr, sizeof(errstr));
    if (schema != NULL) {
        (void)tb_avro_decode(schema, datum, sizeof(datum), &out, errstr, sizeof(errstr));
        tb_buf_release(&out);
        tb_avro_schema_destroy(schema);
    }
    free(text);
    return 0;
}
