#include "connectors/runtime/assignment/tb_assignment_json.h"

#include <stdlib.h>
#include <string.h>

json_t *tb_assignment_to_json(const tb_assignment_t *assignment)
{
    json_t *out = json_object();
    for (size_t w = 0; w < assignment->count; w++) {
        const tb_worker_work_t *held = &assignment->workers[w];
        json_t *work = json_array();
        for (size_t i = 0; i < held->count; i++) {
            json_array_append_new(
                work, json_pack("[s, i]", held->work[i].connector, held->work[i].task));
        }
        json_object_set_new(out, held->worker, work);
    }
    return out;
}

static int compare_workers(const void *a, const void *b)
{
    return strcmp(((const tb_worker_work_t *)a)->worker,
                  ((const tb_worker_work_t *)b)->worker);
}

int tb_assignment_from_json(const json_t *json, tb_assignment_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(json)) {
        return -1;
    }
    size_t count = json_object_size(json);
    out->workers = calloc(count > 0 ? count : 1, sizeof(*out->workers));
    if (out->workers == NULL) {
        return -1;
    }
    const char *worker;
    json_t *work;
    json_object_foreach ((json_t *)json, worker, work) {
        tb_worker_work_t *held = &out->workers[out->count++];
        held->worker = strdup(worker);
        size_t n = json_array_size(work);
        tb_work_t *units = calloc(n > 0 ? n : 1, sizeof(*units));
        held->work = units;
        if (!json_is_array(work) || held->worker == NULL || units == NULL) {
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            const json_t *unit = json_array_get(work, i);
            const char *connector = json_string_value(json_array_get(unit, 0));
            const json_t *task = json_array_get(unit, 1);
            if (connector == NULL || !json_is_integer(task)) {
                goto fail;
            }
            units[held->count++] =
                (tb_work_t){strdup(connector), (int)json_integer_value(task)};
        }
    }
    qsort(out->workers, out->count, sizeof(*out->workers), compare_workers);
    return 0;

fail:
    tb_assignment_clear(out);
    return -1;
}

int tb_assignment_copy(const tb_assignment_t *assignment, tb_assignment_t *out)
{
    json_t *json = tb_assignment_to_json(assignment);
    int rc = tb_assignment_from_json(json, out);
    json_decref(json);
    return rc;
}
