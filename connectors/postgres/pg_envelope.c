/* Debezium's change event envelope and source block (tb_pg_envelope.h). */
#include <string.h>

#include "connectors/postgres/tb_pg_envelope.h"
#include "connectors/postgres/tb_pg_transaction.h"
#include "connectors/postgres/tb_pg_types.h"

/* Debezium's SnapshotRecord values, as the snapshot field allows them. */
#define SNAPSHOT_ALLOWED                                                                 \
    "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"

static tb_schema_t *snapshot_schema(void)
{
    tb_schema_t *s = tb_pg_optional_schema(TB_TYPE_STRING);
    if (s == NULL || tb_schema_set_name(s, "io.debezium.data.Enum") != 0 ||
        tb_schema_set_parameter(s, "allowed", SNAPSHOT_ALLOWED) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    tb_schema_set_version(s, true, 1);
    tb_schema_set_default(s, tb_value_string("false", 5));
    return s;
}

/* The source block's fields, in Debezium's order: their indices in
 * tb_pg_source_schema(), which adds them in this order. */
enum {
    SOURCE_VERSION,
    SOURCE_CONNECTOR,
    SOURCE_NAME,
    SOURCE_TS_MS,
    SOURCE_SNAPSHOT,
    SOURCE_DB,
    SOURCE_SEQUENCE,
    SOURCE_TS_US,
    SOURCE_TS_NS,
    SOURCE_SCHEMA,
    SOURCE_TABLE,
    SOURCE_TX_ID,
    SOURCE_LSN,
    SOURCE_XMIN,
    SOURCE_ORIGIN,
    SOURCE_ORIGIN_LSN
};

/* The envelope's fields, likewise (tb_pg_envelope_schema()). */
enum {
    ENVELOPE_BEFORE,
    ENVELOPE_AFTER,
    ENVELOPE_SOURCE,
    ENVELOPE_TRANSACTION,
    ENVELOPE_OP,
    ENVELOPE_TS_MS,
    ENVELOPE_TS_US,
    ENVELOPE_TS_NS
};

tb_schema_t *tb_pg_source_schema(void)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    int rc =
        s == NULL || tb_schema_set_name(s, "io.debezium.connector.postgresql.Source");
    rc = rc || tb_schema_add_field(s, "version", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "connector", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "name", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "ts_ms", tb_schema_new(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "snapshot", snapshot_schema());
    rc = rc || tb_schema_add_field(s, "db", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "sequence", tb_pg_optional_schema(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "ts_us", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "ts_ns", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "schema", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "table", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "txId", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "lsn", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "xmin", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "origin", tb_pg_optional_schema(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "origin_lsn", tb_pg_optional_schema(TB_TYPE_INT64));
    if (rc) {
        tb_schema_decref(s);
        return NULL;
    }
    tb_schema_set_version(s, true, 1);
    return s;
}

/* Field index of st (by index: no name to look up per record). */
static int set_string(tb_value_t *st, size_t index, const char *s)
{
    return tb_value_struct_set_at(st, index,
                                  s != NULL ? tb_value_string(s, strlen(s)) : NULL);
}

static int set_int64(tb_value_t *st, size_t index, int64_t v, bool present)
{
    return tb_value_struct_set_at(st, index,
                                  present ? tb_value_int(TB_TYPE_INT64, v) : NULL);
}

tb_value_t *tb_pg_source_value(tb_schema_t *schema, const tb_pg_source_t *info)
{
    tb_value_t *v = tb_value_struct(schema);
    int64_t ts_us = info->ts_us;
    int rc = v == NULL;
    rc = rc || set_string(v, SOURCE_VERSION, TB_PG_DEBEZIUM_VERSION);
    rc = rc || set_string(v, SOURCE_CONNECTOR, "postgresql");
    rc = rc || set_string(v, SOURCE_NAME, info->name);
    rc = rc || set_int64(v, SOURCE_TS_MS, ts_us / 1000, true);
    rc = rc || set_string(v, SOURCE_SNAPSHOT, info->snapshot);
    rc = rc || set_string(v, SOURCE_DB, info->db);
    rc = rc || set_string(v, SOURCE_SEQUENCE, info->sequence);
    rc = rc || set_int64(v, SOURCE_TS_US, ts_us, true);
    rc = rc || set_int64(v, SOURCE_TS_NS, ts_us * 1000, true);
    rc = rc || set_string(v, SOURCE_SCHEMA, info->schema);
    rc = rc || set_string(v, SOURCE_TABLE, info->table);
    rc = rc || set_int64(v, SOURCE_TX_ID, info->tx_id, info->tx_id >= 0);
    rc = rc || set_int64(v, SOURCE_LSN, info->lsn, info->lsn >= 0);
    rc = rc || set_int64(v, SOURCE_XMIN, info->xmin, info->xmin >= 0);
    rc = rc || set_string(v, SOURCE_ORIGIN, info->origin);
    rc = rc || set_int64(v, SOURCE_ORIGIN_LSN, info->origin_lsn, info->origin != NULL);
    if (rc) {
        tb_value_free(v);
        return NULL;
    }
    return v;
}

tb_schema_t *tb_pg_envelope_schema(const char *name, tb_schema_t *row,
                                   tb_schema_t *source)
{
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    int rc = s == NULL || tb_schema_set_name(s, name);
    rc = rc || tb_schema_add_field(s, "before", tb_schema_incref(row));
    rc = rc || tb_schema_add_field(s, "after", tb_schema_incref(row));
    rc = rc || tb_schema_add_field(s, "source", tb_schema_incref(source));
    rc = rc || tb_schema_add_field(s, "transaction", tb_pg_transaction_block_schema());
    rc = rc || tb_schema_add_field(s, "op", tb_schema_new(TB_TYPE_STRING));
    rc = rc || tb_schema_add_field(s, "ts_ms", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "ts_us", tb_pg_optional_schema(TB_TYPE_INT64));
    rc = rc || tb_schema_add_field(s, "ts_ns", tb_pg_optional_schema(TB_TYPE_INT64));
    if (rc) {
        tb_schema_decref(s);
        return NULL;
    }
    tb_schema_set_version(s, true, 2);
    return s;
}

tb_value_t *tb_pg_envelope_value(tb_schema_t *schema, char op, tb_value_t *before,
                                 tb_value_t *after, tb_value_t *source,
                                 tb_value_t *transaction, int64_t now_us)
{
    char code[2] = {op, '\0'};
    tb_value_t *v = tb_value_struct(schema);
    if (v == NULL) {
        tb_value_free(before);
        tb_value_free(after);
        tb_value_free(source);
        tb_value_free(transaction);
        return NULL;
    }
    /* each setter releases what it is given on failure */
    int rc = tb_value_struct_set_at(v, ENVELOPE_BEFORE, before);
    rc |= tb_value_struct_set_at(v, ENVELOPE_AFTER, after);
    rc |= tb_value_struct_set_at(v, ENVELOPE_SOURCE, source);
    rc |= tb_value_struct_set_at(v, ENVELOPE_TRANSACTION, transaction);
    rc |= set_string(v, ENVELOPE_OP, code);
    rc |= set_int64(v, ENVELOPE_TS_MS, now_us / 1000, true);
    rc |= set_int64(v, ENVELOPE_TS_US, now_us, true);
    rc |= set_int64(v, ENVELOPE_TS_NS, now_us * 1000, true);
    if (rc != 0) {
        tb_value_free(v);
        return NULL;
    }
    return v;
}
