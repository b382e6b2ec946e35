/*
 * tb_pg_java_order.h - the order in which a java.util.HashMap<String, ?>,
 * filled with keys in a given order, iterates them: Debezium reads an
 * hstore into such a map (its JDBC driver's HStoreConverter), so its
 * JSON objects and Connect maps come in that order.
 *
 * The map starts with 16 buckets and doubles them whenever it holds more
 * than three quarters; a key's bucket is its String.hashCode() (over the
 * UTF-16 units of the UTF-8 text), spread by (h ^ h >>> 16), masked by the
 * bucket count; a bucket iterates in insertion order. Not modelled: the
 * tree a bucket becomes when nine keys share it in a table of at least 64
 * buckets (or the early growth such a bucket causes in a smaller table).
 */
#ifndef TB_PG_JAVA_ORDER_H
#define TB_PG_JAVA_ORDER_H

#include <jansson.h>

/* A new object with object's members in a HashMap's iteration order (each
 * value a new reference), or NULL on no memory. */
json_t *tb_pg_java_hashmap_order(json_t *object);

#endif
