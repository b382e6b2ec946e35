/*
 * tb_sqlite_checkpointer.h - checkpoints a WAL database on a thread of its
 * own, so that no writer's commit pays for it.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that takes the log
 * past 1 000 pages: on the committing thread, under the store's lock, with
 * the syncs of the log and of the database file. A source task flushing its
 * offsets would then wait for those syncs, and every other store call with
 * it. The checkpointer takes that work away: it replaces the automatic
 * checkpoint with a WAL hook that only wakes its thread, which runs a
 * PASSIVE checkpoint on a connection of its own (PASSIVE never waits for a
 * lock, and WAL lets it run beside readers and the writer).
 *
 * Ownership: tb_sqlite_checkpointer_start() opens its own connection to the
 * file and starts a thread; tb_sqlite_checkpointer_stop() joins it, closes
 * the connection, takes the hook off the writer and frees everything. The
 * writer connection is borrowed: it must outlive the checkpointer.
 */
#ifndef TB_SQLITE_CHECKPOINTER_H
#define TB_SQLITE_CHECKPOINTER_H

#include <stddef.h>

#include <sqlite3.h>

typedef struct tb_sqlite_checkpointer tb_sqlite_checkpointer_t;

/* Checkpoints the database at path, which writer (in WAL mode) writes, each
 * time a commit leaves at least TB_SQLITE_CHECKPOINT_PAGES pages in the log.
 * Returns NULL with why filled when the connection or the thread cannot be
 * made. */
tb_sqlite_checkpointer_t *tb_sqlite_checkpointer_start(sqlite3 *writer, const char *path,
                                                       char *why, size_t why_size);

/* Stops and frees; NULL is a no-op. The writer's last close checkpoints what
 * is left, as SQLite's close always does. */
void tb_sqlite_checkpointer_stop(tb_sqlite_checkpointer_t *checkpointer);

/* SQLite's own threshold for its automatic checkpoint. */
#define TB_SQLITE_CHECKPOINT_PAGES 1000

#endif
