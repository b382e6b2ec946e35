/*
 * tb_pg_envelope.h - Debezium's change event, field for field: the source
 * block (io.debezium.connector.postgresql.Source) and the envelope
 * <prefix>.<schema>.<table>.Envelope around a table's .Value rows, with
 * the schema names and versions Debezium 3.6 gives them, so that
 * JsonConverter (and the schema registry converters) write what
 * Debezium's connector writes.
 */
#ifndef TB_PG_ENVELOPE_H
#define TB_PG_ENVELOPE_H

#include <stdint.h>

#include "core/tb_data.h"

/* The Debezium release whose records these are (source.version). */
#define TB_PG_DEBEZIUM_VERSION "3.6.1.Final"

/* What the source block tells of one change. Strings are borrowed. */
typedef struct {
    const char *name;   /* topic.prefix */
    const char *db;     /* database.dbname */
    const char *schema; /* the table's schema and name */
    const char *table;
    const char *snapshot; /* "true", "first", "last", ..., or "false" */
    const char *sequence; /* ["<last commit lsn>","<lsn>"], or NULL */
    int64_t ts_us;        /* the commit's time (the snapshot's when reading one) */
    int64_t tx_id;        /* -1: none */
    int64_t lsn;          /* -1: none */
    int64_t xmin;         /* -1: none */
    /* The replication origin the change came from (pgoutput's Origin
     * message), NULL: none (a change made on this server); origin_lsn its
     * commit's LSN at the origin. */
    const char *origin;
    int64_t origin_lsn;
} tb_pg_source_t;

/* The source block's schema, one reference. */
tb_schema_t *tb_pg_source_schema(void);

/* The source block of info under schema (from tb_pg_source_schema). */
tb_value_t *tb_pg_source_value(tb_schema_t *schema, const tb_pg_source_t *info);

/* The envelope schema called name around row (the optional .Value schema)
 * and source. Takes new references to both. */
tb_schema_t *tb_pg_envelope_schema(const char *name, tb_schema_t *row,
                                   tb_schema_t *source);

/* An envelope of op ('c', 'u', 'd', 'r', 't') under schema: before, after
 * and transaction (the block of tb_pg_transaction.h; NULL: null) and source
 * are stolen; now_us is when it was made (ts_ms, ts_us, ts_ns). NULL on no
 * memory. */
tb_value_t *tb_pg_envelope_value(tb_schema_t *schema, char op, tb_value_t *before,
                                 tb_value_t *after, tb_value_t *source,
                                 tb_value_t *transaction, int64_t now_us);

#endif
