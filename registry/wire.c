/* wire.c - Confluent's framing (tb_wire.h). */
#include <stdio.h>

#include "registry/tb_wire.h"

int tb_wire_parse(const uint8_t *data, size_t len, int32_t *id, const uint8_t **payload,
                  size_t *payload_len, char *errstr, size_t errstr_size)
{
    if (len < TB_WIRE_HEADER_SIZE) {
        snprintf(errstr, errstr_size,
                 "Unknown magic byte or truncated frame: %zu byte(s), a schema registry "
                 "frame has at least 5",
                 len);
        return -1;
    }
    if (data[0] != 0) {
        snprintf(errstr, errstr_size, "Unknown magic byte %d (expected 0)", data[0]);
        return -1;
    }
    *id = (int32_t)(((uint32_t)data[1] << 24) | ((uint32_t)data[2] << 16) |
                    ((uint32_t)data[3] << 8) | data[4]);
    *payload = data + TB_WIRE_HEADER_SIZE;
    *payload_len = len - TB_WIRE_HEADER_SIZE;
    return 0;
}

void tb_wire_header(tb_buf_t *out, int32_t id)
{
    uint32_t u = (uint32_t)id;
    char header[5] = {0, (char)(u >> 24), (char)(u >> 16), (char)(u >> 8), (char)u};
    tb_buf_append(out, header, sizeof(header));
}

static int read_zigzag(const uint8_t *data, size_t len, size_t *pos, int64_t *v)
{
    uint64_t u = 0;
    for (int shift = 0; shift < 64 && *pos < len; shift += 7) {
        uint8_t byte = data[(*pos)++];
        u |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            return 0;
        }
    }
    return -1;
}

int tb_wire_read_indexes(const uint8_t *data, size_t len, int32_t *indexes, size_t *count,
                         size_t *used, char *errstr, size_t errstr_size)
{
    size_t pos = 0;
    int64_t n;
    if (read_zigzag(data, len, &pos, &n) != 0 || n < 0 || n > TB_WIRE_MAX_INDEXES) {
        snprintf(errstr, errstr_size, "bad Protobuf message index count");
        return -1;
    }
    if (n == 0) {
        indexes[0] = 0;
        *count = 1;
        *used = pos;
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (read_zigzag(data, len, &pos, &v) != 0 || v < 0 || v > INT32_MAX) {
            snprintf(errstr, errstr_size, "bad Protobuf message index");
            return -1;
        }
        indexes[i] = (int32_t)v;
    }
    *count = (size_t)n;
    *used = pos;
    return 0;
}

void tb_wire_write_indexes(tb_buf_t *out, const int32_t *indexes, size_t count)
{
    if (count == 1 && indexes[0] == 0) {
        tb_buf_putc(out, 0);
        return;
    }
    tb_buf_zigzag(out, (int64_t)count);
    for (size_t i = 0; i < count; i++) {
        tb_buf_zigzag(out, indexes[i]);
    }
}
