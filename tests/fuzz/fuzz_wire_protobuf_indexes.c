/*
 * libFuzzer target: Protobuf message indexes after the wire header
 * (registry/tb_wire.h).
 */
#include <stdint.h>

#include "registry/tb_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    int32_t indexes[TB_WIRE_MAX_INDEXES];
    const uint8_t *payload;
    size_t payload_len, count, used;
    int32_t id;

    if (tb_wire_parse(data, size, &id, &payload, &payload_len, errstr, sizeof(errstr)) ==
            0 &&
        tb_wire_read_indexes(payload, payload_len, indexes, &count, &used, errstr,
                             sizeof(errstr)) == 0 &&
        (count == 0 || count > TB_WIRE_MAX_INDEXES || used > payload_len)) {
        __builtin_trap();
    }
    return 0;
}
