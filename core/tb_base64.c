#include "core/tb_base64.h"

#include <stdbool.h>

static int sextet(char ch, tb_base64_mode_t mode)
{
    if (ch >= 'A' && ch <= 'Z') {
        return ch - 'A';
    }
    if (ch >= 'a' && ch <= 'z') {
        return ch - 'a' + 26;
    }
    if (ch >= '0' && ch <= '9') {
        return ch - '0' + 52;
    }
    if (ch == '+' || (ch == '-' && mode == TB_BASE64_LENIENT)) {
        return 62;
    }
    if (ch == '/' || (ch == '_' && mode == TB_BASE64_LENIENT)) {
        return 63;
    }
    return -1;
}

/* The characters before the padding, or -1 when the padding is wrong for
 * the mode: strict text is whole groups of four with at most two '='. */
static long unpadded_length(const char *text, size_t len, tb_base64_mode_t mode)
{
    size_t n = len;
    while (n > 0 && text[n - 1] == '=') {
        n--;
    }
    bool strict = mode == TB_BASE64_STRICT;
    if ((strict && (len % 4 != 0 || len - n > 2)) || n % 4 == 1) {
        return -1;
    }
    return (long)n;
}

long tb_base64_decode(const char *text, size_t len, tb_base64_mode_t mode, uint8_t *out,
                      size_t out_size)
{
    long n = unpadded_length(text, len, mode);
    if (n < 0 || (size_t)n / 4 * 3 + (size_t)(n % 4 ? n % 4 - 1 : 0) > out_size) {
        return -1;
    }
    uint32_t acc = 0;
    int bits = 0;
    long used = 0;
    for (long i = 0; i < n; i++) {
        int v = sextet(text[i], mode);
        if (v < 0) {
            return -1;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[used++] = (uint8_t)(acc >> bits);
        }
    }
    return used;
}
