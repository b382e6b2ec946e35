/*
 * tb_converter_test.h - what the converter unit tests share: a converter
 * made from a class name and settings given as JSON text, and Connect data
 * read from and written to text through it. Each fails the test on an error,
 * with the converter's message.
 */
#ifndef TB_CONVERTER_TEST_H
#define TB_CONVERTER_TEST_H

#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "connectors/converters/tb_converter.h"

/* A value converter of class name; settings NULL for none. */
static inline tb_converter_t *converter_of(const char *name, const char *settings)
{
    char errstr[512] = "";
    json_t *raw = settings != NULL ? json_loads(settings, 0, NULL) : NULL;
    tb_converter_t *c = tb_converter_create(name, raw, false, errstr, sizeof(errstr));
    json_decref(raw);
    if (c == NULL) {
        fail_msg("%s: %s", name, errstr);
    }
    return c;
}

/* The Connect data c reads from text; the caller owns both. */
static inline void typed_of(tb_converter_t *c, const char *text, tb_schema_t **schema,
                            tb_value_t **value)
{
    char errstr[512] = "";
    if (tb_converter_to_typed(c, text, strlen(text), schema, value, errstr,
                              sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
}

/* What c writes of schema and value for topic "t", NUL-terminated; the
 * caller frees it. */
static inline char *text_of(tb_converter_t *c, const tb_schema_t *schema,
                            const tb_value_t *value)
{
    char errstr[512] = "";
    void *out = NULL;
    size_t len = 0;
    if (tb_converter_from_typed(c, "t", schema, value, &out, &len, errstr,
                                sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    char *text = malloc(len + 1);
    assert_non_null(text);
    memcpy(text, out, len);
    text[len] = '\0';
    free(out);
    return text;
}

#endif
