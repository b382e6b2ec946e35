/*
 * tb_sink_start.h - where a sink task starts reading an assigned partition.
 *
 * The store is the authority, unless the plugin keeps its own offsets with
 * the data it writes (tb_plugin_t.open: then the plugin's offset is, and the
 * group's is not looked at); the group's committed offset may move a
 * partition forward (an operator's reset while the connector was stopped);
 * auto.offset.reset decides only when none exists. The answer is always a
 * concrete offset, resolved before assign(), or a reason to stop the
 * partition. Pure logic, no I/O: the engine gathers the inputs.
 */
#ifndef TB_SINK_START_H
#define TB_SINK_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TB_OFFSET_NONE (-1) /* no stored or committed offset */

typedef enum {
    TB_RESET_EARLIEST = 0,
    TB_RESET_LATEST,
    TB_RESET_NONE,
} tb_reset_policy_t;

typedef enum {
    TB_START_STORED = 0, /* the store's offset */
    TB_START_GROUP,      /* the group's committed offset */
    TB_START_RESET,      /* auto.offset.reset through the watermarks */
    TB_START_STOPPED,    /* the partition must not be read; see reason */
    TB_START_WAITING,    /* not known yet (see reason): ask again later */
    TB_START_PLUGIN,     /* the plugin's own offset (tb_plugin_t.open) */
} tb_start_origin_t;

typedef struct {
    int64_t stored;    /* TB_OFFSET_NONE when the store has none */
    int64_t committed; /* TB_OFFSET_NONE when the group has none */
    int64_t low;       /* the partition's low watermark */
    int64_t high;      /* its high watermark (the end offset) */
    tb_reset_policy_t reset;
    /* why the watermarks could not be read (low and high mean nothing
     * then), NULL when they were */
    const char *watermarks_error;
    /* the plugin's own offset (tb_plugin_t.open), authoritative, when
     * has_plugin */
    bool has_plugin;
    int64_t plugin;
} tb_start_inputs_t;

typedef struct {
    int64_t offset; /* where to start (meaningless when stopped) */
    tb_start_origin_t origin;
    int64_t skipped;    /* records an adopted group offset moved past */
    int64_t deleted;    /* records retention deleted before they were read */
    bool group_ignored; /* a group offset behind the stored one */
    char reason[256];   /* why the partition stopped or waits, or what was
                           skipped */
    const char *cause;  /* when stopped: a short static label for metrics */
} tb_start_t;

/* Decides the start of one partition. */
tb_start_t tb_sink_start_resolve(const tb_start_inputs_t *in);

/* How long a partition waiting for its start (TB_START_WAITING) waits
 * before its attempt number attempt (1, 2, ...) to resolve it again: 500 ms,
 * doubling up to 30 s. */
int64_t tb_sink_start_retry_delay_ms(int attempt);

/* "stored", "group", "reset", "stopped", "waiting", "plugin". */
const char *tb_start_origin_name(tb_start_origin_t origin);

/* The policy auto.offset.reset names: Kafka's earliest, latest and none, or
 * librdkafka's aliases (smallest, beginning; largest, end; error). Returns 0,
 * or -1 when text is none of them. */
int tb_reset_policy_parse(const char *text, tb_reset_policy_t *policy);

#endif
