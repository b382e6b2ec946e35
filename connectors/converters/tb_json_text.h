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

/* The next member (object: *key is its literal, quotes included) or item
 * (array: *key untouched) of container after *pos, which starts at 0.
 * Returns false after the last. */
bool tb_json_text_next(tb_json_span_t container, size_t *pos, tb_json_span_t *key,
                       tb_json_span_t *value);

/* The value of the last member of object called name, as jansson and
 * Jackson keep the last of repeated keys. False when there is none. */
bool tb_json_text_member(tb_json_span_t object, const char *name, tb_json_span_t *value);

#endif
