/*
 * tb_registry_cache.h - a bounded cache of reference-counted schemas, keyed
 * by byte strings; for registry.c only.
 *
 * At capacity, the least recently used entry makes room. Not thread-safe:
 * the client holds its lock around every call.
 */
#ifndef TB_REGISTRY_CACHE_H
#define TB_REGISTRY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "registry/tb_registry.h"

typedef struct tb_registry_cache tb_registry_cache_t;

tb_registry_cache_t *tb_registry_cache_create(size_t capacity);

/* Drops the cache's references; NULL is a no-op. */
void tb_registry_cache_destroy(tb_registry_cache_t *c);

/* The schema under key, as a new reference, or NULL when absent or stored
 * longer than max_age_ms ago (max_age_ms < 0: any age). */
tb_registry_schema_t *tb_registry_cache_get(tb_registry_cache_t *c, const void *key,
                                            size_t key_len, int64_t now_ms,
                                            long max_age_ms);

/* Stores schema under key, taking a new reference (the caller keeps its
 * own); replaces what was there. Returns -1 on no memory. */
int tb_registry_cache_put(tb_registry_cache_t *c, const void *key, size_t key_len,
                          tb_registry_schema_t *schema, int64_t now_ms);

/* A new zeroed schema with one reference (references an empty array), or
 * NULL on no memory. */
tb_registry_schema_t *tb_registry_schema_new(void);

/* Adds a reference to schema; returns it. */
tb_registry_schema_t *tb_registry_schema_ref(tb_registry_schema_t *schema);

#endif
