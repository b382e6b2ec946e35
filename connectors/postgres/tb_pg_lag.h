/*
 * tb_pg_lag.h - how far the replication slot trails the server, as two
 * gauges of the task: tributary_postgres_slot_lag_bytes, the WAL between
 * the slot's confirmed flush position and the end of WAL the server last
 * told, and tributary_postgres_slot_lag_seconds, the age of the oldest
 * transaction read but not yet confirmed (0 when every one is).
 */
#ifndef TB_PG_LAG_H
#define TB_PG_LAG_H

#include <stdint.h>

typedef struct tb_pg_lag tb_pg_lag_t;

/* The gauges of one task. NULL on no memory. */
tb_pg_lag_t *tb_pg_lag_create(const char *connector, int task);

/* A transaction committed at lsn at commit_us (Unix microseconds) was read. */
void tb_pg_lag_commit(tb_pg_lag_t *lag, uint64_t lsn, int64_t commit_us);

/* Sets the gauges: the server's end of WAL, the confirmed position, now. */
void tb_pg_lag_update(tb_pg_lag_t *lag, uint64_t server_lsn, uint64_t confirmed,
                      int64_t now_us);

/* NULL is a no-op; the gauges leave the metrics page. */
void tb_pg_lag_destroy(tb_pg_lag_t *lag);

#endif
