/* The PostgreSQL change data capture source's pure parts: the pgoutput
 * decoder, the type mapping, Debezium's envelope as JsonConverter writes
 * it, the change events and the config. */
#include "tb_converter_test.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/postgres/tb_pg_config.h"
#include "connectors/postgres/tb_pg_envelope.h"
#include "connectors/postgres/tb_pg_events.h"
#include "connectors/postgres/tb_pg_records.h"
#include "connectors/postgres/tb_pg_relation.h"
#include "connectors/postgres/tb_pg_transaction.h"
#include "connectors/postgres/tb_pg_types.h"
#include "connectors/postgres/tb_pg_unknown.h"
#include "connectors/postgres/tb_pgoutput.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/tb_plugin.h"

/* A message under construction, written as on the wire. */
typedef struct {
    uint8_t data[1024];
    size_t len;
} wire_t;

static void put(wire_t *w, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        w->data[w->len++] = (uint8_t)(v >> (8 * (n - 1 - i)));
    }
}

static void put_string(wire_t *w, const char *s)
{
    memcpy(w->data + w->len, s, strlen(s) + 1);
    w->len += strlen(s) + 1;
}

static void put_text(wire_t *w, const char *s)
{
    put(w, 't', 1);
    put(w, strlen(s), 4);
    memcpy(w->data + w->len, s, strlen(s));
    w->len += strlen(s);
}

static void decode(const wire_t *w, tb_pgoutput_msg_t *m)
{
    char errstr[256] = "";
    if (tb_pgoutput_decode(w->data, w->len, m, errstr, sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
}

static void test_pgoutput_messages(void **state)
{
    (void)state;
    tb_pgoutput_msg_t m = {0};
    wire_t w = {.len = 0};

    put(&w, 'B', 1);
    put(&w, 0x16B3748, 8);
    put(&w, 1000, 8);
    put(&w, 731, 4);
    decode(&w, &m);
    assert_int_equal(m.kind, TB_PGOUTPUT_BEGIN);
    assert_int_equal(m.lsn, 0x16B3748);
    assert_int_equal(m.xid, 731);

    w.len = 0;
    put(&w, 'R', 1);
    put(&w, 16384, 4);
    put_string(&w, "public");
    put_string(&w, "items");
    put(&w, 'f', 1);
    put(&w, 2, 2);
    put(&w, 1, 1);
    put_string(&w, "id");
    put(&w, 23, 4);
    put(&w, 0xffffffff, 4);
    put(&w, 0, 1);
    put_string(&w, "name");
    put(&w, 25, 4);
    put(&w, 0xffffffff, 4);
    decode(&w, &m);
    assert_int_equal(m.kind, TB_PGOUTPUT_RELATION);
    assert_int_equal(m.relid, 16384);
    assert_string_equal(m.nspname, "public");
    assert_string_equal(m.relname, "items");
    assert_int_equal(m.replica_identity, 'f');
    assert_int_equal(m.ncolumns, 2);
    assert_string_equal(m.columns[1].name, "name");
    assert_int_equal(m.columns[0].flags, 1);
    assert_int_equal(m.columns[0].typmod, -1);

    /* an update with the old row (REPLICA IDENTITY FULL) */
    w.len = 0;
    put(&w, 'U', 1);
    put(&w, 16384, 4);
    put(&w, 'O', 1);
    put(&w, 2, 2);
    put_text(&w, "1");
    put(&w, 'n', 1);
    put(&w, 'N', 1);
    put(&w, 2, 2);
    put_text(&w, "1");
    put(&w, 'u', 1);
    decode(&w, &m);
    assert_int_equal(m.kind, TB_PGOUTPUT_UPDATE);
    assert_int_equal(m.old_kind, 'O');
    assert_int_equal(m.old_tuple.columns[1].kind, 'n');
    assert_int_equal(m.new_tuple.columns[0].len, 1);
    assert_memory_equal(m.new_tuple.columns[0].data, "1", 1);
    assert_int_equal(m.new_tuple.columns[1].kind, 'u');

    /* a delete with the old key */
    w.len = 0;
    put(&w, 'D', 1);
    put(&w, 16384, 4);
    put(&w, 'K', 1);
    put(&w, 2, 2);
    put_text(&w, "7");
    put(&w, 'n', 1);
    decode(&w, &m);
    assert_int_equal(m.old_kind, 'K');
    assert_memory_equal(m.old_tuple.columns[0].data, "7", 1);

    w.len = 0;
    put(&w, 'T', 1);
    put(&w, 2, 4);
    put(&w, 1, 1);
    put(&w, 16384, 4);
    put(&w, 16390, 4);
    decode(&w, &m);
    assert_int_equal(m.nrelids, 2);
    assert_int_equal(m.relids[1], 16390);

    w.len = 0;
    put(&w, 'C', 1);
    put(&w, 0, 1);
    put(&w, 0x16B3748, 8);
    put(&w, 0x16B3778, 8);
    put(&w, 1000, 8);
    decode(&w, &m);
    assert_int_equal(m.kind, TB_PGOUTPUT_COMMIT);
    assert_int_equal(m.end_lsn, 0x16B3778);

    /* a truncated insert is an error, not a read past the end */
    w.len = 0;
    put(&w, 'I', 1);
    put(&w, 16384, 4);
    put(&w, 'N', 1);
    put(&w, 1, 2);
    put(&w, 't', 1);
    put(&w, 100, 4);
    char errstr[256];
    assert_int_equal(tb_pgoutput_decode(w.data, w.len, &m, errstr, sizeof(errstr)), -1);
    assert_non_null(strstr(errstr, "malformed pgoutput message 'I'"));
    tb_pgoutput_msg_clear(&m);
}

static void test_replication_frames(void **state)
{
    (void)state;
    wire_t w = {.len = 0};
    tb_pg_frame_t f;
    char errstr[128];
    put(&w, 'k', 1);
    put(&w, 0x2000, 8);
    put(&w, 5, 8);
    put(&w, 1, 1);
    assert_int_equal(tb_pg_frame_parse(w.data, w.len, &f, errstr, sizeof(errstr)), 0);
    assert_int_equal(f.kind, 'k');
    assert_int_equal(f.wal_end, 0x2000);
    assert_true(f.reply_requested);

    w.len = 0;
    put(&w, 'w', 1);
    put(&w, 0x1000, 8);
    put(&w, 0x2000, 8);
    put(&w, 5, 8);
    put(&w, 'B', 1);
    assert_int_equal(tb_pg_frame_parse(w.data, w.len, &f, errstr, sizeof(errstr)), 0);
    assert_int_equal(f.wal_start, 0x1000);
    assert_int_equal(f.data_len, 1);

    uint8_t status[TB_PG_STATUS_LEN];
    tb_pg_status_update(status, 0x0102030405060708ULL, 0, true);
    assert_int_equal(status[0], 'r');
    assert_int_equal(status[1], 1);
    assert_int_equal(status[16], 8);
    assert_int_equal(status[33], 1);

    char text[32];
    uint64_t lsn;
    tb_pg_lsn_format(0x16B3748, text, sizeof(text));
    assert_string_equal(text, "0/16B3748");
    assert_int_equal(tb_pg_lsn_parse("1/A0", &lsn), 0);
    assert_int_equal(lsn, 0x1000000A0ULL);
    assert_int_equal(tb_pg_lsn_parse("nope", &lsn), -1);
}

/* value as JsonConverter writes it (a new string): its payload alone, or
 * with schemas enabled the {"schema","payload"} envelope. */
static char *converted(const tb_schema_t *schema, const tb_value_t *value,
                       bool schemas_enable)
{
    tb_converter_t *c =
        converter_of("org.apache.kafka.connect.json.JsonConverter",
                     schemas_enable ? NULL : "{\"schemas.enable\":\"false\"}");
    char *text = text_of(c, schema, value);
    tb_converter_destroy(c);
    return text;
}

static void check_type_value(const tb_pg_type_t *t, tb_pg_modes_t modes, const char *text,
                             const char *schema_name, const char *expected)
{
    char errstr[256] = "";
    tb_schema_t *schema = tb_pg_type_schema(t, &modes, errstr, sizeof(errstr));
    tb_value_t *value = NULL;
    if (schema == NULL || tb_pg_type_value(t, schema, &modes, text, strlen(text), &value,
                                           errstr, sizeof(errstr)) != 0) {
        fail_msg("%s: %s", text, errstr);
    }
    if (schema_name != NULL) {
        assert_string_equal(tb_schema_name(schema), schema_name);
    }
    char *json = converted(schema, value, false);
    if (strcmp(json, expected) != 0) {
        fail_msg("%s under oid %u: %s, expected %s", text, t->oid, json, expected);
    }
    free(json);
    tb_value_free(value);
    tb_schema_decref(schema);
}

static void check_value(uint32_t oid, int32_t typmod, tb_pg_modes_t modes,
                        const char *text, const char *schema_name, const char *expected)
{
    tb_pg_type_t t = {.oid = oid, .typmod = typmod, .elem_oid = tb_pg_array_elem(oid)};
    check_type_value(&t, modes, text, schema_name, expected);
}

/* Whether text cannot be read as a value of t. */
static bool unreadable(const tb_pg_type_t *t, tb_pg_modes_t modes, const char *text)
{
    char errstr[256] = "";
    tb_schema_t *schema = tb_pg_type_schema(t, &modes, errstr, sizeof(errstr));
    tb_value_t *value = NULL;
    int rc = tb_pg_type_value(t, schema, &modes, text, strlen(text), &value, errstr,
                              sizeof(errstr));
    tb_value_free(value);
    tb_schema_decref(schema);
    return rc != 0;
}

/* Bit strings, points and the extension types, as Debezium writes them. */
static void test_more_types(void **state)
{
    (void)state;
    tb_pg_modes_t json = {0};
    tb_pg_modes_t map = {.hstore = TB_PG_HSTORE_MAP};
    check_value(1560, 3, json, "101", "io.debezium.data.Bits", "\"BQ==\"");
    check_value(1560, 1, json, "1", NULL, "true");
    check_value(1562, 16, json, "0000000100000000", NULL, "\"AAE=\""); /* bit 8 */
    check_value(1562, -1, json, "000", NULL, "\"\""); /* no bit set: no bytes */
    check_value(600, -1, json, "(1.5,-2)", "io.debezium.data.geometry.Point",
                "{\"x\":1.5,\"y\":-2.0,\"wkb\":\"AQEAAAAAAAAAAAD4PwAAAAAAAADA\","
                "\"srid\":null}");
    tb_pg_type_t hstore = {.oid = 90001, .typmod = -1, .base_name = "hstore"};
    const char *pairs = "\"k\\\"1\"=>\"v\\\\2\", \"n\"=>NULL";
    check_type_value(&hstore, json, pairs, "io.debezium.data.Json",
                     "\"{\\\"k\\\\\\\"1\\\":\\\"v\\\\\\\\2\\\",\\\"n\\\":null}\"");
    check_type_value(&hstore, map, pairs, NULL, "{\"k\\\"1\":\"v\\\\2\",\"n\":null}");
    check_type_value(&hstore, json, "", NULL, "\"{}\"");
    /* in a Java HashMap's order, as Debezium's: by String.hashCode() bucket
     * (over UTF-16 units), 32 buckets past 12 keys */
    check_type_value(&hstore, map,
                     "\"name\"=>\"1\", \"color\"=>\"2\", \"size\"=>\"3\", "
                     "\"\xc3\xa9\"=>\"4\", \"\xf0\x9f\x98\x80\"=>\"5\"",
                     NULL,
                     "{\"color\":\"2\",\"size\":\"3\",\"name\":\"1\","
                     "\"\xf0\x9f\x98\x80\":\"5\",\"\xc3\xa9\":\"4\"}");
    char keys[256] = "";
    for (int i = 0; i < 13; i++) {
        snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "%s\"k%d\"=>NULL",
                 i > 0 ? ", " : "", i);
    }
    check_type_value(&hstore, map, keys, NULL,
                     "{\"k0\":null,\"k1\":null,\"k2\":null,\"k3\":null,\"k4\":null,"
                     "\"k5\":null,\"k11\":null,\"k6\":null,\"k10\":null,\"k7\":null,"
                     "\"k8\":null,\"k12\":null,\"k9\":null}");
    tb_pg_type_t ltree = {.oid = 90002, .typmod = -1, .base_name = "ltree"};
    check_type_value(&ltree, json, "top.sci", "io.debezium.data.Ltree", "\"top.sci\"");
    tb_pg_type_t citext = {.oid = 90003, .typmod = -1, .base_name = "citext"};
    check_type_value(&citext, json, "MiXed", NULL, "\"MiXed\"");

    /* arrays of enums (required items), hstore, citext, ltree and isbn */
    tb_pg_type_t moods = {
        .oid = 90010, .typmod = -1, .elem_oid = 90011, .enum_labels = "sad,ok"};
    check_type_value(&moods, json, "{ok,sad}", NULL, "[\"ok\",\"sad\"]");
    tb_pg_type_t hstores = {
        .oid = 90012, .typmod = -1, .elem_oid = 90001, .elem_name = "hstore"};
    check_type_value(&hstores, json, "{\"\\\"a\\\"=>\\\"1\\\"\",NULL}", NULL,
                     "[\"{\\\"a\\\":\\\"1\\\"}\",null]");
    check_type_value(&hstores, map, "{\"\\\"a\\\"=>NULL\"}", NULL, "[{\"a\":null}]");
    tb_pg_type_t ltrees = {
        .oid = 90013, .typmod = -1, .elem_oid = 90002, .elem_name = "ltree"};
    check_type_value(&ltrees, json, "{top.sci,a}", NULL, "[\"top.sci\",\"a\"]");
    char errstr[256];
    tb_pg_modes_t all_types = {.include_unknown = true};
    struct {
        tb_pg_type_t type;
        const char *items; /* the items' schema name, "" for none */
        bool optional;
    } arrays[] = {
        {moods, "io.debezium.data.Enum", false},
        {hstores, "io.debezium.data.Json", true},
        {ltrees, "io.debezium.data.Ltree", true},
        {{.oid = 90014, .elem_oid = 90003, .elem_name = "citext"}, "", true},
        {{.oid = 90015, .elem_oid = 90004, .elem_name = "isbn"}, "", false},
        {{.oid = 3643, .elem_oid = 3614, .elem_name = "tsvector", .opaque = true},
         "",
         false},
    };
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        tb_schema_t *schema =
            tb_pg_type_schema(&arrays[i].type, &all_types, errstr, sizeof(errstr));
        assert_non_null(schema);
        tb_schema_t *items = tb_schema_items(schema);
        const char *name = tb_schema_name(items);
        assert_string_equal(name != NULL ? name : "", arrays[i].items);
        assert_int_equal(tb_schema_optional(items), arrays[i].optional);
        tb_schema_decref(schema);
    }

    /* Debezium leaves out the arrays of interval, money, name, xml, point and
     * bit varying; an unknown type too, unless include.unknown.datatypes */
    tb_pg_type_t intervals = {.oid = 1187, .typmod = -1, .elem_oid = 1186};
    assert_null(tb_pg_type_schema(&intervals, &json, errstr, sizeof(errstr)));
    assert_int_equal(tb_pg_unknown_fate(&intervals, &all_types, errstr, sizeof(errstr)),
                     TB_PG_LEFT_OUT);
    assert_non_null(strstr(errstr, "Debezium maps no array of it"));
    tb_pg_type_t lsn = {.oid = 3220, .typmod = -1, .name = "pg_lsn"};
    assert_int_equal(tb_pg_unknown_fate(&lsn, &json, errstr, sizeof(errstr)),
                     TB_PG_LEFT_OUT);
    assert_int_equal(tb_pg_unknown_fate(&lsn, &all_types, errstr, sizeof(errstr)),
                     TB_PG_OPAQUE);
    lsn.opaque = true;
    check_type_value(&lsn, json, "0/16B3748", NULL, "\"MC8xNkIzNzQ4\"");
    tb_pg_modes_t hex = {.binary = TB_PG_BINARY_HEX};
    check_type_value(&lsn, hex, "0/1", NULL, "\"302f31\"");
    tb_pg_type_t tsvectors = arrays[5].type;
    check_type_value(&tsvectors, json, "{\"'a' 'b'\"}", NULL, "[\"J2EnICdiJw==\"]");
    /* a NULL among required items: Debezium fails to convert the array */
    assert_true(unreadable(&tsvectors, json, "{\"'a'\",NULL}"));
    assert_true(unreadable(&moods, json, "{ok,NULL}"));
    /* refused: what Debezium maps and tributary does not, and the geometric
     * types Debezium writes in its JDBC driver's text */
    tb_pg_type_t geometry = {.oid = 90020, .typmod = -1, .base_name = "geometry"};
    tb_pg_type_t box = {.oid = 603, .typmod = -1, .name = "box"};
    tb_pg_type_t bit_array = {.oid = 1561, .typmod = 3, .elem_oid = 1560};
    assert_int_equal(tb_pg_unknown_fate(&geometry, &json, errstr, sizeof(errstr)),
                     TB_PG_REFUSED);
    assert_int_equal(tb_pg_unknown_fate(&bit_array, &json, errstr, sizeof(errstr)),
                     TB_PG_REFUSED);
    assert_int_equal(tb_pg_unknown_fate(&box, &json, errstr, sizeof(errstr)),
                     TB_PG_LEFT_OUT);
    assert_int_equal(tb_pg_unknown_fate(&box, &all_types, errstr, sizeof(errstr)),
                     TB_PG_REFUSED);

    tb_pg_type_t bits = {.oid = 1560, .typmod = 3};
    tb_pg_type_t point = {.oid = 600, .typmod = -1};
    assert_true(unreadable(&bits, json, "1021"));
    assert_true(unreadable(&point, json, "(1,2"));
    assert_true(unreadable(&hstore, json, "\"a\"=>\"b\","));
    assert_true(unreadable(&hstore, json, "\"a\"=>\"b"));
    assert_true(unreadable(&hstore, json, "NULL=>\"b\""));
}

#define NUMERIC_10_2 ((10 << 16 | 2) + 4)

static void test_types_under_modes(void **state)
{
    (void)state;
    tb_pg_modes_t dflt = {0};
    tb_pg_modes_t connect = {.time = TB_PG_TIME_CONNECT};
    tb_pg_modes_t micro = {.time = TB_PG_TIME_ADAPTIVE_MICROSECONDS};
    tb_pg_modes_t dbl = {.decimal = TB_PG_DECIMAL_DOUBLE};
    tb_pg_modes_t str = {.decimal = TB_PG_DECIMAL_STRING};
    tb_pg_modes_t b64 = {.binary = TB_PG_BINARY_BASE64};
    tb_pg_modes_t hex = {.binary = TB_PG_BINARY_HEX};
    tb_pg_modes_t url = {.binary = TB_PG_BINARY_BASE64_URL_SAFE};

    check_value(23, -1, dflt, "-42", NULL, "-42");
    check_value(21, -1, dflt, "7", NULL, "7");
    check_value(16, -1, dflt, "t", NULL, "true");
    check_value(701, -1, dflt, "1.5", NULL, "1.5");
    /* numeric(10,2): Decimal, 123.45 is 12345 = 0x3039 */
    check_value(1700, NUMERIC_10_2, dflt, "123.45",
                "org.apache.kafka.connect.data.Decimal", "\"MDk=\"");
    check_value(1700, NUMERIC_10_2, dflt, "-1.5", NULL, "\"/2o=\"");
    check_value(1700, -1, dflt, "1.005", "io.debezium.data.VariableScaleDecimal",
                "{\"scale\":3,\"value\":\"A+0=\"}");
    check_value(1700, NUMERIC_10_2, dbl, "123.45", NULL, "123.45");
    check_value(1700, NUMERIC_10_2, str, "123.45", NULL, "\"123.45\"");
    /* 2024-01-02 is day 19724 */
    check_value(1082, -1, dflt, "2024-01-02", "io.debezium.time.Date", "19724");
    check_value(1082, -1, connect, "2024-01-02", "org.apache.kafka.connect.data.Date",
                "19724");
    check_value(1082, -1, dflt, "1969-12-31", NULL, "-1");
    check_value(1083, -1, dflt, "10:00:00.5", "io.debezium.time.MicroTime",
                "36000500000");
    check_value(1083, 3, dflt, "10:00:00.5", "io.debezium.time.Time", "36000500");
    check_value(1083, 3, micro, "10:00:00.5", "io.debezium.time.MicroTime",
                "36000500000");
    check_value(1083, -1, connect, "10:00:00.5", "org.apache.kafka.connect.data.Time",
                "36000500");
    check_value(1114, -1, dflt, "2024-01-02 03:04:05.123456",
                "io.debezium.time.MicroTimestamp", "1704164645123456");
    check_value(1114, 3, dflt, "2024-01-02 03:04:05.123", "io.debezium.time.Timestamp",
                "1704164645123");
    check_value(1114, -1, connect, "2024-01-02 03:04:05.123456",
                "org.apache.kafka.connect.data.Timestamp", "1704164645123");
    check_value(1184, -1, dflt, "2024-01-02 03:04:05.1+00",
                "io.debezium.time.ZonedTimestamp", "\"2024-01-02T03:04:05.100000Z\"");
    check_value(1184, 0, dflt, "2024-01-02 05:04:05+02", NULL,
                "\"2024-01-02T03:04:05Z\"");
    check_value(114, -1, dflt, "{\"a\": 1}", "io.debezium.data.Json",
                "\"{\\\"a\\\": 1}\"");
    check_value(3802, -1, dflt, "{}", "io.debezium.data.Json", "\"{}\"");
    check_value(2950, -1, dflt, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                "io.debezium.data.Uuid", "\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"");
    check_value(17, -1, dflt, "\\x00ff10", NULL, "\"AP8Q\"");
    check_value(17, -1, b64, "\\x00ff10", NULL, "\"AP8Q\"");
    check_value(17, -1, hex, "\\x00ff10", NULL, "\"00ff10\"");
    check_value(17, -1, url, "\\xfbff", NULL, "\"-_8=\"");
    check_value(1007, -1, dflt, "{1,NULL,3}", NULL, "[1,null,3]");
    check_value(1183, -1, connect, "{10:00:00.5}", NULL, "[36000500000]");
    check_value(1182, -1, connect, "{2024-01-02,NULL}", NULL, "[19724,null]");
    check_value(1186, -1, dflt, "P1Y2M3DT4H5M6.5S", "io.debezium.time.MicroDuration",
                "37091106500000");
    check_value(1186, -1, dflt, "P-1D", NULL, "-86400000000");
    check_value(1266, -1, dflt, "10:00:00.5+02", "io.debezium.time.ZonedTime",
                "\"08:00:00.5Z\"");
    check_value(1266, -1, dflt, "23:30:00-01", NULL, "\"00:30:00Z\"");
    check_value(790, -1, dflt, "$1,234.56", "org.apache.kafka.connect.data.Decimal",
                "\"AeJA\"");
    check_value(790, -1, dflt, "-$1.50", NULL, "\"/2o=\"");
    check_value(790, -1, dbl, "$1,234.56", NULL, "1234.56");
    check_value(3904, -1, dflt, "[1,5)", NULL, "\"[1,5)\"");
    check_value(1009, -1, dflt, "{\"a b\",\"c\\\"d\",NULL,\"NULL\"}", NULL,
                "[\"a b\",\"c\\\"d\",null,\"NULL\"]");

    /* an enum: Debezium's Enum with its labels */
    char errstr[256];
    tb_pg_type_t mood = {.oid = 90000, .typmod = -1, .enum_labels = "sad,ok,happy"};
    tb_schema_t *s = tb_pg_type_schema(&mood, &dflt, errstr, sizeof(errstr));
    assert_string_equal(tb_schema_name(s), "io.debezium.data.Enum");
    assert_string_equal(tb_schema_parameter(s, "allowed"), "sad,ok,happy");
    tb_schema_decref(s);

    /* defaults as Debezium writes them into schemas: a constant's value, a
     * generated value's placeholder, none for a null */
    struct {
        uint32_t oid;
        const char *expr;
        const char *json; /* NULL: no default */
    } defaults[] = {
        {23, "nextval('items_id_seq'::regclass)", "0"},
        {23, "'-1'::integer", "-1"},
        {25, "'abc'::text", "\"abc\""},
        {25, "NULL::text", NULL},
        {16, "true", "true"},
        {1700, "12.5", "12.5"},
        {1184, "now()", "\"1970-01-01T00:00:00.000000Z\""},
        {1082, "CURRENT_DATE", "0"},
        {17, "'\\x00'::bytea", NULL},
    };
    tb_pg_modes_t doubles = {.decimal = TB_PG_DECIMAL_DOUBLE};
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        tb_pg_type_t t = {.oid = defaults[i].oid, .typmod = -1};
        tb_schema_t *schema = tb_pg_type_schema(&t, &doubles, errstr, sizeof(errstr));
        tb_value_t *v = tb_pg_type_default(&t, schema, &doubles, defaults[i].expr);
        if (defaults[i].json == NULL) {
            assert_null(v);
        } else {
            char *json = converted(schema, v, false);
            assert_string_equal(json, defaults[i].json);
            free(json);
        }
        tb_value_free(v);
        tb_schema_decref(schema);
    }

    /* a type without a mapping is an error naming it */
    tb_pg_type_t tsvector = {.oid = 3614, .typmod = -1, .name = "tsvector"};
    assert_null(tb_pg_type_schema(&tsvector, &dflt, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "type tsvector (oid 3614) is not supported"));
}

/* A relation srv.public.items (id int4 primary key, name text, price
 * numeric(10,2)). */
static tb_pg_relation_t *items(tb_schema_t *source, const tb_pg_filter_t *filter,
                               const tb_pg_modes_t *modes)
{
    char errstr[256] = "";
    tb_pg_column_info_t cols[] = {
        {.name = "id",
         .type = {.oid = 23, .typmod = -1},
         .not_null = true,
         .primary_key = true},
        {.name = "name", .type = {.oid = 25, .typmod = -1}},
        {.name = "price", .type = {.oid = 1700, .typmod = NUMERIC_10_2}},
    };
    tb_pg_relation_ctx_t ctx = {
        .prefix = "srv", .modes = modes, .filter = filter, .source_schema = source};
    tb_pg_relation_t *r = tb_pg_relation_build(&ctx, 16384, "public", "items", cols, 3,
                                               cols, 3, errstr, sizeof(errstr));
    if (r == NULL) {
        fail_msg("%s", errstr);
    }
    return r;
}

static tb_pg_filter_t *filter_of(const char *config)
{
    char errstr[256] = "";
    tb_pg_options_t o;
    json_t *raw = json_loads(config, 0, NULL);
    if (tb_pg_options_parse(raw, &o, errstr, sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    tb_pg_filter_t *f = tb_pg_filter_create(&o, errstr, sizeof(errstr));
    tb_pg_options_release(&o);
    json_decref(raw);
    return f;
}

#define BASE_CONFIG                                                                      \
    "\"database.hostname\":\"h\",\"database.user\":\"u\",\"database.dbname\":\"d\","     \
    "\"topic.prefix\":\"srv\""

static void test_envelope_as_debezium_writes_it(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_pg_modes_t modes = {0};
    tb_schema_t *source = tb_pg_source_schema();
    tb_pg_filter_t *filter = filter_of("{" BASE_CONFIG "}");
    tb_pg_relation_t *r = items(source, filter, &modes);
    tb_pg_cell_t cells[] = {
        {.data = "1", .len = 1}, {.data = "a", .len = 1}, {.data = NULL}};

    tb_value_t *key = NULL;
    assert_int_equal(
        tb_pg_relation_row(r, &modes, cells, 3, true, &key, errstr, sizeof(errstr)), 0);
    char *json = converted(r->key_schema, key, true);
    assert_string_equal(json, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":"
                              "\"int32\",\"optional\":false,\"field\":\"id\"}],"
                              "\"optional\":false,\"name\":\"srv.public.items.Key\"},"
                              "\"payload\":{\"id\":1}}");
    free(json);
    tb_value_free(key);

    tb_value_t *after = NULL;
    assert_int_equal(
        tb_pg_relation_row(r, &modes, cells, 3, false, &after, errstr, sizeof(errstr)),
        0);
    tb_pg_source_t info = {.name = "srv",
                           .db = "d",
                           .schema = "public",
                           .table = "items",
                           .snapshot = "false",
                           .sequence = "[\"100\",\"200\"]",
                           .ts_us = 1700000000123456,
                           .tx_id = 731,
                           .lsn = 200,
                           .xmin = -1};
    tb_value_t *envelope =
        tb_pg_envelope_value(r->envelope_schema, 'c', NULL, after,
                             tb_pg_source_value(source, &info), NULL, 1700000001000000);
    json = converted(r->envelope_schema, envelope, true);
    json_t *doc = json_loads(json, 0, NULL);
    json_t *schema = json_object_get(doc, "schema");
    assert_string_equal(json_string_value(json_object_get(schema, "name")),
                        "srv.public.items.Envelope");
    assert_int_equal(json_integer_value(json_object_get(schema, "version")), 2);
    const char *fields[] = {"before", "after", "source", "transaction",
                            "op",     "ts_ms", "ts_us",  "ts_ns"};
    json_t *list = json_object_get(schema, "fields");
    assert_int_equal(json_array_size(list), 8);
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(list, i), "field")),
            fields[i]);
    }
    json_t *value_schema = json_array_get(list, 1);
    assert_string_equal(json_string_value(json_object_get(value_schema, "name")),
                        "srv.public.items.Value");
    assert_true(json_is_true(json_object_get(value_schema, "optional")));
    json_t *price = json_array_get(json_object_get(value_schema, "fields"), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(price, "parameters"),
                                          "connect.decimal.precision")),
        "10");
    json_t *src = json_array_get(list, 2);
    assert_string_equal(json_string_value(json_object_get(src, "name")),
                        "io.debezium.connector.postgresql.Source");
    /* Debezium 3.1+: the source block's schema has a version */
    assert_int_equal(json_integer_value(json_object_get(src, "version")), 1);
    assert_int_equal(json_array_size(json_object_get(src, "fields")), 16);
    json_t *snapshot = json_array_get(json_object_get(src, "fields"), 4);
    assert_int_equal(json_integer_value(json_object_get(snapshot, "version")), 1);
    assert_string_equal(json_string_value(json_object_get(snapshot, "default")), "false");
    assert_string_equal(
        json_string_value(
            json_object_get(json_object_get(snapshot, "parameters"), "allowed")),
        "true,first,first_in_data_collection,last_in_data_collection,last,"
        "false,incremental");

    char *payload = json_dumps(json_object_get(doc, "payload"), JSON_COMPACT);
    assert_string_equal(
        payload,
        "{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\",\"price\":null},"
        "\"source\":{\"version\":\"" TB_PG_DEBEZIUM_VERSION
        "\",\"connector\":\"postgresql\","
        "\"name\":\"srv\",\"ts_ms\":1700000000123,\"snapshot\":\"false\",\"db\":\"d\","
        "\"sequence\":\"[\\\"100\\\",\\\"200\\\"]\",\"ts_us\":1700000000123456,"
        "\"ts_ns\":1700000000123456000,\"schema\":\"public\",\"table\":\"items\","
        "\"txId\":731,\"lsn\":200,\"xmin\":null,\"origin\":null,\"origin_lsn\":null},"
        "\"transaction\":null,\"op\":\"c\","
        "\"ts_ms\":1700000001000,\"ts_us\":1700000001000000,\"ts_ns\":"
        "1700000001000000000}");
    free(payload);
    json_decref(doc);
    free(json);
    tb_value_free(envelope);
    tb_pg_relation_free(r);
    tb_pg_filter_destroy(filter);
    tb_schema_decref(source);
}

/* Frees the typed records tb_pg_queue_drain wrote to out[0..n). */
static void free_drained(tb_source_record_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tb_schema_decref(out[i].key_schema);
        tb_value_free(out[i].key_data);
        tb_schema_decref(out[i].value_schema);
        tb_value_free(out[i].value_data);
        json_decref(out[i].source_offset);
        json_decref(out[i].source_partition);
        tb_headers_free(out[i].headers, out[i].header_count);
    }
}

/* Debezium 3.6's __debezium.context.* headers: on each change event and
 * tombstone, in Debezium's order; none on what is no change event
 * (transaction metadata), none without a context
 * (extended.headers.enabled=false). */
static void test_context_headers(void **state)
{
    (void)state;
    char run_id[37];
    char other[37];
    assert_int_equal(tb_pg_run_id(run_id), 0);
    assert_int_equal(tb_pg_run_id(other), 0);
    assert_int_equal(strlen(run_id), 36);
    assert_string_not_equal(run_id, other);
    assert_int_equal(run_id[14], '7'); /* version 7, time first, as Debezium's */
    assert_true(strncmp(run_id, other, 8) <= 0);
    tb_pg_context_t context = {.logical_name = "srv", .run_id = run_id};
    tb_pg_queue_t q = {0};
    tb_pg_position_t streamed = {.lsn = 1, .tx_id = -1, .change_event = true};
    tb_pg_position_t read = {.lsn = 1, .tx_id = -1, .message_type = "BEGIN"};
    assert_int_equal(tb_pg_queue_push(&q, "t", NULL, NULL, NULL, NULL, &streamed), 0);
    assert_int_equal(tb_pg_queue_push(&q, "t", NULL, NULL, NULL, NULL, &read), 0);
    assert_int_equal(tb_pg_queue_push(&q, "t", NULL, NULL, NULL, NULL, &streamed), 0);
    tb_source_record_t out[3];
    assert_int_equal(tb_pg_queue_drain(&q, out, 2, NULL, false, &context), 2);
    const char *const names[] = {
        "__debezium.context.connectorLogicalName", "__debezium.context.taskId",
        "__debezium.context.connectorName", "__debezium.context.runId"};
    const char *const values[] = {"srv", "0", "postgresql", run_id};
    assert_int_equal(out[0].header_count, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(out[0].headers[i].name, names[i]);
        assert_int_equal(out[0].headers[i].value_len, strlen(values[i]));
        assert_memory_equal(out[0].headers[i].value, values[i], strlen(values[i]));
    }
    assert_null(out[1].headers);
    assert_int_equal(out[1].header_count, 0);
    free_drained(out, 2);
    assert_int_equal(tb_pg_queue_drain(&q, out, 3, NULL, false, NULL), 1);
    assert_null(out[0].headers);
    free_drained(out, 1);
    tb_pg_queue_clear(&q);
}

/* Debezium's transaction metadata: BEGIN, the blocks of the events, END with
 * the counts per table in its HashMap's order: public.a hashes to bucket 6
 * of 16, public.b to 7, so a comes first though b's first event came
 * first. */
static void test_transaction_metadata(void **state)
{
    (void)state;
    tb_pg_transactions_t *t = tb_pg_transactions_create("srv.transaction");
    tb_pg_queue_t q = {0};
    tb_pg_position_t p = {.lsn = 1, .tx_id = -1, .ts_us = 5000};
    assert_int_equal(tb_pg_transactions_begin(t, &q, 731, 100, 1700000000123456, &p), 0);
    const char *tables[] = {"b", "a", "b"};
    const char *blocks[] = {
        "{\"id\":\"731:200\",\"total_order\":1,\"data_collection_order\":1}",
        "{\"id\":\"731:201\",\"total_order\":2,\"data_collection_order\":1}",
        "{\"id\":\"731:202\",\"total_order\":3,\"data_collection_order\":2}"};
    tb_schema_t *block_schema = tb_pg_transaction_block_schema();
    for (size_t i = 0; i < 3; i++) {
        tb_value_t *block = tb_pg_transactions_event(t, "public", tables[i], 200 + i);
        char *json = converted(block_schema, block, false);
        assert_string_equal(json, blocks[i]);
        free(json);
        tb_value_free(block);
    }
    assert_int_equal(tb_pg_transactions_end(t, &q, 300, 1700000000123456, &p), 0);
    tb_source_record_t out[2];
    assert_int_equal(tb_pg_queue_drain(&q, out, 2, NULL, false, NULL), 2);
    assert_string_equal(out[0].topic, "srv.transaction");
    char *json = converted(out[0].key_schema, out[0].key_data, true);
    assert_string_equal(json,
                        "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":"
                        "\"string\",\"optional\":false,\"field\":\"id\"}],"
                        "\"optional\":false,\"name\":\"io.debezium.connector.common."
                        "TransactionMetadataKey\",\"version\":1},\"payload\":{\"id\":"
                        "\"731:100\"}}");
    free(json);
    json = converted(out[0].value_schema, out[0].value_data, false);
    assert_string_equal(json,
                        "{\"status\":\"BEGIN\",\"id\":\"731:100\",\"event_count\":null,"
                        "\"data_collections\":null,\"ts_ms\":1700000000123}");
    free(json);
    json = converted(out[1].value_schema, out[1].value_data, false);
    assert_string_equal(json, "{\"status\":\"END\",\"id\":\"731:300\",\"event_count\":3,"
                              "\"data_collections\":[{\"data_collection\":\"public.a\","
                              "\"event_count\":1},{\"data_collection\":\"public.b\","
                              "\"event_count\":2}],\"ts_ms\":1700000000123}");
    free(json);
    free_drained(out, 2);
    tb_pg_queue_clear(&q);
    tb_schema_decref(block_schema);
    tb_pg_transactions_destroy(t);
}

/* The tables an END lists, one transaction's events on each of names,
 * joined by spaces. */
static char *transaction_tables(tb_pg_transactions_t *t, const char *const *names,
                                size_t n)
{
    tb_pg_queue_t q = {0};
    tb_pg_position_t p = {.lsn = 1, .tx_id = -1, .ts_us = 5000};
    assert_int_equal(tb_pg_transactions_begin(t, &q, 7, 100, 0, &p), 0);
    for (size_t i = 0; i < n; i++) {
        tb_value_free(tb_pg_transactions_event(t, "public", names[i], 200 + i));
    }
    assert_int_equal(tb_pg_transactions_end(t, &q, 300, 0, &p), 0);
    tb_source_record_t out[2];
    assert_int_equal(tb_pg_queue_drain(&q, out, 2, NULL, false, NULL), 2);
    char *json = converted(out[1].value_schema, out[1].value_data, false);
    json_t *end = json_loads(json, 0, NULL);
    json_t *collection;
    size_t i;
    char tables[512] = "";
    json_array_foreach (json_object_get(end, "data_collections"), i, collection) {
        const char *name =
            json_string_value(json_object_get(collection, "data_collection"));
        strcat(tables, i == 0 ? "" : " ");
        strcat(tables, name + strlen("public."));
    }
    json_decref(end);
    free(json);
    free_drained(out, 2);
    tb_pg_queue_clear(&q);
    return strdup(tables);
}

/* Debezium keeps one HashMap of the counts for the task's life and clears
 * it at each transaction, so its buckets only grow: after a transaction
 * over 13 tables (more than three quarters of 16) it has 32, and in a
 * later transaction public.z (bucket 15 of 16 and of 32) comes before
 * public.t0 (12 of 16, 28 of 32), as it would not in a new map. Tables
 * sharing a bucket (t0 and t10) keep their first events' order. */
static void test_transaction_collections_order(void **state)
{
    (void)state;
    static const char *const many[] = {"t0", "t1", "t2", "t3",  "t4",  "t5", "t6",
                                       "t7", "t8", "t9", "t10", "t11", "t12"};
    static const char *const two[] = {"t0", "z"};
    tb_pg_transactions_t *fresh = tb_pg_transactions_create("srv.transaction");
    tb_pg_transactions_t *grown = tb_pg_transactions_create("srv.transaction");
    char *tables = transaction_tables(fresh, two, 2);
    assert_string_equal(tables, "t0 z");
    free(tables);
    tables = transaction_tables(grown, many, 13);
    assert_string_equal(tables, "t12 t8 t7 t9 t4 t3 t6 t5 t0 t10 t11 t2 t1");
    free(tables);
    tables = transaction_tables(grown, two, 2);
    assert_string_equal(tables, "z t0");
    free(tables);
    tb_pg_transactions_destroy(fresh);
    tb_pg_transactions_destroy(grown);
}

static void test_events_and_offsets(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_pg_options_t o;
    json_t *raw = json_loads(
        "{" BASE_CONFIG ",\"column.exclude.list\":\"public.items.price\"}", 0, NULL);
    assert_int_equal(tb_pg_options_parse(raw, &o, errstr, sizeof(errstr)), 0);
    assert_true(o.tombstones);
    assert_int_equal(o.skipped, TB_PG_SKIP_TRUNCATE); /* Debezium skips truncates */
    tb_pg_filter_t *filter = tb_pg_filter_create(&o, errstr, sizeof(errstr));
    tb_schema_t *source = tb_pg_source_schema();
    tb_pg_relation_t *r = items(source, filter, &o.modes);
    assert_int_equal(tb_schema_field_count(r->value_schema), 2); /* price excluded */
    tb_pg_queue_t q = {0};
    tb_pg_events_t ev = {.queue = &q, .options = &o, .source_schema = source};
    tb_pg_position_t p = {
        .lsn = 200, .lsn_commit = 100, .tx_id = 7, .ts_us = 1, .message_type = "UPDATE"};
    tb_pg_cell_t old_row[] = {{.data = "1", .len = 1}, {.data = NULL}, {.data = NULL}};
    tb_pg_cell_t new_row[] = {
        {.data = "2", .len = 1}, {.data = "b", .len = 1}, {.data = NULL}};

    /* the key changed: delete, tombstone, create */
    tb_pg_change_t change = {.op = 'u',
                             .before = old_row,
                             .nbefore = 3,
                             .after = new_row,
                             .nafter = 3,
                             .marker = "false"};
    assert_int_equal(tb_pg_event_change(&ev, r, "t", &change, &p, errstr, sizeof(errstr)),
                     0);
    assert_int_equal(q.count, 3);
    tb_source_record_t out[4];
    assert_int_equal(tb_pg_queue_drain(&q, out, 4, NULL, false, NULL), 3);
    const tb_value_t *op = tb_value_struct_get(out[0].value_data, "op");
    assert_string_equal(tb_value_text(op, NULL), "d");
    assert_null(out[1].value_data); /* the tombstone */
    assert_int_equal(tb_value_int64(tb_value_struct_get(out[1].key_data, "id")), 1);
    assert_string_equal(tb_value_text(tb_value_struct_get(out[2].value_data, "op"), NULL),
                        "c");
    /* Debezium's source.sequence: [the last commit's end, the change's LSN];
     * null before the first commit read since the stream started */
    const tb_value_t *source_of = tb_value_struct_get(out[2].value_data, "source");
    assert_string_equal(tb_value_text(tb_value_struct_get(source_of, "sequence"), NULL),
                        "[null,\"200\"]");
    /* the old row's non-key NOT NULL-less columns stay null */
    const tb_value_t *before = tb_value_struct_get(out[0].value_data, "before");
    assert_null(tb_value_struct_get(before, "name"));
    /* the last record carries Debezium's offset */
    char *offset = json_dumps(out[2].source_offset, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(offset, "{\"lsn\":200,\"lsn_commit\":100,\"lsn_proc\":200,"
                                "\"messageType\":\"UPDATE\",\"ts_usec\":1,\"txId\":7}");
    free(offset);
    free_drained(out, 3);

    /* without tombstones a delete is one record; after a commit read, the
     * sequence starts with its end */
    o.tombstones = false;
    p.commit_known = true;
    change =
        (tb_pg_change_t){.op = 'd', .before = old_row, .nbefore = 3, .marker = "false"};
    assert_int_equal(tb_pg_event_change(&ev, r, "t", &change, &p, errstr, sizeof(errstr)),
                     0);
    assert_int_equal(q.count, 1);
    /* skipped truncates make nothing */
    assert_int_equal(tb_pg_event_truncate(&ev, r, "t", &p, errstr, sizeof(errstr)), 0);
    assert_int_equal(q.count, 1);
    assert_int_equal(tb_pg_queue_drain(&q, out, 1, NULL, false, NULL), 1);
    source_of = tb_value_struct_get(out[0].value_data, "source");
    assert_string_equal(tb_value_text(tb_value_struct_get(source_of, "sequence"), NULL),
                        "[\"100\",\"200\"]");
    tb_schema_decref(out[0].key_schema);
    tb_value_free(out[0].key_data);
    tb_schema_decref(out[0].value_schema);
    tb_value_free(out[0].value_data);
    json_decref(out[0].source_offset);

    tb_pg_position_t back;
    json_t *stored =
        json_pack("{s:I,s:I,s:I,s:I}", "lsn", (json_int_t)200, "lsn_commit",
                  (json_int_t)100, "txId", (json_int_t)7, "ts_usec", (json_int_t)1);
    assert_int_equal(tb_pg_offset_parse(stored, &back), 0);
    assert_int_equal(back.lsn_commit, 100);
    assert_false(back.snapshot);
    json_decref(stored);
    /* Debezium 3.6 also stores the messageType of its NOOP and ORIGIN
     * messages: read like any other */
    const char *const kinds[] = {"NOOP", "ORIGIN"};
    for (size_t i = 0; i < 2; i++) {
        stored = json_pack("{s:I,s:I,s:I,s:s,s:I}", "lsn", (json_int_t)300, "lsn_proc",
                           (json_int_t)300, "lsn_commit", (json_int_t)250, "messageType",
                           kinds[i], "ts_usec", (json_int_t)2);
        assert_int_equal(tb_pg_offset_parse(stored, &back), 0);
        assert_int_equal(back.lsn, 300);
        assert_int_equal(back.lsn_commit, 250);
        assert_int_equal(back.tx_id, -1);
        json_decref(stored);
    }

    tb_pg_queue_clear(&q);
    tb_pg_relation_free(r);
    tb_schema_decref(source);
    tb_pg_filter_destroy(filter);
    tb_pg_options_release(&o);
    json_decref(raw);
}

static void count_notice(void *arg, const char *column, const char *what)
{
    (void)what;
    assert_string_equal(column, "public.docs.doc");
    (*(int *)arg)++;
}

/* A column of a type Debezium does not know is left out (or written as
 * bytes); one of a type Debezium maps and tributary does not is an error
 * naming it, unless the column filters leave it out. */
static void test_unsupported_column(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_pg_modes_t modes = {0};
    int notices = 0;
    tb_schema_t *source = tb_pg_source_schema();
    tb_pg_column_info_t cols[] = {
        {.name = "id", .type = {.oid = 23, .typmod = -1}, .primary_key = true},
        {.name = "doc", .type = {.oid = 3614, .typmod = -1, .name = "tsvector"}},
    };
    tb_pg_filter_t *all = filter_of("{" BASE_CONFIG "}");
    tb_pg_relation_ctx_t ctx = {.prefix = "srv",
                                .modes = &modes,
                                .filter = all,
                                .source_schema = source,
                                .notice = count_notice,
                                .notice_arg = &notices};
    tb_pg_relation_t *left_out = tb_pg_relation_build(&ctx, 1, "public", "docs", cols, 2,
                                                      cols, 2, errstr, sizeof(errstr));
    assert_non_null(left_out);
    assert_int_equal(tb_schema_field_count(left_out->value_schema), 1);
    assert_int_equal(notices, 1);
    tb_pg_relation_free(left_out);
    modes.include_unknown = true;
    tb_pg_relation_t *opaque = tb_pg_relation_build(&ctx, 1, "public", "docs", cols, 2,
                                                    cols, 2, errstr, sizeof(errstr));
    assert_non_null(opaque);
    assert_int_equal(tb_schema_type(opaque->columns[1].schema), TB_TYPE_BYTES);
    assert_int_equal(notices, 2);
    tb_pg_relation_free(opaque);
    cols[1].type = (tb_pg_type_t){
        .oid = 90020, .typmod = -1, .name = "geometry", .base_name = "geometry"};
    assert_null(tb_pg_relation_build(&ctx, 1, "public", "docs", cols, 2, cols, 2, errstr,
                                     sizeof(errstr)));
    assert_non_null(strstr(errstr, "column public.docs.doc: type geometry (oid 90020) is "
                                   "not supported (Debezium maps it"));
    tb_pg_filter_t *without =
        filter_of("{" BASE_CONFIG ",\"column.exclude.list\":\"public.docs.doc\"}");
    ctx.filter = without;
    tb_pg_relation_t *r = tb_pg_relation_build(&ctx, 1, "public", "docs", cols, 2, cols,
                                               2, errstr, sizeof(errstr));
    assert_non_null(r);
    assert_int_equal(tb_schema_field_count(r->value_schema), 1);
    tb_pg_relation_free(r);
    tb_pg_filter_destroy(all);
    tb_pg_filter_destroy(without);
    tb_schema_decref(source);
}

static void test_filters(void **state)
{
    (void)state;
    tb_pg_filter_t *f =
        filter_of("{" BASE_CONFIG ",\"schema.include.list\":\"inv,sales\","
                  "\"table.exclude.list\":\"inv\\\\.tmp_.*\","
                  "\"column.exclude.list\":\"inv\\\\.orders\\\\.secret\"}");
    assert_true(tb_pg_filter_table(f, "inv", "orders"));
    assert_true(tb_pg_filter_table(f, "INV", "orders"));        /* any case */
    assert_false(tb_pg_filter_table(f, "inventory", "orders")); /* whole names */
    assert_false(tb_pg_filter_table(f, "public", "orders"));
    assert_false(tb_pg_filter_table(f, "inv", "tmp_1"));
    assert_true(tb_pg_filter_column(f, "inv", "orders", "id"));
    assert_false(tb_pg_filter_column(f, "inv", "orders", "secret"));
    tb_pg_filter_destroy(f);
    f = filter_of("{" BASE_CONFIG "}");
    assert_true(tb_pg_filter_table(f, "public", "t"));
    assert_false(
        tb_pg_filter_table(f, "pg_catalog", "pg_class")); /* never the system's */
    assert_false(tb_pg_filter_table(f, "information_schema", "tables"));
    tb_pg_filter_destroy(f);
}

/* The errors of a connector config of the PostgreSQL source. */
static json_t *validate(const char *config)
{
    const tb_plugin_t *plugin = tb_plugin_find("postgres-cdc");
    assert_non_null(plugin);
    assert_ptr_equal(
        plugin, tb_plugin_find("io.debezium.connector.postgresql.PostgresConnector"));
    json_t *raw = json_loads(config, 0, NULL);
    json_t *errors = json_object();
    json_decref(tb_connector_config_validate(plugin, raw, errors));
    json_decref(raw);
    return errors;
}

static const char *first_error(const json_t *errors, const char *key)
{
    return json_string_value(json_array_get(json_object_get(errors, key), 0));
}

static void test_config_keys(void **state)
{
    (void)state;
    json_t *errors =
        validate("{\"name\":\"c\",\"connector.class\":\"postgres-cdc\"," BASE_CONFIG "}");
    if (tb_config_error_count(errors) != 0) {
        char *text = json_dumps(errors, 0);
        fail_msg("%s", text);
    }
    json_decref(errors);

    errors = validate(
        "{\"name\":\"c\",\"connector.class\":\"postgres-cdc\"," BASE_CONFIG
        ",\"plugin.name\":\"decoderbufs\",\"snapshot.locking.mode\":\"none\","
        "\"provide.transaction.metadata\":\"true\",\"topic.transaction\":\"t x\","
        "\"interval.handling.mode\":\"string\",\"slot.name\":\"Bad-Name\","
        "\"table.include.list\":\"a\",\"table.exclude.list\":\"b\","
        "\"max.queue.size\":\"10\",\"snapshot.mode\":\"never\","
        "\"message.id.header\":\"id\"}");
    assert_non_null(
        strstr(first_error(errors, "plugin.name"), "only the pgoutput plugin"));
    assert_non_null(strstr(first_error(errors, "snapshot.locking.mode"),
                           "snapshot.locking.mode is a key of "
                           "io.debezium.connector.postgresql.PostgresConnector that "
                           "tributary does not implement"));
    assert_null(first_error(errors, "provide.transaction.metadata"));
    assert_non_null(strstr(first_error(errors, "topic.transaction"), "a topic name"));
    assert_non_null(first_error(errors, "interval.handling.mode"));
    assert_non_null(strstr(first_error(errors, "slot.name"), "lowercase"));
    assert_non_null(
        strstr(first_error(errors, "table.exclude.list"), "already specified"));
    assert_non_null(strstr(first_error(errors, "max.queue.size"), "max.batch.size"));
    assert_non_null(strstr(first_error(errors, "snapshot.mode"), "no_data"));
    assert_null(first_error(errors, "message.id.header")); /* the framework's key */
    json_decref(errors);

    /* Debezium 3.6's keys: taken at the values tributary implements, the
     * others refused saying so; 3.0's keys they replace refused */
    errors = validate("{\"name\":\"c\",\"connector.class\":\"postgres-cdc\"," BASE_CONFIG
                      ",\"lsn.flush.mode\":\"CONNECTOR\","
                      "\"offset.mismatch.strategy\":\"no_validation\","
                      "\"publish.via.partition.root\":\"false\","
                      "\"extended.headers.enabled\":\"false\"}");
    assert_int_equal(tb_config_error_count(errors), 0);
    json_decref(errors);
    errors = validate("{\"name\":\"c\",\"connector.class\":\"postgres-cdc\"," BASE_CONFIG
                      ",\"lsn.flush.mode\":\"manual\","
                      "\"offset.mismatch.strategy\":\"trust_slot\","
                      "\"publish.via.partition.root\":\"true\","
                      "\"extended.headers.enabled\":\"maybe\","
                      "\"flush.lsn.source\":\"true\","
                      "\"slot.seek.to.known.offset.on.start\":\"true\"}");
    assert_string_equal(
        first_error(errors, "lsn.flush.mode"),
        "Invalid value manual for configuration lsn.flush.mode: tributary "
        "implements connector only: it confirms to the slot the LSN of "
        "what Kafka holds");
    assert_non_null(strstr(first_error(errors, "offset.mismatch.strategy"),
                           "implements no_validation only"));
    assert_non_null(strstr(first_error(errors, "publish.via.partition.root"),
                           "implements false only"));
    assert_non_null(first_error(errors, "extended.headers.enabled"));
    assert_non_null(first_error(errors, "flush.lsn.source"));
    assert_non_null(first_error(errors, "slot.seek.to.known.offset.on.start"));
    json_decref(errors);

    /* the password is a secret: redacted wherever configs are shown */
    const tb_plugin_t *plugin = tb_plugin_find("postgres-cdc");
    assert_true(tb_connector_config_secret_key(plugin, "database.password"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pgoutput_messages),
        cmocka_unit_test(test_replication_frames),
        cmocka_unit_test(test_types_under_modes),
        cmocka_unit_test(test_more_types),
        cmocka_unit_test(test_envelope_as_debezium_writes_it),
        cmocka_unit_test(test_context_headers),
        cmocka_unit_test(test_transaction_metadata),
        cmocka_unit_test(test_transaction_collections_order),
        cmocka_unit_test(test_events_and_offsets),
        cmocka_unit_test(test_unsupported_column),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_config_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
