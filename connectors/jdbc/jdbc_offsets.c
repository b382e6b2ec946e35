/*
 * jdbc_offsets.c - the offsets table the connector owns in the target
 * database: made when missing, and changed by an operator's PATCH or
 * DELETE of the connector's offsets (tb_plugin_t.alter_offsets). What a
 * put writes and reads there is the writer's (jdbc_writer.c).
 */
#include <stdio.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"

#define OFFSETS "\"" TB_JDBC_OFFSETS_TABLE "\""

tb_jdbc_rc_t tb_jdbc_offsets_prepare(tb_jdbc_writer_t *w, char *errstr,
                                     size_t errstr_size)
{
    return w->dialect->exec(w->conn,
                            "CREATE TABLE IF NOT EXISTS " OFFSETS
                            " (connector TEXT NOT NULL, topic TEXT NOT NULL, "
                            "kafka_partition INTEGER NOT NULL, next_offset BIGINT NOT "
                            "NULL, PRIMARY KEY (connector, topic, kafka_partition))",
                            NULL, 0, NULL, errstr, errstr_size);
}

/* The statement of one partition's change: its next offset written, or
 * (offset < 0) its row deleted. */
static tb_jdbc_rc_t change_partition(tb_jdbc_writer_t *w, const json_t *op, char *errstr,
                                     size_t errstr_size)
{
    const char *topic = json_string_value(json_object_get(op, "topic"));
    json_int_t offset = json_integer_value(json_object_get(op, "offset"));
    tb_jdbc_param_t params[4] = {
        {.kind = TB_JDBC_P_TEXT, .data = w->connector, .len = strlen(w->connector)},
        {.kind = TB_JDBC_P_TEXT, .data = topic, .len = strlen(topic)},
        {.kind = TB_JDBC_P_INT,
         .i = json_integer_value(json_object_get(op, "partition"))},
        {.kind = TB_JDBC_P_INT, .i = offset}};
    char sql[256];
    char p = w->dialect->param_prefix;
    if (offset < 0) {
        snprintf(sql, sizeof(sql),
                 "DELETE FROM " OFFSETS " WHERE connector = %c1 AND topic = %c2 AND "
                 "kafka_partition = %c3",
                 p, p, p);
        return w->dialect->exec(w->conn, sql, params, 3, NULL, errstr, errstr_size);
    }
    snprintf(sql, sizeof(sql),
             "INSERT INTO " OFFSETS " (connector, topic, kafka_partition, next_offset) "
             "VALUES (%c1, %c2, %c3, %c4) ON CONFLICT (connector, topic, "
             "kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset",
             p, p, p, p);
    return w->dialect->exec(w->conn, sql, params, 4, NULL, errstr, errstr_size);
}

tb_jdbc_rc_t tb_jdbc_offsets_change(tb_jdbc_writer_t *w, const json_t *offsets,
                                    char *errstr, size_t errstr_size)
{
    const tb_jdbc_dialect_t *d = w->dialect;
    tb_jdbc_rc_t rc = d->exec(w->conn, d->begin, NULL, 0, NULL, errstr, errstr_size);
    if (rc == TB_JDBC_OK && offsets == NULL) {
        char sql[128];
        tb_jdbc_param_t connector = {
            .kind = TB_JDBC_P_TEXT, .data = w->connector, .len = strlen(w->connector)};
        snprintf(sql, sizeof(sql), "DELETE FROM " OFFSETS " WHERE connector = %c1",
                 d->param_prefix);
        rc = d->exec(w->conn, sql, &connector, 1, NULL, errstr, errstr_size);
    }
    size_t i;
    json_t *op;
    json_array_foreach ((json_t *)offsets, i, op) {
        if (rc == TB_JDBC_OK) {
            rc = change_partition(w, op, errstr, errstr_size);
        }
    }
    if (rc == TB_JDBC_OK) {
        return d->exec(w->conn, "COMMIT", NULL, 0, NULL, errstr, errstr_size);
    }
    char ignored[256];
    d->exec(w->conn, "ROLLBACK", NULL, 0, NULL, ignored, sizeof(ignored));
    return rc;
}
