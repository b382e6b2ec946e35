/*
 * tb_pg_java_order.h - the order in which a java.util.HashMap<String, ?>,
 * filled with keys in a given order, iterates them. Debezium keeps such
 * maps where tributary writes what it iterates: an hstore read by its JDBC
 * driver's HStoreConverter (JSON objects and Connect maps come in that
 * order), and a transaction's per-table event counts (TransactionContext),
 * whose entries are an END record's data_collections.
 *
 * A new map has 16 buckets and doubles them whenever it holds more than
 * three quarters; clear() keeps the count it reached. A key's bucket is
 * its String.hashCode() (over the UTF-16 units of the UTF-8 text), spread
 * by (h ^ h >>> 16), masked by the bucket count; a bucket iterates in
 * insertion order. Not modelled: the tree a bucket becomes when nine keys
 * share it in a table of at least 64 buckets (or the early growth such a
 * bucket causes in a smaller table).
 */
#ifndef TB_PG_JAVA_ORDER_H
#define TB_PG_JAVA_ORDER_H

#include <stddef.h>

#include <jansson.h>

/* The bucket count of a new HashMap. */
#define TB_PG_JAVA_HASHMAP_BUCKETS 16

/* The bucket count of a map that had buckets buckets once it holds n keys. */
size_t tb_pg_java_hashmap_buckets(size_t n, size_t buckets);

/* Writes to order[0..n) the indexes of keys[0..n) (in insertion order) in
 * the iteration order of a map of buckets buckets (a power of two that
 * holds n keys: tb_pg_java_hashmap_buckets). 0, or -1 on no memory. */
int tb_pg_java_hashmap_sort(const char *const *keys, size_t n, size_t buckets,
                            size_t *order);

/* A new object with object's members in a new HashMap's iteration order
 * (each value a new reference), or NULL on no memory. */
json_t *tb_pg_java_hashmap_order(json_t *object);

#endif
