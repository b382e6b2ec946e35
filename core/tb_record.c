/*
 * Records as transforms see them (tb_record.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/tb_record.h"

tb_record_side_t *tb_record_side(tb_record_t *r, tb_side_t side)
{
    return side == TB_SIDE_KEY ? &r->key : &r->value;
}

tb_record_side_t *tb_record_typed(tb_record_t *r, tb_side_t side, char *errstr,
                                  size_t errstr_size)
{
    tb_record_side_t *s = tb_record_side(r, side);
    if (s->typed) {
        return s;
    }
    if (r->typer(r->typer_opaque, side, s->bytes, s->len, &s->schema, &s->value, errstr,
                 errstr_size) != 0) {
        return NULL;
    }
    s->typed = true;
    return s;
}

void tb_record_set(tb_record_t *r, tb_side_t side, tb_schema_t *schema, tb_value_t *value)
{
    tb_record_side_t *s = tb_record_side(r, side);
    if (s->typed) {
        tb_schema_decref(s->schema);
        tb_value_free(s->value);
    }
    s->typed = true;
    s->schema = schema;
    s->value = value;
}

bool tb_record_side_is_null(const tb_record_side_t *side)
{
    return side->typed ? side->value == NULL : side->bytes == NULL;
}

const tb_header_t *tb_record_header(const tb_record_t *r, const char *name)
{
    for (size_t i = r->header_count; i > 0; i--) {
        if (strcmp(r->headers[i - 1].name, name) == 0) {
            return &r->headers[i - 1];
        }
    }
    return NULL;
}

static void free_header(tb_header_t *h)
{
    free((char *)h->name);
    free((void *)h->value);
}

/* A copy of header h the record owns, in *out. */
static int copy_header(tb_header_t *out, const char *name, const void *value, size_t len)
{
    char *name_copy = strdup(name);
    void *value_copy = value != NULL ? malloc(len > 0 ? len : 1) : NULL;
    if (name_copy == NULL || (value != NULL && value_copy == NULL)) {
        free(name_copy);
        free(value_copy);
        return -1;
    }
    if (value != NULL) {
        memcpy(value_copy, value, len);
    }
    *out = (tb_header_t){.name = name_copy, .value = value_copy, .value_len = len};
    return 0;
}

tb_header_t *tb_headers_copy(const tb_header_t *headers, size_t count, size_t extra)
{
    tb_header_t *owned = calloc(count + extra + 1, sizeof(*owned));
    if (owned == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        const tb_header_t *h = &headers[i];
        if (copy_header(&owned[i], h->name, h->value, h->value_len) != 0) {
            tb_headers_free(owned, i);
            return NULL;
        }
    }
    return owned;
}

/* Makes the headers the record's own, with room for extra more. */
static int own_headers(tb_record_t *r, size_t extra)
{
    tb_header_t *owned = tb_headers_copy(r->headers, r->header_count, extra);
    if (owned == NULL) {
        return -1;
    }
    if (r->headers_owned) {
        tb_headers_free(r->headers, r->header_count);
    }
    r->headers = owned;
    r->headers_owned = true;
    return 0;
}

int tb_record_header_add(tb_record_t *r, const char *name, const void *value, size_t len)
{
    if (own_headers(r, 1) != 0 ||
        copy_header(&r->headers[r->header_count], name, value, len) != 0) {
        return -1;
    }
    r->header_count++;
    return 0;
}

int tb_record_header_remove(tb_record_t *r, const char *name)
{
    if (tb_record_header(r, name) == NULL) {
        return 0;
    }
    if (own_headers(r, 0) != 0) {
        return -1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < r->header_count; i++) {
        if (strcmp(r->headers[i].name, name) == 0) {
            free_header(&r->headers[i]);
        } else {
            r->headers[kept++] = r->headers[i];
        }
    }
    r->header_count = kept;
    return 0;
}

bool tb_record_headers_take(tb_record_t *r, tb_header_t **headers, size_t *count)
{
    if (!r->headers_owned) {
        return false;
    }
    *headers = r->headers;
    *count = r->header_count;
    r->headers = NULL;
    r->header_count = 0;
    r->headers_owned = false;
    return true;
}

void tb_headers_free(tb_header_t *headers, size_t count)
{
    for (size_t i = 0; headers != NULL && i < count; i++) {
        free_header(&headers[i]);
    }
    free(headers);
}

void tb_record_release(tb_record_t *r)
{
    for (tb_side_t side = TB_SIDE_KEY; side <= TB_SIDE_VALUE; side++) {
        tb_record_side_t *s = tb_record_side(r, side);
        if (s->typed) {
            tb_schema_decref(s->schema);
            tb_value_free(s->value);
            s->typed = false;
            s->schema = NULL;
            s->value = NULL;
        }
    }
    if (r->headers_owned) {
        tb_headers_free(r->headers, r->header_count);
        r->headers = NULL;
        r->header_count = 0;
        r->headers_owned = false;
    }
}
