/*
 * libFuzzer target: Decimals (core/tb_data.h). The first byte is a scale
 * (-128..127), the rest both decimal text and unscaled bytes: text that
 * parses reads back to the same bytes after tb_decimal_text(), and any
 * bytes written as text parse back to the same number.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/tb_data.h"

/* The bytes of text under scale, which must parse. */
static tb_value_t *must_parse(const char *text, int scale)
{
    char errstr[256];
    tb_value_t *v = tb_decimal_parse(text, strlen(text), scale, errstr, sizeof(errstr));
    if (v == NULL) {
        __builtin_trap();
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    size_t n;
    if (size < 1) {
        return 0;
    }
    int scale = (int8_t)data[0];
    const char *rest = (const char *)data + 1;
    size_t len = size - 1;

    tb_value_t *parsed = tb_decimal_parse(rest, len, scale, errstr, sizeof(errstr));
    if (parsed != NULL) {
        const char *unscaled = tb_value_text(parsed, &n);
        char *text = tb_decimal_text(unscaled, n, scale);
        tb_value_t *again = must_parse(text, scale);
        if (!tb_value_equal(parsed, again)) {
            __builtin_trap();
        }
        tb_value_free(again);
        free(text);
        tb_value_free(parsed);
    }

    char *text = tb_decimal_text(rest, len, scale);
    tb_value_t *back = must_parse(text, scale);
    const char *unscaled = tb_value_text(back, &n);
    char *again = tb_decimal_text(unscaled, n, scale);
    if (strcmp(text, again) != 0) {
        __builtin_trap();
    }
    free(again);
    tb_value_free(back);
    free(text);
    return 0;
}
