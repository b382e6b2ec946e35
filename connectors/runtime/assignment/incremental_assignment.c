#include "connectors/runtime/assignment/tb_incremental_assignment.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { UNASSIGNED = -1, HELD_BACK = -2 };
enum { KIND_CONNECTOR, KIND_TASK, KINDS };

/* A unit of work of the input, and the live worker (index) it goes to. */
typedef struct {
    tb_work_t work; /* borrowed from the input */
    int owner;      /* an index into the sorted live workers, or UNASSIGNED, HELD_BACK */
} slot_t;

static int kind_of(const tb_work_t *w)
{
    return w->task < 0 ? KIND_CONNECTOR : KIND_TASK;
}

static int compare_work(const tb_work_t *a, const tb_work_t *b)
{
    int by_name = strcmp(a->connector, b->connector);
    return by_name != 0 ? by_name : (a->task > b->task) - (a->task < b->task);
}

static int compare_slots(const void *a, const void *b)
{
    return compare_work(&((const slot_t *)a)->work, &((const slot_t *)b)->work);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static slot_t *find_slot(slot_t *slots, size_t count, const tb_work_t *w)
{
    slot_t key = {.work = *w};
    return bsearch(&key, slots, count, sizeof(*slots), compare_slots);
}

static int find_name(const char *const *sorted, size_t count, const char *name)
{
    const char *const *at = bsearch(&name, sorted, count, sizeof(*sorted), compare_names);
    return at != NULL ? (int)(at - sorted) : -1;
}

/* Gives every unit of work its previous live holder, or holds it back for a
 * waiting worker. Live holders win over waiting ones, the first over later. */
static void place_previous(const tb_assignment_input_t *in, const char *const *live,
                           slot_t *slots, size_t count)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t p = 0; p < in->previous_count; p++) {
            const tb_worker_work_t *held = &in->previous[p];
            int owner = find_name(live, in->live_count, held->worker);
            bool waits = false;
            for (size_t i = 0; !waits && i < in->waiting_count; i++) {
                waits = strcmp(in->waiting[i], held->worker) == 0;
            }
            bool takes = pass == 0 ? owner >= 0 : owner < 0 && waits;
            if (!takes) {
                continue;
            }
            for (size_t i = 0; i < held->count; i++) {
                slot_t *slot = find_slot(slots, count, &held->work[i]);
                if (slot != NULL && slot->owner == UNASSIGNED) {
                    slot->owner = pass == 0 ? owner : HELD_BACK;
                }
            }
        }
    }
}

/* Balances one kind of work: releases what a worker holds beyond the ceiling
 * of its fair share (its last units in sorted order), then gives each
 * unassigned unit to the least loaded worker. */
static void balance(slot_t *slots, size_t count, int kind, size_t *load, size_t workers)
{
    size_t assignable = 0;
    for (size_t i = 0; i < count; i++) {
        if (kind_of(&slots[i].work) == kind && slots[i].owner != HELD_BACK) {
            assignable++;
        }
    }
    size_t ceiling = (assignable + workers - 1) / workers;
    for (size_t i = count; i-- > 0;) {
        slot_t *s = &slots[i];
        if (kind_of(&s->work) == kind && s->owner >= 0 && load[s->owner] > ceiling) {
            load[s->owner]--;
            s->owner = UNASSIGNED;
        }
    }
    for (size_t i = 0; i < count; i++) {
        slot_t *s = &slots[i];
        if (kind_of(&s->work) != kind || s->owner != UNASSIGNED) {
            continue;
        }
        size_t least = 0;
        for (size_t w = 1; w < workers; w++) {
            least = load[w] < load[least] ? w : least;
        }
        s->owner = (int)least;
        load[least]++;
    }
}

void tb_assignment_clear(tb_assignment_t *assignment)
{
    for (size_t w = 0; w < assignment->count; w++) {
        tb_worker_work_t *entry = &assignment->workers[w];
        for (size_t i = 0; i < entry->count; i++) {
            free((char *)entry->work[i].connector);
        }
        free((tb_work_t *)entry->work);
        free((char *)entry->worker);
    }
    free(assignment->workers);
    assignment->workers = NULL;
    assignment->count = 0;
}

/* The result: each live worker with copies of the units it owns. */
static int build(const char *const *live, size_t workers, const slot_t *slots,
                 size_t count, tb_assignment_t *out)
{
    out->workers = calloc(workers, sizeof(*out->workers));
    if (out->workers == NULL) {
        return -1;
    }
    out->count = workers;
    for (size_t w = 0; w < workers; w++) {
        tb_worker_work_t *entry = &out->workers[w];
        tb_work_t *work = calloc(count > 0 ? count : 1, sizeof(*work));
        entry->work = work;
        if (work == NULL || (entry->worker = strdup(live[w])) == NULL) {
            return -1;
        }
        for (size_t i = 0; i < count; i++) {
            if (slots[i].owner != (int)w) {
                continue;
            }
            work[entry->count].task = slots[i].work.task;
            if ((work[entry->count].connector = strdup(slots[i].work.connector)) ==
                NULL) {
                return -1;
            }
            entry->count++;
        }
    }
    return 0;
}

int tb_assignment_compute(const tb_assignment_input_t *in, tb_assignment_t *out)
{
    memset(out, 0, sizeof(*out));
    size_t workers = in->live_count;
    const char **live = calloc(workers > 0 ? workers : 1, sizeof(*live));
    slot_t *slots = calloc(in->work_count > 0 ? in->work_count : 1, sizeof(*slots));
    size_t *load = calloc(workers > 0 ? workers : 1, sizeof(*load));
    int rc = -1;
    if (live == NULL || slots == NULL || load == NULL) {
        goto done;
    }
    for (size_t w = 0; w < workers; w++) {
        live[w] = in->live[w];
    }
    qsort(live, workers, sizeof(*live), compare_names);
    size_t count = 0;
    for (size_t i = 0; i < in->work_count; i++) {
        slots[count++] = (slot_t){.work = in->work[i], .owner = UNASSIGNED};
    }
    qsort(slots, count, sizeof(*slots), compare_slots);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++) {
        if (unique == 0 || compare_slots(&slots[unique - 1], &slots[i]) != 0) {
            slots[unique++] = slots[i];
        }
    }
    count = unique;
    if (workers == 0) {
        rc = 0; /* nobody to run anything: an empty assignment */
        goto done;
    }
    place_previous(in, live, slots, count);
    for (int kind = 0; kind < KINDS; kind++) {
        memset(load, 0, workers * sizeof(*load));
        for (size_t i = 0; i < count; i++) {
            if (kind_of(&slots[i].work) == kind && slots[i].owner >= 0) {
                load[slots[i].owner]++;
            }
        }
        balance(slots, count, kind, load, workers);
    }
    rc = build(live, workers, slots, count, out);
done:
    if (rc != 0) {
        tb_assignment_clear(out);
    }
    free(live);
    free(slots);
    free(load);
    return rc;
}
