/*
 * registry_cache.c - the bounded LRU cache of the registry client. Entries
 * are few (hundreds): a scan over their hashes is cheaper than keeping an
 * index in step with evictions.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "registry/tb_registry_cache.h"

/* The schema with its reference count in front, as the client allocates
 * it. */
typedef struct {
    atomic_int refs;
    tb_registry_schema_t schema;
} counted_t;

typedef struct {
    uint64_t hash;
    char *key;
    size_t key_len;
    tb_registry_schema_t *schema; /* NULL: a free slot */
    uint64_t used;                /* the tick of the last use */
    int64_t stored_ms;
} entry_t;

struct tb_registry_cache {
    entry_t *entries;
    size_t capacity;
    uint64_t tick;
};

static counted_t *counted_of(tb_registry_schema_t *schema)
{
    return (counted_t *)((char *)schema - offsetof(counted_t, schema));
}

tb_registry_schema_t *tb_registry_schema_new(void)
{
    counted_t *counted = calloc(1, sizeof(*counted));
    if (counted == NULL) {
        return NULL;
    }
    counted->schema.references = json_array();
    if (counted->schema.references == NULL) {
        free(counted);
        return NULL;
    }
    atomic_init(&counted->refs, 1);
    counted->schema.version = -1;
    return &counted->schema;
}

tb_registry_schema_t *tb_registry_schema_ref(tb_registry_schema_t *schema)
{
    atomic_fetch_add(&counted_of(schema)->refs, 1);
    return schema;
}

void tb_registry_schema_release(tb_registry_schema_t *schema)
{
    if (schema == NULL) {
        return;
    }
    counted_t *counted = counted_of(schema);
    if (atomic_fetch_sub(&counted->refs, 1) == 1) {
        free(schema->text);
        json_decref(schema->references);
        free(counted);
    }
}

/* FNV-1a. */
static uint64_t hash_of(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    return h;
}

tb_registry_cache_t *tb_registry_cache_create(size_t capacity)
{
    tb_registry_cache_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    c->capacity = capacity > 0 ? capacity : 1;
    c->entries = calloc(c->capacity, sizeof(entry_t));
    if (c->entries == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

static void clear_entry(entry_t *e)
{
    free(e->key);
    tb_registry_schema_release(e->schema);
    *e = (entry_t){0};
}

void tb_registry_cache_destroy(tb_registry_cache_t *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t i = 0; i < c->capacity; i++) {
        clear_entry(&c->entries[i]);
    }
    free(c->entries);
    free(c);
}

static entry_t *find(tb_registry_cache_t *c, const void *key, size_t key_len)
{
    uint64_t h = hash_of(key, key_len);
    for (size_t i = 0; i < c->capacity; i++) {
        entry_t *e = &c->entries[i];
        if (e->schema != NULL && e->hash == h && e->key_len == key_len &&
            memcmp(e->key, key, key_len) == 0) {
            return e;
        }
    }
    return NULL;
}

tb_registry_schema_t *tb_registry_cache_get(tb_registry_cache_t *c, const void *key,
                                            size_t key_len, int64_t now_ms,
                                            long max_age_ms)
{
    entry_t *e = find(c, key, key_len);
    if (e == NULL || (max_age_ms >= 0 && now_ms - e->stored_ms > max_age_ms)) {
        return NULL;
    }
    e->used = ++c->tick;
    return tb_registry_schema_ref(e->schema);
}

/* A free slot, else the least recently used one, emptied. */
static entry_t *victim(tb_registry_cache_t *c)
{
    entry_t *oldest = &c->entries[0];
    for (size_t i = 0; i < c->capacity; i++) {
        entry_t *e = &c->entries[i];
        if (e->schema == NULL) {
            return e;
        }
        if (e->used < oldest->used) {
            oldest = e;
        }
    }
    clear_entry(oldest);
    return oldest;
}

int tb_registry_cache_put(tb_registry_cache_t *c, const void *key, size_t key_len,
                          tb_registry_schema_t *schema, int64_t now_ms)
{
    entry_t *e = find(c, key, key_len);
    if (e != NULL) {
        clear_entry(e);
    } else {
        e = victim(c);
    }
    e->key = malloc(key_len > 0 ? key_len : 1);
    if (e->key == NULL) {
        return -1;
    }
    memcpy(e->key, key, key_len);
    e->key_len = key_len;
    e->hash = hash_of(key, key_len);
    e->schema = tb_registry_schema_ref(schema);
    e->used = ++c->tick;
    e->stored_ms = now_ms;
    return 0;
}
