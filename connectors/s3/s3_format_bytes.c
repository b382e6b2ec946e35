/* ByteArrayFormat: each record's value as the bytes read from Kafka, then
 * format.bytearray.separator (tb_s3_format.h). */
#include "connectors/s3/tb_s3_format.h"

static int bytes_write(const void *options, void *state, const tb_sink_record_t *record,
                       tb_buf_t *out, char *errstr, size_t errstr_size)
{
    (void)state;
    const tb_s3_bytes_options_t *o = options;
    (void)errstr;
    (void)errstr_size;
    tb_buf_append(out, record->value, record->value_len);
    tb_buf_append(out, o->separator, o->separator_len);
    return 0;
}

const tb_s3_format_t tb_s3_format_bytes = {.extension = ".bin", .write = bytes_write};
