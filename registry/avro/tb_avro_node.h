/*
 * tb_avro_node.h - the compiled form of an Avro schema; for avro_schema.c
 * and avro_codec.c, and for connectors/converters/avro_data.c, which maps
 * it to Connect schemas.
 */
#ifndef TB_AVRO_NODE_H
#define TB_AVRO_NODE_H

#include <stddef.h>

#include <jansson.h>

#include "registry/avro/tb_avro.h"

typedef enum {
    TB_AVRO_NULL = 0,
    TB_AVRO_BOOLEAN,
    TB_AVRO_INT,
    TB_AVRO_LONG,
    TB_AVRO_FLOAT,
    TB_AVRO_DOUBLE,
    TB_AVRO_BYTES,
    TB_AVRO_STRING,
    TB_AVRO_RECORD,
    TB_AVRO_ENUM,
    TB_AVRO_ARRAY,
    TB_AVRO_MAP,
    TB_AVRO_UNION,
    TB_AVRO_FIXED,
} tb_avro_kind_t;

typedef enum {
    TB_AVRO_PLAIN = 0,
    TB_AVRO_DECIMAL,
    TB_AVRO_DATE,
    TB_AVRO_TIME_MILLIS,
    TB_AVRO_TIME_MICROS,
    TB_AVRO_TIMESTAMP_MILLIS,
    TB_AVRO_TIMESTAMP_MICROS,
    TB_AVRO_LOCAL_TIMESTAMP_MILLIS,
    TB_AVRO_LOCAL_TIMESTAMP_MICROS,
    TB_AVRO_UUID,
} tb_avro_logical_t;

typedef struct tb_avro_node tb_avro_node_t;

/* Nodes belong to their schema; children may point back up (recursive
 * types). */
struct tb_avro_node {
    tb_avro_kind_t kind;
    tb_avro_logical_t logical;
    int scale;                 /* decimal */
    size_t size;               /* fixed: bytes */
    char *fullname;            /* named types */
    size_t count;              /* record fields, enum symbols, union branches */
    char **names;              /* record fields, enum symbols */
    tb_avro_node_t **children; /* record fields, union branches; [0]: items, values */
    json_t **defaults;         /* record fields: the default, or NULL */
    json_t *props;             /* the schema object it was compiled from (its connect.*
                                * properties); NULL for a type given by name only */
};

struct tb_avro_schema {
    tb_avro_node_t *root;
    tb_avro_node_t **nodes; /* every node, to free them */
    size_t node_count;
    size_t node_cap;
};

/* The node's type name as a union branch is tagged in Avro's JSON encoding:
 * the full name of a named type, else the primitive's name. */
const char *tb_avro_branch_name(const tb_avro_node_t *node);

#endif
