/*
 * A schemaless JSON object edited as text (tb_json_edit.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_json_edit.h"
#include "connectors/converters/tb_json_text.h"
#include "connectors/converters/tb_json_writer.h"

/* Deeper nesting, longer numbers and wider objects are declined (the
 * tree path takes them); none is a limit on what tributary accepts. */
#define EDIT_MAX_DEPTH 32
#define EDIT_MAX_NUMBER 40
#define EDIT_MAX_NESTED_MEMBERS 64

/* Where a scan of the input stands. */
typedef struct {
    const char *s;
    size_t n;
    size_t pos;
    tb_buf_t *number; /* where a real is written again, to compare */
} tb_scan_t;

static bool space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static void skip_space(tb_scan_t *sc)
{
    while (sc->pos < sc->n && space(sc->s[sc->pos])) {
        sc->pos++;
    }
}

static bool accept(tb_scan_t *sc, char ch)
{
    if (sc->pos < sc->n && sc->s[sc->pos] == ch) {
        sc->pos++;
        return true;
    }
    return false;
}

/* A string literal at pos that the writer would write as it is, its
 * content (without quotes) in *text. key: no escape at all. */
static bool scan_string(tb_scan_t *sc, bool key, tb_json_span_t *text)
{
    if (!accept(sc, '"')) {
        return false;
    }
    size_t start = sc->pos;
    while (sc->pos < sc->n) {
        unsigned char ch = (unsigned char)sc->s[sc->pos];
        if (ch == '"') {
            *text = (tb_json_span_t){sc->s + start, sc->pos - start};
            sc->pos++;
            return true;
        }
        if (ch == '\\') {
            if (key || sc->pos + 1 >= sc->n ||
                strchr("\"\\btnfr", sc->s[sc->pos + 1]) == NULL ||
                sc->s[sc->pos + 1] == '\0') {
                return false;
            }
            sc->pos += 2;
        } else if (ch < 0x20) {
            return false;
        } else if (ch < 0x80) {
            sc->pos++;
        } else {
            size_t step = tb_json_utf8_sequence((const unsigned char *)sc->s + sc->pos,
                                                sc->n - sc->pos);
            if (step == 0) {
                return false;
            }
            sc->pos += step;
        }
    }
    return false;
}

static bool digit(tb_scan_t *sc)
{
    return sc->pos < sc->n && sc->s[sc->pos] >= '0' && sc->s[sc->pos] <= '9';
}

static void skip_digits(tb_scan_t *sc)
{
    while (digit(sc)) {
        sc->pos++;
    }
}

/* What a scan of a value found. */
typedef enum {
    SCAN_DECLINED = 0,
    SCAN_VERBATIM, /* the writer would write the value's text as it is */
    SCAN_REWRITTEN /* a real the writer writes otherwise: as in sc->number */
} tb_scan_result_t;

/*
 * Whether a real's text, [-]I.F without an exponent (I without a leading
 * zero unless it is 0), is what the writer's Double.toString writes of the
 * double it reads as, with no need for strtod and the writer to find out.
 * It is when I has at most 7 digits, the value is at least 0.001 (I is 0:
 * at most two zeros lead F, and F is not all zeros), F ends in a digit
 * other than 0 unless F is that one 0, and at most 15 digits follow the
 * first non-zero one. Proof: two decimals of at most 15 significant digits
 * that differ read as different doubles (DBL_DIG is 15), so no text shorter
 * than the value's own digits reads back as the double d it reads as, and
 * its own digits do: they are the shortest the writer looks for. d is in
 * the writer's plain range [1e-3, 1e7): rounding is monotone, 0.001 reads
 * as a double above 1e-3, and 9999999.99999999, the greatest such text
 * below 1e7, reads as a double below it (the doubles there are 2^-29
 * apart). The writer then writes the digits as I.F: I's digits (0 when
 * below 1), a point, the zeros that lead F and its digits up to the last
 * non-zero one, or 0 when there is none: the text itself. Zero is left to
 * the writer (its sign).
 */
static bool java_plain_decimal(const char *text, size_t len)
{
    size_t point = 0;
    size_t i = text[0] == '-' ? 1 : 0;
    size_t significant = 0;
    bool nonzero = false;
    for (size_t j = i; j < len; j++) {
        if (text[j] == '.') {
            point = j;
        } else if (nonzero || text[j] != '0') {
            nonzero = true;
            significant++;
        }
    }
    size_t integer_digits = point - i;
    size_t fraction_digits = len - point - 1;
    if (!nonzero || significant > 15 || integer_digits > 7) {
        return false;
    }
    if (text[len - 1] == '0' && fraction_digits > 1) {
        return false;
    }
    if (text[i] == '0') { /* below 1: at least 0.001, a non-zero digit in F's first 3 */
        size_t first = point + 1;
        while (text[first] == '0') {
            first++;
        }
        return first <= point + 3;
    }
    return true;
}

/* A number at pos: verbatim when written as the writer writes what
 * JsonConverter reads of it (an int64 in plain decimal, a double as Java's
 * Double.toString), rewritten for a double written otherwise (1e5, 1.50),
 * declined for an integer that does not read back as written (-0, past 64
 * bits: JsonConverter then reads a real). */
static tb_scan_result_t scan_number(tb_scan_t *sc)
{
    size_t start = sc->pos;
    bool integer = true;
    accept(sc, '-');
    if (accept(sc, '0')) {
        if (digit(sc)) {
            return SCAN_DECLINED;
        }
    } else if (digit(sc)) {
        skip_digits(sc);
    } else {
        return SCAN_DECLINED;
    }
    if (accept(sc, '.')) {
        integer = false;
        if (!digit(sc)) {
            return SCAN_DECLINED;
        }
        skip_digits(sc);
    }
    bool exponent = false;
    if (accept(sc, 'e') || accept(sc, 'E')) {
        integer = false;
        exponent = true;
        if (!accept(sc, '+')) {
            accept(sc, '-');
        }
        if (!digit(sc)) {
            return SCAN_DECLINED;
        }
        skip_digits(sc);
    }
    size_t len = sc->pos - start;
    char text[EDIT_MAX_NUMBER + 1];
    if (integer && len < 19) { /* 18 digits or fewer fit */
        return len == 2 && sc->s[start] == '-' && sc->s[start + 1] == '0' ? SCAN_DECLINED
                                                                          : SCAN_VERBATIM;
    }
    if (!integer && !exponent && java_plain_decimal(sc->s + start, len)) {
        return SCAN_VERBATIM;
    }
    if (len > EDIT_MAX_NUMBER) {
        return SCAN_DECLINED;
    }
    memcpy(text, sc->s + start, len);
    text[len] = '\0';
    errno = 0;
    if (integer) { /* -0 reads as 0; past 64 bits JsonConverter reads a real */
        (void)strtoll(text, NULL, 10);
        return errno != ERANGE && strcmp(text, "-0") != 0 ? SCAN_VERBATIM : SCAN_DECLINED;
    }
    double d = strtod(text, NULL);
    if (!isfinite(d)) {
        return SCAN_DECLINED;
    }
    sc->number->len = 0;
    tb_json_put_real(sc->number, d, false);
    if (sc->number->failed) {
        return SCAN_DECLINED;
    }
    return sc->number->len == len && memcmp(sc->number->data, text, len) == 0
               ? SCAN_VERBATIM
               : SCAN_REWRITTEN;
}

static bool scan_word(tb_scan_t *sc, const char *word)
{
    size_t n = strlen(word);
    if (sc->n - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0) {
        return false;
    }
    sc->pos += n;
    return true;
}

static tb_scan_result_t scan_value(tb_scan_t *sc, int depth);

/* Whether keys[0..count) holds key. */
static bool repeated(const tb_json_span_t *keys, size_t count, tb_json_span_t key)
{
    for (size_t i = 0; i < count; i++) {
        if (keys[i].n == key.n && memcmp(keys[i].s, key.s, key.n) == 0) {
            return true;
        }
    }
    return false;
}

/* A nested object or array at pos, without whitespace. */
static bool scan_container(tb_scan_t *sc, int depth)
{
    bool object = sc->s[sc->pos] == '{';
    char close = object ? '}' : ']';
    tb_json_span_t keys[EDIT_MAX_NESTED_MEMBERS];
    size_t count = 0;
    if (depth >= EDIT_MAX_DEPTH) {
        return false;
    }
    sc->pos++;
    if (accept(sc, close)) {
        return true;
    }
    do {
        if (object) {
            tb_json_span_t key;
            if (count == EDIT_MAX_NESTED_MEMBERS || !scan_string(sc, true, &key) ||
                repeated(keys, count, key) || !accept(sc, ':')) {
                return false;
            }
            keys[count++] = key;
        }
        if (scan_value(sc, depth + 1) != SCAN_VERBATIM) {
            return false;
        }
    } while (accept(sc, ','));
    return accept(sc, close);
}

/* A value at pos; nested (depth > 1) only verbatim counts. */
static tb_scan_result_t scan_value(tb_scan_t *sc, int depth)
{
    tb_json_span_t text;
    bool ok;
    if (sc->pos >= sc->n) {
        return SCAN_DECLINED;
    }
    switch (sc->s[sc->pos]) {
    case '"':
        ok = scan_string(sc, false, &text);
        break;
    case '{':
    case '[':
        ok = scan_container(sc, depth);
        break;
    case 't':
        ok = scan_word(sc, "true");
        break;
    case 'f':
        ok = scan_word(sc, "false");
        break;
    case 'n':
        ok = scan_word(sc, "null");
        break;
    default:
        return scan_number(sc);
    }
    return ok ? SCAN_VERBATIM : SCAN_DECLINED;
}

/* Room for one more member. */
static bool grow(tb_json_object_t *o)
{
    if (o->count < o->cap) {
        return true;
    }
    size_t cap = o->cap > 0 ? o->cap * 2 : 16;
    tb_json_member_t *m = realloc(o->members, cap * sizeof(*m));
    if (m == NULL) {
        return false;
    }
    o->members = m;
    o->cap = cap;
    return true;
}

bool tb_json_object_read(tb_json_object_t *o, const char *text, size_t len)
{
    tb_scan_t sc = {.s = text, .n = len, .number = &o->number};
    if (o->cap > TB_JSON_OBJECT_KEEP_MEMBERS ||
        o->values.cap > TB_JSON_OBJECT_KEEP_BYTES) {
        tb_json_object_release(o); /* grown for one large object: not kept */
    }
    o->count = 0;
    o->values.len = 0;
    o->values.failed = false;
    o->number.failed = false;
    skip_space(&sc);
    if (!accept(&sc, '{')) {
        return false;
    }
    skip_space(&sc);
    if (!accept(&sc, '}')) {
        do {
            tb_json_span_t key;
            skip_space(&sc);
            if (!scan_string(&sc, true, &key) ||
                tb_json_object_find(o, key.s, key.n) >= 0 || !grow(o)) {
                goto fail;
            }
            skip_space(&sc);
            if (!accept(&sc, ':')) {
                goto fail;
            }
            skip_space(&sc);
            size_t start = sc.pos;
            tb_scan_result_t found = scan_value(&sc, 1);
            tb_json_member_t *m = &o->members[o->count++];
            *m = (tb_json_member_t){.name = key.s,
                                    .name_len = key.n,
                                    .name_plain = true,
                                    .value = sc.s + start,
                                    .value_off = SIZE_MAX,
                                    .value_len = sc.pos - start};
            if (found == SCAN_REWRITTEN) { /* the writer's text of that real */
                m->value_off = o->values.len;
                m->value_len = o->number.len;
                tb_buf_append(&o->values, o->number.data, o->number.len);
            }
            if (found == SCAN_DECLINED || o->values.failed) {
                goto fail;
            }
            skip_space(&sc);
        } while (accept(&sc, ','));
        if (!accept(&sc, '}')) {
            goto fail;
        }
    }
    skip_space(&sc);
    if (sc.pos == sc.n) {
        return true;
    }

fail:
    o->count = 0;
    return false;
}

long tb_json_object_find(const tb_json_object_t *o, const char *name, size_t name_len)
{
    for (size_t i = 0; i < o->count; i++) {
        if (o->members[i].name_len == name_len &&
            memcmp(o->members[i].name, name, name_len) == 0) {
            return (long)i;
        }
    }
    return -1;
}

/* Puts name -> the value text written at values[start..): see put_string. */
static int put_written(tb_json_object_t *o, const char *name, size_t start)
{
    size_t name_len = strlen(name);
    long i = tb_json_object_find(o, name, name_len);
    if (o->values.failed || (i < 0 && !grow(o))) {
        return -1;
    }
    if (i < 0) {
        i = (long)o->count++;
    }
    o->members[i] = (tb_json_member_t){.name = name,
                                       .name_len = name_len,
                                       .value_off = start,
                                       .value_len = o->values.len - start};
    return 0;
}

int tb_json_object_put_string(tb_json_object_t *o, const char *name, const char *s,
                              size_t n)
{
    size_t start = o->values.len;
    if (s == NULL) {
        tb_buf_append(&o->values, "null", 4);
    } else {
        tb_json_put_string(&o->values, s, n);
    }
    return put_written(o, name, start);
}

int tb_json_object_put_int(tb_json_object_t *o, const char *name, int64_t i)
{
    size_t start = o->values.len;
    tb_json_put_int(&o->values, i);
    return put_written(o, name, start);
}

void tb_json_object_write(const tb_json_object_t *o, tb_buf_t *out)
{
    tb_buf_append(out, "{", 1);
    for (size_t i = 0; i < o->count; i++) {
        const tb_json_member_t *m = &o->members[i];
        if (i > 0) {
            tb_buf_append(out, ",", 1);
        }
        if (m->name_plain) {
            tb_buf_append(out, "\"", 1);
            tb_buf_append(out, m->name, m->name_len);
            tb_buf_append(out, "\":", 2);
        } else {
            tb_json_put_string(out, m->name, m->name_len);
            tb_buf_append(out, ":", 1);
        }
        tb_buf_append(out,
                      m->value_off == SIZE_MAX ? m->value : o->values.data + m->value_off,
                      m->value_len);
    }
    tb_buf_append(out, "}", 1);
}

void tb_json_object_release(tb_json_object_t *o)
{
    free(o->members);
    tb_buf_release(&o->values);
    tb_buf_release(&o->number);
    *o = (tb_json_object_t){0};
}
