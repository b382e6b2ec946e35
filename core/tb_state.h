/*
 * tb_state.h - connector and task lifecycle states shared by every floor.
 *
 * Two vocabularies, as in Kafka Connect:
 *  - the target state an operator asks for (STARTED, PAUSED, STOPPED), which
 *    is durable and lives in the store;
 *  - the observed state of a connector or task (UNASSIGNED, RUNNING, ...),
 *    which the runtime reports in /status.
 * Names returned are static strings; parsing is case-insensitive.
 */
#ifndef TB_STATE_H
#define TB_STATE_H

typedef enum {
    TB_TARGET_STARTED = 0,
    TB_TARGET_PAUSED,
    TB_TARGET_STOPPED,
} tb_target_state_t;

typedef enum {
    TB_STATE_UNASSIGNED = 0,
    TB_STATE_RUNNING,
    TB_STATE_PAUSED,
    TB_STATE_STOPPED,
    TB_STATE_FAILED,
    TB_STATE_RESTARTING,
} tb_state_t;

/* "STARTED", "PAUSED", "STOPPED". */
const char *tb_target_state_name(tb_target_state_t state);

/* Parses a stored target state name; returns -1 when unknown. */
int tb_target_state_parse(const char *name, tb_target_state_t *out);

/* Parses Connect's initial_state (RUNNING|PAUSED|STOPPED, any case);
 * RUNNING maps to STARTED. Returns -1 when unknown. */
int tb_initial_state_parse(const char *name, tb_target_state_t *out);

/* "UNASSIGNED", "RUNNING", ... */
const char *tb_state_name(tb_state_t state);

#endif
