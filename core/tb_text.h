/*
 * tb_text.h - text helpers the registry formats share: UTF-8 checks,
 * decimals as big-endian two's complement, reals and JSON in their
 * shortest spelling, dates and timestamps.
 */
#ifndef TB_TEXT_H
#define TB_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/tb_buf.h"

/* Whether s[0..n) is well-formed UTF-8. */
bool tb_text_utf8_valid(const uint8_t *s, size_t n);

/* Appends the decimal number whose unscaled value is the big-endian two's
 * complement data[0..n), with scale digits after the point (over
 * tb_decimal_text(), core/tb_data.h). */
void tb_text_decimal(tb_buf_t *out, const uint8_t *data, size_t n, int scale);

/* The unscaled two's complement of the decimal text (as tb_decimal_parse()
 * reads it; at most scale decimals) into out[0..*n); with size > 0,
 * sign-extended to exactly size bytes. Returns 0, or -1 when the text is no
 * such number or does not fit. */
int tb_text_decimal_parse(const char *text, int scale, uint8_t *out, size_t out_size,
                          size_t *n, size_t size);

/* Appends the shortest decimal spelling of the finite v that reads back as
 * the same double (single: the same float), e.g. 0.1 and not
 * 0.10000000000000001 as "%.17g" writes it. */
void tb_text_real(tb_buf_t *out, double v, bool single);

/* As tb_text_real(), with ".0" after a spelling that would read as an
 * integer, so that a JSON reader keeps a real a real. */
void tb_text_json_real(tb_buf_t *out, double v, bool single);

/* Appends value as compact JSON, as json_dumps(JSON_COMPACT | JSON_ENCODE_ANY)
 * writes it except that each real takes tb_text_json_real()'s spelling. */
void tb_text_json(tb_buf_t *out, const json_t *value);

/* Days since 1970-01-01 of "YYYY-MM-DD". Returns 0 or -1. */
int tb_text_parse_date(const char *text, int64_t *days);

/* units (1000: milliseconds, 1000000: microseconds) since the epoch of an
 * RFC 3339 timestamp ("2024-01-02T03:04:05.678Z", an offset, or none as
 * UTC). Returns 0 or -1. */
int tb_text_parse_timestamp(const char *text, int64_t units, int64_t *v);

#endif
