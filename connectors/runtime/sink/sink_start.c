#include "connectors/runtime/sink/tb_sink_start.h"

#include <stdio.h>
#include <string.h>

const char *tb_start_origin_name(tb_start_origin_t origin)
{
    static const char *const names[] = {"stored",  "group",   "reset",
                                        "stopped", "waiting", "plugin"};
    return names[origin];
}

int tb_reset_policy_parse(const char *text, tb_reset_policy_t *policy)
{
    static const struct {
        const char *name;
        tb_reset_policy_t policy;
    } names[] = {{"earliest", TB_RESET_EARLIEST},  {"smallest", TB_RESET_EARLIEST},
                 {"beginning", TB_RESET_EARLIEST}, {"latest", TB_RESET_LATEST},
                 {"largest", TB_RESET_LATEST},     {"end", TB_RESET_LATEST},
                 {"none", TB_RESET_NONE},          {"error", TB_RESET_NONE}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(text, names[i].name) == 0) {
            *policy = names[i].policy;
            return 0;
        }
    }
    return -1;
}

static tb_start_t stopped(const char *cause, const char *fmt, int64_t a, int64_t b)
{
    tb_start_t start = {
        .offset = TB_OFFSET_NONE, .origin = TB_START_STOPPED, .cause = cause};
    snprintf(start.reason, sizeof(start.reason), fmt, (long long)a, (long long)b);
    return start;
}

/* Retention may have deleted records at the start: continue at the low
 * watermark and say how many were lost. */
static tb_start_t clamp_to_low(tb_start_t start, int64_t low)
{
    if (start.offset < low) {
        start.deleted = low - start.offset;
        snprintf(start.reason, sizeof(start.reason),
                 "offsets %lld to %lld were deleted by retention before they were "
                 "read; continuing at %lld",
                 (long long)start.offset, (long long)(low - 1), (long long)low);
        start.offset = low;
    }
    return start;
}

#define RETRY_FIRST_MS 500
#define RETRY_MAX_MS 30000

int64_t tb_sink_start_retry_delay_ms(int attempt)
{
    int64_t delay = RETRY_FIRST_MS;
    for (int i = 1; i < attempt && delay < RETRY_MAX_MS; i++) {
        delay *= 2;
    }
    return delay < RETRY_MAX_MS ? delay : RETRY_MAX_MS;
}

tb_start_t tb_sink_start_resolve(const tb_start_inputs_t *in)
{
    tb_start_t start = {0};

    /* a broker's hiccup decides nothing: every rule below needs them */
    if (in->watermarks_error != NULL) {
        start.offset = TB_OFFSET_NONE;
        start.origin = TB_START_WAITING;
        snprintf(start.reason, sizeof(start.reason),
                 "waiting for its watermarks, which could not be read: %s",
                 in->watermarks_error);
        return start;
    }

    /* the plugin's offset was written with its data: it replaces the
     * store's, and no group offset may move it */
    if (in->has_plugin) {
        tb_start_inputs_t own = *in;
        own.stored = in->plugin;
        own.committed = TB_OFFSET_NONE;
        own.has_plugin = false;
        start = tb_sink_start_resolve(&own);
        start.origin = start.origin == TB_START_STORED ? TB_START_PLUGIN : start.origin;
        return start;
    }
    if (in->stored != TB_OFFSET_NONE && in->stored > in->high) {
        return stopped("topic recreated",
                       "the partition ends at %lld, below the offset %lld already "
                       "read: the topic was recreated or truncated; reset the "
                       "connector's offsets to read it again",
                       in->high, in->stored);
    }
    if (in->committed != TB_OFFSET_NONE && in->committed > in->high &&
        (in->stored == TB_OFFSET_NONE || in->committed > in->stored)) {
        return stopped("group offset past end",
                       "the group's committed offset %lld is past the end of the "
                       "partition (%lld); reset the group's offsets",
                       in->committed, in->high);
    }
    if (in->stored != TB_OFFSET_NONE) {
        start.offset = in->stored;
        start.origin = TB_START_STORED;
        if (in->committed != TB_OFFSET_NONE && in->committed > in->stored) {
            start.offset = in->committed;
            start.origin = TB_START_GROUP;
            start.skipped = in->committed - in->stored;
            snprintf(start.reason, sizeof(start.reason),
                     "adopted the group's offset %lld, ahead of the stored %lld: "
                     "%lld records skipped",
                     (long long)in->committed, (long long)in->stored,
                     (long long)start.skipped);
            return clamp_to_low(start, in->low);
        }
        start.group_ignored =
            in->committed != TB_OFFSET_NONE && in->committed < in->stored;
        return clamp_to_low(start, in->low);
    }
    if (in->committed != TB_OFFSET_NONE) {
        start.offset = in->committed;
        start.origin = TB_START_GROUP;
        return clamp_to_low(start, in->low);
    }
    if (in->reset == TB_RESET_NONE) {
        return stopped("no offset to start from",
                       "no stored or committed offset and auto.offset.reset=none "
                       "(end %lld, start %lld)",
                       in->high, in->low);
    }
    start.origin = TB_START_RESET;
    start.offset = in->reset == TB_RESET_EARLIEST ? in->low : in->high;
    return start;
}
