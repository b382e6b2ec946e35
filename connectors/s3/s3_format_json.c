/* JsonFormat: each record's value as JsonConverter writes Connect data
 * without schemas (decimals as base64, as its default), then a newline
 * (tb_s3_format.h). */
#include "connectors/converters/tb_json_writer.h"
#include "connectors/s3/tb_s3_format.h"

static int json_write(const void *options, void *state, const tb_sink_record_t *record,
                      tb_buf_t *out, char *errstr, size_t errstr_size)
{
    (void)options;
    (void)state;
    size_t mark = out->len;
    int rc = tb_json_write_value(out, record->value_schema, record->value_data,
                                 TB_DECIMAL_BASE64, errstr, errstr_size);
    if (rc != 0) {
        out->len = mark; /* nothing of the record stays */
        return -1;
    }
    tb_buf_putc(out, '\n');
    return 0;
}

const tb_s3_format_t tb_s3_format_json = {.extension = ".json", .write = json_write};
