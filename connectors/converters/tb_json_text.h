/*
 * tb_json_text.h - walking JSON text that jansson has already accepted, so
 * that a converter can cut output from its input, or read a number with
 * the digits it was written with (a Decimal of any precision). For the
 * converters in this folder only.
 *
 * Every function takes checked text: on text jansson refused, results are
 * unspecified but stay inside the text.
 */
#ifndef TB_JSON_TEXT_H
#define TB_JSON_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A piece of JSON text: one value, or an object member's key literal. */
typedef struct {
    const char *s;
    size_t n;
} tb_json_span_t;

/* Copies s[0..n) without the whitespace outside strings to dst (when not
 * NULL). Returns the compacted length. */
size_t tb_json_text_compact(char *dst, const char *s, size_t n);

/* A copy of s[0..n) in which every integer that does not fit in 64 bits is
 * written as a real (".0" appended), which jansson then reads (as a
 * double: a Decimal takes its digits from the copy's text). malloc'd, its
 * length in *out_len; NULL on no memory. */
char *tb_json_text_widen_integers(const char *s, size_t n, size_t *out_len);

/* The next member (object: *key is its literal, quotes included) or item
 * (array: *key untouched) of container after *pos, which starts at 0.
 * Returns false after the last. */
bool tb_json_text_next(tb_json_span_t container, size_t *pos, tb_json_span_t *key,
                       tb_json_span_t *value);

/* The value of the last member of object called name, as jansson and
 * Jackson keep the last of repeated keys. False when there is none. */
bool tb_json_text_member(tb_json_span_t object, const char *name, tb_json_span_t *value);

/* The length of the UTF-8 sequence at s[0..n) (n > 0), as jansson accepts
 * them (no overlong forms, surrogates or code points past U+10FFFF); 0
 * when there is none. Any text. */
size_t tb_json_utf8_sequence(const unsigned char *s, size_t n);

#endif
