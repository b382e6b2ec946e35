/*
 * tb_record.h - a record as transforms see it: topic, partition, offset,
 * timestamp, headers, and a key and a value, each either the bytes it came
 * as or Connect data (core/tb_data.h), made lazily.
 *
 * The engine fills a record with borrowed bytes and headers and a typer,
 * the function that turns one side's bytes into Connect data (a sink's
 * converter, or a source plugin's data kind). A transform that needs the
 * structure calls tb_record_typed(); one that only routes or touches
 * headers never does, so a byte-for-byte pipeline never parses. Once typed,
 * a side's Connect data is authoritative and its bytes are stale: the
 * engine serialises the data again. A typed side's value is the record's
 * alone, so a transform may change it in place, or take its members for
 * the value it sets (a transform that fails leaves the record to be
 * dropped or failed, whatever its data then holds); its schema may be
 * shared and is read only.
 *
 * Headers stay the engine's (borrowed) until a transform changes them; the
 * record then owns copies. tb_record_release() frees what the record owns.
 */
#ifndef TB_RECORD_H
#define TB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tb_data.h"

/* A record header: a name and bytes (value NULL for a null header). */
typedef struct {
    const char *name;
    const void *value;
    size_t value_len;
} tb_header_t;

typedef enum { TB_SIDE_KEY = 0, TB_SIDE_VALUE } tb_side_t;

/* One side of a record. */
typedef struct {
    const void *bytes; /* borrowed; NULL is a null */
    size_t len;
    bool typed;          /* schema and value hold the data; bytes are stale */
    tb_schema_t *schema; /* owned when typed; NULL: schemaless */
    tb_value_t *value;   /* owned when typed; NULL: null */
} tb_record_side_t;

/* Makes Connect data of one side's bytes (bytes NULL: a null). Returns 0 or
 * -1 with errstr; *schema and *value become the caller's. */
typedef int (*tb_record_typer_fn)(void *opaque, tb_side_t side, const void *bytes,
                                  size_t len, tb_schema_t **schema, tb_value_t **value,
                                  char *errstr, size_t errstr_size);

typedef struct {
    /* Borrowed: the engine's, or a string owned by the transform that set
     * it, which lives as long as the transform. */
    const char *topic;
    int32_t partition; /* -1: none (a source's partitioner chooses) */
    int64_t offset;    /* -1: none (source records) */
    int64_t timestamp; /* ms since the epoch, -1: none */
    tb_header_t *headers;
    size_t header_count;
    bool headers_owned; /* headers and their names and values are the record's */
    tb_record_side_t key;
    tb_record_side_t value;
    tb_record_typer_fn typer;
    void *typer_opaque;
} tb_record_t;

/* The side of r. */
tb_record_side_t *tb_record_side(tb_record_t *r, tb_side_t side);

/* Makes side typed (once). Returns it, or NULL with the typer's reason. */
tb_record_side_t *tb_record_typed(tb_record_t *r, tb_side_t side, char *errstr,
                                  size_t errstr_size);

/* Replaces a side by Connect data (steals both). */
void tb_record_set(tb_record_t *r, tb_side_t side, tb_schema_t *schema,
                   tb_value_t *value);

/* Whether the side is null (typed: a null value; else null bytes). */
bool tb_record_side_is_null(const tb_record_side_t *side);

/* The last header called name, or NULL. Borrowed. */
const tb_header_t *tb_record_header(const tb_record_t *r, const char *name);

/* Appends a header (name and value copied). -1 on no memory. */
int tb_record_header_add(tb_record_t *r, const char *name, const void *value, size_t len);

/* Removes every header called name. -1 on no memory. */
int tb_record_header_remove(tb_record_t *r, const char *name);

/* Hands over r's headers when r owns them (a transform changed them):
 * *headers and *count become the caller's (tb_headers_free) and r has none.
 * Returns false, changing nothing, while they are still the engine's. */
bool tb_record_headers_take(tb_record_t *r, tb_header_t **headers, size_t *count);

/* A copy of count headers that the caller owns (tb_headers_free), with
 * room (zeroed) for extra more. NULL on no memory. */
tb_header_t *tb_headers_copy(const tb_header_t *headers, size_t count, size_t extra);

/* Frees headers as a record owns them: each name and value, then the array.
 * NULL is a no-op. */
void tb_headers_free(tb_header_t *headers, size_t count);

/* Frees what r owns (typed data, copied headers); r's borrowed parts stay
 * the engine's. */
void tb_record_release(tb_record_t *r);

#endif
