/*
 * libFuzzer target: the replication stream's framing and the pgoutput
 * decoder (connectors/postgres/tb_pgoutput.h) on arbitrary bytes, then every
 * text column of a decoded tuple read as a value of each mapped type
 * (tb_pg_types.h), as a server's messages would be.
 */
#include <stdint.h>
#include <stdlib.h>

#include "connectors/postgres/tb_pg_types.h"
#include "connectors/postgres/tb_pgoutput.h"

/* bool, int4, float8, numeric(10,2), numeric, date, time, timestamp,
 * timestamptz, bytea, interval, timetz, money, int4[], text[] */
static const tb_pg_type_t types[] = {
    {.oid = 16, .typmod = -1},
    {.oid = 23, .typmod = -1},
    {.oid = 701, .typmod = -1},
    {.oid = 1700, .typmod = (10 << 16 | 2) + 4},
    {.oid = 1700, .typmod = -1},
    {.oid = 1082, .typmod = -1},
    {.oid = 1083, .typmod = -1},
    {.oid = 1114, .typmod = -1},
    {.oid = 1184, .typmod = -1},
    {.oid = 17, .typmod = -1},
    {.oid = 1186, .typmod = -1},
    {.oid = 1266, .typmod = -1},
    {.oid = 790, .typmod = -1},
    {.oid = 1007, .typmod = -1, .elem_oid = 23},
    {.oid = 1009, .typmod = -1, .elem_oid = 25},
    {.oid = 1560, .typmod = 3},
    {.oid = 1560, .typmod = 1},
    {.oid = 1562, .typmod = -1},
    {.oid = 600, .typmod = -1},
    {.oid = 90001, .typmod = -1, .base_name = (char *)"hstore"},
};

static void read_values(const tb_pg_tuple_t *t)
{
    char errstr[256];
    tb_pg_modes_t modes = {0};
    for (uint16_t i = 0; i < t->count; i++) {
        if (t->columns[i].kind != 't') {
            continue;
        }
        for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
            tb_schema_t *schema =
                tb_pg_type_schema(&types[k], &modes, errstr, sizeof(errstr));
            tb_value_t *value = NULL;
            if (schema == NULL) {
                abort(); /* every type listed is mapped */
            }
            if (tb_pg_type_value(&types[k], schema, &modes, t->columns[i].data,
                                 t->columns[i].len, &value, errstr,
                                 sizeof(errstr)) == 0) {
                tb_value_free(value);
            }
            tb_schema_decref(schema);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    tb_pg_frame_t frame;
    tb_pgoutput_msg_t msg = {0};
    if (tb_pg_frame_parse(data, size, &frame, errstr, sizeof(errstr)) == 0 &&
        frame.kind == 'w' &&
        tb_pgoutput_decode(frame.data, frame.data_len, &msg, errstr, sizeof(errstr)) ==
            0) {
        read_values(&msg.new_tuple);
        if (msg.old_kind != 0) {
            read_values(&msg.old_tuple);
        }
    }
    tb_pgoutput_msg_clear(&msg);
    return 0;
}
