#include "core/tb_state.h"

#include <stddef.h>
#include <strings.h>

static const char *const target_names[] = {
    [TB_TARGET_STARTED] = "STARTED",
    [TB_TARGET_PAUSED] = "PAUSED",
    [TB_TARGET_STOPPED] = "STOPPED",
};

static const char *const state_names[] = {
    [TB_STATE_UNASSIGNED] = "UNASSIGNED", [TB_STATE_RUNNING] = "RUNNING",
    [TB_STATE_PAUSED] = "PAUSED",         [TB_STATE_STOPPED] = "STOPPED",
    [TB_STATE_FAILED] = "FAILED",         [TB_STATE_RESTARTING] = "RESTARTING",
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int lookup(const char *const *names, int count, const char *name)
{
    if (name == NULL) {
        return -1;
    }
    for (int i = 0; i < count; i++) {
        if (strcasecmp(names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

const char *tb_target_state_name(tb_target_state_t state)
{
    return target_names[state];
}

int tb_target_state_parse(const char *name, tb_target_state_t *out)
{
    int i = lookup(target_names, COUNT(target_names), name);
    if (i < 0) {
        return -1;
    }
    *out = (tb_target_state_t)i;
    return 0;
}

int tb_initial_state_parse(const char *name, tb_target_state_t *out)
{
    if (name != NULL && strcasecmp(name, "RUNNING") == 0) {
        *out = TB_TARGET_STARTED;
        return 0;
    }
    if (name != NULL && strcasecmp(name, "STARTED") == 0) {
        return -1; /* Connect's initial_state does not accept STARTED */
    }
    return tb_target_state_parse(name, out);
}

const char *tb_state_name(tb_state_t state)
{
    return state_names[state];
}
