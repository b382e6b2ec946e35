#include "core/tb_version_range.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One item of a version: a run of digits or of other characters. */
typedef struct {
    const char *p;
    size_t len;
    bool numeric;
} item_t;

static bool separator(char c)
{
    return c == '.' || c == '-';
}

/* The item of s (n bytes) at *pos, past the separators before it; false
 * at the end. Advances *pos past the item. */
static bool next_item(const char *s, size_t n, size_t *pos, item_t *item)
{
    size_t i = *pos;
    while (i < n && separator(s[i])) {
        i++;
    }
    *pos = i;
    if (i >= n) {
        return false;
    }
    bool digits = isdigit((unsigned char)s[i]) != 0;
    size_t start = i;
    while (i < n && !separator(s[i]) && (isdigit((unsigned char)s[i]) != 0) == digits) {
        i++;
    }
    *item = (item_t){.p = s + start, .len = i - start, .numeric = digits};
    *pos = i;
    return true;
}

static bool item_is(const item_t *item, const char *word)
{
    return item->len == strlen(word) && strncasecmp(item->p, word, item->len) == 0;
}

/* Maven's order of qualifiers; a release ("", "ga", "final") ranks 5, an
 * unknown qualifier 7. NULL is the absent item, a release. */
static int qualifier_rank(const item_t *item)
{
    static const char *const order[] = {"alpha", "beta", "milestone", "rc", "snapshot"};
    if (item == NULL || item_is(item, "ga") || item_is(item, "final") ||
        item_is(item, "release")) {
        return 5;
    }
    if (item_is(item, "cr")) {
        return 3;
    }
    if (item_is(item, "sp")) {
        return 6;
    }
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        if (item_is(item, order[i])) {
            return (int)i;
        }
    }
    return 7;
}

/* A run of digits without its leading zeros. */
static item_t significant(const item_t *number)
{
    item_t out = *number;
    while (out.len > 0 && out.p[0] == '0') {
        out.p++;
        out.len--;
    }
    return out;
}

static int compare_numbers(const item_t *a, const item_t *b)
{
    item_t x = significant(a), y = significant(b);
    if (x.len != y.len) {
        return x.len < y.len ? -1 : 1;
    }
    return x.len == 0 ? 0 : strncmp(x.p, y.p, x.len);
}

/* Compares two items; NULL is an absent one (a zero, or a release). */
static int compare_items(const item_t *a, const item_t *b)
{
    if (a == NULL && b == NULL) {
        return 0;
    }
    if (a == NULL) {
        return -compare_items(b, NULL);
    }
    if (a->numeric) {
        if (b == NULL) {
            return significant(a).len == 0 ? 0 : 1;
        }
        return b->numeric ? compare_numbers(a, b) : 1;
    }
    if (b != NULL && b->numeric) {
        return -1;
    }
    int ra = qualifier_rank(a), rb = qualifier_rank(b);
    if (ra != rb) {
        return ra < rb ? -1 : 1;
    }
    if (ra == 7) { /* two unknown qualifiers: by their text */
        size_t n = a->len < b->len ? a->len : b->len;
        int c = strncasecmp(a->p, b->p, n);
        return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
    }
    return 0;
}

/* tb_version_compare over counted strings. */
static int compare_n(const char *a, size_t na, const char *b, size_t nb)
{
    size_t pa = 0, pb = 0;
    for (;;) { /* each round consumes an item of a or b */
        item_t ia, ib;
        bool has_a = next_item(a, na, &pa, &ia);
        bool has_b = next_item(b, nb, &pb, &ib);
        if (!has_a && !has_b) {
            return 0;
        }
        int c = compare_items(has_a ? &ia : NULL, has_b ? &ib : NULL);
        if (c != 0) {
            return c;
        }
    }
}

int tb_version_compare(const char *a, const char *b)
{
    return compare_n(a, strlen(a), b, strlen(b));
}

/* A version within a range: len 0 means unbounded. */
typedef struct {
    const char *p;
    size_t len;
} bound_t;

typedef struct {
    bound_t lower, upper;
    bool lower_inclusive, upper_inclusive;
} restriction_t;

#define MAX_RESTRICTIONS 16

typedef struct {
    restriction_t r[MAX_RESTRICTIONS];
    size_t count;
} range_t;

static void trim(const char **p, size_t *len)
{
    while (*len > 0 && isspace((unsigned char)(*p)[0])) {
        (*p)++;
        (*len)--;
    }
    while (*len > 0 && isspace((unsigned char)(*p)[*len - 1])) {
        (*len)--;
    }
}

static int malformed(char *text, size_t size, const char *why, const char *what,
                     size_t len)
{
    if (size > 0) {
        snprintf(text, size, "%s: %.*s", why, (int)len, what);
    }
    return -1;
}

/* One "[a,b)" of a range (s, n bytes, brackets included) into out. */
static int parse_restriction(const char *s, size_t n, restriction_t *out, char *text,
                             size_t size)
{
    const char *inner = s + 1;
    size_t len = n - 2;
    trim(&inner, &len);
    out->lower_inclusive = s[0] == '[';
    out->upper_inclusive = s[n - 1] == ']';
    const char *comma = memchr(inner, ',', len);
    if (comma == NULL) {
        if (!out->lower_inclusive || !out->upper_inclusive) {
            return malformed(text, size, "Single version must be surrounded by []", s, n);
        }
        out->lower = out->upper = (bound_t){inner, len};
        return 0;
    }
    out->lower = (bound_t){inner, (size_t)(comma - inner)};
    out->upper = (bound_t){comma + 1, len - (size_t)(comma - inner) - 1};
    trim(&out->lower.p, &out->lower.len);
    trim(&out->upper.p, &out->upper.len);
    if (out->lower.len == out->upper.len &&
        strncmp(out->lower.p, out->upper.p, out->lower.len) == 0) {
        return malformed(text, size, "Range cannot have identical boundaries", s, n);
    }
    if (out->lower.len > 0 && out->upper.len > 0 &&
        compare_n(out->upper.p, out->upper.len, out->lower.p, out->lower.len) < 0) {
        return malformed(text, size, "Range defies version ordering", s, n);
    }
    return 0;
}

/* Maven's VersionRange.createFromVersionSpec of spec (n bytes), which
 * starts with '[' or '('. */
static int parse_range(const char *spec, size_t n, range_t *range, char *text,
                       size_t size)
{
    const char *rest = spec;
    size_t left = n;
    range->count = 0;
    while (left > 0 && (rest[0] == '[' || rest[0] == '(')) {
        size_t end = 0;
        while (end < left && rest[end] != ']' && rest[end] != ')') {
            end++;
        }
        if (end == left) {
            return malformed(text, size, "Unbounded range", spec, n);
        }
        if (range->count == MAX_RESTRICTIONS) {
            return malformed(text, size, "Too many ranges", spec, n);
        }
        restriction_t *r = &range->r[range->count];
        if (parse_restriction(rest, end + 1, r, text, size) != 0) {
            return -1;
        }
        const restriction_t *before =
            range->count > 0 ? &range->r[range->count - 1] : NULL;
        if (before != NULL && before->upper.len > 0 &&
            (r->lower.len == 0 || compare_n(r->lower.p, r->lower.len, before->upper.p,
                                            before->upper.len) < 0)) {
            return malformed(text, size, "Ranges overlap", spec, n);
        }
        range->count++;
        rest += end + 1;
        left -= end + 1;
        trim(&rest, &left);
        if (left > 0 && rest[0] == ',') {
            rest++;
            left--;
            trim(&rest, &left);
        }
    }
    if (left > 0) {
        return malformed(text, size,
                         "Only fully-qualified sets allowed in multiple set scenario",
                         spec, n);
    }
    return 0;
}

static bool contains(const restriction_t *r, const char *version)
{
    size_t n = strlen(version);
    if (r->lower.len > 0) {
        int c = compare_n(version, n, r->lower.p, r->lower.len);
        if (c < 0 || (c == 0 && !r->lower_inclusive)) {
            return false;
        }
    }
    if (r->upper.len > 0) {
        int c = compare_n(version, n, r->upper.p, r->upper.len);
        if (c > 0 || (c == 0 && !r->upper_inclusive)) {
            return false;
        }
    }
    return true;
}

/* The range as Maven prints it: each restriction "[lower,upper)". */
static void print_range(const range_t *range, char *text, size_t size)
{
    size_t used = 0;
    for (size_t i = 0; i < range->count && used < size; i++) {
        const restriction_t *r = &range->r[i];
        used += (size_t)snprintf(text + used, size - used, "%s%c%.*s,%.*s%c",
                                 i ? "," : "", r->lower_inclusive ? '[' : '(',
                                 (int)r->lower.len, r->lower.p, (int)r->upper.len,
                                 r->upper.p, r->upper_inclusive ? ']' : ')');
    }
}

tb_version_range_match_t tb_version_range_match(const char *spec, const char *version,
                                                char *text, size_t text_size)
{
    tb_version_range_match_t match = TB_VERSION_RANGE_MALFORMED;
    range_t range;
    char *full = NULL;
    size_t n = spec != NULL ? strlen(spec) : 0;
    if (spec != NULL) {
        trim(&spec, &n);
    }
    if (n == 0 || (n == 6 && strncmp(spec, "latest", 6) == 0)) {
        return TB_VERSION_RANGE_INSIDE;
    }
    /* as Connect: a bare version is a hard requirement, that one only */
    bool bare = spec[0] != '[' && spec[0] != '(';
    if (asprintf(&full, bare ? "[%.*s]" : "%.*s", (int)n, spec) < 0) {
        full = NULL;
        malformed(text, text_size, "Out of memory reading", spec, n);
        goto fail;
    }
    if (parse_range(full, strlen(full), &range, text, text_size) != 0) {
        goto fail;
    }
    match = TB_VERSION_RANGE_OUTSIDE;
    for (size_t i = 0; i < range.count && match == TB_VERSION_RANGE_OUTSIDE; i++) {
        if (contains(&range.r[i], version)) {
            match = TB_VERSION_RANGE_INSIDE;
        }
    }
    if (match == TB_VERSION_RANGE_OUTSIDE && text_size > 0) {
        print_range(&range, text, text_size);
    }
fail:
    free(full);
    return match;
}
