/*
 * s3_text.c - the text S3's and STS's APIs speak (tb_s3_text.h).
 */
#include "connectors/s3/tb_s3_text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_s3_uri_encode(tb_buf_t *out, const char *text, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~' ||
            (keep_slash && *p == '/')) {
            tb_buf_putc(out, (char)*p);
        } else {
            char escaped[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            tb_buf_append(out, escaped, 3);
        }
    }
}

/* Decodes the five XML entities and numeric ones below 128 of text[0..len)
 * into out (size bytes, NUL-terminated, truncated). */
static void xml_decode(const char *text, size_t len, char *out, size_t size)
{
    static const struct {
        const char *name;
        char ch;
    } entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < size;) {
        size_t taken = 0;
        char ch = text[i];
        for (size_t e = 0; text[i] == '&' && e < 5 && taken == 0; e++) {
            size_t elen = strlen(entities[e].name);
            if (i + elen <= len && strncmp(text + i, entities[e].name, elen) == 0) {
                ch = entities[e].ch;
                taken = elen;
            }
        }
        if (taken == 0 && text[i] == '&' && i + 2 < len && text[i + 1] == '#') {
            char *end = NULL;
            long code = text[i + 2] == 'x' ? strtol(text + i + 3, &end, 16)
                                           : strtol(text + i + 2, &end, 10);
            if (end != NULL && (size_t)(end - text) < len && *end == ';' && code > 0 &&
                code < 128) {
                ch = (char)code;
                taken = (size_t)(end - (text + i)) + 1;
            }
        }
        out[n++] = ch;
        i += taken > 0 ? taken : 1;
    }
    out[n] = '\0';
}

const char *tb_s3_xml_text(const char *xml, size_t len, const char *tag, char *out,
                           size_t size)
{
    char open[64], close[64];
    snprintf(open, sizeof(open), "<%s>", tag);
    snprintf(close, sizeof(close), "</%s>", tag);
    out[0] = '\0';
    const char *start = xml != NULL ? memmem(xml, len, open, strlen(open)) : NULL;
    if (start == NULL) {
        return NULL;
    }
    start += strlen(open);
    const char *end = memmem(start, len - (size_t)(start - xml), close, strlen(close));
    if (end == NULL) {
        return NULL;
    }
    xml_decode(start, (size_t)(end - start), out, size);
    return end + strlen(close);
}
