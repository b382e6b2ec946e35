#include "connectors/runtime/tb_assignment.h"

#include <stdlib.h>
#include <string.h>

tb_assignment_t *tb_assignor_standalone(const tb_config_state_t *state,
                                        const char *const *workers, size_t worker_count)
{
    (void)worker_count;
    size_t n = 0;
    for (const tb_known_connector_t *c = tb_config_state_first(state); c != NULL;
         c = c->next) {
        n += 1 + json_array_size(c->task_configs);
    }
    tb_assignment_t *assignment = calloc(1, sizeof(*assignment));
    assignment->items = calloc(n ? n : 1, sizeof(*assignment->items));
    for (const tb_known_connector_t *c = tb_config_state_first(state); c != NULL;
         c = c->next) {
        int tasks = (int)json_array_size(c->task_configs);
        for (int task = TB_ASSIGNED_CONNECTOR; task < tasks; task++) {
            assignment->items[assignment->count++] =
                (tb_assigned_t){c->name, task, workers[0]};
        }
    }
    return assignment;
}

bool tb_assignment_runs(const tb_assignment_t *assignment, const char *worker,
                        const char *connector, int task)
{
    for (size_t i = 0; i < assignment->count; i++) {
        const tb_assigned_t *a = &assignment->items[i];
        if (a->task == task && strcmp(a->connector, connector) == 0) {
            return strcmp(a->worker, worker) == 0;
        }
    }
    return false;
}

void tb_assignment_destroy(tb_assignment_t *assignment)
{
    if (assignment == NULL) {
        return;
    }
    free(assignment->items);
    free(assignment);
}
