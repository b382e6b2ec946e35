/*
 * MM2's OffsetSyncStore (tb_mirror.h): per source topic-partition, slot 0
 * holds the latest offset sync and slot i one at most about 2^i offsets
 * older, distinct syncs at least 2^(i-2) apart, so that 64 slots translate
 * offsets anywhere in a topic, precisely near its end. These are MM2's
 * invariants, kept as each sync arrives; translation then gives the same
 * offsets as MM2's from the same offset-syncs topic.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/mirror/tb_mirror.h"

#define SLOTS TB_MIRROR_SYNC_SLOTS

typedef struct {
    char *topic;
    int32_t partition;
    tb_mirror_sync_t slot[SLOTS];
} sync_partition_t;

struct tb_mirror_syncs {
    json_t *index; /* "<partition>:<topic>" -> index in partitions */
    sync_partition_t **partitions;
    size_t count;
    bool read_to_end;
};

tb_mirror_syncs_t *tb_mirror_syncs_new(void)
{
    tb_mirror_syncs_t *store = calloc(1, sizeof(*store));
    if (store == NULL || (store->index = json_object()) == NULL) {
        free(store);
        return NULL;
    }
    return store;
}

void tb_mirror_syncs_free(tb_mirror_syncs_t *store)
{
    if (store == NULL) {
        return;
    }
    for (size_t i = 0; i < store->count; i++) {
        free(store->partitions[i]->topic);
        free(store->partitions[i]);
    }
    free(store->partitions);
    json_decref(store->index);
    free(store);
}

static sync_partition_t *find(const tb_mirror_syncs_t *store, const char *topic,
                              int32_t partition)
{
    char key[320];
    snprintf(key, sizeof(key), "%" PRId32 ":%s", partition, topic);
    json_t *at = json_object_get(store->index, key);
    return at != NULL ? store->partitions[json_integer_value(at)] : NULL;
}

static bool same(const tb_mirror_sync_t *a, const tb_mirror_sync_t *b)
{
    return a->seq == b->seq;
}

/* a + b as Java's long arithmetic does it: wrapping */
static int64_t wrap_add(int64_t a, uint64_t b)
{
    return (int64_t)((uint64_t)a + b);
}

/* The sync at slot j is recent enough behind the one at slot i (i < j):
 * at most 2^j - 2^i offsets older. */
static bool recent_enough(const tb_mirror_sync_t *at_i, const tb_mirror_sync_t *at_j,
                          int i, int j)
{
    int64_t bound = wrap_add(at_j->upstream, (UINT64_C(1) << j) - (UINT64_C(1) << i));
    return same(at_i, at_j) || bound < 0 || at_i->upstream <= bound;
}

/* The sync at slot i is far enough ahead of a later slot's: at least
 * 2^(i-2) offsets (1 for the first slots). */
static bool apart(const tb_mirror_sync_t *at_i, const tb_mirror_sync_t *later, int i)
{
    int64_t bound = wrap_add(later->upstream, UINT64_C(1) << (i > 2 ? i - 2 : 0));
    return same(at_i, later) || (bound >= 0 && at_i->upstream >= bound);
}

/* Puts sync in slot 0 and repairs the slots after it: each that is no
 * longer recent enough behind the one before takes the oldest sync of the
 * previous slots that fits there (keeping more distinct syncs), else the
 * one slot before it had. Stops at the first slot that still fits: the
 * ones after it do too. */
static void place(tb_mirror_sync_t *slot, tb_mirror_sync_t sync)
{
    tb_mirror_sync_t before[SLOTS];
    memcpy(before, slot, sizeof(before));
    slot[0] = sync;
    tb_mirror_sync_t candidate = sync;
    int next = 0; /* the slot of before[] looked at next */
    for (int cur = 1; cur < SLOTS; cur++) {
        const tb_mirror_sync_t *prev = &slot[cur - 1];
        bool skip;
        do {
            const tb_mirror_sync_t *old = &before[next];
            bool fits_prev = apart(prev, old, cur - 1);
            bool fits_next = cur + 1 >= SLOTS || apart(old, &slot[cur + 1], cur);
            bool taken = recent_enough(prev, old, cur - 1, cur) && fits_prev && fits_next;
            bool repeated = next + 1 < SLOTS && same(old, &before[next + 1]);
            if (taken) {
                candidate = *old;
            }
            skip = repeated || !fits_prev;
            if (taken || skip) {
                next++;
            }
        } while (next < cur && skip);
        if (recent_enough(prev, &slot[cur], cur - 1, cur)) {
            break;
        }
        slot[cur] = candidate;
    }
}

int tb_mirror_syncs_add(tb_mirror_syncs_t *store, const char *topic, int32_t partition,
                        tb_mirror_sync_t sync, bool keep_last_only)
{
    sync_partition_t *p = find(store, topic, partition);
    bool reset = p == NULL || (keep_last_only && !store->read_to_end) ||
                 sync.upstream < p->slot[0].upstream; /* the source went back */
    if (p == NULL) {
        char key[320];
        sync_partition_t **grown =
            realloc(store->partitions, (store->count + 1) * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        store->partitions = grown;
        p = calloc(1, sizeof(*p));
        if (p == NULL || (p->topic = strdup(topic)) == NULL) {
            free(p);
            return -1;
        }
        p->partition = partition;
        snprintf(key, sizeof(key), "%" PRId32 ":%s", partition, topic);
        json_object_set_new(store->index, key, json_integer((json_int_t)store->count));
        store->partitions[store->count++] = p;
    }
    if (reset) {
        for (int i = 0; i < SLOTS; i++) {
            p->slot[i] = sync;
        }
    } else {
        place(p->slot, sync);
    }
    return 0;
}

void tb_mirror_syncs_read_to_end(tb_mirror_syncs_t *store)
{
    store->read_to_end = true;
}

bool tb_mirror_syncs_translate(const tb_mirror_syncs_t *store, const char *topic,
                               int32_t partition, int64_t upstream, int64_t *downstream)
{
    const sync_partition_t *p = store->read_to_end ? find(store, topic, partition) : NULL;
    if (p == NULL) {
        return false;
    }
    const tb_mirror_sync_t *sync = &p->slot[SLOTS - 1];
    for (int i = 0; i < SLOTS; i++) {
        if (p->slot[i].upstream <= upstream) {
            sync = &p->slot[i];
            break;
        }
    }
    if (sync->upstream > upstream) {
        *downstream = -1;
    } else {
        /* past the sync, only its next record is known to follow it */
        *downstream = sync->downstream + (upstream == sync->upstream ? 0 : 1);
    }
    return true;
}
