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
    const char *key;
    json_t *value;
} member_t;

static int by_bucket(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    if (x->bucket != y->bucket) {
        return x->bucket < y->bucket ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

json_t *tb_pg_java_hashmap_order(json_t *object)
{
    size_t n = json_object_size(object), buckets = 16, i = 0;
    while (n > buckets / 4 * 3) {
        buckets *= 2;
    }
    member_t *members = calloc(n + 1, sizeof(*members));
    json_t *ordered = json_object();
    const char *key;
    json_t *value;
    if (members == NULL || ordered == NULL) {
        free(members);
        json_decref(ordered);
        return NULL;
    }
    json_object_foreach (object, key, value) {
        uint32_t h = java_hash(key);
        members[i] = (member_t){.bucket = (h ^ h >> 16) & (buckets - 1),
                                .index = i,
                                .key = key,
                                .value = value};
        i++;
    }
    qsort(members, n, sizeof(*members), by_bucket);
    for (i = 0; i < n; i++) {
        if (json_object_set(ordered, members[i].key, members[i].value) != 0) {
            json_decref(ordered);
            ordered = NULL;
            break;
        }
    }
    free(members);
    return ordered;
}
