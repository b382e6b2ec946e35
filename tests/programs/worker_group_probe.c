/*
 * worker_group_probe - one member of a worker group (tb_worker_group.h), for
 * tests/integration/test_worker_group.py.
 *
 *   worker_group_probe BOOTSTRAP GROUP TOPIC URL
 *
 * Joins GROUP through TOPIC as the worker URL, prints its view as one JSON
 * line each time it changes ({"leader":..,"leader_url":..,"members":[..]}),
 * and leaves the group when standard input closes.
 */
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "connectors/runtime/cluster/tb_worker_group.h"

#define SESSION_TIMEOUT_MS "6000"
#define HEARTBEAT_MS "1000"
#define VIEW_EVERY_MS 100

static void print_view(const tb_worker_group_view_t *view)
{
    json_t *members = json_array();
    for (size_t i = 0; i < view->member_count; i++) {
        json_array_append_new(members, json_string(view->members[i]));
    }
    json_t *line = json_pack("{s:b, s:s?, s:o}", "leader", view->leader, "leader_url",
                             view->leader_url, "members", members);
    char *text = json_dumps(line, JSON_COMPACT);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    json_decref(line);
}

/* True once standard input is closed (poll says readable and read gives 0). */
static bool stdin_closed(void)
{
    struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
    char byte;
    return poll(&in, 1, VIEW_EVERY_MS) > 0 && read(STDIN_FILENO, &byte, 1) <= 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s BOOTSTRAP GROUP TOPIC URL\n", argv[0]);
        return 2;
    }
    json_t *props =
        json_pack("{s:s, s:s, s:s}", "bootstrap.servers", argv[1], "session.timeout.ms",
                  SESSION_TIMEOUT_MS, "heartbeat.interval.ms", HEARTBEAT_MS);
    tb_worker_group_options_t options = {.group_id = argv[2],
                                         .topic = argv[3],
                                         .worker_url = argv[4],
                                         .client_props = props};
    char errstr[512];
    tb_worker_group_t *group = tb_worker_group_join(&options, errstr, sizeof(errstr));
    json_decref(props);
    if (group == NULL) {
        fprintf(stderr, "worker_group_probe: %s\n", errstr);
        return 1;
    }
    uint64_t printed = 0;
    while (!stdin_closed()) {
        tb_worker_group_view_t view;
        tb_worker_group_view(group, &view);
        if (view.changes != printed) {
            print_view(&view);
            printed = view.changes;
        }
        tb_worker_group_view_clear(&view);
    }
    tb_worker_group_leave(group);
    return 0;
}
