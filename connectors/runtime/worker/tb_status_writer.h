/*
 * tb_status_writer.h - writes the states of a worker's connectors and tasks
 * to the store, off the threads that change them.
 *
 * A state change is recorded in memory and returns at once; the writer's
 * own thread writes it to the store (the status topic in distributed mode,
 * which a slow or lost broker can hold for the store's whole write timeout).
 * A write that fails is tried again with a bounded backoff (100 ms doubling
 * to 10 s) until it succeeds or a newer state of the same connector or task
 * takes its place: the latest state wins, and the store ends up holding
 * what runs once it answers again. No lock is held across a store write.
 */
#ifndef TB_STATUS_WRITER_H
#define TB_STATUS_WRITER_H

#include "core/tb_state.h"
#include "store/tb_store.h"

typedef struct tb_status_writer tb_status_writer_t;

/* Starts the writer's thread. store is borrowed and must outlive the
 * writer. Returns NULL when the thread cannot start. */
tb_status_writer_t *tb_status_writer_create(tb_store_t *store);

/* Records that task task_id of connector name (-1: the connector instance)
 * is now in state, with trace (NULL: none); name and trace are copied.
 * Replaces any state of the same task not written yet. Never waits on the
 * store. */
void tb_status_writer_put(tb_status_writer_t *writer, const char *name, int task_id,
                          tb_state_t state, const char *trace);

/* Drops every state of connector name not written yet (a deleted
 * connector): a write of its under way is not tried again if it fails.
 * Never waits on the store. */
void tb_status_writer_forget(tb_status_writer_t *writer, const char *name);

/* Writes what is still pending, each once, stopping at the first failure
 * (none is tried when the last write failed; the count of states left
 * unwritten is logged): the wait is at
 * most the write under way plus one failed write, each bounded by the
 * store's write timeout. Then joins the thread and frees the writer. NULL
 * is a no-op. */
void tb_status_writer_destroy(tb_status_writer_t *writer);

#endif
