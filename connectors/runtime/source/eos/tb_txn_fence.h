/*
 * tb_txn_fence.h - fences transactional ids that no running task holds, in
 * bounded steps: for each id in turn, a producer of that id initialises
 * its transactions (which aborts the id's open transaction and makes every
 * other producer of it fail) and is destroyed. An exactly-once source's
 * previous tasks are fenced this way before its new task configs run
 * (tb_fencing.h), so that a zombie still running one of them cannot
 * commit.
 *
 * Ownership: the fence owns its producer and its copy of the ids. Not
 * thread-safe: one caller at a time (a pool job, or a REST operation).
 */
#ifndef TB_TXN_FENCE_H
#define TB_TXN_FENCE_H

#include <stddef.h>

#include <jansson.h>

/* How long one id may go unanswered before the fencing fails. */
#define TB_TXN_FENCE_TIMEOUT_MS 30000

typedef struct tb_txn_fence tb_txn_fence_t;

/* A fence of ids (an array of strings, borrowed) through producers made
 * from producer_props (librdkafka properties, borrowed). */
tb_txn_fence_t *tb_txn_fence_create(const json_t *producer_props, const json_t *ids);

/* One step of at most about step_ms: 1 once every id is fenced, 0 when
 * another step is needed, -1 with errstr. */
int tb_txn_fence_step(tb_txn_fence_t *fence, int step_ms, char *errstr,
                      size_t errstr_size);

/* NULL is a no-op. */
void tb_txn_fence_destroy(tb_txn_fence_t *fence);

#endif
