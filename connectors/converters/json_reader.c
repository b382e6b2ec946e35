/*
 * JSON text straight into Connect data, or declined (tb_json_reader.h).
 *
 * Each reader function below returns false to decline; the value it was
 * building is then freed. What jansson's path would give, case by case, is
 * in json_data.c (value_parse); the grammar is RFC 8259's, as jansson reads
 * it: whitespace is space, tab, CR and LF; strings are UTF-8 without raw
 * control characters, \u escapes pair surrogates, \u0000 is allowed.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_reader.h"
#include "connectors/converters/tb_json_writer.h"
#include "core/tb_buf.h"

typedef struct {
    const char *s;
    size_t n;
    size_t pos;
    int depth;
    tb_buf_t scratch; /* the text of a string with escapes */
} tb_reader_t;

/* The longest number text converted through a buffer on the stack. */
#define NUMBER_TEXT_MAX 128

static void skip_space(tb_reader_t *r)
{
    while (r->pos < r->n && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
                             r->s[r->pos] == '\n' || r->s[r->pos] == '\r')) {
        r->pos++;
    }
}

/* Skips space, then ch when it is next. */
static bool accept(tb_reader_t *r, char ch)
{
    skip_space(r);
    if (r->pos < r->n && r->s[r->pos] == ch) {
        r->pos++;
        return true;
    }
    return false;
}

/* The literal word (true, false, null) when it is next, after space. */
static bool accept_word(tb_reader_t *r, const char *word, size_t len)
{
    skip_space(r);
    if (r->n - r->pos >= len && memcmp(r->s + r->pos, word, len) == 0) {
        r->pos += len;
        return true;
    }
    return false;
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    return -1;
}

/* The four hex digits of a \u escape whose 'u' is at r->pos - 1. */
static bool read_hex4(tb_reader_t *r, uint32_t *out)
{
    if (r->n - r->pos < 4) {
        return false;
    }
    *out = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(r->s[r->pos++]);
        if (d < 0) {
            return false;
        }
        *out = (*out << 4) | (uint32_t)d;
    }
    return true;
}

static void put_utf8(tb_buf_t *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    tb_buf_append(b, u, n);
}

/* The escape whose backslash is at r->pos, decoded onto the scratch. */
static bool read_escape(tb_reader_t *r)
{
    static const char plain_from[] = "\"\\/bfnrt";
    static const char plain_to[] = "\"\\/\b\f\n\r\t";
    if (r->n - r->pos < 2) {
        return false;
    }
    char e = r->s[r->pos + 1];
    r->pos += 2;
    const char *plain = e != '\0' ? strchr(plain_from, e) : NULL;
    if (plain != NULL) {
        tb_buf_append(&r->scratch, &plain_to[plain - plain_from], 1);
        return true;
    }
    uint32_t cp;
    if (e != 'u' || !read_hex4(r, &cp) || (cp >= 0xDC00 && cp <= 0xDFFF)) {
        return false;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate: its low must follow */
        uint32_t low;
        if (r->n - r->pos < 2 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u') {
            return false;
        }
        r->pos += 2;
        if (!read_hex4(r, &low) || low < 0xDC00 || low > 0xDFFF) {
            return false;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    put_utf8(&r->scratch, cp);
    return true;
}

/* The next raw character of a string at r->pos (not a quote or a
 * backslash): its length, 0 when it is a control character or no UTF-8. */
static size_t raw_char(const tb_reader_t *r)
{
    unsigned char ch = (unsigned char)r->s[r->pos];
    if (ch < 0x20) {
        return 0;
    }
    return ch < 0x80 ? 1
                     : tb_json_utf8_sequence((const unsigned char *)r->s + r->pos,
                                             r->n - r->pos);
}

/* A string literal, after space: its text in *text, borrowed from the input
 * or, when *escaped, from the scratch until the next string. */
static bool read_string(tb_reader_t *r, tb_json_span_t *text, bool *escaped)
{
    if (!accept(r, '"')) {
        return false;
    }
    size_t start = r->pos;
    while (r->pos < r->n && r->s[r->pos] != '"' && r->s[r->pos] != '\\') {
        size_t step = raw_char(r);
        if (step == 0) {
            return false;
        }
        r->pos += step;
    }
    *escaped = r->pos < r->n && r->s[r->pos] == '\\';
    if (!*escaped) {
        if (r->pos >= r->n) {
            return false;
        }
        *text = (tb_json_span_t){r->s + start, r->pos - start};
        r->pos++;
        return true;
    }
    r->scratch.len = 0;
    tb_buf_append(&r->scratch, r->s + start, r->pos - start);
    while (r->pos < r->n && r->s[r->pos] != '"') {
        if (r->s[r->pos] == '\\') {
            if (!read_escape(r)) {
                return false;
            }
            continue;
        }
        size_t step = raw_char(r);
        if (step == 0) {
            return false;
        }
        tb_buf_append(&r->scratch, r->s + r->pos, step);
        r->pos += step;
    }
    if (r->pos >= r->n || r->scratch.failed) {
        return false;
    }
    r->pos++;
    /* a string of escapes alone leaves the scratch unwritten only when it is
     * empty, which has no escape: data is set */
    *text = (tb_json_span_t){r->scratch.data, r->scratch.len};
    return true;
}

/* A number, after space: its text, and whether it is an integer (no point
 * or exponent). */
static bool read_number(tb_reader_t *r, tb_json_span_t *text, bool *integer)
{
    skip_space(r);
    size_t start = r->pos;
    const char *s = r->s;
#define DIGIT_AT(p) ((p) < r->n && s[p] >= '0' && s[p] <= '9')
    if (r->pos < r->n && s[r->pos] == '-') {
        r->pos++;
    }
    if (r->pos < r->n && s[r->pos] == '0') {
        r->pos++;
    } else if (DIGIT_AT(r->pos)) {
        while (DIGIT_AT(r->pos)) {
            r->pos++;
        }
    } else {
        return false;
    }
    *integer = true;
    if (r->pos < r->n && s[r->pos] == '.') {
        r->pos++;
        if (!DIGIT_AT(r->pos)) {
            return false;
        }
        while (DIGIT_AT(r->pos)) {
            r->pos++;
        }
        *integer = false;
    }
    if (r->pos < r->n && (s[r->pos] == 'e' || s[r->pos] == 'E')) {
        r->pos++;
        if (r->pos < r->n && (s[r->pos] == '+' || s[r->pos] == '-')) {
            r->pos++;
        }
        if (!DIGIT_AT(r->pos)) {
            return false;
        }
        while (DIGIT_AT(r->pos)) {
            r->pos++;
        }
        *integer = false;
    }
#undef DIGIT_AT
    *text = (tb_json_span_t){s + start, r->pos - start};
    return true;
}

/* The number text as jansson reads it: an integer that fits in 64 bits
 * (*integer set), or a finite double. */
static bool number_value(tb_json_span_t text, bool integer, int64_t *i, double *d)
{
    char buf[NUMBER_TEXT_MAX];
    if (text.n >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, text.s, text.n);
    buf[text.n] = '\0';
    errno = 0;
    if (integer) {
        long long ll = strtoll(buf, NULL, 10);
        *i = ll;
        *d = (double)ll;
        return errno != ERANGE;
    }
    *d = strtod(buf, NULL);
    return isfinite(*d);
}

/* true or false, after space. */
static bool read_bool(tb_reader_t *r, bool *b)
{
    if (accept_word(r, "true", 4)) {
        *b = true;
        return true;
    }
    *b = false;
    return accept_word(r, "false", 5);
}

static bool skip_value(tb_reader_t *r);

/* The members of an object whose '{' was read, each through fn (its key's
 * text, unescaped: keys with escapes are declined), then the '}'. */
static bool read_members(tb_reader_t *r,
                         bool (*fn)(tb_reader_t *r, tb_json_span_t key, void *opaque),
                         void *opaque)
{
    if (++r->depth > TB_JSON_READER_MAX_DEPTH) {
        return false;
    }
    if (!accept(r, '}')) {
        do {
            tb_json_span_t key;
            bool escaped;
            if (!read_string(r, &key, &escaped) || escaped || !accept(r, ':') ||
                !fn(r, key, opaque)) {
                return false;
            }
        } while (accept(r, ','));
        if (!accept(r, '}')) {
            return false;
        }
    }
    r->depth--;
    return true;
}

/* The items of an array whose '[' was read, each through fn, then the
 * ']'. */
static bool read_items(tb_reader_t *r, bool (*fn)(tb_reader_t *r, void *opaque),
                       void *opaque)
{
    if (++r->depth > TB_JSON_READER_MAX_DEPTH) {
        return false;
    }
    if (!accept(r, ']')) {
        do {
            if (!fn(r, opaque)) {
                return false;
            }
        } while (accept(r, ','));
        if (!accept(r, ']')) {
            return false;
        }
    }
    r->depth--;
    return true;
}

static bool skip_member(tb_reader_t *r, tb_json_span_t key, void *opaque)
{
    (void)key;
    (void)opaque;
    return skip_value(r);
}

static bool skip_item(tb_reader_t *r, void *opaque)
{
    (void)opaque;
    return skip_value(r);
}

/* Any value, checked and passed over. */
static bool skip_value(tb_reader_t *r)
{
    tb_json_span_t text;
    bool flag;
    if (accept(r, '{')) {
        return read_members(r, skip_member, NULL);
    }
    if (accept(r, '[')) {
        return read_items(r, skip_item, NULL);
    }
    if (r->pos < r->n && r->s[r->pos] == '"') {
        return read_string(r, &text, &flag);
    }
    if (read_bool(r, &flag) || accept_word(r, "null", 4)) {
        return true;
    }
    int64_t i;
    double d;
    return read_number(r, &text, &flag) && number_value(text, flag, &i, &d);
}

/* -------------------------------------------------------------------------
 * Connect data
 */

static bool read_value(tb_reader_t *r, const tb_schema_t *schema, tb_value_t **out);

/* What a null (or an absent struct field) reads as under schema. */
static bool null_value(const tb_schema_t *schema, tb_value_t **out)
{
    *out = NULL;
    if (tb_schema_default(schema) != NULL) {
        return (*out = tb_value_copy(tb_schema_default(schema))) != NULL;
    }
    return tb_schema_optional(schema);
}

typedef struct {
    tb_value_t *value; /* the struct, map or array being read */
    const tb_schema_t *schema;
    size_t next_field; /* where the next member's field is looked for first */
} tb_container_t;

static bool struct_member(tb_reader_t *r, tb_json_span_t key, void *opaque)
{
    tb_container_t *c = opaque;
    size_t count = tb_schema_field_count(c->schema);
    const tb_field_t *f = NULL;
    for (size_t k = 0; f == NULL && k < count; k++) { /* members mostly in order */
        const tb_field_t *candidate =
            tb_schema_field_at(c->schema, (c->next_field + k) % count);
        if (strlen(candidate->name) == key.n &&
            memcmp(candidate->name, key.s, key.n) == 0) {
            f = candidate;
        }
    }
    if (f == NULL) {
        return skip_value(r); /* a member the schema does not have */
    }
    c->next_field = f->index + 1;
    tb_value_t *v;
    return read_value(r, f->schema, &v) &&
           tb_value_struct_set_at(c->value, f->index, v) == 0;
}

static bool read_struct(tb_reader_t *r, const tb_schema_t *schema, tb_value_t **out)
{
    tb_container_t c = {tb_value_struct((tb_schema_t *)schema), schema, 0};
    if (c.value == NULL || !read_members(r, struct_member, &c)) {
        tb_value_free(c.value);
        return false;
    }
    for (size_t i = 0; i < tb_schema_field_count(schema); i++) {
        tb_value_t *v;
        const tb_field_t *f = tb_schema_field_at(schema, i);
        if (tb_value_struct_get_at(c.value, i) == NULL &&
            (!null_value(f->schema, &v) || tb_value_struct_set_at(c.value, i, v) != 0)) {
            tb_value_free(c.value);
            return false;
        }
    }
    *out = c.value;
    return true;
}

/* A member of an object read as a map with string keys (values under
 * c->schema, NULL: schemaless). */
static bool map_member(tb_reader_t *r, tb_json_span_t key, void *opaque)
{
    tb_container_t *c = opaque;
    tb_value_t *k = tb_value_string(key.s, key.n);
    tb_value_t *v;
    if (k == NULL || !read_value(r, c->schema, &v)) {
        tb_value_free(k);
        return false;
    }
    return tb_value_map_put(c->value, k, v) == 0;
}

/* An item of an array (items under c->schema, NULL: schemaless). */
static bool array_item(tb_reader_t *r, void *opaque)
{
    tb_container_t *c = opaque;
    tb_value_t *v;
    return read_value(r, c->schema, &v) && tb_value_array_append(c->value, v) == 0;
}

/* A [key, value] pair of a map written as an array (c->schema the map's). */
static bool map_pair(tb_reader_t *r, void *opaque)
{
    tb_container_t *c = opaque;
    tb_value_t *k = NULL;
    tb_value_t *v = NULL;
    if (!accept(r, '[') || !read_value(r, tb_schema_key_schema(c->schema), &k) ||
        !accept(r, ',') || !read_value(r, tb_schema_value_schema(c->schema), &v) ||
        !accept(r, ']')) {
        tb_value_free(k);
        tb_value_free(v);
        return false;
    }
    return tb_value_map_put(c->value, k, v) == 0;
}

/* A container whose opening was read: c->value, freed when declined. */
static bool read_container(tb_reader_t *r, tb_container_t *c, bool object,
                           bool (*member)(tb_reader_t *, tb_json_span_t, void *),
                           bool (*item)(tb_reader_t *, void *), tb_value_t **out)
{
    if (c->value == NULL ||
        !(object ? read_members(r, member, c) : read_items(r, item, c))) {
        tb_value_free(c->value);
        return false;
    }
    *out = c->value;
    return true;
}

static bool read_schemaless(tb_reader_t *r, tb_value_t **out)
{
    tb_json_span_t text;
    bool flag;
    int64_t i;
    double d;
    *out = NULL;
    if (accept(r, '{')) {
        tb_container_t c = {tb_value_map(), NULL, 0};
        return read_container(r, &c, true, map_member, NULL, out);
    }
    if (accept(r, '[')) {
        tb_container_t c = {tb_value_array(), NULL, 0};
        return read_container(r, &c, false, NULL, array_item, out);
    }
    if (r->pos < r->n && r->s[r->pos] == '"') {
        return read_string(r, &text, &flag) &&
               (*out = tb_value_string(text.s, text.n)) != NULL;
    }
    if (read_bool(r, &flag)) {
        return (*out = tb_value_bool(flag)) != NULL;
    }
    if (accept_word(r, "null", 4)) {
        return true;
    }
    if (!read_number(r, &text, &flag) || !number_value(text, flag, &i, &d)) {
        return false;
    }
    *out = flag ? tb_value_int(TB_TYPE_INT64, i) : tb_value_float(TB_TYPE_FLOAT64, d);
    return *out != NULL;
}

/* A primitive under schema (type given): numbers, booleans, strings. */
static bool read_primitive(tb_reader_t *r, const tb_schema_t *schema, tb_type_t type,
                           tb_value_t **out)
{
    tb_json_span_t text;
    bool flag;
    int64_t i;
    double d;
    switch (type) {
    case TB_TYPE_BOOLEAN:
        return read_bool(r, &flag) && (*out = tb_value_bool(flag)) != NULL;
    case TB_TYPE_STRING:
        return read_string(r, &text, &flag) &&
               (*out = tb_value_string(text.s, text.n)) != NULL;
    case TB_TYPE_BYTES: {
        char errstr[8];
        skip_space(r);
        if (tb_schema_is_logical(schema, TB_LOGICAL_DECIMAL) && r->pos < r->n &&
            r->s[r->pos] != '"') {
            /* the digits come from the text, but jansson must read it too */
            return read_number(r, &text, &flag) && number_value(text, flag, &i, &d) &&
                   (*out = tb_decimal_parse(text.s, text.n, tb_decimal_scale(schema),
                                            errstr, sizeof(errstr))) != NULL;
        }
        return read_string(r, &text, &flag) &&
               (*out = tb_json_base64_bytes(text.s, text.n)) != NULL;
    }
    default: /* the integers and reals */
        if (!read_number(r, &text, &flag) || !number_value(text, flag, &i, &d) ||
            (type <= TB_TYPE_INT64 && !flag)) {
            return false;
        }
        *out = type <= TB_TYPE_INT64 ? tb_value_int(type, i) : tb_value_float(type, d);
        return *out != NULL;
    }
}

static bool read_value(tb_reader_t *r, const tb_schema_t *schema, tb_value_t **out)
{
    *out = NULL;
    if (schema == NULL) {
        return read_schemaless(r, out);
    }
    if (accept_word(r, "null", 4)) {
        return null_value(schema, out);
    }
    tb_type_t type = tb_schema_type(schema);
    if (type == TB_TYPE_STRUCT) {
        return accept(r, '{') && read_struct(r, schema, out);
    }
    if (type == TB_TYPE_ARRAY) {
        if (!accept(r, '[')) {
            return false;
        }
        tb_container_t c = {tb_value_array(), tb_schema_items(schema), 0};
        return read_container(r, &c, false, NULL, array_item, out);
    }
    if (type == TB_TYPE_MAP) {
        bool string_keys = tb_schema_type(tb_schema_key_schema(schema)) == TB_TYPE_STRING;
        if (string_keys && accept(r, '{')) {
            tb_container_t c = {tb_value_map(), tb_schema_value_schema(schema), 0};
            return read_container(r, &c, true, map_member, NULL, out);
        }
        if (!accept(r, '[')) {
            return false;
        }
        tb_container_t c = {tb_value_map(), schema, 0};
        return read_container(r, &c, false, NULL, map_pair, out);
    }
    return read_primitive(r, schema, type, out);
}

/* Runs fn over text[0..len), which must hold nothing after what fn reads
 * but space. */
static bool read_all(const char *text, size_t len, bool (*fn)(tb_reader_t *, void *),
                     void *opaque)
{
    tb_reader_t r = {.s = text, .n = len};
    bool ok = fn(&r, opaque);
    skip_space(&r);
    ok = ok && r.pos == r.n;
    tb_buf_release(&r.scratch);
    return ok;
}

typedef struct {
    const tb_schema_t *schema;
    tb_value_t *value;
} tb_top_value_t;

static bool top_value(tb_reader_t *r, void *opaque)
{
    tb_top_value_t *top = opaque;
    return read_value(r, top->schema, &top->value);
}

bool tb_json_read_value(const tb_schema_t *schema, const char *text, size_t len,
                        tb_value_t **out)
{
    tb_top_value_t top = {schema, NULL};
    *out = NULL;
    if (!read_all(text, len, top_value, &top)) {
        tb_value_free(top.value);
        return false;
    }
    *out = top.value;
    return true;
}

typedef struct {
    tb_json_span_t known; /* a schema text read before; n 0: none */
    tb_json_span_t schema;
    tb_json_span_t payload;
    bool has_schema;
    bool has_payload;
} tb_envelope_t;

/* Whether the known text is the value at r->pos: its bytes, then the end
 * of the member. A JSON value ends where it ends (a number, the one kind
 * that does not, is followed by the member's end), so the value is exactly
 * the known text, which jansson read before. */
static bool at_known(tb_reader_t *r, tb_json_span_t known)
{
    if (known.n == 0 || r->n - r->pos < known.n ||
        memcmp(r->s + r->pos, known.s, known.n) != 0) {
        return false;
    }
    size_t end = r->pos + known.n;
    while (end < r->n && (r->s[end] == ' ' || r->s[end] == '\t' || r->s[end] == '\n' ||
                          r->s[end] == '\r')) {
        end++;
    }
    return end < r->n && (r->s[end] == ',' || r->s[end] == '}');
}

static bool envelope_member(tb_reader_t *r, tb_json_span_t key, void *opaque)
{
    tb_envelope_t *e = opaque;
    bool is_schema = key.n == 6 && memcmp(key.s, "schema", 6) == 0;
    if (!is_schema && !(key.n == 7 && memcmp(key.s, "payload", 7) == 0)) {
        return false;
    }
    skip_space(r);
    size_t start = r->pos;
    if (is_schema && at_known(r, e->known)) {
        r->pos += e->known.n;
    } else if (!skip_value(r)) {
        return false;
    }
    tb_json_span_t value = {r->s + start, r->pos - start};
    if (is_schema) {
        e->schema = value;
        e->has_schema = true;
    } else {
        e->payload = value;
        e->has_payload = true;
    }
    return true;
}

static bool top_envelope(tb_reader_t *r, void *opaque)
{
    return accept(r, '{') && read_members(r, envelope_member, opaque);
}

bool tb_json_read_envelope(const char *text, size_t len, tb_json_span_t known,
                           tb_json_span_t *schema, tb_json_span_t *payload)
{
    tb_envelope_t e = {.known = known};
    if (!read_all(text, len, top_envelope, &e) || !e.has_schema || !e.has_payload) {
        return false;
    }
    *schema = e.schema;
    *payload = e.payload;
    return true;
}
