/*
 * tb_pg_transaction.h - Debezium's transaction metadata
 * (provide.transaction.metadata): a BEGIN and an END record for each
 * streamed transaction on the transaction topic (<topic.prefix>.transaction
 * by default), and the transaction block of every change event in it, with
 * the schema names, versions and fields Debezium 3.0 gives them:
 *
 * - key io.debezium.connector.common.TransactionMetadataKey {id};
 * - value io.debezium.connector.common.TransactionMetadataValue {status,
 *   id, event_count, data_collections [event.collection {data_collection,
 *   event_count}], ts_ms}; event_count and data_collections are null in a
 *   BEGIN;
 * - the envelope's block event.block {id, total_order,
 *   data_collection_order}.
 *
 * The id is Debezium's for PostgreSQL, "<xid>:<lsn>" with the LSN of the
 * message each record comes from (the Begin's, the change's, the Commit's),
 * so it differs from record to record of one transaction. A data
 * collection is "<schema>.<table>", and data_collections lists the tables
 * in the order Debezium's HashMap of the counts iterates them
 * (tb_pg_java_order.h; its buckets grow over the task's life, never
 * shrink). Snapshot records have no transaction.
 */
#ifndef TB_PG_TRANSACTION_H
#define TB_PG_TRANSACTION_H

#include <stdint.h>

#include "connectors/postgres/tb_pg_records.h"
#include "core/tb_data.h"

typedef struct tb_pg_transactions tb_pg_transactions_t;

/* The envelope's transaction block schema (optional), one reference. */
tb_schema_t *tb_pg_transaction_block_schema(void);

/* Transaction metadata written to topic (copied). NULL on no memory. */
tb_pg_transactions_t *tb_pg_transactions_create(const char *topic);

/* NULL is a no-op. */
void tb_pg_transactions_destroy(tb_pg_transactions_t *t);

/* Transaction xid begins with the Begin message at lsn: its counts start
 * again, and its BEGIN record (with the offset of position, committed at
 * commit_us) is queued. 0, or -1 on no memory. */
int tb_pg_transactions_begin(tb_pg_transactions_t *t, tb_pg_queue_t *queue, uint32_t xid,
                             uint64_t lsn, int64_t commit_us,
                             const tb_pg_position_t *position);

/* Counts one change event (at lsn) of the table schema.table in the
 * transaction begun last, and returns its block (a new value), or NULL on
 * no memory. */
tb_value_t *tb_pg_transactions_event(tb_pg_transactions_t *t, const char *schema,
                                     const char *table, uint64_t lsn);

/* The transaction ends with the Commit message at lsn: its END record, with
 * the counts, is queued. 0, or -1 on no memory. */
int tb_pg_transactions_end(tb_pg_transactions_t *t, tb_pg_queue_t *queue, uint64_t lsn,
                           int64_t commit_us, const tb_pg_position_t *position);

#endif
