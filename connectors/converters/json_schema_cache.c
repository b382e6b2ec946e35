/*
 * JsonConverter's schemas, built or parsed once (tb_json_schema_cache.h).
 */
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_schema_cache.h"

static void entry_clear(tb_json_schema_entry_t *e)
{
    tb_schema_decref(e->schema);
    free(e->text);
    *e = (tb_json_schema_entry_t){0};
}

/* Makes the next entry schema (a reference is taken) with text (stolen). */
static tb_json_schema_entry_t *remember(tb_json_schema_cache_t *c, tb_schema_t *schema,
                                        char *text, size_t len)
{
    tb_json_schema_entry_t *e = &c->entries[c->next];
    c->latest = c->next;
    c->next = (c->next + 1) % TB_JSON_SCHEMA_CACHE_SIZE;
    entry_clear(e);
    *e = (tb_json_schema_entry_t){tb_schema_incref(schema), text, len};
    return e;
}

/* The entry of schema, by address (an equal schema at another address may
 * hold its parameters in another order, which its JSON shows); NULL. */
static tb_json_schema_entry_t *entry_of(tb_json_schema_cache_t *c,
                                        const tb_schema_t *schema)
{
    for (size_t i = 0; i < TB_JSON_SCHEMA_CACHE_SIZE; i++) {
        if (c->entries[i].schema == schema) {
            return &c->entries[i];
        }
    }
    return NULL;
}

const char *tb_json_schema_cache_text(tb_json_schema_cache_t *c,
                                      const tb_schema_t *schema, size_t *len)
{
    tb_json_schema_entry_t *e = entry_of(c, schema);
    if (e == NULL) {
        json_t *json = tb_json_schema_dump(schema);
        size_t n = 0;
        char *text = json != NULL ? tb_json_write(json, &n) : NULL;
        json_decref(json);
        if (text == NULL) {
            return NULL;
        }
        /* the count is no part of what a shared schema says: any holder of
         * a schema may take a reference */
        e = remember(c, (tb_schema_t *)schema, text, n);
    }
    *len = e->len;
    return e->text;
}

tb_schema_t *tb_json_schema_cache_parse(tb_json_schema_cache_t *c, const char *text,
                                        size_t len)
{
    for (size_t i = 0; i < TB_JSON_SCHEMA_CACHE_SIZE; i++) {
        tb_json_schema_entry_t *e = &c->entries[i];
        if (e->schema != NULL && e->len == len && memcmp(e->text, text, len) == 0) {
            c->latest = i;
            return tb_schema_incref(e->schema);
        }
    }
    char errstr[256];
    json_t *json = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    tb_schema_t *schema =
        json != NULL ? tb_json_schema_parse(json, errstr, sizeof(errstr)) : NULL;
    json_decref(json);
    char *copy = schema != NULL ? malloc(len > 0 ? len : 1) : NULL;
    if (copy != NULL) { /* else the schema is as good, only not kept */
        memcpy(copy, text, len);
        remember(c, schema, copy, len);
    }
    return schema;
}

tb_json_span_t tb_json_schema_cache_latest(const tb_json_schema_cache_t *c)
{
    const tb_json_schema_entry_t *e = &c->entries[c->latest];
    return e->schema != NULL ? (tb_json_span_t){e->text, e->len}
                             : (tb_json_span_t){"", 0};
}

void tb_json_schema_cache_clear(tb_json_schema_cache_t *c)
{
    for (size_t i = 0; i < TB_JSON_SCHEMA_CACHE_SIZE; i++) {
        entry_clear(&c->entries[i]);
    }
    c->next = 0;
    c->latest = 0;
}
