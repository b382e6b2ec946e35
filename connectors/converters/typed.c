/*
 * typed.c - between Connect data and what plugins read and write: a source
 * plugin's data as Connect data, and Connect data as a sink plugin's text
 * form (tb_converter.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_writer.h"

int tb_plugin_data_to_typed(tb_data_kind_t kind, const void *data, size_t len,
                            tb_schema_t **schema, tb_value_t **value, char *errstr,
                            size_t errstr_size)
{
    *schema = NULL;
    *value = NULL;
    if (data == NULL) {
        return 0;
    }
    if (kind != TB_DATA_JSON) {
        *schema = tb_schema_new(kind == TB_DATA_STRING ? TB_TYPE_STRING : TB_TYPE_BYTES);
        *value = kind == TB_DATA_STRING ? tb_value_string(data, len)
                                        : tb_value_bytes(data, len);
        return 0;
    }
    json_error_t error;
    json_t *json = json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
    if (json == NULL) {
        snprintf(errstr, errstr_size, "the plugin's JSON text is invalid: %s",
                 error.text);
        return -1;
    }
    *schema = tb_json_infer_schema(json);
    int rc = tb_json_value_parse(*schema, json, value, errstr, errstr_size);
    json_decref(json);
    if (rc != 0) {
        tb_schema_decref(*schema);
        *schema = NULL;
    }
    return rc;
}

static int copy_out(const char *data, size_t len, void **out, size_t *out_len,
                    char *errstr, size_t errstr_size)
{
    *out = malloc(len > 0 ? len : 1);
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    memcpy(*out, data, len);
    *out_len = len;
    return 0;
}

int tb_typed_to_plugin(const tb_schema_t *schema, const tb_value_t *value, void **out,
                       size_t *out_len, char *errstr, size_t errstr_size)
{
    size_t len;
    *out = NULL;
    *out_len = 0;
    if (value == NULL) {
        return 0;
    }
    if (tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL)) {
        const char *unscaled = tb_value_text(value, &len);
        char *digits = tb_decimal_text(unscaled, len, tb_decimal_scale(schema));
        if (digits == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            return -1;
        }
        int rc = copy_out(digits, strlen(digits), out, out_len, errstr, errstr_size);
        free(digits);
        return rc;
    }
    if (tb_value_type(value) == TB_TYPE_STRING || tb_value_type(value) == TB_TYPE_BYTES) {
        const char *text = tb_value_text(value, &len);
        return copy_out(text, len, out, out_len, errstr, errstr_size);
    }
    tb_buf_t b = {0};
    if (tb_json_write_value(&b, schema, value, TB_DECIMAL_BASE64, errstr, errstr_size) !=
        0) {
        tb_buf_release(&b);
        return -1;
    }
    *out = tb_buf_take(&b, out_len);
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    return 0;
}
