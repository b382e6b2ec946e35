/*
 * The content check of a topic written from the benchmark's values
 * (floor_value: {"id":I,...}, I the line number in the source file from 0):
 * every id below N exactly once, and in each partition in increasing order,
 * the only order a topic of several partitions keeps of a file.
 *
 * floor_check_create() returns a checker the caller owns and frees with
 * floor_check_destroy(); it records into counters the caller reads.
 */
#ifndef FLOOR_CHECK_H
#define FLOOR_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_CHECK_PARTITIONS 1024

typedef struct {
    long long n;
    unsigned char *seen;                    /* one bit per id below n */
    long long last[FLOOR_CHECK_PARTITIONS]; /* last id per partition, -1 none */
    long long duplicates, out_of_order, unparsed, distinct;
} floor_check_t;

/* NULL when out of memory. */
static inline floor_check_t *floor_check_create(long long n)
{
    floor_check_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    c->n = n;
    c->seen = calloc((size_t)(n / 8 + 1), 1);
    if (c->seen == NULL) {
        free(c);
        return NULL;
    }
    for (int p = 0; p < FLOOR_CHECK_PARTITIONS; p++) {
        c->last[p] = -1;
    }
    return c;
}

/* The id of a value, or -1 when it does not start as floor_value's do. */
static inline long long floor_check_id(const char *value, size_t len)
{
    static const char prefix[] = "{\"id\":";
    size_t i = sizeof(prefix) - 1;
    long long id = 0;
    if (len <= i || memcmp(value, prefix, i) != 0 || value[i] < '0' || value[i] > '9') {
        return -1;
    }
    for (; i < len && value[i] >= '0' && value[i] <= '9'; i++) {
        id = id * 10 + (value[i] - '0');
    }
    return id;
}

static inline void floor_check_record(floor_check_t *c, int32_t partition,
                                      const void *value, size_t len)
{
    long long id = floor_check_id(value, len);
    if (id < 0 || id >= c->n || partition < 0 || partition >= FLOOR_CHECK_PARTITIONS) {
        c->unparsed++;
        return;
    }
    unsigned char bit = (unsigned char)(1u << (id % 8));
    if (c->seen[id / 8] & bit) {
        c->duplicates++;
    } else {
        c->seen[id / 8] |= bit;
        c->distinct++;
    }
    if (id <= c->last[partition]) {
        c->out_of_order++;
    }
    c->last[partition] = id;
}

/* Every id below n seen exactly once, in order within each partition. */
static inline bool floor_check_passed(const floor_check_t *c)
{
    return c->distinct == c->n && c->duplicates == 0 && c->out_of_order == 0 &&
           c->unparsed == 0;
}

/* NULL is a no-op. */
static inline void floor_check_destroy(floor_check_t *c)
{
    if (c != NULL) {
        free(c->seen);
        free(c);
    }
}

#endif
