#include "connectors/runtime/assignment/tb_assignor.h"

#include <stdlib.h>
#include <string.h>

/* Every connector instance and task state knows of, its names borrowed:
 * a new array of *count units. */
static tb_work_t *work_of(const tb_config_state_t *state, size_t *count)
{
    size_t n = 0;
    for (const tb_known_connector_t *c = tb_config_state_first(state); c != NULL;
         c = c->next) {
        n += 1 + json_array_size(c->task_configs);
    }
    tb_work_t *work = calloc(n > 0 ? n : 1, sizeof(*work));
    *count = 0;
    for (const tb_known_connector_t *c = tb_config_state_first(state);
         work != NULL && c != NULL; c = c->next) {
        int tasks = (int)json_array_size(c->task_configs);
        for (int task = TB_ASSIGNOR_CONNECTOR; task < tasks; task++) {
            work[(*count)++] = (tb_work_t){c->name, task};
        }
    }
    return work;
}

int tb_assignor_compute(const tb_config_state_t *state, const tb_assignment_input_t *base,
                        tb_assignment_t *out)
{
    size_t count;
    tb_work_t *work = work_of(state, &count);
    tb_assignment_input_t in = *base;
    in.work = work;
    in.work_count = count;
    int rc = work != NULL ? tb_assignment_compute(&in, out) : -1;
    if (work == NULL) {
        memset(out, 0, sizeof(*out));
    }
    free(work);
    return rc;
}

int tb_assignor_standalone(const tb_config_state_t *state, const char *const *workers,
                           size_t worker_count, tb_assignment_t *out)
{
    tb_assignment_input_t in = {.live = workers, .live_count = worker_count};
    return tb_assignor_compute(state, &in, out);
}

bool tb_assignor_runs(const tb_assignment_t *assignment, const char *worker,
                      const char *connector, int task)
{
    for (size_t w = 0; w < assignment->count; w++) {
        const tb_worker_work_t *held = &assignment->workers[w];
        for (size_t i = 0; strcmp(held->worker, worker) == 0 && i < held->count; i++) {
            if (held->work[i].task == task &&
                strcmp(held->work[i].connector, connector) == 0) {
                return true;
            }
        }
    }
    return false;
}
