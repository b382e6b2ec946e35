/*
 * tb_smt_test.h - what the transformation unit tests share: building a
 * chain from a config, records whose sides a typer reads (a plugin's
 * strings, or a converter's Connect data), applying the chain, and
 * JsonConverter's bytes of a side.
 */
#ifndef TB_SMT_TEST_H
#define TB_SMT_TEST_H

#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/transforms/tb_chain.h"
#include "core/tb_config.h"

/* The source-side typer: plugin strings, counted so that tests can tell
 * whether a transform parsed the data. */
static int typed_calls __attribute__((unused));

static inline int string_typer(void *opaque, tb_side_t side, const void *bytes,
                               size_t len, tb_schema_t **schema, tb_value_t **value,
                               char *errstr, size_t errstr_size)
{
    (void)opaque;
    (void)side;
    typed_calls++;
    return tb_plugin_data_to_typed(TB_DATA_STRING, bytes, len, schema, value, errstr,
                                   errstr_size);
}

/* The sink-side typer: a converter's Connect data. */
static inline int converter_typer(void *opaque, tb_side_t side, const void *bytes,
                                  size_t len, tb_schema_t **schema, tb_value_t **value,
                                  char *errstr, size_t errstr_size)
{
    (void)side;
    typed_calls++;
    return tb_converter_to_typed(opaque, bytes, len, schema, value, errstr, errstr_size);
}

static inline tb_chain_t *chain_of(const char *config)
{
    char errstr[1024] = "";
    json_t *raw = json_loads(config, 0, NULL);
    assert_non_null(raw);
    tb_chain_t *chain = tb_chain_create(raw, errstr, sizeof(errstr));
    json_decref(raw);
    if (chain == NULL) {
        fail_msg("%s", errstr);
    }
    return chain;
}

static inline tb_record_t record_of(const char *topic, const char *value)
{
    typed_calls = 0;
    return (tb_record_t){.topic = topic,
                         .partition = 0,
                         .offset = -1,
                         .timestamp = 1700000000000LL,
                         .value = {.bytes = value, .len = value ? strlen(value) : 0},
                         .typer = string_typer};
}

/* Applies chain, expecting rc. */
static inline void apply(tb_chain_t *chain, tb_record_t *r, int rc, const char *error)
{
    char errstr[512] = "";
    const char *failed = NULL;
    assert_int_equal(tb_chain_apply(chain, r, &failed, errstr, sizeof(errstr)), rc);
    if (error != NULL) {
        assert_string_equal(errstr, error);
        assert_non_null(failed);
    }
}

/* JsonConverter's bytes of one side, NUL-terminated. */
static inline char *json_of(tb_record_t *r, tb_side_t side, bool schemas)
{
    char errstr[512];
    json_t *settings = json_pack("{s:s}", "schemas.enable", schemas ? "true" : "false");
    tb_converter_t *c = tb_converter_create("JsonConverter", settings,
                                            side == TB_SIDE_KEY, errstr, sizeof(errstr));
    json_decref(settings);
    tb_record_side_t *s = tb_record_side(r, side);
    assert_true(s->typed);
    void *out = NULL;
    size_t len = 0;
    assert_int_equal(tb_converter_from_typed(c, r->topic, s->schema, s->value, &out, &len,
                                             errstr, sizeof(errstr)),
                     0);
    char *text = calloc(1, len + 1);
    memcpy(text, out, len);
    free(out);
    tb_converter_destroy(c);
    return text;
}

static inline json_t *validate(const char *config)
{
    json_t *raw = json_loads(config, 0, NULL);
    json_t *errors = json_object();
    json_t *transforms = json_array();
    json_t *predicates = json_array();
    char *list;
    const char *t = json_string_value(json_object_get(raw, "transforms"));
    const char *p = json_string_value(json_object_get(raw, "predicates"));
    for (char *item = (list = strdup(t ? t : "")), *save = NULL;
         (item = strtok_r(item, ",", &save)) != NULL; item = NULL) {
        json_array_append_new(transforms, json_string(item));
    }
    free(list);
    for (char *item = (list = strdup(p ? p : "")), *save = NULL;
         (item = strtok_r(item, ",", &save)) != NULL; item = NULL) {
        json_array_append_new(predicates, json_string(item));
    }
    free(list);
    tb_chain_validate(transforms, predicates, raw, errors);
    json_decref(transforms);
    json_decref(predicates);
    json_decref(raw);
    return errors;
}

static inline void assert_error(const json_t *errors, const char *key,
                                const char *message)
{
    const json_t *list = json_object_get(errors, key);
    if (json_array_size(list) != 1) {
        char *dump = json_dumps(errors, 0);
        fail_msg("no single error under %s: %s", key, dump);
    }
    assert_string_equal(json_string_value(json_array_get(list, 0)), message);
}

/* text with every ' made a ", malloc'd: JSON in C strings without escapes. */
static inline char *dq(const char *text)
{
    char *out = strdup(text);
    for (char *p = out; *p != '\0'; p++) {
        *p = *p == '\'' ? '"' : *p;
    }
    return out;
}

/* A record whose value is typed now from JSON text (' for "): with
 * schemas, JsonConverter's envelope of a struct of fields (a JSON array of
 * field schemas) with payload; without, payload as schemaless data. */
static inline tb_record_t json_record(const char *fields, const char *payload)
{
    char errstr[512] = "";
    json_t *settings =
        json_pack("{s:s}", "schemas.enable", fields != NULL ? "true" : "false");
    tb_converter_t *c =
        tb_converter_create("JsonConverter", settings, false, errstr, sizeof(errstr));
    json_decref(settings);
    char *f = fields != NULL ? dq(fields) : NULL;
    char *p = dq(payload);
    char *text = malloc(strlen(p) + (f != NULL ? strlen(f) : 0) + 100);
    if (f != NULL) {
        sprintf(text,
                "{\"schema\":{\"type\":\"struct\",\"fields\":%s,\"optional\":false},"
                "\"payload\":%s}",
                f, p);
    } else {
        strcpy(text, p);
    }
    tb_record_t r = record_of("t", text);
    r.offset = 5;
    r.typer = converter_typer;
    r.typer_opaque = c;
    if (tb_record_typed(&r, TB_SIDE_VALUE, errstr, sizeof(errstr)) == NULL) {
        fail_msg("%s: %s", text, errstr);
    }
    r.value.bytes = NULL;
    r.typer_opaque = NULL;
    tb_converter_destroy(c);
    free(text);
    free(p);
    free(f);
    typed_calls = 0;
    return r;
}

/* Asserts that the value is JsonConverter's text expected (' for "), with
 * or without schemas. */
static inline void assert_value(tb_record_t *r, bool schemas, const char *expected)
{
    char *text = json_of(r, TB_SIDE_VALUE, schemas);
    char *want = dq(expected);
    assert_string_equal(text, want);
    free(want);
    free(text);
}

#endif
