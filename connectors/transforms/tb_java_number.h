/*
 * tb_java_number.h - numbers as Java reads, narrows and writes them, for
 * the transforms that must match Connect's (Cast, MaskField).
 */
#ifndef TB_JAVA_NUMBER_H
#define TB_JAVA_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tb_data.h"

/* Whether s is a number as Java's BigDecimal reads it: a sign, digits with
 * an optional point, an optional exponent ("-1.5E+3"). */
bool tb_java_number_text(const char *s);

/* Java's (long) and (int) of a double: truncated, saturated, NaN 0. */
int64_t tb_java_d2l(double d);
int64_t tb_java_d2i(double d);

/* Java's narrowing cast of i to type (INT8..INT64). */
int64_t tb_java_narrow(tb_type_t type, int64_t i);

/* Java's Byte/Short/Integer/Long.parseX of text for type (INT8..INT64):
 * 0 and *out, or -1 when text is no integer in the type's range. */
int tb_java_parse_int(const char *text, tb_type_t type, int64_t *out);

/* Java's Double.parseDouble of text (decimal forms, NaN, Infinity, an
 * optional f or d suffix, spaces around): 0 and *out, or -1. */
int tb_java_parse_real(const char *text, double *out);

/* BigDecimal.toString of unscaled and scale ("123.45", "1E+3") into out. */
void tb_java_decimal_text(int64_t unscaled, int scale, char *out, size_t size);

#endif
