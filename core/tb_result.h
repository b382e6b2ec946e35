/*
 * tb_result.h - what a step of work returns: one small vocabulary for the
 * plugins' callbacks, the converters, the transformations and the engines'
 * calls to them.
 *
 * The values are fixed: 0 is success and -1 failure everywhere, so a
 * function that can only succeed or fail returns 0 or -1 and is read the
 * same way.
 */
#ifndef TB_RESULT_H
#define TB_RESULT_H

typedef enum {
    TB_RESULT_FAILED = -1, /* failed: errstr says why; errors.tolerance decides */
    TB_RESULT_OK = 0,      /* done */
    /* failed for a reason that may pass (a database or a schema registry
     * that did not answer): tried again under errors.retry.* (tb_task_retry.h) */
    TB_RESULT_RETRY = 1,
    TB_RESULT_DROPPED = 2, /* a transformation dropped the record (Filter) */
    /* not taken for now: the callee holds as much as it may (a sink's
     * requests in flight) and wakes the caller when it has room */
    TB_RESULT_BUSY = 3,
    /* a fast path that does not apply here, having changed nothing: the
     * caller takes the general one (a chain that cannot edit a value's
     * JSON text, tb_chain_apply_json) */
    TB_RESULT_DECLINED = 4,
} tb_result_t;

#endif
