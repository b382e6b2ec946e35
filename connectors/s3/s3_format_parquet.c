/*
 * ParquetFormat: an object is a Parquet file of the records' values
 * (tb_s3_format.h), as Confluent's ParquetFormat writes them through
 * parquet-avro: the values' Connect schema is mapped as AvroData and
 * parquet-avro's schema converter map it (see map_leaf()), structs are
 * groups, arrays three-level LISTs, maps with STRING keys MAPs and other
 * maps lists of key/value groups (Avro's MapEntry records).
 *
 * The file: "PAR1", row groups, the footer (FileMetaData in Thrift's
 * compact protocol, tb_thrift_compact.h), its length and "PAR1". The
 * records of a row group are kept shredded per leaf column (repetition and
 * definition levels, and the PLAIN bytes of the values that are not null)
 * until they reach the row group's bound (tb_s3_parquet_options_t), then
 * each column is written as a page: dictionary-encoded (a PLAIN
 * dictionary page and an RLE_DICTIONARY data page) when its values repeat
 * enough, PLAIN otherwise, compressed with parquet.codec. The bytes
 * depend only on the records, so an object written again after a restart
 * is the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_avro_data.h"
#include "connectors/s3/tb_parquet_pages.h"
#include "connectors/s3/tb_s3_format.h"
#include "connectors/s3/tb_thrift_compact.h"

#define MAGIC "PAR1"
#define MAX_DEPTH 32              /* nested groups a schema may have */
#define DICT_MAX_ENTRIES 65536    /* indices fit 16 bits */
#define DICT_MAX_BYTES (1u << 20) /* a dictionary page's PLAIN bytes */
#define DEFAULT_ROOT "io.confluent.connect.avro.ConnectDefault"

/* Parquet's enums (parquet.thrift), the values written. */
enum {
    T_BOOLEAN = 0,
    T_INT32 = 1,
    T_INT64 = 2,
    T_FLOAT = 4,
    T_DOUBLE = 5,
    T_BYTE_ARRAY = 6
};
enum { R_REQUIRED = 0, R_OPTIONAL = 1, R_REPEATED = 2 };
enum { E_PLAIN = 0, E_RLE = 3, E_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum {
    C_NONE = -1,
    C_UTF8 = 0,
    C_MAP = 1,
    C_LIST = 3,
    C_DECIMAL = 5,
    C_DATE = 6,
    C_TIME_MILLIS = 7,
    C_TIMESTAMP_MILLIS = 9
};

/* What a node of the Parquet schema stands for. */
typedef enum {
    ROLE_LEAF,     /* a primitive value */
    ROLE_STRUCT,   /* a struct: its fields are the children */
    ROLE_LIST,     /* an array: LIST group > repeated "list" > "element" */
    ROLE_MAP,      /* STRING keys: MAP group > repeated "key_value" > key, value */
    ROLE_MAP_LIST, /* other keys: LIST group > repeated "list" > "element" > key, value */
    ROLE_GROUP,    /* the repeated or element group inside a LIST or MAP */
} role_t;

typedef struct node {
    const char *name;          /* borrowed from the schema, or static */
    const tb_schema_t *schema; /* borrowed; NULL for a ROLE_GROUP */
    struct node *parent;
    struct node *children;
    size_t child_count;
    role_t role;
    int repetition;
    uint16_t max_def, max_rep;
    size_t first_column, column_count; /* the leaves under it */
    int physical, converted;           /* leaves; converted also for groups */
} node_t;

/* A column chunk written, for the footer. */
typedef struct {
    int64_t data_offset, dict_offset; /* dict_offset -1: none */
    int64_t uncompressed, compressed; /* headers included */
    int64_t values;
    bool dictionary;
} chunk_t;

/* A leaf column and what its row group holds so far. */
typedef struct {
    const node_t *leaf;
    tb_buf_t rep, def; /* uint16_t levels */
    tb_buf_t values;   /* PLAIN bytes (a BOOLEAN as one byte) of the non-null ones */
    size_t count;      /* levels */
    size_t present;    /* values */
} column_t;

/* Where each column stood before a record, to take it back. */
typedef struct {
    size_t rep, def, values, count, present;
} mark_t;

typedef struct {
    int64_t rows, offset, uncompressed, compressed;
    chunk_t *chunks; /* one per column */
} row_group_t;

typedef struct {
    tb_schema_t *schema; /* the values' Connect schema (a reference) */
    const tb_s3_parquet_options_t *options;
    node_t root;
    column_t *columns;
    mark_t *marks;
    size_t column_count;
    int64_t rows;   /* of the row group being filled */
    int64_t total;  /* of the file */
    int64_t offset; /* bytes of the file so far */
    size_t buffered;
    row_group_t *groups;
    size_t group_count;
    char *avro; /* the Avro schema text, parquet.avro.schema; NULL: none */
    tb_buf_t body, packed, header; /* a page being made */
    uint16_t *indices;
    size_t indices_cap;
} pq_state_t;

/* ---- the schema ---- */

static void node_free(node_t *n)
{
    for (size_t i = 0; i < n->child_count; i++) {
        node_free(&n->children[i]);
    }
    free(n->children);
}

/* n's count children (none: 0); -1 on no memory. */
static int children_new(node_t *n, size_t count)
{
    if (count == 0) {
        return 0;
    }
    n->children = calloc(count, sizeof(*n->children));
    n->child_count = n->children != NULL ? count : 0;
    for (size_t i = 0; i < n->child_count; i++) {
        n->children[i].parent = n;
    }
    return n->children != NULL ? 0 : -1;
}

/* The physical and converted types of a primitive schema, as parquet-avro
 * maps the Avro types AvroData gives: INT8, INT16 and INT32 are Avro ints
 * (INT32), Decimal Avro bytes with the decimal logical type (BYTE_ARRAY
 * DECIMAL), Date and Time ints (DATE, TIME_MILLIS), Timestamp a long
 * (TIMESTAMP_MILLIS), STRING a string (UTF8). */
static void map_leaf(node_t *n)
{
    const tb_schema_t *s = n->schema;
    static const int physical[] = {
        [TB_TYPE_INT8] = T_INT32,      [TB_TYPE_INT16] = T_INT32,
        [TB_TYPE_INT32] = T_INT32,     [TB_TYPE_INT64] = T_INT64,
        [TB_TYPE_FLOAT32] = T_FLOAT,   [TB_TYPE_FLOAT64] = T_DOUBLE,
        [TB_TYPE_BOOLEAN] = T_BOOLEAN, [TB_TYPE_STRING] = T_BYTE_ARRAY,
        [TB_TYPE_BYTES] = T_BYTE_ARRAY};
    n->physical = physical[tb_schema_type(s)];
    n->converted = tb_schema_type(s) == TB_TYPE_STRING             ? C_UTF8
                   : tb_schema_is_logical(s, TB_LOGICAL_DECIMAL)   ? C_DECIMAL
                   : tb_schema_is_logical(s, TB_LOGICAL_DATE)      ? C_DATE
                   : tb_schema_is_logical(s, TB_LOGICAL_TIME)      ? C_TIME_MILLIS
                   : tb_schema_is_logical(s, TB_LOGICAL_TIMESTAMP) ? C_TIMESTAMP_MILLIS
                                                                   : C_NONE;
}

static int node_build(node_t *n, const char *name, const tb_schema_t *s, bool required,
                      int depth, size_t *columns, char *errstr, size_t errstr_size);

/* The only child of n, a ROLE_GROUP (repeated or required) with as many
 * children; NULL on no memory. */
static node_t *group_add(node_t *n, const char *name, int repetition, size_t children)
{
    if (children_new(n, 1) != 0) {
        return NULL;
    }
    node_t *g = &n->children[0];
    g->name = name;
    g->role = ROLE_GROUP;
    g->repetition = repetition;
    g->converted = C_NONE;
    g->max_def = (uint16_t)(n->max_def + (repetition == R_REPEATED));
    g->max_rep = (uint16_t)(n->max_rep + (repetition == R_REPEATED));
    return children_new(g, children) == 0 ? g : NULL;
}

/* The children of a map's entry group g: its key and value. */
static int entry_build(node_t *g, const tb_schema_t *map, bool key_required, int depth,
                       size_t *columns, char *errstr, size_t errstr_size)
{
    if (node_build(&g->children[0], "key", tb_schema_key_schema(map), key_required, depth,
                   columns, errstr, errstr_size) != 0) {
        return -1;
    }
    return node_build(&g->children[1], "value", tb_schema_value_schema(map), false, depth,
                      columns, errstr, errstr_size);
}

/* Builds n (its parent set, its levels the parent's) for a field of schema
 * s; columns counts the leaves so far. required: REQUIRED even when s is
 * optional (a MAP's key). */
static int node_build(node_t *n, const char *name, const tb_schema_t *s, bool required,
                      int depth, size_t *columns, char *errstr, size_t errstr_size)
{
    n->name = name;
    n->schema = s;
    n->repetition = !required && tb_schema_optional(s) ? R_OPTIONAL : R_REQUIRED;
    n->max_def = n->parent != NULL ? n->parent->max_def : 0;
    n->max_rep = n->parent != NULL ? n->parent->max_rep : 0;
    n->max_def = (uint16_t)(n->max_def + (n->repetition == R_OPTIONAL));
    n->first_column = *columns;
    n->converted = C_NONE;
    if (depth > MAX_DEPTH) {
        snprintf(errstr, errstr_size, "the schema nests deeper than %d levels",
                 MAX_DEPTH);
        return -1;
    }
    tb_type_t type = tb_schema_type(s);
    int rc = 0;
    if (type == TB_TYPE_STRUCT) {
        n->role = ROLE_STRUCT;
        size_t count = tb_schema_field_count(s);
        if (count == 0) {
            snprintf(errstr, errstr_size,
                     "a STRUCT without fields, which Parquet cannot hold");
            return -1;
        }
        rc = children_new(n, count);
        for (size_t i = 0; i < count && rc == 0; i++) {
            const tb_field_t *f = tb_schema_field_at(s, i);
            rc = node_build(&n->children[i], f->name, f->schema, false, depth + 1,
                            columns, errstr, errstr_size);
            if (rc != 0) {
                tb_schema_error_in_field(errstr, errstr_size, f->name);
            }
        }
    } else if (type == TB_TYPE_ARRAY) {
        n->role = ROLE_LIST;
        n->converted = C_LIST;
        node_t *g = group_add(n, "list", R_REPEATED, 1);
        rc = g != NULL ? node_build(&g->children[0], "element", tb_schema_items(s), false,
                                    depth + 1, columns, errstr, errstr_size)
                       : -1;
    } else if (type == TB_TYPE_MAP &&
               tb_schema_type(tb_schema_key_schema(s)) == TB_TYPE_STRING) {
        n->role = ROLE_MAP;
        n->converted = C_MAP;
        node_t *g = group_add(n, "key_value", R_REPEATED, 2);
        rc = g != NULL ? entry_build(g, s, true, depth + 1, columns, errstr, errstr_size)
                       : -1;
    } else if (type == TB_TYPE_MAP) {
        n->role = ROLE_MAP_LIST;
        n->converted = C_LIST;
        node_t *g = group_add(n, "list", R_REPEATED, 0);
        node_t *e = g != NULL ? group_add(g, "element", R_REQUIRED, 2) : NULL;
        rc = e != NULL ? entry_build(e, s, false, depth + 1, columns, errstr, errstr_size)
                       : -1;
    } else {
        n->role = ROLE_LEAF;
        map_leaf(n);
        (*columns)++;
    }
    if (rc != 0 && errstr[0] == '\0') {
        snprintf(errstr, errstr_size, "out of memory");
    }
    n->column_count = *columns - n->first_column;
    /* the groups inside a LIST or MAP hold every leaf of it */
    for (node_t *g = n; rc == 0 && g->role != ROLE_LEAF && g->role != ROLE_STRUCT &&
                        g->children[0].role == ROLE_GROUP;
         g = &g->children[0]) {
        g->children[0].first_column = n->first_column;
        g->children[0].column_count = n->column_count;
    }
    return rc;
}

/* Sets the columns' leaves, in the order of the leaves. */
static void columns_bind(column_t *columns, const node_t *n)
{
    if (n->role == ROLE_LEAF) {
        columns[n->first_column].leaf = n;
    }
    for (size_t i = 0; i < n->child_count; i++) {
        columns_bind(columns, &n->children[i]);
    }
}

/* ---- shredding a value into the columns ---- */

static void put_levels(column_t *c, uint16_t r, uint16_t d)
{
    tb_buf_append(&c->rep, &r, sizeof(r));
    tb_buf_append(&c->def, &d, sizeof(d));
    c->count++;
}

/* A null (or an empty list or map) at n: every leaf under it gets levels
 * r and d, and no value. */
static void put_nulls(pq_state_t *st, const node_t *n, uint16_t r, uint16_t d)
{
    for (size_t i = 0; i < n->column_count; i++) {
        put_levels(&st->columns[n->first_column + i], r, d);
    }
}

static void put_le(tb_buf_t *out, uint64_t v, size_t bytes)
{
    unsigned char b[8];
    for (size_t i = 0; i < bytes; i++) {
        b[i] = (unsigned char)(v >> (8 * i));
    }
    tb_buf_append(out, b, bytes);
}

/* The PLAIN bytes of a primitive value (validated against the leaf's
 * schema). */
static void put_value(column_t *c, const tb_value_t *v)
{
    switch (c->leaf->physical) {
    case T_BOOLEAN:
        tb_buf_putc(&c->values, tb_value_boolean(v) ? 1 : 0);
        break;
    case T_INT32:
        put_le(&c->values, (uint32_t)(int32_t)tb_value_int64(v), 4);
        break;
    case T_INT64:
        put_le(&c->values, (uint64_t)tb_value_int64(v), 8);
        break;
    case T_FLOAT: {
        float f = (float)tb_value_double(v);
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        put_le(&c->values, bits, 4);
        break;
    }
    case T_DOUBLE: {
        double f = tb_value_double(v);
        uint64_t bits;
        memcpy(&bits, &f, sizeof(bits));
        put_le(&c->values, bits, 8);
        break;
    }
    default: {
        size_t len;
        const char *text = tb_value_text(v, &len);
        put_le(&c->values, len, 4);
        tb_buf_append(&c->values, text, len);
    }
    }
    c->present++;
}

static int shred(pq_state_t *st, const node_t *n, const tb_value_t *v, uint16_t r,
                 uint16_t d, char *errstr, size_t errstr_size);

/* The entries of a map value v at n (ROLE_MAP or ROLE_MAP_LIST). */
static int shred_map(pq_state_t *st, const node_t *n, const tb_value_t *v, uint16_t r,
                     uint16_t d, char *errstr, size_t errstr_size)
{
    const node_t *g = &n->children[0];
    const node_t *entry = n->role == ROLE_MAP ? g : &g->children[0];
    size_t count = tb_value_size(v);
    if (count == 0) {
        put_nulls(st, g, r, d);
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        uint16_t rr = i == 0 ? r : g->max_rep;
        if (shred(st, &entry->children[0], tb_value_map_key(v, i), rr, g->max_def, errstr,
                  errstr_size) != 0 ||
            shred(st, &entry->children[1], tb_value_map_value(v, i), rr, g->max_def,
                  errstr, errstr_size) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Appends value v of node n to the columns under it: r is the repetition
 * level of its first leaf value, d the definition level of its parent. */
static int shred(pq_state_t *st, const node_t *n, const tb_value_t *v, uint16_t r,
                 uint16_t d, char *errstr, size_t errstr_size)
{
    if (v == NULL) {
        if (n->repetition != R_OPTIONAL) {
            snprintf(errstr, errstr_size,
                     "a null %s, which Parquet's MAP cannot hold (its keys are required)",
                     n->name);
            return -1;
        }
        put_nulls(st, n, r, d);
        return 0;
    }
    d = n->max_def;
    switch (n->role) {
    case ROLE_LEAF:
        put_levels(&st->columns[n->first_column], r, d);
        put_value(&st->columns[n->first_column], v);
        return 0;
    case ROLE_STRUCT:
        for (size_t i = 0; i < n->child_count; i++) {
            if (shred(st, &n->children[i], tb_value_struct_get_at(v, i), r, d, errstr,
                      errstr_size) != 0) {
                return -1;
            }
        }
        return 0;
    case ROLE_LIST: {
        const node_t *g = &n->children[0];
        size_t count = tb_value_size(v);
        if (count == 0) {
            put_nulls(st, g, r, d);
        }
        for (size_t i = 0; i < count; i++) {
            if (shred(st, &g->children[0], tb_value_array_get(v, i),
                      i == 0 ? r : g->max_rep, g->max_def, errstr, errstr_size) != 0) {
                return -1;
            }
        }
        return 0;
    }
    default:
        return shred_map(st, n, v, r, d, errstr, errstr_size);
    }
}

/* ---- pages ---- */

/* Appends the definition or repetition levels of c (uint16_t) as a data
 * page v1 holds them: a 4-byte length, then the hybrid encoding. */
static void put_level_section(tb_buf_t *out, const tb_buf_t *levels, size_t count,
                              uint16_t max)
{
    size_t at = out->len;
    put_le(out, 0, 4);
    tb_parquet_hybrid(out, (const uint16_t *)(const void *)levels->data, count,
                      tb_parquet_bit_width(max));
    if (!out->failed) {
        uint32_t len = (uint32_t)(out->len - at - 4);
        for (int i = 0; i < 4; i++) {
            out->data[at + (size_t)i] = (char)(len >> (8 * i));
        }
    }
}

/* The byte length of the PLAIN value at p (of physical type). */
static size_t plain_size(int physical, const char *p)
{
    switch (physical) {
    case T_BOOLEAN:
        return 1;
    case T_INT32:
    case T_FLOAT:
        return 4;
    case T_INT64:
    case T_DOUBLE:
        return 8;
    default: {
        const unsigned char *b = (const unsigned char *)p;
        return 4 + ((size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 |
                    (size_t)b[3] << 24);
    }
    }
}

static uint32_t hash_of(const char *p, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    }
    return h;
}

/* Builds c's dictionary: the distinct values in the order they come, as
 * PLAIN bytes in dict, and st->indices. Returns how many, or 0 when the
 * column is not worth one (booleans, too many distinct values or bytes)
 * or memory ran out. */
static size_t dictionary_build(pq_state_t *st, const column_t *c, tb_buf_t *dict)
{
    if (c->leaf->physical == T_BOOLEAN || c->present == 0) {
        return 0;
    }
    size_t limit = c->present / 2 < DICT_MAX_ENTRIES ? c->present / 2 : DICT_MAX_ENTRIES;
    size_t slots = 1;
    while (slots < 2 * limit + 2) {
        slots <<= 1;
    }
    uint32_t *table = calloc(slots, sizeof(*table));        /* entry + 1; 0: empty */
    size_t *starts = malloc((limit + 1) * sizeof(*starts)); /* an entry's in dict */
    if (st->indices_cap < c->present) {
        free(st->indices);
        st->indices = malloc(c->present * sizeof(*st->indices));
        st->indices_cap = st->indices != NULL ? c->present : 0;
    }
    size_t distinct = 0;
    if (table == NULL || starts == NULL || st->indices == NULL) {
        goto done;
    }
    const char *p = c->values.data;
    for (size_t i = 0; i < c->present; i++) {
        size_t len = plain_size(c->leaf->physical, p);
        size_t slot = hash_of(p, len) & (slots - 1);
        while (table[slot] != 0) {
            const char *e = dict->data + starts[table[slot] - 1];
            if (plain_size(c->leaf->physical, e) == len && memcmp(e, p, len) == 0) {
                break;
            }
            slot = (slot + 1) & (slots - 1);
        }
        if (table[slot] == 0) {
            if (distinct == limit || dict->len + len > DICT_MAX_BYTES) {
                distinct = 0;
                goto done;
            }
            starts[distinct] = dict->len;
            tb_buf_append(dict, p, len);
            table[slot] = (uint32_t)++distinct;
        }
        st->indices[i] = (uint16_t)(table[slot] - 1);
        p += len;
    }
    if (dict->failed) {
        distinct = 0;
    }

done:
    free(table);
    free(starts);
    return distinct;
}

/* Appends to out a page of type whose uncompressed body is st->body:
 * its header, then the body compressed. *uncompressed and *compressed
 * grow by the page's sizes, headers included. dict_count: the entries of
 * a dictionary page; data_values and encoding: a data page's. */
static int page_write(pq_state_t *st, int type, size_t dict_count, size_t data_values,
                      int encoding, tb_buf_t *out, chunk_t *chunk)
{
    st->packed.len = 0;
    if (st->body.failed ||
        tb_parquet_compress((tb_parquet_codec_t)st->options->codec, st->body.data,
                            st->body.len, &st->packed) != 0 ||
        st->body.len > INT32_MAX || st->packed.len > INT32_MAX) {
        return -1;
    }
    tb_thrift_t t;
    st->header.len = 0;
    tb_thrift_begin(&t, &st->header);
    tb_thrift_field_i32(&t, 1, type);
    tb_thrift_field_i32(&t, 2, (int32_t)st->body.len);
    tb_thrift_field_i32(&t, 3, (int32_t)st->packed.len);
    if (type == PAGE_DATA) {
        tb_thrift_field_struct(&t, 5);
        tb_thrift_field_i32(&t, 1, (int32_t)data_values);
        tb_thrift_field_i32(&t, 2, encoding);
        tb_thrift_field_i32(&t, 3, E_RLE);
        tb_thrift_field_i32(&t, 4, E_RLE);
    } else {
        tb_thrift_field_struct(&t, 7);
        tb_thrift_field_i32(&t, 1, (int32_t)dict_count);
        tb_thrift_field_i32(&t, 2, E_PLAIN);
    }
    tb_thrift_struct_end(&t);
    tb_thrift_struct_end(&t);
    if (tb_thrift_end(&t) != 0) {
        return -1;
    }
    tb_buf_append(out, st->header.data, st->header.len);
    tb_buf_append(out, st->packed.data, st->packed.len);
    chunk->uncompressed += (int64_t)(st->header.len + st->body.len);
    chunk->compressed += (int64_t)(st->header.len + st->packed.len);
    st->offset += (int64_t)(st->header.len + st->packed.len);
    return out->failed ? -1 : 0;
}

/* Appends c's values PLAIN to st->body (booleans bit-packed). */
static void plain_values(pq_state_t *st, const column_t *c)
{
    if (c->leaf->physical != T_BOOLEAN) {
        tb_buf_append(&st->body, c->values.data, c->values.len);
        return;
    }
    for (size_t i = 0; i < c->present; i += 8) {
        unsigned char byte = 0;
        for (size_t k = 0; k < 8 && i + k < c->present; k++) {
            byte |= (unsigned char)((c->values.data[i + k] & 1) << k);
        }
        tb_buf_putc(&st->body, (char)byte);
    }
}

/* Writes c's column chunk to out, and empties c. */
static int column_write(pq_state_t *st, column_t *c, tb_buf_t *out, chunk_t *chunk)
{
    tb_buf_t dict = {0};
    size_t distinct = dictionary_build(st, c, &dict);
    int rc = 0;
    *chunk = (chunk_t){.dict_offset = -1, .values = (int64_t)c->count};
    if (distinct > 0) {
        chunk->dictionary = true;
        chunk->dict_offset = st->offset;
        st->body.len = 0;
        tb_buf_append(&st->body, dict.data, dict.len);
        rc = page_write(st, PAGE_DICTIONARY, distinct, 0, 0, out, chunk);
    }
    free(dict.data);
    chunk->data_offset = st->offset;
    st->body.len = 0;
    if (c->leaf->max_rep > 0) {
        put_level_section(&st->body, &c->rep, c->count, c->leaf->max_rep);
    }
    if (c->leaf->max_def > 0) {
        put_level_section(&st->body, &c->def, c->count, c->leaf->max_def);
    }
    if (distinct > 0) {
        int width = tb_parquet_bit_width((uint32_t)(distinct - 1));
        width = width > 0 ? width : 1;
        tb_buf_putc(&st->body, (char)width);
        tb_parquet_hybrid(&st->body, st->indices, c->present, width);
    } else {
        plain_values(st, c);
    }
    if (rc == 0) {
        rc = page_write(st, PAGE_DATA, 0, c->count,
                        distinct > 0 ? E_RLE_DICTIONARY : E_PLAIN, out, chunk);
    }
    c->rep.len = c->def.len = c->values.len = 0;
    c->count = c->present = 0;
    return rc;
}

/* Writes the row group being filled to out, if it has rows. */
static int row_group_write(pq_state_t *st, tb_buf_t *out)
{
    if (st->rows == 0) {
        return 0;
    }
    row_group_t *grown = realloc(st->groups, (st->group_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return -1;
    }
    st->groups = grown;
    row_group_t *g = &st->groups[st->group_count];
    *g = (row_group_t){.rows = st->rows, .offset = st->offset};
    g->chunks = calloc(st->column_count, sizeof(*g->chunks));
    if (g->chunks == NULL) {
        return -1;
    }
    st->group_count++;
    for (size_t i = 0; i < st->column_count; i++) {
        if (column_write(st, &st->columns[i], out, &g->chunks[i]) != 0) {
            return -1;
        }
        g->uncompressed += g->chunks[i].uncompressed;
        g->compressed += g->chunks[i].compressed;
    }
    st->rows = 0;
    st->buffered = 0;
    return 0;
}

/* ---- the footer ---- */

static void schema_element(tb_thrift_t *t, const node_t *n)
{
    tb_thrift_list_struct(t);
    if (n->role == ROLE_LEAF) {
        tb_thrift_field_i32(t, 1, n->physical);
    }
    if (n->parent != NULL) {
        tb_thrift_field_i32(t, 3, n->repetition);
    }
    tb_thrift_field_string(t, 4, n->name);
    if (n->role != ROLE_LEAF) {
        tb_thrift_field_i32(t, 5, (int32_t)n->child_count);
    }
    if (n->converted != C_NONE) {
        tb_thrift_field_i32(t, 6, n->converted);
    }
    int scale = 0, precision = 0;
    if (n->converted == C_DECIMAL) {
        const char *p = tb_schema_parameter(n->schema, "connect.decimal.precision");
        scale = tb_decimal_scale(n->schema);
        precision = p != NULL ? atoi(p) : 64; /* AvroData's default */
        tb_thrift_field_i32(t, 7, scale);
        tb_thrift_field_i32(t, 8, precision);
    }
    /* the LogicalType union, for the types that have one */
    static const int16_t logical[] = {[C_UTF8] = 1,
                                      [C_MAP] = 2,
                                      [C_LIST] = 3,
                                      [C_DECIMAL] = 5,
                                      [C_DATE] = 6,
                                      [C_TIME_MILLIS] = 7,
                                      [C_TIMESTAMP_MILLIS] = 8};
    if (n->converted != C_NONE) {
        tb_thrift_field_struct(t, 10);
        tb_thrift_field_struct(t, logical[n->converted]);
        if (n->converted == C_DECIMAL) {
            tb_thrift_field_i32(t, 1, scale);
            tb_thrift_field_i32(t, 2, precision);
        } else if (n->converted == C_TIME_MILLIS || n->converted == C_TIMESTAMP_MILLIS) {
            tb_thrift_field_bool(t, 1, true); /* adjusted to UTC */
            tb_thrift_field_struct(t, 2);     /* the unit: MILLIS */
            tb_thrift_field_struct(t, 1);
            tb_thrift_struct_end(t);
            tb_thrift_struct_end(t);
        }
        tb_thrift_struct_end(t);
        tb_thrift_struct_end(t);
    }
    tb_thrift_struct_end(t);
    for (size_t i = 0; i < n->child_count; i++) {
        schema_element(t, &n->children[i]);
    }
}

static size_t node_count(const node_t *n)
{
    size_t count = 1;
    for (size_t i = 0; i < n->child_count; i++) {
        count += node_count(&n->children[i]);
    }
    return count;
}

/* path_in_schema of a leaf: the names from the root's child down. */
static void column_path(tb_thrift_t *t, const node_t *leaf)
{
    const node_t *names[MAX_DEPTH * 3 + 2];
    size_t depth = 0;
    for (const node_t *n = leaf; n->parent != NULL; n = n->parent) {
        names[depth++] = n;
    }
    tb_thrift_field_list(t, 3, TB_THRIFT_BINARY, depth);
    while (depth > 0) {
        tb_thrift_list_string(t, names[--depth]->name);
    }
}

static void column_chunk(tb_thrift_t *t, const pq_state_t *st, const column_t *c,
                         const chunk_t *chunk)
{
    tb_thrift_list_struct(t);
    tb_thrift_field_i64(
        t, 2, chunk->dict_offset >= 0 ? chunk->dict_offset : chunk->data_offset);
    tb_thrift_field_struct(t, 3);
    tb_thrift_field_i32(t, 1, c->leaf->physical);
    tb_thrift_field_list(t, 2, TB_THRIFT_I32, chunk->dictionary ? 3 : 2);
    tb_thrift_list_i32(t, E_PLAIN);
    tb_thrift_list_i32(t, E_RLE);
    if (chunk->dictionary) {
        tb_thrift_list_i32(t, E_RLE_DICTIONARY);
    }
    column_path(t, c->leaf);
    tb_thrift_field_i32(t, 4, st->options->codec);
    tb_thrift_field_i64(t, 5, chunk->values);
    tb_thrift_field_i64(t, 6, chunk->uncompressed);
    tb_thrift_field_i64(t, 7, chunk->compressed);
    tb_thrift_field_i64(t, 9, chunk->data_offset);
    if (chunk->dict_offset >= 0) {
        tb_thrift_field_i64(t, 11, chunk->dict_offset);
    }
    tb_thrift_struct_end(t);
    tb_thrift_struct_end(t);
}

/* Appends the footer: FileMetaData, its length and the magic. */
static int footer_write(pq_state_t *st, tb_buf_t *out)
{
    tb_thrift_t t;
    size_t at = out->len;
    tb_thrift_begin(&t, out);
    tb_thrift_field_i32(&t, 1, 1);
    tb_thrift_field_list(&t, 2, TB_THRIFT_STRUCT, node_count(&st->root));
    schema_element(&t, &st->root);
    tb_thrift_field_i64(&t, 3, st->total);
    tb_thrift_field_list(&t, 4, TB_THRIFT_STRUCT, st->group_count);
    for (size_t g = 0; g < st->group_count; g++) {
        const row_group_t *group = &st->groups[g];
        tb_thrift_list_struct(&t);
        tb_thrift_field_list(&t, 1, TB_THRIFT_STRUCT, st->column_count);
        for (size_t i = 0; i < st->column_count; i++) {
            column_chunk(&t, st, &st->columns[i], &group->chunks[i]);
        }
        tb_thrift_field_i64(&t, 2, group->uncompressed);
        tb_thrift_field_i64(&t, 3, group->rows);
        tb_thrift_field_i64(&t, 5, group->offset);
        tb_thrift_field_i64(&t, 6, group->compressed);
        tb_thrift_struct_end(&t);
    }
    if (st->avro != NULL) {
        tb_thrift_field_list(&t, 5, TB_THRIFT_STRUCT, 1);
        tb_thrift_list_struct(&t);
        tb_thrift_field_string(&t, 1, "parquet.avro.schema");
        tb_thrift_field_string(&t, 2, st->avro);
        tb_thrift_struct_end(&t);
    }
    tb_thrift_field_string(&t, 6, "tributary");
    tb_thrift_struct_end(&t);
    if (tb_thrift_end(&t) != 0) {
        return -1;
    }
    put_le(out, (uint64_t)(out->len - at), 4);
    tb_buf_append(out, MAGIC, 4);
    return out->failed ? -1 : 0;
}

/* ---- the format ---- */

static void parquet_free(void *opaque)
{
    pq_state_t *st = opaque;
    if (st == NULL) {
        return;
    }
    for (size_t i = 0; i < st->column_count; i++) {
        free(st->columns[i].rep.data);
        free(st->columns[i].def.data);
        free(st->columns[i].values.data);
    }
    for (size_t g = 0; g < st->group_count; g++) {
        free(st->groups[g].chunks);
    }
    free(st->groups);
    free(st->columns);
    free(st->marks);
    node_free(&st->root);
    tb_schema_decref(st->schema);
    free(st->avro);
    free(st->body.data);
    free(st->packed.data);
    free(st->header.data);
    free(st->indices);
    free(st);
}

static int parquet_open(const void *options, const tb_sink_record_t *first,
                        const char *key, void **out_state, tb_buf_t *out, char *errstr,
                        size_t errstr_size)
{
    (void)key;
    const tb_schema_t *schema = first->value_schema;
    if (schema == NULL || tb_schema_type(schema) != TB_TYPE_STRUCT) {
        snprintf(errstr, errstr_size,
                 "format.class ParquetFormat needs values whose schema is a STRUCT "
                 "(a converter that gives one: AvroConverter, JsonConverter with "
                 "schemas.enable=true, ...); this value has %s",
                 schema == NULL ? "no schema" : tb_type_name(tb_schema_type(schema)));
        return -1;
    }
    pq_state_t *st = calloc(1, sizeof(*st));
    if (st == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    errstr[0] = '\0';
    st->options = options;
    st->schema = tb_schema_incref((tb_schema_t *)schema);
    const char *name = tb_schema_name(schema);
    size_t columns = 0;
    char reason[256] = "";
    if (node_build(&st->root, name != NULL ? name : DEFAULT_ROOT, schema, true, 0,
                   &columns, reason, sizeof(reason)) != 0) {
        snprintf(errstr, errstr_size,
                 "format.class ParquetFormat cannot write this schema: %s", reason);
        goto fail;
    }
    /* a schema without an Avro form here (a MAP of other keys than STRING)
     * is written without it, as readers derive it from the Parquet schema */
    st->avro = tb_avro_from_connect(schema, reason, sizeof(reason));
    st->column_count = columns;
    st->columns = calloc(columns, sizeof(*st->columns));
    st->marks = calloc(columns, sizeof(*st->marks));
    if (st->columns == NULL || st->marks == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    columns_bind(st->columns, &st->root);
    tb_buf_append(out, MAGIC, 4);
    st->offset = 4;
    *out_state = st;
    return 0;

fail:
    parquet_free(st);
    return -1;
}

static bool parquet_fits(const void *opaque, const tb_sink_record_t *record)
{
    const pq_state_t *st = opaque;
    return record->value_schema != NULL &&
           (record->value_schema == st->schema ||
            tb_schema_equal(record->value_schema, st->schema));
}

static void marks_take(pq_state_t *st)
{
    for (size_t i = 0; i < st->column_count; i++) {
        const column_t *c = &st->columns[i];
        st->marks[i] =
            (mark_t){c->rep.len, c->def.len, c->values.len, c->count, c->present};
    }
}

/* Takes back what a record that failed left in the columns; the bytes it
 * added, or 0 after a rollback. */
static size_t marks_settle(pq_state_t *st, bool rollback)
{
    size_t added = 0;
    for (size_t i = 0; i < st->column_count; i++) {
        column_t *c = &st->columns[i];
        const mark_t *m = &st->marks[i];
        added += c->rep.len + c->def.len + c->values.len - m->rep - m->def - m->values;
        if (rollback) {
            c->rep.len = m->rep;
            c->def.len = m->def;
            c->values.len = m->values;
            c->count = m->count;
            c->present = m->present;
        }
    }
    return rollback ? 0 : added;
}

static bool columns_failed(const pq_state_t *st)
{
    for (size_t i = 0; i < st->column_count; i++) {
        const column_t *c = &st->columns[i];
        if (c->rep.failed || c->def.failed || c->values.failed) {
            return true;
        }
    }
    return false;
}

static int parquet_write(const void *options, void *opaque,
                         const tb_sink_record_t *record, tb_buf_t *out, char *errstr,
                         size_t errstr_size)
{
    pq_state_t *st = opaque;
    (void)options;
    if (tb_value_validate(st->schema, record->value_data, errstr, errstr_size) != 0) {
        return -1;
    }
    marks_take(st);
    int rc = shred(st, &st->root, record->value_data, 0, 0, errstr, errstr_size);
    if (rc == 0 && columns_failed(st)) {
        snprintf(errstr, errstr_size, "out of memory buffering a Parquet row group");
        rc = -1;
    }
    st->buffered += marks_settle(st, rc != 0);
    if (rc != 0) {
        return -1;
    }
    st->rows++;
    st->total++;
    if (st->buffered >= st->options->row_group_bytes && row_group_write(st, out) != 0) {
        snprintf(errstr, errstr_size, "out of memory writing a Parquet row group");
        return -1;
    }
    return 0;
}

static int parquet_close(void *opaque, tb_buf_t *out)
{
    pq_state_t *st = opaque;
    return row_group_write(st, out) == 0 && footer_write(st, out) == 0 ? 0 : -1;
}

static size_t parquet_held(const void *opaque)
{
    const pq_state_t *st = opaque;
    return st->buffered;
}

const tb_s3_format_t tb_s3_format_parquet = {.extension = ".parquet",
                                             .open = parquet_open,
                                             .fits = parquet_fits,
                                             .write = parquet_write,
                                             .close = parquet_close,
                                             .free = parquet_free,
                                             .held = parquet_held};
