/* A Java HashMap's iteration order (tb_pg_java_order.h). */
#include <stdint.h>
#include <stdlib.h>

#include "connectors/postgres/tb_pg_java_order.h"

/* The next code point of UTF-8 text at *p (a stray byte stands for itself). */
static uint32_t next_code_point(const unsigned char **p)
{
    const unsigned char *s = *p;
    int extra = s[0] >= 0xf0 ? 3 : s[0] >= 0xe0 ? 2 : s[0] >= 0xc0 ? 1 : 0;
    uint32_t cp = extra == 0 ? s[0] : s[0] & (0x3fu >> extra);
    for (int i = 1; i <= extra; i++) {
        if ((s[i] & 0xc0) != 0x80) { /* malformed: the lead byte alone */
            *p = s + 1;
            return s[0];
        }
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    *p = s + extra + 1;
    return cp;
}

/* String.hashCode(): h = 31 h + u over the UTF-16 units. */
static uint32_t java_hash(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    uint32_t h = 0;
    while (*p != '\0') {
        uint32_t cp = next_code_point(&p);
        if (cp >= 0x10000) { /* a surrogate pair */
            cp -= 0x10000;
            h = 31 * h + (0xd800 + (cp >> 10));
            cp = 0xdc00 + (cp & 0x3ff);
        }
        h = 31 * h + cp;
    }
    return h;
}

typedef struct {
    size_t bucket;
    size_t index; /* insertion order */
} member_t;

static int by_bucket(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    if (x->bucket != y->bucket) {
        return x->bucket < y->bucket ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

size_t tb_pg_java_hashmap_buckets(size_t n, size_t buckets)
{
    while (n > buckets / 4 * 3) {
        buckets *= 2;
    }
    return buckets;
}

int tb_pg_java_hashmap_sort(const char *const *keys, size_t n, size_t buckets,
                            size_t *order)
{
    member_t *members = calloc(n + 1, sizeof(*members));
    if (members == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t h = java_hash(keys[i]);
        members[i] = (member_t){.bucket = (h ^ h >> 16) & (buckets - 1), .index = i};
    }
    qsort(members, n, sizeof(*members), by_bucket);
    for (size_t i = 0; i < n; i++) {
        order[i] = members[i].index;
    }
    free(members);
    return 0;
}

json_t *tb_pg_java_hashmap_order(json_t *object)
{
    size_t n = json_object_size(object), i = 0;
    const char **keys = calloc(n + 1, sizeof(*keys));
    size_t *order = calloc(n + 1, sizeof(*order));
    json_t *ordered = json_object();
    const char *key;
    json_t *value;
    if (keys == NULL || order == NULL || ordered == NULL) {
        goto fail;
    }
    json_object_foreach (object, key, value) {
        keys[i++] = key;
    }
    size_t buckets = tb_pg_java_hashmap_buckets(n, TB_PG_JAVA_HASHMAP_BUCKETS);
    if (tb_pg_java_hashmap_sort(keys, n, buckets, order) != 0) {
        goto fail;
    }
    for (i = 0; i < n; i++) {
        if (json_object_set(ordered, keys[order[i]],
                            json_object_get(object, keys[order[i]])) != 0) {
            goto fail;
        }
    }
    free(keys);
    free(order);
    return ordered;
fail:
    free(keys);
    free(order);
    json_decref(ordered);
    return NULL;
}
